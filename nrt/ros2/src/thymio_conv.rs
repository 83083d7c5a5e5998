//! The layer's neutral Thymio driver content (`nrt_interface`: odometry, transforms, sensors) → ROS 2 messages:
//! one conversion per message type. What the messages carry is the layer's ([`nrt_interface::odometry`],
//! [`nrt_interface::sensors`], [`nrt_interface::tf`]); the interface in [`super::thymio`] publishes them.

use super::convert::time;
use nrt_interface::geometry::{Header, Quaternion, Transform, Vector3};
use nrt_interface::odometry::{Odometry, TwistStamped, WheelJoints};
use nrt_interface::sensors::{Imu, Joy, LaserScan, Range, Temperature};
use r2r::geometry_msgs::msg as gm;
use r2r::nav_msgs::msg as nav;
use r2r::sensor_msgs::msg as sm;

/// A robot's frames (the layer's).
pub use nrt_interface::frames::Frames;

/// `std_msgs/Header`.
pub fn header(h: &Header) -> r2r::std_msgs::msg::Header {
    r2r::std_msgs::msg::Header {
        stamp: time(h.stamp),
        frame_id: h.frame_id.clone(),
    }
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
        header: header(&t.header),
        child_frame_id: t.child_frame_id.clone(),
        transform: gm::Transform {
            translation: vector(t.translation),
            rotation: quaternion(t.rotation),
        },
    }
}

/// `nav_msgs/Odometry`.
pub fn odometry(o: &Odometry) -> nav::Odometry {
    nav::Odometry {
        header: header(&o.header),
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
            covariance: o.pose_covariance.to_vec(),
        },
        twist: gm::TwistWithCovariance {
            twist: gm::Twist {
                linear: vector(o.linear),
                angular: vector(o.angular),
            },
            covariance: o.twist_covariance.to_vec(),
        },
    }
}

/// `geometry_msgs/TwistStamped` (`~/cmd_vel_out`).
pub fn twist_stamped(t: &TwistStamped) -> gm::TwistStamped {
    gm::TwistStamped {
        header: header(&t.header),
        twist: gm::Twist {
            linear: vector(t.linear),
            angular: vector(t.angular),
        },
    }
}

/// `sensor_msgs/JointState` of the wheels.
pub fn joint_states(j: &WheelJoints) -> sm::JointState {
    sm::JointState {
        header: header(&j.header),
        name: j.name.clone(),
        position: j.position.clone(),
        velocity: j.velocity.clone(),
        effort: vec![],
    }
}

/// `sensor_msgs/Range`.
pub fn range(r: &Range) -> sm::Range {
    sm::Range {
        header: header(&r.header),
        radiation_type: r.radiation_type,
        field_of_view: r.field_of_view,
        min_range: r.min_range,
        max_range: r.max_range,
        range: r.range,
        ..Default::default()
    }
}

/// `sensor_msgs/LaserScan`.
pub fn laser(l: &LaserScan) -> sm::LaserScan {
    sm::LaserScan {
        header: header(&l.header),
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
        header: header(&i.header),
        orientation: quaternion([0.0, 0.0, 0.0, 1.0]),
        orientation_covariance: i.orientation_covariance.to_vec(),
        angular_velocity: vector([0.0; 3]),
        angular_velocity_covariance: i.angular_velocity_covariance.to_vec(),
        linear_acceleration: vector(i.linear_acceleration),
        linear_acceleration_covariance: i.linear_acceleration_covariance.to_vec(),
    }
}

/// `sensor_msgs/Temperature`.
pub fn temperature(t: &Temperature) -> sm::Temperature {
    sm::Temperature {
        header: header(&t.header),
        temperature: t.temperature,
        variance: t.variance,
    }
}

/// `sensor_msgs/Joy`.
pub fn joy(j: &Joy) -> sm::Joy {
    sm::Joy {
        header: header(&j.header),
        axes: vec![],
        buttons: j.buttons.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use handoff::OdomSample;
    use msgs::thymio::AXIS_LENGTH;
    use nrt_engine::thymio::calibration::Calibration;
    use nrt_interface::odometry as odo;
    use std::time::Duration;

    #[test]
    fn the_neutral_odometry_and_transforms_carry_over_whole() {
        let f = Frames::new("t1", "odom", "base_link", ["l", "r"]);
        let s = OdomSample {
            wheel_pos: [std::f64::consts::PI, -1.0],
            ..OdomSample::default()
        };
        let at = Duration::new(1_700_000_000, 5);
        let settings = odo::OdomSettings::new(&Calibration::real(), &Default::default());
        let n = odo::odometry(&s, at, &f, &settings);
        let o = odometry(&n);
        assert_eq!(
            (o.header.stamp.sec, o.header.stamp.nanosec),
            (1_700_000_000, 5)
        );
        assert_eq!(o.pose.covariance, n.pose_covariance.to_vec());
        assert_eq!(o.twist.covariance, n.twist_covariance.to_vec());
        assert_eq!(o.child_frame_id, "t1/base_link");
        let [l, _] = odo::wheel_transforms(&s, at, &f, AXIS_LENGTH).map(|t| transform(&t));
        assert_eq!(l.header.frame_id, "t1/base_link");
        assert!((l.transform.rotation.y - 1.0).abs() < 1e-12);
        assert!((l.transform.translation.y - 0.04675).abs() < 1e-12);
    }
}
