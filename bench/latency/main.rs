//! The latency and jitter harness of `cargo bench` (issues 9 and 19): loop timing, end-to-end
//! hops through ROS 2 for thymio-rt at its default configuration, the Python driver and a
//! zero-work floor against Aseba Playground, scaling with robots. Writes JSON and PNG plots to
//! `target/bench-results/` and the headline numbers to `target/bench-results/summary.json`.
//! `THYMIO_BENCH_QUICK=1` shortens every run.

mod e2e;
mod floor;
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

/// Environment variable naming the only end-to-end rows to run, comma-separated (e.g.
/// `thymio-rt,thymio-rt-record`: a row checked on its own); the idle and 8-robot CPU are left out.
pub const ONLY_ENV: &str = "THYMIO_BENCH_E2E_ROWS";

fn only_rows() -> Option<Vec<String>> {
    let v = std::env::var(ONLY_ENV)
        .ok()
        .filter(|v| !v.trim().is_empty())?;
    Some(v.split(',').map(|s| s.trim().to_owned()).collect())
}

/// Runs the end-to-end section: every driver against one Playground robot (a new one each window),
/// thymio-rt idle, and the CPU at 8 robots.
fn run_e2e(env: &e2e::Env, window: Duration, rounds: usize) -> Result<(), String> {
    // A Playground of its own for every window: nothing a driver leaves behind (its connections, a
    // robot reset at its exit or left half-loaded) reaches the next row's robot.
    let fresh_robot = || playground::start(&env.out.join("playground"), 1);
    // domains below the tests' 100..199, one per driver window
    let domain = 1 + std::process::id() % 40;
    let mut drivers = vec![
        (
            "thymio-rt",
            "default",
            e2e::Driver::ThymioRt {
                extra: Vec::new(),
                record: false,
            },
        ),
        ("floor", "zero-work r2r program", e2e::Driver::Floor),
        (
            "python",
            "ROS-Thymio-style Python driver",
            e2e::Driver::Python,
        ),
        (
            "thymio-rt-250us",
            "rt.period_us: 250",
            e2e::Driver::ThymioRt {
                extra: vec!["rt.period_us:=250".into()],
                record: false,
            },
        ),
        (
            "thymio-rt-record",
            "--record TEMPDIR/bench.mcap",
            e2e::Driver::ThymioRt {
                extra: Vec::new(),
                record: true,
            },
        ),
    ];
    // the ROS 1 front end (rospy client), when Debian's ROS 1 peers are installed
    let _master1 = match ros1::missing() {
        Some(reason) => {
            eprintln!("end to end: ROS 1 row skipped: {reason}");
            None
        }
        None => {
            let port = free_port()?;
            let m = ros1::master(port, &e2e::thymio_rt_params())?;
            drivers.push((
                "thymio-rt-ros1",
                "ROS 1 front end (--ros1), rospy client",
                e2e::Driver::ThymioRtRos1 { master: port },
            ));
            Some(m)
        }
    };
    let only = only_rows();
    if let Some(only) = &only {
        drivers.retain(|(label, ..)| only.iter().any(|o| o == label));
        if drivers.len() != only.len() {
            return Err(format!(
                "{ONLY_ENV}={only:?}: a name is not a row (or a row is not available here)"
            ));
        }
        eprintln!("end to end: only the rows {only:?} ({ONLY_ENV}); no idle or 8-robot CPU");
    }
    // rounds of every driver in turn, so that the load of a shared machine falls on all alike
    let mut measured: Vec<e2e::Measured> =
        drivers.iter().map(|_| e2e::Measured::default()).collect();
    for round in 0..rounds {
        for (i, (label, config, driver)) in drivers.iter().enumerate() {
            eprintln!(
                "end to end, round {}/{rounds}: {label} ({config}) for {} s",
                round + 1,
                window.as_secs()
            );
            let d = domain + (i * rounds + round) as u32 % 40;
            let pg = fresh_robot()?;
            measured[i].merge(e2e::measure(env, driver, label, pg.ports[0], window, d)?);
        }
    }
    // the tails of thymio-rt's odometry above the floor's p99 (the floor of the same ROS), sample by sample
    let floor_p99 = |ros1: bool| {
        drivers
            .iter()
            .zip(&measured)
            .filter(|((l, ..), _)| l.starts_with("floor") && l.contains("ros1") == ros1)
            .map(|(_, m)| (m.odom.hop().p99 * 1000.0) as u64)
            .next()
    };
    let mut rows = Vec::new();
    for ((label, config, driver), m) in drivers.iter().zip(&measured) {
        let (cmd_vel, odom) = (m.cmd_vel.hop(), m.odom.hop());
        let mut row = json!({
            "driver": label, "config": config, "extra": driver.is_extra(),
            "ros": if label.ends_with("ros1") { "ROS 1 (rospy)" } else { "ROS 2 (rclpy)" },
            "cmd_vel_to_wire_us": e2e::summary(&cmd_vel), "wire_to_odom_us": e2e::summary(&odom),
            "odom_fit": e2e::fit(&odom), "cpu": m.cpu(),
            "cdf": {"cmd_vel": cmd_vel.cdf, "odom": odom.cdf},
        });
        if let Some(r) = &m.recorded {
            row["recording"] = r.to_json();
        }
        if !m.traces.is_empty() {
            let ros1 = label.contains("ros1");
            let threshold = floor_p99(ros1)
                .or_else(|| floor_p99(false))
                .unwrap_or((odom.p99 * 1000.0) as u64);
            row["tails"] = tails::attribute(&m.odom, &m.traces, threshold);
        }
        rows.push(row);
    }
    for (hop, title) in [
        (
            "cmd_vel",
            "cmd_vel published (rclpy) -> set_speed on the wire",
        ),
        ("odom", "odometry on the wire -> odom received (rclpy)"),
    ] {
        let series: Vec<(String, Vec<(f64, f64)>)> = rows
            .iter()
            .map(|r| {
                let cdf = serde_json::from_value(r["cdf"][hop].clone()).unwrap_or_default();
                (
                    format!(
                        "{} ({})",
                        r["driver"].as_str().unwrap_or(""),
                        r["config"].as_str().unwrap_or("")
                    ),
                    cdf,
                )
            })
            .collect();
        plot::cdf(&format!("e2e_{hop}"), title, "µs", &series);
    }
    write_json("e2e", &json!({"rows": rows}));
    write_e2e_summary(&rows, window, rounds, json!(null), json!(null));
    // CPU only: a shorter window is enough; the rows above are kept if this part fails
    if only.is_some() {
        return Ok(());
    }
    let short = window.min(Duration::from_secs(60));
    eprintln!("end to end: thymio-rt idle for {} s", short.as_secs());
    let cpu = fresh_robot().and_then(|pg| {
        let idle = e2e::idle(env, pg.ports[0], short, domain + 45)?;
        drop(pg);
        eprintln!("end to end: 8 robots for {} s", short.as_secs());
        let (ours8, python8) = e2e::eight_robots(env, &env.out, short, domain + 46)?;
        Ok((idle, ours8, python8))
    });
    match cpu {
        Ok((idle, ours8, python8)) => {
            write_e2e_summary(
                &rows,
                window,
                rounds,
                json!(idle),
                json!({"thymio_rt": ours8, "python": python8}),
            );
            Ok(())
        }
        Err(e) => {
            let failed = json!({ "failed": e });
            write_e2e_summary(&rows, window, rounds, failed.clone(), failed);
            Err(format!("idle and 8-robot CPU (the rows are written): {e}"))
        }
    }
}

/// Writes the end-to-end part of summary.json: `rows` (without their CDFs), the idle and 8-robot CPU
/// (`null` when not measured, `{"failed": why}` when their measurement failed).
fn write_e2e_summary(
    rows: &[serde_json::Value],
    window: Duration,
    rounds: usize,
    idle: serde_json::Value,
    cpu_8: serde_json::Value,
) {
    let rows: Vec<serde_json::Value> = rows
        .iter()
        .map(|r| {
            let mut r = r.clone();
            r.as_object_mut().map(|o| o.remove("cdf"));
            r
        })
        .collect();
    update_summary(json!({"e2e": {
        "robot": "Aseba Playground (headless), one Thymio-II, 100 Hz odometry",
        "client": "rclpy: cmd_vel at 20 Hz, odom received",
        "window_s": window.as_secs(),
        "rounds": rounds,
        "thymio_rt_commit": commit(),
        "rows": rows,
        "idle_cpu": idle,
        "cpu_8_robots": cpu_8,
        "notes": e2e_notes(),
    }}));
}

/// The commit the measured thymio-rt was built from (`+dirty` with uncommitted changes).
fn commit() -> String {
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .args(args)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
            .unwrap_or_default()
    };
    let head = git(&["rev-parse", "--short", "HEAD"]);
    let dirty = !git(&["status", "--porcelain", "--untracked-files=no"]).is_empty();
    format!("{head}{}", if dirty { "+dirty" } else { "" })
}

/// How the end-to-end rows were taken, for the README table.
fn e2e_notes() -> Vec<String> {
    vec![
        format!(
            "thymio-rt (default): `thymio-rt run --target tcp:host=127.0.0.1;port=<relay>` with the built-in \
             configuration and only what this robot needs: `-p {}` (Playground's Thymio cannot compile the \
             firmware-14 script) and `-p {}` (odometry at 100 Hz for every driver, the issue's workload; the \
             shipped default is 20 Hz); `--switch-port <free port>` keeps the Aseba switch on, off the shared \
             33333. Extra rows add the setting they name.",
            e2e::thymio_rt_params()[0],
            e2e::thymio_rt_params()[1]
        ),
        "Python driver: bench/baseline/ (rclpy + thymiodirect, thread-safe dispatch to asyncio, TCP_NODELAY), \
         publishing odom and /tf only, the same script loaded beforehand. Floor: bench/latency/floor.rs, r2r, \
         one frame written per cmd_vel, one Odometry published per odometry frame, nothing else."
            .into(),
        "Every window runs against a new Aseba Playground (started, its robot answering, before the driver): \
         nothing a driver leaves behind reaches the next one. Wire stamps: CLOCK_MONOTONIC in the relay (bench/latency/relay.rs); client stamps: \
         time.monotonic_ns() before publish and in the odom callback. Matching (bench/latency/matching.rs): \
         cmd_vel by the change of wheel targets it causes; odom by order, aligned on the distance moved. \
         CPU: utime + stime (/proc/<pid>/stat) of the driver and its descendants over the window. Idle: \
         thymio-rt (default) with the robot connected and no ROS client; the robot's script still sends its \
         events (100 Hz odometry, sensors)."
            .into(),
        "Recording row (issue 28): thymio-rt (default) plus `--record TEMPDIR/bench.mcap`, the flight recorder \
         (RT inputs, frames and every published topic) into a new temporary directory per window, deleted after \
         it; each recording is checked first (the driver's summary `flight recorder: N message(s)` with N > 0, \
         nothing dropped, not stopped early; the file an MCAP file) and a failed one is marked in the row."
            .into(),
        "ROS 1 row: the same driver with `--ros1 --no-ros` (its own TCPROS, no ROS 2), registered with \
         Debian's rosmaster on loopback, the parameters above set on its parameter server \
         (`/asebaros/script/path`, …); client bench/latency/e2e_client_ros1.py (rospy, TCP_NODELAY asked on both \
         connections), the same cmd_vel pattern and stamps."
            .into(),
    ]
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
    if let Ok(port) = std::env::var(floor::ENV) {
        let limit = std::env::var(FLOOR_LIMIT_ENV)
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(600);
        let port = port.parse().expect("THYMIO_BENCH_FLOOR: a port");
        if let Err(e) = floor::run(port, Duration::from_secs(limit)) {
            eprintln!("floor: {e}");
            std::process::exit(1);
        }
        return;
    }
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
        matching::self_check();
        tails::self_check();
        record::self_check();
        // quick: one 20 s window per driver; full: five rounds of 60 s each, interleaved
        let (window, rounds) = if quick() { (20, 1) } else { (60, 5) };
        let window = Duration::from_secs(window);
        match e2e_env() {
            Err(reason) => eprintln!("end to end: skipped: {reason}"),
            Ok(env) => {
                if let Err(e) = run_e2e(&env, window, rounds) {
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

/// The scaling curve of the RT thread: 1 to 64 simulated robots without ROS, 1 to 32 with the ROS 2 front end.
fn run_scale(env: &e2e::Env) -> Result<(), String> {
    let window = Duration::from_secs(if quick() { 5 } else { 20 });
    let mut points = Vec::new();
    for n in scale::ROBOTS {
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
    for (i, n) in scale::ROBOTS_ROS.into_iter().enumerate() {
        eprintln!("scale: {n} robots, ROS 2");
        // a failed point is marked and the curve goes on (the no-ROS points are already measured)
        ros_points.push(
            scale::point(
                &env.root,
                &env.driver,
                n,
                window,
                &env.out,
                Some(domain + i as u32),
            )
            .unwrap_or_else(|e| {
                eprintln!("  {n} robots (ros2): FAILED: {e}");
                json!({"robots": n, "failed": e})
            }),
        );
    }
    let one = &points[0]["cycle_ns"];
    write_json(
        "scale",
        &json!({"points": points, "ros_points": ros_points}),
    );
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
