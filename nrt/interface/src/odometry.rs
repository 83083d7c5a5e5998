//! The odometry of a driven robot as ROS carries it: `odom` (nav_msgs/Odometry), `/tf` (odom → base_link and
//! base_link → the two wheel links, turned by the wheel angles: what robot_state_publisher would publish) and the
//! wheels' `joint_states`, from one RT sample; and the `odom_max_rate` limit of each front end's odometry
//! publisher thread.

use crate::frames::Frames;
use crate::geometry::{yaw, Header, Quaternion, Stamp, Transform, Vector3};
use handoff::{NodeId, OdomSample, Twist2};
use nrt_engine::engine::Engine;
use nrt_engine::thymio::calibration::{Calibration, WHEEL_RADIUS};
use nrt_engine::thymio::model;
use nrt_engine::thymio::odometry_params;
use nrt_engine::thymio::params::DriverParams;
use std::time::{Duration, Instant};

/// `nav_msgs/Odometry`.
#[derive(Debug, Clone, PartialEq)]
pub struct Odometry {
    /// Stamp and `odom` frame.
    pub header: Header,
    /// `base_link`.
    pub child_frame_id: String,
    /// Position \[m\].
    pub position: Vector3,
    /// Orientation.
    pub orientation: Quaternion,
    /// Pose covariance (row-major 6×6).
    pub pose_covariance: [f64; 36],
    /// Linear velocity \[m/s\].
    pub linear: Vector3,
    /// Angular velocity \[rad/s\].
    pub angular: Vector3,
    /// Twist covariance (row-major 6×6).
    pub twist_covariance: [f64; 36],
}

/// `sensor_msgs/JointState` of the two wheels.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct WheelJoints {
    /// Stamp (no frame).
    pub header: Header,
    /// The wheel joints, prefixed.
    pub name: Vec<String>,
    /// Angles \[rad\].
    pub position: Vec<f64>,
    /// Velocities \[rad/s\].
    pub velocity: Vec<f64>,
}

/// What one robot's odometry messages are made with, from its calibration and its driver parameters (live): the
/// covariances of `odom` (`pose_covariance_diagonal`, `twist_covariance_diagonal`; unset, ROS-Thymio's: pose
/// unknown, `covariance[0] = -1`, twist from the wheels' dead band), whether `odom → base_link` goes on `/tf`
/// (`enable_odom_tf`), and the wheels' axis. Each front end's NRT side hands a changed one to its odometry
/// publisher thread ([`OdomSettings::of`]).
#[derive(Debug, Clone, PartialEq)]
pub struct OdomSettings {
    /// The robot's calibration (axis length; dead band of the default twist covariance).
    pub calibration: Calibration,
    /// `odom`'s pose covariance (row-major 6×6).
    pub pose_covariance: [f64; 36],
    /// `odom`'s twist covariance (row-major 6×6).
    pub twist_covariance: [f64; 36],
    /// `odom → base_link` on `/tf`.
    pub odom_tf: bool,
}

impl OdomSettings {
    /// From a calibration and driver parameters (diagonals already checked by the engine).
    ///
    /// # Example
    ///
    /// ```
    /// use nrt_engine::thymio::calibration::Calibration;
    /// use nrt_engine::thymio::params::DriverParams;
    /// use nrt_interface::odometry::OdomSettings;
    ///
    /// let ros_thymio = OdomSettings::new(&Calibration::real(), &DriverParams::default());
    /// assert_eq!(ros_thymio.pose_covariance[0], -1.0);
    /// let params = DriverParams {
    ///     pose_covariance_diagonal: vec![0.001, 0.001, 1e6, 1e6, 1e6, 0.03],
    ///     enable_odom_tf: false,
    ///     ..Default::default()
    /// };
    /// let nav2 = OdomSettings::new(&Calibration::real(), &params);
    /// assert_eq!((nav2.pose_covariance[0], nav2.pose_covariance[35]), (0.001, 0.03));
    /// assert!(!nav2.odom_tf);
    /// ```
    pub fn new(cal: &Calibration, params: &DriverParams) -> OdomSettings {
        let pose_covariance = odometry_params::diagonal(&params.pose_covariance_diagonal)
            .map_or_else(ros_thymio_pose_covariance, odometry_params::covariance);
        let twist_covariance = odometry_params::diagonal(&params.twist_covariance_diagonal)
            .map_or_else(
                || ros_thymio_twist_covariance(cal),
                odometry_params::covariance,
            );
        OdomSettings {
            calibration: cal.clone(),
            pose_covariance,
            twist_covariance,
            odom_tf: params.enable_odom_tf,
        }
    }

    /// Driven robot `id`'s settings now (`None`: not a driven robot).
    pub fn of(engine: &Engine, id: NodeId) -> Option<OdomSettings> {
        let slot = engine.robots().of_node(id)?;
        Some(OdomSettings::new(
            &slot.calibration,
            engine.robot_params(id),
        ))
    }
}

/// ROS-Thymio's pose covariance: unknown (`covariance[0] = -1`).
fn ros_thymio_pose_covariance() -> [f64; 36] {
    let mut c = [0.0; 36];
    c[0] = -1.0;
    c
}

/// ROS-Thymio's twist covariance, from the wheels' dead band `b` (m/s): `0.5·b²` on x, `0.5·b²/L²` on yaw.
fn ros_thymio_twist_covariance(cal: &Calibration) -> [f64; 36] {
    let b = (cal.left.parameters[0] * cal.left.deadband
        + cal.right.parameters[0] * cal.right.deadband)
        / 2.0;
    let mut c = [0.0; 36];
    c[0] = 0.5 * b * b;
    c[35] = 0.5 * b * b / (cal.axis_length * cal.axis_length);
    c
}

/// `odom`: pose and twist of the RT odometry, with the robot's covariances.
pub fn odometry(s: &OdomSample, stamp: Stamp, f: &Frames, settings: &OdomSettings) -> Odometry {
    Odometry {
        header: Header::new(stamp, f.odom.clone()),
        child_frame_id: f.base.clone(),
        position: [s.pose.x, s.pose.y, 0.0],
        orientation: yaw(s.pose.theta),
        pose_covariance: settings.pose_covariance,
        linear: [s.twist.linear, 0.0, 0.0],
        angular: [0.0, 0.0, s.twist.angular],
        twist_covariance: settings.twist_covariance,
    }
}

/// `odom → base_link`.
pub fn odom_transform(s: &OdomSample, stamp: Stamp, f: &Frames) -> Transform {
    Transform {
        header: Header::new(stamp, f.odom.clone()),
        child_frame_id: f.base.clone(),
        translation: [s.pose.x, s.pose.y, 0.0],
        rotation: yaw(s.pose.theta),
    }
}

/// `base_link → <side>_wheel_link` (left, right): the continuous wheel joints of the URDF, half the axis
/// (`axis_length`) from the centre, turned by the wheel angles of `joint_states`.
pub fn wheel_transforms(
    s: &OdomSample,
    stamp: Stamp,
    f: &Frames,
    axis_length: f64,
) -> [Transform; 2] {
    [0, 1].map(|i| {
        let sign = if i == 0 { 1.0 } else { -1.0 };
        Transform {
            header: Header::new(stamp, f.base.clone()),
            child_frame_id: f.wheels[i].clone(),
            translation: [0.0, sign * axis_length / 2.0, WHEEL_RADIUS],
            rotation: model::quaternion([0.0, s.wheel_pos[i], 0.0]),
        }
    })
}

/// What one sample puts on `/tf`: odom → base_link (unless `enable_odom_tf` is off), then the two wheels.
pub fn transforms(
    s: &OdomSample,
    stamp: Stamp,
    f: &Frames,
    settings: &OdomSettings,
) -> Vec<Transform> {
    settings
        .odom_tf
        .then(|| odom_transform(s, stamp, f))
        .into_iter()
        .chain(wheel_transforms(
            s,
            stamp,
            f,
            settings.calibration.axis_length,
        ))
        .collect()
}

/// `joint_states` of the wheels.
pub fn joint_states(s: &OdomSample, stamp: Stamp, f: &Frames) -> WheelJoints {
    WheelJoints {
        header: Header::new(stamp, ""),
        name: f.joints.to_vec(),
        position: s.wheel_pos.to_vec(),
        velocity: s.wheel_vel.to_vec(),
    }
}

/// The driver node's `~/cmd_vel_out` (diff_drive_controller's name), under the robot's namespace.
pub const CMD_VEL_OUT: &str = "thymio_driver/cmd_vel_out";

/// `geometry_msgs/TwistStamped`.
#[derive(Debug, Clone, PartialEq)]
pub struct TwistStamped {
    /// Stamp and the robot's base frame.
    pub header: Header,
    /// Linear velocity \[m/s\].
    pub linear: Vector3,
    /// Angular velocity \[rad/s\].
    pub angular: Vector3,
}

/// `~/cmd_vel_out`: the twist the RT loop commanded (`OdomHandoff::commanded`: its owner's command after the
/// filters and the motion limits), stamped `stamp` (the hand-off's time) in the robot's base frame. Published by
/// each front end's odometry publisher thread while the robot's `publish_limited_velocity` is true
/// ([`publishes_limited_velocity`]).
pub fn cmd_vel_out(commanded: &Twist2, stamp: Stamp, f: &Frames) -> TwistStamped {
    TwistStamped {
        header: Header::new(stamp, f.base.clone()),
        linear: [commanded.linear, 0.0, 0.0],
        angular: [0.0, 0.0, commanded.angular],
    }
}

/// Whether robot `id`'s `~/cmd_vel_out` is published now (its `publish_limited_velocity`, live): each front end's
/// NRT side hands this to its odometry publisher thread, which publishes or not (the publisher exists while the
/// robot is driven: the gate is live, the topic is not re-created).
pub fn publishes_limited_velocity(engine: &Engine, id: NodeId) -> bool {
    engine.robot_params(id).publish_limited_velocity
}

/// `odom_max_rate` \[Hz\] of one robot's odometry: at most that many samples per second; ≤ 0 (or too small to make
/// a gap): every sample.
#[derive(Debug, Clone, Default)]
pub struct RateLimit {
    gap: Option<Duration>,
    last: Option<Instant>,
}

impl RateLimit {
    /// A limit of `max_rate` samples per second.
    pub fn new(max_rate: f64) -> RateLimit {
        RateLimit {
            gap: (max_rate > 0.0)
                .then(|| Duration::try_from_secs_f64(1.0 / max_rate).ok())
                .flatten(),
            last: None,
        }
    }

    /// Whether a sample at `now` is published (it then counts as the last one).
    pub fn admit(&mut self, now: Instant) -> bool {
        if let (Some(gap), Some(last)) = (self.gap, self.last) {
            if now.duration_since(last) < gap {
                return false;
            }
        }
        self.last = Some(now);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use msgs::thymio::AXIS_LENGTH;

    #[test]
    fn cmd_vel_out_is_the_commanded_twist_in_the_base_frame() {
        let f = Frames::new("t1", "odom", "base_link", ["l", "r"]);
        let m = cmd_vel_out(
            &Twist2 {
                linear: 0.12,
                angular: -0.5,
            },
            Duration::new(5, 7),
            &f,
        );
        assert_eq!(m.header, Header::new(Duration::new(5, 7), f.base.clone()));
        assert_eq!((m.linear, m.angular), ([0.12, 0.0, 0.0], [0.0, 0.0, -0.5]));
    }
    use handoff::{Pose2, Twist2};

    fn sample() -> OdomSample {
        OdomSample {
            pose: Pose2 {
                x: 1.0,
                y: -0.5,
                theta: std::f64::consts::FRAC_PI_2,
            },
            twist: Twist2 {
                linear: 0.1,
                angular: 0.2,
            },
            wheel_pos: [std::f64::consts::PI, -1.0],
            wheel_vel: [0.3, 0.4],
            ..OdomSample::default()
        }
    }

    #[test]
    fn covariances_and_odom_tf_follow_the_parameters() {
        let (s, f, cal) = (
            sample(),
            Frames::new("r1", "odom", "base_link", ["l", "r"]),
            Calibration::real(),
        );
        let params = DriverParams {
            pose_covariance_diagonal: vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0],
            twist_covariance_diagonal: vec![0.5; 6],
            enable_odom_tf: false,
            ..Default::default()
        };
        let settings = OdomSettings::new(&cal, &params);
        let o = odometry(&s, Stamp::ZERO, &f, &settings);
        for i in 0..6 {
            assert_eq!(o.pose_covariance[i * 7], (i + 1) as f64);
            assert_eq!(o.twist_covariance[i * 7], 0.5);
        }
        assert_eq!(o.pose_covariance.iter().filter(|v| **v != 0.0).count(), 6);
        // no odom -> base_link: the wheels only, hanging from base_link
        let t = transforms(&s, Stamp::ZERO, &f, &settings);
        assert_eq!(t.len(), 2);
        assert!(t.iter().all(|t| t.header.frame_id == "r1/base_link"));
        // one diagonal set, the other ROS-Thymio's
        let params = DriverParams {
            twist_covariance_diagonal: vec![0.5; 6],
            ..Default::default()
        };
        let o = odometry(&s, Stamp::ZERO, &f, &OdomSettings::new(&cal, &params));
        assert_eq!(o.pose_covariance[0], -1.0);
        assert_eq!(o.twist_covariance[35], 0.5);
    }

    #[test]
    fn odometry_and_tf_carry_the_sample() {
        let s = sample();
        let f = Frames::new("r1", "odom", "base_link", ["l", "r"]);
        let cal = Calibration::real();
        let settings = OdomSettings::new(&cal, &DriverParams::default());
        let o = odometry(&s, Stamp::from_secs(5), &f, &settings);
        assert_eq!(o.header, Header::new(Stamp::from_secs(5), "r1/odom"));
        assert_eq!(o.child_frame_id, "r1/base_link");
        assert_eq!(o.position, [1.0, -0.5, 0.0]);
        assert!((o.orientation[2] - 0.5f64.sqrt()).abs() < 1e-12);
        assert_eq!(o.pose_covariance[0], -1.0);
        assert_eq!((o.linear[0], o.angular[2]), (0.1, 0.2));
        let b = (cal.left.parameters[0] * cal.left.deadband
            + cal.right.parameters[0] * cal.right.deadband)
            / 2.0;
        assert_eq!(o.twist_covariance[0], 0.5 * b * b);
        assert_eq!(
            o.twist_covariance[35],
            0.5 * b * b / (cal.axis_length * cal.axis_length)
        );
        let t = transforms(&s, Stamp::ZERO, &f, &settings);
        assert_eq!(t.len(), 3);
        assert_eq!(t[0].translation[1], -0.5);
        assert_eq!(t[0].header.frame_id, "r1/odom");
        assert_eq!(t[1].child_frame_id, f.wheels[0]);
        let j = joint_states(&s, Stamp::ZERO, &f);
        assert_eq!(j.name, ["r1/l", "r1/r"]);
        assert_eq!((j.position[1], j.velocity[0]), (-1.0, 0.3));
    }

    #[test]
    fn wheel_links_hang_at_half_axis_and_turn_with_the_wheel_angle() {
        let f = Frames::new(
            "/t1/",
            "odom",
            "base_link",
            ["left_wheel_joint", "right_wheel_joint"],
        );
        let [l, r] = wheel_transforms(&sample(), Stamp::ZERO, &f, AXIS_LENGTH);
        assert_eq!(l.header.frame_id, "t1/base_link");
        assert_eq!(l.child_frame_id, "t1/left_wheel_link");
        assert_eq!(r.child_frame_id, "t1/right_wheel_link");
        assert!((l.translation[1] - 0.04675).abs() < 1e-12);
        assert!((r.translation[1] + 0.04675).abs() < 1e-12);
        assert_eq!(l.translation[2], WHEEL_RADIUS);
        // half a turn about y; the right wheel −1 rad about y
        assert!((l.rotation[1] - 1.0).abs() < 1e-12);
        assert!((r.rotation[1] + 0.5f64.sin()).abs() < 1e-12);
        assert_eq!((r.rotation[0], r.rotation[2]), (0.0, 0.0));
    }

    #[test]
    fn the_rate_limit_lets_one_sample_through_per_gap() {
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let mut every = RateLimit::new(0.0);
        assert!(every.admit(t0) && every.admit(t0));
        let mut ten = RateLimit::new(10.0);
        assert!(ten.admit(t0));
        assert!(!ten.admit(t0 + ms(50)));
        assert!(ten.admit(t0 + ms(100)));
        assert!(!ten.admit(t0 + ms(150)));
        assert!(ten.admit(t0 + ms(250)));
        // too small a rate for a gap: every sample
        let mut tiny = RateLimit::new(f64::MIN_POSITIVE);
        assert!(tiny.admit(t0) && tiny.admit(t0));
    }
}
