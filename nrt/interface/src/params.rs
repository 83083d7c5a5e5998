//! The parameters of the bridge node (`asebaros`) and of each driven robot's `thymio_driver` node, described once:
//! the table of a node ([`bridge_table`], [`driver_table`]: name, value in effect, description, range, live or
//! read-only) and "set these values" ([`set_each`], [`set_all`]) answered with the engine's verdict and the
//! refusal text per parameter. Each front end serves them its way: ROS 2's parameter services (`rcl_interfaces`),
//! ROS 1's `dynamic_reconfigure` (live parameters only).
//!
//! The engine validates (`Engine::set_live_param`, `Engine::set_robot_param`, the ranges of
//! `nrt_engine::schema::ranges`); this module names, describes and routes. The RT controllers' parameters
//! (`controllers.<controller>.<param>`) are part of each driver node's table, reached through [`ControllerParams`].

use handoff::{NodeId, ParamDecl, RobotId};
use nrt_engine::engine::Engine;
use nrt_engine::schema::aliases::{self, canonical_name};
use nrt_engine::schema::{self, ranges};
use nrt_engine::thymio::params::{DriverParams, ROS_THYMIO_UNUSED};
use yaml_serde::{Mapping, Number, Value as Yaml};

/// Description of a parameter applied at run time.
pub const LIVE: &str = "applied at run time";
/// Description of a parameter read at start only.
pub const AT_START: &str = "read at start: restart to apply a change";
/// Description of ROS-Thymio's parameters without use here.
pub const UNUSED: &str = "ROS-Thymio's, not used by thymio-rt";

/// The description of a parameter, live or not.
pub fn description(live: bool) -> &'static str {
    if live {
        LIVE
    } else {
        AT_START
    }
}

/// A parameter's value (the types both ROS front ends carry).
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// No value (ROS 2's undeclare).
    NotSet,
    /// A boolean.
    Bool(bool),
    /// An integer.
    Integer(i64),
    /// A real.
    Double(f64),
    /// A string.
    String(String),
    /// Bytes.
    ByteArray(Vec<u8>),
    /// Booleans.
    BoolArray(Vec<bool>),
    /// Integers.
    IntegerArray(Vec<i64>),
    /// Reals.
    DoubleArray(Vec<f64>),
    /// Strings.
    StringArray(Vec<String>),
}

impl Value {
    /// A number given as a double or an integer.
    pub fn number(&self) -> Option<f64> {
        match self {
            Value::Double(d) => Some(*d),
            Value::Integer(i) => Some(*i as f64),
            _ => None,
        }
    }
}

/// One parameter as a node shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct Param {
    /// Dotted name.
    pub name: String,
    /// Value in effect.
    pub value: Value,
    /// What it is.
    pub description: String,
    /// Applied at start only: refused at run time.
    pub read_only: bool,
    /// The accepted range of a real parameter.
    pub range: Option<(f64, f64)>,
    /// The accepted range of an integer parameter.
    pub int_range: Option<(i64, i64)>,
}

/// The RT controllers' parameters of the robots (`controllers.<controller>.<param>`), wherever their ports are
/// kept: a small adapter, so that whoever owns the controllers' ports serves them.
pub trait ControllerParams {
    /// The parameters of robot slot `robot`, as `(controllers.<controller>.<name>, value, declaration)`.
    fn params(&self, robot: RobotId) -> Vec<(String, f64, ParamDecl)>;
    /// Sets one (applied at the controller's next cycle); `Err`: why not (nothing changed).
    fn set_param(&mut self, robot: RobotId, name: &str, value: f64) -> Result<(), String>;
}

/// A value as a YAML value (`None` for an unset one).
pub fn to_yaml(value: &Value) -> Option<Yaml> {
    let seq = |v: Vec<Yaml>| Some(Yaml::Sequence(v));
    match value {
        Value::NotSet => None,
        Value::Bool(b) => Some(Yaml::Bool(*b)),
        Value::Integer(i) => Some(Yaml::Number(Number::from(*i))),
        Value::Double(d) => Some(Yaml::Number(Number::from(*d))),
        Value::String(s) => Some(Yaml::String(s.clone())),
        Value::BoolArray(v) => seq(v.iter().map(|b| Yaml::Bool(*b)).collect()),
        Value::ByteArray(v) => seq(v.iter().map(|b| Yaml::Number((*b).into())).collect()),
        Value::IntegerArray(v) => seq(v.iter().map(|i| Yaml::Number((*i).into())).collect()),
        Value::DoubleArray(v) => seq(v.iter().map(|d| Yaml::Number((*d).into())).collect()),
        Value::StringArray(v) => seq(v.iter().map(|s| Yaml::String(s.clone())).collect()),
    }
}

/// A YAML scalar or list as a value (`None` for what a parameter cannot hold: null, maps, mixed lists).
pub fn from_yaml(value: &Yaml) -> Option<Value> {
    match value {
        Yaml::Bool(b) => Some(Value::Bool(*b)),
        Yaml::Number(n) => Some(match n.as_i64() {
            Some(i) => Value::Integer(i),
            None => Value::Double(n.as_f64()?),
        }),
        Yaml::String(s) => Some(Value::String(s.clone())),
        Yaml::Sequence(items) => array(items),
        Yaml::Tagged(t) => from_yaml(&t.value),
        Yaml::Null | Yaml::Mapping(_) => None,
    }
}

fn array(items: &[Yaml]) -> Option<Value> {
    if items.is_empty() {
        return Some(Value::StringArray(Vec::new()));
    }
    if let Some(v) = items.iter().map(Yaml::as_bool).collect::<Option<Vec<_>>>() {
        return Some(Value::BoolArray(v));
    }
    if let Some(v) = items.iter().map(Yaml::as_i64).collect::<Option<Vec<_>>>() {
        return Some(Value::IntegerArray(v));
    }
    if let Some(v) = items.iter().map(Yaml::as_f64).collect::<Option<Vec<_>>>() {
        return Some(Value::DoubleArray(v));
    }
    items
        .iter()
        .map(|v| v.as_str().map(str::to_owned))
        .collect::<Option<Vec<_>>>()
        .map(Value::StringArray)
}

/// A configuration (nested maps) as parameters with dotted names, in key order; what a parameter cannot hold is
/// left out.
pub fn flatten(config: &Mapping) -> Vec<(String, Value)> {
    schema::leaves(config)
        .into_iter()
        .filter_map(|(name, value)| Some((name, from_yaml(value)?)))
        .collect()
}

/// A parameter's real range and integer range.
pub type Ranges = (Option<(f64, f64)>, Option<(i64, i64)>);

/// The ranges a driver parameter shows (`nrt_engine::schema::ranges`): real for a double, integer for an integer.
pub fn driver_ranges(name: &str, value: &Value) -> Ranges {
    match value {
        Value::Double(_) => (ranges::of_driver_param(name).map(|r| (r.min, r.max)), None),
        Value::Integer(_) => (None, ranges::int_of_driver_param(name)),
        _ => (None, None),
    }
}

fn driver_param(name: String, value: Value, live: bool) -> Param {
    let (range, int_range) = driver_ranges(&name, &value);
    Param {
        description: description(live).to_owned(),
        read_only: !live,
        range,
        int_range,
        name,
        value,
    }
}

/// `asebaros`' table: the configuration in effect at start (`effective`, nested maps) with the driver's
/// process-wide values in effect now (the calibration they give a robot without a file entry included); `live`
/// says which apply at run time (the configuration schema's).
pub fn bridge_table(engine: &Engine, effective: &Mapping, live: fn(&str) -> bool) -> Vec<Param> {
    let mut tree = effective.clone();
    tree.extend(engine.defaults_effective());
    flatten(&tree)
        .into_iter()
        .map(|(name, value)| {
            let l = live(&name);
            driver_param(name, value, l)
        })
        .collect()
}

/// Sets `asebaros`' live parameter `name` (a driver parameter: calibration, `obstacle_stop.*`) for every robot,
/// with the engine's verdict; `Ok`: the line to report (the robots updated, and which keep their calibration
/// file's value).
pub fn set_bridge(engine: &mut Engine, name: &str, value: &Value) -> Result<String, String> {
    let yaml = to_yaml(value).ok_or("unsupported value")?;
    let robots = engine
        .set_live_param(name, yaml)
        .map_err(|e| e.to_string())?;
    let kept: Vec<u16> = robots
        .iter()
        .filter(|n| engine.fixed_by_file(**n, name))
        .map(|n| n.0)
        .collect();
    let ids: Vec<u16> = robots.iter().map(|n| n.0).collect();
    Ok(if kept.is_empty() {
        format!("{name} applied live to robots {ids:?}")
    } else {
        format!(
            "{name} applied live to robots {ids:?}; nodes {kept:?} keep the value of \
             their calibration file entry, which takes precedence"
        )
    })
}

/// Robot `id`'s `thymio_driver` table: its own parameters with the values in effect (its calibration file entry's
/// where it has one), ROS-Thymio's `unused` ones (read-only; those not given are shown empty), then its RT
/// controllers' parameters (live, with their ranges).
pub fn driver_table(
    engine: &Engine,
    id: NodeId,
    unused: &[(String, Value)],
    controllers: Option<&dyn ControllerParams>,
) -> Vec<Param> {
    let mut out: Vec<Param> = flatten(&engine.robot_effective(id))
        .into_iter()
        .filter(|(name, _)| DriverParams::is_per_robot(name))
        .map(|(name, value)| {
            let live = schema::is_live::<DriverParams>(&name);
            driver_param(name, value, live)
        })
        .collect();
    let given = unused.iter().cloned();
    let missing = ROS_THYMIO_UNUSED
        .iter()
        .filter(|n| !unused.iter().any(|(u, _)| u == *n))
        .map(|n| (n.to_string(), Value::String(String::new())));
    out.extend(given.chain(missing).map(|(name, value)| Param {
        name,
        value,
        description: UNUSED.into(),
        read_only: true,
        range: None,
        int_range: None,
    }));
    let robot = engine.robots().of_node(id).map(|s| s.robot);
    if let (Some(robot), Some(c)) = (robot, controllers) {
        out.extend(c.params(robot).into_iter().map(|(name, value, d)| Param {
            name,
            value: Value::Double(value),
            description: format!("{} [{}, {}] (applied live)", d.description, d.min, d.max),
            read_only: false,
            range: Some((d.min, d.max)),
            int_range: None,
        }));
    }
    out
}

/// Sets robot `id`'s parameter `name`: a controller's (`controllers.…`, a number) through `controllers`, else the
/// engine's ([`Engine::set_robot_param`]), with its verdict.
pub fn set_driver<'c>(
    engine: &mut Engine,
    controllers: Option<&mut (dyn ControllerParams + 'c)>,
    id: NodeId,
    name: &str,
    value: &Value,
) -> Result<(), String> {
    if name.starts_with("controllers.") {
        let robot = engine.robots().of_node(id).map(|s| s.robot);
        if let (Some(robot), Some(c)) = (robot, controllers) {
            let v = value
                .number()
                .ok_or_else(|| format!("{name} is a number (double), not {value:?}"))?;
            return c.set_param(robot, name, v);
        }
    }
    let yaml = to_yaml(value).ok_or("unsupported value")?;
    engine
        .set_robot_param(id, name, yaml)
        .map_err(|e| e.to_string())
}

/// The parameter `name` names, under our name when it is asebaros' or ROS-Thymio's.
pub fn find<'a>(table: &'a [Param], name: &str) -> Option<&'a Param> {
    let name = canonical_name(name);
    table.iter().find(|p| p.name == name)
}

/// Why a set of `name` is accepted and ignored (a ROS-Thymio parameter that means nothing here), if it is.
pub fn ignored(name: &str) -> Option<String> {
    match aliases::resolve(name) {
        aliases::Resolved::Ignored(why) => {
            Some(format!("{name} is not used by thymio-rt: {why}; ignored"))
        }
        _ => None,
    }
}

/// Refuses an undeclared parameter, a read-only one and an undeclare (a value [`Value::NotSet`]).
pub fn check(table: &[Param], name: &str, value: &Value) -> Result<(), String> {
    let Some(p) = find(table, name) else {
        return Err(format!("parameter {name} is not declared on this node"));
    };
    if p.read_only {
        return Err(format!("parameter {name} is read-only: {}", p.description));
    }
    if *value == Value::NotSet {
        return Err(format!("parameter {name} cannot be undeclared"));
    }
    Ok(())
}

/// The verdict on one parameter of a set: accepted (with a note, e.g. why it is ignored) or refused with why.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    /// Whether it is in effect (or accepted and ignored).
    pub successful: bool,
    /// Why not, or a note; empty when plainly applied.
    pub reason: String,
}

impl From<Result<(), String>> for Verdict {
    fn from(r: Result<(), String>) -> Verdict {
        match r {
            Ok(()) => Verdict {
                successful: true,
                reason: String::new(),
            },
            Err(reason) => Verdict {
                successful: false,
                reason,
            },
        }
    }
}

/// "Set these values", one by one: each is checked against the table in effect (`table`) and applied by `set`
/// (`Err`: why not; then nothing changed), and gets its verdict.
pub fn set_each(
    table: &dyn Fn() -> Vec<Param>,
    set: &mut dyn FnMut(&str, &Value) -> Result<(), String>,
    wanted: &[(String, Value)],
) -> Vec<Verdict> {
    wanted
        .iter()
        .map(|(name, value)| {
            if let Some(note) = ignored(name) {
                return Verdict {
                    successful: true,
                    reason: note,
                };
            }
            let name = canonical_name(name);
            check(&table(), &name, value)
                .and_then(|()| set(&name, value))
                .into()
        })
        .collect()
}

/// "Set these values" all or none: on a refusal the ones already set are set back. ROS-Thymio's parameters
/// without use here are left out.
pub fn set_all(
    table: &dyn Fn() -> Vec<Param>,
    set: &mut dyn FnMut(&str, &Value) -> Result<(), String>,
    wanted: &[(String, Value)],
) -> Result<(), String> {
    let wanted: Vec<(String, Value)> = wanted
        .iter()
        .filter(|(n, _)| ignored(n).is_none())
        .map(|(n, v)| (canonical_name(n), v.clone()))
        .collect();
    let before = table();
    for (name, value) in &wanted {
        check(&before, name, value)?;
    }
    for (i, (name, value)) in wanted.iter().enumerate() {
        if let Err(e) = set(name, value) {
            for (done, _) in wanted[..i].iter().rev() {
                if let Some(old) = find(&before, done) {
                    // the old value was in effect: setting it back is accepted
                    let _ = set(done, &old.value);
                }
            }
            return Err(format!("{name}: {e} (none of the parameters was set)"));
        }
    }
    Ok(())
}

/// The RT controllers' ports of the layer, as the parameter tables reach them.
impl ControllerParams for crate::controllers::Controllers {
    fn params(&self, robot: RobotId) -> Vec<(String, f64, ParamDecl)> {
        crate::controllers::Controllers::params(self, robot)
    }

    fn set_param(&mut self, robot: RobotId, name: &str, value: f64) -> Result<(), String> {
        crate::controllers::Controllers::set_param(self, robot, name, value)
    }
}

#[cfg(test)]
#[path = "params_tests.rs"]
mod tests;
