//! TF for several robots, end to end through rclpy: two `thymio-rt run` in two ROS namespaces
//! (one robot each, as ROS-Thymio's one-driver-per-namespace launch) publish distinct TF trees
//! (frames prefixed by each namespace; they were both unprefixed and collided), the driver
//! publishes the wheel links' TF turning with `joint_states` (no robot_state_publisher), and
//! `robot_description` is a URDF (parsed by Python's xml.etree) holding both continuous wheel
//! joints and every frame the driver stamps or transforms. An explicit `tf_prefix` still wins
//! over the namespace.
#![cfg(feature = "ros2")]

use crate::common;
use crate::rclpy_peer;
use crate::ros_driver;

use common::Proc;
use rclpy_peer::{project_root, test_domain_id, RclpyPeer};
use ros_driver::{driver_script_yaml, ros_driver, stop};
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const TEST_TIMEOUT: Duration = Duration::from_secs(150);

/// `thymio-rt run` on the embedded simulator (one robot in the middle of an open arena) with
/// the driver script, namespace `/<ns>`.
fn driver(dir: &Path, ns: &str) -> Proc {
    driver_with(dir, ns, "")
}

/// [`driver`] with the configuration lines `extra_yaml`.
fn driver_with(dir: &Path, ns: &str, extra_yaml: &str) -> Proc {
    let arena = dir.join(format!("{ns}-arena.yaml"));
    std::fs::write(
        &arena,
        "width: 4.0\nheight: 4.0\nrobots:\n  - [1.0, 2.0, 0.0]\n",
    )
    .unwrap();
    let yaml = format!(
        "{}sim: {{arena: {}, robots: 1}}\ncmd_vel_timeout: 5.0\n{extra_yaml}",
        driver_script_yaml(),
        arena.display()
    );
    ros_driver(dir, ns, &yaml, &["--switch-port", "0"], &[])
}

/// The transforms of a `/tf` or `/tf_static` message.
fn transforms(m: &Value) -> Vec<Value> {
    m["transforms"].as_array().cloned().unwrap_or_default()
}

/// The transform to `child` in a `/tf` message, if it has one.
fn transform_to(m: &Value, child: &str) -> Option<Value> {
    transforms(m)
        .into_iter()
        .find(|t| t["child_frame_id"] == child)
}

/// Angle [rad] of a rotation about y (a wheel link), in (−π, π].
fn wheel_angle(t: &Value) -> f64 {
    let q = &t["transform"]["rotation"];
    let (x, y, z, w) = (
        q["x"].as_f64().unwrap(),
        q["y"].as_f64().unwrap(),
        q["z"].as_f64().unwrap(),
        q["w"].as_f64().unwrap(),
    );
    assert!(x.abs() < 1e-9 && z.abs() < 1e-9, "not about y: {t}");
    wrap(2.0 * y.atan2(w))
}

fn wrap(a: f64) -> f64 {
    let two_pi = 2.0 * std::f64::consts::PI;
    let r = a.rem_euclid(two_pi);
    if r > std::f64::consts::PI {
        r - two_pi
    } else {
        r
    }
}

fn stamp_of(m: &Value) -> (u64, u64) {
    let s = &m["header"]["stamp"];
    (s["sec"].as_u64().unwrap(), s["nanosec"].as_u64().unwrap())
}

#[test]
fn two_robots_in_two_namespaces_have_distinct_tf_trees_and_turning_wheels() {
    let deadline = Instant::now() + TEST_TIMEOUT;
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = ("tf_a", "tf_b");
    let drivers = [driver(dir.path(), a), driver(dir.path(), b)];
    let mut peer = RclpyPeer::serve(test_domain_id(), deadline).unwrap();
    peer.subscribe("/tf", "tf2_msgs/msg/TFMessage", "volatile", deadline)
        .unwrap();
    peer.subscribe(
        "/tf_static",
        "tf2_msgs/msg/TFMessage",
        "transient_local",
        deadline,
    )
    .unwrap();
    peer.subscribe(
        &format!("/{a}/joint_states"),
        "sensor_msgs/msg/JointState",
        "volatile",
        deadline,
    )
    .unwrap();

    // each namespace's tree on /tf: odom → base_link → wheel links, all prefixed by it
    let mut initial = Vec::new();
    for ns in [a, b] {
        let base = format!("{ns}/base_link");
        let m = peer
            .message("/tf", deadline, |m| transform_to(m, &base).is_some())
            .unwrap_or_else(|e| {
                panic!("no /tf transform to {base} (frames collide when unprefixed): {e}")
            });
        assert_eq!(
            transform_to(&m, &base).unwrap()["header"]["frame_id"],
            format!("{ns}/odom")
        );
        for side in ["left", "right"] {
            let wheel = transform_to(&m, &format!("{ns}/{side}_wheel_link"))
                .unwrap_or_else(|| panic!("no {side} wheel TF of {ns}: {m}"));
            assert_eq!(wheel["header"]["frame_id"], base);
            let y = wheel["transform"]["translation"]["y"].as_f64().unwrap();
            let z = wheel["transform"]["translation"]["z"].as_f64().unwrap();
            let expect = if side == "left" { 0.04675 } else { -0.04675 };
            assert!(
                (y - expect).abs() < 1e-9 && (z - 0.022).abs() < 1e-9,
                "{wheel}"
            );
        }
        initial.push(wheel_angle(
            &transform_to(&m, &format!("{ns}/left_wheel_link")).unwrap(),
        ));
    }
    // no robot publishes an unprefixed frame on /tf (the other test's robot has its own prefix)
    let mut unprefixed = Vec::new();
    peer.received("/tf", |m| {
        for t in transforms(m) {
            let child = t["child_frame_id"].as_str().unwrap_or("").to_owned();
            if !child.contains('/') {
                unprefixed.push(child);
            }
        }
        false
    });
    assert!(
        unprefixed.is_empty(),
        "unprefixed frames on /tf: {unprefixed:?}"
    );
    // and each one's sensor frames on /tf_static (one latched message per driver)
    for ns in [a, b] {
        let child = format!("{ns}/proximity_center_link");
        let m = peer
            .message("/tf_static", deadline, |m| {
                transform_to(m, &child).is_some()
            })
            .unwrap();
        for t in transforms(&m) {
            let c = t["child_frame_id"].as_str().unwrap();
            assert!(c.starts_with(&format!("{ns}/")), "{c} in {ns}'s /tf_static");
        }
    }

    // drive robot a: its wheel links turn, robot b's do not
    peer.forget("/tf");
    let left_a = format!("{a}/left_wheel_link");
    loop {
        peer.publish(
            &format!("/{a}/cmd_vel"),
            "geometry_msgs/msg/Twist",
            json!({"linear": {"x": 0.1}}),
            1,
            deadline,
        )
        .unwrap();
        let turned = peer
            .poll_map(Instant::now() + Duration::from_millis(300), |r| {
                (r["event"] == "message" && r["topic"] == "/tf")
                    .then(|| transform_to(&r["data"], &left_a))
                    .flatten()
                    .filter(|t| wrap(wheel_angle(t) - initial[0]).abs() > 0.5)
                    .map(Ok)
            })
            .unwrap();
        if turned.is_some() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "robot {a}'s wheel TF never turned"
        );
    }
    // the wheel TF is the joint state of the same sample (matched by stamp; a sample either
    // topic's depth-1 queue dropped is skipped), after the wheel turned
    peer.forget(&format!("/{a}/joint_states"));
    let (joints, tf_angle) = loop {
        let j = peer
            .message(&format!("/{a}/joint_states"), deadline, |_| true)
            .unwrap();
        let at = stamp_of(&j);
        let mut angle = None;
        peer.received("/tf", |m| {
            if let Some(t) = transform_to(m, &left_a).filter(|t| stamp_of(t) == at) {
                angle = Some(wheel_angle(&t));
            }
            false
        });
        if let Some(angle) = angle {
            break (j, angle);
        }
    };
    assert_eq!(
        joints["name"],
        json!([
            format!("{a}/left_wheel_joint"),
            format!("{a}/right_wheel_joint")
        ])
    );
    let position = joints["position"][0].as_f64().unwrap();
    assert!(position.abs() > 0.5, "{joints}");
    assert!(
        wrap(tf_angle - position).abs() < 1e-6,
        "wheel TF {tf_angle} vs joint_states {position}"
    );
    let left_b = format!("{b}/left_wheel_link");
    peer.forget("/tf");
    let still = peer
        .message("/tf", deadline, |m| transform_to(m, &left_b).is_some())
        .unwrap();
    let angle_b = wheel_angle(&transform_to(&still, &left_b).unwrap());
    assert!(
        wrap(angle_b - initial[1]).abs() < 0.05,
        "robot {b}'s wheel turned: {} → {angle_b}",
        initial[1]
    );
    drop(peer);
    for d in drivers {
        stop(d);
    }
}

/// Links and joints of a URDF, parsed by Python's xml.etree (the venv's interpreter):
/// `{"robot", "links": [name], "joints": [{name, type, parent, child, xyz}], "boxes": [size],
/// "cylinders": [[radius, length]]}`.
fn parse_urdf(urdf: &str) -> Value {
    const SCRIPT: &str = r#"
import json, sys, xml.etree.ElementTree as ET
root = ET.fromstring(sys.stdin.read())
assert root.tag == "robot", root.tag
print(json.dumps({
    "robot": root.get("name"),
    "links": [l.get("name") for l in root.findall("link")],
    "joints": [{"name": j.get("name"), "type": j.get("type"),
                "parent": j.find("parent").get("link"), "child": j.find("child").get("link"),
                "xyz": (j.find("origin").get("xyz") if j.find("origin") is not None else None)}
               for j in root.findall("joint")],
    "boxes": [b.get("size") for b in root.iter("box")],
    "cylinders": [[float(c.get("radius")), float(c.get("length"))] for c in root.iter("cylinder")],
}))
"#;
    let mut child = Command::new(project_root().join(".venv-ros/bin/python"))
        .args(["-c", SCRIPT])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(urdf.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "not a URDF: {}\n{urdf}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn robot_description_is_a_urdf_with_the_wheel_joints_and_every_driver_frame() {
    let deadline = Instant::now() + TEST_TIMEOUT;
    let dir = tempfile::tempdir().unwrap();
    let ns = "tf_urdf";
    let driver = driver(dir.path(), ns);
    let mut peer = RclpyPeer::serve(test_domain_id(), deadline).unwrap();
    let t = |leaf: &str| format!("/{ns}/{leaf}");
    let mut sensors: Vec<(String, &str)> = [
        "left",
        "center_left",
        "center",
        "center_right",
        "right",
        "rear_left",
        "rear_right",
    ]
    .iter()
    .map(|s| (t(&format!("proximity/{s}")), "sensor_msgs/msg/Range"))
    .collect();
    sensors.extend([
        (t("proximity/laser"), "sensor_msgs/msg/LaserScan"),
        (t("ground/left"), "sensor_msgs/msg/Range"),
        (t("ground/right"), "sensor_msgs/msg/Range"),
        (t("imu"), "sensor_msgs/msg/Imu"),
        (t("temperature"), "sensor_msgs/msg/Temperature"),
        (t("odom"), "nav_msgs/msg/Odometry"),
    ]);
    for (topic, ty) in &sensors {
        peer.subscribe(topic, ty, "volatile", deadline).unwrap();
    }
    peer.subscribe(
        &t("robot_description"),
        "std_msgs/msg/String",
        "transient_local",
        deadline,
    )
    .unwrap();
    peer.subscribe(
        "/tf_static",
        "tf2_msgs/msg/TFMessage",
        "transient_local",
        deadline,
    )
    .unwrap();
    peer.subscribe("/tf", "tf2_msgs/msg/TFMessage", "volatile", deadline)
        .unwrap();

    let text = peer
        .message(&t("robot_description"), deadline, |_| true)
        .unwrap()["data"]
        .as_str()
        .unwrap()
        .to_owned();
    let urdf = parse_urdf(&text);
    let links: BTreeSet<String> = urdf["links"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap().to_owned())
        .collect();
    let p = |name: &str| format!("{ns}/{name}");
    // the continuous wheel joints, at half the axis, the wheel centre at its radius
    for (side, y) in [("left", "0.04675"), ("right", "-0.04675")] {
        let joint = urdf["joints"]
            .as_array()
            .unwrap()
            .iter()
            .find(|j| j["name"] == p(&format!("{side}_wheel_joint")))
            .unwrap_or_else(|| panic!("no {side} wheel joint: {text}"))
            .clone();
        assert_eq!(joint["type"], "continuous", "{joint}");
        assert_eq!(joint["parent"], p("base_link"));
        assert_eq!(joint["child"], p(&format!("{side}_wheel_link")));
        assert_eq!(joint["xyz"], format!("0 {y} 0.022"));
    }
    // the real body and wheels: 110 × 112 × 53 mm, radius 22 mm, width 15 mm
    assert!(urdf["boxes"]
        .as_array()
        .unwrap()
        .iter()
        .any(|b| b == "0.11 0.112 0.053"));
    assert!(urdf["cylinders"]
        .as_array()
        .unwrap()
        .iter()
        .any(|c| c == &json!([0.022, 0.015])));
    // every joint's frames are links of the model (one tree)
    for j in urdf["joints"].as_array().unwrap() {
        for end in ["parent", "child"] {
            assert!(links.contains(j[end].as_str().unwrap()), "{j}");
        }
    }

    // every frame the driver stamps a message with or transforms is in the model
    let mut used = BTreeSet::new();
    for (topic, _) in &sensors {
        let m = peer.message(topic, deadline, |_| true).unwrap();
        used.insert(m["header"]["frame_id"].as_str().unwrap().to_owned());
        if let Some(child) = m["child_frame_id"].as_str() {
            used.insert(child.to_owned());
        }
    }
    let statics = peer
        .message("/tf_static", deadline, |m| {
            transform_to(m, &p("proximity_center_link")).is_some()
        })
        .unwrap();
    let moving = peer
        .message("/tf", deadline, |m| {
            transform_to(m, &p("left_wheel_link")).is_some()
        })
        .unwrap();
    for tr in transforms(&statics).iter().chain(&transforms(&moving)) {
        used.insert(tr["child_frame_id"].as_str().unwrap().to_owned());
        used.insert(tr["header"]["frame_id"].as_str().unwrap().to_owned());
    }
    used.remove(&p("odom")); // the odometry frame is the driver's, above the model (as ROS-Thymio)
    let missing: Vec<_> = used.difference(&links).collect();
    assert!(
        missing.is_empty(),
        "frames not in robot_description: {missing:?}\n{text}"
    );
    for f in [
        "base_link",
        "left_wheel_link",
        "right_wheel_link",
        "proximity_center_link",
        "proximity_rear_left_link",
        "ground_left_link",
        "ground_right_link",
        "laser_link",
    ] {
        assert!(used.contains(&p(f)), "the driver never used {f}: {used:?}");
    }
    drop(peer);
    stop(driver);
}

#[test]
fn an_explicit_tf_prefix_wins_over_the_namespace() {
    let deadline = Instant::now() + TEST_TIMEOUT;
    let dir = tempfile::tempdir().unwrap();
    let driver = driver_with(dir.path(), "tf_own", "tf_prefix: mine\n");
    let mut peer = RclpyPeer::serve(test_domain_id(), deadline).unwrap();
    peer.subscribe("/tf", "tf2_msgs/msg/TFMessage", "volatile", deadline)
        .unwrap();
    peer.subscribe(
        "/tf_own/odom",
        "nav_msgs/msg/Odometry",
        "volatile",
        deadline,
    )
    .unwrap();
    let odom = peer.message("/tf_own/odom", deadline, |_| true).unwrap();
    assert_eq!(odom["header"]["frame_id"], "mine/odom");
    assert_eq!(odom["child_frame_id"], "mine/base_link");
    peer.message("/tf", deadline, |m| {
        transform_to(m, "mine/left_wheel_link").is_some()
    })
    .unwrap();
    drop(peer);
    stop(driver);
}

/// `publish_model: false` (a model kept from ROS-Thymio, published by the user's own
/// robot_state_publisher from `joint_states`): the driver's `/tf` keeps `odom → base_link` but
/// not the wheel transforms (they were published twice, by the driver and by the user's
/// robot_state_publisher), and `joint_states` stay, turning with the wheels.
#[test]
fn without_the_model_the_wheel_transforms_are_left_to_the_users_robot_state_publisher() {
    let deadline = Instant::now() + TEST_TIMEOUT;
    let dir = tempfile::tempdir().unwrap();
    let ns = "tf_user_model";
    let driver = driver_with(dir.path(), ns, "publish_model: false\n");
    let mut peer = RclpyPeer::serve(test_domain_id(), deadline).unwrap();
    let joints_topic = format!("/{ns}/joint_states");
    peer.subscribe("/tf", "tf2_msgs/msg/TFMessage", "volatile", deadline)
        .unwrap();
    peer.subscribe(
        &joints_topic,
        "sensor_msgs/msg/JointState",
        "volatile",
        deadline,
    )
    .unwrap();
    let base = format!("{ns}/base_link");
    let wheels = [
        format!("{ns}/left_wheel_link"),
        format!("{ns}/right_wheel_link"),
    ];
    let has_wheel = |m: &Value| wheels.iter().any(|w| transform_to(m, w).is_some());
    // odom → base_link is still the driver's, alone in its message
    let m = peer
        .message("/tf", deadline, |m| transform_to(m, &base).is_some())
        .unwrap();
    assert!(
        !has_wheel(&m),
        "the driver published the wheel transforms: {m}"
    );
    // drive: the joint states turn (the user's robot_state_publisher turns the wheels from them)
    let mut position: f64 = 0.0;
    while position.abs() < 0.5 {
        assert!(
            Instant::now() < deadline,
            "joint_states never turned: {position}"
        );
        peer.publish(
            &format!("/{ns}/cmd_vel"),
            "geometry_msgs/msg/Twist",
            json!({"linear": {"x": 0.1}}),
            1,
            deadline,
        )
        .unwrap();
        let j = peer.message(&joints_topic, deadline, |_| true).unwrap();
        assert_eq!(
            j["name"],
            json!([
                format!("{ns}/left_wheel_joint"),
                format!("{ns}/right_wheel_joint")
            ])
        );
        position = j["position"][0].as_f64().unwrap();
    }
    // one more /tf message after the wheels turned, and none of them had a wheel transform
    let m = peer
        .message("/tf", deadline, |m| transform_to(m, &base).is_some())
        .unwrap();
    assert!(
        !has_wheel(&m),
        "the driver published the wheel transforms: {m}"
    );
    assert!(
        !peer.received("/tf", has_wheel),
        "the driver published wheel transforms without its model:\n{}",
        peer.unconsumed()
    );
    drop(peer);
    stop(driver);
}

/// The topics an RViz configuration (launch/ros1/thymio.rviz, RViz 1's format, or launch/ros2/thymio.rviz, RViz 2's)
/// reads, as `(display class without its plugin prefix, topic, ROS 2 message type)`; for RViz 1's RobotModel, the
/// parameter it reads (`robot_description`, which the ROS 1 driver also latches as a topic). Panics unless it is
/// YAML with displays and a fixed frame.
fn rviz_topics(file: &str) -> Vec<(String, String, &'static str)> {
    let text = std::fs::read_to_string(project_root().join(file)).unwrap();
    let config: yaml_serde::Value =
        yaml_serde::from_str(&text).unwrap_or_else(|e| panic!("{file} is not YAML: {e}"));
    let manager = &config["Visualization Manager"];
    assert_eq!(
        manager["Global Options"]["Fixed Frame"].as_str(),
        Some("odom"),
        "{file}: the driver's odometry frame"
    );
    let displays = manager["Displays"]
        .as_sequence()
        .unwrap_or_else(|| panic!("{file}: no displays"));
    let mut out = Vec::new();
    for d in displays {
        let class = d["Class"].as_str().unwrap();
        let (plugin, kind) = class.split_once('/').unwrap();
        let ros2 = file.contains("ros2");
        assert_eq!(
            plugin,
            if ros2 { "rviz_default_plugins" } else { "rviz" },
            "{file}: {class}"
        );
        // RViz 2 nests a topic with its QoS (`Value`); RViz 1 names it
        let topic = |key: &str| {
            let v = &d[key];
            v["Value"].as_str().or(v.as_str()).map(str::to_owned)
        };
        let (topic, ty) = match kind {
            "RobotModel" if ros2 => (topic("Description Topic"), "std_msgs/msg/String"),
            "RobotModel" => (topic("Robot Description"), "std_msgs/msg/String"),
            "Odometry" => (topic("Topic"), "nav_msgs/msg/Odometry"),
            "LaserScan" => (topic("Topic"), "sensor_msgs/msg/LaserScan"),
            "Range" => (topic("Topic"), "sensor_msgs/msg/Range"),
            "Grid" | "TF" => continue,
            other => panic!("{file}: display {other} not checked here"),
        };
        let topic = topic.unwrap_or_else(|| panic!("{file}: {class} without a topic"));
        out.push((kind.to_owned(), topic, ty));
    }
    out
}

/// The RViz configurations (RViz 1 and RViz 2) are YAML whose displays show the robot model, TF, odometry, the
/// proximity laser and all nine Range topics, each a topic the driver publishes with the display's type (seen in the
/// ROS 2 graph of a driver in a namespace, which prefixes them; the ROS 1 front end has the same names).
#[test]
fn the_rviz_configurations_read_the_topics_the_driver_publishes() {
    let deadline = Instant::now() + TEST_TIMEOUT;
    let dir = tempfile::tempdir().unwrap();
    let ns = "tf_rviz";
    let driver = driver(dir.path(), ns);
    let mut peer = RclpyPeer::serve(test_domain_id(), deadline).unwrap();
    // the driver is up and in the peer's graph once its odometry arrives
    let odom = format!("/{ns}/odom");
    peer.subscribe(&odom, "nav_msgs/msg/Odometry", "volatile", deadline)
        .unwrap();
    peer.message(&odom, deadline, |_| true).unwrap();
    for file in ["launch/ros1/thymio.rviz", "launch/ros2/thymio.rviz"] {
        let wanted = rviz_topics(file);
        let count = |kind: &str| wanted.iter().filter(|(k, _, _)| k == kind).count();
        assert_eq!(
            [
                count("RobotModel"),
                count("Odometry"),
                count("LaserScan"),
                count("Range")
            ],
            [1, 1, 1, 9],
            "{file}: {wanted:?}"
        );
        let mut missing = wanted.clone();
        while !missing.is_empty() {
            assert!(
                Instant::now() < deadline,
                "{file}: not published by the driver: {missing:?}"
            );
            let graph = peer.topics(deadline).unwrap();
            missing.retain(|(_, topic, ty)| {
                let full = format!("/{ns}/{}", topic.trim_start_matches('/'));
                !graph.iter().any(|t| {
                    t["topic"] == full && t["types"].as_array().unwrap().contains(&json!(ty))
                })
            });
        }
    }
    drop(peer);
    stop(driver);
}
