//! The `calibrate_motors` action on ROS 1, end to end with Debian's actionlib (`SimpleActionClient`,
//! `tests/ros1/calibration_client.py`) against `thymio-rt run --ros1` on an embedded simulated Thymio with
//! miscalibrated wheels (left +6 %, right −4 %) over the calibration arena's line: bad goals are REJECTED with the
//! reason ROS 2 logs as their status text, a short calibration publishes feedback through its phases and
//! SUCCEEDS with the wheels' true gains, the calibration file written (the ROS 2 test's checks); a goal cancelled
//! during its sweep is PREEMPTED and `cmd_vel` drives again; and a rospy subscriber of `/rosout` reads the
//! driver's lines (a rejected goal's reason).
#![cfg(feature = "ros1")]

use crate::common;
use crate::peers;
use common::events;

use common::{free_port, Proc};
use peers::{driver_command, need_ros1, rosmaster, PYTHON};
use serde_json::Value;
use std::process::Command;
use std::time::Duration;

const GAINS: [f64; 2] = [1.06, 0.96];
/// The simulated robot's true speed of a motor unit (m/s), sim::thymio::robot::UNIT_SPEED.
const UNIT_SPEED: f64 = 0.001 / 2.93;
/// actionlib_msgs/GoalStatus.
const PREEMPTED: u64 = 2;
const SUCCEEDED: u64 = 3;
const REJECTED: u64 = 5;

/// Debian's actionlib and genmsg for the system Python, besides rospy ([`need_ros1`]).
fn need_actionlib() -> bool {
    if !need_ros1() {
        return false;
    }
    let ok = Command::new(PYTHON)
        .args(["-c", "import actionlib, genpy, rosgraph_msgs.msg"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        common::missing::peer_missing(
            "Debian's python3-actionlib and python3-rosgraph-msgs for /usr/bin/python3",
            common::missing::ROS1_SETUP,
        );
    }
    ok
}

#[test]
fn actionlib_calibrates_cancels_and_reads_the_rejections_on_rosout() {
    if !need_actionlib() {
        return; // peer missing, run opted out: skip recorded
    }
    let ns = format!("cal{}", std::process::id());
    let dir = tempfile::tempdir().unwrap();
    let cal_file = dir.path().join("calibration/thymio_calibration.yaml");
    let yaml = format!(
        "script: {{path: {}}}\nrt: {{priority: 0, lock_memory: false}}\nsim: {{arena: {}, wheels: {{gain: [{}, \
         {}]}}}}\ncalibration_file: {}\n",
        common::root()
            .join("config/aseba/thymio_ros.aesl")
            .display(),
        common::root()
            .join("config/arena/calibration.yaml")
            .display(),
        GAINS[0],
        GAINS[1],
        cal_file.display()
    );
    // the file must exist at start (a missing calibration_file is an error): an empty one
    std::fs::create_dir_all(cal_file.parent().unwrap()).unwrap();
    std::fs::write(&cal_file, "").unwrap();
    let config = dir.path().join("driver.yaml");
    std::fs::write(&config, yaml).unwrap();

    let port = free_port();
    let _master = rosmaster(port);
    let mut cmd = driver_command(port);
    cmd.arg("--no-ros")
        .arg("-c")
        .arg(&config)
        .arg(format!("__ns:=/{ns}"));
    let mut driver = Proc::spawn("thymio-rt --ros1", cmd);
    driver.wait_line(Duration::from_secs(60), |l| {
        l.contains("ROS 1 interface up")
    });

    let mut c = Command::new("timeout");
    c.arg("180")
        .arg(PYTHON)
        .arg(common::root().join("tests/ros1/calibration_client.py"))
        .args([&ns, "--timeout", "170"])
        .env("ROS_MASTER_URI", peers::master_uri(port))
        .env("ROS_IP", "127.0.0.1")
        .env_remove("ROS_HOSTNAME")
        .env_remove("ROS_NAMESPACE")
        .env("ROS_HOME", dir.path().join("ros_home"))
        .env("PYTHONUNBUFFERED", "1");
    let mut client = Proc::spawn("actionlib client", c);
    let last = client.wait_line(Duration::from_secs(190), |l| {
        l.contains("\"event\": \"done\"")
            || l.contains("\"event\": \"error\"")
            || l.contains("\"event\": \"timeout\"")
    });
    let lines = client.seen.clone();
    driver.drain();
    let log = driver.seen.join("\n");
    let all = lines.join("\n");
    assert!(
        last.contains("\"done\""),
        "client: {last}\n{all}\ndriver:\n{log}"
    );

    // bad goals are rejected, each with ROS 2's reason as its status text
    let bad = events(&lines, "bad_goal");
    assert_eq!(bad.len(), 5, "{all}");
    for (b, why) in bad.iter().zip([
        "motor_speeds: 0 is outside 1..500 units",
        "motor_speeds: 600 is outside 1..500 units",
        "motors: \"middle\" is not a motor",
        "timeout: 1000000",
        "timeout: 0.000000",
    ]) {
        assert_eq!(b["state"], REJECTED, "{b}");
        assert!(b["text"].as_str().unwrap().starts_with(why), "{why}: {b}");
    }

    // the calibration: feedback for both wheels through its phases, then success with the true gains
    let feedback = events(&lines, "feedback");
    for (phase, motor) in [
        ("deadband", "left"),
        ("sweep", "left"),
        ("deadband", "right"),
        ("sweep", "right"),
        ("fit", ""),
        ("writing", ""),
    ] {
        assert!(
            feedback
                .iter()
                .any(|f| f["phase"] == phase && f["motor"] == motor),
            "no {phase} feedback for {motor}: {all}"
        );
    }
    let result = &events(&lines, "result")[0];
    let r = &result["result"];
    assert_eq!(result["state"], SUCCEEDED, "{all}");
    assert_eq!(r["success"], true, "{all}");
    assert_eq!(result["text"], r["message"], "{result}");
    let (lq0, rq0) = (
        r["left_q0"].as_f64().unwrap(),
        r["right_q0"].as_f64().unwrap(),
    );
    // the fitted wheels are the simulated ones (how close the fit comes is tests/ros2/calibration.rs' and the layer's
    // concern; on a loaded machine the simulator's line crossings at 450 units were seen up to 19 % slow)
    for (q0, gain) in [(lq0, GAINS[0]), (rq0, GAINS[1])] {
        assert!(
            (q0 / (gain * UNIT_SPEED) - 1.0).abs() < 0.25,
            "q0 {q0} vs true {}: {all}",
            gain * UNIT_SPEED
        );
    }
    // the file: the robot's (node 1) entry, as ROS-Thymio's driver reads it
    assert_eq!(r["calibration_file"], cal_file.display().to_string());
    let text = std::fs::read_to_string(&cal_file).unwrap();
    let file: Value = yaml_serde::from_str(&text).unwrap();
    let left = &file["1"]["motor"]["left"]["parameters"];
    assert_eq!(left[0].as_f64(), Some(lq0), "{text}");

    // a cancel preempts the run and gives the wheels back to cmd_vel
    let c = &events(&lines, "cancel")[0];
    assert_eq!(c["state"], PREEMPTED, "{c}");
    assert_eq!(c["message"], "cancelled", "{c}");
    assert!(
        c["after_cancel_distance"].as_f64().unwrap() > 0.02,
        "the wheels are ROS's again after the cancel: {c}\nthe driver's output:\n{log}"
    );

    // the driver's lines on /rosout: a rejection's reason, at WARN (4), from the driver's node
    let rosout = &events(&lines, "rosout")[0]["lines"];
    let rejected = rosout
        .as_array()
        .unwrap()
        .iter()
        .find(|l| {
            l[2].as_str()
                .unwrap()
                .contains("goal rejected: motor_speeds: 0 is outside")
        })
        .unwrap_or_else(|| panic!("no rejection on /rosout: {rosout}"));
    assert_eq!(rejected[0], 4, "{rejected}");
    assert_eq!(rejected[1], format!("/{ns}/asebaros"), "{rejected}");
    driver.signal(nix::sys::signal::Signal::SIGINT);
    let status = driver.wait_exit(Duration::from_secs(15));
    assert!(status.success(), "thymio-rt ended with {status}");
}
