//! The ROS 1 front end's NRT side: the node made before the engine (its parameters are part of the
//! configuration), then the running bridge, one of the NRT loop's front ends ([`nrt_interface::FrontEnd`]), alone or
//! beside the ROS 2 bridge.

use super::aseba::{AsebaInterface, Call};
use super::calibration::CalibrationActions;
use super::control::ControlInterface;
use super::conv;
use super::goal_actions::GoalActionsRos1;
use super::ground_truth::Ros1GroundTruth;
use super::joints::Ros1Joints;
use super::odom_pub;
use super::reconfigure::Reconfigure;
use super::rivals::RivalLookout;
use super::rosout::Rosout;
use super::thymio::ThymioInterface;
use super::{params, Ros1Error, Ros1Options};
use handoff::{NodeId, RosHops};
use nrt_engine::diagnostics;
use nrt_engine::engine::{Engine, EngineEvent};
use nrt_engine::rivals::{Change, RivalWatch};
use nrt_interface::front_end::WantsFrames;
use nrt_interface::ground_truth::GroundTruthSink;
use nrt_interface::hop_times::{self, NrtHopTimers};
use nrt_interface::joints::BAD_JOINT;
use nrt_interface::odom_thread::OdomThread;
use nrt_interface::report::Reporter;
use nrt_interface::{FrontEnd, Interface};
use nrt_ros1_client::graph::{global, Graph};
use nrt_ros1_client::net::Publisher;
use nrt_ros1_client::ros1_msgs::diagnostic_msgs::DiagnosticArray;
use nrt_ros1_client::watch::MasterWatch;
use std::sync::mpsc::{channel, Receiver};
use std::sync::Arc;
use std::time::{Duration, Instant};
use yaml_serde::Value;

/// Period of `/diagnostics` (asebaros' ROS 1 node updates its diagnostics from its 1 s ping timer).
pub const DIAGNOSTICS_PERIOD: Duration = Duration::from_secs(1);

/// The node on the ROS 1 graph, before the engine exists.
pub struct Ros1Node {
    graph: Graph,
    options: Ros1Options,
}

impl Ros1Node {
    /// Registers the node `options.node_name` in `options.namespace` with the master `options.master_uri`.
    pub fn new(options: Ros1Options) -> Result<Ros1Node, Ros1Error> {
        options.validate()?;
        let name = global(&[&options.namespace, &options.node_name]);
        let remaps =
            nrt_ros1_client::remap::Remaps::new(&options.remaps, &options.namespace, &name)?;
        nrt_ros1_client::remap::install(remaps);
        let graph = Graph::start(&options.master_uri, &name)?;
        Ok(Ros1Node { graph, options })
    }

    /// The node's global name.
    pub fn name(&self) -> &str {
        &self.graph.name
    }

    /// The parameters on the parameter server, as `(dotted name, value)` configuration entries: the node's private
    /// tree (`/<ns>/asebaros/…`), then ROS-Thymio's driver node's (`/<ns>/thymio_driver/…`), which wins; ROS-Thymio's
    /// parameters without use here (`script`, `launch_model`) are ignored by the configuration, saying so.
    pub fn parameter_overrides(&self) -> Result<Vec<(String, Value)>, Ros1Error> {
        let mut out = Vec::new();
        for tree in [
            self.graph.name.clone(),
            global(&[&self.options.namespace, "thymio_driver"]),
        ] {
            let Some(value) = self
                .graph
                .master
                .get_param(&tree)
                .map_err(|e| Ros1Error::Params(tree.clone(), e.into()))?
            else {
                continue;
            };
            let flat = params::flatten("", &value)
                .map_err(|e| Ros1Error::Params(tree.clone(), e.into()))?;
            out.extend(flat);
        }
        Ok(out)
    }

    /// Creates the ROS 1 interface on `engine` (taking one of its odometry rings) and starts the odometry
    /// publisher and master watcher threads; `reporter`'s lines go to `/rosout` too from now on.
    pub fn start(
        mut self,
        engine: &mut Engine,
        reporter: &Reporter,
    ) -> Result<Ros1Bridge, Ros1Error> {
        let doorbell = engine.doorbell();
        self.graph
            .set_bell(nrt_ros1_client::Bell::new(move || doorbell.ring()));
        reporter.add_sink(Rosout::advertise(&self.graph)?);
        let (inbox, calls) = channel();
        let base = self.options.namespace.clone();
        let aseba = AsebaInterface::new(&self.graph, &base, inbox.clone(), reporter.clone())?;
        let timers = NrtHopTimers::default();
        let thymio = ThymioInterface::new(
            &self.graph,
            &base,
            inbox,
            timers.cmd_vel_to_set_point.clone(),
            reporter.clone(),
        )?;
        let joints = Ros1Joints::new(&self.graph, &base);
        let control = ControlInterface::new(&self.graph, &base);
        let mut reconfigure = Reconfigure::new(&self.graph, &base);
        reconfigure.add_bridge(engine, &self.options.node_name);
        let outs = engine
            .take_odometry_groups()
            .ok_or(Ros1Error::OdometryRing)?;
        let odom_pub = odom_pub::start(
            outs,
            thymio.odom_targets(),
            joints.targets(),
            self.graph.clone(),
            timers.clone(),
            engine.companion_placement(),
        )
        .map_err(|e| Ros1Error::Thread("odometry publisher", e))?;
        odom_pub
            .placed()
            .report(reporter, "odometry publisher thread");
        let diagnostics = self.graph.advertise("/diagnostics", 10, false)?;
        let watch = MasterWatch::start(
            self.graph.master.clone(),
            self.graph.caller_api.clone(),
            self.graph.registry.clone(),
        )
        .map_err(|e| Ros1Error::Thread("master watcher", e))?;
        let lookout = RivalLookout::start(self.graph.master.clone(), self.graph.caller_api.clone())
            .map_err(|e| Ros1Error::Thread("rival lookout", e))?;
        let calibration = CalibrationActions::new(&self.graph, &base, reporter.clone());
        let goal_actions = GoalActionsRos1::new(&self.graph, &base, reporter.clone());
        Ok(Ros1Bridge {
            calibration,
            goal_actions,
            reporter: reporter.clone(),
            lookout,
            rivals: RivalWatch::default(),
            prefix: self.options.node_name.clone(),
            diagnostics,
            last_diagnostics: None,
            watch,
            odom_pub,
            aseba,
            thymio,
            joints,
            ground_truth: None,
            timers,
            base,
            control,
            reconfigure,
            calls,
            graph: self.graph,
            wants_frames: WantsFrames::default(),
        })
    }
}

/// The running ROS 1 front end.
pub struct Ros1Bridge {
    watch: MasterWatch,
    /// Asks the master about other drivers on our names.
    lookout: RivalLookout,
    /// Other drivers on our names.
    rivals: RivalWatch,
    odom_pub: OdomThread,
    aseba: AsebaInterface,
    thymio: ThymioInterface,
    /// The robots' joint space.
    joints: Ros1Joints,
    /// The robots' `sim/ground_truth`, when the process runs a simulator ([`FrontEnd::ground_truth_sink`]).
    ground_truth: Option<Ros1GroundTruth>,
    /// The hops timed on this front end.
    timers: NrtHopTimers,
    /// The node's namespace.
    base: String,
    /// The switches and the RT controllers' endpoints.
    control: ControlInterface,
    /// The live parameters (dynamic_reconfigure).
    reconfigure: Reconfigure,
    calls: Receiver<Call>,
    graph: Graph,
    /// Prefix of the status names (the node's name, as diagnostic_updater).
    prefix: String,
    diagnostics: Publisher<DiagnosticArray>,
    last_diagnostics: Option<Instant>,
    /// The lines for ROS users (the console and every front end's `/rosout`).
    reporter: Reporter,
    /// The robots' `calibrate_motors` actionlib servers.
    calibration: CalibrationActions,
    /// The robots' goal actions' actionlib servers (`drive_distance`, `rotate_angle`, `navigate_to_position`).
    goal_actions: GoalActionsRos1,
    /// Whether a subscriber wants the frames at once, counted now and then.
    wants_frames: WantsFrames,
}

impl FrontEnd for Ros1Bridge {
    fn name(&self) -> &'static str {
        "ROS 1"
    }

    /// Takes into use the interfaces registered since the last call, and serves the requests that came from
    /// ROS 1 (never waits).
    fn serve(&mut self, engine: &mut Engine, iface: &mut Interface, now: Instant) {
        self.aseba.poll_built(engine);
        self.thymio.poll_built(engine);
        self.joints.poll_built(engine);
        if iface.joints.due(now) {
            self.joints
                .report_subscribers(self.name(), &mut iface.joints);
        }
        while let Ok(call) = self.calls.try_recv() {
            match call {
                Call::Robot {
                    node,
                    topic,
                    command,
                } => self.thymio.serve_command(engine, node, topic, command),
                call => self.aseba.serve(engine, call),
            }
        }
        self.thymio.tick(engine, now);
        self.control.serve(engine, iface, now);
        self.reconfigure
            .serve(engine, Some(&mut iface.controllers), &iface.reporter, now);
        self.calibration.serve(engine, &mut iface.calibration, now);
        self.goal_actions
            .serve(engine, &mut iface.goal_actions, now);
    }

    /// Reacts to one engine event (robots and nodes coming and going, events, variables, proximity).
    fn on_engine_event(&mut self, engine: &mut Engine, iface: &mut Interface, event: &EngineEvent) {
        self.aseba.on_engine_event(engine, event);
        self.thymio.on_engine_event(engine, event);
        self.joints.on_engine_event(engine, event);
        if let Some(g) = &self.ground_truth {
            g.on_engine_event(engine, event);
        }
        self.control.on_engine_event(engine, iface, event);
        self.reconfigure
            .on_engine_event(engine, Some(&iface.controllers), event);
        self.calibration
            .on_engine_event(engine, &iface.calibration, event);
        self.goal_actions
            .on_engine_event(engine, &iface.goal_actions, event);
    }

    /// Publishes what changed (`aseba/nodes`, the robots' owners, the controllers' outputs), and `/diagnostics`
    /// when due.
    fn publish(&mut self, engine: &Engine, iface: &Interface, now: Instant) {
        self.aseba.publish_nodes(engine);
        self.control.publish(iface);
        self.look_for_rivals();
        self.calibration.publish(now);
        self.goal_actions.publish(now);
        if self
            .last_diagnostics
            .is_none_or(|t| now.duration_since(t) >= DIAGNOSTICS_PERIOD)
        {
            self.last_diagnostics = Some(now);
            let (thymio, joints) = (&self.thymio, &self.joints);
            let robot_values = |id: NodeId| {
                let mut values = Vec::new();
                if let Some(s) = engine.robots().of_node(id) {
                    values.extend(iface.switch.diagnostics(s.robot));
                }
                values.extend(iface.lifecycle.diagnostics(id));
                if let Some(n) = thymio.stale_cmd_vel(id) {
                    values.push(diagnostics::kv(diagnostics::STALE_CMD_VEL, n));
                }
                if let Some(n) = joints.bad_commands(id) {
                    values.push(diagnostics::kv(BAD_JOINT, n));
                }
                values
            };
            let mut status = diagnostics::array_with(&self.prefix, engine, &robot_values);
            status.push(self.rivals.status(&self.prefix));
            status.push(hop_times::status(
                &self.prefix,
                engine.rt_stats(),
                &self.timers.summaries(),
            ));
            status.extend(nrt_interface::controller_budget::statuses(
                &self.prefix,
                &iface.switch,
                engine.rt_stats(),
            ));
            let array = conv::diagnostics(status, conv::now());
            if let Err(e) = self.graph.publish(&self.diagnostics, &array) {
                self.reporter
                    .warn(&format!("ROS 1: cannot publish /diagnostics: {e}"));
            }
        }
    }

    /// Whether a subscriber to an Aseba event topic or to a robot's sensor or event topic wants the frames at once.
    fn wants_frames(&mut self, now: Instant) -> bool {
        let (aseba, thymio) = (&self.aseba, &self.thymio);
        self.wants_frames
            .get(now, || aseba.events_heard() || thymio.sensors_heard())
    }

    /// Whether ROS 1 is still served (the node, the odometry publisher and the master watcher run).
    fn alive(&self) -> bool {
        self.graph.is_ok() && self.odom_pub.is_running() && self.watch.is_running()
    }

    /// Publishes `sim/ground_truth` of the driven robots from now on.
    fn ground_truth_sink(&mut self) -> Option<Arc<dyn GroundTruthSink>> {
        let (graph, base) = (&self.graph, &self.base);
        let g = self
            .ground_truth
            .get_or_insert_with(|| Ros1GroundTruth::new(graph, base));
        Some(Arc::new(g.clone()))
    }

    /// The hops timed on this front end so far (for `--report`).
    fn hop_times(&self) -> Option<RosHops> {
        Some(self.timers.summaries())
    }

    fn summary(&self) -> Option<String> {
        let (published, registrations) = self.counters();
        Some(format!(
            "ROS 1: {published} odometry samples published, registered again with a new master {registrations} \
             time(s)"
        ))
    }
}

impl Ros1Bridge {
    /// Another publisher of a robot's `odom`, or another node holding our name, is another driver on the same
    /// names: said loudly when it starts and ends, ERROR in `/diagnostics` meanwhile.
    fn look_for_rivals(&mut self) {
        let Some(seen) = self.lookout.latest() else {
            return;
        };
        let mut changes = Vec::new();
        changes.extend(
            self.rivals
                .observe_name(&self.graph.name, seen.name_elsewhere.as_deref()),
        );
        let topics = self.thymio.odom_topics();
        self.rivals.keep_only(&topics);
        for topic in &topics {
            // ours is one of them (the master lists a node once per topic)
            let publishers = seen.publishers.get(topic).cloned().unwrap_or_default();
            changes.extend(self.rivals.observe(topic, 1, &publishers));
        }
        for c in changes {
            match c {
                Change::Started { .. } | Change::NameTaken { .. } => {
                    self.reporter.error(&c.message())
                }
                _ => self.reporter.info(&c.message()),
            }
        }
    }

    /// The owner names of the switch (`ros`, `joint`, the RT controllers), named in the joint states' `owner`.
    pub fn set_owner_names(&mut self, names: handoff::OwnerNames) {
        self.joints.set_owner_names(names);
    }

    /// Odometry samples published so far, and times everything was registered again with a new master.
    pub fn counters(&self) -> (u64, u64) {
        (self.odom_pub.published(), self.watch.registrations())
    }
}
