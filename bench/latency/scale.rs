//! Scaling: N simulated robots (a separate `thymio-rt sim` process, one TCP port each, pinned away from the
//! driver's RT CPU so that what is measured is the driver's) through one RT thread, without ROS and with the
//! ROS 2 front end on. Per point: the driver's CPU (process, and per thread: the RT thread, the main NRT loop,
//! the others), the RT cycle's p99, and with ROS the driver's own odometry path, wire → `odom` published, p99
//! over every robot (its `--report`), with a `/tf` listener so that every robot's odometry is published
//! ([`crate::listener`]).

use crate::procs::{self, Proc};
use serde_json::json;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// Robots without ROS.
pub const ROBOTS: [usize; 5] = [1, 8, 16, 32, 64];
/// Robots with the ROS 2 front end.
pub const ROBOTS_ROS: [usize; 4] = [1, 8, 16, 32];

/// Starts `n` robots on consecutive ports, on every CPU but the driver's RT CPU (when there are others);
/// returns the process and the first port.
pub fn robots(driver: &Path, n: usize) -> Result<(Proc, u16), String> {
    let base = free_range(n)?;
    let mut c = Command::new(driver);
    c.args([
        "sim",
        "--robots",
        &n.to_string(),
        "--listen",
        &format!("tcp:127.0.0.1:{base}"),
    ]);
    let others = sim_cpus();
    if !others.is_empty() {
        procs::pinned_to(&mut c, &others);
    }
    let p = Proc::spawn("thymio-rt sim", c);
    for i in 0..n {
        crate::wait_listening(base + i as u16)?;
    }
    Ok((p, base))
}

/// The CPUs the simulated robots run on: every allowed one but the RT thread's default one (none when there
/// is only that one).
fn sim_cpus() -> Vec<usize> {
    let rt_cpu = rt::sched::default_rt_cpu();
    rt::sched::allowed_cpus()
        .into_iter()
        .filter(|c| Some(*c) != rt_cpu)
        .collect()
}

/// A base port with `n` free ports after it.
fn free_range(n: usize) -> Result<u16, String> {
    for _ in 0..50 {
        let l = std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
        let base = l.local_addr().map_err(|e| e.to_string())?.port();
        drop(l);
        if base as usize + n >= 65000 {
            continue;
        }
        if (0..n).all(|i| std::net::TcpListener::bind(("127.0.0.1", base + i as u16)).is_ok()) {
            return Ok(base);
        }
    }
    Err("no free port range".into())
}

fn targets(base: u16, n: usize) -> Vec<String> {
    (0..n)
        .flat_map(|i| {
            [
                "--target".to_string(),
                format!("tcp:host=127.0.0.1;port={}", base as usize + i),
            ]
        })
        .collect()
}

/// CPU fraction of one core used by `p` over `window` (after `warmup`), in all and per thread group.
fn cpu_fraction(p: &Proc, warmup: Duration, window: Duration) -> (f64, BTreeMap<String, f64>) {
    std::thread::sleep(warmup);
    let pid = p.child.id();
    let (a, ta) = (p.cpu_seconds(), procs::thread_groups(pid));
    let t0 = std::time::Instant::now();
    std::thread::sleep(window);
    let (b, tb) = (p.cpu_seconds(), procs::thread_groups(pid));
    let wall = t0.elapsed().as_secs_f64();
    ((b - a) / wall, procs::thread_shares(&ta, &tb, wall))
}

/// One point of the scaling curve: `n` robots through one RT thread; with `ros_domain`, the ROS 2 front end
/// on in that domain (loopback only), else `--no-ros`.
pub fn point(
    root: &Path,
    driver: &Path,
    n: usize,
    window: Duration,
    out: &Path,
    ros_domain: Option<u32>,
) -> Result<serde_json::Value, String> {
    let (_robots, base) = robots(driver, n)?;
    let label = if ros_domain.is_some() {
        "ros2"
    } else {
        "no_ros"
    };
    let report = out.join(format!("scale_{label}_{n}_report.json"));
    let mut c = Command::new(driver);
    c.arg("run")
        .args([
            "--config",
            &root.join("bench/latency/scale.yaml").display().to_string(),
        ])
        .args(targets(base, n))
        .args(["--report", &report.display().to_string()]);
    match ros_domain {
        Some(d) => {
            crate::e2e::ros_env(&mut c, d);
        }
        None => {
            c.arg("--no-ros");
        }
    }
    let mut p = Proc::spawn("thymio-rt run", c);
    // every robot driven and, with ROS, its endpoints made — one robot after the other, each costing more than the
    // last (Fast DDS announces the participant's whole entity list on every new endpoint): measure after them
    let (mut driven, mut ready) = (0, 0);
    let want_ready = if ros_domain.is_some() { n } else { 0 };
    let deadline = std::time::Instant::now() + Duration::from_secs(60 + 5 * n as u64);
    while driven < n || ready < want_ready {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        let l = p.wait_for("", left)?;
        driven += l.contains("driven as RT robot") as usize;
        ready += l.contains("driver interface ready") as usize;
    }
    // with ROS, a /tf listener: the driver publishes odometry only while someone listens (crate::listener)
    let listener = match ros_domain {
        Some(d) => Some(crate::listener::start(d, window + Duration::from_secs(60))?),
        None => None,
    };
    let (cpu, threads) = cpu_fraction(&p, Duration::from_secs(2), window);
    drop(listener);
    p.interrupt();
    p.wait(Duration::from_secs(20))?;
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).map_err(|e| e.to_string())?)
            .map_err(|e| e.to_string())?;
    let us = |v: &serde_json::Value| v.as_f64().unwrap_or(0.0) / 1000.0;
    let p99_us = us(&r["rt"]["cycle_ns"]["p99"]);
    let odom_p99_us = ros_domain.map(|_| us(&r["hops"]["odom_wire_to_published_ns"]["p99"]));
    let rt_cpu = threads.get("rt").copied().unwrap_or(0.0);
    eprintln!(
        "  {n} robots ({label}): CPU {:.1}% of a core (RT thread {:.1}%, per robot {:.2}%), RT cycle p99 {:.1} µs{}",
        cpu * 100.0,
        rt_cpu * 100.0,
        rt_cpu * 100.0 / n as f64,
        p99_us,
        odom_p99_us.map_or(String::new(), |o| format!(", odometry wire → published p99 {o:.0} µs")),
    );
    Ok(json!({
        "robots": n, "ros": ros_domain.is_some(), "cpu": cpu, "threads": threads,
        "rt_cpu_per_robot": rt_cpu / n as f64, "cpu_per_robot": cpu / n as f64,
        "p99_us": p99_us, "cycle_ns": r["rt"]["cycle_ns"], "overruns": r["rt"]["overruns"],
        "odom_wire_to_published_p99_us": odom_p99_us,
        "odom_wire_to_decoded_p99_us": us(&r["hops"]["odom_wire_to_decoded_ns"]["p99"]),
        "frames": {"rx": r["link"]["frames_rx"], "tx": r["link"]["frames_tx"]},
    }))
}
