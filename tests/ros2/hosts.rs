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

use crate::common;
use crate::lan_hosts as hosts;
use crate::rclpy_peer;
use crate::ros_driver;

use common::netns::{Lan, Multicast};
use common::Proc;
use hosts::{
    domain, drive, drive_until, driver_on, driver_with, moving, peer_on, read_until, ros_env, sees,
    sockets_of, speed_of, x_of, y_of, DriverSpec,
};
use rclpy_peer::project_root;
use ros_driver::stop;
use serde_json::{json, Value};
use std::path::PathBuf;
use std::time::{Duration, Instant};

const TEST_TIMEOUT: Duration = Duration::from_secs(120);
/// How long the other host sends commands once it reaches the robot's host.
const ATTACK: Duration = Duration::from_secs(3);

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
    let sockets = sockets_of(&lan, robot, driver.child.id(), "-uanpH");
    assert!(!sockets.is_empty(), "no UDP socket of the driver found");
    assert!(
        sockets.iter().all(|a| a.starts_with("127.0.0.1:")),
        "driver sockets beyond loopback: {sockets:?}"
    );

    // the driver still obeys its own host
    drive_until(&mut local, &t("cmd_vel"), 0.1, deadline, |p| {
        sees(p, &t("odom"), moving)
    });

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
    drive_until(&mut peer, &t("cmd_vel"), 0.1, deadline, |p| {
        sees(p, &t("odom"), |m| speed_of(m) > 0.05)
    });
    let moving = peer
        .message(&t("odom"), deadline, |m| speed_of(m) > 0.05)
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

/// The action and the communication switch from the laptop: a `calibrate_motors` goal sent from the other host
/// runs (feedback arrives), the latched `controller_owner` says `calibrate_motors`, a `switch_controller` to
/// `calibrate_motors` is refused and one to `ros` aborts the goal and gives the wheels back.
#[test]
fn the_action_and_the_switch_work_from_the_laptop() {
    if !common::can_make_hosts() {
        return;
    }
    let lan = Lan::new(2, Multicast::On).expect("make the LAN");
    let dir = tempfile::tempdir().unwrap();
    let (robot, laptop) = (0, 1);
    let dom = domain(3);
    let cal_file = dir.path().join("thymio_calibration.yaml");
    std::fs::write(&cal_file, "").unwrap();
    let arena = project_root().join("config/arena/calibration.yaml");
    let yaml = format!("calibration_file: {}\n", cal_file.display());
    let mut spec = DriverSpec::new("cal");
    spec.arena = Some(&arena);
    spec.yaml = &yaml;
    let mut driver = driver_with(&lan, robot, dir.path(), &spec, dom, &[]);
    let root = project_root();
    let mut cmd = lan.command(laptop, root.join(".venv-ros/bin/python"));
    cmd.arg(root.join("tests/ros/calibration_client.py"))
        .args(["cal", "--timeout", "80", "--phases", "switched"])
        .env("PYTHONUNBUFFERED", "1")
        .env_remove("_ROS_WHEELS_BOOTSTRAP_COMPLETE");
    ros_env(&mut cmd, dom, &[]);
    let mut client = Proc::spawn("calibration client", cmd);
    let last = client.wait_line(Duration::from_secs(100), |l| {
        ["done", "error", "timeout"]
            .iter()
            .any(|e| l.contains(&format!("\"event\": \"{e}\"")))
    });
    driver.drain();
    let all = client.seen.join("\n");
    assert!(
        last.contains("\"done\""),
        "client: {last}\n{all}\ndriver:\n{}",
        driver.seen.join("\n")
    );
    assert!(
        all.contains("\"event\": \"feedback\""),
        "no feedback: {all}"
    );
    let s: Value = client
        .seen
        .iter()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|v| v["event"] == "switched")
        .unwrap_or_else(|| panic!("no switched event: {all}"));
    assert_eq!(s["refused_success"], false, "{s}");
    assert_eq!(s["owner_during"], "calibrate_motors", "{s}");
    assert_eq!(s["switch_success"], true, "{s}");
    assert_eq!(s["status"], 6, "ABORTED: {s}");
    assert_eq!(s["owner_after"], "ros", "{s}");
    stop(driver);
}

/// A fleet: two robot hosts, each with its driver in a namespace of its own (`--ros-args -r __ns:=/robot_a`), and
/// an operator host with ROS's defaults that sees both robots and drives each separately; neither driver reports
/// a name conflict.
#[test]
fn an_operator_drives_each_robot_of_a_fleet_separately() {
    if !common::can_make_hosts() {
        return;
    }
    let deadline = Instant::now() + TEST_TIMEOUT;
    let lan = Lan::new(3, Multicast::On).expect("make the LAN");
    let dir = tempfile::tempdir().unwrap();
    let dom = domain(4);
    let names = ["robot_a", "robot_b"];
    let mut drivers: Vec<Proc> = names
        .iter()
        .enumerate()
        .map(|(host, ns)| driver_on(&lan, host, dir.path(), ns, dom, &[]))
        .collect();
    let operator = 2;
    let mut peer = peer_on(&lan, operator, dom, &[], deadline);
    let odom = |ns: &str| format!("/{ns}/odom");
    for ns in names {
        peer.subscribe(&odom(ns), "nav_msgs/msg/Odometry", "volatile", deadline)
            .unwrap();
        peer.message(&odom(ns), deadline, |_| true).unwrap();
    }
    // each robot in turn: it moves, the other does not
    for (i, ns) in names.iter().enumerate() {
        let other = names[1 - i];
        let speed = if i == 0 { 0.1 } else { -0.1 };
        // the other robot is still before the command
        peer.forget(&odom(other));
        peer.message(&odom(other), deadline, |m| !moving(m))
            .unwrap();
        // (what came before the stop, its deceleration, is not this command's doing)
        peer.forget(&odom(other));
        let start = x_of(&peer.message(&odom(other), deadline, |_| true).unwrap());
        peer.forget(&odom(ns));
        let topic = format!("/{ns}/cmd_vel");
        drive_until(&mut peer, &topic, speed, deadline, |p| {
            sees(p, &odom(ns), |m| speed_of(m) * speed.signum() > 0.05)
        });
        assert!(
            !peer.received(&odom(other), moving),
            "{other} moved under {ns}'s commands:\n{}",
            peer.unconsumed()
        );
        peer.forget(&odom(other));
        let end = x_of(&peer.message(&odom(other), deadline, |_| true).unwrap());
        assert!((end - start).abs() < 0.001, "{other} moved {start} → {end}");
    }
    for d in &mut drivers {
        d.drain();
        assert!(
            !d.seen.iter().any(|l| l.contains("another")),
            "a driver reported a name conflict:\n{}",
            d.seen.join("\n")
        );
    }
    drop(peer);
    drivers.into_iter().for_each(stop);
}
