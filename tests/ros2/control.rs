//! Issue 17 end to end through rclpy, on the embedded simulated Thymio: the simulator's ground
//! truth (`sim/ground_truth`), the communication switch (`switch_controller`,
//! `controller_owner`), the RT controllers served from ROS (`~/controllers/<name>/…` and their
//! `controllers.<name>.<param>` parameters) and the joint-space interface (`~/joint_states`,
//! `~/joint_command`). Every position check reads the simulated robot's true pose.
#![cfg(feature = "ros2")]

use crate::common;
use crate::rclpy_peer;
use crate::ros_driver;

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

/// `switch_controller` of robot `ns` to `owner`: `(success, message)`.
fn switch(peer: &mut RclpyPeer, ns: &str, owner: &str, deadline: Instant) -> (bool, String) {
    let r = peer
        .call(
            &format!("/{ns}/switch_controller"),
            "thymio_rt_msgs/srv/SwitchController",
            json!({ "owner": owner }),
            deadline,
        )
        .unwrap();
    (
        r["success"].as_bool().unwrap(),
        r["message"].as_str().unwrap().to_owned(),
    )
}

/// Waits for a `/diagnostics` message in which some status has `key` with a value above 0.
fn diagnostics_count(peer: &mut RclpyPeer, key: &str, deadline: Instant) -> Value {
    peer.message("/diagnostics", deadline, |m| {
        m["status"].as_array().unwrap().iter().any(|s| {
            s["values"].as_array().unwrap().iter().any(|kv| {
                kv["key"] == key
                    && kv["value"]
                        .as_str()
                        .and_then(|v| v.parse::<u64>().ok())
                        .is_some_and(|n| n > 0)
            })
        })
    })
    .unwrap_or_else(|e| panic!("no {key} > 0 in /diagnostics: {e}"))
}

#[test]
fn the_switch_gives_the_wheels_to_one_owner_at_a_time() {
    let deadline = Instant::now() + TEST_TIMEOUT;
    let ns = format!("sw{}", std::process::id());
    let dir = tempfile::tempdir().unwrap();
    let driver = driver(
        dir.path(),
        &ns,
        "width: 2.0\nheight: 2.0\nrobots:\n  - [0.5, 1.0, 0.0]\n",
        &[],
    );
    let mut peer = RclpyPeer::serve(test_domain_id(), deadline).unwrap();
    peer.subscribe(
        &format!("/{ns}/sim/ground_truth"),
        ODOM,
        "volatile",
        deadline,
    )
    .unwrap();
    peer.subscribe(
        "/diagnostics",
        "diagnostic_msgs/msg/DiagnosticArray",
        "volatile",
        deadline,
    )
    .unwrap();
    // an unknown name is refused with the valid ones
    let (ok, why) = switch(&mut peer, &ns, "wheels_please", deadline);
    assert!(!ok, "{why}");
    assert!(
        why.contains("ros, joint, line_follower, go_to_pose"),
        "{why}"
    );
    // go_to_pose owns the wheels (no goal: it holds them still); cmd_vel is dropped, counted
    let (ok, why) = switch(&mut peer, &ns, "go_to_pose", deadline);
    assert!(ok, "{why}");
    let x0 = pose(&truth(&mut peer, &ns, deadline)).0;
    drive(&mut peer, &ns, 0.1, Duration::from_secs(1), deadline);
    let x1 = pose(&truth(&mut peer, &ns, deadline)).0;
    assert!(
        (x1 - x0).abs() < 0.005,
        "cmd_vel moved the robot {x0} → {x1}"
    );
    diagnostics_count(&mut peer, "Non-owner commands dropped", deadline);
    // a late subscriber to the latched owner topic learns who owns the wheels
    let owner_topic = format!("/{ns}/controller_owner");
    peer.subscribe(
        &owner_topic,
        "std_msgs/msg/String",
        "transient_local",
        deadline,
    )
    .unwrap();
    let owner = peer.message(&owner_topic, deadline, |_| true).unwrap();
    assert_eq!(owner["data"], "go_to_pose");
    // back to ros: cmd_vel drives again
    let (ok, why) = switch(&mut peer, &ns, "ros", deadline);
    assert!(ok, "{why}");
    peer.message(&owner_topic, deadline, |m| m["data"] == "ros")
        .unwrap();
    drive(&mut peer, &ns, 0.1, Duration::from_secs(1), deadline);
    let x2 = pose(&truth(&mut peer, &ns, deadline)).0;
    assert!(x2 > x1 + 0.05, "cmd_vel under ros moved it {x1} → {x2}");
    stop(driver);
}

const SET: &str = "rcl_interfaces/srv/SetParameters";

/// `set_parameters` of one double on robot `ns`'s driver node: `(successful, reason)`.
fn set_param(
    peer: &mut RclpyPeer,
    ns: &str,
    name: &str,
    v: f64,
    deadline: Instant,
) -> (bool, String) {
    let r = peer
        .call(
            &format!("/{ns}/thymio_driver/set_parameters"),
            SET,
            json!({"parameters": [{"name": name, "value": {"type": 3, "double_value": v}}]}),
            deadline,
        )
        .unwrap();
    let r = &r["results"][0];
    (
        r["successful"].as_bool().unwrap(),
        r["reason"].as_str().unwrap_or_default().to_owned(),
    )
}

#[test]
fn go_to_pose_reaches_its_goal_at_the_speed_its_parameter_sets() {
    let deadline = Instant::now() + TEST_TIMEOUT;
    let ns = format!("gp{}", std::process::id());
    let dir = tempfile::tempdir().unwrap();
    let driver = driver(
        dir.path(),
        &ns,
        "width: 2.0\nheight: 2.0\nrobots:\n  - [0.5, 1.0, 0.0]\n",
        &[],
    );
    let mut peer = RclpyPeer::serve(test_domain_id(), deadline).unwrap();
    let gt = format!("/{ns}/sim/ground_truth");
    peer.subscribe(&gt, ODOM, "volatile", deadline).unwrap();
    // refused outside its range, with the reason; accepted inside, and shown
    let name = "controllers.go_to_pose.max_linear";
    let (ok, why) = set_param(&mut peer, &ns, name, 1.0, deadline);
    assert!(!ok && why.contains("outside"), "{why}");
    let (ok, why) = set_param(&mut peer, &ns, name, 0.05, deadline);
    assert!(ok, "{why}");
    let got = peer
        .call(
            &format!("/{ns}/thymio_driver/get_parameters"),
            "rcl_interfaces/srv/GetParameters",
            json!({ "names": [name] }),
            deadline,
        )
        .unwrap();
    assert_eq!(got["values"][0]["double_value"], 0.05, "{got}");
    let described = peer
        .call(
            &format!("/{ns}/thymio_driver/describe_parameters"),
            "rcl_interfaces/srv/DescribeParameters",
            json!({ "names": [name] }),
            deadline,
        )
        .unwrap();
    let range = &described["descriptors"][0]["floating_point_range"][0];
    assert_eq!(
        (&range["from_value"], &range["to_value"]),
        (&json!(0.0), &json!(0.3))
    );
    let (ok, why) = switch(&mut peer, &ns, "go_to_pose", deadline);
    assert!(ok, "{why}");
    let reached = format!("/{ns}/thymio_driver/controllers/go_to_pose/reached");
    peer.subscribe(&reached, "std_msgs/msg/Bool", "volatile", deadline)
        .unwrap();
    // the goal, in the odometry frame (the start pose): 25 cm ahead
    let r = peer
        .call(
            &format!("/{ns}/thymio_driver/controllers/go_to_pose/set_goal"),
            "thymio_rt_msgs/srv/SetPose2D",
            json!({"pose": {"x": 0.25, "y": 0.0, "theta": 0.0}}),
            deadline,
        )
        .unwrap();
    assert_eq!(r["success"], true, "{r}");
    // on the way, never faster than max_linear (the default, 0.1 m/s, would be)
    let mut fastest = 0.0f64;
    while !peer.received(&reached, |m| m["data"] == true) {
        assert!(Instant::now() < deadline, "goal not reached in time");
        let m = peer.message(&gt, deadline, |_| true).unwrap();
        fastest = fastest.max(forward(&m));
    }
    assert!(
        (0.02..0.06).contains(&fastest),
        "fastest true speed {fastest} m/s with max_linear 0.05"
    );
    let (x, y, _) = pose(&truth(&mut peer, &ns, deadline));
    let miss = (x - 0.75).hypot(y - 1.0);
    assert!(miss < 0.03, "stopped at {x}, {y}: {miss} m from the goal");
    // a goal by topic: 15 cm to the left of the first one
    peer.forget(&reached);
    peer.publish_until_heard(
        &format!("/{ns}/thymio_driver/controllers/go_to_pose/goal"),
        "geometry_msgs/msg/Pose2D",
        json!({"x": 0.25, "y": 0.15, "theta": 0.0}),
        1,
        deadline,
        |peer, try_end| {
            peer.message(&reached, try_end, |m| m["data"] == false)
                .is_ok()
        },
    )
    .unwrap();
    peer.message(&reached, deadline, |m| m["data"] == true)
        .unwrap();
    let (x, y, _) = pose(&truth(&mut peer, &ns, deadline));
    let miss = (x - 0.75).hypot(y - 1.15);
    assert!(
        miss < 0.03,
        "stopped at {x}, {y}: {miss} m from the second goal"
    );
    stop(driver);
}

/// Distance of `(x, y)` from the line track's centre line (config/arena/line.yaml: the points
/// at 0.2 m from the square [0.6, 1.4]²).
fn off_track(x: f64, y: f64) -> f64 {
    let dx = (0.6 - x).max(x - 1.4).max(0.0);
    let dy = (0.6 - y).max(y - 1.4).max(0.0);
    (dx.hypot(dy) - 0.2).abs()
}

#[test]
fn the_line_follower_laps_the_line_track() {
    let deadline = Instant::now() + TEST_TIMEOUT;
    let ns = format!("lf{}", std::process::id());
    let dir = tempfile::tempdir().unwrap();
    let arena = common::root().join("config/arena/line.yaml");
    // 4.46 m around at 0.1 m/s (set at start on the driver node): 45 s
    let driver = driver(
        dir.path(),
        &ns,
        arena.to_str().unwrap(),
        &["controllers.line_follower.cruise_speed:=0.1"],
    );
    let mut peer = RclpyPeer::serve(test_domain_id(), deadline).unwrap();
    let gt = format!("/{ns}/sim/ground_truth");
    peer.subscribe(&gt, ODOM, "volatile", deadline).unwrap();
    let (x0, y0, _) = pose(&truth(&mut peer, &ns, deadline));
    let (ok, why) = switch(&mut peer, &ns, "line_follower", deadline);
    assert!(ok, "{why}");
    // the angle travelled around the track's centre (1, 1): a full turn, then back at the start
    let angle = |x: f64, y: f64| (y - 1.0).atan2(x - 1.0);
    let (mut travelled, mut last, mut worst) = (0.0, angle(x0, y0), 0.0f64);
    loop {
        let m = peer
            .message(&gt, deadline, |_| true)
            .unwrap_or_else(|e| panic!("went {travelled:.2} rad around the track: {e}"));
        assert!(
            m["twist"]["twist"]["linear"]["x"].as_f64().unwrap() < 0.12,
            "faster than cruise_speed: {m}"
        );
        let (x, y, _) = pose(&m);
        let d = angle(x, y) - last;
        travelled += (d + std::f64::consts::PI).rem_euclid(2.0 * std::f64::consts::PI)
            - std::f64::consts::PI;
        last = angle(x, y);
        worst = worst.max(off_track(x, y));
        if travelled >= 2.0 * std::f64::consts::PI && (x - x0).hypot(y - y0) < 0.05 {
            break;
        }
    }
    // on the line all along: its sensors are 2.3 cm apart on a 5 cm line (without steering,
    // the bounded search drags the robot round the track, off the line at every corner)
    assert!(worst < 0.025, "left the line by {worst:.3} m");
    stop(driver);
}

#[test]
fn joint_commands_move_the_wheels_and_joint_states_show_them() {
    let deadline = Instant::now() + TEST_TIMEOUT;
    let ns = format!("js{}", std::process::id());
    let dir = tempfile::tempdir().unwrap();
    let driver = driver(
        dir.path(),
        &ns,
        "width: 2.0\nheight: 2.0\nrobots:\n  - [0.5, 1.0, 0.0]\n",
        &[],
    );
    let mut peer = RclpyPeer::serve(test_domain_id(), deadline).unwrap();
    let gt = format!("/{ns}/sim/ground_truth");
    peer.subscribe(&gt, ODOM, "volatile", deadline).unwrap();
    let js = format!("/{ns}/thymio_driver/joint_states");
    peer.subscribe(&js, "thymio_rt_msgs/msg/JointState", "volatile", deadline)
        .unwrap();
    peer.subscribe(
        "/diagnostics",
        "diagnostic_msgs/msg/DiagnosticArray",
        "volatile",
        deadline,
    )
    .unwrap();
    let (ok, why) = switch(&mut peer, &ns, "joint", deadline);
    assert!(ok, "{why}");
    let x0 = pose(&truth(&mut peer, &ns, deadline)).0;
    let command = |peer: &mut RclpyPeer, msg: Value| {
        peer.publish(
            &format!("/{ns}/thymio_driver/joint_command"),
            "sensor_msgs/msg/JointState",
            msg,
            1,
            deadline,
        )
        .unwrap()
    };
    // named in the other order: each velocity goes to the wheel it names (left 2, right 4 rad/s;
    // 1 rad/s ≈ 2.2 cm/s)
    let t0 = Instant::now();
    while t0.elapsed() < Duration::from_millis(1500) {
        command(
            &mut peer,
            json!({"name": ["right_wheel_joint", "left_wheel_joint"], "velocity": [4.0, 2.0]}),
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let m = peer
        .message(&js, deadline, |m| {
            m["velocity"][0].as_f64().unwrap() > 1.5 && m["velocity"][1].as_f64().unwrap() > 3.5
        })
        .unwrap();
    assert_eq!(m["owner"], "joint", "{m}");
    assert_eq!(
        m["name"],
        json!([
            format!("{ns}/left_wheel_joint"),
            format!("{ns}/right_wheel_joint")
        ])
    );
    let reference = [0, 1].map(|w| m["velocity_reference"][w].as_f64().unwrap());
    assert!(
        (1.7..2.3).contains(&reference[0]) && (3.5..4.5).contains(&reference[1]),
        "velocity references {reference:?}: {m}"
    );
    let measured = m["velocity"][0].as_f64().unwrap();
    assert!(measured < 2.5, "left wheel at {measured} rad/s: {m}");
    let x1 = pose(&truth(&mut peer, &ns, deadline)).0;
    assert!(x1 > x0 + 0.05, "joint commands moved the robot {x0} → {x1}");
    // by position, left back and right forward: the robot turns counter-clockwise in place
    let t0 = Instant::now();
    let mut turning = false;
    while t0.elapsed() < Duration::from_secs(3) && !turning {
        command(&mut peer, json!({"velocity": [-3.0, 3.0]}));
        let m = truth(&mut peer, &ns, deadline);
        turning = m["twist"]["twist"]["angular"]["z"].as_f64().unwrap() > 1.0;
    }
    assert!(turning, "the wheels did not turn the robot");
    // bad input is dropped and counted
    command(
        &mut peer,
        json!({"name": ["caster_joint"], "velocity": [1.0]}),
    );
    diagnostics_count(&mut peer, "Bad joint commands dropped", deadline);
    stop(driver);
}

/// Seconds since the epoch of a message's header stamp (the simulator stamps with system time).
fn stamp_s(m: &Value) -> f64 {
    let s = &m["header"]["stamp"];
    s["sec"].as_f64().unwrap() + s["nanosec"].as_f64().unwrap() * 1e-9
}

/// System time now, in seconds since the epoch.
fn now_s() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
}

/// `send` of the command that keeps robot `ns` at 0.15 m/s, every 100 ms until the simulator's true speed
/// is there (and at least 1 s); then ONE zero command (`send(peer, false)`) and silence: the true speeds
/// `(seconds after the zero command, m/s)` until the robot stands (under 5 mm/s), 4 s at most.
fn zero_then_silence(
    peer: &mut RclpyPeer,
    ns: &str,
    deadline: Instant,
    send: impl Fn(&mut RclpyPeer, bool),
) -> Vec<(f64, f64)> {
    let gt = format!("/{ns}/sim/ground_truth");
    let t0 = Instant::now();
    loop {
        send(peer, true);
        let v = forward(&truth(peer, ns, deadline));
        if t0.elapsed() > Duration::from_secs(1) && v > 0.135 {
            break;
        }
        assert!(Instant::now() < deadline, "never at 0.15 m/s");
        std::thread::sleep(Duration::from_millis(100));
    }
    peer.forget(&gt);
    let t_zero = now_s();
    send(peer, false);
    let end = deadline.min(Instant::now() + Duration::from_secs(4));
    let mut out = Vec::new();
    while let Ok(m) = peer.message(&gt, end, |_| true) {
        let (t, v) = (stamp_s(&m) - t_zero, forward(&m));
        out.push((t, v));
        if t >= 0.0 && v.abs() < 0.005 {
            break;
        }
    }
    out
}

/// The true speeds after a zero command show a robot still decelerating half a second later (the limit in
/// effect: 0.125 m/s expected), then stopped by the watchdog (1 s in these tests, so that a loaded machine's
/// pause in the command stream does not trip it early) within a margin, not after the 3 s the deceleration
/// would take (at 1.8 s it would still be at 0.06 m/s).
fn stopped_by_the_watchdog(samples: &[(f64, f64)], owner: &str) {
    let later = samples.iter().find(|(t, _)| *t >= 0.5);
    assert!(
        later.is_some_and(|(_, v)| *v > 0.08),
        "{owner}: not decelerating: {samples:?}"
    );
    let stopped = samples.iter().find(|(t, v)| *t >= 0.0 && v.abs() < 0.005);
    assert!(
        stopped.is_some_and(|(t, _)| *t < 1.8),
        "{owner}: the robot was not stopped 1.8 s after the zero command: {samples:?}"
    );
}

/// Issue 42, unsafe motion on ROS 2: the motion limits' rates publish their range and refuse values below it
/// (a deceleration of 0 or 1e-9 let the robot coast on at 0.1 m/s, an acceleration of 5e-324 kept it still);
/// with the smallest deceleration allowed (0.05 m/s²: 3 s from 0.15 m/s), a zero command then silence is
/// stopped by the watchdog at its deadline, for `ros` (cmd_vel) and `joint` (joint commands). The watchdog
/// used to arm on a non-zero command only, whatever the limiter still commanded.
#[test]
fn the_watchdog_stops_a_decelerating_robot_and_too_small_limits_are_refused() {
    let deadline = Instant::now() + TEST_TIMEOUT;
    let ns = format!("ul{}", std::process::id());
    let dir = tempfile::tempdir().unwrap();
    let driver = driver(
        dir.path(),
        &ns,
        "width: 4.0\nheight: 2.0\nrobots:\n  - [0.3, 1.0, 0.0]\n",
        &["cmd_vel_timeout:=1.0"],
    );
    let mut peer = RclpyPeer::serve(test_domain_id(), deadline).unwrap();
    let gt = format!("/{ns}/sim/ground_truth");
    peer.subscribe(&gt, ODOM, "volatile", deadline).unwrap();
    let described = peer
        .call(
            &format!("/{ns}/thymio_driver/describe_parameters"),
            "rcl_interfaces/srv/DescribeParameters",
            json!({ "names": ["linear.x.max_deceleration", "angular.z.max_acceleration"] }),
            deadline,
        )
        .unwrap();
    let range = |k: usize| {
        let r = &described["descriptors"][k]["floating_point_range"][0];
        (r["from_value"].as_f64(), r["to_value"].as_f64())
    };
    assert_eq!(range(0), (Some(0.05), Some(1000.0)), "{described}");
    assert_eq!(range(1), (Some(1.0), Some(20000.0)), "{described}");
    for (name, v, why) in [
        ("linear.x.max_deceleration", 0.0, "[0.05, 1000] m/s²"),
        ("linear.x.max_deceleration", 1e-9, "[0.05, 1000] m/s²"),
        ("linear.x.max_acceleration", 5e-324, "[0.05, 1000] m/s²"),
        ("angular.z.max_deceleration", 0.0, "[1, 20000] rad/s²"),
    ] {
        let (ok, reason) = set_param(&mut peer, &ns, name, v, deadline);
        assert!(
            !ok && reason.contains(name) && reason.contains(why),
            "{name} {v}: {reason}"
        );
    }
    let (ok, why) = set_param(&mut peer, &ns, "linear.x.max_deceleration", 0.05, deadline);
    assert!(ok, "{why}");

    let cmd_vel = format!("/{ns}/cmd_vel");
    let samples = zero_then_silence(&mut peer, &ns, deadline, |peer, go| {
        let x = if go { 0.15 } else { 0.0 };
        peer.publish(&cmd_vel, TWIST, json!({"linear": {"x": x}}), 1, deadline)
            .unwrap()
    });
    stopped_by_the_watchdog(&samples, "ros");

    let (ok, why) = switch(&mut peer, &ns, "joint", deadline);
    assert!(ok, "{why}");
    let joint = format!("/{ns}/thymio_driver/joint_command");
    let samples = zero_then_silence(&mut peer, &ns, deadline, |peer, go| {
        // 0.15 m/s on 0.022 m wheels
        let w = if go { 0.15 / 0.022 } else { 0.0 };
        peer.publish(
            &joint,
            "sensor_msgs/msg/JointState",
            json!({"velocity": [w, w]}),
            1,
            deadline,
        )
        .unwrap()
    });
    stopped_by_the_watchdog(&samples, "joint");
    stop(driver);
}
