//! End-to-end hops with real ROS (a client in another process: [`Client`]) for each driver under
//! test — thymio-rt, the Python driver, the zero-work and same-work floors — one after the other in the same
//! run, against the same Aseba Playground robot, through the same timestamping relay, with a
//! client publishing `cmd_vel` at 20 Hz and receiving `odom`:
//! (a) `cmd_vel` published → `set_speed` frame on the wire (driver → robot);
//! (b) odometry frame on the wire (robot → driver) → `odom` received.
//! The driver's CPU use (process and descendants, /proc/<pid>/stat) is taken over the same window.
//! Which driver runs with which client: e2e_rows.rs.

use crate::matching::{self, Hop, Matched};
use crate::procs::Proc;
use crate::record::{Recorded, TempRecording};
use crate::relay::Relay;
use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// Event ids of the driver script (config/aseba/thymio_ros_playground.aesl).
const SET_SPEED: u16 = 1;
pub use crate::kinds::{ros_env, ODOMETRY};

/// Where things are.
pub struct Env {
    pub root: PathBuf,
    /// thymio-rt built with the `ros2` feature.
    pub driver: PathBuf,
    /// The venv's python (rclpy, thymiodirect).
    pub python: PathBuf,
    pub out: PathBuf,
}

/// One row: its label, its configuration (the table's parenthesis), the driver, the client.
pub struct Row {
    /// The row's name (`THYMIO_BENCH_E2E_ROWS`, the `driver` field, file names).
    pub label: String,
    /// What it runs, for the table.
    pub config: &'static str,
    /// The driver under test.
    pub driver: Driver,
    /// The ROS client publishing `cmd_vel` and receiving `odom`.
    pub client: Client,
}

/// One driver under test.
pub enum Driver {
    /// thymio-rt with the ROS 2 bridge: the built-in configuration, the ROS parameters every
    /// run needs ([`thymio_rt_params`]) and `extra` ones (a non-default row); with `record`, the
    /// flight recorder on (`--record` into a temporary directory of each window, checked and
    /// deleted after it: [`crate::record`]).
    ThymioRt { extra: Vec<String>, record: bool },
    /// The ROS-Thymio-style Python driver (bench/baseline/).
    Python,
    /// The zero-work r2r program (bench/latency/floor.rs).
    Floor,
    /// thymio-rt with the ROS 1 front end only (`--ros1 --no-ros`), registered with the master on `master`
    /// (whose parameter server holds [`thymio_rt_params`]).
    ThymioRtRos1 { master: u16 },
    /// The zero-work ROS 1 program (bench/latency/floor_ros1.rs), registered with the master on `master`.
    FloorRos1 { master: u16 },
    /// The same-work r2r program (bench/latency/floor_same_ros2.rs): what thymio-rt publishes from the frames.
    FloorSame,
    /// The same-work ROS 1 program (bench/latency/floor_same_ros1.rs), registered with the master on `master`.
    FloorSameRos1 { master: u16 },
}

/// The ROS client of a row: publishes `cmd_vel` at 20 Hz and receives `odom` (bench/latency/client.rs says the
/// contract), in another process than the driver.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Client {
    /// rclpy: bench/latency/e2e_client.py.
    Rclpy,
    /// r2r: bench/latency/client.rs, the bench binary re-executed.
    R2r,
    /// Debian's rospy: bench/latency/e2e_client_ros1.py.
    Rospy,
    /// The driver's own TCPROS transport (nrt-ros1's `net`, as the ROS 1 floor): bench/latency/client_ros1.rs, the
    /// bench binary re-executed.
    Tcpros,
}

impl Client {
    /// Its name (the rows' `client` field).
    pub fn name(self) -> &'static str {
        match self {
            Client::Rclpy => "rclpy",
            Client::R2r => crate::kinds::R2R,
            Client::Rospy => "rospy",
            Client::Tcpros => crate::kinds::TCPROS,
        }
    }

    /// The rows' `ros` field: `ROS 2 (rclpy)`.
    pub fn ros(self) -> String {
        let ros = match self {
            Client::Rclpy | Client::R2r => "ROS 2",
            Client::Rospy | Client::Tcpros => "ROS 1",
        };
        format!("{ros} ({})", self.name())
    }

    /// The client's command, in ROS 2 domain `domain` or on the master of `driver` (a ROS 1 driver), without
    /// its arguments.
    fn command(self, env: &Env, driver: &Driver, domain: u32) -> Result<Command, String> {
        let master = match driver {
            Driver::ThymioRtRos1 { master }
            | Driver::FloorRos1 { master }
            | Driver::FloorSameRos1 { master } => Some(*master),
            _ => None,
        };
        let mut c = match self {
            Client::Rclpy => {
                let mut c = Command::new(&env.python);
                c.arg(env.root.join("bench/latency/e2e_client.py"));
                c
            }
            Client::Rospy => {
                let mut c = Command::new(crate::ros1::PYTHON);
                c.arg(env.root.join("bench/latency/e2e_client_ros1.py"));
                c
            }
            Client::R2r | Client::Tcpros => {
                let exe =
                    std::env::current_exe().map_err(|e| format!("the bench binary's path: {e}"))?;
                let mut c = Command::new(exe);
                c.env(crate::kinds::CLIENT_ENV, self.name());
                c
            }
        };
        match (self, master) {
            (Client::Rclpy | Client::R2r, None) => ros_env(&mut c, domain),
            (Client::Rospy | Client::Tcpros, Some(m)) => crate::ros1::env(&mut c, m),
            _ => {
                return Err(format!(
                    "the {} client cannot talk to this driver",
                    self.name()
                ))
            }
        }
        Ok(c)
    }
}

/// The ROS parameters thymio-rt needs on Aseba Playground beside its built-in configuration: the
/// Playground variant of the driver script (the firmware-14 one does not compile there) and
/// odometry at 100 Hz (the workload; the shipped default is 20 Hz).
pub fn thymio_rt_params() -> Vec<String> {
    vec![
        format!("script.path:={}", crate::playground::SCRIPT),
        format!(
            "script.constants.MOTOR_PERIOD:={}",
            crate::playground::MOTOR_PERIOD
        ),
    ]
}

/// thymio-rt run against `targets` for at most `limit`, with the built-in configuration and
/// `params`, recording into `record` and reporting into `report` if given. The Aseba switch stays on (as by default) but on a
/// free port: 33333 may be taken on a shared machine.
pub fn thymio_rt(
    env: &Env,
    targets: &[u16],
    params: &[String],
    limit: Duration,
    record: Option<&Path>,
    report: Option<&Path>,
) -> Result<Command, String> {
    let mut c = Command::new(&env.driver);
    c.args(["run", "--switch-port", &crate::free_port()?.to_string()])
        .args(["--duration", &limit.as_secs().to_string()]);
    if let Some(file) = record {
        c.arg("--record").arg(file);
    }
    if let Some(file) = report {
        c.arg("--report").arg(file);
    }
    for p in targets {
        c.args(["--target", &format!("tcp:host=127.0.0.1;port={p}")]);
    }
    c.arg("--ros-args");
    for p in params {
        c.args(["-p", p]);
    }
    Ok(c)
}

impl Driver {
    /// A thymio-rt row whose configuration is not the default one (never the headline).
    pub fn is_extra(&self) -> bool {
        matches!(self, Driver::ThymioRt { extra, record } if !extra.is_empty() || *record)
    }
}

/// Starts `driver` connected to the robot behind `relay_port` (the robot itself on `robot_port`,
/// for loading the script), in ROS domain `domain`, recording into `record` and reporting into `report`
/// (thymio-rt only); returns it once it is ready.
#[allow(clippy::too_many_arguments)]
pub fn start_driver(
    env: &Env,
    driver: &Driver,
    robot_port: u16,
    relay_port: u16,
    domain: u32,
    limit: Duration,
    record: Option<&Path>,
    report: Option<&Path>,
) -> Result<Proc, String> {
    let mut p = match driver {
        Driver::ThymioRt { extra, .. } => {
            let mut params = thymio_rt_params();
            params.extend(extra.iter().cloned());
            let mut c = thymio_rt(env, &[relay_port], &params, limit, record, report)?;
            ros_env(&mut c, domain);
            let mut p = Proc::spawn("thymio-rt", c);
            p.wait_for("driver interface ready", Duration::from_secs(60))?;
            return Ok(p);
        }
        Driver::ThymioRtRos1 { master } => {
            let mut c = Command::new(&env.driver);
            c.args(["run", "--ros1", "--no-ros"])
                .args(["--switch-port", &crate::free_port()?.to_string()])
                .args(["--duration", &limit.as_secs().to_string()])
                .args(["--target", &format!("tcp:host=127.0.0.1;port={relay_port}")]);
            if let Some(file) = report {
                c.arg("--report").arg(file);
            }
            crate::ros1::env(&mut c, *master);
            let mut p = Proc::spawn("thymio-rt --ros1", c);
            p.wait_for("driver interface ready", Duration::from_secs(60))?;
            return Ok(p);
        }
        Driver::Python => {
            crate::playground::load_driver_script(&env.driver, &[robot_port])?;
            let mut c = Command::new(&env.python);
            c.arg(env.root.join("bench/baseline/ros_thymio_baseline.py"))
                .args(["--port", &relay_port.to_string()])
                .args(["--duration", &limit.as_secs().to_string()]);
            ros_env(&mut c, domain);
            Proc::spawn("Python driver", c)
        }
        Driver::Floor | Driver::FloorSame => {
            let (var, name) = match driver {
                Driver::Floor => (crate::floor::ENV, "floor"),
                _ => (crate::floor_same_ros2::ENV, "same-work floor"),
            };
            crate::playground::load_driver_script(&env.driver, &[robot_port])?;
            let exe = std::env::current_exe().map_err(|e| e.to_string())?;
            let mut c = Command::new(exe);
            c.env(var, relay_port.to_string())
                .env(crate::FLOOR_LIMIT_ENV, limit.as_secs().to_string());
            ros_env(&mut c, domain);
            Proc::spawn(name, c)
        }
        Driver::FloorRos1 { master } | Driver::FloorSameRos1 { master } => {
            let (var, name) = match driver {
                Driver::FloorRos1 { .. } => (crate::floor_ros1::ENV, "ROS 1 floor"),
                _ => (crate::floor_same_ros1::ENV, "ROS 1 same-work floor"),
            };
            crate::playground::load_driver_script(&env.driver, &[robot_port])?;
            let exe = std::env::current_exe().map_err(|e| e.to_string())?;
            let mut c = Command::new(exe);
            c.env(var, relay_port.to_string())
                .env(crate::FLOOR_LIMIT_ENV, limit.as_secs().to_string());
            crate::ros1::env(&mut c, *master);
            Proc::spawn(name, c)
        }
    };
    p.wait_for("READY", Duration::from_secs(60))?;
    Ok(p)
}

/// What one driver did in one or more windows.
#[derive(Default)]
pub struct Measured {
    pub cmd_vel: Matched,
    pub odom: Matched,
    /// CPU seconds of the driver process and its descendants in the windows.
    pub cpu_s: f64,
    /// Length of the windows (s).
    pub wall_s: f64,
    /// The recordings of a row with the flight recorder on.
    pub recorded: Option<Recorded>,
    /// thymio-rt's slowest odometry samples, window by window (its `--report`).
    pub traces: Vec<crate::tails::WindowTraces>,
}

impl Measured {
    /// Whether any window was merged in.
    pub fn any(&self) -> bool {
        self.wall_s > 0.0
    }

    /// Adds another window.
    pub fn merge(&mut self, other: Measured) {
        self.cmd_vel.merge(other.cmd_vel);
        self.odom.merge(other.odom);
        self.cpu_s += other.cpu_s;
        self.wall_s += other.wall_s;
        self.traces.extend(other.traces);
        match (&mut self.recorded, other.recorded) {
            (Some(a), Some(b)) => a.merge(b),
            (a, b) => *a = a.take().or(b),
        }
    }

    /// Fraction of one core.
    pub fn cpu(&self) -> f64 {
        self.cpu_s / self.wall_s.max(1e-9)
    }
}

/// Measures both hops and the CPU of `row`'s driver, with its client, over `window`.
pub fn measure(
    env: &Env,
    row: &Row,
    robot_port: u16,
    window: Duration,
    domain: u32,
) -> Result<Measured, String> {
    let (driver, label) = (&row.driver, row.label.as_str());
    // a label's `/` (`thymio-rt/r2r`) is not a file name's
    let file = label.replace('/', "+");
    let relay = Relay::start(robot_port, ODOMETRY, SET_SPEED);
    let limit = window + Duration::from_secs(120);
    let recording = match driver {
        Driver::ThymioRt { record: true, .. } => Some(TempRecording::new()?),
        _ => None,
    };
    let record_file = recording.as_ref().map(TempRecording::file);
    let report = matches!(
        driver,
        Driver::ThymioRt { .. } | Driver::ThymioRtRos1 { .. }
    )
    .then(|| env.out.join(format!("e2e_{file}_report.json")));
    if let Some(r) = &report {
        let _ = std::fs::remove_file(r);
    }
    let from_ns = rt::clock::monotonic_ns();
    let mut proc = start_driver(
        env,
        driver,
        robot_port,
        relay.port,
        domain,
        limit,
        record_file.as_deref(),
        report.as_deref(),
    )?;
    let raw = env.out.join(format!("e2e_{file}_raw.json"));
    let mut c = row.client.command(env, driver, domain)?;
    c.args(["--out", &raw.display().to_string()])
        .args(["--duration", &(window.as_secs() + 2).to_string()]);
    let mut client = Proc::spawn(&format!("ROS client ({})", row.client.name()), c);
    client.wait_for("READY", Duration::from_secs(60))?;
    let (cpu_s, wall_s) = cpu_seconds_over(&[&proc], Duration::from_secs(1), window);
    client.wait_for("DONE", Duration::from_secs(60))?;
    client.wait(Duration::from_secs(20))?;
    proc.interrupt();
    let recorded = match recording {
        // the recorder's summary is among the driver's last lines
        Some(r) => {
            let lines = match proc.wait_exit(Duration::from_secs(20)) {
                Ok((_, lines)) => lines,
                Err(e) => vec![e],
            };
            let rec = r.finish(&lines);
            eprintln!(
                "  {label}: recorded {} message(s), {} byte(s){}",
                rec.messages,
                rec.bytes,
                if rec.problems.is_empty() {
                    String::new()
                } else {
                    format!("; RECORDING FAILED: {}", rec.problems.join("; "))
                }
            );
            Some(rec)
        }
        None => {
            let _ = proc.wait(Duration::from_secs(20));
            None
        }
    };
    let traces = match &report {
        Some(r) => vec![crate::tails::WindowTraces::read(
            r,
            from_ns,
            rt::clock::monotonic_ns(),
        )?],
        None => Vec::new(),
    };
    let rows: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(&raw).map_err(|e| format!("{}: {e}", raw.display()))?,
    )
    .map_err(|e| e.to_string())?;
    let published: Vec<(u64, f64)> =
        serde_json::from_value(rows["cmd_vel"].clone()).unwrap_or_default();
    let received: Vec<matching::Odom> =
        serde_json::from_value(rows["odom"].clone()).unwrap_or_default();
    let log = relay.log.lock().expect("relay log");
    let frames: Vec<matching::Frame> = log
        .to_driver
        .iter()
        .filter(|e| e.1 == ODOMETRY && e.2.len() >= 2)
        .map(|e| (e.0, e.2[0], e.2[1]))
        .collect();
    let arrived: Vec<(u64, i16, i16)> = log
        .to_robot
        .iter()
        .filter(|e| e.1 == SET_SPEED && e.2.len() >= 2)
        .map(|e| (e.0, e.2[0], e.2[1]))
        .collect();
    // the wire side beside the client's, to check the matching offline
    let wire = env.out.join(format!("e2e_{file}_wire.json"));
    std::fs::write(
        &wire,
        json!({"odometry": frames, "set_speed": arrived}).to_string(),
    )
    .map_err(|e| format!("{}: {e}", wire.display()))?;
    let cmd_vel = matching::match_cmd_vel(&published, &arrived);
    let odom = matching::match_odometry(&frames, &received).map_err(|e| format!("{label}: {e}"))?;
    let (c, o) = (cmd_vel.hop(), odom.hop());
    eprintln!(
        "  {label}: cmd_vel→wire p50 {:.0} p99 {:.0} max {:.0} µs ({} matched, {} not); wire→odom p50 {:.0} p99 {:.0} max {:.0} µs ({} matched, {} not, fit residual {:.1e}, next best offset {:.1e}); CPU {:.2}% of a core",
        c.p50, c.p99, c.max, c.samples, c.unmatched,
        o.p50, o.p99, o.max, o.samples, o.unmatched, o.residual, o.runner_up, cpu_s / wall_s * 100.0
    );
    Ok(Measured {
        cmd_vel,
        odom,
        cpu_s,
        wall_s,
        recorded,
        traces,
    })
}

/// CPU seconds used by `procs` (and their descendants) over `window` after `warmup`, and the
/// window's measured length (s).
pub fn cpu_seconds_over(procs: &[&Proc], warmup: Duration, window: Duration) -> (f64, f64) {
    std::thread::sleep(warmup);
    let t0 = std::time::Instant::now();
    let a: f64 = procs.iter().map(|p| p.tree_cpu_seconds()).sum();
    std::thread::sleep(window);
    let b: f64 = procs.iter().map(|p| p.tree_cpu_seconds()).sum();
    (b - a, t0.elapsed().as_secs_f64())
}

/// CPU fraction of one core used by `procs` (and their descendants) over `window`, after
/// `warmup`.
pub fn cpu_of(procs: &[&Proc], warmup: Duration, window: Duration) -> f64 {
    let (cpu, wall) = cpu_seconds_over(procs, warmup, window);
    cpu / wall
}

/// CPU of thymio-rt at its defaults with the robot connected and no ROS traffic (no client).
pub fn idle(env: &Env, robot_port: u16, window: Duration, domain: u32) -> Result<f64, String> {
    let relay = Relay::start(robot_port, ODOMETRY, SET_SPEED);
    let d = Driver::ThymioRt {
        extra: Vec::new(),
        record: false,
    };
    let limit = window + Duration::from_secs(60);
    let mut p = start_driver(env, &d, robot_port, relay.port, domain, limit, None, None)?;
    std::thread::sleep(Duration::from_secs(2));
    let before = crate::procs::thread_groups(p.child.id());
    let cpu = cpu_of(&[&p], Duration::ZERO, window);
    let after = crate::procs::thread_groups(p.child.id());
    p.interrupt();
    let _ = p.wait(Duration::from_secs(20));
    let threads: Vec<String> = crate::procs::thread_shares(&before, &after, window.as_secs_f64())
        .iter()
        .map(|(k, share)| format!("{k} {:.2}%", share * 100.0))
        .collect();
    eprintln!(
        "  thymio-rt idle: CPU {:.2}% of a core ({})",
        cpu * 100.0,
        threads.join(", ")
    );
    Ok(cpu)
}

/// CPU at 8 robots (report only, no client but a `/tf` listener, [`crate::listener`]): one thymio-rt process at
/// its defaults (the limit of one robot raised: `nodes.thymio.maximal_number`) against eight Python driver
/// processes (one per robot, as ROS-Thymio runs them).
pub fn eight_robots(
    env: &Env,
    dir: &Path,
    window: Duration,
    domain: u32,
) -> Result<(f64, f64), String> {
    let pg = crate::playground::start(&dir.join("playground8"), 8)?;
    let mut params = thymio_rt_params();
    params.push("nodes.thymio.maximal_number:=0".into());
    let mut c = thymio_rt(
        env,
        &pg.ports,
        &params,
        window + Duration::from_secs(120),
        None,
        None,
    )?;
    ros_env(&mut c, domain);
    let mut ours = Proc::spawn("thymio-rt", c);
    for _ in &pg.ports {
        ours.wait_for("driver interface ready", Duration::from_secs(90))?;
    }
    // a /tf listener for each (thymio-rt publishes odometry only while someone listens; the Python drivers
    // always do): both publish every robot's odometry to one subscriber
    let listener = crate::listener::start(domain, window + Duration::from_secs(60))?;
    let cpu_ours = cpu_of(&[&ours], Duration::from_secs(2), window);
    drop(listener);
    ours.interrupt();
    let _ = ours.wait(Duration::from_secs(20));
    // new robots for the Python drivers, as every end-to-end window gets (thymio-rt reset these at its exit)
    drop(pg);
    let pg = crate::playground::start(&dir.join("playground8"), 8)?;
    crate::playground::load_driver_script(&env.driver, &pg.ports)?;
    let mut python = Vec::new();
    for (i, port) in pg.ports.iter().enumerate() {
        let mut c = Command::new(&env.python);
        c.arg(env.root.join("bench/baseline/ros_thymio_baseline.py"))
            .args([
                "--port",
                &port.to_string(),
                "--namespace",
                &format!("thymio_{}", i + 1),
            ])
            .args(["--duration", &(window.as_secs() + 120).to_string()]);
        ros_env(&mut c, domain + 1);
        let mut p = Proc::spawn("Python driver", c);
        p.wait_for("READY", Duration::from_secs(60))?;
        python.push(p);
    }
    let listener = crate::listener::start(domain + 1, window + Duration::from_secs(60))?;
    let refs: Vec<&Proc> = python.iter().collect();
    let cpu_python = cpu_of(&refs, Duration::from_secs(2), window);
    drop(listener);
    eprintln!(
        "  8 robots: thymio-rt {:.1}% of a core, 8 Python drivers {:.1}%",
        cpu_ours * 100.0,
        cpu_python * 100.0
    );
    Ok((cpu_ours, cpu_python))
}

/// JSON of a hop for the summary.
pub fn summary(h: &Hop) -> serde_json::Value {
    json!({"p50": h.p50, "p99": h.p99, "p999": h.p999, "max": h.max, "samples": h.samples, "unmatched": h.unmatched})
}

/// JSON of the odometry alignment's quality for the summary.
pub fn fit(h: &Hop) -> serde_json::Value {
    json!({"residual": h.residual, "next_best_offset": h.runner_up})
}
