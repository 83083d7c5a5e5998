//! Soak: 8 simulated robots at full rates driven through ROS for a long time (issue 8). With
//! `THYMIO_SOAK=1` (scripts/test.sh --soak) it lasts an hour (`THYMIO_SOAK_SECONDS` to change);
//! otherwise a 20 s version keeps the harness honest. Checks: the driver's RSS stays flat
//! (±5% after warm-up), the RT loop's overruns stay within budget, and every odometry sample
//! the RT thread produced reaches the ROS client except the drops the driver counted.
#![cfg(feature = "ros2")]

use crate::common;
use crate::peer_missing;
use crate::rclpy_peer;

use common::Proc;
use rclpy_peer::{project_root, test_domain_id};
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const ROBOTS: usize = 8;

fn rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

#[test]
fn soak_eight_robots_through_ros() {
    let soak = std::env::var("THYMIO_SOAK").is_ok_and(|v| v == "1");
    let seconds: f64 = std::env::var("THYMIO_SOAK_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(if soak { 3600.0 } else { 20.0 });
    let root = common::root();
    let python = project_root().join(".venv-ros/bin/python");
    if !python.exists() {
        peer_missing!(
            format!("the ROS 2 venv ({})", python.display()),
            common::missing::ROS2_SETUP
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let arena = dir.path().join("arena.yaml");
    std::fs::write(&arena, "width: 4.0\nheight: 2.0\n").unwrap();
    let config = dir.path().join("soak.yaml");
    std::fs::write(
        &config,
        format!(
            "script: {{path: {}}}\nnodes:\n  thymio:\n    maximal_number: {ROBOTS}\n    prefix: thymio_\nsim: {{robots: {ROBOTS}, arena: {}}}\nrt: {{lock_memory: false}}\n",
            root.join("config/aseba/thymio_ros.aesl").display(),
            arena.display()
        ),
    )
    .unwrap();
    let report = dir.path().join("report.json");
    let ns = "soak";
    let mut cmd = common::thymio_rt();
    cmd.arg("run")
        .arg("-c")
        .arg(&config)
        .args(["--switch-port", "0", "--report"])
        .arg(&report);
    cmd.args(["--ros-args", "-r", &format!("__ns:=/{ns}")]);
    cmd.env("ROS_DOMAIN_ID", test_domain_id().to_string())
        .env("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
        .env_remove("LD_LIBRARY_PATH")
        .env_remove("LD_PRELOAD");
    let mut driver = Proc::spawn("thymio-rt run", cmd);
    let pid = driver.child.id();

    let mut client = Command::new(&python)
        .arg(root.join("tests/ros/soak_client.py"))
        .args([
            "--ns",
            &format!("/{ns}"),
            "--robots",
            &ROBOTS.to_string(),
            "--seconds",
            &seconds.to_string(),
        ])
        .env("ROS_DOMAIN_ID", test_domain_id().to_string())
        .env("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start the soak client");
    let (tx, rx) = std::sync::mpsc::channel();
    let out = client.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let started = Instant::now();
    let mut samples = Vec::new();
    let done: Value = loop {
        match rx.recv_timeout(Duration::from_secs(2)) {
            Ok(line) => {
                let v: Value = serde_json::from_str(&line).unwrap();
                if v["event"] == "done" {
                    break v;
                }
            }
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
            Err(e) => panic!("soak client ended early: {e}"),
        }
        if let Some(kib) = rss_kib(pid) {
            samples.push((started.elapsed().as_secs_f64(), kib));
        }
        assert!(
            started.elapsed().as_secs_f64() < seconds + 120.0,
            "the soak client did not finish"
        );
    };
    let _ = client.wait();
    driver.signal(nix::sys::signal::Signal::SIGINT);
    let status = driver.wait_exit(Duration::from_secs(20));
    assert!(
        status.success(),
        "driver ended with {status}:\n{}",
        driver.seen.join("\n")
    );

    // RSS flat after warm-up (the first quarter, at least 10 s)
    let warm = (seconds / 4.0).max(10.0).min(seconds / 2.0);
    let steady: Vec<u64> = samples
        .iter()
        .filter(|(t, _)| *t >= warm)
        .map(|(_, k)| *k)
        .collect();
    assert!(steady.len() >= 3, "too few RSS samples: {samples:?}");
    let first = steady[0] as f64;
    let last = *steady.last().unwrap() as f64;
    assert!(
        (last - first).abs() / first <= 0.05,
        "RSS went from {first} KiB to {last} KiB"
    );

    let r: Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    let cycles = r["rt"]["cycles"].as_u64().unwrap();
    let overruns = r["rt"]["overruns"].as_u64().unwrap();
    // Systematic overruns fail this; a few periods lost to a loaded shared CI machine (no
    // SCHED_FIFO there) do not: 1 % (20 of the ~2000 periods of a 20 s run at 10 ms).
    assert!(
        overruns * 100 <= cycles.max(1),
        "{overruns} overruns in {cycles} cycles"
    );
    // every odometry sample reached ROS but for the counted drops: each robot's odom arrived at
    // its nominal 20 Hz (MOTOR_PERIOD 5 of the 100 Hz motor event) from its first message on
    let produced = r["rt"]["odometry_samples"].as_u64().unwrap();
    let dropped = r["rt"]["ring_drops"].as_u64().unwrap();
    let end = done["end"].as_f64().unwrap();
    let mut received = 0;
    for (topic, count) in done["odom"].as_object().unwrap() {
        let n = count.as_u64().unwrap();
        received += n;
        let window = end - done["first_odom"][topic].as_f64().unwrap_or(end);
        let expected = 20.0 * window;
        assert!(
            n as f64 + dropped as f64 >= 0.97 * expected - 2.0,
            "{topic}: {n} odom in {window:.1} s, expected about {expected:.0} ({dropped} drops counted)"
        );
    }
    assert!(
        received <= produced,
        "odometry: {produced} produced, {received} received"
    );
    assert!(
        done["odom"]
            .as_object()
            .unwrap()
            .values()
            .all(|v| v.as_u64().unwrap() > 0),
        "{done}"
    );
    assert_eq!(r["link"]["frames_rejected"], 0);
}
