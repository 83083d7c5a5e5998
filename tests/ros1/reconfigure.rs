//! The live parameters the ROS 1 way, with Debian's `dynamic_reconfigure.client.Client` (rospy) against
//! `thymio-rt run --ros1` on the embedded simulator: the robot's `/thymio_driver` and the bridge's `/asebaros`
//! describe their live parameters with the ranges ROS 2 shows, a value in range takes effect (the answer and
//! `parameter_updates`), a value outside it is refused (the configuration in effect is answered, the value
//! unchanged) and the driver says why with ROS 2's text; an RT controller's parameter likewise.
#![cfg(feature = "ros1")]

use crate::common;
use crate::peers;

use common::free_port;
use peers::{driver, need_ros1, rosmaster, PYTHON};
use serde_json::{json, Value};
use std::process::Command;
use std::time::Duration;

/// Runs tests/ros1/reconfigure_peer.py against `node` with `changes` (`NAME=VALUE`), bounded; its JSON result.
fn reconfigure(port: u16, node: &str, changes: &[&str]) -> Value {
    let out = Command::new("timeout")
        .arg("60")
        .arg(PYTHON)
        .arg(common::root().join("tests/ros1/reconfigure_peer.py"))
        .args([node, "20"])
        .args(changes)
        .env("ROS_MASTER_URI", peers::master_uri(port))
        .env("ROS_IP", "127.0.0.1")
        .env_remove("ROS_HOSTNAME")
        .env_remove("ROS_NAMESPACE")
        .env(
            "ROS_HOME",
            std::env::temp_dir().join(format!("ros1-home-{port}")),
        )
        .output()
        .expect("run the dynamic_reconfigure peer");
    let stdout = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(stdout.lines().last().unwrap_or_default()).unwrap_or_else(|e| {
        panic!(
            "reconfigure peer {node} {changes:?}: no JSON result ({e}); status {:?}\nstdout:\n{stdout}\nstderr:\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

#[test]
fn dynamic_reconfigure_sets_live_parameters_and_refuses_out_of_range_values() {
    if !need_ros1() {
        return; // peer missing, run opted out: skip recorded
    }
    let port = free_port();
    let _master = rosmaster(port);
    let mut drv = driver(port, &[]);

    // the robot's driver node: a live parameter set, then one outside its range
    let r = reconfigure(
        port,
        "/thymio_driver",
        &["axis_length=0.094", "axis_length=1e9"],
    );
    let axis = &r["descriptions"]["axis_length"];
    assert_eq!(axis["type"], "double", "{r}");
    assert_eq!(
        (axis["min"].as_f64(), axis["max"].as_f64()),
        (Some(0.05), Some(0.15)),
        "{r}"
    );
    assert_eq!(r["initial"]["axis_length"], 0.0935, "{r}");
    let d = &r["descriptions"];
    // the motion limits (off: NaN, null in the peer's JSON) and publish_limited_velocity are offered live
    assert_eq!(d["linear.x.max_acceleration"]["type"], "double", "{r}");
    assert_eq!(r["initial"]["angular.z.max_jerk"], Value::Null, "{r}");
    assert_eq!(d["publish_limited_velocity"]["type"], "bool", "{r}");
    assert!(
        d.get("odom_frame").is_none(),
        "a start-only parameter is offered: {r}"
    );
    assert!(
        d.get("motor.left.parameters").is_none(),
        "a list is offered: {r}"
    );
    let set = &r["sets"][0];
    assert_eq!(set["answer"]["axis_length"], 0.094, "{r}");
    assert_eq!(
        set["update"]["axis_length"], 0.094,
        "no parameter_updates: {r}"
    );
    let refused = &r["sets"][1];
    assert_eq!(refused["answer"]["axis_length"], 0.094, "{r}");
    assert_eq!(refused["update"]["axis_length"], 0.094, "{r}");
    drv.wait_line(Duration::from_secs(20), |l| {
        l.contains("/thymio_driver: axis_length refused, unchanged") && l.contains("[0.05, 0.15] m")
    });
    // an RT controller's parameter (the layer's controllers): refused outside its range, taken inside
    let name = "controllers.go_to_pose.max_linear";
    let c = reconfigure(
        port,
        "/thymio_driver",
        &[&format!("{name}=1.0"), &format!("{name}=0.05")],
    );
    assert_eq!(c["descriptions"][name]["type"], "double", "{c}");
    let before = c["initial"][name].clone();
    assert!(before.is_f64() && before != json!(1.0), "{c}");
    assert_eq!(c["sets"][0]["answer"][name], before, "{c}");
    assert_eq!(c["sets"][1]["answer"][name], json!(0.05), "{c}");
    assert_eq!(c["sets"][1]["update"][name], json!(0.05), "{c}");
    drv.wait_line(Duration::from_secs(20), |l| {
        l.contains(&format!("/thymio_driver: {name} refused, unchanged")) && l.contains("outside")
    });
    // the value in effect is the robot's, not the bridge's
    let again = reconfigure(port, "/thymio_driver", &[]);
    assert_eq!(again["initial"]["axis_length"], 0.094, "{again}");

    // the bridge: a process-wide live parameter, and one outside its range (ROS 2's texts)
    let b = reconfigure(
        port,
        "/asebaros",
        &["obstacle_stop.enabled=True", "obstacle_stop.max_age=1e300"],
    );
    assert_eq!(
        b["descriptions"]["obstacle_stop.enabled"]["type"], "bool",
        "{b}"
    );
    assert!(
        b["descriptions"].get("port").is_none(),
        "start-only port offered: {b}"
    );
    assert_eq!(
        b["sets"][0]["answer"]["obstacle_stop.enabled"],
        json!(true),
        "{b}"
    );
    assert_eq!(
        b["sets"][0]["update"]["obstacle_stop.enabled"],
        json!(true),
        "{b}"
    );
    assert_eq!(b["initial"]["obstacle_stop.enabled"], json!(false), "{b}");
    let age = b["initial"]["obstacle_stop.max_age"].clone();
    assert!(age.is_f64(), "{b}");
    assert_eq!(b["sets"][1]["answer"]["obstacle_stop.max_age"], age, "{b}");
    drv.wait_line(Duration::from_secs(20), |l| {
        l.contains("/asebaros: obstacle_stop.max_age refused, unchanged")
            && l.contains("[0.001, 10] s")
    });
}
