//! One behaviour suite, two transports (issue 24): the interface scenarios of `tests/behaviour/` (Python, written
//! once against a small client API) run through rclpy against `thymio-rt run` (ROS 2) and through rospy /
//! actionlib / dynamic_reconfigure against `thymio-rt run --ros1 --no-ros` (ROS 1, Debian's rosmaster), both on the
//! embedded simulated Thymio with the same configuration. Each group is a test per transport (`drive::ros2`,
//! `drive::ros1`, …): one driver, one client process, bounded in time; a behaviour that differs between the front
//! ends fails the group on the transport that differs, with the scenario's message.
#![cfg(any(feature = "ros2", feature = "ros1"))]

mod common;
#[cfg(feature = "ros1")]
#[path = "ros1/peers.rs"]
mod peers;
#[cfg(feature = "ros2")]
#[path = "ros/rclpy_peer.rs"]
mod rclpy_peer;
#[cfg(feature = "ros2")]
#[path = "ros/driver.rs"]
mod ros_driver;

use common::scenario::{expect_passed, scenario_command};
use common::Proc;
use std::path::Path;
#[cfg(feature = "ros1")]
use std::time::Duration;

/// What one group may take, client start included (the client stops itself at this bound too).
/// An open 2 × 2 m arena, the robot in the middle of its west half facing east.
const OPEN: &str = "width: 2.0\nheight: 2.0\nrobots:\n  - [0.5, 1.0, 0.0]\n";
/// The robot facing west, its back 9 cm from the east wall.
const WALL_BEHIND: &str = "width: 2.0\nheight: 2.0\nrobots:\n  - [1.88, 1.0, 3.14159]\n";
/// The calibration arena (a line under the wheel axle).
const CALIBRATION: &str = "config/arena/calibration.yaml";
/// A table top with a black tape line on the way to its edge (the cliff reflex).
const TABLE: &str = "config/arena/table.yaml";
/// The line-following track (the robot starts on its black strip).
const LINE: &str = "config/arena/line.yaml";

/// The odometry group's parameters (diff_drive_controller's names; tests/behaviour/scenarios_control.py checks them).
const ODOMETRY: &str = "odom_frame_id: odom_rt\nbase_frame_id: base_rt\n\
    pose_covariance_diagonal: [0.001, 0.002, 1000000.0, 1000000.0, 1000000.0, 0.03]\n\
    twist_covariance_diagonal: [0.004, 0.005, 1000000.0, 1000000.0, 1000000.0, 0.06]\n";

/// The parameters a group adds to the configuration.
fn group_params(group: &str) -> &'static str {
    match group {
        "odometry" => ODOMETRY,
        "lifecycle" | "goal_inactive" => "managed: true\n",
        _ => "",
    }
}

/// The driver's configuration, the same for both transports: the driver script, an unprivileged RT thread (these
/// are functional tests), the simulator's arena (`arena`: YAML text, or a path under the repository) and the
/// group's own parameters.
fn config(dir: &Path, arena: &str, group: &str) -> std::path::PathBuf {
    let arena_file = if arena.ends_with(".yaml") {
        common::root().join(arena)
    } else {
        let f = dir.join("arena.yaml");
        std::fs::write(&f, arena).unwrap();
        f
    };
    let yaml = format!(
        "script: {{path: {}}}\nrt: {{priority: 0, lock_memory: false}}\nsim: {{arena: {}}}\n{}",
        common::root()
            .join("config/aseba/thymio_ros.aesl")
            .display(),
        arena_file.display(),
        group_params(group)
    );
    let path = dir.join("config.yaml");
    std::fs::write(&path, yaml).unwrap();
    path
}

/// Runs `group` through rclpy against `thymio-rt run` (namespace `/<group>_r2`, this test process's DDS domain).
#[cfg(feature = "ros2")]
fn run_ros2(group: &str, arena: &str) {
    let python = common::root().join(".venv-ros/bin/python");
    assert!(
        python.exists(),
        "rclpy (the ROS 2 venv, {}) not found: run scripts/setup-ros2.sh",
        python.display()
    );
    let dir = tempfile::tempdir().unwrap();
    let ns = format!("{group}_r2");
    let yaml = std::fs::read_to_string(config(dir.path(), arena, group)).unwrap();
    let mut driver = ros_driver::ros_driver(dir.path(), &ns, &yaml, &["--switch-port", "0"], &[]);
    let mut c = scenario_command(&python, "ros2", group, &ns, dir.path());
    c.env("ROS_DOMAIN_ID", rclpy_peer::test_domain_id().to_string())
        .env("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
        // the wheels' bootstrapper must run in the child to set its library path
        .env_remove("_ROS_WHEELS_BOOTSTRAP_COMPLETE");
    expect_passed(
        Proc::spawn("rclpy scenarios", c),
        &mut driver,
        "ros2",
        group,
    );
    ros_driver::stop(driver);
}

/// Runs `group` through rospy against `thymio-rt run --ros1 --no-ros` (namespace `/<group>_r1`, a rosmaster of its
/// own on a free port).
#[cfg(feature = "ros1")]
fn run_ros1(group: &str, arena: &str) {
    if !peers::need_ros1() {
        return; // peer missing, run opted out: skip recorded
    }
    let dir = tempfile::tempdir().unwrap();
    let ns = format!("{group}_r1");
    let port = common::free_port();
    let _master = peers::rosmaster(port);
    let mut d = peers::driver_command(port);
    d.arg("-c")
        .arg(config(dir.path(), arena, group))
        .arg("--no-ros")
        .env("ROS_NAMESPACE", &ns);
    let mut driver = Proc::spawn("thymio-rt run --ros1", d);
    driver.wait_line(Duration::from_secs(60), |l| {
        l.contains("ROS 1 interface up")
    });
    let mut c = scenario_command(Path::new(peers::PYTHON), "ros1", group, &ns, dir.path());
    c.env("ROS_MASTER_URI", peers::master_uri(port))
        .env("ROS_IP", "127.0.0.1")
        .env_remove("ROS_HOSTNAME")
        .env_remove("ROS_NAMESPACE")
        .env("ROS_HOME", dir.path().join("ros_home"));
    expect_passed(
        Proc::spawn("rospy scenarios", c),
        &mut driver,
        "ros1",
        group,
    );
    driver.signal(nix::sys::signal::Signal::SIGINT);
    let status = driver.wait_exit(Duration::from_secs(15));
    assert!(
        status.success(),
        "thymio-rt run --ros1 ended with {status}:\n{}",
        driver.seen.join("\n")
    );
}

/// A group of scenarios as two tests, `<group>::ros2` and `<group>::ros1` (one ignored, with the reason, while its
/// front end lacks what the group needs).
macro_rules! group {
    ($group:ident, $arena:expr $(, ros1_ignored = $why:literal)? $(, ros2_ignored = $why2:literal)?) => {
        mod $group {
            #[cfg(feature = "ros2")]
            #[test]
            $(#[ignore = $why2])?
            fn ros2() {
                super::run_ros2(stringify!($group), $arena);
            }

            #[cfg(feature = "ros1")]
            #[test]
            $(#[ignore = $why])?
            fn ros1() {
                super::run_ros1(stringify!($group), $arena);
            }
        }
    };
}

group!(drive, super::OPEN);
group!(sensors, super::WALL_BEHIND);
group!(variables, super::OPEN);
group!(load_script, super::OPEN);
group!(battery, super::OPEN);
group!(switch, super::OPEN);
group!(joints, super::OPEN);
group!(controllers, super::OPEN);
group!(calibration, super::CALIBRATION);
group!(parameters, super::OPEN);
group!(motion_limits, super::OPEN);
group!(odometry, super::OPEN);
group!(cliff, super::TABLE);
group!(cliff_line, super::LINE);
group!(pickup, super::OPEN);
group!(lifecycle, super::OPEN);
group!(goals, super::OPEN);
group!(goal_cliff, super::TABLE);
group!(goal_ranges, super::OPEN);
group!(goal_inactive, super::OPEN);
group!(goal_client_gone, super::OPEN);
group!(emergency_stop, super::OPEN);
