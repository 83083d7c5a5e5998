//! The latency and jitter harness of `cargo bench` (issues 9, 19 and 29): loop timing, end-to-end
//! hops through ROS 2 and ROS 1 for thymio-rt at its default configuration, the Python driver and
//! zero-work and same-work floors against Aseba Playground, each with a slow (rclpy, rospy) and a fast (r2r,
//! tcpros) client (e2e_rows.rs), scaling with robots. Writes JSON and PNG plots to
//! `target/bench-results/` and the headline numbers to `target/bench-results/summary.json`.
//! `THYMIO_BENCH_QUICK=1` shortens every run; `THYMIO_BENCH_SCALE_ROS=1,32` runs only those ROS 2 scale points.

mod client;
mod client_ros1;
mod e2e;
mod e2e_rows;
mod floor;
mod floor_ros1;
mod floor_same;
mod floor_same_ros1;
mod floor_same_ros2;
mod idle;
mod kinds;
mod listener;
mod loop_timing;
mod matching;
mod playground;
mod plot;
mod procs;
mod record;
mod relay;
mod ros1;
mod scale;
mod tails;
mod topics;

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

/// Environment variable naming a thymio-rt binary to measure instead of building target/release/thymio-rt from
/// these sources (built with the ros2 and ros1 features).
const DRIVER_ENV: &str = "THYMIO_BENCH_DRIVER";

/// The end-to-end environment, or why it is missing.
fn e2e_env() -> Result<e2e::Env, String> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let python = root.join(".venv-ros/bin/python");
    if !cfg!(feature = "ros2") {
        return Err("the benches were built without --features ros2 (the floor needs r2r)".into());
    }
    if std::process::Command::new("asebaplayground")
        .arg("--help")
        .output()
        .is_err()
    {
        return Err("Aseba Playground is not installed: run scripts/setup-aseba-peers.sh".into());
    }
    if !python.exists() || std::env::var("AMENT_PREFIX_PATH").is_err() {
        return Err("the ROS 2 environment is not set: run scripts/setup-ros2.sh and source scripts/ros2-env.sh".into());
    }
    // another build of the driver (e.g. an older commit's, for a before/after comparison): used as it is
    if let Some(driver) = std::env::var_os(DRIVER_ENV) {
        let driver = PathBuf::from(driver);
        if !driver.is_file() {
            return Err(format!("{DRIVER_ENV}={}: not a file", driver.display()));
        }
        eprintln!("the driver under test: {} ({DRIVER_ENV})", driver.display());
        return Ok(e2e::Env {
            root,
            driver,
            python,
            out: results_dir(),
        });
    }
    // the driver under test: the same sources, with the ROS 2 bridge
    let status = std::process::Command::new(env!("CARGO"))
        .args([
            "build",
            "--release",
            "--features",
            "ros2,ros1",
            "--bin",
            "thymio-rt",
        ])
        .current_dir(&root)
        .status()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if !status.success() {
        return Err("building thymio-rt with the ros2 and ros1 features failed".into());
    }
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"));
    let driver = target.join("release/thymio-rt");
    Ok(e2e::Env {
        root,
        driver,
        python,
        out: results_dir(),
    })
}

/// Environment variable giving the floor's time limit (seconds) when the bench re-executes itself
/// as the floor.
pub const FLOOR_LIMIT_ENV: &str = "THYMIO_BENCH_FLOOR_LIMIT";

/// A free TCP port on loopback.
pub fn free_port() -> Result<u16, String> {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| format!("no free port: {e}"))
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

/// The floors and the fast clients are this binary re-executed with their environment variable set: runs the one
/// asked for, if any, and exits.
fn run_helper() {
    type Floor = fn(u16, Duration) -> Result<(), String>;
    let floors: [(&str, &str, Floor); 4] = [
        (floor::ENV, "floor", floor::run),
        (floor_ros1::ENV, "ROS 1 floor", floor_ros1::run),
        (
            floor_same_ros2::ENV,
            "same-work floor",
            floor_same_ros2::run,
        ),
        (
            floor_same_ros1::ENV,
            "ROS 1 same-work floor",
            floor_same_ros1::run,
        ),
    ];
    for (var, name, run) in floors {
        let Ok(port) = std::env::var(var) else {
            continue;
        };
        let limit = std::env::var(FLOOR_LIMIT_ENV)
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(600);
        let result = port
            .parse()
            .map_err(|e| format!("{var}={port}: not a port: {e}"))
            .and_then(|port| run(port, Duration::from_secs(limit)));
        if let Err(e) = result {
            eprintln!("{name}: {e}");
            std::process::exit(1);
        }
        std::process::exit(0);
    }
    if let Ok(kind) = std::env::var(client::ENV) {
        if let Err(e) = client_main(&kind) {
            eprintln!("{kind} client: {e}");
            std::process::exit(1);
        }
        std::process::exit(0);
    }
}

fn main() {
    run_helper();
    if !cfg!(feature = "ros2") {
        eprintln!(
            "note: benches built without --features ros2: cargo has replaced target/release/thymio-rt with a \
             driver that has no ROS 2 bridge (scripts/bench.sh builds them with the same features as scripts/run.sh)"
        );
    }
    // `cargo bench` passes `--bench`; filters select sections: loop, e2e, topics, idle, scale
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
        matching::self_check();
        tails::self_check();
        record::self_check();
        // quick: one 20 s window per driver; full: five rounds of 60 s each, interleaved
        let (window, rounds) = if quick() { (20, 1) } else { (60, 5) };
        let window = Duration::from_secs(window);
        match e2e_env() {
            Err(reason) => eprintln!("end to end: skipped: {reason}"),
            Ok(env) => {
                if let Err(e) = e2e_rows::run(&env, window, rounds) {
                    eprintln!("end to end: failed: {e}");
                    std::process::exit(1);
                }
            }
        }
    }
    if want("topics") {
        // the same-work floors' topics against the driver's (bench/latency/topics.rs)
        match e2e_env() {
            Err(reason) => eprintln!("topics: skipped: {reason}"),
            Ok(env) => {
                if let Err(e) = topics::run(&env) {
                    eprintln!("topics: failed: {e}");
                    std::process::exit(1);
                }
            }
        }
    }
    if want("idle") {
        // quick: 20 s a rate; full: 60 s
        match e2e_env() {
            Err(reason) => eprintln!("idle: skipped: {reason}"),
            Ok(env) => {
                if let Err(e) = idle::run(&env, Duration::from_secs(if quick() { 20 } else { 60 }))
                {
                    eprintln!("idle: failed: {e}");
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

/// Environment variable selecting some ROS 2 points of the scaling curve only (robot counts, comma-separated).
const SCALE_ROS_ENV: &str = "THYMIO_BENCH_SCALE_ROS";

/// The scaling curve of the RT thread: 1 to 64 simulated robots without ROS, 1 to 32 with the ROS 2 front end.
fn run_scale(env: &e2e::Env) -> Result<(), String> {
    let window = Duration::from_secs(if quick() { 5 } else { 20 });
    // the ROS points compare odometry p99 across robot counts: one robot at 100 Hz gives 2 000 samples in 20 s,
    // whose p99 moved by ±1 ms from run to run; 60 s gives three times as many
    let ros_window = Duration::from_secs(if quick() { 5 } else { 60 });
    let mut points = Vec::new();
    // `THYMIO_BENCH_SCALE_ROS=1,32`: only those ROS 2 points (e.g. a before/after comparison of the publisher)
    let only_ros: Option<Vec<usize>> = std::env::var(SCALE_ROS_ENV)
        .ok()
        .map(|v| v.split(',').filter_map(|n| n.trim().parse().ok()).collect());
    let no_ros = if only_ros.is_some() {
        &[][..]
    } else {
        &scale::ROBOTS[..]
    };
    for &n in no_ros {
        eprintln!("scale: {n} robots, no ROS");
        points.push(scale::point(
            &env.root,
            &env.driver,
            n,
            window,
            &env.out,
            None,
        )?);
    }
    // domains above the end-to-end section's
    let domain = 50 + std::process::id() % 40;
    let mut ros_points = Vec::new();
    let ros_robots = only_ros.unwrap_or_else(|| scale::ROBOTS_ROS.to_vec());
    for (i, n) in ros_robots.into_iter().enumerate() {
        eprintln!("scale: {n} robots, ROS 2");
        // a failed point is marked and the curve goes on (the no-ROS points are already measured)
        ros_points.push(
            scale::point(
                &env.root,
                &env.driver,
                n,
                ros_window,
                &env.out,
                Some(domain + i as u32),
            )
            .unwrap_or_else(|e| {
                eprintln!("  {n} robots (ros2): FAILED: {e}");
                json!({"robots": n, "failed": e})
            }),
        );
    }
    write_json(
        "scale",
        &json!({"points": points, "ros_points": ros_points}),
    );
    let Some(one) = points.first().map(|p| &p["cycle_ns"]) else {
        // only some ROS points (scale.json): the summary stays as it was
        return Ok(());
    };
    let brief = |p: &serde_json::Value| match p.get("failed") {
        Some(f) => json!({"robots": p["robots"], "failed": f}),
        None => json!({"robots": p["robots"], "cpu": p["cpu"], "p99_us": p["p99_us"],
               "rt_cpu_per_robot": p["rt_cpu_per_robot"], "threads": p["threads"],
               "odom_p99_us": p["odom_wire_to_published_p99_us"]}),
    };
    update_summary(json!({
        "rt_cycle_ns": {"p50": one["p50"], "p999": one["p999"]},
        "scale": points.iter().map(brief).collect::<Vec<_>>(),
        "scale_ros": ros_points.iter().map(brief).collect::<Vec<_>>(),
    }));
    Ok(())
}

/// Runs the client `kind` with the command line's arguments (the bench binary re-executed with [`kinds::CLIENT_ENV`]).
fn client_main(kind: &str) -> Result<(), String> {
    if kind == listener::KIND {
        return listener::main();
    }
    let args = client::Args::parse(std::env::args().skip(1))?;
    match kind {
        kinds::R2R => client::run_r2r(&args),
        client_ros1::KIND => client_ros1::run(&args),
        _ => Err(format!("{}={kind}: not a client kind", kinds::CLIENT_ENV)),
    }
}
