//! The ROS 1 peers of the tests and of the benchmark: Debian's rosmaster and a rospy client
//! (tests/ros1/rospy_peer.py), and `thymio-rt run --ros1` on the embedded simulator, all on loopback with a
//! master port of their own ([`rospy_in`] runs the rospy client on a test host of `tests/common/netns.rs`).
#![allow(dead_code)]

use super::common::{self, Proc};
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

/// The system Python that has Debian's rospy.
pub const PYTHON: &str = "/usr/bin/python3";

/// Whether Debian's rosmaster and rospy are installed (scripts/setup-ros1.sh). A missing one fails the test, naming
/// it and the install step (`common::missing::peer_missing`); `false` only when the run opted out (the skip is
/// recorded: end the test).
pub fn need_ros1() -> bool {
    const MODULES: &str = "rospy, genpy, nav_msgs.msg, tf2_msgs.msg, diagnostic_msgs.msg";
    let missing = if !std::path::Path::new("/usr/bin/rosmaster").exists() {
        Some("Debian's rosmaster (/usr/bin/rosmaster)".to_owned())
    } else {
        match Command::new(PYTHON)
            .args(["-c", &format!("import {MODULES}")])
            .output()
        {
            Ok(o) if o.status.success() => None,
            Ok(o) => Some(format!(
                "Debian's rospy for {PYTHON} ({}: {})",
                MODULES,
                String::from_utf8_lossy(&o.stderr)
                    .trim()
                    .lines()
                    .last()
                    .unwrap_or("")
            )),
            Err(e) => Some(format!("{PYTHON} ({e})")),
        }
    };
    match missing {
        None => true,
        Some(peer) => {
            common::missing::peer_missing(&peer, common::missing::ROS1_SETUP);
            false
        }
    }
}

/// `ROS_MASTER_URI` of a master on `port`.
pub fn master_uri(port: u16) -> String {
    format!("http://127.0.0.1:{port}")
}

/// A rosmaster on 127.0.0.1:`port` (ROS_IP=127.0.0.1 makes it bind loopback), up when this returns.
pub fn rosmaster(port: u16) -> Proc {
    let mut c = Command::new(PYTHON);
    c.args(["/usr/bin/rosmaster", "--core", "-p", &port.to_string()])
        .env("ROS_IP", "127.0.0.1")
        .env("ROS_MASTER_URI", master_uri(port))
        .env(
            "ROS_HOME",
            std::env::temp_dir().join(format!("ros1-home-{port}")),
        );
    let p = Proc::spawn("rosmaster", c);
    common::wait_listening(port, Duration::from_secs(20));
    p
}

/// `thymio-rt run --ros1 --no-ros` on the embedded simulator, registered with the master on `port`.
pub fn driver(port: u16, extra: &[&str]) -> Proc {
    let mut c = driver_command(port);
    c.arg("--no-ros").args(extra);
    let mut p = Proc::spawn("thymio-rt --ros1", c);
    p.wait_line(Duration::from_secs(60), |l| {
        l.contains("ROS 1 interface up")
    });
    p
}

/// `thymio-rt run --ros1` on the embedded simulator, registered with the master on `port` (add the arguments).
pub fn driver_command(port: u16) -> Command {
    let mut c = common::thymio_rt();
    c.args(["run", "--ros1", "--switch-port", "0", "--duration", "170"])
        .env("ROS_MASTER_URI", master_uri(port))
        .env("ROS_IP", "127.0.0.1")
        .env_remove("ROS_HOSTNAME")
        .env_remove("ROS_NAMESPACE")
        // as in a Rust developer's shell: service errors must not carry a backtrace
        .env("RUST_BACKTRACE", "1")
        .env_remove("RUST_LIB_BACKTRACE");
    c
}

fn script() -> PathBuf {
    common::root().join("tests/ros1/rospy_peer.py")
}

/// Runs a scenario of the rospy peer against the master on `port` (bounded by `timeout`); its JSON result.
pub fn rospy(port: u16, scenario: &[&str], timeout: Duration) -> serde_json::Value {
    rospy_in(
        Command::new("timeout"),
        &master_uri(port),
        "127.0.0.1",
        scenario,
        timeout,
    )
}

/// Runs a scenario of the rospy peer through `launcher` (`timeout`, or `ip netns exec NS timeout` for another
/// host) with `ROS_MASTER_URI=master` and `ROS_IP=ros_ip`, bounded by `timeout`; its JSON result.
pub fn rospy_in(
    launcher: Command,
    master: &str,
    ros_ip: &str,
    scenario: &[&str],
    timeout: Duration,
) -> serde_json::Value {
    script_in(launcher, &script(), master, ros_ip, scenario, timeout)
}

/// Runs a scenario of the rospy peer `name` of tests/ros1 (e.g. `control_peer.py`, which shares rospy_peer.py's
/// helpers) against the master on `port` (bounded by `timeout`); its JSON result.
pub fn rospy_script(
    port: u16,
    name: &str,
    scenario: &[&str],
    timeout: Duration,
) -> serde_json::Value {
    let path = common::root().join("tests/ros1").join(name);
    script_in(
        Command::new("timeout"),
        &path,
        &master_uri(port),
        "127.0.0.1",
        scenario,
        timeout,
    )
}

fn script_in(
    mut launcher: Command,
    script: &std::path::Path,
    master: &str,
    ros_ip: &str,
    scenario: &[&str],
    timeout: Duration,
) -> serde_json::Value {
    let home = std::env::temp_dir().join(format!(
        "ros1-home-{}",
        master.rsplit(':').next().unwrap_or_default()
    ));
    launcher
        .arg(format!("{}", timeout.as_secs()))
        .arg(PYTHON)
        .arg(script)
        .args(scenario)
        .env("ROS_MASTER_URI", master)
        .env("ROS_IP", ros_ip)
        .env_remove("ROS_HOSTNAME")
        .env("ROS_HOME", home);
    let out = launcher.output().expect("run the rospy peer");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let last = stdout.lines().last().unwrap_or_default();
    serde_json::from_str(last).unwrap_or_else(|e| {
        panic!(
            "rospy peer {scenario:?}: no JSON result ({e}); status {:?}\nstdout:\n{stdout}\nstderr:\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// Runs `scenario` until `ok` holds for its result (each run bounded), at most `timeout` in all.
pub fn rospy_until(
    port: u16,
    scenario: &[&str],
    timeout: Duration,
    ok: impl Fn(&serde_json::Value) -> bool,
) -> serde_json::Value {
    let deadline = Instant::now() + timeout;
    loop {
        let v = rospy(port, scenario, Duration::from_secs(30));
        if ok(&v) || Instant::now() >= deadline {
            return v;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}
