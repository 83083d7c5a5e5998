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

use crate::common;
use crate::rclpy_peer;
use crate::ros_driver;

use common::Proc;
use rclpy_peer::{project_root, test_domain_id, RclpyPeer};
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

/// The one node a ROS 2 launch file of launch/ros2 starts with the launch arguments `args`, as
/// tests/ros/launch_params.py reads it (`ros2 launch` is not on this machine): `{package, executable, namespace,
/// arguments, parameters}`.
fn launched(file: &str, args: &[String]) -> Value {
    let root = project_root();
    let out = std::process::Command::new(root.join(".venv-ros/bin/python"))
        .arg(root.join("tests/ros/launch_params.py"))
        .arg(root.join(file))
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{file} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let nodes: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(nodes.as_array().map(Vec::len), Some(1), "{file}: {nodes}");
    let node = nodes[0].clone();
    assert_eq!(
        (node["package"].as_str(), node["executable"].as_str()),
        (Some("thymio_rt"), Some("thymio-rt")),
        "{file}"
    );
    node
}

/// Whether the `rcl_interfaces/ParameterValue` `got` holds the launch file's `want` (numbers by value: an XML
/// launch file's `-1` is an integer that a double parameter holds as -1.0).
fn holds(got: &Value, want: &Value) -> bool {
    match want {
        Value::Bool(b) => got["type"] == 1 && got["bool_value"] == *b,
        Value::Number(n) => {
            let v = match got["type"].as_u64() {
                Some(2) => got["integer_value"].as_f64(),
                Some(3) => got["double_value"].as_f64(),
                _ => None,
            };
            v == n.as_f64()
        }
        Value::String(_) => got["type"] == 4 && got["string_value"] == *want,
        Value::Array(_) => got["type"] == 9 && got["string_array_value"] == *want,
        _ => false,
    }
}

/// ROS-Thymio's driver parameters among a launch file's: the robot's `thymio_driver` node holds them too.
const LAUNCHED_DRIVER_PARAMS: [&str; 6] = [
    "axis_length",
    "odom_max_rate",
    "tf_prefix",
    "calibration_file",
    "simulation",
    "publish_model",
];

/// The ROS 2 launch files (launch/ros2/main.launch and main.launch.py) pass the driver ROS-Thymio's arguments as
/// parameters it accepts with the same values: each file's node (read by tests/ros/launch_params.py, the same for
/// both files) is started as launch_ros would start it (its arguments, its namespace as `-r __ns:=`, its parameters
/// in a `/**` parameter file), and `get_parameters` of `asebaros` and of the robot's `thymio_driver` gives back every
/// value. Test-only additions: `port:=0` (no Aseba switch port shared between tests), an unprivileged RT thread in
/// an `asebaros:` section, and for the several-robot case (no namespace) `-r asebaros:__ns:=`.
#[test]
fn the_ros2_launch_files_parameters_are_all_accepted_with_their_values() {
    let deadline = Instant::now() + TEST_TIMEOUT;
    let dir = tempfile::tempdir().unwrap();
    let pid = std::process::id();
    let mut peer = RclpyPeer::serve(test_domain_id(), deadline).unwrap();
    // ROS-Thymio's defaults; then one robot of several, ROS-Thymio's other values
    let cases: [(String, Vec<String>, &str); 2] = [
        (format!("lpa{pid}"), vec![], ""),
        (
            format!("lpb{pid}"),
            [
                "single:=false",
                "device:=sim:robots=1",
                "simulation:=True",
                "axis_length:=0.1",
                "odom_max_rate:=10",
                "motor_period:=10",
                "emit_buttons:=1",
                "model:=false",
                "highest_acceptable_protocol_version:=20",
            ]
            .map(String::from)
            .to_vec(),
            "thymio_1",
        ),
    ];
    for (name, mut args, robot) in cases {
        args.extend([format!("name:={name}"), "port:=0".to_owned()]);
        let xml = launched("launch/ros2/main.launch", &args);
        let py = launched("launch/ros2/main.launch.py", &args);
        // the two files pass the same
        assert_eq!(xml["arguments"], py["arguments"]);
        assert_eq!(xml["namespace"], py["namespace"]);
        let (xp, pp) = (
            xml["parameters"].as_object().unwrap(),
            py["parameters"].as_object().unwrap(),
        );
        assert_eq!(xp.keys().collect::<Vec<_>>(), {
            let mut k: Vec<_> = pp.keys().collect();
            k.sort();
            k
        });
        for (k, v) in xp {
            let same = v == &pp[k] || (v.is_number() && v.as_f64() == pp[k].as_f64());
            assert!(same, "{k}: {v} (XML) vs {} (Python)", pp[k]);
        }
        for (file, node) in [("main.launch", &xml), ("main.launch.py", &py)] {
            let params_file = dir.path().join(format!("{name}-{file}.yaml"));
            let mut text = String::from(
                "asebaros:\n  ros__parameters:\n    rt: {priority: 0, lock_memory: false}\n",
            );
            text.push_str("/**:\n  ros__parameters:\n");
            for (k, v) in node["parameters"].as_object().unwrap() {
                text.push_str(&format!("    {k}: {v}\n")); // JSON is YAML
            }
            std::fs::write(&params_file, text).unwrap();
            let mut cmd = common::thymio_rt();
            for a in node["arguments"].as_array().unwrap() {
                cmd.arg(a.as_str().unwrap());
            }
            let remap = match node["namespace"].as_str().unwrap() {
                "" => format!("asebaros:__ns:=/{name}"),
                ns => format!("__ns:=/{ns}"),
            };
            cmd.args(["--ros-args", "-r", &remap, "--params-file"])
                .arg(&params_file)
                .env("ROS_DOMAIN_ID", test_domain_id().to_string())
                .env("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
                .env_remove("LD_LIBRARY_PATH")
                .env_remove("LD_PRELOAD");
            let driver = Proc::spawn("thymio-rt run", cmd);
            let driver_node = [name.as_str(), robot, "thymio_driver"]
                .iter()
                .filter(|p| !p.is_empty())
                .fold(String::new(), |n, p| format!("{n}/{p}"));
            for (node_name, names) in [
                (
                    format!("/{name}/asebaros"),
                    node["parameters"]
                        .as_object()
                        .unwrap()
                        .keys()
                        .cloned()
                        .collect::<Vec<_>>(),
                ),
                (
                    driver_node,
                    LAUNCHED_DRIVER_PARAMS.map(String::from).to_vec(),
                ),
            ] {
                let r = peer
                    .call(
                        &format!("{node_name}/get_parameters"),
                        GET,
                        json!({ "names": names }),
                        deadline,
                    )
                    .unwrap();
                let values = r["values"].as_array().unwrap();
                assert_eq!(values.len(), names.len(), "{node_name}: {r}");
                for (n, got) in names.iter().zip(values) {
                    let want = &node["parameters"][n];
                    assert!(
                        holds(got, want),
                        "{file} {args:?}: {node_name} {n} = {got}, launched {want}"
                    );
                }
            }
            stop(driver);
        }
    }
}
