//! ROS-Thymio's `thymio_driver` nodes: one per driven robot, in the robot's namespace (the
//! bridge's ROS namespace, then the robot's own), holding that robot's driver parameters with
//! ROS-Thymio's names (`axis_length`, `odom_frame`, `motor.left.parameters`, …).
//!
//! The node is created when the robot becomes driven, before its ROS interface, so rcl hands it
//! the parameters given for it as for any ROS node: the `thymio_driver:` section of a
//! `--params-file` (every robot), `/<ns>/thymio_driver:` (that robot only), `/**:` and `-p`.
//! These override the process's values (`asebaros`' driver parameters: the configuration
//! file and the parameters given to `asebaros`) for that robot ([`Engine::set_robot_params`]).
//! The process-wide driver parameters (`cmd_vel_timeout`, `obstacle_stop.*`, …) stay on
//! `asebaros`; given to a driver node with another value, they are reported and ignored.
//!
//! Spinning: the nodes only serve parameter services, which are not latency-critical, but there
//! is one per robot. They are not added to the main spinner's node (its wait set would grow, and
//! each wait cost more), and the NRT loop does not poll them (an rcl wait with zero timeout on
//! each node every 20 ms was 5 % of a core at 32 robots while nobody called): each node
//! has a [`Spinner`] of its own, on a small stack, that waits for calls and rings the NRT loop's
//! doorbell when one comes; the loop, which owns the engine the answers come from, then drains
//! the calls (never waits) and answers at once (see [`super::param_server`]).

use super::param_server::{to_layer, ParamServices};
use super::params;
use super::params_file;
use super::report::Reporter;
use super::spinner::{SharedNode, Spinner};
use handoff::NodeId;
use nrt_engine::engine::{Engine, EngineEvent};
use nrt_engine::params::BridgeParams;
use nrt_engine::schema;
use nrt_engine::thymio::params::{DriverParams, ROS_THYMIO_UNUSED};
use nrt_interface::controllers::Controllers;
use nrt_interface::params::{self as layer, Value as LayerValue};
use r2r::ParameterValue;
use std::collections::BTreeMap;
use std::sync::Arc;
use yaml_serde::Value;

pub use crate::node_name::NODE_NAME;

/// The stack of a driver node's spinner thread (resident under `mlockall`): its waits and
/// r2r's taking of parameter calls need little.
const SPINNER_STACK: usize = 256 * 1024;

/// Why a robot has no `thymio_driver` node.
#[derive(Debug, thiserror::Error)]
pub enum DriverNodeError {
    /// rcl refused the node or its services.
    #[error("rcl: {0}")]
    Rcl(#[from] r2r::Error),
    /// Its spinner thread could not start.
    #[error("cannot start its spinner thread: {0}")]
    Spawn(#[source] std::io::Error),
    /// A process-wide namespace remapping put the node elsewhere.
    #[error(
        "rcl's process-wide namespace remapping (-r __ns:=..., a launch file's namespace) puts \
         every node of the process in {actual}, not in {wanted}; remap the bridge node only \
         (-r asebaros:__ns:=...) to give each robot its thymio_driver node"
    )]
    Moved {
        /// The robot's namespace.
        wanted: String,
        /// Where rcl put the node.
        actual: String,
    },
}

/// One robot's node.
struct DriverNode {
    /// First field: stops its thread before the node goes.
    _spinner: Spinner,
    node: Arc<SharedNode>,
    services: ParamServices,
    /// ROS-Thymio's parameters without use here, as given (shown read-only).
    unused: Vec<(String, LayerValue)>,
}

/// The `thymio_driver` nodes of the driven robots.
pub struct DriverNodes {
    ctx: r2r::Context,
    /// The bridge node's namespace (`/` or `/ns`).
    base: String,
    nodes: BTreeMap<NodeId, DriverNode>,
}

impl DriverNodes {
    /// No node yet; they will live in context `ctx`, under the bridge's namespace `base`.
    pub fn new(ctx: r2r::Context, base: &str) -> DriverNodes {
        DriverNodes {
            ctx,
            base: base.to_owned(),
            nodes: BTreeMap::new(),
        }
    }

    /// Creates robot `id`'s node (if it has none) and gives its parameters to the engine, each
    /// refused one reported on the node's `/rosout` with why. `Err`: no node; the robot then
    /// keeps the process's values.
    pub fn add(
        &mut self,
        engine: &mut Engine,
        controllers: &mut Controllers,
        id: NodeId,
    ) -> Result<(), DriverNodeError> {
        if self.nodes.contains_key(&id) {
            return Ok(());
        }
        let ns = nrt_interface::frames::robot_namespace(engine, id);
        let full = join(&self.base, &ns);
        let mut node = r2r::Node::create(self.ctx.clone(), NODE_NAME, &full)?;
        let actual = node.namespace()?;
        if actual != full {
            // rcl's process-wide `-r __ns:=` (a launch file's `namespace=`) moves every node of
            // the process: this robot's node would take another robot's name
            return Err(DriverNodeError::Moved {
                wanted: full,
                actual,
            });
        }
        let reporter = super::report::node_reporter(&mut node)?;
        let services = ParamServices::new(&mut node)?;
        let mut mine = Vec::new();
        let mut unused = Vec::new();
        let mut given = params::overrides(&node);
        let args: Vec<String> = std::env::args().collect();
        match params_file::extra_overrides(&args, NODE_NAME, &node.fully_qualified_name()?) {
            Ok(extra) => given.extend(extra),
            Err(e) => reporter.error(&format!("{e}")),
        }
        let robot = engine.robots().of_node(id).map(|s| s.robot);
        for (name, value) in given {
            // asebaros' and ROS-Thymio's names as ours
            let name = nrt_engine::schema::aliases::canonical_name(&name);
            if let (Some(robot), true) = (robot, name.starts_with("controllers.")) {
                let v = params::from_yaml(&value).ok_or("unsupported value");
                if let Err(e) = v
                    .and_then(|v| number(&v).ok_or("not a number"))
                    .map_err(str::to_owned)
                    .and_then(|v| controllers.set_param(robot, &name, v))
                {
                    reporter.error(&format!("node {id}: parameter {name} refused: {e}"));
                }
                continue;
            }
            match classify(engine, &name, &value) {
                Kind::Robot => mine.push((name, value)),
                Kind::Unused => {
                    if let Some(v) = layer::from_yaml(&value) {
                        unused.push((name.clone(), v));
                    }
                    reporter.info(&format!(
                        "parameter {name} (ROS-Thymio's) is not used by thymio-rt: ignored"
                    ));
                }
                Kind::ProcessWide { differs } => {
                    if differs {
                        reporter.warn(&format!(
                            "parameter {name} applies to every robot: set it on asebaros; ignored here"
                        ));
                    }
                }
                Kind::Unknown => reporter.warn(&format!("unknown parameter {name}: ignored")),
            }
        }
        for e in engine.set_robot_params(id, &mine) {
            reporter.error(&format!("node {id}: parameter refused: {e}"));
        }
        let node = SharedNode::new(node);
        let spinner = Spinner::start_with(
            node.clone(),
            engine.doorbell(),
            "nrt-ros-driver",
            Some(SPINNER_STACK),
        )
        .map_err(DriverNodeError::Spawn)?;
        self.nodes.insert(
            id,
            DriverNode {
                _spinner: spinner,
                node,
                services,
                unused,
            },
        );
        Ok(())
    }

    /// Makes a newly driven robot's node first, before its ROS interface (its parameters set
    /// how the interface is made), and removes it with the robot; `reporter` (the bridge's)
    /// says when a robot gets no node.
    pub fn on_engine_event(
        &mut self,
        engine: &mut Engine,
        controllers: &mut Controllers,
        event: &EngineEvent,
        reporter: &Reporter,
    ) {
        match event {
            EngineEvent::RobotReady { node, .. } if engine.driver_params().enabled => {
                if let Err(e) = self.add(engine, controllers, *node) {
                    reporter.warn(&format!(
                        "Thymio node {node}: no thymio_driver node (its parameters are asebaros'): {e}"
                    ));
                }
            }
            EngineEvent::RobotRemoved { node, .. } => self.remove(engine, *node),
            _ => {}
        }
    }

    /// Destroys robot `id`'s node and forgets its own parameters (the robot is gone).
    pub fn remove(&mut self, engine: &mut Engine, id: NodeId) {
        if self.nodes.remove(&id).is_some() {
            engine.forget_robot_params(id);
        }
    }

    /// Answers the parameter calls the nodes' spinners took (never waits); the robots' RT
    /// controllers' parameters are `controllers.<controller>.<param>` there.
    pub fn serve(&mut self, engine: &mut Engine, controllers: &mut Controllers) {
        for (id, d) in self.nodes.iter_mut() {
            if !d.node.take_work() {
                continue;
            }
            let unused = &d.unused;
            let engine_ref = std::cell::RefCell::new(&mut *engine);
            let controllers = std::cell::RefCell::new(&mut *controllers);
            let shown = || {
                let c: &Controllers = &controllers.borrow();
                layer::driver_table(&engine_ref.borrow(), *id, unused, Some(c))
            };
            let mut set = |name: &str, value: &LayerValue| {
                let mut c = controllers.borrow_mut();
                let c: &mut Controllers = &mut c;
                layer::set_driver(&mut engine_ref.borrow_mut(), Some(c), *id, name, value)
            };
            d.services.serve(&shown, &mut set);
        }
    }
}

/// A number given as a double or an integer.
fn number(v: &ParameterValue) -> Option<f64> {
    to_layer(v.clone()).number()
}

/// What a parameter given to a driver node is.
enum Kind {
    /// One of the robot's.
    Robot,
    /// ROS-Thymio's, without use here.
    Unused,
    /// A parameter of the whole process (bridge or process-wide driver parameter); `differs`:
    /// its value is not the process's (a `/**` section gives the same value to both nodes).
    ProcessWide { differs: bool },
    /// Nobody's.
    Unknown,
}

fn classify(engine: &Engine, name: &str, value: &Value) -> Kind {
    if DriverParams::is_per_robot(name) {
        return Kind::Robot;
    }
    if ROS_THYMIO_UNUSED.contains(&name) {
        return Kind::Unused;
    }
    let first = name.split('.').next().unwrap_or(name);
    let current = |tree: yaml_serde::Mapping| {
        schema::leaves(&tree)
            .into_iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
    };
    if schema::keys::<DriverParams>().iter().any(|k| k == first) {
        let differs = current(schema::tree(engine.driver_params()).unwrap_or_default()).as_ref()
            != Some(value);
        return Kind::ProcessWide { differs };
    }
    if schema::keys::<BridgeParams>().iter().any(|k| k == first) || first == "rt" || first == "sim"
    {
        // a bridge parameter of a `/**` section: asebaros has it
        return Kind::ProcessWide { differs: false };
    }
    Kind::Unknown
}

/// The namespace `ns` (relative, may be empty) under `base` (`/` or `/a/b`).
fn join(base: &str, ns: &str) -> String {
    let base = base.trim_end_matches('/');
    if ns.is_empty() {
        if base.is_empty() {
            "/".into()
        } else {
            base.into()
        }
    } else {
        format!("{base}/{ns}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use handoff::{channels, ChannelConfig};
    use nrt_engine::engine::EngineConfig;

    #[test]
    fn what_a_driver_node_is_given_is_sorted_by_owner() {
        let (_rt, nrt) = channels(&ChannelConfig::default());
        let config = EngineConfig {
            bridge: BridgeParams {
                port: 0,
                ..Default::default()
            },
            driver: DriverParams::default(),
        };
        let engine = Engine::new(config, nrt).unwrap();
        let v = |t: &str| yaml_serde::from_str::<Value>(t).unwrap();
        assert!(matches!(
            classify(&engine, "axis_length", &v("0.1")),
            Kind::Robot
        ));
        assert!(matches!(
            classify(&engine, "motor.left.parameters", &v("[1, 0]")),
            Kind::Robot
        ));
        assert!(matches!(
            classify(&engine, "launch_model", &v("''")),
            Kind::Unused
        ));
        // a `/**` section gives both nodes the same value: nothing to say
        let same = classify(&engine, "cmd_vel_timeout", &v("0.5"));
        assert!(matches!(same, Kind::ProcessWide { differs: false }));
        let other = classify(&engine, "cmd_vel_timeout", &v("2.0"));
        assert!(matches!(other, Kind::ProcessWide { differs: true }));
        let bridge = classify(&engine, "nodes.thymio.prefix", &v("thymio_"));
        assert!(matches!(bridge, Kind::ProcessWide { differs: false }));
        assert!(matches!(
            classify(&engine, "rt.period_us", &v("1000")),
            Kind::ProcessWide { .. }
        ));
        assert!(matches!(
            classify(&engine, "no_such", &v("1")),
            Kind::Unknown
        ));
    }

    #[test]
    fn the_robot_namespace_goes_under_the_bridge_one() {
        assert_eq!(join("/", ""), "/");
        assert_eq!(join("/", "thymio_1"), "/thymio_1");
        assert_eq!(join("/a", ""), "/a");
        assert_eq!(join("/a/b", "thymio_2"), "/a/b/thymio_2");
    }
}
