//! End to end, what a ROS-Thymio user does first (issue 16), through rclpy: the binary alone (no `--config`, run
//! from a directory that is not the repository) is the Thymio driver on the embedded simulated Thymio-II; every
//! topic of the Thymio interface reaches a subscriber with ROS 2's default QoS; `cmd_vel` as `TwistStamped`.
//!
//! Each test has a DDS domain of its own ([`domain`]); the RT thread runs unprivileged (ROS parameters
//! `rt.priority`, `rt.lock_memory`: these are functional tests).
#![cfg(feature = "ros2")]

use crate::common;
use crate::rclpy_peer;

use common::Proc;
use msgs::wire::{Message, Words};
use rclpy_peer::RclpyPeer;
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::io::Write;
use std::net::TcpStream;
use std::path::Path;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Bound of one whole test.
const TEST_TIMEOUT: Duration = Duration::from_secs(150);
/// The node id of the embedded simulated Thymio-II.
const ROBOT: u16 = 1;

/// A DDS domain for test `k` of this process: 200-232 (the other ROS test processes take 100-199 by their pid),
/// different for each test of the process.
fn domain(k: u32) -> u32 {
    200 + (std::process::id().wrapping_mul(3).wrapping_add(k)) % 33
}

/// `thymio-rt run ARGS` started in `cwd` (a temporary directory, not the repository) on DDS domain `domain`, with
/// no configuration file unless `args` gives one, the RT thread unprivileged, and the ROS parameters `params`
/// (`name:=value`).
fn driver(cwd: &Path, domain: u32, args: &[&str], params: &[&str]) -> Proc {
    let mut cmd = common::thymio_rt();
    cmd.current_dir(cwd).arg("run").args(args);
    cmd.args([
        "--ros-args",
        "-p",
        "rt.priority:=0",
        "-p",
        "rt.lock_memory:=false",
    ]);
    for p in params {
        cmd.args(["-p", p]);
    }
    cmd.env("ROS_DOMAIN_ID", domain.to_string())
        .env("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
        .env_remove("LD_LIBRARY_PATH")
        .env_remove("LD_PRELOAD");
    Proc::spawn("thymio-rt run", cmd)
}

/// Stops the driver with SIGINT, checks it ends cleanly and returns its output.
fn stop(mut driver: Proc) -> Vec<String> {
    driver.signal(nix::sys::signal::Signal::SIGINT);
    let status = driver.wait_exit(Duration::from_secs(15));
    assert!(
        status.success(),
        "thymio-rt run ended with {status}:\n{}",
        driver.seen.join("\n")
    );
    std::mem::take(&mut driver.seen)
}

fn linear_x(odom: &Value) -> f64 {
    odom["twist"]["twist"]["linear"]["x"]
        .as_f64()
        .unwrap_or(f64::NAN)
}

fn x_of(odom: &Value) -> f64 {
    odom["pose"]["pose"]["position"]["x"]
        .as_f64()
        .unwrap_or(f64::NAN)
}

/// A `builtin_interfaces/Time` `ago` before now (system time, as ROS time without simulated time).
fn stamp_ago(ago: Duration) -> Value {
    let t = SystemTime::now().duration_since(UNIX_EPOCH).unwrap() - ago;
    json!({"sec": t.as_secs(), "nanosec": t.subsec_nanos()})
}

/// Publishes `msg` on `/cmd_vel` as `type_name` (every 100 ms or so) until an odometry message satisfies `moving`.
fn drive_until(
    peer: &mut RclpyPeer,
    type_name: &str,
    msg: impl Fn() -> Value,
    deadline: Instant,
    moving: impl Fn(&Value) -> bool,
) -> Value {
    loop {
        peer.publish("/cmd_vel", type_name, msg(), 1, deadline)
            .unwrap();
        let seen = peer
            .poll_map(Instant::now() + Duration::from_millis(100), |r| {
                (r["event"] == "message" && r["topic"] == "/odom" && moving(&r["data"]))
                    .then(|| Ok(r["data"].clone()))
            })
            .unwrap();
        if let Some(odom) = seen {
            return odom;
        }
        assert!(
            Instant::now() < deadline,
            "the robot did not move; stderr of the peer: {}",
            peer.stderr()
        );
    }
}

/// Item 1: `thymio-rt run` with no option but the unprivileged RT thread (and no switch, so as not to take the
/// shared port 33333), from a directory without any file, drives the simulated robot from rclpy. Before, it loaded
/// no driver script: no `cmd_vel`, no `odom`.
#[test]
fn the_binary_alone_drives_a_robot_from_rclpy() {
    let deadline = Instant::now() + TEST_TIMEOUT;
    let cwd = tempfile::tempdir().unwrap();
    let d = domain(1);
    let mut driver = driver(cwd.path(), d, &["--switch-port", "0"], &[]);
    let mut peer = RclpyPeer::serve(d, deadline).unwrap();
    peer.subscribe("/odom", "nav_msgs/msg/Odometry", "volatile", deadline)
        .unwrap();
    let start = x_of(&peer.message("/odom", deadline, |_| true).unwrap());
    let twist = || json!({"linear": {"x": 0.1}});
    let moving = drive_until(&mut peer, "geometry_msgs/msg/Twist", twist, deadline, |m| {
        linear_x(m) > 0.05
    });
    assert!(x_of(&moving) >= start, "{moving}");
    driver.drain();
    let out = stop(driver);
    assert!(
        out.iter()
            .any(|l| l.contains("builtin:aseba/thymio_ros.aesl")),
        "the built-in driver script was not loaded:\n{}",
        out.join("\n")
    );
    assert!(
        !out.iter().any(|l| l.contains("is not driven")),
        "{}",
        out.join("\n")
    );
}

/// The robot events the simulated robot does not emit on request (nobody presses its buttons, no RC5 remote, no
/// other robot talks to it by IR, its microphone threshold is off, it is not knocked): the test emits them as the
/// robot would, through the driver's Aseba switch (a frame whose source is the robot), with their sizes in the
/// driver script.
const ROBOT_EVENTS: [(&str, &[i16]); 10] = [
    ("buttons", &[1, 0, 0, 0, 0]),
    ("button_backward", &[1]),
    ("button_left", &[1]),
    ("button_center", &[1]),
    ("button_forward", &[1]),
    ("button_right", &[1]),
    ("tap", &[]),
    ("sound", &[100]),
    ("remote", &[0, 7]),
    ("comm", &[5, 5, 0, 0, 0, 0, 0, 0, 900, 0, 0, 0, 0, 0, 0]),
];

/// Sends each of [`ROBOT_EVENTS`] once, from the robot, through the switch.
fn emit_robot_events(switch: &mut TcpStream, events: &[String]) {
    for (name, args) in ROBOT_EVENTS {
        let id = events
            .iter()
            .position(|e| e == name)
            .unwrap_or_else(|| panic!("the driver script has no event {name}: {events:?}"));
        let frame = Message::UserEvent {
            id: id as u16,
            args: Words::from_slice(args),
        }
        .to_frame(ROBOT)
        .unwrap();
        switch.write_all(&frame).unwrap();
    }
}

/// The topics ROS-Thymio's driver publishes (ros-aseba-interface.md §3.3), plus the model; the enumeration of the
/// graph must find them all (it finds more: every one it finds is checked).
const THYMIO_TOPICS: &[&str] = &[
    "/odom",
    "/joint_states",
    "/tf",
    "/tf_static",
    "/proximity/left",
    "/proximity/center_left",
    "/proximity/center",
    "/proximity/center_right",
    "/proximity/right",
    "/proximity/rear_left",
    "/proximity/rear_right",
    "/proximity/laser",
    "/ground/left",
    "/ground/right",
    "/imu",
    "/temperature",
    "/tap",
    "/sound",
    "/remote",
    "/buttons",
    "/buttons/backward",
    "/buttons/left",
    "/buttons/center",
    "/buttons/forward",
    "/buttons/right",
    "/comm/rx",
    "/robot_description",
];

/// Whether `topic` belongs to the Thymio interface: not the generic Aseba bridge's (`aseba/…`, `/diagnostics`,
/// whose QoS is asebaros') nor what every ROS node has (`/rosout`, `/parameter_events`).
fn is_thymio_topic(topic: &str) -> bool {
    !(topic.starts_with("/aseba/")
        // the RT controllers' topics (issue 17) publish when their controller does (`reached`
        // when go_to_pose gets a goal, `line_lost` when the line follower loses the line)
        || topic.starts_with("/thymio_driver/controllers/")
        // hidden topics: an action's (calibrate_motors' feedback and status carry its goals), the spinners'
        // wake-ups (carry nothing for anyone)
        || topic.split('/').any(|token| token.starts_with('_'))
        || ["/rosout", "/parameter_events", "/diagnostics"].contains(&topic))
}

/// Item 2: every topic the driver publishes for the robot, enumerated from the ROS graph, reaches an rclpy
/// subscriber with ROS 2's default QoS (reliable, volatile, depth 10; the latched ones, which offer
/// transient-local, with transient-local, as their subscribers do). Before, the sensor topics were best-effort:
/// a default-QoS subscriber received nothing from them.
#[test]
fn every_thymio_topic_reaches_a_default_qos_subscriber() {
    let deadline = Instant::now() + TEST_TIMEOUT;
    let cwd = tempfile::tempdir().unwrap();
    let d = domain(2);
    let port = common::free_port();
    // `~/cmd_vel_out` publishes only with publish_limited_velocity (off by default): on, so that it is checked too
    let driver = driver(
        cwd.path(),
        d,
        &["--switch-port", &port.to_string()],
        &["publish_limited_velocity:=true"],
    );
    let mut peer = RclpyPeer::serve(d, deadline).unwrap();
    peer.call("/is_ready", "std_srvs/srv/Empty", json!({}), deadline)
        .unwrap();
    let description = peer
        .call(
            "/aseba/get_description",
            "asebaros_msgs/srv/GetDescription",
            json!({}),
            deadline,
        )
        .unwrap();
    let events: Vec<String> = description["description"]["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e.as_str().unwrap().to_owned())
        .collect();
    common::wait_listening(port, Duration::from_secs(10));
    let mut switch = TcpStream::connect(("127.0.0.1", port)).unwrap();

    // every topic published by the driver, once the robot's interface is complete
    let topics = loop {
        let topics = peer.topics(deadline).unwrap();
        let names: BTreeSet<&str> = topics.iter().filter_map(|t| t["topic"].as_str()).collect();
        if THYMIO_TOPICS.iter().all(|t| names.contains(t)) {
            break topics;
        }
        assert!(
            Instant::now() < deadline,
            "not every topic of the Thymio interface is published: {:?}",
            THYMIO_TOPICS
                .iter()
                .filter(|t| !names.contains(*t))
                .collect::<Vec<_>>()
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    let mut wanted = BTreeSet::new();
    for t in &topics {
        let name = t["topic"].as_str().unwrap();
        if !is_thymio_topic(name) {
            continue;
        }
        let publishers = t["publishers"].as_array().unwrap();
        for p in publishers {
            assert_eq!(p["reliability"], "reliable", "{name}: {p}");
        }
        let latched = publishers
            .iter()
            .any(|p| p["durability"] == "transient_local");
        let durability = if latched {
            "transient_local"
        } else {
            "volatile"
        };
        let type_name = t["types"][0].as_str().unwrap();
        peer.subscribe(name, type_name, durability, deadline)
            .unwrap();
        wanted.insert(name.to_owned());
    }
    assert!(wanted.len() >= THYMIO_TOPICS.len(), "{wanted:?}");

    // the periodic topics come by themselves, the event topics when the robot's events come
    let mut received = BTreeSet::new();
    while received != wanted {
        assert!(
            Instant::now() < deadline,
            "no message with the default QoS on {:?}",
            wanted.difference(&received).collect::<Vec<_>>()
        );
        emit_robot_events(&mut switch, &events);
        let until = Instant::now() + Duration::from_millis(200);
        while let Some(topic) = peer
            .poll_map(until, |r| {
                (r["event"] == "message").then(|| Ok(r["topic"].as_str().unwrap_or("").to_owned()))
            })
            .unwrap()
        {
            received.insert(topic);
        }
    }
    drop(switch);
    stop(driver);
}

/// Item 2: `sensor_data_qos` gives the sensor topics ROS 2's sensor-data profile (best effort); the others keep
/// ROS-Thymio's reliable QoS.
#[test]
fn sensor_data_qos_gives_the_sensor_topics_the_sensor_data_profile() {
    let deadline = Instant::now() + TEST_TIMEOUT;
    let cwd = tempfile::tempdir().unwrap();
    let d = domain(3);
    let driver = driver(
        cwd.path(),
        d,
        &["--switch-port", "0"],
        &["sensor_data_qos:=true"],
    );
    let mut peer = RclpyPeer::serve(d, deadline).unwrap();
    peer.call("/is_ready", "std_srvs/srv/Empty", json!({}), deadline)
        .unwrap();
    let reliability = |topics: &[Value], name: &str| {
        topics
            .iter()
            .find(|t| t["topic"] == name)
            .map(|t| t["publishers"][0]["reliability"].clone())
    };
    let topics = loop {
        let topics = peer.topics(deadline).unwrap();
        if reliability(&topics, "/temperature").is_some() && reliability(&topics, "/odom").is_some()
        {
            break topics;
        }
        assert!(Instant::now() < deadline, "no Thymio topics: {topics:?}");
        std::thread::sleep(Duration::from_millis(100));
    };
    for sensor in [
        "/proximity/center",
        "/proximity/laser",
        "/ground/left",
        "/imu",
        "/temperature",
    ] {
        assert_eq!(
            reliability(&topics, sensor),
            Some(json!("best_effort")),
            "{sensor}"
        );
    }
    for other in ["/odom", "/joint_states", "/tap", "/buttons/center"] {
        assert_eq!(
            reliability(&topics, other),
            Some(json!("reliable")),
            "{other}"
        );
    }
    // a sensor-data subscriber receives
    peer.subscribe(
        "/proximity/center",
        "sensor_msgs/msg/Range",
        "best_effort",
        deadline,
    )
    .unwrap();
    peer.message("/proximity/center", deadline, |_| true)
        .unwrap();
    stop(driver);
}

/// The value of `key` in the status of the robot in a `/diagnostics` array, if there.
fn robot_value(array: &Value, key: &str) -> Option<String> {
    array["status"].as_array()?.iter().find_map(|s| {
        s["values"].as_array()?.iter().find_map(|kv| {
            (kv["key"] == key).then(|| kv["value"].as_str().unwrap_or("").to_owned())
        })
    })
}

/// Item 5: with `cmd_vel_stamped`, a `TwistStamped` from rclpy drives the robot, straight to the RT set-point as a
/// `Twist` does; one stamped longer ago than `cmd_vel_timeout` (0.5 s) is ignored, logged once and counted in
/// `/diagnostics`. Before, `cmd_vel` was a `Twist` only (the parameter did not exist: the driver refused to start).
#[test]
fn twist_stamped_drives_and_old_stamps_are_ignored_and_counted() {
    let deadline = Instant::now() + TEST_TIMEOUT;
    let cwd = tempfile::tempdir().unwrap();
    let d = domain(4);
    let driver = driver(
        cwd.path(),
        d,
        &["--switch-port", "0"],
        &["cmd_vel_stamped:=true"],
    );
    let mut peer = RclpyPeer::serve(d, deadline).unwrap();
    peer.subscribe("/odom", "nav_msgs/msg/Odometry", "volatile", deadline)
        .unwrap();
    peer.subscribe("/rosout", "rcl_interfaces/msg/Log", "volatile", deadline)
        .unwrap();
    let stamped = |ago: Duration, x: f64| {
        json!({"header": {"stamp": stamp_ago(ago), "frame_id": "base_link"},
               "twist": {"linear": {"x": x}}})
    };
    const STAMPED: &str = "geometry_msgs/msg/TwistStamped";

    // fresh commands drive
    drive_until(
        &mut peer,
        STAMPED,
        || stamped(Duration::ZERO, 0.1),
        deadline,
        |m| linear_x(m) > 0.05,
    );
    // the watchdog stops it when they stop (odometry read before the motion is dropped: it is still)
    peer.forget("/odom");
    peer.message("/odom", deadline, |m| linear_x(m).abs() < 0.005)
        .unwrap();

    // commands stamped 5 s ago are ignored: counted, logged once, the robot stays still. Counted from what the
    // diagnostics say now: a fresh command of the drive above that a loaded machine delivered more than
    // cmd_vel_timeout late was rightly counted as stale too.
    peer.subscribe(
        "/diagnostics",
        "diagnostic_msgs/msg/DiagnosticArray",
        "volatile",
        deadline,
    )
    .unwrap();
    let stale =
        |a: &Value| robot_value(a, "Stale cmd_vel ignored").and_then(|v| v.parse::<u64>().ok());
    let before = peer
        .message("/diagnostics", deadline, |a| stale(a).is_some())
        .map(|a| stale(&a).unwrap())
        .unwrap();
    peer.forget("/rosout");
    const OLD: u64 = 10;
    for _ in 0..OLD {
        peer.publish(
            "/cmd_vel",
            STAMPED,
            stamped(Duration::from_secs(5), 0.1),
            1,
            deadline,
        )
        .unwrap();
    }
    let counted = peer
        .message("/diagnostics", deadline, |a| {
            stale(a).is_some_and(|n| n >= before + OLD)
        })
        .unwrap();
    assert_eq!(stale(&counted), Some(before + OLD), "{counted}");
    peer.forget("/odom");
    for _ in 0..5 {
        let odom = peer.message("/odom", deadline, |_| true).unwrap();
        assert!(
            linear_x(&odom).abs() < 0.005,
            "an old command moved the robot: {odom}"
        );
    }
    let target = peer
        .call(
            "/aseba/get_variable",
            "asebaros_msgs/srv/GetVariable",
            json!({"variable": "motor.left.target"}),
            deadline,
        )
        .unwrap();
    assert_eq!(target["data"], json!([0]));
    let ignored = |m: &Value| {
        m["msg"]
            .as_str()
            .is_some_and(|t| t.contains("cmd_vel stamped") && t.contains("ignored"))
    };
    // One line for the run. A late command of the drive above (see `before`) began a run of its own: the old
    // commands then continue it (no new line) unless a valid command came between.
    if before == 0 || peer.received("/rosout", ignored) {
        peer.message("/rosout", deadline, ignored).unwrap();
    }
    assert!(
        !peer.received("/rosout", ignored),
        "a run of old commands logged more than once"
    );
    // and a fresh one drives again
    drive_until(
        &mut peer,
        STAMPED,
        || stamped(Duration::ZERO, 0.1),
        deadline,
        |m| linear_x(m) > 0.05,
    );
    stop(driver);
}
