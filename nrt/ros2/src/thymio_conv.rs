//! Thymio driver values → ROS messages (ros-aseba-interface.md §3.3), free of any node: the
//! interface in [`super::thymio`] stamps and publishes them.

use msgs::handoff::OdomSample;
use nrt_engine::thymio::calibration::{Calibration, WHEEL_RADIUS};
use nrt_engine::thymio::model::{self, prefixed, FIXED_FRAMES};
use nrt_engine::thymio::sensors::{
    self, GROUND_RANGE_MAX, GROUND_RANGE_MIN, PROXIMITY_RANGE_MAX, PROXIMITY_RANGE_MIN, SENSOR_FOV,
};
use r2r::builtin_interfaces::msg::Time;
use r2r::geometry_msgs::msg::{
    Point, Pose, PoseWithCovariance, Quaternion, Transform, TransformStamped, Twist,
    TwistWithCovariance, Vector3,
};
use r2r::nav_msgs::msg::Odometry;
use r2r::sensor_msgs::msg::{Imu, JointState, Joy, LaserScan, Range, Temperature};
use r2r::std_msgs::msg::Header;

/// `sensor_msgs/Range.INFRARED`.
pub const INFRARED: u8 = 1;

/// A header.
pub fn header(stamp: &Time, frame_id: String) -> Header {
    Header {
        stamp: stamp.clone(),
        frame_id,
    }
}

fn yaw(theta: f64) -> Quaternion {
    let (s, c) = (theta / 2.0).sin_cos();
    Quaternion {
        x: 0.0,
        y: 0.0,
        z: s,
        w: c,
    }
}

/// Frames of one robot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frames {
    /// Prefix (namespace or `tf_prefix`).
    pub prefix: String,
    /// `odom` frame, prefixed.
    pub odom: String,
    /// `base_link` frame, prefixed.
    pub base: String,
    /// Wheel joints, prefixed.
    pub joints: [String; 2],
    /// Wheel links (left, right), prefixed.
    pub wheels: [String; 2],
}

impl Frames {
    /// The frames of a robot with `prefix`.
    pub fn new(prefix: &str, odom: &str, base: &str, joints: [&str; 2]) -> Frames {
        Frames {
            prefix: prefix.trim_matches('/').to_owned(),
            odom: prefixed(prefix, odom),
            base: prefixed(prefix, base),
            joints: joints.map(|j| prefixed(prefix, j)),
            wheels: ["left", "right"].map(|side| prefixed(prefix, &model::wheel_link(side))),
        }
    }

    /// A link of the robot model, prefixed.
    pub fn link(&self, name: &str) -> String {
        prefixed(&self.prefix, name)
    }
}

/// `odom`: pose and twist of the RT odometry; pose covariance unknown (−1), twist covariance
/// from the wheels' dead band (as ROS-Thymio).
pub fn odometry(s: &OdomSample, stamp: &Time, f: &Frames, cal: &Calibration) -> Odometry {
    let b = (cal.left.parameters[0] * cal.left.deadband
        + cal.right.parameters[0] * cal.right.deadband)
        / 2.0;
    let mut pose_cov = vec![0.0; 36];
    pose_cov[0] = -1.0;
    let mut twist_cov = vec![0.0; 36];
    twist_cov[0] = 0.5 * b * b;
    twist_cov[35] = 0.5 * b * b / (cal.axis_length * cal.axis_length);
    Odometry {
        header: header(stamp, f.odom.clone()),
        child_frame_id: f.base.clone(),
        pose: PoseWithCovariance {
            pose: Pose {
                position: Point {
                    x: s.pose.x,
                    y: s.pose.y,
                    z: 0.0,
                },
                orientation: yaw(s.pose.theta),
            },
            covariance: pose_cov,
        },
        twist: TwistWithCovariance {
            twist: Twist {
                linear: Vector3 {
                    x: s.twist.linear,
                    y: 0.0,
                    z: 0.0,
                },
                angular: Vector3 {
                    x: 0.0,
                    y: 0.0,
                    z: s.twist.angular,
                },
            },
            covariance: twist_cov,
        },
    }
}

/// `odom → base_link`.
pub fn odom_transform(s: &OdomSample, stamp: &Time, f: &Frames) -> TransformStamped {
    TransformStamped {
        header: header(stamp, f.odom.clone()),
        child_frame_id: f.base.clone(),
        transform: Transform {
            translation: Vector3 {
                x: s.pose.x,
                y: s.pose.y,
                z: 0.0,
            },
            rotation: yaw(s.pose.theta),
        },
    }
}

/// `base_link → <side>_wheel_link` (left, right): the continuous wheel joints of the URDF,
/// turned by the wheel angles of `joint_states` (what robot_state_publisher would publish).
pub fn wheel_transforms(
    s: &OdomSample,
    stamp: &Time,
    f: &Frames,
    axis_length: f64,
) -> [TransformStamped; 2] {
    [0, 1].map(|i| {
        let sign = if i == 0 { 1.0 } else { -1.0 };
        let q = model::quaternion([0.0, s.wheel_pos[i], 0.0]);
        TransformStamped {
            header: header(stamp, f.base.clone()),
            child_frame_id: f.wheels[i].clone(),
            transform: Transform {
                translation: Vector3 {
                    x: 0.0,
                    y: sign * axis_length / 2.0,
                    z: WHEEL_RADIUS,
                },
                rotation: Quaternion {
                    x: q[0],
                    y: q[1],
                    z: q[2],
                    w: q[3],
                },
            },
        }
    })
}

/// `joint_states` of the wheels.
pub fn joint_states(s: &OdomSample, stamp: &Time, f: &Frames) -> JointState {
    JointState {
        header: header(stamp, String::new()),
        name: f.joints.to_vec(),
        position: s.wheel_pos.to_vec(),
        velocity: s.wheel_vel.to_vec(),
        effort: vec![],
    }
}

/// The static transforms of the sensor frames (`/tf_static`).
pub fn static_transforms(stamp: &Time, f: &Frames) -> Vec<TransformStamped> {
    FIXED_FRAMES
        .iter()
        .map(|fr| {
            let q = model::quaternion(fr.rpy);
            TransformStamped {
                header: header(stamp, f.link(fr.parent)),
                child_frame_id: f.link(fr.name),
                transform: Transform {
                    translation: Vector3 {
                        x: fr.xyz[0],
                        y: fr.xyz[1],
                        z: fr.xyz[2],
                    },
                    rotation: Quaternion {
                        x: q[0],
                        y: q[1],
                        z: q[2],
                        w: q[3],
                    },
                },
            }
        })
        .collect()
}

/// One horizontal proximity sensor (REP-117: +inf nothing seen, −inf saturated).
pub fn proximity(raw: i16, cal: &Calibration, index: usize, stamp: &Time, frame: String) -> Range {
    Range {
        header: header(stamp, frame),
        radiation_type: INFRARED,
        field_of_view: SENSOR_FOV,
        min_range: PROXIMITY_RANGE_MIN,
        max_range: PROXIMITY_RANGE_MAX,
        range: sensors::proximity_range(raw, &cal.proximity[index]),
        ..Default::default()
    }
}

/// The 5 front sensors as a laser scan, right to left; empty sectors are +inf, not obstacles.
pub fn laser(raw: &[i16; 7], cal: &Calibration, stamp: &Time, frame: String) -> LaserScan {
    let ranges: [f32; 7] =
        std::array::from_fn(|i| sensors::proximity_range(raw[i], &cal.proximity[i]));
    let scan = sensors::laser_ranges(&ranges);
    LaserScan {
        header: header(stamp, frame),
        angle_min: sensors::LASER_ANGLE_MIN,
        angle_max: -sensors::LASER_ANGLE_MIN,
        angle_increment: sensors::LASER_ANGLE_INCREMENT,
        time_increment: 0.0,
        scan_time: 0.1,
        range_min: PROXIMITY_RANGE_MIN + sensors::LASER_SHIFT,
        range_max: PROXIMITY_RANGE_MAX + sensors::LASER_SHIFT,
        ranges: scan.to_vec(),
        intensities: (0..5).map(|k| f32::from(raw[4 - k])).collect(),
    }
}

/// One ground sensor (REP-117: −inf when the ground reflects, +inf over a void or black).
pub fn ground(delta: i16, threshold: i16, stamp: &Time, frame: String) -> Range {
    Range {
        header: header(stamp, frame),
        radiation_type: INFRARED,
        field_of_view: SENSOR_FOV,
        min_range: GROUND_RANGE_MIN,
        max_range: GROUND_RANGE_MAX,
        range: sensors::ground_range(delta, threshold),
        ..Default::default()
    }
}

/// `imu`: linear acceleration only (orientation and angular velocity unknown: covariance −1).
pub fn imu(acc: [i16; 3], stamp: &Time, frame: String) -> Imu {
    let a = sensors::imu_acceleration(acc);
    let mut unknown = vec![0.0; 9];
    unknown[0] = -1.0;
    let mut acc_cov = vec![0.0; 9];
    acc_cov[0] = 0.07;
    acc_cov[4] = 0.07;
    acc_cov[8] = 0.07;
    Imu {
        header: header(stamp, frame),
        orientation: Quaternion {
            x: 0.0,
            y: 0.0,
            z: 0.0,
            w: 1.0,
        },
        orientation_covariance: unknown.clone(),
        angular_velocity: Vector3::default(),
        angular_velocity_covariance: unknown,
        linear_acceleration: Vector3 {
            x: a[0],
            y: a[1],
            z: a[2],
        },
        linear_acceleration_covariance: acc_cov,
    }
}

/// `temperature`.
pub fn temperature(raw: i16, stamp: &Time, frame: String) -> Temperature {
    Temperature {
        header: header(stamp, frame),
        temperature: sensors::temperature_celsius(raw),
        variance: 0.01,
    }
}

/// `buttons` (Joy).
pub fn joy(values: [i16; 5], stamp: &Time) -> Joy {
    Joy {
        header: header(stamp, String::new()),
        axes: vec![],
        buttons: sensors::joy_buttons(values).to_vec(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use msgs::handoff::{LinkId, NodeId, Pose2, RobotId, Twist2};

    #[test]
    fn wheel_links_hang_at_half_axis_and_turn_with_the_wheel_angle() {
        let f = Frames::new(
            "/t1/",
            "odom",
            "base_link",
            ["left_wheel_joint", "right_wheel_joint"],
        );
        let s = OdomSample {
            robot: RobotId(0),
            node: NodeId(1),
            link: LinkId(0),
            seq: 0,
            wire_ns: 0,
            t_ns: 0,
            robot_ticks: None,
            dt: 0.05,
            pose: Pose2::default(),
            twist: Twist2::default(),
            wheel_pos: [std::f64::consts::PI, -1.0],
            wheel_vel: [0.0; 2],
        };
        let [l, r] = wheel_transforms(&s, &Time { sec: 0, nanosec: 0 }, &f, 0.0935);
        assert_eq!(l.header.frame_id, "t1/base_link");
        assert_eq!(l.child_frame_id, "t1/left_wheel_link");
        assert_eq!(r.child_frame_id, "t1/right_wheel_link");
        assert!((l.transform.translation.y - 0.04675).abs() < 1e-12);
        assert!((r.transform.translation.y + 0.04675).abs() < 1e-12);
        assert_eq!(l.transform.translation.z, WHEEL_RADIUS);
        // half a turn about y; the right wheel −1 rad about y
        assert!((l.transform.rotation.y - 1.0).abs() < 1e-12);
        assert!((r.transform.rotation.y + 0.5f64.sin()).abs() < 1e-12);
        assert_eq!((r.transform.rotation.x, r.transform.rotation.z), (0.0, 0.0));
    }
}
