//! ROS-Thymio's ROS 1 interface of each robot the RT thread drives, in the robot node's namespace: `cmd_vel`
//! (geometry_msgs/Twist) straight to the RT set-point from the socket task that received it; `odom`, `/tf` and
//! `joint_states` from the odometry publisher thread ([`super::odom_pub`]); the sensor and state topics
//! ([`super::thymio_outputs`]: proximity and laser from the RT thread's samples, the rest from the script's
//! events; latched `robot_description` and `obstacle_stop`); the actuator topics ([`super::thymio_inputs`]:
//! LEDs, gestures, sounds, alarm, proximity communication, shutdown); the `is_ready` service (std_srvs/Empty);
//! the robots' sensor frames on the latched `/tf_static`.

use super::aseba::{Call, Inbox};
use super::cmd_vel::{self, CmdVelTarget};
use super::conv;
use super::odom_pub::{OdomRobot, OdomTargets, Ros1Out};
use super::thymio_inputs::{self, Inputs, INPUT_NAMES};
use super::thymio_outputs::Outputs;
use super::Ros1Error;
use handoff::{NodeId, ProximitySample, RobotId};
use nrt_engine::engine::{Engine, EngineEvent};
use nrt_engine::thymio::actuators::ScriptEvent;
use nrt_engine::thymio::events::RobotEvent;
use nrt_interface::actuators::{self, Alarm, RobotCommand};
use nrt_interface::cmd_vel::CmdVelGate;
use nrt_interface::driver_events::{self, DriverEvents};
use nrt_interface::frames::{self, Frames};
use nrt_interface::geometry::{self, Stamp};
use nrt_interface::hop_times::HopHistogram;
use nrt_interface::odometry::{self, OdomSettings, CMD_VEL_OUT};
use nrt_interface::report::Reporter;
use nrt_interface::tf::{self, StaticFrames};
use nrt_ros1_client::graph::{global, Graph, Task};
use nrt_ros1_client::net::{Publisher, ServiceServer};
use nrt_ros1_client::ros1_msgs::{std_srvs, tf2_msgs};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::Arc;
use std::time::Instant;

/// A robot's names besides its sensor and actuator topics.
const ROBOT_NAMES: [&str; 5] = ["cmd_vel", "odom", "joint_states", "is_ready", CMD_VEL_OUT];

/// Depth of the `cmd_vel` subscription (ROS-Thymio's rospy queue sizes are 1).
const DEPTH: usize = 1;
/// Queue of `odom` and `joint_states` toward each subscriber's socket: what does not fit is dropped (a
/// queue of 1 lost about half the samples when the robot's odometry events came in bursts over TCP).
const ODOM_QUEUE: usize = 100;

/// What a robot's interface is made from (taken from the engine by the NRT loop).
struct RobotPlan {
    id: NodeId,
    robot: RobotId,
    base: String,
    namespace: String,
    frames: Frames,
    settings: Option<OdomSettings>,
    max_rate: f64,
    /// `cmd_vel_stamped`.
    stamped: bool,
    /// Where its `cmd_vel` goes.
    cmd_vel: CmdVelGate,
    reporter: Reporter,
    /// Times the hop `cmd_vel` taken → set-point stored.
    timer: HopHistogram,
    /// The URDF to latch on `robot_description` (`publish_model`).
    urdf: Option<String>,
    /// Where the actuator topics hand their commands.
    inbox: Inbox,
    /// Whether its `~/cmd_vel_out` is published (`publish_limited_velocity`, live).
    limited_velocity: Arc<AtomicBool>,
}

/// A robot's interface made by the registrar thread.
struct Built {
    robot: Robot,
    odom: Option<OdomRobot>,
}

/// Registers a robot's interface (on the registrar thread).
fn robot_interface(g: &Graph, p: RobotPlan) -> Result<Built, Ros1Error> {
    let t = |leaf: &str| global(&[&p.base, &p.namespace, leaf]);
    let (id, robot) = (p.id, p.robot);
    let stale = p.cmd_vel.stale_count();
    let target = CmdVelTarget {
        id,
        gate: p.cmd_vel,
        reporter: p.reporter,
        timer: p.timer,
    };
    let cmd_vel = cmd_vel::subscribe(g, &t("cmd_vel"), DEPTH, p.stamped, target)?;
    let is_ready =
        g.serve::<std_srvs::Empty>(&t("is_ready"), |_| Ok(std_srvs::EmptyResponse {}))?;
    // the NRT loop applies it (`serve_command`) and the latched `emergency_stop` topic says when it did
    let inbox = p.inbox.clone();
    let emergency_stop = g.serve::<std_srvs::SetBool>(&t("emergency_stop"), move |req| {
        let call = Call::Robot {
            node: id,
            topic: "emergency_stop",
            command: RobotCommand::EmergencyStop(req.data),
        };
        Ok(match inbox.send(call) {
            Ok(()) => std_srvs::SetBoolResponse {
                success: true,
                message: actuators::emergency_stop_text(req.data).to_owned(),
            },
            Err(_) => std_srvs::SetBoolResponse {
                success: false,
                message: "emergency stop not applied: the driver is stopping".to_owned(),
            },
        })
    })?;
    // without the driver's model, the wheels on /tf are the user's robot_state_publisher's
    let wheel_tf = p.urdf.is_some();
    let out = Outputs::advertise(g, &t, p.urdf)?;
    let inputs = thymio_inputs::subscribe(g, &t, id, &p.inbox)?;
    let odom = match &p.settings {
        Some(settings) => Some(OdomRobot {
            node: id,
            out: Ros1Out {
                odom: g.advertise(&t("odom"), ODOM_QUEUE, false)?,
                joints: g.advertise(&t("joint_states"), ODOM_QUEUE, false)?,
                cmd_vel_out: g.advertise(&t(CMD_VEL_OUT), ODOM_QUEUE, false)?,
                seq: 0,
                cmd_vel_out_seq: 0,
            },
            frames: p.frames.clone(),
            settings: settings.clone(),
            max_rate: p.max_rate,
            limited_velocity: p.limited_velocity.clone(),
            wheel_tf,
        }),
        None => None,
    };
    Ok(Built {
        robot: Robot {
            node: id,
            robot,
            namespace: p.namespace,
            frames: p.frames,
            out,
            _inputs: inputs,
            _is_ready: is_ready,
            _emergency_stop: emergency_stop,
            _cmd_vel: cmd_vel,
            stale,
            limited_velocity: p.limited_velocity,
            settings: p.settings,
        },
        odom,
    })
}

struct Robot {
    node: NodeId,
    robot: RobotId,
    /// Its namespace (its topics and services are under it).
    namespace: String,
    frames: Frames,
    out: Outputs,
    /// Its actuator subscriptions.
    _inputs: Inputs,
    _is_ready: ServiceServer,
    /// `emergency_stop` (std_srvs/SetBool).
    _emergency_stop: ServiceServer,
    /// Aborted on drop: no more set-points from ROS 1.
    _cmd_vel: Task,
    /// Stamped `cmd_vel` ignored as older than `cmd_vel_timeout`.
    stale: Arc<AtomicU64>,
    /// Whether the odometry publisher thread publishes its `~/cmd_vel_out` (followed live by
    /// [`ThymioInterface::poll_built`]).
    limited_velocity: Arc<AtomicBool>,
    /// The odometry settings its odometry publisher has (to pass on live changes).
    settings: Option<OdomSettings>,
}

/// The robots' interfaces.
pub struct ThymioInterface {
    /// The lines for ROS users.
    reporter: Reporter,
    graph: Graph,
    base: String,
    odom: OdomTargets,
    robots: BTreeMap<NodeId, Robot>,
    /// Robots whose interface is being registered.
    building: BTreeSet<NodeId>,
    built: Receiver<Built>,
    built_tx: Sender<Built>,
    /// Where the robots' actuator topics hand their commands.
    inbox: Inbox,
    /// Latched `/tf_static`: one message with every robot's sensor frames (the last message wins).
    tf_static: Publisher<tf2_msgs::TFMessage>,
    static_frames: StaticFrames,
    /// The robots' alarms.
    alarms: BTreeMap<NodeId, Alarm>,
    /// Times the hop `cmd_vel` taken → set-point stored.
    cmd_vel_timer: HopHistogram,
}

impl ThymioInterface {
    /// Whether a subscriber is connected to a robot's sensor or event topic: the frames and proximity readings
    /// that feed them are then wanted at once.
    pub fn sensors_heard(&self) -> bool {
        self.robots.values().any(|r| r.out.sensors_heard())
    }

    /// No robot yet; `/tf` and `/tf_static` are advertised now; the actuator topics will hand their commands to
    /// `inbox`; what users should read goes to `reporter`.
    /// `cmd_vel_timer` times the hop `cmd_vel` taken → set-point stored.
    pub fn new(
        graph: &Graph,
        base: &str,
        inbox: Inbox,
        cmd_vel_timer: HopHistogram,
        reporter: Reporter,
    ) -> Result<ThymioInterface, Ros1Error> {
        let (built_tx, built) = channel();
        Ok(ThymioInterface {
            reporter,
            odom: OdomTargets::new(graph.advertise("/tf", 100, false)?),
            tf_static: graph.advertise("/tf_static", 1, true)?,
            static_frames: StaticFrames::default(),
            alarms: BTreeMap::new(),
            cmd_vel_timer,
            inbox,
            graph: graph.clone(),
            base: base.to_owned(),
            robots: BTreeMap::new(),
            building: BTreeSet::new(),
            built,
            built_tx,
        })
    }

    /// Every driven robot's `odom`, as a global name (remapped as registered).
    pub fn odom_topics(&self) -> Vec<String> {
        self.robots
            .values()
            .map(|r| {
                nrt_ros1_client::remap::apply(&global(&[&self.base, &r.namespace, "odom"]))
                    .into_owned()
            })
            .collect()
    }

    /// How many stamped `cmd_vel` of robot `id` were ignored as older than `cmd_vel_timeout` (`None`: not a robot
    /// of this interface).
    pub fn stale_cmd_vel(&self, id: NodeId) -> Option<u64> {
        self.robots
            .get(&id)
            .map(|r| r.stale.load(Ordering::Relaxed))
    }

    /// The robots whose odometry the publisher thread publishes.
    pub fn odom_targets(&self) -> OdomTargets {
        self.odom.clone()
    }

    /// Reacts to the engine as the layer routes it (`nrt_interface::driver_events`): robots coming and going,
    /// proximity, script events.
    pub fn on_engine_event(&mut self, engine: &Engine, event: &EngineEvent) {
        driver_events::on_engine_event(self, engine, event);
    }

    /// Has the registrar thread make the interface of robot `robot` (node `id`).
    fn build_robot(&mut self, engine: &Engine, id: NodeId, robot: RobotId) {
        if !self.building.insert(id) {
            return;
        }
        let params = engine.robot_params(id);
        let namespace = frames::robot_namespace(engine, id);
        let frames = Frames::of_robot(engine, id, &self.base);
        let settings = OdomSettings::of(engine, id);
        let urdf = frames::robot_description(engine, id, &frames);
        let plan = RobotPlan {
            id,
            robot,
            base: self.base.clone(),
            namespace,
            frames,
            settings,
            max_rate: params.odom_max_rate,
            stamped: params.cmd_vel_stamped,
            cmd_vel: CmdVelGate::new(engine.live_params(), robot, id, params.cmd_vel_timeout),
            reporter: self.reporter.clone(),
            timer: self.cmd_vel_timer.clone(),
            urdf,
            inbox: self.inbox.clone(),
            limited_velocity: Arc::new(AtomicBool::new(odometry::publishes_limited_velocity(
                engine, id,
            ))),
        };
        let (tx, reporter) = (self.built_tx.clone(), self.reporter.clone());
        self.graph.submit(move |g| match robot_interface(g, plan) {
            Ok(built) => {
                let _ = tx.send(built);
                g.bell.ring();
            }
            Err(e) => reporter.error(&format!("Thymio node {id}: no driver interface: {e}")),
        });
    }

    /// Takes the robot interfaces the registrar thread made into use (if their robot is still there), and follows
    /// each robot's `publish_limited_velocity` and odometry settings (calibration, covariances, `enable_odom_tf`)
    /// live.
    pub fn poll_built(&mut self, engine: &Engine) {
        for r in self.robots.values_mut() {
            r.limited_velocity.store(
                odometry::publishes_limited_velocity(engine, r.node),
                Ordering::Relaxed,
            );
            let settings = OdomSettings::of(engine, r.node);
            if settings.is_some() && r.settings != settings {
                if let Some(s) = &settings {
                    self.odom.set_settings(r.robot, s);
                }
                r.settings = settings;
            }
        }
        while let Ok(b) = self.built.try_recv() {
            let id = b.robot.node;
            self.building.remove(&id);
            let current = engine.robots().of_node(id).map(|s| s.robot) == Some(b.robot.robot);
            if !current {
                self.forget(&b.robot.namespace);
                continue;
            }
            if let Some(odom) = b.odom {
                self.odom.insert(b.robot.robot, odom);
            }
            if engine.robot_params(id).publish_model {
                let own = tf::static_transforms(geometry::now(), &b.robot.frames);
                self.replace_static_frames(id, &b.robot.frames.prefix, own);
            }
            self.robots.insert(id, b.robot);
            // Latched, as on ROS 2: the holds in effect now (an emergency stop engaged through the other front end,
            // or a lift, before this interface existed; advertise latched false and their events found no robot)
            self.emergency_stop(id, engine.emergency_stop_holds(id));
            self.picked_up(id, engine.picked_up_holds(id));
            self.reporter
                .info(&format!("Thymio node {id}: driver interface ready"));
        }
    }

    /// Forgets the registrations of a robot in `namespace` (its interface was dropped).
    fn forget(&self, namespace: &str) {
        let t = |leaf: &str| global(&[&self.base, namespace, leaf]);
        let leaves = ROBOT_NAMES
            .iter()
            .chain(&INPUT_NAMES)
            .chain(&[thymio_inputs::SHUTDOWN]);
        for name in leaves.map(|l| t(l)).chain(Outputs::names(&t)) {
            self.graph.forget(&name);
        }
    }

    /// Puts `own` in place of the frames under `prefix` in the one `/tf_static` message that holds every robot's
    /// frames, and republishes it if it changed.
    fn replace_static_frames(&mut self, id: NodeId, prefix: &str, own: Vec<geometry::Transform>) {
        let Some(all) = self.static_frames.replace(prefix, own) else {
            return;
        };
        let msg = tf2_msgs::TFMessage {
            transforms: all.iter().map(conv::transform).collect(),
        };
        if let Err(e) = self.graph.publish(&self.tf_static, &msg) {
            self.reporter
                .warn(&format!("ROS 1: node {id}: cannot publish /tf_static: {e}"));
        }
    }

    fn publish_proximity(&self, engine: &Engine, id: NodeId, s: &ProximitySample) {
        let (Some(r), Some(slot)) = (self.robots.get(&id), engine.robots().of_node(id)) else {
            return;
        };
        let stamp = geometry::stamp(s.t_ns);
        let ranges = engine.robot_params(id).ranges;
        let result = r.out.publish_proximity(
            &self.graph,
            &s.values,
            &slot.calibration,
            ranges,
            stamp,
            &r.frames,
        );
        if let Err(e) = result {
            self.reporter
                .warn(&format!("ROS 1: node {id}: cannot publish proximity: {e}"));
        }
    }

    /// Sends what an actuator topic of robot `node` asked (refused messages are reported with their reason).
    pub fn serve_command(
        &mut self,
        engine: &mut Engine,
        node: NodeId,
        topic: &str,
        command: RobotCommand,
    ) {
        if !self.robots.contains_key(&node) {
            return;
        }
        match command {
            RobotCommand::Events(Ok(events)) => emit(engine, &self.reporter, node, topic, &events),
            RobotCommand::Events(Err(e)) => {
                self.reporter.error(&actuators::refused(node, topic, &e))
            }
            RobotCommand::Alarm(on) => self.alarms.entry(node).or_default().set(on, Instant::now()),
            RobotCommand::EmergencyStop(on) => {
                if let Err(e) = engine.set_emergency_stop(node, on) {
                    self.reporter
                        .error(&format!("ROS 1: node {node}: emergency stop: {e}"));
                }
            }
        }
    }

    /// Sounds the alarms that are due (called at every iteration of the NRT loop, which wakes at least every
    /// 50 ms).
    pub fn tick(&mut self, engine: &mut Engine, now: Instant) {
        for (node, alarm) in self.alarms.iter_mut() {
            match alarm.due(now) {
                Some(Ok(ev)) => emit(engine, &self.reporter, *node, "alarm", &[ev]),
                Some(Err(e)) => self.reporter.error(&actuators::refused(*node, "alarm", &e)),
                None => {}
            }
        }
    }

    fn publish_robot_event(
        &self,
        engine: &Engine,
        id: NodeId,
        event: u16,
        decoded: RobotEvent,
        stamp: Stamp,
    ) {
        let Some(r) = self.robots.get(&id) else {
            return;
        };
        let params = engine.robot_params(id);
        let result = r.out.publish_event(
            &self.graph,
            decoded,
            stamp,
            &r.frames,
            params.ground.threshold,
            params.ranges,
        );
        if let Err(e) = result {
            self.reporter
                .warn(&format!("node {id}: cannot publish event {event}: {e}"));
        }
    }
}

impl DriverEvents for ThymioInterface {
    fn has_robot(&self, id: NodeId) -> bool {
        self.robots.contains_key(&id)
    }

    /// Has the registrar thread make the interface (reported when it is built).
    fn add_robot(&mut self, engine: &Engine, id: NodeId, robot: RobotId) {
        self.build_robot(engine, id, robot)
    }

    fn remove_robot(&mut self, id: NodeId) {
        // dropping its publishers, service and tasks unregisters them
        if let Some(r) = self.robots.remove(&id) {
            self.odom.remove(r.robot);
            self.alarms.remove(&id);
            self.forget(&r.namespace);
            self.replace_static_frames(id, &r.frames.prefix, Vec::new());
        }
    }

    fn obstacle_stop(&mut self, id: NodeId, engaged: bool) {
        if let Some(r) = self.robots.get(&id) {
            if let Err(e) = r.out.publish_obstacle_stop(&self.graph, engaged) {
                self.reporter.warn(&format!(
                    "ROS 1: node {id}: cannot publish obstacle_stop: {e}"
                ));
            }
        }
    }

    fn cliff_stop(&mut self, id: NodeId, engaged: bool) {
        if let Some(r) = self.robots.get(&id) {
            if let Err(e) = r.out.publish_cliff_stop(&self.graph, engaged) {
                self.reporter
                    .warn(&format!("ROS 1: node {id}: cannot publish cliff_stop: {e}"));
            }
        }
    }

    fn battery(
        &mut self,
        _engine: &Engine,
        id: NodeId,
        state: &nrt_interface::battery::BatteryState,
    ) {
        if let Some(r) = self.robots.get(&id) {
            let stamp = geometry::now();
            if let Err(e) = r
                .out
                .publish_battery(&self.graph, stamp, &r.frames.base, state)
            {
                self.reporter.warn(&format!(
                    "ROS 1: node {id}: cannot publish battery_state: {e}"
                ));
            }
        }
    }

    fn picked_up(&mut self, id: NodeId, engaged: bool) {
        if let Some(r) = self.robots.get(&id) {
            if let Err(e) = r.out.publish_picked_up(&self.graph, engaged) {
                self.reporter
                    .warn(&format!("ROS 1: node {id}: cannot publish picked_up: {e}"));
            }
        }
    }

    fn emergency_stop(&mut self, id: NodeId, engaged: bool) {
        if let Some(r) = self.robots.get(&id) {
            if let Err(e) = r.out.publish_emergency_stop(&self.graph, engaged) {
                self.reporter.warn(&format!(
                    "ROS 1: node {id}: cannot publish emergency_stop: {e}"
                ));
            }
        }
    }

    fn proximity(&mut self, engine: &Engine, id: NodeId, sample: &ProximitySample) {
        self.publish_proximity(engine, id, sample)
    }

    fn robot_event(
        &mut self,
        engine: &Engine,
        id: NodeId,
        event: u16,
        decoded: RobotEvent,
        stamp: Stamp,
    ) {
        self.publish_robot_event(engine, id, event, decoded, stamp)
    }
}

/// Sends script events to robot `node`, reporting those the engine refuses.
fn emit(
    engine: &mut Engine,
    reporter: &Reporter,
    node: NodeId,
    topic: &str,
    events: &[ScriptEvent],
) {
    for ev in events {
        if let Err(e) = engine.emit_script_event(node, ev.name, &ev.args) {
            reporter.error(&actuators::not_sent(node, topic, ev.name, e));
        }
    }
}
