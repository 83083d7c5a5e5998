//! ROS-Thymio's nodes and parameters, end to end through rclpy (issue 16, item 3): each driven
//! robot has a `thymio_driver` node in its namespace holding its parameters; a parameter file
//! written for ROS-Thymio (`asebaros:`, `thymio_driver:`, `/<ns>/thymio_driver:` and `/**:`
//! sections, `--ros-args --params-file`) sets the values in effect (seen in the odometry frames
//! and in the wheel targets the calibration gives, read fresh from the robots); a set answers
//! `successful: false` with the reason for a refused value, a start-only (read-only) parameter
//! and a calibration value the robot's calibration file entry fixes, and `get` then still shows
//! the value in effect. (Before: no `thymio_driver` node; the file's driver sections were
//! ignored; every set answered `successful: true`.)
#![cfg(feature = "ros2")]

mod common;
#[path = "ros/rclpy_peer.rs"]
mod rclpy_peer;
#[path = "ros/driver.rs"]
mod ros_driver;

use common::Proc;
use rclpy_peer::{test_domain_id, RclpyPeer};
use ros_driver::{
    driver_script_yaml, expect_log, get_variable, log_heard, rosout_peer, stop, LOG_ERROR, LOG_WARN,
};
use serde_json::{json, Value};
use std::path::Path;
use std::time::{Duration, Instant};

const TEST_TIMEOUT: Duration = Duration::from_secs(150);
const SET: &str = "rcl_interfaces/srv/SetParameters";
const GET: &str = "rcl_interfaces/srv/GetParameters";

/// `thymio-rt run` with configuration `yaml` and the ROS parameter file `params` (both written
/// to `dir`), in namespace `/<ns>`, on this test's ROS domain.
fn driver(dir: &Path, ns: &str, yaml: &str, params: &str, remap: Remap) -> Proc {
    let config = dir.join(format!("{ns}.yaml"));
    std::fs::write(&config, yaml).unwrap();
    let params_file = dir.join(format!("{ns}-params.yaml"));
    std::fs::write(&params_file, params).unwrap();
    let mut cmd = common::thymio_rt();
    cmd.arg("run")
        .arg("-c")
        .arg(&config)
        .args(["--switch-port", "0"]);
    let remap = match remap {
        Remap::Process => format!("__ns:=/{ns}"),
        Remap::Bridge => format!("asebaros:__ns:=/{ns}"),
    };
    cmd.args(["--ros-args", "-r", &remap, "--params-file"])
        .arg(&params_file);
    cmd.env("ROS_DOMAIN_ID", test_domain_id().to_string())
        .env("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
        .env_remove("LD_LIBRARY_PATH")
        .env_remove("LD_PRELOAD");
    Proc::spawn("thymio-rt run", cmd)
}

/// How the test puts the driver in its namespace.
enum Remap {
    /// `-r __ns:=/ns`, as a launch file's `namespace=`: every node of the process (one robot).
    Process,
    /// `-r asebaros:__ns:=/ns`: the bridge node only, the robots' driver nodes under it in
    /// their own namespaces (a process-wide remapping would move them all to `/ns`).
    Bridge,
}

/// A `rcl_interfaces/ParameterValue` of doubles.
fn doubles(v: &[f64]) -> Value {
    json!({"type": 8, "double_array_value": v})
}

/// `set_parameters` of one parameter on `node`: the result (`successful`, `reason`).
fn set(peer: &mut RclpyPeer, node: &str, name: &str, value: Value, deadline: Instant) -> Value {
    let r = peer
        .call(
            &format!("{node}/set_parameters"),
            SET,
            json!({"parameters": [{"name": name, "value": value}]}),
            deadline,
        )
        .unwrap();
    r["results"][0].clone()
}

/// `get_parameters` of one parameter on `node`.
fn get(peer: &mut RclpyPeer, node: &str, name: &str, deadline: Instant) -> Value {
    let r = peer
        .call(
            &format!("{node}/get_parameters"),
            GET,
            json!({"names": [name]}),
            deadline,
        )
        .unwrap();
    r["values"][0].clone()
}

/// Commands `ns`'s robot forward at 0.1 m/s until its left and right wheel targets (read fresh
/// through its `aseba/get_variable`) are in `left` and `right`; whether they were in time.
fn wheel_targets_reach(
    peer: &mut RclpyPeer,
    ns: &str,
    left: std::ops::RangeInclusive<i64>,
    right: std::ops::RangeInclusive<i64>,
    deadline: Instant,
) -> (bool, Value, Value) {
    let (mut l, mut r) = (Value::Null, Value::Null);
    while Instant::now() < deadline {
        peer.publish(
            &format!("/{ns}/cmd_vel"),
            "geometry_msgs/msg/Twist",
            json!({"linear": {"x": 0.1}}),
            1,
            deadline,
        )
        .unwrap();
        l = get_variable(peer, ns, "motor.left.target", deadline);
        r = get_variable(peer, ns, "motor.right.target", deadline);
        let within = |v: &Value, range: &std::ops::RangeInclusive<i64>| {
            v[0].as_i64().is_some_and(|t| range.contains(&t))
        };
        if within(&l, &left) && within(&r, &right) {
            return (true, l, r);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    (false, l, r)
}

#[test]
fn a_ros_thymio_parameter_file_sets_each_robots_driver() {
    let deadline = Instant::now() + TEST_TIMEOUT;
    let dir = tempfile::tempdir().unwrap();
    let ns = format!("pf{}", std::process::id());
    // ROS-Thymio's layout: the bridge's section, every driver's, one robot's, and a wildcard
    let params = format!(
        "/**:\n  ros__parameters:\n    use_sim_time: false\n    launch_model: ''\n    ground:\n      threshold: 150\n\
         asebaros:\n  ros__parameters:\n    cmd_vel_timeout: 5.0\n    nodes:\n      thymio:\n        \
         maximal_number: 2\n        prefix: thymio_\n        id_variable: _id\n\
         thymio_driver:\n  ros__parameters:\n    odom_frame: odom_rt\n    script: ''\n    \
         launch_model: ''\n    motor:\n      left:\n        parameters: [0.0005, 0.0]\n      \
         right:\n        parameters: [0.0005, 0.0]\n\
         /{ns}/thymio_2/thymio_driver:\n  ros__parameters:\n    robot_frame: base_two\n    \
         motor:\n      left:\n        parameters: [0.001, 0.0]\n      right:\n        \
         parameters: [0.001, 0.0]\n"
    );
    let yaml = format!("{}sim: {{robots: 2}}\n", driver_script_yaml());
    let driver = driver(dir.path(), &ns, &yaml, &params, Remap::Bridge);
    let mut peer = RclpyPeer::serve(test_domain_id(), deadline).unwrap();
    let robot = |id: u16| format!("{ns}/thymio_{id}");
    // the frames: the thymio_driver section for both, robot 2's own section for robot 2 only
    for (id, base) in [(1, "base_link"), (2, "base_two")] {
        let topic = format!("/{}/odom", robot(id));
        peer.subscribe(&topic, "nav_msgs/msg/Odometry", "volatile", deadline)
            .unwrap();
        let odom = peer.message(&topic, deadline, |_| true).unwrap();
        let (frame, child) = (
            odom["header"]["frame_id"].as_str().unwrap().to_owned(),
            odom["child_frame_id"].as_str().unwrap().to_owned(),
        );
        assert_eq!(frame, format!("{}/odom_rt", robot(id)), "robot {id}");
        assert_eq!(child, format!("{}/{base}", robot(id)), "robot {id}");
    }
    // the calibration: 0.1 m/s is 0.1/0.0005 = 200 units for robot 1, 0.1/0.001 = 100 for
    // robot 2 (the simulation default, 0.000332, gives 301)
    for (id, expect) in [(1, 190..=210), (2, 95..=105)] {
        let (ok, l, r) =
            wheel_targets_reach(&mut peer, &robot(id), expect.clone(), expect, deadline);
        assert!(ok, "robot {id}: wheel targets {l} {r}");
    }
    // each robot's node shows its own values (and the wildcard section's)
    for (id, base) in [(1, "base_link"), (2, "base_two")] {
        let node = format!("/{}/thymio_driver", robot(id));
        assert_eq!(
            get(&mut peer, &node, "ground.threshold", deadline)["integer_value"],
            150
        );
        assert_eq!(
            get(&mut peer, &node, "robot_frame", deadline)["string_value"],
            base
        );
        assert_eq!(
            get(&mut peer, &node, "odom_frame", deadline)["string_value"],
            "odom_rt"
        );
        let q = if id == 1 { 0.0005 } else { 0.001 };
        assert_eq!(
            get(&mut peer, &node, "motor.left.parameters", deadline)["double_array_value"],
            json!([q, 0.0])
        );
    }
    // the bridge keeps the process's defaults: the driver sections are the robots'
    let asebaros = format!("/{ns}/asebaros");
    assert_eq!(
        get(&mut peer, &asebaros, "odom_frame", deadline)["string_value"],
        "odom"
    );
    stop(driver);
}

#[test]
fn parameter_sets_answer_the_drivers_verdict() {
    let deadline = Instant::now() + TEST_TIMEOUT;
    let dir = tempfile::tempdir().unwrap();
    let ns = format!("pv{}", std::process::id());
    // robot 1's measured right motor: 0.1 m/s is 0.1/0.0004 = 250 units
    let cal = dir.path().join("cal.yaml");
    std::fs::write(
        &cal,
        "1:\n  motor:\n    right: {parameters: [0.0004, 0.0]}\n",
    )
    .unwrap();
    let yaml = format!(
        "{}cmd_vel_timeout: 5.0\ncalibration_file: {}\n",
        driver_script_yaml(),
        cal.display()
    );
    let params = "asebaros:\n  ros__parameters:\n    odom_max_rate: -1.0\n";
    let driver = driver(dir.path(), &ns, &yaml, params, Remap::Process);
    let mut peer = RclpyPeer::serve(test_domain_id(), deadline).unwrap();
    let node = format!("/{ns}/thymio_driver");
    let left = |peer: &mut RclpyPeer| {
        get(peer, &node, "motor.left.parameters", deadline)["double_array_value"].clone()
    };
    let before = left(&mut peer);
    assert_eq!(before, json!([0.000332, 0.0]), "the simulation default");

    // a value the calibration refuses
    let r = set(
        &mut peer,
        &node,
        "motor.left.parameters",
        doubles(&[-1.0, 0.0]),
        deadline,
    );
    assert_eq!(r["successful"], false, "{r}");
    assert!(
        r["reason"]
            .as_str()
            .unwrap()
            .contains("motor.left.parameters"),
        "{r}"
    );
    assert_eq!(left(&mut peer), before);

    // a start-only parameter: read-only in its descriptor, refused
    let d = peer
        .call(
            &format!("{node}/describe_parameters"),
            "rcl_interfaces/srv/DescribeParameters",
            json!({"names": ["odom_frame"]}),
            deadline,
        )
        .unwrap();
    assert_eq!(d["descriptors"][0]["read_only"], true, "{d}");
    let r = set(
        &mut peer,
        &node,
        "odom_frame",
        json!({"type": 4, "string_value": "x"}),
        deadline,
    );
    assert_eq!(r["successful"], false, "{r}");
    assert!(r["reason"].as_str().unwrap().contains("read-only"), "{r}");
    assert_eq!(
        get(&mut peer, &node, "odom_frame", deadline)["string_value"],
        "odom"
    );

    // the calibration file entry wins: its value is shown, and a set of it is refused
    assert_eq!(
        get(&mut peer, &node, "motor.right.parameters", deadline)["double_array_value"],
        json!([0.0004, 0.0])
    );
    let r = set(
        &mut peer,
        &node,
        "motor.right.parameters",
        doubles(&[0.001, 0.0]),
        deadline,
    );
    assert_eq!(r["successful"], false, "{r}");
    assert!(
        r["reason"].as_str().unwrap().contains("calibration file"),
        "{r}"
    );

    // an accepted value is in effect: 0.1 m/s is 0.1/0.0005 = 200 units on the left, the
    // file's 250 on the right
    let r = set(
        &mut peer,
        &node,
        "motor.left.parameters",
        doubles(&[0.0005, 0.0]),
        deadline,
    );
    assert_eq!(r["successful"], true, "{r}");
    assert_eq!(left(&mut peer), json!([0.0005, 0.0]));
    let (ok, l, r) = wheel_targets_reach(&mut peer, &ns, 190..=210, 240..=260, deadline);
    assert!(ok, "wheel targets {l} {r}");

    // the bridge's start-only parameters are refused too
    let asebaros = format!("/{ns}/asebaros");
    let port = get(&mut peer, &asebaros, "port", deadline);
    let r = set(
        &mut peer,
        &asebaros,
        "port",
        json!({"type": 2, "integer_value": 4}),
        deadline,
    );
    assert_eq!(r["successful"], false, "{r}");
    assert!(r["reason"].as_str().unwrap().contains("read-only"), "{r}");
    assert_eq!(get(&mut peer, &asebaros, "port", deadline), port);
    stop(driver);
}

#[test]
fn a_process_wide_namespace_remap_is_reported_instead_of_colliding_driver_nodes() {
    let deadline = Instant::now() + TEST_TIMEOUT;
    let dir = tempfile::tempdir().unwrap();
    let ns = format!("pw{}", std::process::id());
    let yaml = format!(
        "{}sim: {{robots: 2}}\nnodes: {{thymio: {{maximal_number: 2, prefix: thymio_, id_variable: _id}}}}\n",
        driver_script_yaml()
    );
    let params = "thymio_driver:\n  ros__parameters:\n    odom_frame: odom_rt\n";
    let driver = driver(dir.path(), &ns, &yaml, params, Remap::Process);
    let mut peer = rosout_peer(deadline);
    // rcl would put both robots' thymio_driver nodes at /<ns>/thymio_driver: said, with the fix
    expect_log(&mut peer, &ns, LOG_WARN, "asebaros:__ns:=", deadline);
    // without a driver node, the robots keep asebaros' values (the section is not applied)
    let topic = format!("/{ns}/thymio_2/odom");
    peer.subscribe(&topic, "nav_msgs/msg/Odometry", "volatile", deadline)
        .unwrap();
    let odom = peer.message(&topic, deadline, |_| true).unwrap();
    assert_eq!(odom["header"]["frame_id"], format!("{ns}/thymio_2/odom"));
    stop(driver);
}

/// Issue 23: `axis_length` 1e9 (or 1e-9, 5e-324) was accepted at run time on both nodes
/// (`successful: true`), and a 0.05 rad/s turn then drove the wheels at ±500. Physically
/// meaningless values are refused on `/thymio_driver` and `/asebaros` with the name, the value
/// and the allowed range, the value in effect stays, and the descriptors publish the ranges.
#[test]
fn physically_meaningless_values_are_refused_with_the_range() {
    let deadline = Instant::now() + TEST_TIMEOUT;
    let dir = tempfile::tempdir().unwrap();
    let ns = format!("pr{}", std::process::id());
    let yaml = format!("{}cmd_vel_timeout: 5.0\n", driver_script_yaml());
    let params = "asebaros:\n  ros__parameters:\n    odom_max_rate: -1.0\n";
    let driver = driver(dir.path(), &ns, &yaml, params, Remap::Process);
    let mut peer = rosout_peer(deadline);
    for node in [format!("/{ns}/thymio_driver"), format!("/{ns}/asebaros")] {
        let before = get(&mut peer, &node, "axis_length", deadline);
        assert_eq!(before["double_value"], 0.0935, "{node}: {before}");
        for bad in [1e9, 1e-9, 5e-324] {
            let r = set(
                &mut peer,
                &node,
                "axis_length",
                json!({"type": 3, "double_value": bad}),
                deadline,
            );
            assert_eq!(r["successful"], false, "{node} axis_length {bad}: {r}");
            let reason = r["reason"].as_str().unwrap();
            assert!(
                reason.contains("axis_length") && reason.contains("[0.05, 0.15] m"),
                "{node}: {reason}"
            );
            assert_eq!(get(&mut peer, &node, "axis_length", deadline), before);
        }
        let r = set(
            &mut peer,
            &node,
            "motor.left.parameters",
            doubles(&[1.0, 0.0]),
            deadline,
        );
        assert_eq!(r["successful"], false, "{node}: {r}");
        assert!(r["reason"].as_str().unwrap().contains("q0 = 1"), "{r}");
        let d = peer
            .call(
                &format!("{node}/describe_parameters"),
                "rcl_interfaces/srv/DescribeParameters",
                json!({"names": ["axis_length", "ground.threshold"]}),
                deadline,
            )
            .unwrap();
        let fp = &d["descriptors"][0]["floating_point_range"][0];
        assert_eq!(
            (fp["from_value"].as_f64(), fp["to_value"].as_f64()),
            (Some(0.05), Some(0.15)),
            "{d}"
        );
        let int = &d["descriptors"][1]["integer_range"][0];
        assert_eq!(
            (int["from_value"].as_i64(), int["to_value"].as_i64()),
            (Some(0), Some(1023)),
            "{d}"
        );
        // a value in range is still taken
        let r = set(
            &mut peer,
            &node,
            "axis_length",
            json!({"type": 3, "double_value": 0.094}),
            deadline,
        );
        assert_eq!(r["successful"], true, "{node}: {r}");
    }
    // a process-wide one: refused on the bridge with its range
    let asebaros = format!("/{ns}/asebaros");
    let r = set(
        &mut peer,
        &asebaros,
        "obstacle_stop.max_age",
        json!({"type": 3, "double_value": 1e300}),
        deadline,
    );
    assert_eq!(r["successful"], false, "{r}");
    assert!(
        r["reason"].as_str().unwrap().contains("[0.001, 10] s"),
        "{r}"
    );
    // an anonymous event of the wrong size (set_led_top takes 3 values): refused and said, as a
    // named event would be (before, it went to the robot)
    let d = peer
        .call(
            &format!("/{ns}/aseba/get_description"),
            "asebaros_msgs/srv/GetDescription",
            json!({}),
            deadline,
        )
        .unwrap();
    let events = d["description"]["events"].as_array().unwrap();
    let id = events
        .iter()
        .position(|e| e == "set_led_top")
        .unwrap_or_else(|| panic!("no set_led_top in {d}"));
    peer.publish_until_heard(
        &format!("/{ns}/aseba/anonymous_events"),
        "asebaros_msgs/msg/AnonymousEvent",
        json!({"stamp": {"sec": 0, "nanosec": 0}, "source": 0, "type": id, "data": [1]}),
        1,
        deadline,
        |peer, try_end| {
            let needle = "of size 3 in the script of node 1, got 1 values";
            log_heard(peer, &ns, LOG_ERROR, needle, try_end).is_ok()
        },
    )
    .unwrap_or_else(|e| panic!("{e}\nreports:\n{}", peer.unconsumed()));
    stop(driver);
}
