//! The communication switch and the RT controllers' endpoints on ROS 1, end to end through Debian's rospy
//! (tests/ros1/control_peer.py) against `thymio-rt run --ros1` on the embedded simulator: the same refusals and
//! answers as on ROS 2 (tests/ros2/control.rs, the texts are the layer's), the latched `controller_owner` read by a
//! late subscriber, go_to_pose's `set_goal` service (thymio_rt_msgs/SetPose2D) and `goal` topic
//! (geometry_msgs/Pose2D) driving the robot, its `reached` topic (std_msgs/Bool) saying so. With ROS 2 on too,
//! one switch for both: asked on either front end, confirmed on both `controller_owner` topics.
#![cfg(feature = "ros1")]

use crate::common;
use crate::peers;
#[cfg(feature = "ros2")]
use crate::rclpy_peer;

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

/// Both front ends at once serve one switch: a switch asked through ROS 1 shows on ROS 2's `controller_owner`, one
/// asked through ROS 2 on ROS 1's.
#[cfg(feature = "ros2")]
#[test]
fn one_switch_for_ros1_and_ros2() {
    use common::Proc;
    use rclpy_peer::{test_domain_id, RclpyPeer};
    use std::time::Instant;

    if !need_ros1() {
        return; // peer missing, run opted out: skip recorded
    }
    let deadline = Instant::now() + Duration::from_secs(150);
    let port = free_port();
    let _master = rosmaster(port);
    let mut c = peers::driver_command(port);
    c.env("ROS_DOMAIN_ID", test_domain_id().to_string())
        .env("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
        .env_remove("LD_LIBRARY_PATH")
        .env_remove("LD_PRELOAD");
    let mut drv = Proc::spawn("thymio-rt --ros1 (and ROS 2)", c);
    drv.wait_line(Duration::from_secs(60), |l| {
        l.contains("ROS 2 and ROS 1 interfaces up")
    });
    let mut peer = RclpyPeer::serve(test_domain_id(), deadline).unwrap();
    let owner = "/controller_owner";
    peer.subscribe(owner, "std_msgs/msg/String", "transient_local", deadline)
        .unwrap();
    let v = rospy_script(
        port,
        "control_peer.py",
        &["switch", "go_to_pose"],
        Duration::from_secs(60),
    );
    assert_eq!(
        answer(&v, "answer"),
        (true, "go_to_pose owns the wheels".into())
    );
    peer.message(owner, deadline, |m| m["data"] == "go_to_pose")
        .unwrap_or_else(|e| panic!("ROS 2's controller_owner did not follow ROS 1's switch: {e}"));
    let r = peer
        .call(
            "/switch_controller",
            "thymio_rt_msgs/srv/SwitchController",
            json!({ "owner": "ros" }),
            deadline,
        )
        .unwrap();
    assert_eq!(r["success"], true, "{r}");
    let v = rospy_script(port, "control_peer.py", &["owner"], Duration::from_secs(60));
    assert_eq!(v["owner"], "ros", "ROS 1's controller_owner: {v}");
    drv.drain();
}

/// Issue 42, unsafe motion on ROS 1 (tests/ros1/motion_peer.py): dynamic_reconfigure shows the deceleration's
/// range and refuses values below it (0, 1e-9; an acceleration of 5e-324), the driver saying why with the range;
/// with the smallest deceleration allowed (0.05 m/s²: 3 s from 0.15 m/s), a zero twist then silence: the robot
/// is still decelerating half a second after the zero twist (0.125 m/s expected), and the cmd_vel watchdog (1 s
/// here, so that a loaded machine's pause in the command stream does not trip it early) stops it at its
/// deadline (at 1.8 s a slowed stop would still be at 0.06 m/s). It used to coast on: the watchdog armed on a
/// non-zero set-point only.
#[test]
fn ros1_the_watchdog_stops_a_decelerating_robot_and_too_small_limits_are_refused() {
    if !need_ros1() {
        return; // peer missing, run opted out: skip recorded
    }
    let port = free_port();
    let _master = rosmaster(port);
    let set = peers::rospy(
        port,
        &["params", "/asebaros/cmd_vel_timeout=1.0"],
        Duration::from_secs(20),
    );
    assert_eq!(set["set"], 1, "{set}");
    let mut drv = driver(port, &[]);
    let v = rospy_script(port, "motion_peer.py", &["60"], Duration::from_secs(90));
    assert!(v.get("error").is_none(), "{v}");
    assert_eq!(v["range"], json!([0.05, 1000.0]), "{v}");
    for (set, in_effect) in v["refused"].as_object().expect("refused") {
        assert_eq!(in_effect, &Value::Null, "{set} was taken: {v}");
    }
    assert_eq!(v["refused"].as_object().map(|o| o.len()), Some(3), "{v}");
    drv.wait_line(Duration::from_secs(20), |l| {
        l.contains("linear.x.max_deceleration refused, unchanged")
            && l.contains("[0.05, 1000] m/s²")
    });
    assert_eq!(v["accepted"], json!(0.05), "{v}");
    assert_eq!(v["at_speed"], json!(true), "{v}");
    let samples: Vec<(f64, f64)> = v["samples"]
        .as_array()
        .expect("samples")
        .iter()
        .map(|s| (s[0].as_f64().unwrap(), s[1].as_f64().unwrap()))
        .collect();
    // still moving half a second after the zero twist: the deceleration limit is in effect
    let later = samples.iter().find(|(t, _)| *t >= 0.5);
    assert!(
        later.is_some_and(|(_, v)| *v > 0.08),
        "not decelerating: {samples:?}"
    );
    // stopped within the watchdog (1 s) and a margin, not after 3 s of deceleration
    let stopped = samples.iter().find(|(t, v)| *t >= 0.0 && v.abs() < 0.005);
    assert!(
        stopped.is_some_and(|(t, _)| *t < 1.8),
        "the robot was not stopped 1.8 s after the zero twist: {samples:?}"
    );
    drv.drain();
}
