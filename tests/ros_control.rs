//! Issue 17 end to end through rclpy, on the embedded simulated Thymio: the simulator's ground
//! truth (`sim/ground_truth`), the communication switch (`switch_controller`,
//! `controller_owner`), the RT controllers served from ROS (`~/controllers/<name>/…` and their
//! `controllers.<name>.<param>` parameters) and the joint-space interface (`~/joint_states`,
//! `~/joint_command`). Every position check reads the simulated robot's true pose.
#![cfg(feature = "ros2")]

mod common;
#[path = "ros/rclpy_peer.rs"]
mod rclpy_peer;
#[path = "ros/driver.rs"]
mod ros_driver;

use common::Proc;
use rclpy_peer::{test_domain_id, RclpyPeer};
use ros_driver::{driver_script_yaml, ros_driver, stop};
use serde_json::{json, Value};
use std::path::Path;
use std::time::{Duration, Instant};

const TEST_TIMEOUT: Duration = Duration::from_secs(120);
const ODOM: &str = "nav_msgs/msg/Odometry";
const TWIST: &str = "geometry_msgs/msg/Twist";

/// `thymio-rt run` on the embedded simulator with the driver script, namespace `/<ns>`, in
/// `arena` (YAML text, or a path when it names a file), with ROS parameters `params`.
fn driver(dir: &Path, ns: &str, arena: &str, params: &[&str]) -> Proc {
    let arena_file = if Path::new(arena).is_file() {
        Path::new(arena).to_owned()
    } else {
        let f = dir.join(format!("{ns}-arena.yaml"));
        std::fs::write(&f, arena).unwrap();
        f
    };
    let yaml = format!(
        "{}sim: {{arena: {}}}\n",
        driver_script_yaml(),
        arena_file.display()
    );
    ros_driver(dir, ns, &yaml, &["--switch-port", "0"], params)
}

/// `(x, y, theta)` of an Odometry message.
fn pose(m: &Value) -> (f64, f64, f64) {
    let p = &m["pose"]["pose"];
    let (z, w) = (
        p["orientation"]["z"].as_f64().unwrap(),
        p["orientation"]["w"].as_f64().unwrap(),
    );
    (
        p["position"]["x"].as_f64().unwrap(),
        p["position"]["y"].as_f64().unwrap(),
        2.0 * z.atan2(w),
    )
}

/// The forward speed of an Odometry message.
fn forward(m: &Value) -> f64 {
    m["twist"]["twist"]["linear"]["x"].as_f64().unwrap()
}

/// The newest ground-truth message (waits for one newer than what was read).
fn truth(peer: &mut RclpyPeer, ns: &str, deadline: Instant) -> Value {
    let topic = format!("/{ns}/sim/ground_truth");
    peer.forget(&topic);
    peer.message(&topic, deadline, |_| true).unwrap()
}

/// Publishes `cmd_vel` every 100 ms for `for_` (the watchdog needs a stream).
fn drive(peer: &mut RclpyPeer, ns: &str, linear: f64, for_: Duration, deadline: Instant) {
    let t0 = Instant::now();
    while t0.elapsed() < for_ {
        peer.publish(
            &format!("/{ns}/cmd_vel"),
            TWIST,
            json!({"linear": {"x": linear}}),
            1,
            deadline,
        )
        .unwrap();
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn ground_truth_is_the_simulated_robots_true_pose_and_velocity() {
    let deadline = Instant::now() + TEST_TIMEOUT;
    let ns = format!("gt{}", std::process::id());
    let dir = tempfile::tempdir().unwrap();
    let driver = driver(
        dir.path(),
        &ns,
        "width: 2.0\nheight: 2.0\nrobots:\n  - [0.5, 1.0, 0.0]\n",
        &[],
    );
    let mut peer = RclpyPeer::serve(test_domain_id(), deadline).unwrap();
    let topic = format!("/{ns}/sim/ground_truth");
    peer.subscribe(&topic, ODOM, "volatile", deadline).unwrap();
    let first = truth(&mut peer, &ns, deadline);
    assert_eq!(first["header"]["frame_id"], "world", "{first}");
    assert_eq!(
        first["child_frame_id"],
        format!("{ns}/base_link"),
        "{first}"
    );
    let (x, y, theta) = pose(&first);
    assert!(
        (x - 0.5).abs() < 1e-3 && (y - 1.0).abs() < 1e-3 && theta.abs() < 1e-3,
        "the arena's start pose, got {first}"
    );
    assert!(forward(&first).abs() < 1e-6, "at rest: {first}");
    // 0.1 m/s for 1.5 s: the true pose moves along +x and the true speed is the command's
    drive(&mut peer, &ns, 0.1, Duration::from_millis(1500), deadline);
    drive(&mut peer, &ns, 0.1, Duration::from_millis(1), deadline);
    peer.forget(&topic);
    // within the cmd_vel watchdog (0.5 s) after the last command: still at speed
    let moving = peer
        .message(&topic, deadline, |m| forward(m) > 0.05)
        .unwrap();
    let v = forward(&moving);
    assert!(
        (0.07..0.13).contains(&v),
        "true forward speed {v}: {moving}"
    );
    let (x1, y1, _) = pose(&moving);
    assert!(x1 > 0.6 && (y1 - 1.0).abs() < 0.02, "moved to {x1}, {y1}");
    stop(driver);
}
