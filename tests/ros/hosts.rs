//! What the multi-host ROS 2 tests share (included with `#[path]`, beside `tests/common/netns.rs`): the driver and
//! rclpy peers started on a host of a [`Lan`] with only the ROS networking variables the test names, and the
//! odometry readings they check.
#![allow(dead_code)]

use crate::common::netns::Lan;
use crate::common::{self, Proc};
use crate::rclpy_peer::{project_root, RclpyPeer};
use crate::ros_driver::driver_script_yaml;
use serde_json::{json, Value};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The ROS and DDS networking variables a test process may have inherited: each process here gets only those its
/// test names.
pub const NET_VARS: [&str; 9] = [
    "ROS_AUTOMATIC_DISCOVERY_RANGE",
    "ROS_LOCALHOST_ONLY",
    "ROS_STATIC_PEERS",
    "ROS_DISCOVERY_SERVER",
    "FASTRTPS_DEFAULT_PROFILES_FILE",
    "FASTDDS_DEFAULT_PROFILES_FILE",
    "SKIP_DEFAULT_XML_FILE",
    "RMW_IMPLEMENTATION",
    "CYCLONEDDS_URI",
];

/// The DDS domain of test `k` (0..9) of a test binary. Each test's hosts are namespaces of their own, so
/// domains only keep apart the tests of one process started on the same host by mistake.
pub fn domain(k: u32) -> u32 {
    160 + (std::process::id() % 7) * 10 + k
}

/// Clears the inherited networking variables of `cmd`, then sets `ROS_DOMAIN_ID` and `env`.
pub fn ros_env(cmd: &mut Command, domain: u32, env: &[(&str, String)]) {
    for var in NET_VARS {
        cmd.env_remove(var);
    }
    cmd.env("ROS_DOMAIN_ID", domain.to_string());
    for (k, v) in env {
        cmd.env(k, v);
    }
}

/// `ROS_STATIC_PEERS` naming host `host` (for a segment without multicast).
pub fn static_peer(lan: &Lan, host: usize) -> (&'static str, String) {
    ("ROS_STATIC_PEERS", lan.host(host).addr.to_string())
}

/// How a driver is started on a host.
pub struct DriverSpec<'a> {
    /// Its namespace (`/<ns>`), also the name of its files.
    pub ns: &'a str,
    /// The arena file of its simulated robot (`None`: a 2 m arena, one robot in the middle facing east).
    pub arena: Option<&'a Path>,
    /// Configuration lines appended to the driver script's.
    pub yaml: &'a str,
    /// Arguments of `thymio-rt run` before `--ros-args` (default: the switch disabled).
    pub run_args: &'a [&'a str],
    /// Parameters (`-p` values) after the namespace remapping.
    pub params: &'a [&'a str],
}

impl<'a> DriverSpec<'a> {
    /// One robot in the middle of a 2 m arena, no switch, namespace `/<ns>`.
    pub fn new(ns: &'a str) -> Self {
        DriverSpec {
            ns,
            arena: None,
            yaml: "",
            run_args: &["--switch-port", "0"],
            params: &[],
        }
    }
}

/// `thymio-rt run` on host `host` as `spec` says, with ROS domain `domain` and the networking variables `env`.
pub fn driver_with(
    lan: &Lan,
    host: usize,
    dir: &Path,
    spec: &DriverSpec<'_>,
    domain: u32,
    env: &[(&str, String)],
) -> Proc {
    let ns = spec.ns;
    let arena = match spec.arena {
        Some(a) => a.to_path_buf(),
        None => {
            let a = dir.join(format!("{ns}-arena.yaml"));
            std::fs::write(
                &a,
                "width: 2.0\nheight: 2.0\nrobots:\n  - [1.0, 1.0, 0.0]\n",
            )
            .unwrap();
            a
        }
    };
    let config = dir.join(format!("{ns}.yaml"));
    let yaml = format!(
        "{}sim: {{arena: {}, robots: 1}}\n{}",
        driver_script_yaml(),
        arena.display(),
        spec.yaml
    );
    std::fs::write(&config, yaml).unwrap();
    let bin = common::thymio_rt();
    let mut c = lan.command(host, bin.get_program());
    c.arg("run")
        .arg("-c")
        .arg(&config)
        .args(spec.run_args)
        .args(["--ros-args", "-r"])
        .arg(format!("__ns:=/{ns}"));
    for p in spec.params {
        c.args(["-p", p]);
    }
    c.env_remove("THYMIO_LOG")
        .env_remove("LD_LIBRARY_PATH")
        .env_remove("LD_PRELOAD");
    ros_env(&mut c, domain, env);
    Proc::spawn("thymio-rt run", c)
}

/// `thymio-rt run` on host `host` with the driver script on one simulated robot (in the middle of a 2 m arena,
/// facing east), namespace `/<ns>`.
pub fn driver_on(
    lan: &Lan,
    host: usize,
    dir: &Path,
    ns: &str,
    domain: u32,
    env: &[(&str, String)],
) -> Proc {
    driver_with(lan, host, dir, &DriverSpec::new(ns), domain, env)
}

/// An rclpy peer in `serve` mode on host `host`, once ready.
pub fn peer_on(
    lan: &Lan,
    host: usize,
    domain: u32,
    env: &[(&str, String)],
    deadline: Instant,
) -> RclpyPeer {
    let root = project_root();
    let mut c = lan.command(host, root.join(".venv-ros/bin/python"));
    c.arg(root.join("tests/ros/rclpy_peer.py"))
        .args(["serve", "--timeout", "150"]);
    ros_env(&mut c, domain, env);
    let mut peer = RclpyPeer::spawn_command(c).expect("start the rclpy peer");
    peer.wait_for("ready", deadline).unwrap();
    peer
}

/// The x of an odometry message.
pub fn x_of(odom: &Value) -> f64 {
    odom["pose"]["pose"]["position"]["x"].as_f64().unwrap()
}

/// The y of an odometry message.
pub fn y_of(odom: &Value) -> f64 {
    odom["pose"]["pose"]["position"]["y"].as_f64().unwrap()
}

/// The forward speed of an odometry message.
pub fn speed_of(odom: &Value) -> f64 {
    odom["twist"]["twist"]["linear"]["x"].as_f64().unwrap()
}

/// Whether an odometry message shows the robot driving (above 1 cm/s).
pub fn moving(odom: &Value) -> bool {
    speed_of(odom).abs() > 0.01
}

/// Publishes `{"linear": {"x": speed}}` on `topic` for `how_long`, at 10 Hz (as a teleoperation node does), the
/// first once `subscribers` subscribers are matched.
pub fn drive(
    peer: &mut RclpyPeer,
    topic: &str,
    speed: f64,
    subscribers: usize,
    how_long: Duration,
    deadline: Instant,
) {
    let msg = json!({"linear": {"x": speed}});
    peer.publish(
        topic,
        "geometry_msgs/msg/Twist",
        msg.clone(),
        subscribers,
        deadline,
    )
    .unwrap();
    let t0 = Instant::now();
    while t0.elapsed() < how_long {
        std::thread::sleep(Duration::from_millis(100));
        peer.publish(topic, "geometry_msgs/msg/Twist", msg.clone(), 0, deadline)
            .unwrap();
    }
}

/// Publishes `{"linear": {"x": speed}}` on `topic` every 100 ms (the first once a subscriber is matched) until
/// `done` holds (it is given the publishing peer; it may read it, or another peer it captured), as a
/// teleoperation node streams: the driver obeys a publisher from the moment it has discovered it (its `cmd_vel`
/// reader is best effort, so what came before is not repaired). Panics at `deadline`.
pub fn drive_until(
    peer: &mut RclpyPeer,
    topic: &str,
    speed: f64,
    deadline: Instant,
    mut done: impl FnMut(&mut RclpyPeer) -> bool,
) {
    let msg = json!({"linear": {"x": speed}});
    let mut subscribers = 1;
    loop {
        peer.publish(
            topic,
            "geometry_msgs/msg/Twist",
            msg.clone(),
            subscribers,
            deadline,
        )
        .unwrap();
        subscribers = 0;
        let next = Instant::now() + Duration::from_millis(100);
        if done(peer) {
            return;
        }
        assert!(Instant::now() < deadline, "{topic}: never done");
        if let Some(wait) = next.checked_duration_since(Instant::now()) {
            std::thread::sleep(wait);
        }
    }
}

/// Whether, within 100 ms, `peer` reads a message on `topic` that satisfies `pred` (what it read stays readable).
pub fn sees(peer: &mut RclpyPeer, topic: &str, pred: impl FnMut(&Value) -> bool) -> bool {
    read_until(peer, Instant::now() + Duration::from_millis(100));
    peer.received(topic, pred)
}

/// Reads what the peer reported until `until` (nothing consumed: [`RclpyPeer::received`] sees it).
pub fn read_until(peer: &mut RclpyPeer, until: Instant) {
    peer.poll_map(until, |_| None::<Result<(), String>>)
        .unwrap();
}

/// The local addresses of the sockets of process `pid` on host `host` (`ss` flags: `-uanpH` UDP, `-tlnpH`
/// listening TCP).
pub fn sockets_of(lan: &Lan, host: usize, pid: u32, flags: &str) -> Vec<String> {
    let out = lan
        .command(host, "ss")
        .arg(flags)
        .stdin(Stdio::null())
        .output()
        .expect("ss");
    let needle = format!("pid={pid},");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.contains(&needle))
        .filter_map(|l| l.split_whitespace().nth(3).map(str::to_owned))
        .collect()
}
