//! ROS 1 as roslaunch starts a node, with real peers (Debian's rosmaster and rospy): the node's name from
//! `__name:=`, its private parameters from `_name:=value` and from the parameter server under asebaros' and
//! ROS-Thymio's names (`reload_script_on_reconnect`, `launch_model`, the older node-class scheme `type`/`name`),
//! each with its meaning; the log also goes to roslaunch's `__log:=` file. Before, each of them stopped the driver
//! (an unknown argument taken as a ROS argument and ignored, an unknown configuration key refused).
#![cfg(feature = "ros1")]

use crate::common;
use crate::peers;

use common::{free_port, Proc};
use peers::{driver_command, need_ros1, rosmaster, rospy, rospy_until};
use std::time::Duration;

#[test]
fn roslaunch_arguments_and_asebaros_parameter_names() {
    if !need_ros1() {
        return; // peer missing, run opted out: skip recorded
    }
    let port = free_port();
    let _master = rosmaster(port);
    let set = rospy(
        port,
        &[
            "params",
            "/bridge1/reload_script_on_reconnect=True",
            "/bridge1/launch_model='thymio_description model.launch'",
            "/bridge1/nodes/thymio/type='thymio-II'",
            "/bridge1/nodes/thymio/name='robot'",
        ],
        Duration::from_secs(20),
    );
    assert_eq!(set["set"], 4, "{set}");
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log/bridge1-1.log");
    let mut c = driver_command(port);
    c.args(["--no-ros", "__name:=bridge1", "_odom_frame:=odom_rt"])
        .arg(format!("__log:={}", log.display()));
    let mut drv = Proc::spawn("thymio-rt --ros1", c);
    drv.wait_line(Duration::from_secs(60), |l| {
        l.contains("ROS 1 interface up")
    });
    // the node's name, and the robot in the namespace the older scheme's `name` gives
    let g = rospy_until(port, &["graph", "/bridge1"], Duration::from_secs(30), |v| {
        v["publishes"]
            .as_array()
            .is_some_and(|p| p.iter().any(|t| t == "/robot/odom"))
    });
    assert!(
        g["uri"].as_str().unwrap_or("").starts_with("http://"),
        "{g}"
    );
    assert!(
        g["publishes"]
            .as_array()
            .is_some_and(|p| p.iter().any(|t| t == "/robot/odom")),
        "{g}"
    );
    // `_odom_frame:=` is in effect
    let d = rospy(port, &["drive", "10", "robot"], Duration::from_secs(30));
    assert_eq!(d["odom_frame"], "robot/odom_rt", "{d}");
    // the foreign names were read as ours or ignored, saying so, in roslaunch's log file too
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    for needle in [
        "reload_script_on_reconnect (asebaros', ROS-Thymio's or diff_drive_controller's name) is read as script.reload_on_reconnect",
        "launch_model (ROS-Thymio's) is not used",
    ] {
        assert!(text.contains(needle), "{needle} not in {}:\n{text}", log.display());
    }
    drv.drain();
}
