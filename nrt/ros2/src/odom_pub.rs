//! The ROS 2 side of the odometry publisher thread ([`nrt_interface::odom_thread`], written once for both front
//! ends: the ring, the burst order, the subscriber demand, `odom_max_rate`, the hop timers and the targets are the
//! layer's). This is its sink: it reuses one native message of each kind per robot (`odom`, `/tf`,
//! `joint_states`, `~/cmd_vel_out`): per sample it writes numbers into them and calls `publish_native`, so the
//! only allocations left per sample are those inside rcl/rmw (serialisation into DDS's own buffers), none on our
//! side. It never waits for the r2r spinner or the node (publishing needs neither). The extended joint states of
//! the same ring go to `thymio_driver/joint_states` ([`super::joints`]). Content, frames and covariances are the
//! layer's ([`nrt_interface::odometry`]), converted by [`super::thymio_conv`].

use super::convert::Clocks;
use super::joints::{self, JointTarget};
use super::report::Reporter;
use super::thymio_conv::{self as conv, Frames};
use handoff::{
    CompanionPlacement, JointStateSample, NodeId, NrtOdomOut, OdomHandoff, OdomSample, RobotId,
    Twist2,
};
use nrt_engine::thymio::model;
use nrt_interface::hop_times::NrtHopTimers;
use nrt_interface::odom_thread::{self, OdomSink, OdomThread, Topic};
use nrt_interface::odometry::{self as odo, OdomSettings};
use r2r::builtin_interfaces::msg::Time;
use r2r::geometry_msgs::msg::TwistStamped;
use r2r::nav_msgs::msg::Odometry;
use r2r::sensor_msgs::msg::JointState;
use r2r::tf2_msgs::msg::TFMessage;
use r2r::{NativeMsg as WrappedNativeMsg, Publisher};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

/// The publishers of one robot (made by the NRT loop when the robot appears).
pub struct Ros2Out {
    /// `odom`.
    pub odom: Publisher<Odometry>,
    /// `joint_states`.
    pub joints: Publisher<JointState>,
    /// `~/cmd_vel_out` (the limited twist of every hand-off, whatever `odom_max_rate`).
    pub cmd_vel_out: Publisher<TwistStamped>,
}

/// What the publisher thread needs of one robot.
pub type OdomRobot = odom_thread::OdomRobot<Ros2Out>;

/// The robots whose extended joint states are published ([`super::joints`]).
type JointTable = Arc<Mutex<BTreeMap<RobotId, JointTarget>>>;

fn lock(joints: &JointTable) -> MutexGuard<'_, BTreeMap<RobotId, JointTarget>> {
    joints.lock().unwrap_or_else(|e| e.into_inner())
}

/// The robots whose odometry is published (with `/tf`) and those whose extended joint states are, shared by the
/// NRT loop and the publisher thread (a mutex the NRT side holds only to insert, remove or update an entry, and the
/// thread only while it publishes one sample).
#[derive(Clone)]
pub struct OdomTargets {
    robots: odom_thread::OdomTargets<Ros2Out>,
    tf: Publisher<TFMessage>,
    joints: JointTable,
}

impl OdomTargets {
    /// No robot yet; `/tf` is published with `tf`.
    pub fn new(tf: Publisher<TFMessage>) -> OdomTargets {
        OdomTargets {
            robots: odom_thread::OdomTargets::default(),
            tf,
            joints: JointTable::default(),
        }
    }

    /// Publishes the extended joint states of RT robot `robot` with `target` from now on.
    pub fn insert_joints(&self, robot: RobotId, target: JointTarget) {
        lock(&self.joints).insert(robot, target);
    }

    /// Stops publishing the joint states of `robot`; once this returns, no publish on its
    /// publisher is in flight (it is handed back, to be destroyed).
    pub fn remove_joints(&self, robot: RobotId) -> Option<JointTarget> {
        lock(&self.joints).remove(&robot)
    }
}

impl std::ops::Deref for OdomTargets {
    type Target = odom_thread::OdomTargets<Ros2Out>;

    fn deref(&self) -> &Self::Target {
        &self.robots
    }
}

/// The messages of one robot, kept in rcl's native form and refilled per sample.
struct Natives {
    generation: u64,
    odom: WrappedNativeMsg<Odometry>,
    tf: WrappedNativeMsg<TFMessage>,
    joints: WrappedNativeMsg<JointState>,
    cmd_vel_out: WrappedNativeMsg<TwistStamped>,
    /// `tf` starts with odom → base_link (`enable_odom_tf`).
    odom_tf: bool,
    /// `tf` holds the two wheel transforms after it (`publish_model`).
    wheel_tf: bool,
}

impl Natives {
    /// Built from the layer's messages for a robot with `frames` and `settings` (allocates:
    /// once per robot and per change of its entry); the
    /// wheel transforms on `/tf` only with `wheel_tf`.
    fn new(frames: &Frames, settings: &OdomSettings, wheel_tf: bool, generation: u64) -> Natives {
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

/// What the publisher thread is given.
pub struct OdomPublisherConfig {
    /// The RT thread's odometry rings, one per group of robots (taken from the engine): a thread each.
    pub outs: Vec<NrtOdomOut>,
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

/// Starts the publisher threads, one per ring (stopped and joined when the result is dropped).
pub fn start(cfg: OdomPublisherConfig) -> std::io::Result<OdomThread> {
    let OdomTargets { robots, tf, joints } = cfg.targets;
    let reporter = cfg.reporter.clone();
    // one sink per thread: its own native messages and clocks (a publisher handle may publish from any thread)
    let sink = move |_group| {
        let clocks = Clocks::new().map_err(std::io::Error::other)?;
        let (tf, joints, reporter) = (tf.clone(), joints.clone(), reporter.clone());
        Ok(move || Sink {
            tf,
            joints,
            reporter,
            clocks,
            natives: BTreeMap::new(),
        })
    };
    let thread = OdomThread::start(
        "nrt-odom-pub",
        cfg.outs,
        robots,
        cfg.timers,
        cfg.placement,
        sink,
    )?;
    thread
        .placed()
        .report(&cfg.reporter, "odometry publisher thread");
    Ok(thread)
}

/// The ROS 2 sink; its native messages live on the thread.
struct Sink {
    tf: Publisher<TFMessage>,
    joints: JointTable,
    reporter: Reporter,
    clocks: Clocks,
    natives: BTreeMap<RobotId, Natives>,
}

/// The subscribers of `p` (`None` if they cannot be counted).
fn count<T: r2r::WrappedTypesupport + 'static>(p: &Publisher<T>) -> Option<usize> {
    p.get_inter_process_subscription_count().ok()
}

impl OdomSink for Sink {
    type Out = Ros2Out;
    type Rest = ();
    type Error = r2r::Error;

    fn count_tf(&self) -> Option<usize> {
        count(&self.tf)
    }

    fn count(&self, out: &Ros2Out, topic: Topic) -> Option<usize> {
        match topic {
            Topic::Odom => count(&out.odom),
            Topic::JointStates => count(&out.joints),
            Topic::CmdVelOut => count(&out.cmd_vel_out),
        }
    }

    fn prepare(&mut self, robot: RobotId, r: &OdomRobot, generation: u64) {
        if self
            .natives
            .get(&robot)
            .is_none_or(|n| n.generation != generation)
        {
            let fresh = Natives::new(&r.frames, &r.settings, r.wheel_tf, generation);
            self.natives.insert(robot, fresh);
        }
    }

    fn forget(&mut self, robot: RobotId) {
        self.natives.remove(&robot);
    }

    fn publish_cmd_vel_out(
        &mut self,
        robot: RobotId,
        r: &mut OdomRobot,
        h: &OdomHandoff,
    ) -> Result<(), r2r::Error> {
        let Some(n) = self.natives.get_mut(&robot) else {
            return Ok(());
        };
        n.fill_cmd_vel_out(&h.commanded, &self.clocks.stamp(h.handed_ns));
        r.out.cmd_vel_out.publish_native(&mut n.cmd_vel_out)
    }

    fn fill(&mut self, robot: RobotId, _: &OdomRobot, s: &OdomSample) {
        if let Some(n) = self.natives.get_mut(&robot) {
            n.fill(s, &self.clocks.stamp(s.t_ns));
        }
    }

    fn publish_odom(
        &mut self,
        robot: RobotId,
        r: &mut OdomRobot,
        _: &OdomSample,
    ) -> Result<(), r2r::Error> {
        match self.natives.get_mut(&robot) {
            Some(n) => r.out.odom.publish_native(&mut n.odom),
            None => Ok(()),
        }
    }

    fn rest(&mut self, _: RobotId, _: &OdomRobot, _: &OdomSample) {}

    fn publish_tf(&mut self, robot: RobotId, _: &mut ()) -> Result<(), r2r::Error> {
        match self.natives.get_mut(&robot) {
            // nothing on /tf when neither odom → base_link nor the wheels are the driver's
            Some(n) if n.tf.transforms.size > 0 => self.tf.publish_native(&mut n.tf),
            _ => Ok(()),
        }
    }

    fn publish_joint_states(
        &mut self,
        robot: RobotId,
        r: &mut OdomRobot,
        _: &mut (),
    ) -> Result<(), r2r::Error> {
        match self.natives.get_mut(&robot) {
            Some(n) => r.out.joints.publish_native(&mut n.joints),
            None => Ok(()),
        }
    }

    fn publish_joint(&mut self, s: &JointStateSample) {
        let table = lock(&self.joints);
        let Some(t) = table.get(&s.robot).filter(|t| t.node == s.node) else {
            return;
        };
        let m = joints::message(
            nrt_interface::joints::joint_state(s, &t.names, &t.owners),
            self.clocks.stamp(s.t_ns),
        );
        if let Err(e) = t.publisher.publish(&m) {
            self.reporter.warn(&format!(
                "node {}: cannot publish joint_states: {e}",
                s.node
            ));
        }
    }

    fn warn(&self, node: NodeId, what: &str, e: &r2r::Error) {
        self.reporter
            .warn(&format!("node {node}: cannot publish {what}: {e}"));
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
            let mut n = Natives::new(&frames, &settings, wheel_tf, 1);
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
