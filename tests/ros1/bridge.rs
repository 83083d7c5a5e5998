//! The ROS 1 front end end to end with real ROS 1 peers (Debian's rosmaster and rospy, scripts/setup-ros1.sh):
//! `thymio-rt run --ros1` on the embedded simulator registers with a master of its own (one port per test,
//! loopback); the master sees the node and its interface; rospy drives the robot with `cmd_vel` and receives
//! `odom` and `/tf`; `aseba/get_variable` / `set_variable` through rospy service proxies, bad requests answered
//! with errors; and the driver survives the master restarting (it registers again, rospy drives it again).
#![cfg(feature = "ros1")]

use crate::common;
use crate::peers;
// roslaunch, robot_state_publisher, tf2_ros and rosbag with the shipped launch files (issue 44 item 1)
#[path = "../ros1/launch.rs"]
mod launch;

use common::free_port;
use nix::sys::signal::Signal;
use peers::{driver, driver_command, need_ros1, rosmaster, rospy, rospy_until};
use serde_json::Value;
use std::time::Duration;

fn names(v: &Value, key: &str) -> Vec<String> {
    v[key]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|s| s.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// The robot moved forward under rospy's `cmd_vel`, seen in `odom` and in `/tf` (odom → base_link).
fn assert_driven(v: &Value) {
    assert!(v["odom_count"].as_u64().unwrap_or(0) > 0, "no odom: {v}");
    assert!(
        v["odom_dx"].as_f64().unwrap_or(0.0) > 0.01,
        "odom did not move forward: {v}"
    );
    assert!(
        v["odom_vx"].as_f64().unwrap_or(0.0) > 0.0,
        "odom twist: {v}"
    );
    let odom = v["odom_frame"].as_str().unwrap_or("");
    assert!(odom == "odom" || odom.ends_with("/odom"), "{v}");
    assert_eq!(v["tf_parent"], odom, "{v}");
    assert!(
        v["tf_dx"].as_f64().unwrap_or(0.0) > 0.01,
        "/tf did not move: {v}"
    );
}

/// The master knows the node `/asebaros` and what it publishes, subscribes to and serves; rospy drives it.
#[test]
fn ros1_master_sees_the_node_and_rospy_drives_it() {
    if !need_ros1() {
        return; // peer missing, run opted out: skip recorded
    }
    let port = free_port();
    let _master = rosmaster(port);
    let mut drv = driver(port, &[]);
    let g = rospy_until(port, &["graph"], Duration::from_secs(30), |v| {
        names(v, "publishes").contains(&"/odom".to_owned())
    });
    assert!(
        g["uri"]
            .as_str()
            .unwrap_or("")
            .starts_with("http://127.0.0.1:"),
        "{g}"
    );
    let publishes = names(&g, "publishes");
    for t in [
        "/aseba/nodes",
        "/odom",
        "/tf",
        "/joint_states",
        "/proximity/laser",
        "/proximity/left",
    ] {
        assert!(publishes.iter().any(|p| p == t), "{t} not published: {g}");
    }
    assert!(
        names(&g, "subscribes").iter().any(|s| s == "/cmd_vel"),
        "{g}"
    );
    let services = names(&g, "services");
    for s in [
        "/aseba/get_variable",
        "/aseba/set_variable",
        "/aseba/get_nodes",
        "/is_ready",
    ] {
        assert!(services.iter().any(|x| x == s), "{s} not served: {g}");
    }
    let d = rospy(port, &["drive", "20"], Duration::from_secs(40));
    assert_driven(&d);
    drv.drain();
}

/// Nobody subscribes to `odom`, `/tf`, `joint_states` or `cmd_vel_out`: the RT thread decodes the robot's
/// odometry but hands none of it to the ROS 1 publisher thread, which sleeps (`--report`: RT samples, no hand-off).
#[test]
fn ros1_odometry_is_not_handed_over_without_a_subscriber() {
    if !need_ros1() {
        return; // peer missing, run opted out: skip recorded
    }
    let port = free_port();
    let _master = rosmaster(port);
    let report = std::env::temp_dir().join(format!("ros1-idle-report-{port}.json"));
    let _ = std::fs::remove_file(&report);
    let mut drv = driver(port, &["--report", report.to_str().unwrap()]);
    // the robot is driven (its topics registered) and streams while rospy looks at the graph
    rospy_until(port, &["graph"], Duration::from_secs(30), |v| {
        names(v, "publishes").contains(&"/odom".to_owned())
    });
    drv.signal(Signal::SIGINT);
    assert!(drv.wait_exit(Duration::from_secs(20)).success());
    let v: Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    let _ = std::fs::remove_file(&report);
    assert!(v["rt"]["odometry_samples"].as_u64().unwrap_or(0) > 0, "{v}");
    assert_eq!(
        v["hops"]["odom_handed_to_publish_ns"]["count"].as_u64(),
        Some(0),
        "{}",
        v["hops"]
    );
}

/// get_variable and set_variable through rospy service proxies; unknown variables and wrong sizes are errors
/// that the caller sees (rospy's ServiceException with our reason), not empty answers.
#[test]
fn ros1_variables_through_rospy_service_proxies() {
    if !need_ros1() {
        return; // peer missing, run opted out: skip recorded
    }
    let port = free_port();
    let _master = rosmaster(port);
    let _drv = driver(port, &[]);
    // the robot driven (its script loaded, which resets the VM's variables): a variable set while the node settles
    // after its acceptance is wiped by that load, in asebaros as here
    rospy_until(port, &["graph"], Duration::from_secs(30), |v| {
        names(v, "publishes").contains(&"/odom".to_owned())
    });
    let v = rospy(port, &["vars"], Duration::from_secs(60));
    assert_eq!(v["nodes"], serde_json::json!([[1, "thymio-II"]]), "{v}");
    assert_eq!(v["id"], serde_json::json!([1]), "{v}");
    assert_eq!(
        v["leds_top"],
        serde_json::json!([32, 0, 16]),
        "set_variable not applied: {v}"
    );
    let err = |k: &str| v[k].as_str().unwrap_or("").to_owned();
    assert!(err("unknown_get").contains("no.such.variable"), "{v}");
    assert!(err("unknown_set").contains("no.such.variable"), "{v}");
    assert!(err("wrong_size").contains("size 3"), "{v}");
    // the reason only: no backtrace of the driver's (it runs with RUST_BACKTRACE=1), and no stray length prefix
    // before it (rospy shows the error's bytes: roslibrust's extra u32 appeared as b'\x1c\x00\x00\x00…')
    for k in ["unknown_get", "unknown_set", "wrong_size"] {
        assert!(!err(k).contains("acktrace"), "{k}: {v}");
        assert!(!err(k).contains("\\x00"), "{k}: {v}");
        assert!(
            err(k).contains("error: b'get_variable") || err(k).contains("error: b'set_variable"),
            "{k}: {v}"
        );
    }
}

/// A persistent rospy service connection serves call after call (an error among them does not end it), and
/// `rosservice type` (a probe: the connection header only) reads the service's type.
#[test]
fn ros1_persistent_service_connections_and_probes() {
    if !need_ros1() {
        return; // peer missing, run opted out: skip recorded
    }
    let port = free_port();
    let _master = rosmaster(port);
    let _drv = driver(port, &[]);
    let v = rospy(port, &["persistent", "5"], Duration::from_secs(40));
    assert_eq!(
        v["ids"],
        serde_json::json!([[1], [1], [1], [1], [1]]),
        "{v}"
    );
    assert!(
        v["error"]
            .as_str()
            .unwrap_or("")
            .contains("no.such.variable"),
        "{v}"
    );
    assert_eq!(v["after_error"], serde_json::json!([1]), "{v}");
    let out = std::process::Command::new("timeout")
        .args([
            "20",
            peers::PYTHON,
            "/usr/bin/rosservice",
            "type",
            "/aseba/get_variable",
        ])
        .env("ROS_MASTER_URI", peers::master_uri(port))
        .env("ROS_IP", "127.0.0.1")
        .output()
        .expect("rosservice");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "asebaros_msgs/GetVariable",
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The robot model on the parameter server of the master at `port` (`None`: no `…robot_description` parameter),
/// read with the standard library's XML-RPC client (what robot_state_publisher reads).
fn robot_description_param(port: u16) -> Option<String> {
    let script = "import sys, xmlrpc.client as x\n\
        m = x.ServerProxy('http://127.0.0.1:%s' % sys.argv[1])\n\
        names = [n for n in m.getParamNames('/t')[2] if n.endswith('robot_description')]\n\
        print(m.getParam('/t', names[0])[2] if names else '', end='')\n";
    let out = std::process::Command::new("timeout")
        .args(["20", "/usr/bin/python3", "-c", script, &port.to_string()])
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    (!text.is_empty()).then_some(text)
}

/// Kill the master, start a new one on the same port: the driver registers everything again and sets the robot
/// model on the new parameter server (robot_state_publisher started after the restart needs it), and a rospy
/// client of the new master drives the robot and receives odometry.
#[test]
fn ros1_driver_survives_a_master_restart() {
    if !need_ros1() {
        return; // peer missing, run opted out: skip recorded
    }
    let port = free_port();
    let mut master = rosmaster(port);
    let mut drv = driver(port, &[]);
    let before = rospy(port, &["odom", "20"], Duration::from_secs(30));
    assert_eq!(before["odom"], true, "{before}");
    let model = robot_description_param(port).expect("robot_description on the first master");
    assert!(model.contains("<robot"), "{model}");
    master.signal(Signal::SIGKILL);
    master.wait_exit(Duration::from_secs(10));
    drop(master);
    drv.wait_line(Duration::from_secs(20), |l| l.contains("master lost"));
    let _master = rosmaster(port);
    drv.wait_line(Duration::from_secs(20), |l| l.contains("registering again"));
    let d = rospy(port, &["drive", "20"], Duration::from_secs(40));
    assert_driven(&d);
    // registered again (before rospy could drive): the model is back too
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let mut again = robot_description_param(port);
    while again.is_none() && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
        again = robot_description_param(port);
    }
    assert_eq!(
        again.as_deref(),
        Some(model.as_str()),
        "the new master has no robot model"
    );
}

/// Issue 23: a physically meaningless value on the parameter server (`/thymio_driver/axis_length` 1e9) is refused
/// at start with the name, the value and the allowed range, as the configuration file's would be; the driver does
/// not run with it.
#[test]
fn ros1_a_physically_meaningless_parameter_is_refused_with_the_range() {
    if !need_ros1() {
        return; // peer missing, run opted out: skip recorded
    }
    let port = free_port();
    let _master = rosmaster(port);
    let set = rospy(
        port,
        &["params", "/thymio_driver/axis_length=1e9"],
        Duration::from_secs(20),
    );
    assert_eq!(set["set"], 1, "{set}");
    let mut c = driver_command(port);
    c.arg("--no-ros");
    let mut p = common::Proc::spawn("thymio-rt --ros1", c);
    let line = p.wait_line(Duration::from_secs(60), |l| l.contains("axis_length"));
    assert!(line.contains("[0.05, 0.15] m"), "no range given: {line}");
    let status = p.wait_exit(Duration::from_secs(30));
    assert!(
        !status.success(),
        "it ran with axis_length 1e9:\n{}",
        p.seen.join("\n")
    );
}

/// Parameters from the parameter server under ROS 1 names (asebaros' `~nodes/thymio/prefix`, `~sim/robots`,
/// ROS-Thymio's driver node's `axis_length`: the wheel links' TF), and two robots told apart by namespace: each
/// has its own `cmd_vel`, `odom` and frames, and none the unprefixed names.
#[test]
fn ros1_parameters_and_two_robots_by_namespace() {
    if !need_ros1() {
        return; // peer missing, run opted out: skip recorded
    }
    let port = free_port();
    let _master = rosmaster(port);
    let set = rospy(
        port,
        &[
            "params",
            "/asebaros/nodes/thymio/prefix='thymio_'",
            "/asebaros/nodes/thymio/maximal_number=0",
            "/asebaros/sim/robots=2",
            "/thymio_driver/axis_length=0.1",
        ],
        Duration::from_secs(20),
    );
    assert_eq!(set["set"], 4, "{set}");
    let _drv = driver(port, &[]);
    let g = rospy_until(port, &["graph"], Duration::from_secs(30), |v| {
        let p = names(v, "publishes");
        p.contains(&"/thymio_1/odom".to_owned()) && p.contains(&"/thymio_2/odom".to_owned())
    });
    let publishes = names(&g, "publishes");
    for t in [
        "/thymio_1/odom",
        "/thymio_2/odom",
        "/thymio_1/aseba/description",
    ] {
        assert!(publishes.iter().any(|p| p == t), "{t} not published: {g}");
    }
    assert!(
        !publishes.iter().any(|p| p == "/odom"),
        "an unprefixed robot: {g}"
    );
    let subscribes = names(&g, "subscribes");
    for t in ["/thymio_1/cmd_vel", "/thymio_2/cmd_vel"] {
        assert!(subscribes.iter().any(|s| s == t), "{t} not subscribed: {g}");
    }
    let d = rospy(port, &["drive", "20", "thymio_2"], Duration::from_secs(40));
    assert_driven(&d);
    assert_eq!(d["odom_frame"], "thymio_2/odom", "{d}");
    let y = d["left_wheel_y"].as_f64().unwrap_or(0.0);
    assert!(
        (y - 0.05).abs() < 1e-9,
        "axis_length 0.1 from /thymio_driver not applied: {d}"
    );
    let other = rospy(port, &["odom", "10"], Duration::from_secs(20));
    assert_eq!(
        other["odom"], false,
        "no robot has the unprefixed odom: {other}"
    );
}

/// The rest of ROS-Thymio's ROS 1 interface through rospy: LEDs (thymio_msgs/Led, a body ColorRGBA), `comm/tx`
/// and an anonymous event ROS → Aseba reach the robot (its variables read back); a Led of no group and an
/// anonymous event of the wrong size are refused with the reason in the driver's log; `imu` and `temperature` come from the robot's events; the latched
/// `robot_description`, `obstacle_stop` and `/tf_static` reach a late subscriber; `/diagnostics` (Debian's
/// diagnostic_msgs) reports the network, the robot's node and the RT thread.
#[test]
fn ros1_thymio_actuators_sensors_and_model() {
    if !need_ros1() {
        return; // peer missing, run opted out: skip recorded
    }
    let port = free_port();
    let _master = rosmaster(port);
    let mut drv = driver(port, &[]);
    let v = rospy(port, &["thymio", "40"], Duration::from_secs(60));
    assert_eq!(v["leds_top"], serde_json::json!([32, 0, 16]), "{v}");
    assert_eq!(
        v["leds_circle"],
        serde_json::json!([32, 16, 0, 0, 0, 0, 0, 32]),
        "{v}"
    );
    assert_eq!(v["comm_tx"], serde_json::json!([321]), "{v}");
    assert_eq!(
        v["leds_top_anonymous"],
        serde_json::json!([0, 32, 0]),
        "anonymous event not forwarded: {v}"
    );
    let az = v["imu_az"].as_f64().unwrap_or(0.0);
    assert!((az - 9.81).abs() < 1.5, "imu: {v}");
    assert_eq!(v["imu_frame"], "base_link", "{v}");
    let t = v["temperature"].as_f64().unwrap_or(-300.0);
    assert!((0.0..60.0).contains(&t), "temperature: {v}");
    assert!(
        v["description"].as_str().unwrap_or("").contains("<robot"),
        "robot_description: {v}"
    );
    assert_eq!(v["obstacle_stop"], false, "{v}");
    let frames = names(&v, "tf_static");
    for f in ["proximity_center_link", "ground_left_link", "laser_link"] {
        assert!(frames.iter().any(|x| x == f), "{f} not in /tf_static: {v}");
    }
    let d = &v["diagnostics"];
    assert_eq!(d["asebaros: Aseba Network"][1], "Connected", "{v}");
    assert_eq!(d["asebaros: Aseba Node thymio-II 1"][1], "Connected", "{v}");
    assert!(d["asebaros: RT thread"].is_array(), "{v}");
    drv.wait_line(Duration::from_secs(10), |l| {
        l.contains("led: command refused") && l.contains("unknown LED group 9")
    });
    // an anonymous event of the wrong size is refused and said, as a named event is
    drv.wait_line(Duration::from_secs(10), |l| {
        l.contains("anonymous event")
            && l.contains("of size 3 in the script of node 1, got 1 values")
    });
}

/// `aseba/load_script` through a rospy service proxy: the script is compiled with the request's constant and
/// loaded, its events get topics, and an anonymous event from ROS reaches it (ping → pong with GAIN 3); a file
/// that does not exist and one that does not compile are service errors with the reason.
#[test]
fn ros1_load_script_and_anonymous_events() {
    if !need_ros1() {
        return; // peer missing, run opted out: skip recorded
    }
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("echo.aesl");
    std::fs::write(
        &script,
        "<!DOCTYPE aesl-source>\n<network>\n<event size=\"1\" name=\"ping\"/>\n<event size=\"2\" name=\"pong\"/>\n\
         <constant value=\"2\" name=\"GAIN\"/>\n<node nodeId=\"1\" name=\"thymio-II\">var n = 0\n\
         onevent ping\nn++\nemit pong [event.args[0] * GAIN, n]</node>\n</network>\n",
    )
    .unwrap();
    let broken = dir.path().join("broken.aesl");
    std::fs::write(
        &broken,
        "<!DOCTYPE aesl-source>\n<network>\n<node nodeId=\"1\" name=\"thymio-II\">var a\nb = 1</node>\n</network>\n",
    )
    .unwrap();
    let port = free_port();
    let _master = rosmaster(port);
    let _drv = driver(port, &[]);
    let v = rospy(
        port,
        &[
            "load_script",
            script.to_str().unwrap(),
            broken.to_str().unwrap(),
        ],
        Duration::from_secs(60),
    );
    assert_eq!(v["loaded"], Value::Null, "{v}");
    assert_eq!(v["pong"][0], 21, "ping 7 × GAIN 3: {v}");
    let err = |k: &str| v[k].as_str().unwrap_or("").to_owned();
    assert!(err("missing").contains("echo.aesl.missing"), "{v}");
    assert!(
        err("broken").contains("2:1") && err("broken").contains("not a defined variable"),
        "{v}"
    );
}
