//! End-to-end hops with real ROS 2 (rclpy in another process), for thymio-rt and for the
//! Python baseline, through the same simulated robot and the same timestamping relay:
//! (a) odometry event written to the driver's link → `odom` received by rclpy;
//! (b) `cmd_vel` published by rclpy → `set_speed` event arriving at the link.

use crate::procs::Proc;
use crate::relay::Relay;
use hdrhistogram::Histogram;
use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// Event ids of config/aseba/thymio_ros.aesl.
const SET_SPEED: u16 = 1;
const ODOMETRY: u16 = 2;
/// The embedded robot's calibration (simulation defaults).
const Q0: f64 = 0.000332;
/// Wheel units per injected odometry event.
const STEP: i16 = 10;

/// Where things are.
pub struct Env {
    pub root: PathBuf,
    /// thymio-rt built with the `ros2` feature.
    pub driver: PathBuf,
    /// The venv's python (rclpy, thymiodirect).
    pub python: PathBuf,
    pub out: PathBuf,
}

/// Latency percentiles (µs) of matched samples.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Hop {
    pub samples: u64,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub p999: f64,
    pub max: f64,
    pub unmatched: u64,
    pub cdf: Vec<(f64, f64)>,
}

fn hop(latencies_ns: &[u64], unmatched: u64) -> Hop {
    let mut h = Histogram::<u64>::new_with_bounds(1, 60_000_000_000, 3).expect("bounds");
    for l in latencies_ns {
        h.saturating_record((*l).max(1));
    }
    let us = |v: u64| v as f64 / 1000.0;
    Hop {
        samples: h.len(),
        p50: us(h.value_at_quantile(0.5)),
        p90: us(h.value_at_quantile(0.9)),
        p99: us(h.value_at_quantile(0.99)),
        p999: us(h.value_at_quantile(0.999)),
        max: us(h.max()),
        unmatched,
        cdf: h
            .iter_quantiles(2)
            .map(|i| (us(i.value_iterated_to()), i.quantile_iterated_to()))
            .collect(),
    }
}

/// Matches odometry messages (receive time, x) to injected events (send time, k·STEP): the
/// pose of event k is q0·STEP·k from the first event.
pub fn match_odometry(sent: &[(u64, i16)], received: &[(u64, f64)]) -> Hop {
    let mut lat = Vec::new();
    let mut unmatched = 0;
    let base = sent.first().map_or(0, |s| s.1);
    for (t, x) in received {
        let k = (x / (Q0 * STEP as f64)).round() as i64 + (base as i64 / STEP as i64);
        match sent.iter().find(|(_, v)| *v as i64 == k * STEP as i64) {
            Some((ts, _)) if t >= ts => lat.push(t - ts),
            _ => unmatched += 1,
        }
    }
    hop(&lat, unmatched)
}

/// Matches published cmd_vel (publish time, wheel target) to set_speed events at the link
/// (arrival time, left target): the first arrival of that target after the publish.
pub fn match_cmd_vel(published: &[(u64, i16)], arrived: &[(u64, i16)]) -> Hop {
    let mut lat = Vec::new();
    let mut unmatched = 0;
    let mut from = 0;
    for (t, v) in published {
        match arrived[from..]
            .iter()
            .position(|(ta, va)| ta >= t && va == v)
        {
            Some(i) => {
                lat.push(arrived[from + i].0 - t);
                from += i + 1;
            }
            None => unmatched += 1,
        }
    }
    hop(&lat, unmatched)
}

fn read_rows<T: serde::de::DeserializeOwned>(path: &Path) -> Vec<T> {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default()
}

/// A ROS 2 process environment confined to loopback in its own domain.
pub fn ros_env(cmd: &mut Command, domain: u32) {
    cmd.env("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
        .env("ROS_DOMAIN_ID", domain.to_string());
}

/// One driver under test: how to start it against a relay port.
pub enum Driver {
    /// thymio-rt run with the ROS 2 bridge.
    ThymioRt,
    /// The Python baseline.
    Baseline,
}

/// Measures both hops for `driver` with `samples` samples each. `robot_port` serves the robot
/// (already running the driver script with EMIT_MOTOR = 0).
pub fn measure(
    env: &Env,
    driver: Driver,
    robot_port: u16,
    samples: usize,
    domain: u32,
) -> Result<(Hop, Hop), String> {
    let relay = Relay::start(robot_port, ODOMETRY, SET_SPEED);
    let target = format!("tcp:host=127.0.0.1;port={}", relay.port);
    let (label, mut proc) = match driver {
        Driver::ThymioRt => {
            let mut c = Command::new(&env.driver);
            c.args([
                "run",
                "--config",
                &env.root
                    .join("bench/latency/bench.yaml")
                    .display()
                    .to_string(),
                "--target",
                &target,
            ]);
            ros_env(&mut c, domain);
            let mut p = Proc::spawn("thymio-rt", c);
            p.wait_for("driver interface ready", Duration::from_secs(60))?;
            ("thymio-rt", p)
        }
        Driver::Baseline => {
            let mut c = Command::new(&env.python);
            c.arg(env.root.join("bench/baseline/ros_thymio_baseline.py"))
                .args(["--port", &relay.port.to_string(), "--duration", "600"]);
            ros_env(&mut c, domain);
            let mut p = Proc::spawn("baseline", c);
            p.wait_for("READY", Duration::from_secs(60))?;
            ("baseline", p)
        }
    };
    // (a) odometry → odom
    let odom_file = env.out.join(format!("e2e_{label}_odom_raw.json"));
    let mut client = Command::new(&env.python);
    client
        .arg(env.root.join("bench/latency/e2e_client.py"))
        .args([
            "odom",
            "--topic",
            "/odom",
            "--count",
            &samples.to_string(),
            "--out",
            &odom_file.display().to_string(),
            "--timeout",
            "600",
        ]);
    ros_env(&mut client, domain);
    let mut probe = Proc::spawn("odom probe", client);
    probe.wait_for("READY", Duration::from_secs(60))?;
    relay.inject_odometry(1, ODOMETRY, STEP, samples + 20, Duration::from_millis(10));
    probe.wait(Duration::from_secs(120))?;
    let sent: Vec<(u64, i16)> = relay
        .log
        .lock()
        .expect("relay log")
        .to_driver
        .iter()
        .filter(|e| e.1 == ODOMETRY)
        .map(|e| (e.0, e.2[0]))
        .collect();
    let received: Vec<(u64, f64)> = read_rows(&odom_file);
    let odom = match_odometry(&sent, &received);
    // (b) cmd_vel → link
    let cmd_file = env.out.join(format!("e2e_{label}_cmd_vel_raw.json"));
    let mut client = Command::new(&env.python);
    client
        .arg(env.root.join("bench/latency/e2e_client.py"))
        .args([
            "cmd_vel",
            "--topic",
            "/cmd_vel",
            "--count",
            &samples.to_string(),
            "--rate",
            "50",
            "--q0",
            &Q0.to_string(),
            "--out",
            &cmd_file.display().to_string(),
        ]);
    ros_env(&mut client, domain);
    let mut probe = Proc::spawn("cmd_vel probe", client);
    probe.wait(Duration::from_secs(samples as u64 / 50 + 120))?;
    let published: Vec<(u64, i16)> = read_rows(&cmd_file);
    let arrived: Vec<(u64, i16)> = relay
        .log
        .lock()
        .expect("relay log")
        .to_robot
        .iter()
        .filter(|e| e.1 == SET_SPEED)
        .map(|e| (e.0, e.2[0]))
        .collect();
    let cmd = match_cmd_vel(&published, &arrived);
    proc.interrupt();
    let _ = proc.wait(Duration::from_secs(10));
    eprintln!(
        "  {label}: event→odom p50 {:.0} µs p99 {:.0} µs ({} matched, {} not); cmd_vel→link p50 {:.0} µs p99 {:.0} µs ({} matched, {} not)",
        odom.p50, odom.p99, odom.samples, odom.unmatched, cmd.p50, cmd.p99, cmd.samples, cmd.unmatched
    );
    Ok((odom, cmd))
}

/// JSON of a hop for the summary.
pub fn summary(h: &Hop) -> serde_json::Value {
    json!({"p50": h.p50, "p99": h.p99, "p999": h.p999, "max": h.max, "samples": h.samples})
}

/// Checks the matching on synthetic data (the harness runs it before measuring: a wrong
/// match would silently corrupt the headline numbers).
pub fn self_check() {
    let sent: Vec<(u64, i16)> = (0..5).map(|k| (1000 * k as u64, k * STEP)).collect();
    let x = |k: f64| k * Q0 * STEP as f64;
    let received = vec![(1500, x(1.0)), (2300, x(2.0)), (9000, x(40.0))];
    let h = match_odometry(&sent, &received);
    assert_eq!((h.samples, h.unmatched), (2, 1), "odometry matching");
    assert!(
        (h.p50 - 0.3).abs() < 0.01 && (h.max - 0.5).abs() < 0.01,
        "odometry latencies {h:?}"
    );
    let published = vec![(100, 21), (200, 22), (300, 23)];
    let arrived = vec![(150, 21), (260, 22), (270, 22)];
    let h = match_cmd_vel(&published, &arrived);
    assert_eq!((h.samples, h.unmatched), (2, 1), "cmd_vel matching");
}
