//! Scaling: N simulated robots (a separate `thymio-rt sim` process, one TCP port each) through
//! one RT thread, without ROS. (The CPU at 8 robots with ROS against the Python driver is in the
//! end-to-end section, on Aseba Playground.)

use crate::procs::Proc;
use serde_json::json;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// Starts `n` robots on consecutive ports; returns the process and the first port.
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
    let p = Proc::spawn("thymio-rt sim", c);
    for i in 0..n {
        crate::wait_listening(base + i as u16)?;
    }
    Ok((p, base))
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

/// CPU fraction of one core used by `procs` over `window` (after `warmup`).
fn cpu_fraction(procs: &[&Proc], warmup: Duration, window: Duration) -> f64 {
    std::thread::sleep(warmup);
    let a: f64 = procs.iter().map(|p| p.cpu_seconds()).sum();
    std::thread::sleep(window);
    let b: f64 = procs.iter().map(|p| p.cpu_seconds()).sum();
    (b - a) / window.as_secs_f64()
}

/// One point of the scaling curve: `n` robots through one RT thread (no ROS), RT cycle p99 and
/// the process's CPU use.
pub fn point(
    root: &Path,
    driver: &Path,
    n: usize,
    window: Duration,
    out: &Path,
) -> Result<serde_json::Value, String> {
    let (_robots, base) = robots(driver, n)?;
    let report = out.join(format!("scale_{n}_report.json"));
    let mut c = Command::new(driver);
    c.args([
        "run",
        "--no-ros",
        "--config",
        &root.join("bench/latency/scale.yaml").display().to_string(),
    ])
    .args(targets(base, n))
    .args(["--report", &report.display().to_string()]);
    let mut p = Proc::spawn("thymio-rt run", c);
    for _ in 0..n {
        p.wait_for("driven as RT robot", Duration::from_secs(60))?;
    }
    let cpu = cpu_fraction(&[&p], Duration::from_secs(1), window);
    p.interrupt();
    p.wait(Duration::from_secs(10))?;
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).map_err(|e| e.to_string())?)
            .map_err(|e| e.to_string())?;
    let p99_us = r["rt"]["cycle_ns"]["p99"].as_f64().unwrap_or(0.0) / 1000.0;
    eprintln!(
        "  {n} robots: CPU {:.1}% of a core, RT cycle p99 {:.1} µs",
        cpu * 100.0,
        p99_us
    );
    Ok(
        json!({"robots": n, "cpu": cpu, "p99_us": p99_us, "cycle_ns": r["rt"]["cycle_ns"], "overruns": r["rt"]["overruns"]}),
    )
}
