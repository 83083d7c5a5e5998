//! ROS 2 across hosts (issues 23 and 25), each host a network namespace of its own (tests/common/netns.rs): the
//! driver on the robot's host, rclpy peers on the same host and on another one.
//!
//! - With `ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST`, another host that names the robot's in its `ROS_STATIC_PEERS`
//!   discovers nothing of the driver and does not move the robot, though it reaches the host (it discovers an rclpy
//!   peer there); the driver keeps serving that local peer, and every DDS socket of the driver is on loopback.
//! - With ROS's defaults, a laptop with ROS's defaults gets odometry and a sensor with default QoS and drives the
//!   robot; on a segment without multicast, the same through `ROS_STATIC_PEERS` on both sides.
//!
//! Every process sets its ROS networking variables explicitly; each test has a DDS domain of its own.
#![cfg(feature = "ros2")]

mod common;
#[path = "ros/rclpy_peer.rs"]
mod rclpy_peer;
#[path = "ros/driver.rs"]
mod ros_driver;

use common::netns::{Lan, Multicast};
use common::Proc;
use rclpy_peer::{project_root, RclpyPeer};
use ros_driver::{driver_script_yaml, stop};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const TEST_TIMEOUT: Duration = Duration::from_secs(120);
/// How long the other host sends commands once it reaches the robot's host.
const ATTACK: Duration = Duration::from_secs(3);

/// The ROS and DDS networking variables a test process may have inherited: each process here gets only those its
/// test names.
const NET_VARS: [&str; 9] = [
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

/// The DDS domain of test `k` (0..3) of this process: away from the other ROS tests' 100..199.
fn domain(k: u32) -> u32 {
    201 + (std::process::id() % 10) * 3 + k
}

fn ros_env(cmd: &mut Command, domain: u32, env: &[(&str, String)]) {
    for var in NET_VARS {
        cmd.env_remove(var);
    }
    cmd.env("ROS_DOMAIN_ID", domain.to_string());
    for (k, v) in env {
        cmd.env(k, v);
    }
}

/// `thymio-rt run` on host `host` with the driver script on one simulated robot (in the middle of a 2 m arena,
/// facing east), namespace `/<ns>`.
fn driver_on(
    lan: &Lan,
    host: usize,
    dir: &Path,
    ns: &str,
    domain: u32,
    env: &[(&str, String)],
) -> Proc {
    let arena = dir.join(format!("{ns}-arena.yaml"));
    std::fs::write(
        &arena,
        "width: 2.0\nheight: 2.0\nrobots:\n  - [1.0, 1.0, 0.0]\n",
    )
    .unwrap();
    let config = dir.join(format!("{ns}.yaml"));
    let yaml = format!(
        "{}sim: {{arena: {}, robots: 1}}\n",
        driver_script_yaml(),
        arena.display()
    );
    std::fs::write(&config, yaml).unwrap();
    let bin = common::thymio_rt();
    let mut c = lan.command(host, bin.get_program());
    c.arg("run")
        .arg("-c")
        .arg(&config)
        .args(["--switch-port", "0", "--ros-args", "-r"])
        .arg(format!("__ns:=/{ns}"))
        .env_remove("THYMIO_LOG")
        .env_remove("LD_LIBRARY_PATH")
        .env_remove("LD_PRELOAD");
    ros_env(&mut c, domain, env);
    Proc::spawn("thymio-rt run", c)
}

/// An rclpy peer in `serve` mode on host `host`, once ready.
fn peer_on(
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

fn x_of(odom: &Value) -> f64 {
    odom["pose"]["pose"]["position"]["x"].as_f64().unwrap()
}

fn y_of(odom: &Value) -> f64 {
    odom["pose"]["pose"]["position"]["y"].as_f64().unwrap()
}

fn moving(odom: &Value) -> bool {
    odom["twist"]["twist"]["linear"]["x"]
        .as_f64()
        .unwrap()
        .abs()
        > 0.01
}

/// Publishes `{"linear": {"x": speed}}` on `topic` for `how_long`, at 10 Hz (as a teleoperation node does), the
/// first once `subscribers` subscribers are matched.
fn drive(
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

/// Reads what the peer reported until `until` (nothing consumed: [`RclpyPeer::received`] sees it).
fn read_until(peer: &mut RclpyPeer, until: Instant) {
    peer.poll_map(until, |_| None::<Result<(), String>>)
        .unwrap();
}

/// The local addresses of the UDP sockets of process `pid` on host `host`.
fn udp_sockets_of(lan: &Lan, host: usize, pid: u32) -> Vec<String> {
    let out = lan
        .command(host, "ss")
        .args(["-uanpH"])
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

#[test]
fn a_localhost_driver_is_out_of_reach_of_another_host() {
    if !common::can_make_hosts() {
        return; // recorded: the machine forbids namespaces, or `ip` is missing and the run opted out
    }
    let deadline = Instant::now() + TEST_TIMEOUT;
    let lan = Lan::new(2, Multicast::On).expect("make the LAN");
    let dir = tempfile::tempdir().unwrap();
    let (robot, other) = (0, 1);
    let dom = domain(0);
    let ns = "one_host";
    let t = |leaf: &str| format!("/{ns}/{leaf}");
    let localhost = [("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST".to_string())];
    let mut driver = driver_on(&lan, robot, dir.path(), ns, dom, &localhost);
    let mut local = peer_on(&lan, robot, dom, &localhost, deadline);
    local
        .subscribe(&t("odom"), "nav_msgs/msg/Odometry", "volatile", deadline)
        .unwrap();
    let before = local.message(&t("odom"), deadline, |_| true).unwrap();
    // The canary: the local peer runs rmw_fastrtps's own LOCALHOST setup, which listens on every interface.
    local
        .publish(
            "/canary",
            "std_msgs/msg/String",
            json!({"data": "here"}),
            0,
            deadline,
        )
        .unwrap();

    let peers = [("ROS_STATIC_PEERS", lan.host(robot).addr.to_string())];
    let mut intruder = peer_on(&lan, other, dom, &peers, deadline);
    // the other host does reach the robot's host: it discovers the canary
    while intruder.publishers("/canary", deadline).unwrap() == 0 {
        assert!(
            Instant::now() < deadline,
            "the other host never discovered the canary on the robot's host: the test bench does not work"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    drive(&mut intruder, &t("cmd_vel"), 0.2, 0, ATTACK, deadline);

    let topics = intruder.topics(deadline).unwrap();
    assert!(
        topics.is_empty(),
        "the other host discovered the driver's topics: {topics:?}"
    );
    let subscribers = intruder.subscribers(&t("cmd_vel"), deadline).unwrap();
    assert!(
        subscribers.is_empty(),
        "the other host discovered the driver's cmd_vel subscription: {subscribers:?}"
    );
    // the robot did not move: the odometry read on its own host during and after the commands
    read_until(&mut local, Instant::now() + Duration::from_millis(300));
    assert!(
        !local.received(&t("odom"), moving),
        "the robot moved under the other host's commands:\n{}",
        local.unconsumed()
    );
    local.forget(&t("odom"));
    let after = local.message(&t("odom"), deadline, |_| true).unwrap();
    let moved = (x_of(&after) - x_of(&before)).hypot(y_of(&after) - y_of(&before));
    assert!(moved < 0.001, "the robot moved {moved} m");

    // every DDS socket of the driver (its one participant carries every node, the hidden hot node too) is on loopback
    let sockets = udp_sockets_of(&lan, robot, driver.child.id());
    assert!(!sockets.is_empty(), "no UDP socket of the driver found");
    assert!(
        sockets.iter().all(|a| a.starts_with("127.0.0.1:")),
        "driver sockets beyond loopback: {sockets:?}"
    );

    // the driver still obeys its own host
    drive(
        &mut local,
        &t("cmd_vel"),
        0.1,
        1,
        Duration::from_secs(1),
        deadline,
    );
    local.message(&t("odom"), deadline, moving).unwrap();

    // it said which boundary is in force, and removes its profile when it ends
    driver.drain();
    let line = driver
        .seen
        .iter()
        .find(|l| l.contains("DDS boundary: this host only"))
        .cloned()
        .unwrap_or_else(|| panic!("no boundary line:\n{}", driver.seen.join("\n")));
    let profile = PathBuf::from(
        line.split("(profile ")
            .nth(1)
            .and_then(|rest| rest.split(')').next())
            .expect("the line names the profile"),
    );
    assert!(profile.is_file(), "{} is not there", profile.display());
    drop(intruder);
    drop(local);
    stop(driver);
    assert!(!profile.exists(), "{} left behind", profile.display());
}

/// The driver with ROS's defaults on the robot's host, rclpy with ROS's defaults on a laptop: odometry and a sensor
/// with default QoS arrive, cmd_vel moves the robot. Without multicast both sides name the other in
/// `ROS_STATIC_PEERS`.
fn a_laptop_drives_the_robot(multicast: Multicast, k: u32) {
    if !common::can_make_hosts() {
        return; // recorded: the machine forbids namespaces, or `ip` is missing and the run opted out
    }
    let deadline = Instant::now() + TEST_TIMEOUT;
    let lan = Lan::new(2, multicast).expect("make the LAN");
    let dir = tempfile::tempdir().unwrap();
    let (robot, laptop) = (0, 1);
    let dom = domain(k);
    let ns = "lab";
    let t = |leaf: &str| format!("/{ns}/{leaf}");
    let peer_of = |host: usize| match multicast {
        Multicast::On => vec![],
        Multicast::Off => vec![("ROS_STATIC_PEERS", lan.host(host).addr.to_string())],
    };
    let mut driver = driver_on(&lan, robot, dir.path(), ns, dom, &peer_of(laptop));
    let mut peer = peer_on(&lan, laptop, dom, &peer_of(robot), deadline);
    peer.subscribe(&t("odom"), "nav_msgs/msg/Odometry", "volatile", deadline)
        .unwrap();
    peer.subscribe(
        &t("proximity/center"),
        "sensor_msgs/msg/Range",
        "volatile",
        deadline,
    )
    .unwrap();
    let front = peer
        .message(&t("proximity/center"), deadline, |_| true)
        .unwrap();
    assert_eq!(
        front["header"]["frame_id"],
        format!("{ns}/proximity_center_link")
    );
    let start = x_of(&peer.message(&t("odom"), deadline, |_| true).unwrap());
    drive(
        &mut peer,
        &t("cmd_vel"),
        0.1,
        1,
        Duration::from_secs(2),
        deadline,
    );
    let moving = peer
        .message(&t("odom"), deadline, |m| {
            m["twist"]["twist"]["linear"]["x"].as_f64().unwrap() > 0.05
        })
        .unwrap();
    assert!(x_of(&moving) > start, "odom did not advance: {moving}");
    driver.drain();
    assert!(
        driver
            .seen
            .iter()
            .any(|l| l.contains("DDS boundary: discovery range SUBNET")),
        "no boundary line:\n{}",
        driver.seen.join("\n")
    );
    drop(peer);
    stop(driver);
}

#[test]
fn a_laptop_with_ros_defaults_drives_the_robot() {
    a_laptop_drives_the_robot(Multicast::On, 1);
}

#[test]
fn without_multicast_static_peers_reach_the_robot() {
    a_laptop_drives_the_robot(Multicast::Off, 2);
}
