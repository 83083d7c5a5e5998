//! ROS-Thymio's ROS 1 interface of each robot the RT thread drives, in the robot node's namespace: `cmd_vel`
//! (geometry_msgs/Twist) straight to the RT set-point from the socket task that received it; `odom`, `/tf` and
//! `joint_states` from the odometry publisher thread ([`super::odom_pub`]); `proximity/<name>` (Range, REP-117)
//! and `proximity/laser` (LaserScan) from the RT thread's proximity samples; `ground/{left,right}` (Range) from
//! the script's ground events; the `is_ready` service (std_srvs/Empty).
//!
//! Not served on ROS 1 (yet): LEDs, sounds, IMU, buttons, temperature, remote, prox-comm, `robot_description`,
//! `/tf_static`, `obstacle_stop`.

use super::conv::{self, Frames};
use super::graph::{global, Graph, Task};
use super::odom_pub::{OdomRobot, OdomTargets};
use super::ros1_msgs::{geometry_msgs::Twist, sensor_msgs as sm, std_srvs};
use super::Ros1Error;
use msgs::handoff::NrtLiveParams;
use msgs::handoff::{monotonic_ns, NodeId, ProximitySample, RobotId, Twist2};
use nrt_engine::engine::{Engine, EngineEvent};
use nrt_engine::network::NetworkEvent;
use nrt_engine::thymio::calibration::Calibration;
use nrt_engine::thymio::events::RobotEvent;
use nrt_engine::thymio::model;
use nrt_engine::thymio::sensors::{self, GROUND_RANGE_MAX, GROUND_RANGE_MIN, SENSOR_FOV};
use nrt_engine::thymio::{GROUND_NAMES, PROXIMITY_NAMES};
use roslibrust::ros1::{Publisher, ServiceServer};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::mpsc::{channel, Receiver, Sender};

/// A robot's names besides the proximity and ground sensors.
const ROBOT_NAMES: [&str; 5] = [
    "cmd_vel",
    "odom",
    "joint_states",
    "proximity/laser",
    "is_ready",
];

/// Depth of the `cmd_vel` subscription and of the sensor topics (ROS-Thymio's rospy queue sizes are 1).
const DEPTH: usize = 1;
/// Queue of `odom` and `joint_states` toward each subscriber's socket: roslibrust drops what does not fit (a
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
}

/// A robot's interface made by the registrar thread.
struct Built {
    robot: Robot,
    odom: Option<OdomRobot>,
}

/// Registers a robot's interface (on the registrar thread).
fn robot_interface(g: &Graph, p: RobotPlan) -> Result<Built, Ros1Error> {
    let t = |leaf: &str| global(&[&p.base, &p.namespace, leaf]);
    let (id, robot, live) = (p.id, p.robot, p.live);
    let mut sub = g.subscribe::<Twist>(&t("cmd_vel"), DEPTH)?;
    let cmd_vel = g.spawn(async move {
        let mut refusing = false;
        while let Some(m) = sub.next().await {
            let taken = monotonic_ns();
            let twist = match m {
                Ok(t) => Twist2 {
                    linear: t.linear.x,
                    angular: t.angular.z,
                },
                Err(e) => {
                    tracing::warn!("ROS 1: node {id}: cmd_vel: {e}");
                    continue;
                }
            };
            match live.nrt_set_cmd_vel_at(robot, twist, taken) {
                Ok(()) => refusing = false,
                Err(e) if !refusing => {
                    refusing = true;
                    tracing::error!(
                        "ROS 1: node {id}: cmd_vel refused: {e} (further refusals not logged until a valid one)"
                    );
                }
                Err(_) => {}
            }
        }
    });
    let is_ready =
        g.serve::<std_srvs::Empty>(&t("is_ready"), |_| Ok(std_srvs::EmptyResponse {}))?;
    let proximity = PROXIMITY_NAMES
        .iter()
        .map(|n| g.advertise(&t(&format!("proximity/{n}")), DEPTH, false))
        .collect::<Result<_, _>>()?;
    let ground = GROUND_NAMES
        .iter()
        .map(|n| g.advertise(&t(&format!("ground/{n}")), DEPTH, false))
        .collect::<Result<_, _>>()?;
    let laser = g.advertise(&t("proximity/laser"), DEPTH, false)?;
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
            proximity,
            laser,
            ground,
            _is_ready: is_ready,
            _cmd_vel: cmd_vel,
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
    proximity: Vec<Publisher<sm::Range>>,
    laser: Publisher<sm::LaserScan>,
    ground: Vec<Publisher<sm::Range>>,
    _is_ready: ServiceServer,
    /// Aborted on drop: no more set-points from ROS 1.
    _cmd_vel: Task,
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
}

impl ThymioInterface {
    /// No robot yet; `/tf` is advertised now.
    pub fn new(graph: &Graph, base: &str) -> Result<ThymioInterface, Ros1Error> {
        let (built_tx, built) = channel();
        Ok(ThymioInterface {
            odom: OdomTargets::new(graph.advertise("/tf", 100, false)?),
            graph: graph.clone(),
            base: base.to_owned(),
            robots: BTreeMap::new(),
            building: BTreeSet::new(),
            built,
            built_tx,
        })
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
                // dropping its publishers, service and cmd_vel task unregisters them
                if let Some(r) = self.robots.remove(node) {
                    self.odom.remove(r.robot);
                    self.forget(&r.namespace);
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
        let namespace = engine
            .network()
            .node(id)
            .map(|n| n.namespace().trim_matches('/').to_owned())
            .unwrap_or_default();
        let prefix = model::frame_prefix(&params.tf_prefix, &self.base, &namespace);
        let frames = Frames::new(
            &prefix,
            &params.odom_frame,
            &params.robot_frame,
            [&params.left_wheel_joint, &params.right_wheel_joint],
        );
        let plan = RobotPlan {
            id,
            robot,
            base: self.base.clone(),
            namespace,
            frames,
            calibration: engine.robots().of_node(id).map(|s| s.calibration.clone()),
            max_rate: params.odom_max_rate,
            live: engine.live_params(),
        };
        let tx = self.built_tx.clone();
        self.graph.submit(move |g| match robot_interface(g, plan) {
            Ok(built) => {
                let _ = tx.send(built);
                g.bell.ring();
            }
            Err(e) => tracing::error!("ROS 1: Thymio node {id}: no driver interface: {e}"),
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
            self.robots.insert(id, b.robot);
            tracing::info!("ROS 1: Thymio node {id}: driver interface ready");
        }
    }

    /// Forgets the registrations of a robot in `namespace` (its interface was dropped).
    fn forget(&self, namespace: &str) {
        for leaf in ROBOT_NAMES {
            self.graph.forget(&global(&[&self.base, namespace, leaf]));
        }
        for n in PROXIMITY_NAMES {
            self.graph
                .forget(&global(&[&self.base, namespace, "proximity", n]));
        }
        for n in GROUND_NAMES {
            self.graph
                .forget(&global(&[&self.base, namespace, "ground", n]));
        }
    }

    fn publish_proximity(&self, engine: &Engine, id: NodeId, s: &ProximitySample) {
        let (Some(r), Some(slot)) = (self.robots.get(&id), engine.robots().of_node(id)) else {
            return;
        };
        let (cal, stamp, f) = (&slot.calibration, conv::stamp(s.t_ns), &r.frames);
        let mut result = Ok(());
        for (i, p) in r.proximity.iter().enumerate() {
            let frame = f.link(&format!("proximity_{}_link", PROXIMITY_NAMES[i]));
            let m = conv::proximity(s.values[i], cal, i, stamp.clone(), frame);
            result = result.and(self.graph.publish(p, &m));
        }
        let scan = conv::laser(&s.values, cal, stamp, f.link("laser_link"));
        result = result.and(self.graph.publish(&r.laser, &scan));
        if let Err(e) = result {
            tracing::warn!("ROS 1: node {id}: cannot publish proximity: {e}");
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
        let (Ok(RobotEvent::Ground(delta)), Some(r)) =
            (RobotEvent::decode(name, args), self.robots.get(&id))
        else {
            return;
        };
        let threshold = engine.robot_params(id).ground.threshold;
        let stamp = conv::stamp(stamp_ns);
        for (i, p) in r.ground.iter().enumerate() {
            let m = sm::Range {
                header: conv::header(
                    stamp.clone(),
                    r.frames.link(&format!("ground_{}_link", GROUND_NAMES[i])),
                ),
                radiation_type: conv::INFRARED,
                field_of_view: SENSOR_FOV,
                min_range: GROUND_RANGE_MIN,
                max_range: GROUND_RANGE_MAX,
                range: sensors::ground_range(delta[i], threshold),
            };
            if let Err(e) = self.graph.publish(p, &m) {
                tracing::warn!("ROS 1: node {id}: cannot publish ground: {e}");
            }
        }
    }
}
