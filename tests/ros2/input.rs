//! End to end through ROS (issue 14, items 5 and 6): `thymio-rt run` with the ROS 2 bridge on
//! the embedded simulated Thymio running the driver script, rclpy in another process.
//! `aseba/load_script` of a device or a FIFO is refused with the reason on `/rosout` while the
//! driver keeps answering and publishing; a raw `set_speed` of 32767 on `aseba/events/set_speed`
//! and a raw `motor.left.target` write reach the robot capped at ±500 and are stopped by the
//! cmd_vel watchdog when they stop coming (the robot's variables are read back through
//! `aseba/get_variable`, i.e. from the robot).
#![cfg(feature = "ros2")]

use crate::common;
use crate::rclpy_peer;
use crate::ros_driver;

use common::Proc;
use rclpy_peer::RclpyPeer;
use ros_driver::{
    driver_script_yaml, expect_log, get_variable, ros_driver, rosout_peer, stop, LOG_ERROR,
    LOG_WARN,
};
use serde_json::{json, Value};
use std::path::Path;
use std::time::{Duration, Instant};

const TEST_TIMEOUT: Duration = Duration::from_secs(150);

/// `thymio-rt run` on the embedded simulator with the driver script, namespace `/<ns>`.
fn driver(dir: &Path, ns: &str) -> Proc {
    ros_driver(dir, ns, &driver_script_yaml(), &["--switch-port", "0"], &[])
}

/// The peer, subscribed to `/rosout` and the robot's odometry, once odometry flows.
fn peer(ns: &str, deadline: Instant) -> RclpyPeer {
    let mut peer = rosout_peer(deadline);
    peer.subscribe(
        &format!("/{ns}/odom"),
        "nav_msgs/msg/Odometry",
        "volatile",
        deadline,
    )
    .unwrap();
    peer.message(&format!("/{ns}/odom"), deadline, |_| true)
        .unwrap();
    peer
}

/// The driver answers `get_variable` (with the robot's value) within `bound` and odometry keeps
/// coming. An empty answer (the robot's reply lost or late on a loaded machine) is retried
/// within the same bound.
fn assert_responsive(peer: &mut RclpyPeer, ns: &str, bound: Duration) {
    let t0 = Instant::now();
    loop {
        let v = get_variable(peer, ns, "motor.left.target", t0 + bound);
        if v.as_array().map(Vec::len) == Some(1) {
            break;
        }
        assert!(
            t0.elapsed() < bound,
            "get_variable gave {v} for {:?}: {}",
            t0.elapsed(),
            peer.unconsumed()
        );
    }
    assert!(t0.elapsed() < bound, "get_variable took {:?}", t0.elapsed());
    let odom = format!("/{ns}/odom");
    peer.forget(&odom);
    peer.message(&odom, Instant::now() + bound, |_| true)
        .unwrap_or_else(|e| panic!("odometry stopped: {e}"));
}

fn load_script(peer: &mut RclpyPeer, ns: &str, path: &str, bound: Duration) {
    let t0 = Instant::now();
    peer.call(
        &format!("/{ns}/aseba/load_script"),
        "asebaros_msgs/srv/LoadScript",
        json!({ "file_name": path }),
        t0 + bound,
    )
    .unwrap_or_else(|e| panic!("load_script {path} not answered: {e}"));
}

/// `/dev/zero` and a FIFO without writer: refused at once with the reason, and the driver
/// stays responsive (before: memory grew without bound / the NRT loop blocked for ever).
#[test]
fn load_script_of_a_device_or_a_fifo_is_refused_and_the_driver_stays_responsive() {
    let deadline = Instant::now() + TEST_TIMEOUT;
    let ns = "input_load";
    let dir = tempfile::tempdir().unwrap();
    let driver = driver(dir.path(), ns);
    let mut peer = peer(ns, deadline);
    let bound = Duration::from_secs(5);

    load_script(&mut peer, ns, "/dev/zero", bound);
    expect_log(
        &mut peer,
        ns,
        LOG_ERROR,
        "cannot read script /dev/zero: not a regular file (a character device)",
        deadline,
    );
    assert_responsive(&mut peer, ns, bound);

    let fifo = dir.path().join("script.fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let fifo = fifo.to_str().unwrap();
    load_script(&mut peer, ns, fifo, bound);
    expect_log(
        &mut peer,
        ns,
        LOG_ERROR,
        &format!("cannot read script {fifo}: not a regular file (a FIFO)"),
        deadline,
    );
    assert_responsive(&mut peer, ns, bound);

    load_script(&mut peer, ns, "/nonexistent/x.aesl", bound);
    expect_log(&mut peer, ns, LOG_ERROR, "x.aesl: not found", deadline);
    drop(peer);
    stop(driver);
}

/// Repeats `send` until `var` reads `want` on the robot.
fn drive_until(
    peer: &mut RclpyPeer,
    ns: &str,
    var: &str,
    want: i64,
    deadline: Instant,
    mut send: impl FnMut(&mut RclpyPeer),
) {
    let mut last = Value::Null;
    while Instant::now() < deadline {
        send(peer);
        last = get_variable(peer, ns, var, deadline);
        if last[0] == want {
            return;
        }
    }
    panic!("{var} = {last}, never {want}");
}

/// Waits (no command sent) until `var` reads 0: the watchdog stopped the robot.
fn stopped_within(peer: &mut RclpyPeer, ns: &str, var: &str, bound: Duration) {
    let t0 = Instant::now();
    loop {
        let v = get_variable(peer, ns, var, t0 + bound);
        if v[0] == 0 {
            return;
        }
        assert!(t0.elapsed() < bound, "{var} = {v} after {:?}", t0.elapsed());
    }
}

#[test]
fn raw_set_speed_and_motor_writes_are_capped_and_watched() {
    let deadline = Instant::now() + TEST_TIMEOUT;
    let ns = "input_raw";
    let dir = tempfile::tempdir().unwrap();
    let driver = driver(dir.path(), ns);
    let mut peer = peer(ns, deadline);
    let topic = format!("/{ns}/aseba/events/set_speed");
    let set_speed = |data: [i64; 2]| {
        move |p: &mut RclpyPeer| {
            p.publish(
                &topic,
                "asebaros_msgs/msg/Event",
                json!({"source": 0, "data": data}),
                1,
                deadline,
            )
            .unwrap()
        }
    };
    drive_until(
        &mut peer,
        ns,
        "motor.left.target",
        500,
        deadline,
        set_speed([32767, 32767]),
    );
    assert_eq!(
        get_variable(&mut peer, ns, "motor.right.target", deadline)[0],
        500
    );
    expect_log(
        &mut peer,
        ns,
        LOG_WARN,
        "beyond the driver's limit",
        deadline,
    );
    // watchdog 0.5 s: stopped well within 3 s once the events stop
    stopped_within(&mut peer, ns, "motor.left.target", Duration::from_secs(3));
    stopped_within(&mut peer, ns, "motor.right.target", Duration::from_secs(3));

    // the same for aseba/set_variable of a motor target
    let set_left = |p: &mut RclpyPeer| {
        p.call(
            &format!("/{ns}/aseba/set_variable"),
            "asebaros_msgs/srv/SetVariable",
            json!({"variable": "motor.left.target", "data": [32767]}),
            deadline,
        )
        .unwrap();
    };
    drive_until(&mut peer, ns, "motor.left.target", 500, deadline, set_left);
    stopped_within(&mut peer, ns, "motor.left.target", Duration::from_secs(3));
    drop(peer);
    stop(driver);
}
