//! The rows of the end-to-end section (which driver, configuration and ROS client each), their run in interleaved
//! rounds, the plots, and the end-to-end part of summary.json with the notes the table of docs/performance.md prints.
//!
//! Each driver row has a client ([`Client`]): the rclpy and rospy clients, whose own cost (hundreds of µs a
//! message) is in every row alike, and the fast ones (r2r, tcpros: bench/latency/client.rs, client_ros1.rs),
//! which show what the drivers themselves add. A row measured with a fast client is labelled `<driver>/<client>`
//! (`thymio-rt/r2r`, `floor-ros1/tcpros`); the rclpy and rospy rows keep their labels.

use crate::e2e::{self, Client, Driver, Row};
use crate::{playground, plot, ros1, update_summary, write_json};
use serde_json::json;
use std::time::Duration;

/// Environment variable naming the only end-to-end rows to run, comma-separated (e.g.
/// `thymio-rt,thymio-rt-record`: a row checked on its own); the idle and 8-robot CPU are left out.
pub const ONLY_ENV: &str = "THYMIO_BENCH_E2E_ROWS";

fn only_rows() -> Option<Vec<String>> {
    let v = std::env::var(ONLY_ENV)
        .ok()
        .filter(|v| !v.trim().is_empty())?;
    Some(v.split(',').map(|s| s.trim().to_owned()).collect())
}

fn row(label: &str, config: &'static str, driver: Driver, client: Client) -> Row {
    Row {
        label: label.into(),
        config,
        driver,
        client,
    }
}

/// The configuration of the same-work floors' rows (bench/latency/floor_same.rs).
const SAME_R2R: &str = "same-work r2r program: the driver's topics from the same frames";
const SAME_ROS1: &str = "same-work ROS 1 program: the driver's topics from the same frames";

/// Every row: ROS 2 with rclpy (the headline rows first, then the extra configurations), ROS 2 with r2r, then
/// with `master` (a rosmaster's port, when ROS 1 can run here) ROS 1 with rospy and with the TCPROS client.
pub fn all(master: Option<u16>) -> Vec<Row> {
    let ours = || Driver::ThymioRt {
        extra: Vec::new(),
        record: false,
    };
    let mut rows = vec![
        row("thymio-rt", "default", ours(), Client::Rclpy),
        row(
            "floor",
            "zero-work r2r program",
            Driver::Floor,
            Client::Rclpy,
        ),
        row("floor-same", SAME_R2R, Driver::FloorSame, Client::Rclpy),
        row(
            "python",
            "ROS-Thymio-style Python driver",
            Driver::Python,
            Client::Rclpy,
        ),
        row(
            "thymio-rt-250us",
            "rt.period_us: 250",
            Driver::ThymioRt {
                extra: vec!["rt.period_us:=250".into()],
                record: false,
            },
            Client::Rclpy,
        ),
        row(
            "thymio-rt-record",
            "--record TEMPDIR/bench.mcap",
            Driver::ThymioRt {
                extra: Vec::new(),
                record: true,
            },
            Client::Rclpy,
        ),
        row("thymio-rt/r2r", "default", ours(), Client::R2r),
        // issue 29's tails: the odometry publisher beside the RT thread (the default) or free on any CPU
        row(
            "thymio-rt-free-pub/r2r",
            "rt.publisher_priority: 0 (odometry publisher on any CPU)",
            Driver::ThymioRt {
                extra: vec!["rt.publisher_priority:=0".into()],
                record: false,
            },
            Client::R2r,
        ),
        row(
            "floor/r2r",
            "zero-work r2r program",
            Driver::Floor,
            Client::R2r,
        ),
        row("floor-same/r2r", SAME_R2R, Driver::FloorSame, Client::R2r),
        row(
            "python/r2r",
            "ROS-Thymio-style Python driver",
            Driver::Python,
            Client::R2r,
        ),
    ];
    if let Some(master) = master {
        let front = || Driver::ThymioRtRos1 { master };
        let floor = || Driver::FloorRos1 { master };
        let same = || Driver::FloorSameRos1 { master };
        rows.extend([
            row(
                "thymio-rt-ros1",
                "ROS 1 front end (--ros1)",
                front(),
                Client::Rospy,
            ),
            row(
                "floor-ros1",
                "zero-work ROS 1 program",
                floor(),
                Client::Rospy,
            ),
            row("floor-same-ros1", SAME_ROS1, same(), Client::Rospy),
            row(
                "thymio-rt-ros1/tcpros",
                "ROS 1 front end (--ros1)",
                front(),
                Client::Tcpros,
            ),
            row(
                "floor-ros1/tcpros",
                "zero-work ROS 1 program",
                floor(),
                Client::Tcpros,
            ),
            row("floor-same-ros1/tcpros", SAME_ROS1, same(), Client::Tcpros),
        ]);
    }
    rows
}

/// Runs the end-to-end section: every row against one Playground robot (a new one each window),
/// thymio-rt idle, and the CPU at 8 robots.
pub fn run(env: &e2e::Env, window: Duration, rounds: usize) -> Result<(), String> {
    // A Playground of its own for every window: nothing a driver leaves behind (its connections, a
    // robot reset at its exit or left half-loaded) reaches the next row's robot.
    let fresh_robot = || playground::start(&env.out.join("playground"), 1);
    // domains below the tests' 100..199, one per driver window
    let domain = 1 + std::process::id() % 40;
    // the ROS 1 rows, when Debian's rosmaster (and rospy) are installed
    let (master, _master1) = match ros1::missing() {
        Some(reason) => {
            eprintln!("end to end: ROS 1 rows skipped: {reason}");
            (None, None)
        }
        None => {
            let port = crate::free_port()?;
            (
                Some(port),
                Some(ros1::master(port, &e2e::thymio_rt_params())?),
            )
        }
    };
    let mut rows = all(master);
    let only = only_rows();
    if let Some(only) = &only {
        rows.retain(|r| only.contains(&r.label));
        if rows.len() != only.len() {
            return Err(format!(
                "{ONLY_ENV}={only:?}: a name is not a row (or a row is not available here)"
            ));
        }
        eprintln!("end to end: only the rows {only:?} ({ONLY_ENV}); no idle or 8-robot CPU");
    }
    // rounds of every row in turn, so that the load of a shared machine falls on all alike
    let mut measured: Vec<e2e::Measured> = rows.iter().map(|_| e2e::Measured::default()).collect();
    // a window that fails is taken again once (a new robot, another domain); one that fails twice is left out of
    // its row, which says so, and the run goes on: one bad window no longer loses an hour of measurements
    let mut failed: Vec<Vec<String>> = rows.iter().map(|_| Vec::new()).collect();
    for round in 0..rounds {
        for (i, r) in rows.iter().enumerate() {
            eprintln!(
                "end to end, round {}/{rounds}: {} ({}, {} client) for {} s",
                round + 1,
                r.label,
                r.config,
                r.client.name(),
                window.as_secs()
            );
            let d = domain + (i * rounds + round) as u32 % 40;
            let attempt = |d: u32| -> Result<e2e::Measured, String> {
                let pg = fresh_robot()?;
                e2e::measure(env, r, pg.ports[0], window, d)
            };
            let got = attempt(d).or_else(|e| {
                eprintln!("  {}: window failed ({e}); taking it again", r.label);
                attempt(domain + 40 + (i * rounds + round) as u32 % 40)
            });
            match got {
                Ok(m) => measured[i].merge(m),
                Err(e) => {
                    eprintln!(
                        "  {}: window failed twice ({e}); left out of the row",
                        r.label
                    );
                    failed[i].push(format!("round {}: {e}", round + 1));
                }
            }
        }
    }
    // the tails of thymio-rt's odometry above the floor's p99 (the floor measured with the same client), sample
    // by sample (tails.rs)
    let floor_p99 = |client: &str| {
        rows.iter()
            .zip(&measured)
            .find(|(r, m)| {
                matches!(r.driver, Driver::Floor | Driver::FloorRos1 { .. })
                    && r.client.name() == client
                    && m.any()
            })
            .map(|(_, m)| (m.odom.hop().p99 * 1000.0) as u64)
    };
    let mut out = Vec::new();
    for (i, (r, m)) in rows.iter().zip(&measured).enumerate() {
        let mut row = json!({
            "driver": r.label, "config": r.config, "extra": r.driver.is_extra(),
            "ros": r.client.ros(), "client": r.client.name(),
        });
        if !m.any() {
            row["failed"] = json!(failed[i]);
            out.push(row);
            continue;
        }
        let (cmd_vel, odom) = (m.cmd_vel.hop(), m.odom.hop());
        row["cmd_vel_to_wire_us"] = e2e::summary(&cmd_vel);
        row["wire_to_odom_us"] = e2e::summary(&odom);
        row["odom_fit"] = e2e::fit(&odom);
        row["cpu"] = json!(m.cpu());
        row["cdf"] = json!({"cmd_vel": cmd_vel.cdf, "odom": odom.cdf});
        if let Some(rec) = &m.recorded {
            row["recording"] = rec.to_json();
        }
        if !failed[i].is_empty() {
            row["failed_windows"] = json!(failed[i]);
        }
        if !m.traces.is_empty() {
            let threshold = floor_p99(r.client.name()).unwrap_or((odom.p99 * 1000.0) as u64);
            row["tails"] = crate::tails::attribute(&m.odom, &m.traces, threshold);
        }
        out.push(row);
    }
    plots(&rows, &out);
    write_json("e2e", &json!({"rows": out}));
    write_summary(&rows, &out, window, rounds, json!(null), json!(null));
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
            let eight = json!({"thymio_rt": ours8, "python": python8});
            write_summary(&rows, &out, window, rounds, json!(idle), eight);
            Ok(())
        }
        Err(e) => {
            let failed = json!({ "failed": e });
            write_summary(&rows, &out, window, rounds, failed.clone(), failed);
            Err(format!("idle and 8-robot CPU (the rows are written): {e}"))
        }
    }
}

/// The clients of `rows`, in order, once each (`rclpy, r2r`).
fn clients(rows: &[Row]) -> String {
    let mut names: Vec<&str> = Vec::new();
    for r in rows {
        if !names.contains(&r.client.name()) {
            names.push(r.client.name());
        }
    }
    names.join(", ")
}

/// The CDF plots of both hops, one line per row.
fn plots(rows: &[Row], out: &[serde_json::Value]) {
    let clients = clients(rows);
    for (hop, title) in [
        (
            "cmd_vel",
            format!("cmd_vel published (client: {clients}) -> set_speed on the wire"),
        ),
        (
            "odom",
            format!("odometry on the wire -> odom received (client: {clients})"),
        ),
    ] {
        let series: Vec<(String, Vec<(f64, f64)>)> = out
            .iter()
            .map(|r| {
                let cdf = serde_json::from_value(r["cdf"][hop].clone()).unwrap_or_default();
                let (driver, config) = (r["driver"].as_str(), r["config"].as_str());
                let name = format!("{} ({})", driver.unwrap_or(""), config.unwrap_or(""));
                (name, cdf)
            })
            .collect();
        plot::cdf(&format!("e2e_{hop}"), &title, "µs", &series);
    }
}

/// Writes the end-to-end part of summary.json: `out` (the rows' JSON, without their CDFs), the idle and 8-robot
/// CPU (`null` when not measured, `{"failed": why}` when their measurement failed).
fn write_summary(
    rows: &[Row],
    out: &[serde_json::Value],
    window: Duration,
    rounds: usize,
    idle: serde_json::Value,
    cpu_8: serde_json::Value,
) {
    let out: Vec<serde_json::Value> = out
        .iter()
        .map(|r| {
            let mut r = r.clone();
            r.as_object_mut().map(|o| o.remove("cdf"));
            r
        })
        .collect();
    update_summary(json!({"e2e": {
        "robot": "Aseba Playground (headless), one Thymio-II, 100 Hz odometry",
        "client": format!("{}: cmd_vel at 20 Hz, odom received", clients(rows)),
        "window_s": window.as_secs(),
        "rounds": rounds,
        "thymio_rt_commit": commit(),
        "rows": out,
        "idle_cpu": idle,
        "cpu_8_robots": cpu_8,
        "same_work_cpu": same_work_cpu(rows, &out),
        "notes": notes(),
    }}));
}

/// thymio-rt's CPU (default configuration, each front end and client) against the same-work floor's of the same
/// client: `[{"row", "floor", "cpu", "floor_cpu", "ratio"}]`, the rows both measured.
fn same_work_cpu(rows: &[Row], out: &[serde_json::Value]) -> serde_json::Value {
    let cpu = |i: usize| out[i]["cpu"].as_f64();
    let pairs = rows.iter().enumerate().filter_map(|(i, r)| {
        let ours = matches!(&r.driver, Driver::ThymioRt { extra, record } if extra.is_empty() && !*record)
            || matches!(r.driver, Driver::ThymioRtRos1 { .. });
        if !ours {
            return None;
        }
        let f = rows.iter().position(|f| {
            matches!(f.driver, Driver::FloorSame | Driver::FloorSameRos1 { .. })
                && f.client == r.client
        })?;
        let (c, fc) = (cpu(i)?, cpu(f)?);
        eprintln!(
            "  same-work floor: {} {:.2}% vs {} {:.2}% of a core ({:.2}×)",
            r.label,
            c * 100.0,
            rows[f].label,
            fc * 100.0,
            c / fc
        );
        Some(json!({"row": r.label, "floor": rows[f].label, "cpu": c, "floor_cpu": fc, "ratio": c / fc}))
    });
    json!(pairs.collect::<Vec<_>>())
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

/// How the end-to-end rows were taken, for the table of docs/performance.md.
fn notes() -> Vec<String> {
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
         nothing a driver leaves behind reaches the next one. Wire stamps: CLOCK_MONOTONIC in the relay \
         (bench/latency/relay.rs); client stamps: CLOCK_MONOTONIC just before each publish and as each odom \
         message is taken (rclpy, rospy: time.monotonic_ns() in the callback). Matching \
         (bench/latency/matching.rs): cmd_vel by the change of wheel targets it causes; odom by order, aligned \
         on the distance moved. CPU: utime + stime (/proc/<pid>/stat) of the driver and its descendants over \
         the window. Idle: thymio-rt (default) with the robot connected and no ROS client; the robot's script \
         still sends its events (100 Hz odometry, sensors). CPU at 8 robots and the scale points with ROS 2: \
         no client but one /tf listener (bench/latency/listener.rs, r2r), since thymio-rt publishes odometry \
         only while someone listens; the Python drivers get the same listener."
            .into(),
        "Clients: each row names its own; the rows of one client compare with each other. rclpy \
         (bench/latency/e2e_client.py) and rospy (e2e_client_ros1.py) cost hundreds of µs a message \
         themselves, in every row alike; the fast clients show what a driver adds: r2r \
         (bench/latency/client.rs: one thread woken by rcl's wait set, odom taken in rcl's native form, \
         cmd_vel published from a native message) and tcpros (client_ros1.rs: the driver's own ROS 1 transport, nrt-ros1's net, as the \
         ROS 1 floor, so fast but not independent of the front end it measures; one thread on a current-thread \
         tokio runtime, TCP_NODELAY on both connections). Every client publishes the same cmd_vel pattern at 20 Hz and subscribes odom (ROS 2: \
         best effort, depth 1000)."
            .into(),
        "Recording row (issue 28): thymio-rt (default) plus `--record TEMPDIR/bench.mcap`, the flight recorder \
         (RT inputs, frames and every published topic) into a new temporary directory per window, deleted after \
         it; each recording is checked first (the driver's summary `flight recorder: N message(s)` with N > 0, \
         nothing dropped, not stopped early; the file an MCAP file) and a failed one is marked in the row."
            .into(),
        "ROS 1 rows: the same driver with `--ros1 --no-ros` (its own TCPROS, no ROS 2), registered with \
         Debian's rosmaster on loopback, the parameters above set on its parameter server \
         (`/asebaros/script/path`, …); clients rospy (TCP_NODELAY asked on both connections) and tcpros. \
         ROS 1 floor: bench/latency/floor_ros1.rs, floor.rs's two hops on the driver's own ROS 1 transport \
         (nrt-ros1's net), nothing else."
            .into(),
        "Same-work floors (issue 45; rows floor-same*, summary's same_work_cpu): bench/latency/floor_same.rs, \
         floor.rs's cmd_vel hop and, from every event frame, what thymio-rt at its defaults publishes from it: odom, \
         /tf (odom → base_link and the two wheel links), joint_states, proximity/<name> ×7 and proximity/laser, \
         ground/<name> ×2, imu, temperature, sound, tap, remote, buttons, buttons/<name> ×5, comm/rx, the same \
         message types and frames; events decoded the simple way (no calibration) into one message per topic made \
         once and refilled (ROS 2: rcl's native form, publish_native; ROS 1: nrt-ros1's net). As the driver, on \
         ROS 2 the REP-117 sensor topics (proximity, laser, ground, imu, temperature) are published only while they \
         have a subscriber (the rows' clients subscribe odom only: neither publishes them there), on ROS 1 always. \
         The zero-work floors compare the transport; these compare thymio-rt's CPU with a program doing its work."
            .into(),
    ]
}
