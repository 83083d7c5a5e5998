//! The flight recorder end to end (issue 28, item 4, recording half), with real peers: the driver under ROS 2 with
//! `--record`, on a simulated Thymio served by a separate `thymio-rt sim` process, an rclpy client
//! (`tests/ros/recorder_client.py`) that drives it in closed loop — `cmd_vel`, an owner switch to the `go_to_pose`
//! RT controller and back, a link loss (the simulator killed and restarted) — and reports every odometry message it
//! got, then the `mcap` / `mcap-ros2-support` Python packages as the independent reader of the file
//! (`tests/ros/read_recording.py`). And a full disk (`/dev/full`): the recording stops, the driver does not.
#![cfg(feature = "ros2")]

use crate::common;
use crate::rclpy_peer;
use crate::ros_driver;
use common::events;

use common::{free_port, thymio_rt, Proc};
use rclpy_peer::{project_root, test_domain_id};
use ros_driver::{driver_script_yaml, ros_driver, stop};
use serde_json::Value;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// `thymio-rt sim` with one robot on 127.0.0.1:`port`; waits until it serves.
fn sim(port: u16) -> Proc {
    let mut c = thymio_rt();
    c.args([
        "sim",
        "--robots",
        "1",
        "--listen",
        &format!("tcp:127.0.0.1:{port}"),
        "--duration",
        "120",
    ]);
    let mut p = Proc::spawn("thymio-rt sim", c);
    p.wait_line(Duration::from_secs(10), |l| {
        l.contains("simulation running")
    });
    p
}

/// The recording's content as `tests/ros/read_recording.py` reads it.
fn read_recording(file: &Path, odom_topic: &str) -> Value {
    let root = project_root();
    let out = Command::new(root.join(".venv-ros/bin/python"))
        .arg(root.join("tests/ros/read_recording.py"))
        .arg(file)
        .args(["--odom", odom_topic])
        .env_remove("_ROS_WHEELS_BOOTSTRAP_COMPLETE")
        .output()
        .expect("the reader starts");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "read_recording.py {} failed ({}): {stderr}",
        file.display(),
        out.status
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("reader output: {e}: {stderr}"))
}

/// An odometry message's values for comparison: stamp (ns), pose and twist as f64 from their bits.
fn odom_values(m: &Value) -> (i128, Vec<f64>, Vec<f64>) {
    let floats = |k: &str| -> Vec<f64> {
        m[k].as_array()
            .unwrap_or_else(|| panic!("no {k} in {m}"))
            .iter()
            .map(|b| f64::from_bits(b.as_u64().unwrap()))
            .collect()
    };
    let stamp =
        m["sec"].as_i64().unwrap() as i128 * 1_000_000_000 + m["nanosec"].as_i64().unwrap() as i128;
    (stamp, floats("pose_bits"), floats("twist_bits"))
}

#[test]
fn a_closed_loop_run_is_recorded_as_rclpy_received_it() {
    let ns = format!("rec{}", std::process::id());
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("run.mcap");
    let port = free_port();
    let sim_proc = sim(port);
    let target = format!("tcp:127.0.0.1;{port}");
    let mut driver = ros_driver(
        dir.path(),
        &ns,
        &driver_script_yaml(),
        &[
            "--target",
            &target,
            "--switch-port",
            "0",
            "--record",
            file.to_str().unwrap(),
        ],
        &[],
    );
    let root = project_root();
    let mut cmd = Command::new(root.join(".venv-ros/bin/python"));
    cmd.arg(root.join("tests/ros/recorder_client.py"))
        .args([&ns, "--timeout", "90", "--link-loss"])
        .env("ROS_DOMAIN_ID", test_domain_id().to_string())
        .env("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
        .env("PYTHONUNBUFFERED", "1")
        .env_remove("_ROS_WHEELS_BOOTSTRAP_COMPLETE");
    let mut client = Proc::spawn("recorder client", cmd);
    let ended = |l: &str| {
        l.contains("\"event\": \"error\"")
            || l.contains("\"event\": \"timeout\"")
            || l.contains("\"event\": \"done\"")
    };
    // the link loss: the simulator stopped (its connection closed), the driver sees the link go, then a new one
    let at = client.wait_line(Duration::from_secs(60), |l| {
        ended(l) || l.contains("\"event\": \"link_loss\"")
    });
    assert!(
        at.contains("link_loss"),
        "client: {at}\n{}",
        client.seen.join("\n")
    );
    drop(sim_proc);
    driver.wait_line(Duration::from_secs(10), |l| {
        l.contains("link") && l.contains("lost")
    });
    let _sim = sim(port);
    client.write_stdin("go\n");
    let last = client.wait_line(Duration::from_secs(60), ended);
    driver.drain();
    assert!(
        last.contains("\"done\""),
        "client: {last}\n{}\ndriver:\n{}",
        client.seen.join("\n"),
        driver.seen.join("\n")
    );
    stop(driver);

    let lines = client.seen.clone();
    let got = events(&lines, "odom");
    let switched: Vec<String> = events(&lines, "switched")
        .iter()
        .map(|s| s["to"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(switched, ["go_to_pose", "ros"], "{}", lines.join("\n"));
    assert!(!got.is_empty(), "rclpy got no odometry");

    let odom_topic = format!("/{ns}/odom");
    let rec = read_recording(&file, &odom_topic);
    // every channel, with its schema and encoding
    let channel = |topic: &str| {
        rec["channels"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["topic"] == topic)
            .unwrap_or_else(|| panic!("no channel {topic}: {}", rec["channels"]))
            .clone()
    };
    for (topic, schema, encoding) in [
        (odom_topic.as_str(), "nav_msgs/msg/Odometry", "cdr"),
        ("/tf", "tf2_msgs/msg/TFMessage", "cdr"),
        (
            &format!("/{ns}/joint_states"),
            "sensor_msgs/msg/JointState",
            "cdr",
        ),
        (
            &format!("/{ns}/proximity/left"),
            "sensor_msgs/msg/Range",
            "cdr",
        ),
        (
            &format!("/{ns}/proximity/laser"),
            "sensor_msgs/msg/LaserScan",
            "cdr",
        ),
        (&format!("/{ns}/imu"), "sensor_msgs/msg/Imu", "cdr"),
        ("/diagnostics", "diagnostic_msgs/msg/DiagnosticArray", "cdr"),
        ("/thymio_rt/rt/inputs", "thymio_rt/RtInput", "cbor"),
        ("/thymio_rt/rt/odometry", "thymio_rt/RtOdometry", "cbor"),
        ("/aseba/frames/in", "thymio_rt/AsebaFrame", "cbor"),
        ("/aseba/frames/out", "thymio_rt/AsebaFrame", "cbor"),
        ("/aseba/frames/from_nrt", "thymio_rt/AsebaFrame", "cbor"),
    ] {
        let c = channel(topic);
        assert_eq!(c["schema_name"], schema, "{c}");
        assert_eq!(c["message_encoding"], encoding, "{c}");
        if encoding == "cdr" {
            assert_eq!(c["schema_encoding"], "ros2msg", "{c}");
        }
    }
    // plausible counts
    let count = |topic: &str| rec["counts"][topic].as_u64().unwrap_or(0);
    eprintln!("counts: {}; inputs: {}", rec["counts"], rec["inputs"]);
    let recorded = rec["odom"].as_array().unwrap();
    assert_eq!(recorded.len() as u64, count(&odom_topic));
    assert!(
        recorded.len() >= got.len(),
        "{} odometry message(s) in the file, rclpy got {}",
        recorded.len(),
        got.len()
    );
    assert_eq!(count("/tf"), count(&odom_topic), "{}", rec["counts"]);
    // every RT hand-off is recorded for replay, those of a robot not driven yet included
    assert!(
        count("/thymio_rt/rt/odometry") >= count(&odom_topic),
        "{}",
        rec["counts"]
    );
    assert_eq!(count(&format!("/{ns}/joint_states")), count(&odom_topic));
    // frames read, written, and sent by NRT (the script loaded twice: at the start and after the link loss)
    for topic in [
        "/aseba/frames/in",
        "/aseba/frames/out",
        "/aseba/frames/from_nrt",
        "/thymio_rt/rt/inputs",
    ] {
        assert!(count(topic) > 0, "nothing on {topic}: {}", rec["counts"]);
    }
    // what else the driver published: the sensors and /diagnostics, every message decoded by mcap_ros2
    for leaf in ["proximity/left", "proximity/laser", "imu"] {
        let topic = format!("/{ns}/{leaf}");
        assert!(count(&topic) > 0, "nothing on {topic}: {}", rec["counts"]);
    }
    assert!(count("/diagnostics") > 0, "{}", rec["counts"]);
    for (topic, n) in rec["counts"].as_object().unwrap() {
        if channel(topic)["message_encoding"] == "cdr" {
            assert_eq!(rec["decoded"][topic].as_u64(), n.as_u64(), "{topic}");
        }
    }
    assert!(
        rec["laser"]["ranges"].as_u64() > Some(0)
            && rec["laser"]["frame"] == format!("{ns}/laser_link"),
        "{}",
        rec["laser"]
    );
    let names = rec["diagnostic_names"].to_string();
    assert!(
        names.contains("asebaros: RT thread"),
        "diagnostics recorded: {names}"
    );
    // the link loss and the new link, as the RT thread saw them
    let input = |variant: &str| rec["inputs"][variant].as_u64().unwrap_or(0);
    assert!(
        input("LinkLost") >= 1 && input("LinkAttached") >= 2,
        "the link loss is not in the inputs: {}",
        rec["inputs"]
    );
    // the owner switches reached the RT thread: to go_to_pose and back to ros
    let owner_requests = input("OwnerRequest");
    assert!(
        owner_requests >= 2,
        "{owner_requests} OwnerRequest input(s) recorded: {}",
        rec["inputs"]
    );
    // every odometry message rclpy received is in the file, with exactly its pose and twist and its stamp within 5 ms
    let in_file: Vec<(i128, Vec<f64>, Vec<f64>)> = recorded.iter().map(odom_values).collect();
    let mut missing = Vec::new();
    let mut worst_stamp = 0;
    for m in &got {
        let (stamp, pose, twist) = odom_values(m);
        assert_eq!(m["frame"], recorded[0]["frame"], "{m}");
        assert_eq!(m["child"], recorded[0]["child"], "{m}");
        match in_file
            .iter()
            .filter(|(s, p, t)| *p == pose && *t == twist && (s - stamp).abs() <= 5_000_000)
            .map(|(s, _, _)| (s - stamp).abs())
            .min()
        {
            Some(d) => worst_stamp = worst_stamp.max(d),
            None => missing.push(m.clone()),
        }
    }
    eprintln!(
        "{} odometry message(s) received, all in the file; largest stamp difference {} µs",
        got.len() - missing.len(),
        worst_stamp / 1000
    );
    assert!(
        missing.is_empty(),
        "{} of {} odometry message(s) rclpy received are not in the file, e.g. {}",
        missing.len(),
        got.len(),
        missing[0]
    );

    // and the RT core run again on it, with no robot, writes the same frames and odometry bit for bit: cmd_vel,
    // the owner switches, go_to_pose's goal through its service, the link loss and its return
    let mut replay = common::thymio_rt();
    replay.args(["replay", "--check"]).arg(&file);
    let mut replay = Proc::spawn("thymio-rt replay --check", replay);
    let status = replay.wait_exit(Duration::from_secs(120));
    let out = replay.seen.join("\n");
    assert!(
        status.success() && out.contains("check: identical"),
        "{out}"
    );
    assert!(
        !out.contains("could not be put back") && !out.contains("exact up to"),
        "{out}"
    );
    let compared = |after: &str| -> u64 {
        out.split(after)
            .nth(1)
            .and_then(|s| s.split_whitespace().next())
            .and_then(|w| w.parse().ok())
            .unwrap_or(0)
    };
    eprintln!("{out}");
    assert!(
        compared("identical — ") > 50 && compared("frame(s) written and ") > 20,
        "frames and odometry compared: {out}"
    );
}

#[test]
fn a_full_disk_stops_the_recording_not_the_driver() {
    let ns = format!("full{}", std::process::id());
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("full.mcap");
    std::os::unix::fs::symlink("/dev/full", &file).unwrap();
    let deadline = Instant::now() + Duration::from_secs(40);
    let mut peer = rclpy_peer::RclpyPeer::serve(test_domain_id(), deadline).unwrap();
    let odom = format!("/{ns}/odom");
    peer.subscribe(&odom, "nav_msgs/msg/Odometry", "volatile", deadline)
        .unwrap();
    let mut driver = ros_driver(
        dir.path(),
        &ns,
        &driver_script_yaml(),
        &["--switch-port", "0", "--record", file.to_str().unwrap()],
        &[],
    );
    driver.wait_line(Duration::from_secs(30), |l| {
        l.contains("flight recorder stopped")
    });
    // odometry goes on after the recorder stopped: messages stamped (wall clock) after its error
    let stopped_at = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64();
    let mut after = 0;
    while after < 5 {
        let m = peer.message(&odom, deadline, |_| true).unwrap();
        let stamp = m["header"]["stamp"]["sec"].as_f64().unwrap()
            + m["header"]["stamp"]["nanosec"].as_f64().unwrap() * 1e-9;
        after += usize::from(stamp > stopped_at);
    }
    driver.signal(nix::sys::signal::Signal::SIGINT);
    let status = driver.wait_exit(Duration::from_secs(15));
    let log = driver.seen.join("\n");
    assert!(
        status.success(),
        "thymio-rt run ended with {status}:\n{log}"
    );
    assert!(
        log.contains("robots were sent zero speed (confirmed)"),
        "{log}"
    );
    assert!(
        log.contains("No space left on device") || log.contains("os error 28"),
        "{log}"
    );
}
