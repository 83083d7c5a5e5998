//! The ROS 2 front end of the NRT loop ([`nrt_interface::front_end`]): one thread owns the engine and the layer and
//! never waits on anything but the engine's doorbell, rung by the RT thread and by the spinner; each iteration this
//! front end serves what ROS asked, reacts to the engine's events and publishes what happened. The r2r node is spun
//! by [`Spinner`]. `cmd_vel` and odometry do not pass through the loop: see [`super::hot`] and
//! [`super::odom_pub`].

use super::aseba::AsebaInterface;
use super::bridge_params::BridgeParams;
use super::calibration_action::CalibrationActions;
use super::control::Control;
use super::convert::Clocks;
use super::driver_node::DriverNodes;
use super::goal_actions::GoalActionsRos2;
use super::ground_truth::GroundTruthTargets;
use super::hot::HotNode;
use super::odom_pub::{self, OdomPublisherConfig};
use super::report::Reporter;
use super::spinner::{NodeAccess, SharedNode, Spinner};
use super::thymio::ThymioInterface;
use super::{diagnostics, names, params, params_file, RosError, RosOptions};
use handoff::RosHops;
use nrt_engine::engine::{Engine, EngineEvent};
use nrt_engine::rivals::{Change, RivalWatch};
use nrt_interface::front_end::WantsFrames;
use nrt_interface::ground_truth::GroundTruthSink;
use nrt_interface::hop_times::{self, NrtHopTimers};
use nrt_interface::odom_thread::OdomThread;
use nrt_interface::{FrontEnd, Interface};
use r2r::diagnostic_msgs::msg::DiagnosticArray;
use r2r::{Publisher, QosProfile};
use std::time::{Duration, Instant};

/// The bridge node, created before the engine so that its ROS parameters can be part of the configuration.
pub struct RosNode {
    node: r2r::Node,
    /// For the robots' `thymio_driver` nodes.
    ctx: r2r::Context,
    options: RosOptions,
}

impl RosNode {
    /// Creates the r2r node (the process's `--ros-args` apply: `-p name:=value`, `--params-file`, remapping).
    pub fn new(options: RosOptions) -> Result<RosNode, RosError> {
        options.validate()?;
        let ctx = r2r::Context::create().map_err(RosError::Init)?;
        let node = r2r::Node::create(ctx.clone(), &options.node_name, &options.namespace)
            .map_err(RosError::Init)?;
        Ok(RosNode { node, ctx, options })
    }

    /// The node's name (`asebaros`): the prefix of its `/diagnostics`' names.
    pub fn node_name(&self) -> &str {
        &self.options.node_name
    }

    /// The namespace in effect of the node (`/` for none; after `-r __ns:=` and node-specific remaps), under
    /// which the robots' topics and frames are (the flight recorder records them there too).
    pub fn namespace(&self) -> Result<String, RosError> {
        self.node.namespace().map_err(RosError::Init)
    }

    /// Sets the longest wait for ROS work in one iteration (see [`RosOptions::spin_period`]).
    pub fn set_spin_period(&mut self, period: Duration) -> Result<(), RosError> {
        if period.is_zero() {
            return Err(RosError::SpinPeriod);
        }
        self.options.spin_period = period;
        Ok(())
    }

    /// The parameters given to the node, as `(dotted name, value)` configuration entries.
    /// Sections of the parameter files that name the node by its fully qualified name
    /// (`/ns/asebaros:`) or a wildcard are included (r2r leaves them out, see [`params_file`]);
    /// ROS-Thymio's `script` and `launch_model` are ignored by the configuration, saying so.
    pub fn parameter_overrides(&self) -> Result<Vec<(String, yaml_serde::Value)>, RosError> {
        let mut given = params::overrides(&self.node);
        let args: Vec<String> = std::env::args().collect();
        let fqn = self.node.fully_qualified_name().map_err(RosError::Init)?;
        given.extend(params_file::extra_overrides(
            &args,
            &self.options.node_name,
            &fqn,
        )?);
        // the RT controllers' (`controllers.<name>.<param>`) are the robots' driver nodes';
        // ROS-Thymio's driver parameters without use here (reaching the bridge through `/**:`)
        // are left for the configuration, which ignores them saying why (`schema::aliases`)
        given.retain(|(name, _)| !name.starts_with("controllers."));
        Ok(given)
    }

    /// Serves the effective configuration `effective` (nested YAML maps, e.g. the serialized bridge and driver
    /// parameters) as the node's parameters, each described (`describe_parameters`) as applied at run time or read
    /// at start (read-only) as `live` (the configuration schema's) says, creates the ROS interface and returns the
    /// running bridge; the layer's `reporter` gets the node's `/rosout` as one of its sinks.
    pub fn start(
        mut self,
        effective: &yaml_serde::Mapping,
        live: fn(&str) -> bool,
        engine: &mut Engine,
        reporter: &Reporter,
    ) -> Result<RosBridge, RosError> {
        // served by the NRT loop with the engine's verdict (see `param_server`)
        let params =
            BridgeParams::new(&mut self.node, effective, live).map_err(RosError::Interface)?;
        let base = self.node.namespace().map_err(RosError::Init)?;
        let drivers = DriverNodes::new(self.ctx.clone(), &base);
        let rosout = super::report::Rosout::new(&mut self.node).map_err(RosError::Interface)?;
        reporter.add_sink(rosout);
        let reporter = reporter.clone();
        let reader = nrt_engine::engine::ScriptReader::start(engine.doorbell())
            .map_err(|e| RosError::Spawn(e.to_string()))?;
        let aseba = AsebaInterface::new(&mut self.node, reporter.clone(), reader)
            .map_err(RosError::Interface)?;
        let timers = NrtHopTimers::default();
        // In the bridge node's namespace in effect: a node-specific `asebaros:__ns:=` remap
        // (which the hidden node's name does not match) moves its `cmd_vel` subscriptions too.
        let hot = HotNode::start(&self.options.node_name, &base)?;
        let thymio = ThymioInterface::new(
            &mut self.node,
            reporter.clone(),
            hot.shared().clone(),
            timers.cmd_vel_to_set_point.clone(),
        )
        .map_err(RosError::Interface)?;
        let outs = engine
            .take_odometry_groups()
            .ok_or_else(|| RosError::Spawn("the RT odometry ring is already taken".into()))?;
        let odom_pub = odom_pub::start(OdomPublisherConfig {
            outs,
            targets: thymio.odom_targets(),
            reporter: reporter.clone(),
            timers: timers.clone(),
            placement: engine.companion_placement(),
        })
        .map_err(|e| RosError::Spawn(e.to_string()))?;
        let control = Control::new(
            engine,
            hot.shared().clone(),
            thymio.odom_targets(),
            reporter.clone(),
        );
        let diagnostics = self
            .node
            .create_publisher(names::DIAGNOSTICS, QosProfile::default())
            .map_err(RosError::Interface)?;
        let node = SharedNode::new(self.node);
        let spinner = Spinner::start(node.clone(), engine.doorbell())
            .map_err(|e| RosError::Spawn(e.to_string()))?;
        Ok(RosBridge {
            spinner,
            hot,
            odom_pub,
            timers,
            node,
            options: self.options,
            params,
            drivers,
            aseba,
            thymio,
            ground_truth: None,
            calibration: CalibrationActions::new(reporter.clone()),
            goal_actions: GoalActionsRos2::new(reporter.clone()),
            reporter,
            control,
            diagnostics,
            last_diagnostics: None,
            rivals: RivalWatch::default(),
            clocks: Clocks::new().map_err(RosError::Init)?,
            wants_frames: WantsFrames::default(),
        })
    }
}

/// The running bridge (see the module documentation).
pub struct RosBridge {
    /// The spinner thread; first field, so that it stops and lets the node go before the rest is dropped.
    spinner: Spinner,
    /// The hot node's thread (`cmd_vel`); stopped before the node goes.
    hot: HotNode,
    /// The odometry publisher thread; stopped before the publishers go.
    odom_pub: OdomThread,
    /// The hops timed on the ROS side.
    timers: NrtHopTimers,
    node: std::sync::Arc<SharedNode>,
    reporter: Reporter,
    options: RosOptions,
    /// `asebaros`' parameter services.
    params: BridgeParams,
    /// The robots' `thymio_driver` nodes.
    drivers: DriverNodes,
    aseba: AsebaInterface,
    thymio: ThymioInterface,
    /// The robots' `sim/ground_truth` publishers, when the process runs a simulator
    /// ([`FrontEnd::ground_truth_sink`]).
    ground_truth: Option<GroundTruthTargets>,
    /// The robots' `calibrate_motors` actions.
    calibration: CalibrationActions,
    /// The robots' goal actions (`drive_distance`, `rotate_angle`, `navigate_to_position`).
    goal_actions: GoalActionsRos2,
    /// The switches, RT controllers' endpoints and joint space of the robots.
    control: Control,
    diagnostics: Publisher<DiagnosticArray>,
    last_diagnostics: Option<Instant>,
    /// Other drivers on our robots' names.
    rivals: RivalWatch,
    clocks: Clocks,
    /// Whether a subscriber wants the frames at once, counted now and then.
    wants_frames: WantsFrames,
}

impl FrontEnd for RosBridge {
    fn name(&self) -> &'static str {
        "ROS 2"
    }

    /// Serves the parameter services (the bridge's and the driver nodes'), the asebaros and Thymio requests and the
    /// calibration goals (never waits).
    fn serve(&mut self, engine: &mut Engine, iface: &mut Interface, now: Instant) {
        if iface.joints.due(now) {
            self.control
                .report_subscribers(self.name(), &mut iface.joints);
        }
        let shared = self.node.clone();
        let mut node = shared.access();
        // the bridge node's streams hold something only after a wait of its spinner
        let ros_work = shared.take_work();
        if ros_work {
            self.params.serve(engine, &self.reporter);
        }
        self.aseba.poll_ros(&mut node, engine, ros_work);
        self.thymio.poll_ros(engine, ros_work);
        // goals and cancels come through the bridge node's streams too
        let calibration = ros_work && self.calibration.serve(engine, &mut iface.calibration, now);
        let goals = ros_work
            && self
                .goal_actions
                .serve(engine, &mut iface.goal_actions, now);
        if calibration || goals {
            // r2r answers an accepted cancel at the start of its spinner's next wait
            shared.wake();
        }
        // a goal whose client is gone (the graph's word, not a stream's)
        self.goal_actions
            .watch_clients(&mut iface.goal_actions, now);
        self.drivers.serve(engine, &mut iface.controllers);
        if ros_work {
            // calls and messages only: the switch's, resets', lifecycles' and controllers'
            self.control.serve(engine, iface, now);
        }
    }

    fn on_engine_event(&mut self, engine: &mut Engine, iface: &mut Interface, event: &EngineEvent) {
        self.on_engine_events(engine, iface, std::slice::from_ref(event));
    }

    /// The node is taken at most once for all the events of an iteration, and only by an event that needs it (a
    /// robot coming or going, a script loaded): each taking wakes the spinner and waits for it to step aside,
    /// which costs a rebuild of the node's whole wait set.
    fn on_engine_events(
        &mut self,
        engine: &mut Engine,
        iface: &mut Interface,
        events: &[EngineEvent],
    ) {
        let shared = self.node.clone();
        let mut node = shared.access();
        for event in events {
            self.drivers
                .on_engine_event(engine, &mut iface.controllers, event, &self.reporter);
            self.on_event(&mut node, engine, iface, event);
            self.calibration
                .on_engine_event(&mut node, engine, &iface.calibration, event);
            self.goal_actions
                .on_engine_event(&mut node, engine, &iface.goal_actions, event);
        }
    }

    /// Publishes the switches' and controllers' outputs, `aseba/nodes`, the rivals' changes and `/diagnostics`
    /// when due.
    fn publish(&mut self, engine: &Engine, iface: &Interface, now: Instant) {
        let shared = self.node.clone();
        let mut node = shared.access();
        self.control.publish(iface);
        self.aseba.publish_nodes(engine);
        if self.rivals.due(now) {
            self.look_for_rivals(node.get());
        }
        let due = self
            .last_diagnostics
            .is_none_or(|t| now.duration_since(t) >= self.options.diagnostics_period);
        if due {
            self.last_diagnostics = Some(now);
            self.publish_diagnostics(engine, iface);
        }
    }

    /// Whether a subscriber to an Aseba event topic or to a robot's sensor or event topic wants the frames at once.
    fn wants_frames(&mut self, now: Instant) -> bool {
        let (aseba, thymio) = (&self.aseba, &self.thymio);
        self.wants_frames
            .get(now, || aseba.events_heard() || thymio.sensors_heard())
    }

    /// Whether ROS input is still served (the spinner thread runs). When it is not, stop: no
    /// more `cmd_vel` comes (the RT watchdog has stopped the robots) and no service answers.
    fn alive(&self) -> bool {
        self.spinner.is_running() && self.hot.is_running() && self.odom_pub.is_running()
    }

    /// Publishes `sim/ground_truth` of the driven robots from now on.
    fn ground_truth_sink(&mut self) -> Option<std::sync::Arc<dyn GroundTruthSink>> {
        let targets = self
            .ground_truth
            .get_or_insert_with(GroundTruthTargets::default);
        Some(std::sync::Arc::new(targets.clone()))
    }

    /// The hops timed on the ROS side so far (for `--report`).
    fn hop_times(&self) -> Option<RosHops> {
        Some(self.timers.summaries())
    }
}

impl RosBridge {
    fn publish_diagnostics(&mut self, engine: &Engine, iface: &Interface) {
        let (thymio, control) = (&self.thymio, &self.control);
        let robot_values = |id: handoff::NodeId| {
            let mut values: Vec<_> = thymio
                .stale_cmd_vel(id)
                .map(|n| diagnostics::kv(diagnostics::STALE_CMD_VEL, n))
                .into_iter()
                .collect();
            let robot = engine.robots().of_node(id).map(|s| s.robot);
            values.extend(control.diagnostics(&iface.switch, id, robot));
            values.extend(iface.lifecycle.diagnostics(id));
            values
        };
        let mut status = diagnostics::array_with(&self.options.node_name, engine, &robot_values);
        status.push(self.rivals.status(&self.options.node_name));
        status.push(hop_times::status(
            &self.options.node_name,
            engine.rt_stats(),
            &self.timers.summaries(),
        ));
        status.extend(nrt_interface::controller_budget::statuses(
            &self.options.node_name,
            &iface.switch,
            engine.rt_stats(),
        ));
        let array = diagnostics::to_ros(status, self.clocks.now());
        if let Err(e) = self.diagnostics.publish(&array) {
            self.reporter
                .warn(&format!("cannot publish /diagnostics: {e}"));
        }
    }

    /// Another publisher of a robot's `odom` is another driver on the same names (two drivers started with the
    /// same defaults): said loudly when it starts and when it ends, ERROR in `/diagnostics` meanwhile.
    fn look_for_rivals(&mut self, node: &r2r::Node) {
        let topics = self.thymio.odom_topics();
        self.rivals.keep_only(&topics);
        for topic in &topics {
            // rcl refuses only an invalid name (ours are checked when made) or a context being shut down
            let Ok(publishers) = node.get_publishers_info_by_topic(topic, false) else {
                continue;
            };
            let names: Vec<String> = publishers
                .iter()
                .map(|p| format!("{}/{}", p.node_namespace.trim_end_matches('/'), p.node_name))
                .collect();
            match self.rivals.observe(topic, 1, &names) {
                Some(c @ (Change::Started { .. } | Change::NameTaken { .. })) => {
                    self.reporter.error(&c.message())
                }
                Some(c) => self.reporter.info(&c.message()),
                None => {}
            }
        }
    }

    fn on_event(
        &mut self,
        node: &mut NodeAccess,
        engine: &Engine,
        iface: &Interface,
        event: &EngineEvent,
    ) {
        self.aseba.on_engine_event(node, engine, event);
        self.thymio.on_engine_event(node, engine, event);
        self.ground_truth_event(node, engine, event);
        let frames = match event {
            EngineEvent::RobotReady { node: id, .. } => self.thymio.frames(*id),
            _ => None,
        };
        self.control
            .on_engine_event(node, engine, iface, event, frames);
        match event {
            EngineEvent::RtExited(reason) => self
                .reporter
                .warn(&format!("the RT thread stopped ({reason:?})")),
            EngineEvent::LinkUp { target, kind, .. } => self
                .reporter
                .info(&format!("connected to target {target} ({kind:?})")),
            EngineEvent::LinkDown { target, .. } => {
                self.reporter.warn(&format!("lost target {target}"))
            }
            EngineEvent::NotDriven { message, .. } => self.reporter.warn(message),
            EngineEvent::RawMotorCapped { node, wheels, cap } => self
                .reporter
                .warn(&nrt_engine::engine::capped_message(*node, *wheels, *cap)),
            _ => {}
        }
    }

    fn ground_truth_event(&mut self, node: &mut NodeAccess, engine: &Engine, event: &EngineEvent) {
        let Some(targets) = &self.ground_truth else {
            return;
        };
        match event {
            EngineEvent::RobotReady { node: id, .. } => {
                let Some(frame) = self.thymio.frames(*id).map(|f| f.base.as_str()) else {
                    return;
                };
                let ns = nrt_interface::frames::robot_namespace(engine, *id);
                if let Err(e) = targets.add(node.get(), *id, &ns, frame) {
                    self.reporter
                        .warn(&format!("node {id}: no sim/ground_truth: {e}"));
                }
            }
            EngineEvent::RobotRemoved { node: id, .. } => targets.remove(node.get(), *id),
            _ => {}
        }
    }

    /// The r2r node, shared with the spinner thread (to add interfaces of other layers).
    pub fn node(&self) -> &SharedNode {
        &self.node
    }
}
