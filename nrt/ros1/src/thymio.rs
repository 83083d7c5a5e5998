//! ROS-Thymio's ROS 1 interface of each robot the RT thread drives, in the robot node's namespace: `cmd_vel`
//! (geometry_msgs/Twist) straight to the RT set-point from the socket task that received it; `odom`, `/tf` and
//! `joint_states` from the odometry publisher thread ([`super::odom_pub`]); the sensor and state topics
//! ([`super::thymio_outputs`]: proximity and laser from the RT thread's samples, the rest from the script's
//! events; latched `robot_description` and `obstacle_stop`); the actuator topics ([`super::thymio_inputs`]:
//! LEDs, gestures, sounds, alarm, proximity communication, shutdown); the `is_ready` service (std_srvs/Empty);
//! the robots' sensor frames on the latched `/tf_static`.

use super::cmd_vel::{self, CmdVelTarget};
use super::conv::{self, Frames};
use super::graph::{global, Graph, Inbox, Task};
use super::net::{Publisher, ServiceServer};
use super::odom_pub::{OdomRobot, OdomTargets};
use super::ros1_msgs::{geometry_msgs as gm, std_srvs, tf2_msgs};
use super::thymio_inputs::{self, Inputs, RobotCommand, INPUT_NAMES};
use super::thymio_outputs::Outputs;
use super::Ros1Error;
use msgs::handoff::NrtLiveParams;
use msgs::handoff::{NodeId, ProximitySample, RobotId};
use nrt_engine::engine::{Engine, EngineEvent};
use nrt_engine::network::NetworkEvent;
use nrt_engine::thymio::actuators::{self, ScriptEvent};
use nrt_engine::thymio::calibration::Calibration;
use nrt_engine::thymio::events::RobotEvent;
use nrt_engine::thymio::model;
use nrt_interface::cmd_vel::StaleFilter;
use nrt_interface::hop_times::HopHistogram;
use nrt_interface::report::Reporter;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A robot's names besides its sensor and actuator topics.
const ROBOT_NAMES: [&str; 4] = ["cmd_vel", "odom", "joint_states", "is_ready"];

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
    calibration: Option<Calibration>,
    max_rate: f64,
    live: NrtLiveParams,
    /// `cmd_vel_stamped`.
    stamped: bool,
    /// The stale-stamp rule of its `cmd_vel`.
    filter: StaleFilter,
    /// Times the hop `cmd_vel` taken → set-point stored.
    timer: HopHistogram,
    /// The URDF to latch on `robot_description` (`publish_model`).
    urdf: Option<String>,
    /// Where the actuator topics hand their commands.
    inbox: Inbox,
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
    let stale = p.filter.stale.clone();
    let target = CmdVelTarget {
        live: p.live,
        robot,
        id,
        filter: p.filter,
        timer: p.timer,
    };
    let cmd_vel = cmd_vel::subscribe(g, &t("cmd_vel"), DEPTH, p.stamped, target)?;
    let is_ready =
        g.serve::<std_srvs::Empty>(&t("is_ready"), |_| Ok(std_srvs::EmptyResponse {}))?;
    let out = Outputs::advertise(g, &t, p.urdf)?;
    let inputs = thymio_inputs::subscribe(g, &t, id, &p.inbox)?;
    let odom = match p.calibration {
        Some(calibration) => Some(OdomRobot {
            node: id,
            odom: g.advertise(&t("odom"), ODOM_QUEUE, false)?,
            joints: g.advertise(&t("joint_states"), ODOM_QUEUE, false)?,
            frames: p.frames.clone(),
            calibration,
            max_rate: p.max_rate,
            last: None,
            seq: 0,
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
            _cmd_vel: cmd_vel,
            stale,
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
    /// Aborted on drop: no more set-points from ROS 1.
    _cmd_vel: Task,
    /// Stamped `cmd_vel` ignored as older than `cmd_vel_timeout`.
    stale: Arc<AtomicU64>,
}

/// The robots' interfaces.
pub struct ThymioInterface {
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
    static_transforms: Vec<gm::TransformStamped>,
    /// Robots whose alarm sounds, and when it sounds next.
    alarms: BTreeMap<NodeId, Instant>,
    /// The lines for ROS users (the console and every front end's `/rosout`).
    reporter: Reporter,
    /// Times the hop `cmd_vel` taken → set-point stored.
    cmd_vel_timer: HopHistogram,
}

impl ThymioInterface {
    /// No robot yet; `/tf` and `/tf_static` are advertised now; the actuator topics will hand their commands to
    /// `inbox`.
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
            odom: OdomTargets::new(graph.advertise("/tf", 100, false)?),
            tf_static: graph.advertise("/tf_static", 1, true)?,
            static_transforms: Vec::new(),
            alarms: BTreeMap::new(),
            reporter,
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

    /// Every driven robot's `odom`, as a global name.
    pub fn odom_topics(&self) -> Vec<String> {
        self.robots
            .values()
            .map(|r| global(&[&self.base, &r.namespace, "odom"]))
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

    /// Reacts to the engine: robots coming and going, proximity, ground events.
    pub fn on_engine_event(&mut self, engine: &Engine, event: &EngineEvent) {
        match event {
            EngineEvent::RobotReady { node, robot }
                if engine.driver_params().enabled && !self.robots.contains_key(node) =>
            {
                self.add_robot(engine, *node, *robot)
            }
            EngineEvent::RobotRemoved { node, .. } => {
                // dropping its publishers, service and tasks unregisters them
                if let Some(r) = self.robots.remove(node) {
                    self.odom.remove(r.robot);
                    self.alarms.remove(node);
                    self.forget(&r.namespace);
                    self.replace_static_frames(*node, &r.frames.prefix, Vec::new());
                }
            }
            EngineEvent::ObstacleStop { node, engaged } => {
                if let Some(r) = self.robots.get(node) {
                    if let Err(e) = r.out.publish_obstacle_stop(&self.graph, *engaged) {
                        self.reporter.warn(&format!(
                            "ROS 1: node {node}: cannot publish obstacle_stop: {e}"
                        ));
                    }
                }
            }
            EngineEvent::Proximity { node, sample } => {
                self.publish_proximity(engine, *node, sample)
            }
            EngineEvent::Network(NetworkEvent::UserEvent {
                source,
                id,
                args,
                stamp_ns,
            }) if self.robots.contains_key(source) => {
                self.on_script_event(engine, *source, *id, args, *stamp_ns)
            }
            _ => {}
        }
    }

    /// Has the registrar thread make the interface of robot `robot` (node `id`).
    fn add_robot(&mut self, engine: &Engine, id: NodeId, robot: RobotId) {
        if !self.building.insert(id) {
            return;
        }
        let params = engine.robot_params(id);
        let (namespace, frames) = robot_frames(engine, &self.base, id);
        let calibration = engine.robots().of_node(id).map(|s| s.calibration.clone());
        let urdf = params.publish_model.then(|| {
            let axis = calibration
                .as_ref()
                .map_or(params.axis_length, |c| c.axis_length);
            model::urdf(
                &frames.prefix,
                axis,
                [&params.left_wheel_joint, &params.right_wheel_joint],
            )
        });
        let plan = RobotPlan {
            id,
            robot,
            base: self.base.clone(),
            namespace,
            frames,
            calibration,
            max_rate: params.odom_max_rate,
            live: engine.live_params(),
            stamped: params.cmd_vel_stamped,
            filter: StaleFilter::new(
                id,
                nrt_interface::cmd_vel::max_age(params.cmd_vel_timeout),
                Arc::new(AtomicU64::new(0)),
            ),
            timer: self.cmd_vel_timer.clone(),
            urdf,
            inbox: self.inbox.clone(),
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

    /// Takes the robot interfaces the registrar thread made into use (if their robot is still there).
    pub fn poll_built(&mut self, engine: &Engine) {
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
                let own = conv::static_transforms(conv::now(), &b.robot.frames);
                self.replace_static_frames(id, &b.robot.frames.prefix, own);
            }
            self.robots.insert(id, b.robot);
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

    /// Puts `own` in place of the frames under `prefix` (none are taken out for an empty prefix) in the one
    /// `/tf_static` message that holds every robot's frames, and republishes it if it changed.
    fn replace_static_frames(&mut self, id: NodeId, prefix: &str, own: Vec<gm::TransformStamped>) {
        let before = self.static_transforms.len();
        if !prefix.is_empty() {
            let mine = format!("{prefix}/");
            self.static_transforms
                .retain(|t| !t.child_frame_id.starts_with(&mine));
        }
        if own.is_empty() && self.static_transforms.len() == before {
            return;
        }
        self.static_transforms.extend(own);
        let msg = tf2_msgs::TFMessage {
            transforms: self.static_transforms.clone(),
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
        let stamp = conv::stamp(s.t_ns);
        let result =
            r.out
                .publish_proximity(&self.graph, &s.values, &slot.calibration, stamp, &r.frames);
        if let Err(e) = result {
            self.reporter
                .warn(&format!("ROS 1: node {id}: cannot publish proximity: {e}"));
        }
    }

    /// Sends what an actuator topic of robot `node` asked (refused messages are logged with their reason).
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
            RobotCommand::Events(Ok(events)) => emit(engine, node, topic, &events, &self.reporter),
            RobotCommand::Events(Err(e)) => self
                .reporter
                .error(&format!("node {node}: {topic}: command refused: {e}")),
            RobotCommand::Alarm(true) => {
                self.alarms.entry(node).or_insert_with(Instant::now);
            }
            RobotCommand::Alarm(false) => {
                self.alarms.remove(&node);
            }
        }
    }

    /// Sounds the alarms that are due (called at every iteration of the NRT loop, which wakes at least every
    /// 50 ms).
    pub fn tick(&mut self, engine: &mut Engine, now: Instant) {
        let period = Duration::from_secs_f64(actuators::ALARM_PERIOD_S);
        for (node, due) in self.alarms.iter_mut().filter(|(_, due)| **due <= now) {
            *due += period;
            match actuators::play_system_sound(actuators::ALARM_SOUND) {
                Ok(ev) => emit(engine, *node, "alarm", &[ev], &self.reporter),
                Err(e) => self.reporter.error(&format!("node {node}: alarm: {e}")),
            }
        }
    }

    fn on_script_event(
        &self,
        engine: &Engine,
        id: NodeId,
        event: u16,
        args: &[i16],
        stamp_ns: u64,
    ) {
        let Some(name) = engine
            .network()
            .node(id)
            .and_then(|n| n.script.as_ref())
            .and_then(|s| s.events.get(event as usize))
            .map(|(name, _)| name.as_str())
        else {
            return;
        };
        let (Ok(event), Some(r)) = (RobotEvent::decode(name, args), self.robots.get(&id)) else {
            return;
        };
        let threshold = engine.robot_params(id).ground.threshold;
        let result = r.out.publish_event(
            &self.graph,
            event,
            conv::stamp(stamp_ns),
            &r.frames,
            threshold,
        );
        if let Err(e) = result {
            self.reporter
                .warn(&format!("ROS 1: node {id}: cannot publish {name}: {e}"));
        }
    }
}

/// The namespace (relative to `base`) and the frames of robot `id`.
pub fn robot_frames(engine: &Engine, base: &str, id: NodeId) -> (String, Frames) {
    let params = engine.robot_params(id);
    let namespace = engine
        .network()
        .node(id)
        .map(|n| n.namespace().trim_matches('/').to_owned())
        .unwrap_or_default();
    let prefix = model::frame_prefix(&params.tf_prefix, base, &namespace);
    let frames = Frames::new(
        &prefix,
        &params.odom_frame,
        &params.robot_frame,
        [&params.left_wheel_joint, &params.right_wheel_joint],
    );
    (namespace, frames)
}

/// Sends script events to robot `node`, logging those the engine refuses.
fn emit(
    engine: &mut Engine,
    node: NodeId,
    topic: &str,
    events: &[ScriptEvent],
    reporter: &Reporter,
) {
    for ev in events {
        if let Err(e) = engine.emit_script_event(node, ev.name, &ev.args) {
            reporter.error(&format!("node {node}: {topic}: {}: {e}", ev.name));
        }
    }
}
