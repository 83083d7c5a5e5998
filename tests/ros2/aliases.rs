//! asebaros' and ROS-Thymio's parameter names start the driver with their meaning, through rcl as a launch file
//! passes them (issue 23): ROS-Thymio's launch files give asebaros `reload_script_on_reconnect` (its ROS 1 name;
//! the ROS 2 code reads `script.reload_on_reconnect`) and the driver `launch_model`. Before, the driver refused to
//! start (`unknown configuration key reload_script_on_reconnect`). Also docs/configuration.md's command line forms:
//! `thymio-rt run -- --ros-args -p …` and `--ros-args --params-file …`.
#![cfg(feature = "ros2")]

use crate::common;
use crate::rclpy_peer;
use crate::ros_driver;

use common::Proc;
use rclpy_peer::{test_domain_id, RclpyPeer};
use ros_driver::{driver_script_yaml, stop};
use serde_json::{json, Value};
use std::time::{Duration, Instant};

const TEST_TIMEOUT: Duration = Duration::from_secs(120);

/// `get_parameters` of `names` on `node`.
fn get(peer: &mut RclpyPeer, node: &str, names: &[&str], deadline: Instant) -> Vec<Value> {
    let r = peer
        .call(
            &format!("{node}/get_parameters"),
            "rcl_interfaces/srv/GetParameters",
            json!({ "names": names }),
            deadline,
        )
        .unwrap();
    r["values"].as_array().cloned().unwrap_or_default()
}

#[test]
fn ros_thymio_launch_parameter_names_are_in_effect() {
    let deadline = Instant::now() + TEST_TIMEOUT;
    let dir = tempfile::tempdir().unwrap();
    let ns = format!("al{}", std::process::id());
    let config = dir.path().join("config.yaml");
    std::fs::write(&config, driver_script_yaml()).unwrap();
    // ROS-Thymio's asebaros.launch names, and a driver name without use here
    let params = dir.path().join("params.yaml");
    std::fs::write(
        &params,
        "asebaros:\n  ros__parameters:\n    reset_on_closing: true\n    shutdown_on_unconnect: false\n    \
         highest_acceptable_protocol_version: 100\n    launch_model: thymio_description model.launch.py\n    \
         maximal_number_of_nodes: 1\n",
    )
    .unwrap();
    let mut cmd = common::thymio_rt();
    cmd.arg("run")
        .arg("-c")
        .arg(&config)
        .args(["--switch-port", "0", "--", "--ros-args"])
        .args(["-r", &format!("__ns:=/{ns}")])
        .args(["-p", "reload_script_on_reconnect:=true"])
        .args(["-p", "cmd_vel_timeout:=1.5"])
        .arg("--params-file")
        .arg(&params)
        .env("ROS_DOMAIN_ID", test_domain_id().to_string())
        .env("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
        .env_remove("LD_LIBRARY_PATH")
        .env_remove("LD_PRELOAD");
    let mut driver = Proc::spawn("thymio-rt run", cmd);
    driver.wait_line(Duration::from_secs(60), |l| {
        l.contains("ROS 2 interface up")
    });
    let mut peer = RclpyPeer::serve(test_domain_id(), deadline).unwrap();
    let node = format!("/{ns}/asebaros");
    let v = get(
        &mut peer,
        &node,
        &[
            "script.reload_on_reconnect",
            "reload_script_on_reconnect",
            "cmd_vel_timeout",
            "reset_on_closing",
            "maximal_number_of_nodes",
        ],
        deadline,
    );
    assert_eq!(
        v[0]["bool_value"], true,
        "script.reload_on_reconnect: {v:?}"
    );
    // asked by its asebaros name, the same parameter
    assert_eq!(
        v[1]["bool_value"], true,
        "reload_script_on_reconnect: {v:?}"
    );
    assert_eq!(v[2]["double_value"], 1.5, "cmd_vel_timeout: {v:?}");
    assert_eq!(v[3]["bool_value"], true, "reset_on_closing: {v:?}");
    assert_eq!(v[4]["integer_value"], 1, "maximal_number_of_nodes: {v:?}");
    // the ignored name was said, with why
    driver.drain();
    assert!(
        driver
            .seen
            .iter()
            .any(|l| l.contains("launch_model") && l.contains("ignored")),
        "{}",
        driver.seen.join("\n")
    );
    // a set of it at run time is accepted and ignored, saying why
    let r = peer
        .call(
            &format!("{node}/set_parameters"),
            "rcl_interfaces/srv/SetParameters",
            json!({"parameters": [{"name": "launch_model", "value": {"type": 4, "string_value": "x"}}]}),
            deadline,
        )
        .unwrap();
    assert_eq!(r["results"][0]["successful"], true, "{r}");
    assert!(
        r["results"][0]["reason"]
            .as_str()
            .is_some_and(|s| s.contains("ignored")),
        "{r}"
    );
    stop(driver);
}
