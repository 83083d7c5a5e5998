//! The odometry publisher thread, the XBotCore way: the RT thread pushes each odometry sample
//! into a ring of its own and rings this thread's doorbell ([`handoff::NrtOdomOut`]); the
//! thread wakes, publishes `odom`, then `/tf` (odom → base and the two wheel links), then
//! `joint_states` of that robot at once, and waits again. The RT thread hands it only the samples of robots
//! someone listens to (subscribers counted every 100 ms, [`nrt_interface::odom_demand`]): with nobody
//! subscribed it sleeps. When several robots' samples wait
//! (one RT wake decoded the frames of many robots) it publishes the `odom` of every one of
//! them first, then their `/tf` and `joint_states` ([`nrt_interface::odom_burst`]). It never goes through the NRT engine
//! loop, never waits for the r2r spinner or the node (publishing needs neither), and reuses one
//! native message of each kind per robot: per sample it writes numbers into them and calls
//! `publish_native`, so the only allocations left per sample are those inside rcl/rmw
//! (serialisation into DDS's own buffers), none on our side.
//!
//! The NRT loop owns the robots' publishers (it creates and destroys them as robots come and go
//! and holds the node for that) and shares what this thread needs through [`OdomTargets`]: a
//! mutex the NRT side holds only to insert, remove or update an entry, and this thread only
//! while it publishes one sample. Content, frames, covariances and the `odom_max_rate` limit are the
//! layer's ([`nrt_interface::odometry`]), converted by [`super::thymio_conv`].

use super::joints::{self, JointTarget};
use super::report::Reporter;
use super::thymio_conv::{self as conv, Frames};
use handoff::{
    monotonic_ns, CompanionPlacement, NodeId, NrtOdomOut, OdomHandoff, OdomSample, RobotId, Twist2,
};
use nrt_engine::thymio::model;
use nrt_interface::companion;
use nrt_interface::hop_times::NrtHopTimers;
use nrt_interface::odom_burst::Burst;
use nrt_interface::odom_demand::{DemandCheck, Listeners};
use nrt_interface::odometry::{self as odo, OdomSettings, RateLimit};
use r2r::builtin_interfaces::msg::Time;
use r2r::geometry_msgs::msg::TwistStamped;
use r2r::nav_msgs::msg::Odometry;
use r2r::sensor_msgs::msg::JointState;
use r2r::tf2_msgs::msg::TFMessage;
use r2r::{NativeMsg as WrappedNativeMsg, Publisher};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Longest wait of the publisher thread for a sample: bounds how long stopping it takes.
const WAIT: Duration = Duration::from_millis(50);

/// What the publisher thread needs of one robot (made by the NRT loop when the robot appears).
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
    /// Its `odom_max_rate` [Hz] (its `thymio_driver` node's, start-only): at most this many
    /// samples per second; ≤ 0: all.
    pub max_rate: f64,
    /// `~/cmd_vel_out` (the limited twist of every hand-off, whatever `odom_max_rate`).
    pub cmd_vel_out: Publisher<TwistStamped>,
    /// Whether `~/cmd_vel_out` is published (its `publish_limited_velocity`, set live by the NRT
    /// loop).
    pub limited_velocity: Arc<AtomicBool>,
    /// Whether the wheels (base_link → wheel links) go on `/tf`: the driver publishes the model (`publish_model`);
    /// without it they are the user's robot_state_publisher's (from `joint_states`, still published).
    pub wheel_tf: bool,
}

struct Entry {
    robot: OdomRobot,
    /// Changes whenever the entry does: the thread rebuilds its native messages.
    generation: u64,
}

#[derive(Default)]
struct Table {
    robots: BTreeMap<RobotId, Entry>,
    generations: u64,
    /// The robots whose extended joint states are published ([`super::joints`]).
    joints: BTreeMap<RobotId, JointTarget>,
}

/// The robots whose odometry is published, shared by the NRT loop and the publisher thread.
#[derive(Clone)]
pub struct OdomTargets {
    table: Arc<Mutex<Table>>,
    tf: Publisher<TFMessage>,
}

impl OdomTargets {
    /// No robot yet; `/tf` is published with `tf`.
    pub fn new(tf: Publisher<TFMessage>) -> OdomTargets {
        OdomTargets {
            table: Arc::default(),
            tf,
        }
    }

    fn lock(&self) -> MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Publishes the odometry of RT robot `robot` with `entry` from now on.
    pub fn insert(&self, robot: RobotId, entry: OdomRobot) {
        let mut t = self.lock();
        t.generations += 1;
        let generation = t.generations;
        t.robots.insert(
            robot,
            Entry {
                robot: entry,
                generation,
            },
        );
    }

    /// Stops publishing the odometry of `robot`; once this returns, no publish on its
    /// publishers is in flight (so they may be destroyed).
    pub fn remove(&self, robot: RobotId) {
        self.lock().robots.remove(&robot);
    }

    /// Publishes the extended joint states of RT robot `robot` with `target` from now on.
    pub fn insert_joints(&self, robot: RobotId, target: JointTarget) {
        self.lock().joints.insert(robot, target);
    }

    /// Stops publishing the joint states of `robot`; once this returns, no publish on its
    /// publisher is in flight (it is handed back, to be destroyed).
    pub fn remove_joints(&self, robot: RobotId) -> Option<JointTarget> {
        self.lock().joints.remove(&robot)
    }

    /// Applies new odometry settings of `robot` (calibration, covariances, `enable_odom_tf`; no-op when unchanged).
    pub fn set_settings(&self, robot: RobotId, settings: &OdomSettings) {
        let mut t = self.lock();
        let next = t.generations + 1;
        if let Some(e) = t.robots.get_mut(&robot) {
            if e.robot.settings != *settings {
                e.robot.settings = settings.clone();
                e.generation = next;
                t.generations = next;
            }
        }
    }
}

/// The messages of one robot, kept in rcl's native form and refilled per sample.
struct Natives {
    generation: u64,
    odom: WrappedNativeMsg<Odometry>,
    tf: WrappedNativeMsg<TFMessage>,
    joints: WrappedNativeMsg<JointState>,
    cmd_vel_out: WrappedNativeMsg<TwistStamped>,
    rate: RateLimit,
    /// `tf` starts with odom → base_link (`enable_odom_tf`).
    odom_tf: bool,
    /// `tf` holds the two wheel transforms after it (`publish_model`).
    wheel_tf: bool,
}

impl Natives {
    /// Built from the layer's messages for a robot with `frames` and `settings` (allocates:
    /// once per robot and per change of its entry); at most `max_rate` samples per second; the
    /// wheel transforms on `/tf` only with `wheel_tf`.
    fn new(
        frames: &Frames,
        settings: &OdomSettings,
        wheel_tf: bool,
        generation: u64,
        max_rate: f64,
    ) -> Natives {
        let (s, stamp) = (OdomSample::default(), Duration::ZERO);
        let transforms = odo::transforms(&s, stamp, frames, settings)
            .iter()
            .filter(|t| wheel_tf || !frames.wheels.contains(&t.child_frame_id))
            .map(conv::transform)
            .collect();
        Natives {
            generation,
            odom: WrappedNativeMsg::from(&conv::odometry(&odo::odometry(
                &s, stamp, frames, settings,
            ))),
            tf: WrappedNativeMsg::from(&TFMessage { transforms }),
            joints: WrappedNativeMsg::from(&conv::joint_states(&odo::joint_states(
                &s, stamp, frames,
            ))),
            cmd_vel_out: WrappedNativeMsg::from(&conv::twist_stamped(&odo::cmd_vel_out(
                &Twist2::default(),
                stamp,
                frames,
            ))),
            rate: RateLimit::new(max_rate),
            odom_tf: settings.odom_tf,
            wheel_tf,
        }
    }

    /// Writes the commanded twist `t` stamped `stamp` into `~/cmd_vel_out` (what the layer's
    /// [`odo::cmd_vel_out`] would make of it). Never allocates.
    fn fill_cmd_vel_out(&mut self, t: &Twist2, stamp: &Time) {
        let m = &mut *self.cmd_vel_out;
        m.header.stamp.sec = stamp.sec;
        m.header.stamp.nanosec = stamp.nanosec;
        m.twist.linear.x = t.linear;
        m.twist.angular.z = t.angular;
    }

    /// Writes sample `s` stamped `stamp` into the three messages (what the layer's
    /// [`odo::odometry`], [`odo::transforms`] and [`odo::joint_states`] would make of it; the
    /// rest was set by [`Natives::new`]). Never allocates.
    fn fill(&mut self, s: &OdomSample, stamp: &Time) {
        let (qz, qw) = {
            let (sin, cos) = (s.pose.theta / 2.0).sin_cos();
            (sin, cos)
        };
        let o = &mut *self.odom;
        o.header.stamp.sec = stamp.sec;
        o.header.stamp.nanosec = stamp.nanosec;
        o.pose.pose.position.x = s.pose.x;
        o.pose.pose.position.y = s.pose.y;
        o.pose.pose.orientation.z = qz;
        o.pose.pose.orientation.w = qw;
        o.twist.twist.linear.x = s.twist.linear;
        o.twist.twist.angular.z = s.twist.angular;

        let seq = &mut self.tf.transforms;
        let tfs = if seq.data.is_null() {
            &mut []
        } else {
            // SAFETY: rcl's sequence of `size` initialised transforms made by `Natives::new`
            // (odom → base, two wheels), owned by this message and not aliased while we hold
            // `&mut self`.
            unsafe { std::slice::from_raw_parts_mut(seq.data, seq.size) }
        };
        for t in tfs.iter_mut() {
            t.header.stamp.sec = stamp.sec;
            t.header.stamp.nanosec = stamp.nanosec;
        }
        let wheels = if self.odom_tf {
            if let Some(t) = tfs.first_mut() {
                t.transform.translation.x = s.pose.x;
                t.transform.translation.y = s.pose.y;
                t.transform.rotation.z = qz;
                t.transform.rotation.w = qw;
            }
            1
        } else {
            0
        };
        let wheel_tfs = if self.wheel_tf { 2 } else { 0 };
        for (i, t) in tfs.iter_mut().skip(wheels).take(wheel_tfs).enumerate() {
            let q = model::quaternion([0.0, s.wheel_pos[i], 0.0]);
            t.transform.rotation.x = q[0];
            t.transform.rotation.y = q[1];
            t.transform.rotation.z = q[2];
            t.transform.rotation.w = q[3];
        }

        let j = &mut *self.joints;
        j.header.stamp.sec = stamp.sec;
        j.header.stamp.nanosec = stamp.nanosec;
        for (seq, values) in [
            (&mut j.position, s.wheel_pos),
            (&mut j.velocity, s.wheel_vel),
        ] {
            if seq.data.is_null() {
                continue;
            }
            // SAFETY: rcl's sequence of `size` (2) doubles made by `Natives::new`, owned by
            // this message and not aliased while we hold `&mut self`.
            let dst = unsafe { std::slice::from_raw_parts_mut(seq.data, seq.size) };
            for (d, v) in dst.iter_mut().zip(values) {
                *d = v;
            }
        }
    }
}

/// The running publisher thread; stopped and joined on drop.
pub struct OdomPublisher {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

/// What the publisher thread is given.
pub struct OdomPublisherConfig {
    /// The RT thread's odometry ring (taken from the engine).
    pub out: NrtOdomOut,
    /// The robots to publish.
    pub targets: OdomTargets,
    /// Where publishing errors are reported.
    pub reporter: Reporter,
    /// Where the hops are timed.
    pub timers: NrtHopTimers,
    /// Where the thread runs ([`nrt_interface::companion`]; the engine's
    /// `companion_placement`).
    pub placement: CompanionPlacement,
}

impl OdomPublisher {
    /// Starts the thread.
    pub fn start(cfg: OdomPublisherConfig) -> std::io::Result<OdomPublisher> {
        let clocks = super::convert::Clocks::new().map_err(std::io::Error::other)?;
        let stop = Arc::new(AtomicBool::new(false));
        let (placement, reporter) = (cfg.placement, cfg.reporter.clone());
        let (thread, placed) = {
            let stop = stop.clone();
            companion::spawn("nrt-odom-pub", placement, move || run(cfg, clocks, &stop))?
        };
        placed.report(&reporter, "odometry publisher thread");
        Ok(OdomPublisher {
            stop,
            thread: Some(thread),
        })
    }

    /// Whether the thread still runs.
    pub fn is_running(&self) -> bool {
        self.thread.as_ref().is_some_and(|t| !t.is_finished())
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

/// A sample of the burst whose `odom` went out.
#[derive(Clone, Copy)]
struct Started {
    /// How long its `odom` publish took [ns].
    odom_cost_ns: u64,
}

fn run(mut cfg: OdomPublisherConfig, mut clocks: super::convert::Clocks, stop: &AtomicBool) {
    let mut natives: BTreeMap<RobotId, Natives> = BTreeMap::new();
    // one sample per robot per burst: its native messages are filled in the first pass
    let mut burst: Burst<Started> = Burst::new();
    let mut demand = DemandCheck::new(cfg.out.nrt_demand());
    while !stop.load(Ordering::Relaxed) {
        cfg.out.nrt_wait(WAIT);
        let now = Instant::now();
        if demand.due(now) {
            check_listeners(&cfg.targets, &mut demand, now);
        }
        while burst.take(|| cfg.out.nrt_pop()) {
            for (h, started) in burst.items_mut() {
                *started = publish_odom(&cfg, &mut clocks, &mut natives, h);
            }
            for (h, started) in burst.items_mut() {
                if let Some(started) = started.take() {
                    publish_rest(&cfg, &mut natives, h, started);
                }
            }
        }
        while let Some(j) = cfg.out.nrt_pop_joint() {
            publish_joints(&cfg, &mut clocks, &j);
        }
    }
}

/// The subscribers of `p` (`None` if they cannot be counted).
fn count<T: r2r::WrappedTypesupport + 'static>(p: &Publisher<T>) -> Option<usize> {
    p.get_inter_process_subscription_count().ok()
}

/// Asks the RT thread for the samples of the robots someone listens to ([`nrt_interface::odom_demand`]).
fn check_listeners(targets: &OdomTargets, demand: &mut DemandCheck, now: Instant) {
    let tf = count(&targets.tf);
    let table = targets.lock();
    demand.apply(
        now,
        table.robots.iter().map(|(id, e)| {
            let r = &e.robot;
            let cmd_vel_out = if r.limited_velocity.load(Ordering::Relaxed) {
                count(&r.cmd_vel_out)
            } else {
                Some(0)
            };
            let listeners = Listeners {
                odom: count(&r.odom),
                tf,
                joint_states: count(&r.joints),
                cmd_vel_out,
            };
            (*id, listeners)
        }),
    );
}

/// Publishes one extended joint state (if its robot is a target).
fn publish_joints(
    cfg: &OdomPublisherConfig,
    clocks: &mut super::convert::Clocks,
    s: &handoff::JointStateSample,
) {
    let table = cfg.targets.lock();
    let Some(t) = table.joints.get(&s.robot).filter(|t| t.node == s.node) else {
        return;
    };
    let m = joints::message(
        nrt_interface::joints::joint_state(s, &t.names, &t.owners),
        clocks.stamp(s.t_ns),
    );
    if let Err(e) = t.publisher.publish(&m) {
        cfg.reporter.warn(&format!(
            "node {}: cannot publish joint_states: {e}",
            s.node
        ));
    }
}

/// Publishes one sample's `~/cmd_vel_out` and `odom` (if its robot is a target and the rate
/// limit lets it through) and fills its `/tf` and `joint_states`; `Some` when they are to be
/// published ([`publish_rest`]).
fn publish_odom(
    cfg: &OdomPublisherConfig,
    clocks: &mut super::convert::Clocks,
    natives: &mut BTreeMap<RobotId, Natives>,
    h: &OdomHandoff,
) -> Option<Started> {
    let s = &h.sample;
    let table = cfg.targets.lock();
    let Some(entry) = table
        .robots
        .get(&s.robot)
        .filter(|e| e.robot.node == s.node)
    else {
        natives.remove(&s.robot);
        return None;
    };
    if natives
        .get(&s.robot)
        .is_none_or(|n| n.generation != entry.generation)
    {
        let r = &entry.robot;
        let mut fresh = Natives::new(
            &r.frames,
            &r.settings,
            r.wheel_tf,
            entry.generation,
            r.max_rate,
        );
        if let Some(old) = natives.get(&s.robot) {
            fresh.rate = old.rate.clone();
        }
        natives.insert(s.robot, fresh);
    }
    let n = natives.get_mut(&s.robot)?;
    let r = &entry.robot;
    if r.limited_velocity.load(Ordering::Relaxed) {
        n.fill_cmd_vel_out(&h.commanded, &clocks.stamp(h.handed_ns));
        if let Err(e) = r.cmd_vel_out.publish_native(&mut n.cmd_vel_out) {
            cfg.reporter
                .warn(&format!("node {}: cannot publish cmd_vel_out: {e}", s.node));
        }
    }
    if !n.rate.admit(Instant::now()) {
        return None;
    }
    let stamp = clocks.stamp(s.t_ns);
    n.fill(s, &stamp);
    let start = monotonic_ns();
    cfg.timers
        .handed_to_publish
        .record(start.saturating_sub(h.handed_ns));
    let odom = r.odom.publish_native(&mut n.odom);
    let odom_ns = monotonic_ns();
    drop(table);
    match odom {
        Ok(()) if s.wire_ns != 0 => cfg.timers.record_odom(handoff::OdomTrace {
            wire_ns: s.wire_ns,
            decoded_ns: s.t_ns,
            handed_ns: h.handed_ns,
            publish_ns: start,
            odom_ns,
        }),
        Ok(()) => {}
        Err(e) => cfg
            .reporter
            .warn(&format!("node {}: cannot publish odometry: {e}", s.node)),
    }
    Some(Started {
        odom_cost_ns: odom_ns.saturating_sub(start),
    })
}

/// Publishes the `/tf` and `joint_states` [`publish_odom`] filled for sample `h` (if its robot is
/// still a target).
fn publish_rest(
    cfg: &OdomPublisherConfig,
    natives: &mut BTreeMap<RobotId, Natives>,
    h: &OdomHandoff,
    started: Started,
) {
    let s = &h.sample;
    let table = cfg.targets.lock();
    let (Some(entry), Some(n)) = (
        table
            .robots
            .get(&s.robot)
            .filter(|e| e.robot.node == s.node),
        natives.get_mut(&s.robot),
    ) else {
        return;
    };
    let start = monotonic_ns();
    // nothing on /tf when neither odom → base_link nor the wheels are the driver's
    let tf = if n.tf.transforms.size > 0 {
        cfg.targets.tf.publish_native(&mut n.tf)
    } else {
        Ok(())
    };
    let results = [tf, entry.robot.joints.publish_native(&mut n.joints)];
    let cost = monotonic_ns().saturating_sub(start) + started.odom_cost_ns;
    cfg.timers.publish.record(cost);
    drop(table);
    for e in results.into_iter().filter_map(Result::err) {
        cfg.reporter
            .warn(&format!("node {}: cannot publish odometry: {e}", s.node));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use handoff::{Pose2, Twist2};
    use nrt_engine::thymio::calibration::Calibration;
    use nrt_engine::thymio::params::DriverParams;
    use r2r::WrappedTypesupport;

    fn sample() -> OdomSample {
        OdomSample {
            robot: RobotId(1),
            node: NodeId(7),
            seq: 3,
            pose: Pose2 {
                x: 1.25,
                y: -0.5,
                theta: 0.75,
            },
            twist: Twist2 {
                linear: 0.1,
                angular: -0.3,
            },
            wheel_pos: [2.0, -1.5],
            wheel_vel: [0.4, 0.6],
            ..OdomSample::default()
        }
    }

    /// The reused native messages carry exactly what the engine-loop path published, with and without
    /// `odom → base_link` on `/tf` and with covariances from the parameters.
    #[test]
    fn refilled_natives_equal_the_converted_messages() {
        let frames = Frames::new("robot_a", "odom", "base_link", ["left", "right"]);
        let calibration = Calibration {
            axis_length: 0.1,
            ..Calibration::real()
        };
        let nav2 = DriverParams {
            pose_covariance_diagonal: vec![0.001, 0.002, 1e6, 1e6, 1e6, 0.03],
            enable_odom_tf: false,
            ..DriverParams::default()
        };
        // and without the wheels (`publish_model: false`: the user's robot_state_publisher's)
        for (params, wheel_tf) in [
            (DriverParams::default(), true),
            (nav2.clone(), true),
            (DriverParams::default(), false),
            (nav2, false),
        ] {
            let settings = OdomSettings::new(&calibration, &params);
            let mut n = Natives::new(&frames, &settings, wheel_tf, 1, 0.0);
            let at = Duration::new(1_700_000_000, 123_456_789);
            let stamp = super::super::convert::time(at);
            for s in [sample(), OdomSample::default(), sample()] {
                n.fill(&s, &stamp);
                assert_eq!(
                    Odometry::from_native(&n.odom),
                    conv::odometry(&odo::odometry(&s, at, &frames, &settings))
                );
                let transforms: Vec<_> = odo::transforms(&s, at, &frames, &settings)
                    .iter()
                    .filter(|t| wheel_tf || !frames.wheels.contains(&t.child_frame_id))
                    .map(conv::transform)
                    .collect();
                let wheels = if wheel_tf { 2 } else { 0 };
                assert_eq!(
                    transforms.len(),
                    usize::from(params.enable_odom_tf) + wheels
                );
                assert_eq!(TFMessage::from_native(&n.tf), TFMessage { transforms });
                assert_eq!(
                    JointState::from_native(&n.joints),
                    conv::joint_states(&odo::joint_states(&s, at, &frames))
                );
                n.fill_cmd_vel_out(&s.twist, &stamp);
                assert_eq!(
                    TwistStamped::from_native(&n.cmd_vel_out),
                    conv::twist_stamped(&odo::cmd_vel_out(&s.twist, at, &frames))
                );
            }
        }
    }
}
