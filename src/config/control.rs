//! The section `control`: the communication switch's first owner and, XBotCore-style, which registered RT
//! controllers every robot loads with which start parameters (`control.controllers`), checked against the
//! controller registry the driver runs with ([`ControlParams::load`]).

use nrt_engine::schema::{Invalid, Section};
use rt::controllers::Registry;
use serde::{Deserialize, Deserializer, Serialize};
use std::collections::BTreeMap;

/// One controller's start parameters: `<param>: value` (the controller's declared parameters).
pub type ControllerParams = BTreeMap<String, f64>;

/// The communication switch (who owns each robot's wheels) and the RT controllers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ControlParams {
    /// Owner of every robot's wheels when it starts being driven: `ros` (cmd_vel), `joint`
    /// (joint commands) or a loaded RT controller (`line_follower`, `go_to_pose`, one of the user's).
    pub default_owner: String,
    /// The RT controllers every robot loads, by registry name, each with the start values of some of
    /// its parameters (`{}` or nothing: its defaults); absent: every registered controller with its
    /// defaults. A controller not listed cannot own the wheels.
    #[serde(
        skip_serializing_if = "Option::is_none",
        deserialize_with = "controllers_map"
    )]
    pub controllers: Option<BTreeMap<String, ControllerParams>>,
    /// The longest an RT controller's `update` may take on the RT thread (µs; 0: no budget, timed only).
    pub controller_budget_us: u64,
    /// Consecutive `update` calls over the budget on one robot that stop the controller there (zero speed,
    /// the wheels back to `ros`).
    pub controller_overruns: u32,
}

/// `control.controller_budget_us` by default: a tenth of the default RT period (`rt.period_us` 10000), a
/// thousand times what a shipped controller's `update` takes, so that only a controller that really steals the
/// period (or blocks) is stopped.
pub const CONTROLLER_BUDGET_US: u64 = 1000;
/// Largest `control.controller_budget_us`: one second, beyond which a budget stops nothing a watchdog would not.
pub const MAX_CONTROLLER_BUDGET_US: u64 = 1_000_000;
/// `control.controller_overruns` by default: one preemption of the RT thread in the middle of an `update` (a
/// kernel without PREEMPT_RT, SCHED_OTHER) is one overrun, five in a row is the controller.
pub const CONTROLLER_OVERRUNS: u32 = 5;
/// Largest `control.controller_overruns`.
pub const MAX_CONTROLLER_OVERRUNS: u32 = 10_000;

impl Default for ControlParams {
    fn default() -> Self {
        Self {
            default_owner: "ros".into(),
            controllers: None,
            controller_budget_us: CONTROLLER_BUDGET_US,
            controller_overruns: CONTROLLER_OVERRUNS,
        }
    }
}

/// `control.controllers`: a map whose entries may be empty (`name:` or `name: {}`).
fn controllers_map<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<Option<BTreeMap<String, ControllerParams>>, D::Error> {
    let m = Option::<BTreeMap<String, Option<ControllerParams>>>::deserialize(d)?;
    Ok(m.map(|m| {
        m.into_iter()
            .map(|(k, v)| (k, v.unwrap_or_default()))
            .collect()
    }))
}

/// What [`ControlParams::load`] chose: the controllers loaded (registry order) and the start values
/// of their parameters.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LoadedControllers {
    /// `(controller, [(parameter, value)])`, for every controller whose parameters the configuration sets.
    pub params: Vec<(&'static str, Vec<(&'static str, f64)>)>,
}

impl LoadedControllers {
    /// Writes the start values into every robot's ports of `control` (before the RT thread starts: each
    /// controller reads them at its first cycle; they stay live-settable).
    pub fn apply(&self, control: &mut handoff::NrtControl) -> Result<(), Invalid> {
        for port in &mut control.ports {
            let Some((_, values)) = self.params.iter().find(|(c, _)| *c == port.controller) else {
                continue;
            };
            for (name, value) in values {
                port.params.nrt_set(name, *value).map_err(|e| {
                    Invalid::new(
                        &format!("control.controllers.{}.{name}", port.controller),
                        value,
                        e.to_string(),
                    )
                })?;
            }
        }
        Ok(())
    }
}

impl ControlParams {
    /// Keeps in `registry` the controllers `control.controllers` lists (all when it is absent) and checks
    /// every parameter value against its controller's declarations and `default_owner` against the loaded
    /// owners. Every error names its key (`control.controllers.<name>[.<param>]`, `control.default_owner`)
    /// and what is accepted there.
    pub fn load(&self, registry: &mut Registry) -> Result<LoadedControllers, Invalid> {
        let mut loaded = LoadedControllers::default();
        if let Some(wanted) = &self.controllers {
            let registered = registry.names();
            for (name, values) in wanted {
                let key = format!("control.controllers.{name}");
                let Some(&cname) = registered.iter().find(|r| **r == name.as_str()) else {
                    return Err(Invalid::new(
                        &key,
                        name,
                        format!(
                            "is not a registered controller (registered: {})",
                            registered.join(", ")
                        ),
                    ));
                };
                let decls = match registry.param_decls(cname) {
                    Some(Ok(d)) => d,
                    Some(Err(e)) => return Err(Invalid::new(&key, name, e.to_string())),
                    None => Vec::new(),
                };
                let mut set = Vec::new();
                for (param, &value) in values {
                    let key = format!("{key}.{param}");
                    let Some(d) = decls.iter().find(|d| d.name == param.as_str()) else {
                        let names: Vec<&str> = decls.iter().map(|d| d.name).collect();
                        return Err(Invalid::new(
                            &key,
                            param,
                            format!(
                                "is not a parameter of {name} (its parameters: {})",
                                if names.is_empty() {
                                    "none".to_owned()
                                } else {
                                    names.join(", ")
                                }
                            ),
                        ));
                    };
                    if !value.is_finite() || value < d.min || value > d.max {
                        return Err(Invalid::new(
                            &key,
                            value,
                            format!("must be a finite number in [{}, {}]", d.min, d.max),
                        ));
                    }
                    set.push((d.name, value));
                }
                if !set.is_empty() {
                    loaded.params.push((cname, set));
                }
            }
            registry.retain(|n| wanted.contains_key(n));
        }
        let names = handoff::OwnerNames::new(registry.names());
        if names.id(&self.default_owner).is_none() {
            return Err(Invalid::new(
                "control.default_owner",
                &self.default_owner,
                format!(
                    "is not a loaded owner (one of: {})",
                    names.all().collect::<Vec<_>>().join(", ")
                ),
            ));
        }
        Ok(loaded)
    }
}

/// `control.*`, read at start. The names are checked against the registry at start ([`ControlParams::load`]).
impl Section for ControlParams {
    fn validate(&self) -> Result<(), Invalid> {
        if self.controller_budget_us > MAX_CONTROLLER_BUDGET_US {
            return Err(Invalid::new(
                "controller_budget_us",
                self.controller_budget_us,
                format!("is above {MAX_CONTROLLER_BUDGET_US} µs (0 turns the budget off)"),
            ));
        }
        if !(1..=MAX_CONTROLLER_OVERRUNS).contains(&self.controller_overruns) {
            return Err(Invalid::new(
                "controller_overruns",
                self.controller_overruns,
                format!(
                    "is outside 1..={MAX_CONTROLLER_OVERRUNS} (consecutive overruns before the stop)"
                ),
            ));
        }
        // calibrate_motors and the goal controllers run only for a goal of their action: as a
        // start owner they would hold every robot still.
        if nrt_interface::owner_switch::ACTION_ONLY.contains(&self.default_owner.as_str()) {
            return Err(Invalid::new(
                "default_owner",
                &self.default_owner,
                format!(
                    "takes the wheels only through its action (send a {} goal)",
                    self.default_owner
                ),
            ));
        }
        Ok(())
    }
}
