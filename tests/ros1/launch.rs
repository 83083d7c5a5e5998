//! The driver started the way ROS-Thymio users start theirs, with Debian's ROS 1 tools (scripts/setup-ros1.sh):
//! `roslaunch` of the shipped `launch/ros1/main.launch` (the ROS 1 package `thymio_rt`) and of a ROS-Thymio-style
//! launch file with a `<remap>` (tests/ros1/ros_thymio_style.launch); `robot_state_publisher` reads the driver's
//! `robot_description` from the parameter server and publishes the wheels from its `joint_states`; a `tf2_ros`
//! listener resolves odom → base_link → both wheels; `rosbag record` of the whole interface, read back with rosbag's
//! Python API. Everything on loopback, with a master of its own; every process bounded.

use super::common::{self, free_port, Proc};
use super::peers::{master_uri, need_ros1, rosmaster, rospy_until, PYTHON};
use serde_json::Value;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// Debian's robot_state_publisher.
const RSP: &str = "/usr/lib/robot_state_publisher/robot_state_publisher";

/// Whether roslaunch, robot_state_publisher, tf2_ros and rosbag are installed (and the rest of ROS 1's peers); a
/// missing one fails the test naming scripts/setup-ros1.sh (`false` only when the run opted out).
fn need_launch_tools() -> bool {
    if !need_ros1() {
        return false;
    }
    for file in ["/usr/bin/roslaunch", "/usr/bin/rosbag", RSP] {
        if !Path::new(file).exists() {
            common::missing::peer_missing(&format!("Debian's {file}"), common::missing::ROS1_SETUP);
            return false;
        }
    }
    let import = Command::new(PYTHON)
        .args(["-c", "import roslaunch, tf2_ros, rosbag"])
        .output();
    if !import.as_ref().is_ok_and(|o| o.status.success()) {
        let why = import.map_or_else(
            |e| e.to_string(),
            |o| String::from_utf8_lossy(&o.stderr).trim().to_owned(),
        );
        common::missing::peer_missing(
            &format!("Debian's roslaunch, tf2_ros and rosbag for {PYTHON} ({why})"),
            common::missing::ROS1_SETUP,
        );
        return false;
    }
    true
}

/// `roslaunch ARGS` with the master on `port`, the package `thymio_rt` of launch/ros1 found on ROS_PACKAGE_PATH
/// and its `thymio-rt` running the binary under test; stopped (SIGINT, then killed) when dropped.
struct Launch {
    proc: Proc,
}

impl Launch {
    fn start(port: u16, home: &Path, args: &[&str]) -> Launch {
        let bin = common::thymio_rt().get_program().to_owned();
        let mut c = Command::new("timeout");
        c.args(["-s", "INT", "-k", "30", "170", PYTHON, "/usr/bin/roslaunch"])
            .args(args)
            .env("ROS_MASTER_URI", master_uri(port))
            .env("ROS_IP", "127.0.0.1")
            .env_remove("ROS_HOSTNAME")
            .env_remove("ROS_NAMESPACE")
            .env("ROS_HOME", home)
            .env("ROS_LOG_DIR", home.join("log"))
            .env("ROS_PACKAGE_PATH", common::root().join("launch/ros1"))
            .env("THYMIO_RT_BIN", bin)
            .env("THYMIO_RT_WAIT_PARAM_TIMEOUT", "60")
            .env_remove("THYMIO_LOG")
            // the ROS 2 side of the binary, if any, stays on loopback and this test's domain
            .env("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
            .env("ROS_DOMAIN_ID", common::test_domain_id().to_string());
        Launch {
            proc: Proc::spawn("roslaunch", c),
        }
    }

    /// Waits (bounded) until the driver's ROS 1 interface is up.
    fn wait_driver(&mut self) {
        self.proc.wait_line(Duration::from_secs(90), |l| {
            l.contains("ROS 1 interface up")
        });
    }

    /// Stops roslaunch as Ctrl-C does (it stops its nodes) and waits for it.
    fn stop(mut self) -> std::process::ExitStatus {
        self.proc.signal(nix::sys::signal::Signal::SIGINT);
        self.proc.wait_exit(Duration::from_secs(40))
    }
}

impl Drop for Launch {
    fn drop(&mut self) {
        // roslaunch stops its nodes on SIGINT (SIGTERM after 15 s): give it the time before Proc's kill
        if matches!(self.proc.child.try_wait(), Ok(None)) {
            self.proc.signal(nix::sys::signal::Signal::SIGINT);
            let deadline = std::time::Instant::now() + Duration::from_secs(25);
            while matches!(self.proc.child.try_wait(), Ok(None))
                && std::time::Instant::now() < deadline
            {
                std::thread::sleep(Duration::from_millis(50));
            }
        }
    }
}

/// Runs a scenario of tests/ros1/launch_peer.py against the master on `port` (bounded).
fn peer(port: u16, home: &Path, scenario: &[&str], timeout: Duration) -> Value {
    let out = Command::new("timeout")
        .arg(timeout.as_secs().to_string())
        .arg(PYTHON)
        .arg(common::root().join("tests/ros1/launch_peer.py"))
        .args(scenario)
        .env("ROS_MASTER_URI", master_uri(port))
        .env("ROS_IP", "127.0.0.1")
        .env_remove("ROS_HOSTNAME")
        .env_remove("ROS_NAMESPACE")
        .env("ROS_HOME", home)
        .output()
        .expect("run launch_peer.py");
    let stdout = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(stdout.lines().last().unwrap_or_default()).unwrap_or_else(|e| {
        panic!(
            "launch_peer {scenario:?}: no JSON result ({e}); status {:?}\nstdout:\n{stdout}\nstderr:\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// robot_state_publisher (`rsp`) found the description (`ns`/robot_description) and publishes both wheels from the
/// driver's joint states; tf2 resolves odom → base_link → each wheel, half the axis to each side; the robot drove.
fn assert_model(v: &Value, rsp: &str) {
    assert!(
        v["description"].as_u64().unwrap_or(0) > 100,
        "no robot_description parameter: {v}"
    );
    assert!(v["rsp_uri"].is_string(), "{rsp} is not running: {v}");
    for (wheel, publishers) in v["wheel_publishers"].as_object().expect("wheel_publishers") {
        assert!(
            publishers
                .as_array()
                .is_some_and(|p| p.iter().any(|n| n == rsp)),
            "{rsp} does not publish {wheel}: {v}"
        );
    }
    let y = |side: &str| v["chain"][side][1].as_f64().unwrap_or(f64::NAN);
    assert!(
        y("left") > 0.03 && y("right") < -0.03,
        "wheels not resolved: {v}"
    );
    assert!(
        v["base_x"].as_f64().unwrap_or(0.0) > 0.01,
        "did not drive: {v}"
    );
}

/// The shipped `main.launch` with ROS-Thymio's arguments (`name`, `port`, `axis_length`, `motor_period`, …; no
/// `device`: the embedded simulator) and `model:=true` (robot_state_publisher, started once the driver set
/// `robot_description`): the driver drives under `/thymio`, tf2 resolves the wheels through robot_state_publisher,
/// and `rosbag record -a` of a few seconds holds odom, /tf and joint_states. Before, the driver set no
/// `robot_description` parameter: robot_state_publisher never started (it waited for it) or died without it.
#[test]
fn roslaunch_main_launch_model_tf2_and_rosbag() {
    if !need_launch_tools() {
        return; // peer missing, run opted out: skip recorded
    }
    let port = free_port();
    let home = tempfile::tempdir().unwrap();
    let _master = rosmaster(port);
    let mut launch = Launch::start(
        port,
        home.path(),
        &[
            "thymio_rt",
            "main.launch",
            "name:=thymio",
            "port:=0",
            "axis_length:=0.0935",
            "odom_max_rate:=-1",
            "motor_period:=5",
            "motor_deadband:=10",
            "model:=true",
        ],
    );
    launch.wait_driver();
    let v = peer(
        port,
        home.path(),
        &[
            "model",
            "/thymio",
            "/thymio/cmd_vel",
            "/thymio/rob_st_pub",
            "60",
        ],
        Duration::from_secs(90),
    );
    assert_model(&v, "/thymio/rob_st_pub");
    // the whole interface for a few seconds (`-a`), while its odometry streams (someone subscribes: the bag).
    // roscpp asks the driver for 40-odd topics at once from one address: each must be recorded (the XML-RPC door
    // lets such a burst wait for places instead of dropping its own callers — it used to drop some, and `-a`
    // recorded an arbitrary part of the interface)
    let topics = [
        "/thymio/odom",
        "/tf",
        "/tf_static",
        "/thymio/joint_states",
        "/thymio/proximity/laser",
        "/thymio/imu",
        "/thymio/robot_description",
        "/thymio/aseba/nodes",
        "/diagnostics",
    ];
    let bag = home.path().join("interface.bag");
    let rec = Command::new("timeout")
        .args([
            "-s",
            "INT",
            "60",
            PYTHON,
            "/usr/bin/rosbag",
            "record",
            "--duration=4",
            "-a",
            "-O",
        ])
        .arg(&bag)
        .env("ROS_MASTER_URI", master_uri(port))
        .env("ROS_IP", "127.0.0.1")
        .env("ROS_HOME", home.path())
        .output()
        .expect("run rosbag record");
    assert!(
        rec.status.success() && bag.exists(),
        "rosbag record: {:?}\n{}",
        rec.status,
        String::from_utf8_lossy(&rec.stderr)
    );
    let b = peer(
        port,
        home.path(),
        &["bag", bag.to_str().unwrap()],
        Duration::from_secs(60),
    );
    for topic in topics {
        assert!(
            b["counts"][topic].as_u64().unwrap_or(0) > 0,
            "no {topic} in the bag: {b}"
        );
    }
    launch.stop();
}

/// A ROS-Thymio user's launch file with thymio-rt in place of asebaros + thymio_driver and a `<remap from="cmd_vel"
/// to="teleop/cmd_vel"/>` on the node: the driver subscribes the remapped name (resolved in its namespace:
/// `/thymio/teleop/cmd_vel`, not `/thymio/cmd_vel`) and drives from it; the model step's robot_state_publisher finds
/// the description. Before, the remapping argument stopped the driver (refused) and roslaunch with it.
#[test]
fn roslaunch_ros_thymio_style_launch_with_a_remap() {
    if !need_launch_tools() {
        return; // peer missing, run opted out: skip recorded
    }
    let port = free_port();
    let home = tempfile::tempdir().unwrap();
    let _master = rosmaster(port);
    let file = common::root().join("tests/ros1/ros_thymio_style.launch");
    let mut launch = Launch::start(port, home.path(), &[file.to_str().unwrap(), "name:=thymio"]);
    launch.wait_driver();
    let g = rospy_until(
        port,
        &["graph", "/thymio/asebaros"],
        Duration::from_secs(30),
        |v| {
            v["subscribes"]
                .as_array()
                .is_some_and(|s| s.iter().any(|t| t == "/thymio/teleop/cmd_vel"))
        },
    );
    let subscribes = g["subscribes"].as_array().cloned().unwrap_or_default();
    assert!(
        subscribes.iter().any(|t| t == "/thymio/teleop/cmd_vel"),
        "{g}"
    );
    assert!(!subscribes.iter().any(|t| t == "/thymio/cmd_vel"), "{g}");
    let v = peer(
        port,
        home.path(),
        &[
            "model",
            "/thymio",
            "/thymio/teleop/cmd_vel",
            "/thymio/rob_st_pub",
            "60",
        ],
        Duration::from_secs(90),
    );
    assert_model(&v, "/thymio/rob_st_pub");
    launch.stop();
}

/// `publish_model:=false` beside a user's own model (tests/ros1/own_model.launch: their URDF as
/// `robot_description`, their robot_state_publisher): the parameter stays theirs, the wheels on `/tf` come from
/// their robot_state_publisher only (the driver no longer publishes them: before, both did), which the driver's
/// `joint_states` still turn; tf2 resolves odom → base_link → both wheels.
#[test]
fn roslaunch_publish_model_false_leaves_the_wheels_to_the_users_model() {
    if !need_launch_tools() {
        return; // peer missing, run opted out: skip recorded
    }
    let port = free_port();
    let home = tempfile::tempdir().unwrap();
    let _master = rosmaster(port);
    let own = common::root().join("tests/ros1/own_model.urdf");
    let file = common::root().join("tests/ros1/own_model.launch");
    let mut launch = Launch::start(port, home.path(), &[file.to_str().unwrap()]);
    launch.wait_driver();
    let rsp = "/thymio/my_state_publisher";
    let v = peer(
        port,
        home.path(),
        &["model", "/thymio", "/thymio/cmd_vel", rsp, "60"],
        Duration::from_secs(90),
    );
    assert_model(&v, rsp);
    let theirs = std::fs::read_to_string(&own).unwrap().len() as u64;
    assert_eq!(
        v["description"].as_u64(),
        Some(theirs),
        "robot_description is not the user's: {v}"
    );
    for (wheel, publishers) in v["wheel_publishers"].as_object().expect("wheel_publishers") {
        assert_eq!(publishers, &serde_json::json!([rsp]), "{wheel}: {v}");
    }
    launch.stop();
}
