//! The latency and jitter harness of `cargo bench` (issue 9): loop timing, end-to-end hops
//! through ROS 2, the Python baseline, scaling with robots. Writes JSON and PNG plots to
//! `target/bench-results/` and the headline numbers to `target/bench-results/summary.json`.
//! `THYMIO_BENCH_QUICK=1` shortens every run.

mod loop_timing;
mod plot;

use serde_json::json;
use std::path::PathBuf;
use std::time::Duration;

fn quick() -> bool {
    std::env::var("THYMIO_BENCH_QUICK").is_ok_and(|v| v == "1")
}

fn results_dir() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target"));
    let dir = target.join("bench-results");
    std::fs::create_dir_all(&dir).expect("create target/bench-results");
    dir
}

fn write_json(name: &str, value: &serde_json::Value) {
    let path = results_dir().join(format!("{name}.json"));
    std::fs::write(&path, serde_json::to_string_pretty(value).expect("JSON"))
        .expect("write results");
    eprintln!("wrote {}", path.display());
}

/// Merges `part` into summary.json (other parts may come from other harness sections).
fn update_summary(part: serde_json::Value) {
    let path = results_dir().join("summary.json");
    let mut summary: serde_json::Value = std::fs::read_to_string(&path)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_else(|| json!({}));
    if let (Some(s), Some(p)) = (summary.as_object_mut(), part.as_object()) {
        for (k, v) in p {
            s.insert(k.clone(), v.clone());
        }
    }
    summary["machine"] = machine();
    std::fs::write(&path, serde_json::to_string_pretty(&summary).expect("JSON"))
        .expect("write summary");
}

/// The machine and kernel the numbers were measured on.
fn machine() -> serde_json::Value {
    let read = |p: &str| std::fs::read_to_string(p).unwrap_or_default();
    let cpu = read("/proc/cpuinfo")
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split(':').nth(1))
        .map(|s| s.trim().to_owned())
        .unwrap_or_default();
    let kernel = read("/proc/version")
        .split_whitespace()
        .take(3)
        .collect::<Vec<_>>()
        .join(" ");
    json!({
        "cpu": cpu,
        "cpus": std::thread::available_parallelism().map_or(0, |n| n.get()),
        "kernel": kernel,
        "preempt_rt": rt::sched::realtime_kernel(),
    })
}

fn main() {
    // `cargo bench` passes `--bench`; filters select sections: loop, e2e, scale
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let want = |s: &str| args.is_empty() || args.iter().any(|a| s.contains(a.as_str()));
    let secs = if quick() { 10 } else { 60 };
    if want("loop") {
        let mut all = Vec::new();
        for (name, fifo, stress) in [
            ("wakeup_fifo_idle", true, false),
            ("wakeup_fifo_stress", true, true),
            ("wakeup_other_idle", false, false),
            ("wakeup_other_stress", false, true),
        ] {
            eprintln!("loop timing: {name} for {secs} s");
            let r = loop_timing::run(name, fifo, stress, Duration::from_secs(secs));
            eprintln!(
                "  {} ({}): p50 {:.1} µs, p99 {:.1} µs, p99.99 {:.1} µs, max {:.1} µs",
                name, r.scheduler, r.p50_us, r.p99_us, r.p9999_us, r.max_us
            );
            all.push(r);
        }
        write_json("loop_timing", &serde_json::to_value(&all).expect("JSON"));
        plot::cdf(
            "loop_timing",
            "RT loop wake-up latency (1 kHz)",
            "µs",
            &all.iter()
                .map(|r| (r.name.clone(), r.cdf.clone()))
                .collect::<Vec<_>>(),
        );
        let fifo_stress = all
            .iter()
            .find(|r| r.name == "wakeup_fifo_stress")
            .expect("measured");
        update_summary(json!({
            "wakeup_fifo_stress_us": {"p99": fifo_stress.p99_us, "p9999": fifo_stress.p9999_us, "max": fifo_stress.max_us, "scheduler": fifo_stress.scheduler},
            "wakeup": all.iter().map(|r| (r.name.clone(), json!({"p50": r.p50_us, "p99": r.p99_us, "p999": r.p999_us, "p9999": r.p9999_us, "max": r.max_us, "scheduler": r.scheduler}))).collect::<serde_json::Map<_, _>>(),
        }));
    }
}
