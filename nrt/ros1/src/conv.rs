//! Engine state and RT samples → ROS 1 messages (the same content as the ROS 2 front end: ros-aseba-interface.md
//! §2.3, §3.3; REP-117 ranges), and the clocks that stamp them.

use crate::ros1_msgs::{
    asebaros_msgs as am, diagnostic_msgs as dm, geometry_msgs as gm, nav_msgs, sensor_msgs as sm,
    std_msgs,
};
use msgs::handoff::{monotonic_ns, OdomSample};
use nrt_engine::diagnostics::DiagnosticStatus;
use nrt_engine::network::{NetworkManager, Node, NodeState};
use nrt_engine::thymio::calibration::{Calibration, WHEEL_RADIUS};
use nrt_engine::thymio::model::{self, prefixed};
use nrt_engine::thymio::sensors::{self, PROXIMITY_RANGE_MAX, PROXIMITY_RANGE_MIN, SENSOR_FOV};
use roslibrust::codegen::integral_types::Time;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// `sensor_msgs/Range.INFRARED`.
pub const INFRARED: u8 = 1;

/// A duration since the epoch as ROS 1 `time` (saturating).
pub fn time(since_epoch: Duration) -> Time {
    Time {
        secs: i32::try_from(since_epoch.as_secs()).unwrap_or(i32::MAX),
        nsecs: since_epoch.subsec_nanos() as i32,
    }
}

/// The system time now.
pub fn now() -> Time {
    time(
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default(),
    )
}

/// The system time of an RT receive stamp (CLOCK_MONOTONIC ns; 0 = unknown, taken as now).
pub fn stamp(stamp_ns: u64) -> Time {
    let system_now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    if stamp_ns == 0 {
        return time(system_now);
    }
    let age = Duration::from_nanos(monotonic_ns().saturating_sub(stamp_ns));
    time(system_now.saturating_sub(age))
}

/// A header.
pub fn header(stamp: Time, frame_id: String) -> std_msgs::Header {
    std_msgs::Header {
        seq: 0,
        stamp,
        frame_id,
    }
}

/// One node as `asebaros_msgs/Node`.
pub fn node(n: &Node) -> am::Node {
    am::Node {
        id: n.id.0,
        name: n.name().to_owned(),
        name_space: n.namespace().to_owned(),
        running: n.script.is_some(),
        ignored: matches!(n.state, NodeState::Ignored(_)),
        connected: n.connected,
    }
}

/// The bridged nodes (`aseba/nodes`), plus the ignored ones when `ignored` is set (`aseba/get_nodes`).
pub fn node_list(net: &NetworkManager, ignored: bool) -> am::NodeList {
    am::NodeList {
        nodes: net
            .nodes()
            .filter(|n| n.is_bridged() || (ignored && matches!(n.state, NodeState::Ignored(_))))
            .map(node)
            .collect(),
    }
}

/// `<ns>/aseba/description`: the node's variables, and the constants and events of the script loaded on it.
pub fn description(n: &Node) -> am::NodeDescription {
    let script = n.script.as_ref();
    am::NodeDescription {
        id: n.id.0,
        name: n.name().to_owned(),
        constants: script
            .map(|s| {
                s.constants
                    .iter()
                    .map(|(name, value)| am::Constant {
                        name: name.clone(),
                        value: *value,
                    })
                    .collect()
            })
            .unwrap_or_default(),
        events: script
            .map(|s| s.events.iter().map(|(name, _)| name.clone()).collect())
            .unwrap_or_default(),
        variables: n.variable_names(),
    }
}

/// Frames of one robot (prefixed by its namespace or `tf_prefix`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frames {
    /// The prefix.
    pub prefix: String,
    /// `odom`.
    pub odom: String,
    /// `base_link`.
    pub base: String,
    /// Wheel joints.
    pub joints: [String; 2],
    /// Wheel links (left, right).
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

fn yaw(theta: f64) -> gm::Quaternion {
    let (s, c) = (theta / 2.0).sin_cos();
    gm::Quaternion {
        x: 0.0,
        y: 0.0,
        z: s,
        w: c,
    }
}

fn vector(x: f64, y: f64, z: f64) -> gm::Vector3 {
    gm::Vector3 { x, y, z }
}

/// `odom`: pose and twist of the RT odometry; pose covariance unknown (−1), twist covariance from the wheels'
/// dead band (as ROS-Thymio).
pub fn odometry(s: &OdomSample, stamp: Time, f: &Frames, cal: &Calibration) -> nav_msgs::Odometry {
    let b = (cal.left.parameters[0] * cal.left.deadband
        + cal.right.parameters[0] * cal.right.deadband)
        / 2.0;
    let mut pose_cov = [0.0; 36];
    pose_cov[0] = -1.0;
    let mut twist_cov = [0.0; 36];
    twist_cov[0] = 0.5 * b * b;
    twist_cov[35] = 0.5 * b * b / (cal.axis_length * cal.axis_length);
    nav_msgs::Odometry {
        header: header(stamp, f.odom.clone()),
        child_frame_id: f.base.clone(),
        pose: gm::PoseWithCovariance {
            pose: gm::Pose {
                position: gm::Point {
                    x: s.pose.x,
                    y: s.pose.y,
                    z: 0.0,
                },
                orientation: yaw(s.pose.theta),
            },
            covariance: pose_cov,
        },
        twist: gm::TwistWithCovariance {
            twist: gm::Twist {
                linear: vector(s.twist.linear, 0.0, 0.0),
                angular: vector(0.0, 0.0, s.twist.angular),
            },
            covariance: twist_cov,
        },
    }
}

/// `/tf`: odom → base_link, then base_link → the two wheel links (turned by the wheel angles).
pub fn transforms(
    s: &OdomSample,
    stamp: Time,
    f: &Frames,
    axis_length: f64,
) -> Vec<gm::TransformStamped> {
    let base = gm::TransformStamped {
        header: header(stamp.clone(), f.odom.clone()),
        child_frame_id: f.base.clone(),
        transform: gm::Transform {
            translation: vector(s.pose.x, s.pose.y, 0.0),
            rotation: yaw(s.pose.theta),
        },
    };
    let wheels = [0, 1].map(|i| {
        let sign = if i == 0 { 1.0 } else { -1.0 };
        let q = model::quaternion([0.0, s.wheel_pos[i], 0.0]);
        gm::TransformStamped {
            header: header(stamp.clone(), f.base.clone()),
            child_frame_id: f.wheels[i].clone(),
            transform: gm::Transform {
                translation: vector(0.0, sign * axis_length / 2.0, WHEEL_RADIUS),
                rotation: gm::Quaternion {
                    x: q[0],
                    y: q[1],
                    z: q[2],
                    w: q[3],
                },
            },
        }
    });
    std::iter::once(base).chain(wheels).collect()
}

/// `joint_states` of the wheels.
pub fn joint_states(s: &OdomSample, stamp: Time, f: &Frames) -> sm::JointState {
    sm::JointState {
        header: header(stamp, String::new()),
        name: f.joints.to_vec(),
        position: s.wheel_pos.to_vec(),
        velocity: s.wheel_vel.to_vec(),
        effort: vec![],
    }
}

/// One horizontal proximity sensor (REP-117: +inf nothing seen, −inf saturated).
pub fn proximity(
    raw: i16,
    cal: &Calibration,
    index: usize,
    stamp: Time,
    frame: String,
) -> sm::Range {
    sm::Range {
        header: header(stamp, frame),
        radiation_type: INFRARED,
        field_of_view: SENSOR_FOV,
        min_range: PROXIMITY_RANGE_MIN,
        max_range: PROXIMITY_RANGE_MAX,
        range: sensors::proximity_range(raw, &cal.proximity[index]),
    }
}

/// The 5 front sensors as a laser scan, right to left; empty sectors are +inf.
pub fn laser(raw: &[i16; 7], cal: &Calibration, stamp: Time, frame: String) -> sm::LaserScan {
    let ranges: [f32; 7] =
        std::array::from_fn(|i| sensors::proximity_range(raw[i], &cal.proximity[i]));
    sm::LaserScan {
        header: header(stamp, frame),
        angle_min: sensors::LASER_ANGLE_MIN,
        angle_max: -sensors::LASER_ANGLE_MIN,
        angle_increment: sensors::LASER_ANGLE_INCREMENT,
        time_increment: 0.0,
        scan_time: 0.1,
        range_min: PROXIMITY_RANGE_MIN + sensors::LASER_SHIFT,
        range_max: PROXIMITY_RANGE_MAX + sensors::LASER_SHIFT,
        ranges: sensors::laser_ranges(&ranges).to_vec(),
        intensities: (0..5).map(|k| f32::from(raw[4 - k])).collect(),
    }
}

/// The static transforms of the sensor and body frames (`/tf_static`), as the ROS 2 front end publishes them.
pub fn static_transforms(stamp: Time, f: &Frames) -> Vec<gm::TransformStamped> {
    model::FIXED_FRAMES
        .iter()
        .map(|fr| {
            let q = model::quaternion(fr.rpy);
            gm::TransformStamped {
                header: header(stamp.clone(), f.link(fr.parent)),
                child_frame_id: f.link(fr.name),
                transform: gm::Transform {
                    translation: vector(fr.xyz[0], fr.xyz[1], fr.xyz[2]),
                    rotation: gm::Quaternion {
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

/// `imu`: linear acceleration only (orientation and angular velocity unknown: covariance −1).
pub fn imu(acc: [i16; 3], stamp: Time, frame: String) -> sm::Imu {
    let a = sensors::imu_acceleration(acc);
    let mut unknown = [0.0; 9];
    unknown[0] = -1.0;
    let mut acc_cov = [0.0; 9];
    for i in [0, 4, 8] {
        acc_cov[i] = 0.07;
    }
    sm::Imu {
        header: header(stamp, frame),
        orientation: gm::Quaternion {
            x: 0.0,
            y: 0.0,
            z: 0.0,
            w: 1.0,
        },
        orientation_covariance: unknown,
        angular_velocity: vector(0.0, 0.0, 0.0),
        angular_velocity_covariance: unknown,
        linear_acceleration: vector(a[0], a[1], a[2]),
        linear_acceleration_covariance: acc_cov,
    }
}

/// `temperature`.
pub fn temperature(raw: i16, stamp: Time, frame: String) -> sm::Temperature {
    sm::Temperature {
        header: header(stamp, frame),
        temperature: sensors::temperature_celsius(raw),
        variance: 0.01,
    }
}

/// `buttons` (Joy).
pub fn joy(values: [i16; 5], stamp: Time) -> sm::Joy {
    sm::Joy {
        header: header(stamp, String::new()),
        axes: vec![],
        buttons: sensors::joy_buttons(values).to_vec(),
    }
}

/// `/diagnostics`: the engine's statuses, stamped.
pub fn diagnostics(status: Vec<DiagnosticStatus>, stamp: Time) -> dm::DiagnosticArray {
    dm::DiagnosticArray {
        header: header(stamp, String::new()),
        status: status
            .into_iter()
            .map(|s| dm::DiagnosticStatus {
                level: s.level as _,
                name: s.name,
                message: s.message,
                hardware_id: s.hardware_id,
                values: s
                    .values
                    .into_iter()
                    .map(|v| dm::KeyValue {
                        key: v.key,
                        value: v.value,
                    })
                    .collect(),
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use msgs::handoff::{Pose2, Twist2};
    use roslibrust::RosMessageType;

    /// The MD5 sums ROS 1 peers check when they connect (those of Debian's ROS 1 packages and of asebaros'
    /// ROS 1 definitions as genmsg computes them).
    #[test]
    fn md5_sums_are_those_of_ros1() {
        let md5 = |d: roslibrust::MessageDescriptor| d.md5sum;
        assert_eq!(
            md5(nav_msgs::Odometry::DESCRIPTION),
            "cd5e73d190d741a2f92e81eda573aca7"
        );
        assert_eq!(
            md5(gm::Twist::DESCRIPTION),
            "9f195f881246fdfa2798d1d3eebca84a"
        );
        assert_eq!(
            md5(crate::ros1_msgs::tf2_msgs::TFMessage::DESCRIPTION),
            "94810edda583a504dfda3829e70d7eec"
        );
        assert_eq!(
            md5(am::NodeList::DESCRIPTION),
            "6e4eea1461994546684b7f35dd785e35"
        );
        assert_eq!(
            md5(am::Event::DESCRIPTION),
            "49995036bad52e061c5fd515a11fffd7"
        );
        // diagnostic_msgs as Debian's python3-diagnostic-msgs (ROS 1) has them
        assert_eq!(
            md5(dm::DiagnosticArray::DESCRIPTION),
            "60810da900de1dd6ddd437c3503511da"
        );
        assert_eq!(
            md5(dm::DiagnosticStatus::DESCRIPTION),
            "d0ce08bc6e5ba34c7754f563a9cabaf1"
        );
        use roslibrust::RosServiceType;
        assert_eq!(am::GetVariable::MD5SUM, "a357423947ec2168316d6c2ed0576d83");
        assert_eq!(am::SetVariable::MD5SUM, "bfbbee758595cc12ac763b6914420819");
    }

    #[test]
    fn odometry_and_tf_carry_the_sample() {
        let s = OdomSample {
            pose: Pose2 {
                x: 1.0,
                y: -0.5,
                theta: std::f64::consts::FRAC_PI_2,
            },
            twist: Twist2 {
                linear: 0.1,
                angular: 0.2,
            },
            ..OdomSample::default()
        };
        let f = Frames::new("r1", "odom", "base_link", ["l", "r"]);
        let o = odometry(&s, now(), &f, &Calibration::real());
        assert_eq!(o.header.frame_id, "r1/odom");
        assert_eq!(o.child_frame_id, "r1/base_link");
        assert_eq!(o.pose.pose.position.x, 1.0);
        assert!((o.pose.pose.orientation.z - (0.5f64).sqrt()).abs() < 1e-12);
        assert_eq!(o.pose.covariance[0], -1.0);
        let t = transforms(&s, now(), &f, 0.0935);
        assert_eq!(t.len(), 3);
        assert_eq!(t[0].transform.translation.y, -0.5);
        assert_eq!(t[1].child_frame_id, f.wheels[0]);
    }

    #[test]
    fn stamps_of_the_rt_clock_are_in_the_past_of_the_system_clock() {
        let t = stamp(monotonic_ns().saturating_sub(1_000_000_000));
        let n = now();
        let d =
            (i64::from(n.secs) - i64::from(t.secs)) * 1_000_000_000 + i64::from(n.nsecs - t.nsecs);
        assert!((900_000_000..1_200_000_000).contains(&d), "{d}");
    }
}
