//! The driver binary under ROS, for the ROS tests of the root package (included with `#[path]`, beside `common` and
//! `rclpy_peer`): started in its own namespace on the test's ROS domain, stopped cleanly, and the asebaros calls and
//! reports the tests wait for.
#![allow(dead_code)] // each including test uses a part

use crate::common::{self, Proc};
use crate::rclpy_peer::{test_domain_id, RclpyPeer};
use serde_json::{json, Value};
use std::path::Path;
use std::time::{Duration, Instant};

/// rcl_interfaces/msg/Log level WARN.
pub const LOG_WARN: u64 = 30;
/// rcl_interfaces/msg/Log level ERROR.
pub const LOG_ERROR: u64 = 40;

/// The configuration lines that run the driver script with an unprivileged RT thread (these are functional tests).
pub fn driver_script_yaml() -> String {
    format!(
        "script: {{path: {}}}\nrt: {{priority: 0, lock_memory: false}}\n",
        common::root()
            .join("config/aseba/thymio_ros.aesl")
            .display()
    )
}

/// `thymio-rt run` with configuration `yaml` (written to `<dir>/<ns>.yaml`), the command line arguments
/// `run_args`, namespace `/<ns>` and the ROS parameters `params` (`name:=value`), on this test's ROS domain.
pub fn ros_driver(dir: &Path, ns: &str, yaml: &str, run_args: &[&str], params: &[&str]) -> Proc {
    let config = dir.join(format!("{ns}.yaml"));
    std::fs::write(&config, yaml).unwrap();
    let mut cmd = common::thymio_rt();
    cmd.arg("run").arg("-c").arg(&config).args(run_args);
    cmd.args(["--ros-args", "-r", &format!("__ns:=/{ns}")]);
    for p in params {
        cmd.args(["-p", p]);
    }
    cmd.env("ROS_DOMAIN_ID", test_domain_id().to_string())
        .env("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
        .env_remove("LD_LIBRARY_PATH")
        .env_remove("LD_PRELOAD");
    Proc::spawn("thymio-rt run", cmd)
}

/// Stops the driver with SIGINT and checks it ends cleanly.
pub fn stop(mut driver: Proc) {
    driver.signal(nix::sys::signal::Signal::SIGINT);
    let status = driver.wait_exit(Duration::from_secs(15));
    assert!(
        status.success(),
        "thymio-rt run ended with {status}:\n{}",
        driver.seen.join("\n")
    );
}

/// The rclpy peer on this test's ROS domain, subscribed to `/rosout` (latched: it sees the reports sent before).
pub fn rosout_peer(deadline: Instant) -> RclpyPeer {
    let mut peer = RclpyPeer::serve(test_domain_id(), deadline).unwrap();
    peer.subscribe(
        "/rosout",
        "rcl_interfaces/msg/Log",
        "transient_local",
        deadline,
    )
    .unwrap();
    peer
}

/// Subscribes `peer` to `/diagnostics`.
pub fn subscribe_diagnostics(peer: &mut RclpyPeer, deadline: Instant) {
    peer.subscribe(
        "/diagnostics",
        "diagnostic_msgs/msg/DiagnosticArray",
        "volatile",
        deadline,
    )
    .unwrap();
}

/// `/<ns>/aseba/get_variable` of `var`: its values (empty if the bridge could not read it).
pub fn get_variable(peer: &mut RclpyPeer, ns: &str, var: &str, deadline: Instant) -> Value {
    peer.call(
        &format!("/{ns}/aseba/get_variable"),
        "asebaros_msgs/srv/GetVariable",
        json!({ "variable": var }),
        deadline,
    )
    .unwrap()["data"]
        .clone()
}

/// Waits for a report of `level` on `/rosout` from the bridge of namespace `ns` whose text holds `needle`.
pub fn expect_log(peer: &mut RclpyPeer, ns: &str, level: u64, needle: &str, deadline: Instant) {
    log_heard(peer, ns, level, needle, deadline).unwrap_or_else(|e| {
        panic!(
            "no report containing {needle:?}: {e}\nreports:\n{}",
            peer.unconsumed()
        )
    });
}

/// The bridge's `/rosout` report at `level` containing `needle`, waiting until `until`.
pub fn log_heard(
    peer: &mut RclpyPeer,
    ns: &str,
    level: u64,
    needle: &str,
    until: Instant,
) -> Result<Value, String> {
    let logger = format!("{ns}.asebaros");
    peer.message("/rosout", until, |m| {
        m["name"] == logger.as_str()
            && m["level"] == level
            && m["msg"].as_str().is_some_and(|t| t.contains(needle))
    })
}
