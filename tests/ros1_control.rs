//! The communication switch and the RT controllers' endpoints on ROS 1, end to end through Debian's rospy
//! (tests/ros1/control_peer.py) against `thymio-rt run --ros1` on the embedded simulator: the same refusals and
//! answers as on ROS 2 (tests/ros_control.rs, the texts are the layer's), the latched `controller_owner` read by a
//! late subscriber, go_to_pose's `set_goal` service (thymio_rt_msgs/SetPose2D) and `goal` topic
//! (geometry_msgs/Pose2D) driving the robot, its `reached` topic (std_msgs/Bool) saying so.
#![cfg(feature = "ros1")]

mod common;
#[path = "ros1/peers.rs"]
mod peers;

use common::free_port;
use peers::{driver, need_ros1, rosmaster, rospy_script};
use serde_json::{json, Value};
use std::time::Duration;

/// `(success, message)` of an answer the peer recorded under `key`.
fn answer(v: &Value, key: &str) -> (bool, String) {
    let a = &v[key];
    match (a[0].as_bool(), a[1].as_str()) {
        (Some(ok), Some(message)) => (ok, message.to_owned()),
        _ => panic!("no answer {key}: {v}"),
    }
}

#[test]
fn ros1_switch_and_controller_endpoints_through_rospy() {
    if !need_ros1() {
        return; // peer missing, run opted out: skip recorded
    }
    let port = free_port();
    let _master = rosmaster(port);
    let mut drv = driver(port, &[]);
    let v = rospy_script(
        port,
        "control_peer.py",
        &["control", "90"],
        Duration::from_secs(120),
    );
    assert!(v.get("error").is_none(), "{v}");
    // an unknown name is refused with the valid ones; calibrate_motors through its action only
    let (ok, why) = answer(&v, "unknown");
    assert!(!ok, "{why}");
    assert!(
        why.starts_with("unknown owner \"wheels_please\": the owners are ")
            && why.contains("ros, joint, line_follower, go_to_pose"),
        "{why}"
    );
    assert_eq!(
        answer(&v, "calibrate"),
        (
            false,
            "calibrate_motors takes the wheels through its action (calibrate_motors) only".into()
        )
    );
    // accepted once the RT thread confirmed it, and then latched for a late subscriber
    assert_eq!(
        answer(&v, "go_to_pose"),
        (true, "go_to_pose owns the wheels".into())
    );
    assert_eq!(v["owner_after_go_to_pose"], "go_to_pose", "{v}");
    // the controller's service: the layer refuses a NaN pose, the RT controller takes a finite one
    assert_eq!(
        answer(&v, "set_goal_nan"),
        (false, "the pose must be finite".into())
    );
    assert_eq!(answer(&v, "set_goal"), (true, "goal taken".into()));
    // its topics: reached says false when a goal is taken, true when reached, for both kinds of goal
    for key in ["reached_by_service", "reached_by_topic"] {
        let seen = v[key].as_array().unwrap_or_else(|| panic!("{key}: {v}"));
        let taken = seen.iter().position(|b| *b == json!(false));
        let reached = seen.iter().rposition(|b| *b == json!(true));
        assert!(
            matches!((taken, reached), (Some(t), Some(r)) if t < r),
            "{key}: {v}"
        );
    }
    // the goal by topic, 10 cm left of the first, is where odometry says the robot stopped
    let (x, y) = (
        v["odom_xy"][0].as_f64().unwrap(),
        v["odom_xy"][1].as_f64().unwrap(),
    );
    assert!(
        (x - 0.1).hypot(y - 0.1) < 0.03,
        "stopped at {x}, {y}, not at the goal (0.1, 0.1): {v}"
    );
    // back to ros
    assert_eq!(answer(&v, "ros"), (true, "ros owns the wheels".into()));
    assert_eq!(v["owner_after_ros"], "ros", "{v}");
    drv.drain();
}
