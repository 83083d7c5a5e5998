//! The asebaros behaviours ROS 1 shares with ROS 2 since the interface is described once (issue 24), with real
//! peers (Debian's rosmaster and rospy): each checks, on ROS 1, the result and the text ROS 2 gives.
//! - `aseba/load_script` of a file that has code for none of the nodes loads nothing and is a warning, not a
//!   failed call (ROS 1 failed the call before; ROS 2 warns: nothing is wrong with the file or the request);
//! - a script that fails to load on a node that appears is reported to ROS users (ROS 1 only logged the engine's
//!   line before), with ROS 2's text `node <id>: <error>` from the driver's logger.
#![cfg(feature = "ros1")]

use crate::common;
use crate::peers;

use common::free_port;
use peers::{driver, need_ros1, rosmaster, rospy};
use serde_json::Value;
use std::time::Duration;

#[test]
fn ros1_load_script_for_no_node_present_is_a_warning_not_a_failed_call() {
    if !need_ros1() {
        return; // peer missing, run opted out: skip recorded
    }
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("elsewhere.aesl");
    std::fs::write(
        &script,
        "<!DOCTYPE aesl-source>\n<network>\n<node nodeId=\"9\" name=\"e-puck0\">var n = 0\n</node>\n</network>\n",
    )
    .unwrap();
    let file = script.to_str().unwrap();
    let port = free_port();
    let _master = rosmaster(port);
    let mut drv = driver(port, &[]);
    let v = rospy(
        port,
        &["load_script_nowhere", file],
        Duration::from_secs(60),
    );
    assert_eq!(v["error"], Value::Null, "the call failed: {v}");
    // ROS 2's text, from the driver's logger, as a warning
    let line = drv.wait_line(Duration::from_secs(10), |l| {
        l.contains(&format!(
            "asebaros: load_script: {file} has code for none of the nodes"
        ))
    });
    assert!(line.contains("WARN"), "not a warning: {line}");
}

#[test]
fn ros1_a_script_that_fails_to_load_is_reported() {
    if !need_ros1() {
        return; // peer missing, run opted out: skip recorded
    }
    let dir = tempfile::tempdir().unwrap();
    let broken = dir.path().join("broken.aesl");
    std::fs::write(
        &broken,
        "<!DOCTYPE aesl-source>\n<network>\n<node nodeId=\"1\" name=\"thymio-II\">var a\nb = 1</node>\n</network>\n",
    )
    .unwrap();
    let port = free_port();
    let _master = rosmaster(port);
    let set = rospy(
        port,
        &[
            "params",
            &format!("/asebaros/script/path='{}'", broken.display()),
        ],
        Duration::from_secs(20),
    );
    assert_eq!(set["set"], 1, "{set}");
    let mut drv = driver(port, &[]);
    // ROS 2's text (`node <id>: <error>`) from the driver's logger, not only the engine's own line
    let line = drv.wait_line(Duration::from_secs(30), |l| {
        l.contains("asebaros: node 1: ") && l.contains("not a defined variable")
    });
    assert!(line.contains("ERROR"), "not an error: {line}");
}
