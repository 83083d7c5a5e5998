//! The joint space, the stamped `cmd_vel`, the simulator's ground truth and the hop times on ROS 1, end to end with
//! Debian's rosmaster and rospy (tests/ros1/rospy_joints.py) against `thymio-rt run --ros1` on the embedded
//! simulator: `thymio_driver/joint_states` arrive while subscribed, `thymio_driver/joint_command` drives the robot
//! once `joint` owns the wheels and a bad one is refused with the layer's text (ROS 2's) and counted in
//! `/diagnostics`, `cmd_vel` as `TwistStamped` drives and stale ones are counted, `sim/ground_truth` is published
//! and `/diagnostics` has the hop rows.
#![cfg(feature = "ros1")]

use crate::common;
use crate::peers;
#[cfg(feature = "ros2")]
use crate::rclpy_peer;

use common::free_port;
use nrt_interface::joints::{dropped_line, JointCommandError};
use peers::{driver, master_uri, need_ros1, rosmaster, PYTHON};
use serde_json::Value;
use std::process::Command;
use std::time::Duration;

/// Runs `scenario` of tests/ros1/rospy_joints.py against the master on `port` (bounded by `seconds`); its result.
fn rospy(port: u16, scenario: &str, seconds: u64) -> Value {
    rospy_with(port, scenario, seconds, &[])
}

/// [`rospy`] with the scenario's arguments `args`.
fn rospy_with(port: u16, scenario: &str, seconds: u64, args: &[&str]) -> Value {
    let out = Command::new("timeout")
        .arg(format!("{}", seconds + 15))
        .arg(PYTHON)
        .arg(common::root().join("tests/ros1/rospy_joints.py"))
        .args([scenario, &seconds.to_string()])
        .args(args)
        .env("ROS_MASTER_URI", master_uri(port))
        .env("ROS_IP", "127.0.0.1")
        .env_remove("ROS_HOSTNAME")
        .env(
            "ROS_HOME",
            std::env::temp_dir().join(format!("ros1-home-{port}")),
        )
        .output()
        .expect("run the rospy peer");
    let stdout = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(stdout.lines().last().unwrap_or_default()).unwrap_or_else(|e| {
        panic!(
            "rospy_joints {scenario}: no JSON result ({e}); status {:?}\nstdout:\n{stdout}\nstderr:\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// The status "asebaros: Hops" lists every hop, in path order.
const HOP_KEYS: [&str; 7] = [
    "Odometry: wire → decoded (RT) [µs] p50/p99/max",
    "Odometry: handed → publish start [µs] p50/p99/max",
    "Odometry: publish → returned [µs] p50/p99/max",
    "Odometry: wire → odom published [µs] p50/p99/max",
    "cmd_vel: taken → set-point stored [µs] p50/p99/max",
    "cmd_vel: set-point → wire (RT) [µs] p50/p99/max",
    "Odometry samples dropped (publisher behind)",
];

/// Joint states while subscribed (names, owner); a bad joint command refused with ROS 2's text and counted; the
/// simulator's ground truth; the hop rows in `/diagnostics`.
#[test]
fn ros1_joint_states_bad_joint_commands_ground_truth_and_hops() {
    if !need_ros1() {
        return; // peer missing, run opted out: skip recorded
    }
    let port = free_port();
    let _master = rosmaster(port);
    let mut drv = driver(port, &[]);

    let js = rospy(port, "joint_states", 30);
    assert!(js["count"].as_u64().unwrap_or(0) >= 5, "{js}");
    assert_eq!(
        js["name"],
        serde_json::json!(["left_wheel_joint", "right_wheel_joint"]),
        "{js}"
    );
    assert_eq!(js["owner"], "ros", "{js}");

    let bad = rospy(port, "bad_joint", 30);
    let n: u64 = bad["bad"]
        .as_str()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    assert!(n >= 1, "bad joint commands not counted: {bad}");
    // the layer's text, which ROS 2 reports too
    let reason = JointCommandError::UnknownJoint(
        "caster_joint".into(),
        "left_wheel_joint".into(),
        "right_wheel_joint".into(),
    )
    .to_string();
    let want = dropped_line(handoff::NodeId(1), &reason);
    let want = want
        .split_once(": ")
        .map_or(want.as_str(), |(_, rest)| rest);
    drv.wait_line(Duration::from_secs(10), |l| l.contains(want));

    let gt = rospy(port, "ground_truth", 30);
    assert_eq!(gt["frame"], "world", "{gt}");
    assert_eq!(gt["child"], "base_link", "{gt}");
    let (x, y) = (gt["x"].as_f64().unwrap(), gt["y"].as_f64().unwrap());
    assert!(
        x.is_finite() && y.is_finite() && (x != 0.0 || y != 0.0),
        "{gt}"
    );

    let hops = rospy(port, "hops", 30);
    assert_eq!(hops["name"], "asebaros: Hops", "{hops}");
    assert_eq!(hops["keys"], serde_json::json!(HOP_KEYS), "{hops}");
    // odometry, which the scenario listens to, went out through this front end's publisher thread: timed
    assert_ne!(
        hops["values"][HOP_KEYS[2]], "no samples",
        "ROS 1's publish hop is not timed: {hops}"
    );
}

/// `cmd_vel` as `TwistStamped` (`_cmd_vel_stamped:=true`) drives the robot; ones stamped 10 s ago are ignored and
/// counted; the hop cmd_vel taken → set-point stored is timed.
#[test]
fn ros1_stamped_cmd_vel_drives_and_stale_ones_are_counted() {
    if !need_ros1() {
        return;
    }
    let port = free_port();
    let _master = rosmaster(port);
    let _drv = driver(port, &["_cmd_vel_stamped:=true"]);
    let r = rospy(port, "stamped", 40);
    assert!(r["dx"].as_f64().unwrap_or(0.0) > 0.01, "did not drive: {r}");
    let stale: u64 = r["stale"]
        .as_str()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    assert!(stale >= 1, "stale commands not counted: {r}");
    let hops = rospy(port, "hops", 30);
    assert_ne!(
        hops["values"][HOP_KEYS[3]], "no samples",
        "ROS 1's cmd_vel hop is not timed: {hops}"
    );
}

/// After `switch_controller` gives the wheels to `joint`, joint commands (named in the other order) move the
/// simulated robot, and the joint states name `joint` as the owner.
#[test]
fn ros1_joint_commands_move_the_robot_once_joint_owns_the_wheels() {
    if !need_ros1() {
        return;
    }
    let port = free_port();
    let _master = rosmaster(port);
    let _drv = driver(port, &[]);
    let r = rospy(port, "joint_drive", 40);
    assert_eq!(r["switch"][0], true, "switch_controller: {r}");
    assert_joint_drive(&r);
}

/// Joint commands moved the robot, and its joint states say `joint` owns the wheels.
fn assert_joint_drive(r: &Value) {
    let x = |k: &str| {
        r[k].as_f64()
            .unwrap_or_else(|| panic!("no true pose {k} (sim/ground_truth): {r}"))
    };
    let (x0, x1) = (x("x0"), x("x1"));
    assert!(
        x1 > x0 + 0.05,
        "joint commands moved the robot {x0} → {x1}: {r}"
    );
    assert_eq!(r["owner"], "joint", "{r}");
    let reference = [0, 1].map(|w| r["velocity_reference"][w].as_f64().unwrap_or(0.0));
    assert!(
        (1.7..2.3).contains(&reference[0]) && (3.5..4.5).contains(&reference[1]),
        "velocity references {reference:?}: {r}"
    );
}

/// Both front ends (`--features ros1,ros2`): the wheels given to `joint` through ROS 2's `switch_controller`, rospy's
/// joint commands on ROS 1 move the robot, and ROS 1's joint states name the owner.
#[cfg(feature = "ros2")]
#[test]
fn ros1_joint_commands_move_the_robot_switched_through_ros2() {
    use rclpy_peer::{test_domain_id, RclpyPeer};
    use std::time::Instant;
    if !need_ros1() {
        return;
    }
    let deadline = Instant::now() + Duration::from_secs(150);
    let port = free_port();
    let _master = rosmaster(port);
    let mut c = peers::driver_command(port);
    c.env("ROS_DOMAIN_ID", test_domain_id().to_string())
        .env("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
        .env_remove("LD_LIBRARY_PATH")
        .env_remove("LD_PRELOAD");
    let mut drv = common::Proc::spawn("thymio-rt --ros1 (and ROS 2)", c);
    drv.wait_line(Duration::from_secs(60), |l| {
        l.contains("ROS 2 and ROS 1 interfaces up")
    });
    let mut peer = RclpyPeer::serve(test_domain_id(), deadline).unwrap();
    let s = peer
        .call(
            "/switch_controller",
            "thymio_rt_msgs/srv/SwitchController",
            serde_json::json!({ "owner": "joint" }),
            deadline,
        )
        .unwrap();
    assert_eq!(s["success"], true, "{s}");
    let r = rospy_with(port, "joint_drive", 40, &["noswitch"]);
    assert_joint_drive(&r);
    drv.drain();
}
