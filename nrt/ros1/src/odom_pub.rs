//! The ROS 1 odometry publisher thread: the RT thread pushes each odometry sample into a ring of its own (one of
//! [`handoff::ChannelConfig::odometry_out_consumers`]; the ROS 2 front end has another) and rings this
//! thread, which publishes `odom`, `/tf` (odom → base_link and the two wheels) and `joint_states` of that robot at
//! once, then waits again (when several robots' samples wait, the `odom` of every one of them first, then their
//! `/tf` and `joint_states`: [`nrt_interface::odom_burst`]); the extended joint states of the same ring go to `thymio_driver/joint_states`
//! ([`super::joints`]). The RT thread hands it only the samples of robots someone listens to (connected
//! subscribers counted every 100 ms, [`nrt_interface::odom_demand`]). The hops handed → publish start and publish → returned are timed ([`NrtHopTimers`]). It never goes through the NRT loop; the serialised messages are queued for their
//! socket tasks, so publishing never waits for a subscriber.
//!
//! Each hand-off's limited twist (`OdomHandoff::commanded`) goes to the robot's `thymio_driver/cmd_vel_out` while
//! its `publish_limited_velocity` is true (a flag the NRT loop sets live).
//!
//! The NRT loop adds and removes robots ([`OdomTargets`], a mutex held only to change an entry or to publish one
//! sample).

use super::conv;
use super::joints::JointTargets;
use handoff::{monotonic_ns, CompanionPlacement, NodeId, NrtOdomOut, OdomHandoff, RobotId};
use nrt_interface::companion::{self, Placed};
use nrt_interface::frames::Frames;
use nrt_interface::hop_times::NrtHopTimers;
use nrt_interface::odom_burst::Burst;
use nrt_interface::odom_demand::{DemandCheck, Listeners};
use nrt_interface::odometry::OdomSettings;
use nrt_interface::{geometry, odometry};
use nrt_ros1_client::graph::Graph;
use nrt_ros1_client::net::Publisher;
use nrt_ros1_client::ros1_msgs::{
    geometry_msgs::TwistStamped, nav_msgs::Odometry, sensor_msgs::JointState, tf2_msgs::TFMessage,
};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Longest wait for a sample: bounds how long stopping the thread takes.
const WAIT: Duration = Duration::from_millis(50);

/// What the thread needs of one robot.
pub struct OdomRobot {
    /// Its Aseba node (a sample of another node in the same RT slot is not published).
    pub node: NodeId,
    /// `odom`.
    pub odom: Publisher<Odometry>,
    /// `joint_states`.
    pub joints: Publisher<JointState>,
    /// Its frames.
    pub frames: Frames,
    /// How its messages are made (covariances, `enable_odom_tf`, axis); updated live.
    pub settings: OdomSettings,
    /// `odom_max_rate` [Hz].
    pub rate: odometry::RateLimit,
    /// Sequence number of the next `odom` header (ROS 1 publishers count their messages).
    pub seq: u32,
    /// `~/cmd_vel_out` (the limited twist of every hand-off, whatever `odom_max_rate`).
    pub cmd_vel_out: Publisher<TwistStamped>,
    /// Whether `~/cmd_vel_out` is published (its `publish_limited_velocity`, set live by the NRT loop).
    pub limited_velocity: Arc<AtomicBool>,
    /// Sequence number of the next `~/cmd_vel_out` header.
    pub cmd_vel_out_seq: u32,
    /// Whether the wheels (base_link → wheel links) go on `/tf`: the driver publishes the model (`publish_model`);
    /// without it they are the user's robot_state_publisher's (from `joint_states`, still published).
    pub wheel_tf: bool,
}

/// The robots whose odometry is published, shared by the NRT loop and the thread.
#[derive(Clone)]
pub struct OdomTargets {
    table: Arc<Mutex<BTreeMap<RobotId, OdomRobot>>>,
    tf: Arc<Publisher<TFMessage>>,
}

impl OdomTargets {
    /// No robot yet; `/tf` goes to `tf`.
    pub fn new(tf: Publisher<TFMessage>) -> OdomTargets {
        OdomTargets {
            table: Arc::default(),
            tf: Arc::new(tf),
        }
    }

    fn lock(&self) -> MutexGuard<'_, BTreeMap<RobotId, OdomRobot>> {
        self.table.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Publishes the odometry of `robot` with `entry` from now on.
    pub fn insert(&self, robot: RobotId, entry: OdomRobot) {
        self.lock().insert(robot, entry);
    }

    /// Stops publishing the odometry of `robot`.
    pub fn remove(&self, robot: RobotId) {
        self.lock().remove(&robot);
    }

    /// Applies new odometry settings of `robot` (calibration, covariances, `enable_odom_tf`).
    pub fn set_settings(&self, robot: RobotId, settings: &OdomSettings) {
        if let Some(r) = self.lock().get_mut(&robot) {
            r.settings = settings.clone();
        }
    }
}

/// The running thread; stopped and joined on drop.
pub struct OdomPublisher {
    stop: Arc<AtomicBool>,
    published: Arc<AtomicU64>,
    thread: Option<JoinHandle<()>>,
    placed: Placed,
}

impl OdomPublisher {
    /// Starts the thread on the ring `out`: odometry of `targets`, joint states of `joints`, hops timed in `timers`;
    /// the thread runs at `placement` ([`nrt_interface::companion`]).
    pub fn start(
        mut out: NrtOdomOut,
        targets: OdomTargets,
        joints: JointTargets,
        graph: Graph,
        timers: NrtHopTimers,
        placement: CompanionPlacement,
    ) -> std::io::Result<OdomPublisher> {
        let stop = Arc::new(AtomicBool::new(false));
        let published = Arc::new(AtomicU64::new(0));
        let (thread, placed) = {
            let (stop, published) = (stop.clone(), published.clone());
            companion::spawn("nrt-ros1-odom", placement, move || {
                let mut burst: Burst<Rest> = Burst::new();
                let mut demand = DemandCheck::new(out.nrt_demand());
                while !stop.load(Ordering::Relaxed) {
                    out.nrt_wait(WAIT);
                    let now = Instant::now();
                    if demand.due(now) {
                        check_listeners(&targets, &mut demand, now);
                    }
                    while burst.take(|| out.nrt_pop()) {
                        for (h, rest) in burst.items_mut() {
                            *rest = publish_odom(&targets, &graph, h, &timers);
                            if rest.is_some() {
                                published.fetch_add(1, Ordering::Relaxed);
                            }
                        }
                        for (_, rest) in burst.items_mut() {
                            if let Some(rest) = rest.take() {
                                publish_rest(&targets, &graph, rest, &timers);
                            }
                        }
                    }
                    while let Some(j) = out.nrt_pop_joint() {
                        joints.publish(&j);
                    }
                }
            })?
        };
        Ok(OdomPublisher {
            stop,
            published,
            thread: Some(thread),
            placed,
        })
    }

    /// Whether the thread still runs.
    pub fn is_running(&self) -> bool {
        self.thread.as_ref().is_some_and(|t| !t.is_finished())
    }

    /// Where the thread runs, and what it could not obtain of its placement.
    pub fn placed(&self) -> &Placed {
        &self.placed
    }

    /// Samples published so far.
    pub fn published(&self) -> u64 {
        self.published.load(Ordering::Relaxed)
    }
}

impl Drop for OdomPublisher {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Asks the RT thread for the samples of the robots someone listens to ([`nrt_interface::odom_demand`]).
fn check_listeners(targets: &OdomTargets, demand: &mut DemandCheck, now: Instant) {
    let tf = Some(targets.tf.subscriber_count());
    let table = targets.lock();
    demand.apply(
        now,
        table.iter().map(|(id, r)| {
            let cmd_vel_out = if r.limited_velocity.load(Ordering::Relaxed) {
                r.cmd_vel_out.subscriber_count()
            } else {
                0
            };
            let listeners = Listeners {
                odom: Some(r.odom.subscriber_count()),
                tf,
                joint_states: Some(r.joints.subscriber_count()),
                cmd_vel_out: Some(cmd_vel_out),
            };
            (*id, listeners)
        }),
    );
}

/// What is left to publish of a sample whose `odom` went out.
struct Rest {
    robot: RobotId,
    node: NodeId,
    tf: TFMessage,
    joints: JointState,
    /// How long its `odom` publish took [ns].
    odom_cost_ns: u64,
}

/// Publishes one sample's `~/cmd_vel_out` and `odom` if its robot is a target and the rate limit lets it
/// through; `Some`: its `/tf` and `joint_states`, to be published ([`publish_rest`]).
fn publish_odom(
    targets: &OdomTargets,
    graph: &Graph,
    h: &OdomHandoff,
    timers: &NrtHopTimers,
) -> Option<Rest> {
    let s = &h.sample;
    let mut table = targets.lock();
    let r = table.get_mut(&s.robot).filter(|r| r.node == s.node)?;
    if r.limited_velocity.load(Ordering::Relaxed) {
        let stamp = geometry::stamp(h.handed_ns);
        let mut m = conv::twist_stamped(&odometry::cmd_vel_out(&h.commanded, stamp, &r.frames));
        m.header.seq = r.cmd_vel_out_seq;
        r.cmd_vel_out_seq = r.cmd_vel_out_seq.wrapping_add(1);
        if let Err(e) = graph.publish(&r.cmd_vel_out, &m) {
            tracing::warn!("ROS 1: node {}: cannot publish cmd_vel_out: {e}", r.node);
        }
    }
    if !r.rate.admit(Instant::now()) {
        return None;
    }
    let start = monotonic_ns();
    timers
        .handed_to_publish
        .record(start.saturating_sub(h.handed_ns));
    let stamp = geometry::stamp(s.t_ns);
    let mut odom = conv::odometry(&odometry::odometry(s, stamp, &r.frames, &r.settings));
    odom.header.seq = r.seq;
    r.seq = r.seq.wrapping_add(1);
    let published = graph.publish(&r.odom, &odom);
    let odom_ns = monotonic_ns();
    let mut transforms = odometry::transforms(s, stamp, &r.frames, &r.settings);
    if !r.wheel_tf {
        transforms.retain(|t| !r.frames.wheels.contains(&t.child_frame_id));
    }
    let rest = Rest {
        robot: s.robot,
        node: r.node,
        tf: TFMessage {
            transforms: transforms.iter().map(conv::transform).collect(),
        },
        joints: conv::joint_states(&odometry::joint_states(s, stamp, &r.frames)),
        odom_cost_ns: odom_ns.saturating_sub(start),
    };
    drop(table);
    match published {
        Ok(()) if s.wire_ns != 0 => timers.record_odom(handoff::OdomTrace {
            wire_ns: s.wire_ns,
            decoded_ns: s.t_ns,
            handed_ns: h.handed_ns,
            publish_ns: start,
            odom_ns,
        }),
        Ok(()) => {}
        Err(e) => tracing::warn!("ROS 1: node {}: cannot publish odometry: {e}", rest.node),
    }
    Some(rest)
}

/// Publishes the `/tf` and `joint_states` of a sample whose `odom` [`publish_odom`] sent (if its robot is still a
/// target).
fn publish_rest(targets: &OdomTargets, graph: &Graph, rest: Rest, timers: &NrtHopTimers) {
    let table = targets.lock();
    let Some(r) = table.get(&rest.robot).filter(|r| r.node == rest.node) else {
        return;
    };
    let start = monotonic_ns();
    let results = [
        graph.publish(&targets.tf, &rest.tf),
        graph.publish(&r.joints, &rest.joints),
    ];
    timers
        .publish
        .record(monotonic_ns().saturating_sub(start) + rest.odom_cost_ns);
    drop(table);
    for e in results.into_iter().filter_map(Result::err) {
        tracing::warn!("ROS 1: node {}: cannot publish odometry: {e}", rest.node);
    }
}
