//! The latency and jitter harness of `cargo bench` (issue 9): loop timing, end-to-end hops
//! through ROS 2, the Python baseline, scaling with robots. Writes JSON and PNG plots to
//! `target/bench-results/` and the headline numbers to `target/bench-results/summary.json`.
//! `THYMIO_BENCH_QUICK=1` shortens every run.

mod e2e;
mod loop_timing;
mod plot;
mod procs;
mod relay;
mod scale;

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

/// The end-to-end environment, or why it is missing.
fn e2e_env() -> Result<e2e::Env, String> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let python = root.join(".venv-ros/bin/python");
    if !python.exists() || std::env::var("AMENT_PREFIX_PATH").is_err() {
        return Err("the ROS 2 environment is not set: run scripts/setup-ros2.sh and source scripts/ros2-env.sh".into());
    }
    // the driver under test: the same sources, with the ROS 2 bridge
    let status = std::process::Command::new(env!("CARGO"))
        .args([
            "build",
            "--release",
            "--features",
            "ros2",
            "--bin",
            "thymio-rt",
        ])
        .current_dir(&root)
        .status()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if !status.success() {
        return Err("building thymio-rt with the ros2 feature failed".into());
    }
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"));
    let driver = target.join("release/thymio-rt");
    let sim_ok = std::process::Command::new(&driver)
        .args(["sim", "--help"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !sim_ok {
        return Err("this build has no `thymio-rt sim` to serve the robot".into());
    }
    Ok(e2e::Env {
        root,
        driver,
        python,
        out: results_dir(),
    })
}

/// Runs the end-to-end hops for thymio-rt and the Python baseline.
fn run_e2e(env: &e2e::Env, samples: usize) -> Result<(), String> {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .map_err(|e| e.to_string())?
        .local_addr()
        .map_err(|e| e.to_string())?
        .port();
    let mut robot_cmd = std::process::Command::new(&env.driver);
    robot_cmd.args([
        "sim",
        "--robots",
        "1",
        "--listen",
        &format!("tcp:127.0.0.1:{port}"),
    ]);
    let _robot = procs::Proc::spawn("thymio-rt sim", robot_cmd);
    wait_listening(port)?;
    let domain = 40 + std::process::id() % 50;
    eprintln!("end to end: thymio-rt ({samples} samples per hop)");
    let (odom, cmd) = e2e::measure(env, e2e::Driver::ThymioRt, port, samples, domain)?;
    eprintln!("end to end: Python baseline ({samples} samples per hop)");
    let (b_odom, b_cmd) = e2e::measure(env, e2e::Driver::Baseline, port, samples, domain + 1)?;
    write_json(
        "e2e",
        &json!({"thymio_rt": {"event_to_odom": odom, "cmd_vel_to_link": cmd}, "baseline_python": {"event_to_odom": b_odom, "cmd_vel_to_link": b_cmd}}),
    );
    plot::cdf(
        "e2e_event_to_odom",
        "odometry event at the link -> odom received (rclpy)",
        "µs",
        &[
            ("thymio-rt".into(), odom.cdf.clone()),
            ("Python baseline".into(), b_odom.cdf.clone()),
        ],
    );
    plot::cdf(
        "e2e_cmd_vel_to_link",
        "cmd_vel published (rclpy) -> set_speed at the link",
        "µs",
        &[
            ("thymio-rt".into(), cmd.cdf.clone()),
            ("Python baseline".into(), b_cmd.cdf.clone()),
        ],
    );
    update_summary(json!({
        "e2e_cmd_vel_to_link_us": e2e::summary(&cmd),
        "e2e_event_to_odom_us": e2e::summary(&odom),
        "baseline_python": {"e2e_cmd_vel_to_link_us": e2e::summary(&b_cmd), "e2e_event_to_odom_us": e2e::summary(&b_odom)},
        "ratio_p99": {"cmd_vel": b_cmd.p99 / cmd.p99.max(1e-3), "odom": b_odom.p99 / odom.p99.max(1e-3)},
    }));
    Ok(())
}

fn wait_listening(port: u16) -> Result<(), String> {
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while std::time::Instant::now() < deadline {
        let listening = std::fs::read_to_string("/proc/net/tcp")
            .unwrap_or_default()
            .lines()
            .any(|l| {
                let c: Vec<&str> = l.split_whitespace().collect();
                c.len() > 3 && c[1].ends_with(&format!(":{port:04X}")) && c[3] == "0A"
            });
        if listening {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Err(format!("the robot did not listen on port {port}"))
}

fn main() {
    if !cfg!(feature = "ros2") {
        eprintln!(
            "note: benches built without --features ros2: cargo has replaced target/release/thymio-rt with a \
             driver that has no ROS 2 bridge (scripts/bench.sh builds them with the same features as scripts/run.sh)"
        );
    }
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
    if want("e2e") {
        e2e::self_check();
        let samples = if quick() { 1000 } else { 10_000 };
        match e2e_env() {
            Err(reason) => eprintln!("end to end: skipped: {reason}"),
            Ok(env) => {
                if let Err(e) = run_e2e(&env, samples) {
                    eprintln!("end to end: failed: {e}");
                    std::process::exit(1);
                }
            }
        }
    }
    if want("scale") {
        match e2e_env() {
            Err(reason) => eprintln!("scale: skipped: {reason}"),
            Ok(env) => {
                if let Err(e) = run_scale(&env) {
                    eprintln!("scale: failed: {e}");
                    std::process::exit(1);
                }
            }
        }
    }
}

/// The scaling curve and the CPU comparison at 8 robots.
fn run_scale(env: &e2e::Env) -> Result<(), String> {
    let window = Duration::from_secs(if quick() { 5 } else { 20 });
    let mut points = Vec::new();
    for n in [1usize, 8, 32, 64] {
        eprintln!("scale: {n} robots");
        points.push(scale::point(&env.root, &env.driver, n, window, &env.out)?);
    }
    let one = &points[0]["cycle_ns"];
    eprintln!("cpu at 8 robots");
    let domain = 60 + std::process::id() % 50;
    let (ours, baseline) = scale::cpu_8(env, window, domain)?;
    write_json(
        "scale",
        &json!({"points": points, "cpu_8_robots": {"ours": ours, "baseline": baseline}}),
    );
    update_summary(json!({
        "rt_cycle_ns": {"p50": one["p50"], "p999": one["p999"]},
        "cpu_8_robots": {"ours": ours, "baseline": baseline},
        "scale": points.iter().map(|p| json!({"robots": p["robots"], "cpu": p["cpu"], "p99_us": p["p99_us"]})).collect::<Vec<_>>(),
    }));
    Ok(())
}
