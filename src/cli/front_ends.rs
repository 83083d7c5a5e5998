//! The front ends of `thymio-rt run`, made for one run wiring ([`nrt_interface::front_end`]): ROS 2, ROS 1, both,
//! or none (the console: events logged, `--cmd-vel` applied). Their nodes are made before the engine, since their
//! parameters are part of the configuration (ROS 1's parameter server and `_param:=` arguments, then ROS 2's
//! parameters, which win).

use super::ros_args::Ros1Arg;
use super::CliError;
use crate::config::Config;
use crate::runtime::Runtime;
use handoff::NodeId;
use nrt_engine::engine::{Engine, EngineEvent};
use nrt_interface::{FrontEnd, Interface};
use std::time::Instant;

/// What the command line asks for.
pub(super) struct Wanted<'a> {
    /// The ROS 2 bridge (never in a build without the feature `ros2`).
    #[cfg_attr(not(feature = "ros2"), allow(dead_code))]
    pub ros2: bool,
    /// The ROS 1 front end (`run` refuses it in a build without the feature `ros1`).
    #[cfg_attr(not(feature = "ros1"), allow(dead_code))]
    pub ros1: bool,
    /// roslaunch's arguments (with `ros1`).
    #[cfg_attr(not(feature = "ros1"), allow(dead_code))]
    pub ros1_args: &'a [Ros1Arg],
    /// A constant `cmd_vel` for every robot (without ROS).
    pub cmd_vel: Option<(f64, f64)>,
}

/// The ROS 2 bridge node. r2r panics when rcl refuses the command line (`rcl_init`): the parameter
/// files are checked first (readable, within the YAML guard's limits, YAML), and what rcl still
/// refuses (a rule of its own: a list of mixed types, an alias) is its reason on one line, not a
/// panic with a backtrace.
#[cfg(feature = "ros2")]
fn ros2_node() -> Result<nrt_ros2::RosNode, CliError> {
    let args: Vec<String> = std::env::args().collect();
    nrt_ros2::params_file::check_files(&args).map_err(CliError::new)?;
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let made = std::panic::catch_unwind(|| nrt_ros2::RosNode::new(nrt_ros2::RosOptions::default()));
    std::panic::set_hook(hook);
    match made {
        Ok(node) => node.map_err(CliError::new),
        Err(payload) => Err(CliError::new(format!(
            "cannot start ROS 2: rcl refused the ROS arguments: {}",
            rcl_reason(payload.as_ref())
        ))),
    }
}

/// rcl's error in a panic of r2r's, on one line and without rcl's source locations.
#[cfg(feature = "ros2")]
fn rcl_reason(payload: &(dyn std::any::Any + Send)) -> String {
    let text = payload
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| payload.downcast_ref::<&str>().copied())
        .unwrap_or("unknown error");
    let text = text.split(", at /").next().unwrap_or(text);
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The front ends' nodes, made before the engine.
pub(super) struct Nodes {
    #[cfg(feature = "ros2")]
    ros2: Option<nrt_ros2::RosNode>,
    #[cfg(feature = "ros1")]
    ros1: Option<nrt_ros1::Ros1Node>,
    cmd_vel: Option<(f64, f64)>,
}

impl Nodes {
    /// Makes the nodes `wanted` asks for, and `config` with their parameters over it.
    pub fn new(wanted: &Wanted<'_>, config: Config) -> Result<(Nodes, Config), CliError> {
        #[cfg(feature = "ros1")]
        let (ros1, config) = if wanted.ros1 {
            let node =
                nrt_ros1::Ros1Node::new(ros1_options(wanted.ros1_args)?).map_err(CliError::new)?;
            let config = config
                .with_overrides(&node.parameter_overrides().map_err(CliError::new)?)
                .and_then(|c| c.with_overrides(&ros1_params(wanted.ros1_args)))
                .map_err(CliError::new)?;
            (Some(node), config)
        } else {
            (None, config)
        };
        #[cfg(feature = "ros2")]
        let (ros2, config) = if wanted.ros2 {
            let mut node = ros2_node()?;
            let config = config
                .with_overrides(&node.parameter_overrides().map_err(CliError::new)?)
                .map_err(CliError::new)?;
            // the robots' sections too, before anything runs (their nodes come with the robots)
            let args: Vec<String> = std::env::args().collect();
            nrt_ros2::params_file::check_driver_sections(&args, &config.driver)
                .map_err(CliError::new)?;
            node.set_spin_period(std::time::Duration::from_micros(config.rt.nrt_poll_us))
                .map_err(CliError::new)?;
            (Some(node), config)
        } else {
            (None, config)
        };
        let nodes = Nodes {
            #[cfg(feature = "ros2")]
            ros2,
            #[cfg(feature = "ros1")]
            ros1,
            cmd_vel: wanted.cmd_vel,
        };
        Ok((nodes, config))
    }

    /// The ROS namespace the flight recorder names the outputs in: the ROS 2 bridge node's (its topics and
    /// frames are the recorded ones), `/` without it.
    pub fn recorded_namespace(&self) -> Result<String, CliError> {
        #[cfg(feature = "ros2")]
        if let Some(n) = &self.ros2 {
            return n.namespace().map_err(CliError::new);
        }
        Ok("/".to_owned())
    }

    /// The prefix the flight recorder gives the diagnostics' names: the ROS 2 bridge node's name, `asebaros`
    /// (asebaros' and the bridge's default) without it.
    pub fn recorded_diagnostics_prefix(&self) -> String {
        #[cfg(feature = "ros2")]
        if let Some(n) = &self.ros2 {
            return n.node_name().to_owned();
        }
        "asebaros".to_owned()
    }

    /// How many ROS front ends (each takes an RT odometry ring).
    pub fn count(&self) -> usize {
        self.parts().len()
    }

    /// The ROS front ends made, as `describe` names them.
    fn parts(&self) -> Vec<String> {
        Vec::<Option<String>>::from([
            #[cfg(feature = "ros2")]
            self.ros2.as_ref().map(|_| "the ROS 2 bridge".to_owned()),
            #[cfg(feature = "ros1")]
            self.ros1
                .as_ref()
                .map(|n| format!("the ROS 1 front end ({})", n.name())),
        ])
        .into_iter()
        .flatten()
        .collect()
    }

    /// "with the ROS 2 bridge", "with the ROS 1 front end (/asebaros)", both, or "without ROS".
    pub fn describe(&self) -> String {
        let parts = self.parts();
        if parts.is_empty() {
            "without ROS".into()
        } else {
            format!("with {}", parts.join(" and "))
        }
    }

    /// The logger name of the lines for ROS users (the bridge node's name).
    pub fn logger(&self) -> String {
        #[cfg(feature = "ros1")]
        if let Some(n) = &self.ros1 {
            return n.name().trim_start_matches('/').replace('/', ".");
        }
        "asebaros".into()
    }

    /// Creates every front end's interface on the running engine; the RT controllers are the layer's (`iface`),
    /// served by every front end; the simulator's ground truth is the layer's too, published on every front end.
    pub fn start(
        self,
        config: &Config,
        rt: &mut Runtime,
        iface: &mut Interface,
    ) -> Result<Vec<Box<dyn FrontEnd>>, CliError> {
        let _ = &config;
        let mut out: Vec<Box<dyn FrontEnd>> = Vec::new();
        // the calibration action is the layer's, whatever the front ends: it takes its controller's private ports
        // once
        let mut control = rt.take_control();
        // the owners of this run (ros, joint, the loaded controllers), for the ROS 1 joint interface
        #[cfg(feature = "ros1")]
        let owners = control
            .as_ref()
            .map(|c| c.names.clone())
            .unwrap_or_default();
        if let Some(control) = control.as_mut() {
            iface.calibration.take(control);
            // so do the goal actions (drive_distance, rotate_angle, navigate_to_position)
            iface.goal_actions.take(control);
        }
        #[cfg(feature = "ros2")]
        if let Some(node) = self.ros2 {
            let bridge = node
                .start(
                    &config.to_mapping(),
                    Config::is_live,
                    &mut rt.engine,
                    &iface.reporter,
                )
                .map_err(CliError::new)?;
            out.push(Box::new(bridge));
        }
        // the switch and the controllers' endpoints serve the rest, on every front end
        if let Some(control) = control {
            iface.serve_control(control, &rt.engine);
        }
        // an endpoint of a ROS type a front end cannot serve stops the start, naming it (rather than a robot
        // later driven without it)
        #[cfg(feature = "ros2")]
        if out.iter().any(|f| f.name() == "ROS 2") {
            for (at, ty) in iface.controllers.message_types() {
                nrt_ros2::msg_endpoints::check_type(ty)
                    .map_err(|e| CliError::new(format!("ROS 2: controllers/{at}: {e}")))?;
            }
        }
        #[cfg(feature = "ros1")]
        if let Some(node) = self.ros1 {
            let mut bridge = node
                .start(&mut rt.engine, &iface.reporter)
                .map_err(CliError::new)?;
            bridge.set_owner_names(owners);
            out.push(Box::new(bridge));
            for (at, ty) in iface.controllers.message_types() {
                nrt_ros1::controllers::check_type(ty)
                    .map_err(|e| CliError::new(format!("ROS 1: controllers/{at}: {e}")))?;
            }
        }
        if let Some(sim) = rt.sim() {
            let sinks: Vec<_> = out
                .iter_mut()
                .filter_map(|f| f.ground_truth_sink())
                .collect();
            if !sinks.is_empty() {
                iface
                    .start_ground_truth(Box::new(sim.ground_truth()), sinks)
                    .map_err(CliError::new)?;
            }
        }
        let names: Vec<&str> = out.iter().map(|f| f.name()).collect();
        match names.as_slice() {
            [] => {}
            [one] => tracing::info!("{one} interface up"),
            many => tracing::info!("{} interfaces up", many.join(" and ")),
        }
        if out.is_empty() {
            out.push(Box::new(Console {
                cmd_vel: self.cmd_vel,
            }));
        }
        Ok(out)
    }
}

/// The ROS 1 node's options: the environment's, then roslaunch's `__name:=`, `__ns:=` and remappings.
#[cfg(feature = "ros1")]
fn ros1_options(args: &[Ros1Arg]) -> Result<nrt_ros1::Ros1Options, CliError> {
    let mut options = nrt_ros1::Ros1Options::from_env().map_err(CliError::new)?;
    for a in args {
        match a {
            Ros1Arg::Name(n) => options.node_name = n.clone(),
            Ros1Arg::Namespace(ns) => options.namespace = ns.clone(),
            Ros1Arg::Remap(from, to) => options.remaps.push((from.clone(), to.clone())),
            Ros1Arg::Log(_) | Ros1Arg::Param(..) => {}
        }
    }
    Ok(options)
}

/// The private parameters given as `_NAME:=VALUE`, as configuration entries.
#[cfg(feature = "ros1")]
fn ros1_params(args: &[Ros1Arg]) -> Vec<(String, yaml_serde::Value)> {
    args.iter()
        .filter_map(|a| match a {
            Ros1Arg::Param(n, v) => Some((n.clone(), v.clone())),
            _ => None,
        })
        .collect()
}

/// The front end of a run without ROS: the engine's events on the console, `--cmd-vel` for every robot.
struct Console {
    cmd_vel: Option<(f64, f64)>,
}

impl FrontEnd for Console {
    fn name(&self) -> &'static str {
        "console"
    }

    fn serve(&mut self, engine: &mut Engine, _iface: &mut Interface, _now: Instant) {
        let Some((linear, angular)) = self.cmd_vel else {
            return;
        };
        let nodes: Vec<NodeId> = engine.robots().iter().map(|s| s.node).collect();
        for node in nodes {
            if let Err(e) = engine.set_cmd_vel(node, linear, angular) {
                tracing::warn!("--cmd-vel: node {node}: {e}");
            }
        }
    }

    fn on_engine_event(
        &mut self,
        _engine: &mut Engine,
        _iface: &mut Interface,
        event: &EngineEvent,
    ) {
        log_event(event);
    }

    fn publish(&mut self, _engine: &Engine, _iface: &Interface, _now: Instant) {}

    fn alive(&self) -> bool {
        true
    }
}

fn log_event(e: &EngineEvent) {
    match e {
        EngineEvent::RtStarted(s) => tracing::info!(
            "RT thread running: scheduler {:?}, cpu {:?}, memory lock {:?}, PREEMPT_RT kernel: {}",
            s.mode(),
            s.cpu,
            s.memory_lock,
            s.realtime_kernel
        ),
        EngineEvent::LinkUp { link, target, kind } => {
            tracing::info!("connected: link {link} (target {target}, {kind:?})")
        }
        EngineEvent::LinkDown { link, target } => {
            tracing::warn!("disconnected: link {link} (target {target})")
        }
        EngineEvent::RobotReady { node, robot } => {
            tracing::info!("node {node} is robot {robot} (cmd_vel, odometry)")
        }
        EngineEvent::ScriptFailed { node, error } => {
            tracing::error!("node {node}: script not loaded: {error}")
        }
        EngineEvent::RobotRemoved { node, robot } => {
            tracing::warn!("node {node} is no longer driven (was robot {robot})")
        }
        EngineEvent::WatchdogStop { node } => {
            tracing::info!("node {node}: no cmd_vel in time, stopped")
        }
        _ => {}
    }
}
