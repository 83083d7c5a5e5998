//! End to end, the Thymio driver interface (ROS-Thymio names and types) on the embedded
//! simulated Thymio: `thymio-rt run` with the ROS 2 bridge, rclpy in another process.
//! cmd_vel moves the robot and odom follows, the watchdog stops it, proximity and ground are
//! REP-117 ranges near and far from a wall, LEDs and other actuators reach the robot's
//! variables, two robots in two namespaces are driven independently.
#![cfg(feature = "ros2")]

use crate::common;
use crate::rclpy_peer;
use crate::ros_driver;

use common::Proc;
use rclpy_peer::{test_domain_id, RclpyPeer};
use ros_driver::{driver_script_yaml, get_variable, ros_driver, stop, LOG_ERROR};
use serde_json::{json, Value};
use std::path::Path;
use std::time::{Duration, Instant};

const TEST_TIMEOUT: Duration = Duration::from_secs(150);

/// `thymio-rt run` on the embedded simulator with the driver script, namespace `/<ns>`.
fn driver(dir: &Path, ns: &str, robots: usize, extra_yaml: &str, arena: &str) -> Proc {
    let arena_file = dir.join(format!("{ns}-arena.yaml"));
    std::fs::write(&arena_file, arena).unwrap();
    let yaml = format!(
        "{}sim: {{arena: {}, robots: {robots}}}\n{extra_yaml}",
        driver_script_yaml(),
        arena_file.display()
    );
    ros_driver(dir, ns, &yaml, &["--switch-port", "0"], &[])
}

fn range(m: &Value) -> f64 {
    match &m["range"] {
        Value::String(s) if s == "inf" => f64::INFINITY,
        Value::String(s) if s == "-inf" => f64::NEG_INFINITY,
        v => v.as_f64().unwrap_or(f64::NAN),
    }
}

/// Publishes `msg` until `check` holds (the robot applies commands once per main loop).
fn until(deadline: Instant, mut check: impl FnMut() -> bool) -> bool {
    while Instant::now() < deadline {
        if check() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    false
}

/// A message's header stamp (s).
fn stamp(m: &Value) -> f64 {
    let t = &m["header"]["stamp"];
    t["sec"].as_f64().unwrap() + t["nanosec"].as_f64().unwrap() * 1e-9
}

fn x_of(odom: &Value) -> f64 {
    odom["pose"]["pose"]["position"]["x"].as_f64().unwrap()
}

#[test]
fn thymio_driver_on_the_simulated_robot() {
    let deadline = Instant::now() + TEST_TIMEOUT;
    let ns = "thymio_sim";
    let dir = tempfile::tempdir().unwrap();
    // facing away from the east wall, 9 cm from it behind
    let mut driver = driver(
        dir.path(),
        ns,
        1,
        "",
        "width: 2.0\nheight: 2.0\nrobots:\n  - [1.88, 1.0, 3.14159]\n",
    );
    let mut peer = RclpyPeer::serve(test_domain_id(), deadline).unwrap();
    let t = |leaf: &str| format!("/{ns}/{leaf}");
    peer.subscribe(&t("odom"), "nav_msgs/msg/Odometry", "volatile", deadline)
        .unwrap();
    peer.subscribe(
        &t("proximity/center"),
        "sensor_msgs/msg/Range",
        "best_effort",
        deadline,
    )
    .unwrap();
    peer.subscribe(
        &t("proximity/rear_left"),
        "sensor_msgs/msg/Range",
        "best_effort",
        deadline,
    )
    .unwrap();
    peer.subscribe(
        &t("proximity/laser"),
        "sensor_msgs/msg/LaserScan",
        "best_effort",
        deadline,
    )
    .unwrap();
    peer.subscribe(
        &t("ground/left"),
        "sensor_msgs/msg/Range",
        "best_effort",
        deadline,
    )
    .unwrap();
    peer.subscribe(&t("imu"), "sensor_msgs/msg/Imu", "best_effort", deadline)
        .unwrap();
    peer.subscribe(
        &t("robot_description"),
        "std_msgs/msg/String",
        "transient_local",
        deadline,
    )
    .unwrap();
    peer.call(&t("is_ready"), "std_srvs/srv/Empty", json!({}), deadline)
        .unwrap();

    // REP-117: nothing ahead is +inf, the wall behind is a finite range, the floor is seen
    let front = peer
        .message(&t("proximity/center"), deadline, |_| true)
        .unwrap();
    assert_eq!(range(&front), f64::INFINITY, "{front}");
    // frames are prefixed with the robot's namespace, as ROS-Thymio's tf_prefix
    assert_eq!(
        front["header"]["frame_id"],
        format!("{ns}/proximity_center_link")
    );
    let rear = peer
        .message(&t("proximity/rear_left"), deadline, |m| {
            range(m).is_finite()
        })
        .unwrap();
    let d = range(&rear);
    assert!((0.06..0.13).contains(&d), "rear range {d}");
    let scan = peer
        .message(&t("proximity/laser"), deadline, |_| true)
        .unwrap();
    assert!(
        scan["ranges"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r == "inf"),
        "{scan}"
    );
    let ground = peer.message(&t("ground/left"), deadline, |_| true).unwrap();
    assert_eq!(range(&ground), f64::NEG_INFINITY, "{ground}");
    let imu = peer.message(&t("imu"), deadline, |_| true).unwrap();
    let az = imu["linear_acceleration"]["z"].as_f64().unwrap();
    assert!((8.0..11.0).contains(&az), "gravity {az}");
    let urdf = peer
        .message(&t("robot_description"), deadline, |_| true)
        .unwrap();
    assert!(urdf["data"].as_str().unwrap().contains("left_wheel_joint"));

    // cmd_vel 0.1 m/s for 2 s: odom follows
    let start = x_of(&peer.message(&t("odom"), deadline, |_| true).unwrap());
    let t0 = Instant::now();
    while t0.elapsed() < Duration::from_secs(2) {
        peer.publish(
            &t("cmd_vel"),
            "geometry_msgs/msg/Twist",
            json!({"linear": {"x": 0.1}}),
            1,
            deadline,
        )
        .unwrap();
        std::thread::sleep(Duration::from_millis(100));
    }
    let moving = peer
        .message(&t("odom"), deadline, |m| {
            m["twist"]["twist"]["linear"]["x"].as_f64().unwrap() > 0.05
        })
        .unwrap();
    assert!(moving["header"]["stamp"]["sec"].as_i64().unwrap() > 0);
    // the watchdog stops the robot without new commands (cmd_vel_timeout 0.5 s); messages
    // from before the motion are still unread, hence the position condition
    let stopped = peer
        .message(&t("odom"), deadline, |m| {
            m["twist"]["twist"]["linear"]["x"].as_f64().unwrap().abs() < 0.005
                && x_of(m) > start + 0.05
        })
        .unwrap();
    let moved = x_of(&stopped) - start;
    assert!((0.12..0.30).contains(&moved), "odom moved {moved} m");
    assert!(
        t0.elapsed() < Duration::from_secs(5),
        "the watchdog took too long"
    );

    // non-finite set-points are refused, a run of them logged once; valid ones still drive
    peer.subscribe("/rosout", "rcl_interfaces/msg/Log", "volatile", deadline)
        .unwrap();
    let twist = |x: Value, z: Value| json!({"linear": {"x": x}, "angular": {"z": z}});
    let send = |peer: &mut RclpyPeer, msg: Value| {
        peer.publish(&t("cmd_vel"), "geometry_msgs/msg/Twist", msg, 1, deadline)
            .unwrap()
    };
    for _ in 0..3 {
        send(&mut peer, twist(json!("nan"), json!(0.0)));
    }
    send(&mut peer, twist(json!(0.1), json!(0.0)));
    assert!(until(deadline, || {
        (280..=306).contains(
            &get_variable(&mut peer, ns, "motor.left.target", deadline)[0]
                .as_i64()
                .unwrap(),
        )
    }));
    send(&mut peer, twist(json!(0.0), json!("inf")));
    let refused = |what: &'static str| {
        move |m: &Value| {
            m["level"] == LOG_ERROR
                && m["msg"]
                    .as_str()
                    .is_some_and(|t| t.contains("cmd_vel refused") && t.contains(what))
        }
    };
    peer.message("/rosout", deadline, refused("linear"))
        .unwrap();
    // /rosout keeps the bridge's order: every report of the first run came before this one
    peer.message("/rosout", deadline, refused("angular"))
        .unwrap();
    assert!(
        !peer.received("/rosout", refused("linear")),
        "a run of refused cmd_vel logged more than once:\n{}",
        peer.unconsumed()
    );

    // actuators reach the robot's variables
    let color = json!({"r": 1.0, "g": 0.0, "b": 0.5, "a": 1.0});
    assert!(until(deadline, || {
        peer.publish(
            &t("led/body/top"),
            "std_msgs/msg/ColorRGBA",
            color.clone(),
            1,
            deadline,
        )
        .unwrap();
        get_variable(&mut peer, ns, "leds.top", deadline) == json!([32, 0, 16])
    }));
    assert!(until(deadline, || {
        peer.publish(
            &t("sound_threshold"),
            "std_msgs/msg/Float32",
            json!({"data": 0.5}),
            1,
            deadline,
        )
        .unwrap();
        get_variable(&mut peer, ns, "mic.threshold", deadline) == json!([128])
    }));
    assert!(until(deadline, || {
        peer.publish(
            &t("comm/tx"),
            "std_msgs/msg/Int16",
            json!({"data": 321}),
            1,
            deadline,
        )
        .unwrap();
        get_variable(&mut peer, ns, "prox.comm.tx", deadline) == json!([321])
    }));

    // calibration parameters apply live: twice the wheel's speed per unit, half the units
    let target = |peer: &mut RclpyPeer| {
        peer.publish(
            &t("cmd_vel"),
            "geometry_msgs/msg/Twist",
            json!({"linear": {"x": 0.1}}),
            1,
            deadline,
        )
        .unwrap();
        get_variable(peer, ns, "motor.left.target", deadline)[0]
            .as_i64()
            .unwrap()
    };
    assert!(until(deadline, || (280..=306).contains(&target(&mut peer))));
    let q0 = 2.0 * 0.001 / 2.93;
    // (the answer is the driver's verdict; what proves the value applied is the wheel target
    // that follows)
    let answer = peer.call(
        &t("asebaros/set_parameters"),
        "rcl_interfaces/srv/SetParameters",
        json!({"parameters": [
            {"name": "motor.left.parameters", "value": {"type": 8, "double_array_value": [q0, 0.0]}},
            {"name": "motor.right.parameters", "value": {"type": 8, "double_array_value": [q0, 0.0]}}
        ]}),
        deadline,
    )
    .unwrap();
    assert_eq!(
        answer["results"],
        json!([{"successful": true, "reason": ""}, {"successful": true, "reason": ""}])
    );
    let soon = deadline.min(Instant::now() + Duration::from_secs(20));
    assert!(
        until(soon, || (140..=153).contains(&target(&mut peer))),
        "the calibration set through asebaros/set_parameters is not in effect"
    );

    // a script without the driver events removes the robot's interface; the driver script
    // brings it back, and odometry flows again
    let plain = dir.path().join("plain.aesl");
    std::fs::write(
        &plain,
        "<!DOCTYPE aesl-source>\n<network>\n<event size=\"1\" name=\"ping\"/>\n\
         <node nodeId=\"1\" name=\"thymio-II\">var n = 0\nonevent ping\nn = event.args[0]\n</node>\n</network>\n",
    )
    .unwrap();
    let load = |peer: &mut RclpyPeer, file: &Path| {
        // (the response is empty, as asebaros's; errors go to /rosout)
        peer.call(
            &t("aseba/load_script"),
            "asebaros_msgs/srv/LoadScript",
            json!({"file_name": file.to_str().unwrap()}),
            deadline,
        )
        .unwrap();
    };
    assert_eq!(peer.publishers(&t("odom"), deadline).unwrap(), 1);
    load(&mut peer, &plain);
    let soon = deadline.min(Instant::now() + Duration::from_secs(20));
    if !until(soon, || peer.publishers(&t("odom"), deadline).unwrap() == 0) {
        driver.drain();
        panic!(
            "odom still published after a script without the driver events; driver:\n{}",
            driver.seen.join("\n")
        );
    }
    assert_eq!(peer.publishers(&t("proximity/laser"), deadline).unwrap(), 0);
    // every odom message of the removed interface was reported before that count
    peer.forget(&t("odom"));
    load(
        &mut peer,
        &common::root().join("config/aseba/thymio_ros.aesl"),
    );
    assert!(until(deadline, || peer
        .publishers(&t("odom"), deadline)
        .unwrap()
        == 1));
    peer.message(&t("odom"), deadline, |_| true).unwrap();
    drop(peer);
    stop(driver);
}

/// `ranges: ros_thymio` (issue 42 item 5): where REP-117 gives ±inf (the test above), the Range topics carry what
/// ROS-Thymio's ROS 2 driver published — −1.0 for a proximity sensor that sees nothing, 0.0 for a ground sensor on
/// the floor — while a wall in range is the same distance and the laser scan stays REP-117.
#[test]
fn ranges_ros_thymio_publishes_minus_one_where_rep_117_gives_inf() {
    let deadline = Instant::now() + TEST_TIMEOUT;
    let ns = "thymio_ranges";
    let dir = tempfile::tempdir().unwrap();
    // as above: facing away from the east wall, 9 cm from it behind
    let arena = "width: 2.0\nheight: 2.0\nrobots:\n  - [1.88, 1.0, 3.14159]\n";
    let driver = driver(dir.path(), ns, 1, "ranges: ros_thymio\n", arena);
    let mut peer = RclpyPeer::serve(test_domain_id(), deadline).unwrap();
    let t = |leaf: &str| format!("/{ns}/{leaf}");
    for leaf in ["proximity/center", "proximity/rear_left", "ground/left"] {
        peer.subscribe(&t(leaf), "sensor_msgs/msg/Range", "best_effort", deadline)
            .unwrap();
    }
    peer.subscribe(
        &t("proximity/laser"),
        "sensor_msgs/msg/LaserScan",
        "best_effort",
        deadline,
    )
    .unwrap();
    peer.call(&t("is_ready"), "std_srvs/srv/Empty", json!({}), deadline)
        .unwrap();
    let front = peer
        .message(&t("proximity/center"), deadline, |_| true)
        .unwrap();
    assert_eq!(range(&front), -1.0, "nothing ahead: {front}");
    assert_eq!(
        front["min_range"].as_f64().map(|m| m as f32),
        Some(0.0215),
        "{front}"
    );
    let rear = peer
        .message(&t("proximity/rear_left"), deadline, |m| range(m) > 0.0)
        .unwrap();
    let d = range(&rear);
    assert!((0.06..0.13).contains(&d), "the wall behind: rear range {d}");
    let ground = peer.message(&t("ground/left"), deadline, |_| true).unwrap();
    assert_eq!(range(&ground), 0.0, "the floor: {ground}");
    let scan = peer
        .message(&t("proximity/laser"), deadline, |_| true)
        .unwrap();
    let empty = scan["ranges"]
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r == "inf");
    assert!(empty, "the laser keeps REP-117: {scan}");
    drop(peer);
    stop(driver);
}

#[path = "../ros/thymio_arenas.rs"]
mod arenas;
