//! The layer's neutral content (`nrt_interface`) → ROS 1 messages: one conversion per message type, and the
//! clocks that stamp them.

use nrt_engine::diagnostics::DiagnosticStatus;
use nrt_interface::aseba::{AnonymousEvent, Event, NodeDescription, NodeInfo};
use nrt_interface::geometry::{self, Header, Quaternion, Transform, Vector3};
use nrt_interface::load_script::LoadScriptRequest;
use nrt_interface::odometry::{Odometry, TwistStamped, WheelJoints};
use nrt_interface::sensors::{Imu, Joy, LaserScan, Range, Temperature};
use nrt_ros1_client::ros1_msgs::{
    asebaros_msgs as am, diagnostic_msgs as dm, geometry_msgs as gm, nav_msgs, sensor_msgs as sm,
    std_msgs,
};
use roslibrust::codegen::integral_types::Time;
use std::time::Duration;

/// A duration since the epoch as ROS 1 `time` (saturating).
pub fn time(since_epoch: Duration) -> Time {
    Time {
        secs: i32::try_from(since_epoch.as_secs()).unwrap_or(i32::MAX),
        nsecs: since_epoch.subsec_nanos() as i32,
    }
}

/// ROS 1 `time` as a duration since the epoch; `None` before 1970 (the layer's [`geometry::since_epoch`]; a
/// negative nanosecond count is read as 0).
pub fn since_epoch(t: &Time) -> Option<Duration> {
    geometry::since_epoch(i64::from(t.secs), u32::try_from(t.nsecs).unwrap_or(0))
}

/// The system time now.
pub fn now() -> Time {
    time(geometry::now())
}

/// The system time of an RT receive stamp (CLOCK_MONOTONIC ns; 0 = unknown, taken as now).
pub fn stamp(stamp_ns: u64) -> Time {
    time(geometry::stamp(stamp_ns))
}

/// A header.
pub fn header(stamp: Time, frame_id: String) -> std_msgs::Header {
    std_msgs::Header {
        seq: 0,
        stamp,
        frame_id,
    }
}

/// `std_msgs/Header`.
pub fn to_header(h: &Header) -> std_msgs::Header {
    header(time(h.stamp), h.frame_id.clone())
}

fn vector(v: Vector3) -> gm::Vector3 {
    gm::Vector3 {
        x: v[0],
        y: v[1],
        z: v[2],
    }
}

fn quaternion(q: Quaternion) -> gm::Quaternion {
    gm::Quaternion {
        x: q[0],
        y: q[1],
        z: q[2],
        w: q[3],
    }
}

/// `geometry_msgs/TransformStamped`.
pub fn transform(t: &Transform) -> gm::TransformStamped {
    gm::TransformStamped {
        header: to_header(&t.header),
        child_frame_id: t.child_frame_id.clone(),
        transform: gm::Transform {
            translation: vector(t.translation),
            rotation: quaternion(t.rotation),
        },
    }
}

/// `nav_msgs/Odometry`.
pub fn odometry(o: &Odometry) -> nav_msgs::Odometry {
    nav_msgs::Odometry {
        header: to_header(&o.header),
        child_frame_id: o.child_frame_id.clone(),
        pose: gm::PoseWithCovariance {
            pose: gm::Pose {
                position: gm::Point {
                    x: o.position[0],
                    y: o.position[1],
                    z: o.position[2],
                },
                orientation: quaternion(o.orientation),
            },
            covariance: o.pose_covariance,
        },
        twist: gm::TwistWithCovariance {
            twist: gm::Twist {
                linear: vector(o.linear),
                angular: vector(o.angular),
            },
            covariance: o.twist_covariance,
        },
    }
}

/// `geometry_msgs/TwistStamped` (`~/cmd_vel_out`).
pub fn twist_stamped(t: &TwistStamped) -> gm::TwistStamped {
    gm::TwistStamped {
        header: to_header(&t.header),
        twist: gm::Twist {
            linear: vector(t.linear),
            angular: vector(t.angular),
        },
    }
}

/// `sensor_msgs/JointState` of the wheels.
pub fn joint_states(j: &WheelJoints) -> sm::JointState {
    sm::JointState {
        header: to_header(&j.header),
        name: j.name.clone(),
        position: j.position.clone(),
        velocity: j.velocity.clone(),
        effort: vec![],
    }
}

/// `sensor_msgs/Range`.
pub fn range(r: &Range) -> sm::Range {
    sm::Range {
        header: to_header(&r.header),
        radiation_type: r.radiation_type,
        field_of_view: r.field_of_view,
        min_range: r.min_range,
        max_range: r.max_range,
        range: r.range,
    }
}

/// `sensor_msgs/LaserScan`.
pub fn laser(l: &LaserScan) -> sm::LaserScan {
    sm::LaserScan {
        header: to_header(&l.header),
        angle_min: l.angle_min,
        angle_max: l.angle_max,
        angle_increment: l.angle_increment,
        time_increment: l.time_increment,
        scan_time: l.scan_time,
        range_min: l.range_min,
        range_max: l.range_max,
        ranges: l.ranges.clone(),
        intensities: l.intensities.clone(),
    }
}

/// `sensor_msgs/Imu`.
pub fn imu(i: &Imu) -> sm::Imu {
    sm::Imu {
        header: to_header(&i.header),
        orientation: quaternion([0.0, 0.0, 0.0, 1.0]),
        orientation_covariance: i.orientation_covariance,
        angular_velocity: vector([0.0; 3]),
        angular_velocity_covariance: i.angular_velocity_covariance,
        linear_acceleration: vector(i.linear_acceleration),
        linear_acceleration_covariance: i.linear_acceleration_covariance,
    }
}

/// `sensor_msgs/Temperature`.
pub fn temperature(t: &Temperature) -> sm::Temperature {
    sm::Temperature {
        header: to_header(&t.header),
        temperature: t.temperature,
        variance: t.variance,
    }
}

/// `sensor_msgs/Joy`.
pub fn joy(j: &Joy) -> sm::Joy {
    sm::Joy {
        header: to_header(&j.header),
        axes: vec![],
        buttons: j.buttons.clone(),
    }
}

/// `asebaros_msgs/Node`.
pub fn node(n: &NodeInfo) -> am::Node {
    am::Node {
        id: n.id,
        name: n.name.clone(),
        name_space: n.name_space.clone(),
        running: n.running,
        ignored: n.ignored,
        connected: n.connected,
    }
}

/// `asebaros_msgs/NodeList`.
pub fn node_list(nodes: &[NodeInfo]) -> am::NodeList {
    am::NodeList {
        nodes: nodes.iter().map(node).collect(),
    }
}

/// `asebaros_msgs/NodeDescription`.
pub fn description(d: &NodeDescription) -> am::NodeDescription {
    am::NodeDescription {
        id: d.id,
        name: d.name.clone(),
        constants: d
            .constants
            .iter()
            .map(|(name, value)| am::Constant {
                name: name.clone(),
                value: *value,
            })
            .collect(),
        events: d.events.clone(),
        variables: d.variables.clone(),
    }
}

/// `asebaros_msgs/Event`.
pub fn event(e: Event) -> am::Event {
    am::Event {
        stamp: time(e.stamp),
        source: e.source,
        data: e.data,
    }
}

/// `asebaros_msgs/AnonymousEvent`.
pub fn anonymous(e: AnonymousEvent) -> am::AnonymousEvent {
    am::AnonymousEvent {
        stamp: time(e.stamp),
        source: e.source,
        r#type: e.kind,
        data: e.data,
    }
}

/// A `load_script` request, neutral.
pub fn load_script_request(r: am::LoadScriptRequest) -> LoadScriptRequest {
    LoadScriptRequest {
        file_name: r.file_name,
        constants: r.constants.into_iter().map(|c| (c.name, c.value)).collect(),
        node_ids: r.node_ids,
        set_as_default: r.set_as_default,
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
    use handoff::monotonic_ns;
    use msgs::thymio::AXIS_LENGTH;
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
            md5(nrt_ros1_client::ros1_msgs::tf2_msgs::TFMessage::DESCRIPTION),
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
    fn odometry_and_tf_carry_the_neutral_content() {
        use handoff::OdomSample;
        use nrt_engine::thymio::calibration::Calibration;
        use nrt_interface::frames::Frames;
        use nrt_interface::odometry as odo;
        let f = Frames::new("r1", "odom", "base_link", ["l", "r"]);
        let at = Duration::new(1_700_000_000, 5);
        let settings = odo::OdomSettings::new(&Calibration::real(), &Default::default());
        let mut n = odo::odometry(&OdomSample::default(), at, &f, &settings);
        (n.position, n.orientation) = ([1.0, -0.5, 0.25], [0.0, 0.0, 0.6, 0.8]);
        (n.linear[0], n.angular[2]) = (0.1, 0.2);
        let o = odometry(&n);
        assert_eq!(
            (o.header.stamp.secs, o.header.stamp.nsecs),
            (1_700_000_000, 5)
        );
        assert_eq!(
            (o.header.frame_id.as_str(), o.child_frame_id.as_str()),
            ("r1/odom", "r1/base_link")
        );
        let p = &o.pose.pose;
        assert_eq!([p.position.x, p.position.y, p.position.z], n.position);
        assert_eq!(
            [
                p.orientation.x,
                p.orientation.y,
                p.orientation.z,
                p.orientation.w
            ],
            n.orientation
        );
        assert_eq!(
            (o.pose.covariance, o.twist.covariance),
            (n.pose_covariance, n.twist_covariance)
        );
        assert_eq!(
            (o.twist.twist.linear.x, o.twist.twist.angular.z),
            (0.1, 0.2)
        );
        let [l, _] = odo::wheel_transforms(&OdomSample::default(), at, &f, AXIS_LENGTH);
        let t = transform(&l);
        assert_eq!(
            (t.header.frame_id.as_str(), t.child_frame_id.as_str()),
            ("r1/base_link", "r1/left_wheel_link")
        );
        assert_eq!(
            [
                t.transform.translation.x,
                t.transform.translation.y,
                t.transform.translation.z
            ],
            l.translation
        );
        assert_eq!(t.transform.rotation.w, l.rotation[3]);
        assert_eq!(time(Duration::from_secs(u64::MAX)).secs, i32::MAX);
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
