//! `thymio-rt run`: the driver. The RT thread, the engine (network manager, switch, scripts),
//! the embedded simulated Thymio when no target is given, and the front ends — the ROS 2 bridge when built with
//! the `ros2` feature, the ROS 1 front end with `--ros1`, both, or the console — served by one NRT loop.

use super::front_ends::{Nodes, Wanted};
use super::ros_args::{parse_ros1_arg, Ros1Arg};
use super::{CliError, CliResult};
use crate::config::Config;
use crate::runtime::{Runtime, Stopped};
use nrt_interface::front_end;
use nrt_interface::report::Reporter;
use nrt_interface::Interface;
use nrt_recorder::flight::{FlightConfig, FlightFile, FlightRecorder};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Arguments of `thymio-rt run`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// YAML configuration, in place of the built-in one (config/thymio-rt.yaml as shipped, with
    /// its scripts: the full Thymio driver); ROS parameters override either.
    #[arg(long, short = 'c', value_name = "FILE")]
    config: Option<PathBuf>,
    /// Target (repeatable; replaces `targets` of the configuration). None: the embedded
    /// simulated Thymio-II.
    #[arg(long, short = 't', value_name = "TARGET")]
    target: Vec<String>,
    /// Port of the Aseba switch (0 disables it).
    #[arg(long, value_name = "PORT")]
    switch_port: Option<u16>,
    /// Do not start the ROS 2 bridge.
    #[arg(long)]
    no_ros: bool,
    /// Serve ROS 1 (the master from ROS_MASTER_URI, the node's address from ROS_HOSTNAME / ROS_IP), beside the
    /// ROS 2 bridge when it is built in and not turned off with --no-ros (configuration key `ros1.enabled`).
    #[arg(long)]
    ros1: bool,
    /// Stop after this many seconds.
    #[arg(long, value_name = "SECONDS")]
    duration: Option<f64>,
    /// Record the RT thread's inputs and what the driver published into FILE.mcap (the flight recorder; the
    /// configuration's `record` section sets the rotation; docs/recorder.md).
    #[arg(long, value_name = "FILE.mcap")]
    record: Option<PathBuf>,
    /// Write a JSON report (RT timing, allocations, page faults, links, final odometry) at exit.
    #[arg(long, value_name = "FILE.json")]
    report: Option<PathBuf>,
    /// Drive every robot at LINEAR,ANGULAR (m/s, rad/s) without ROS, renewed so that the
    /// cmd_vel watchdog does not stop it (bring-up, fault tests).
    #[arg(long, value_name = "LINEAR,ANGULAR", value_parser = parse_twist, allow_hyphen_values = true)]
    cmd_vel: Option<(f64, f64)>,
    /// ROS 1 arguments as roslaunch gives them to a node (with --ros1): __name:=NAME (node name),
    /// __ns:=NAMESPACE, __log:=FILE (the log goes there too), _PARAM:=VALUE (a private parameter, over the
    /// parameter server's). ROS 2 arguments go after --ros-args, e.g. `--ros-args -p cmd_vel_timeout:=1.0`.
    #[arg(value_name = "ROS1_ARG", value_parser = parse_ros1_arg)]
    ros1_args: Vec<Ros1Arg>,
    /// The ROS 2 arguments (the `--ros-args` segments, which rcl reads from the process's command line itself):
    /// set by [`super::Cli::parse_args`].
    #[arg(skip)]
    pub ros_args: Vec<String>,
}

impl Args {
    /// The file roslaunch's `__log:=` names, if given.
    pub fn log_file(&self) -> Option<&std::path::Path> {
        self.ros1_args.iter().rev().find_map(|a| match a {
            Ros1Arg::Log(p) => Some(p.as_path()),
            _ => None,
        })
    }
}

fn parse_twist(s: &str) -> Result<(f64, f64), String> {
    let (l, a) = s
        .split_once(',')
        .ok_or_else(|| format!("{s}: expected LINEAR,ANGULAR"))?;
    let num = |t: &str| {
        t.trim()
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite())
            .ok_or_else(|| format!("{t}: not a finite number"))
    };
    Ok((num(l)?, num(a)?))
}

/// Entry point of `thymio-rt run`.
/// `thymio-rt run` with the RT controllers of `registry` (the shipped ones: [`rt::controllers::Registry::shipped`]).
pub fn main(args: Args, registry: rt::controllers::Registry) -> CliResult {
    let mut config = match &args.config {
        Some(path) => Config::from_file(path).map_err(CliError::new)?,
        None => Config::builtin().map_err(CliError::new)?,
    };
    if !args.target.is_empty() {
        config.bridge.targets = args.target.clone();
    }
    if let Some(p) = args.switch_port {
        config.bridge.port = p;
    }
    if let Some(file) = &args.record {
        config.record.file = file.display().to_string();
        nrt_engine::schema::Section::validate(&config.record)
            .map_err(|e| CliError::new(format!("--record: {e}")))?;
    }
    let duration = match args.duration {
        Some(s) => Some(
            Duration::try_from_secs_f64(s)
                .map_err(|_| CliError::new(format!("invalid --duration {s}")))?,
        ),
        None => None,
    };
    // Before the first thread (the signal guard's) and the first rcl context: it sets the environment Fast DDS reads.
    #[cfg(feature = "ros2")]
    let _dds_boundary = if args.no_ros {
        None
    } else {
        Some(dds_boundary()?)
    };
    // Before the first thread too: every thread inherits the capabilities of its creator.
    let shed = crate::privileges::shed((1..1024).contains(&config.bridge.port));
    if shed.problems.is_empty() {
        tracing::info!("{}", shed.describe());
    } else {
        tracing::warn!("{}", shed.describe());
    }
    if let Err(e) = rt::signals::install_stop_handlers() {
        tracing::warn!("cannot install the SIGINT/SIGTERM handlers: {e}");
    }
    let ros1 = args.ros1 || config.ros1.enabled;
    if !ros1 && !args.ros1_args.is_empty() {
        return Err(CliError {
            message: format!(
                "ROS 1 argument(s) {} need the ROS 1 front end (--ros1, or ros1.enabled in the configuration); \
                 ROS 2 arguments go after --ros-args",
                args.ros1_args
                    .iter()
                    .map(ros1_arg_text)
                    .collect::<Vec<_>>()
                    .join(" ")
            ),
            code: 2,
        });
    }
    if ros1 && !cfg!(feature = "ros1") {
        return Err(CliError::new(
            "this build has no ROS 1 front end: build with --features ros1 (cargo build --release --features ros1)",
        ));
    }
    if ros1 && args.cmd_vel.is_some() {
        return Err(CliError::new(
            "--cmd-vel cannot be used with ROS 1 (ROS drives the robots)",
        ));
    }
    let ros2 = !args.no_ros && cfg!(feature = "ros2");
    if !ros2 && !args.ros_args.is_empty() {
        tracing::warn!(
            "ROS 2 arguments ignored (the ROS 2 bridge is off): {}",
            args.ros_args.join(" ")
        );
    }
    if args.cmd_vel.is_some() && ros2 {
        return Err(CliError::new(
            "--cmd-vel needs --no-ros (ROS drives the robots)",
        ));
    }
    if !args.no_ros && !cfg!(feature = "ros2") && !ros1 {
        tracing::warn!("this build has no ROS 2 bridge (build with --features ros2)");
    }
    let wanted = Wanted {
        ros2,
        ros1,
        ros1_args: &args.ros1_args,
        cmd_vel: args.cmd_vel,
    };
    run_served(config, duration, &wanted, registry, args.report.as_deref())
}

fn describe(config: &Config) -> String {
    if config.bridge.targets.is_empty() {
        format!(
            "embedded simulated Thymio-II ({} robot(s))",
            config.sim.robots.max(1)
        )
    } else {
        config.bridge.targets.join(", ")
    }
}

fn should_stop(
    rt: &Runtime,
    until: Option<Instant>,
    config: &Config,
    was_connected: &mut bool,
) -> bool {
    if rt::signals::stop_signalled() {
        tracing::info!("stop signal received");
        return true;
    }
    if until.is_some_and(|t| Instant::now() >= t) {
        return true;
    }
    if rt.engine.rt_exited() {
        tracing::warn!("the RT thread stopped");
        return true;
    }
    let connected = rt.engine.connected();
    if *was_connected && !connected && config.bridge.shutdown_on_unconnect {
        tracing::warn!("target lost and shutdown_on_unconnect is set: stopping");
        return true;
    }
    *was_connected |= connected;
    false
}

/// Runs the driver with the front ends `wanted` asks for (none: the console), one NRT loop over all of them
/// ([`nrt_interface::front_end::step`]); the hops the ROS side timed come back with the RT thread's end.
fn run_served(
    config: Config,
    duration: Option<Duration>,
    wanted: &Wanted<'_>,
    registry: rt::controllers::Registry,
    report: Option<&std::path::Path>,
) -> CliResult {
    let (nodes, config) = Nodes::new(wanted, config)?;
    // before anything runs: a bad path or an existing recording stops the start with the reason
    let recording = create_recording(
        &config,
        nodes.recorded_namespace()?,
        nodes.recorded_diagnostics_prefix(),
    )?;
    tracing::info!("starting on {} {}", describe(&config), nodes.describe());
    let mut rt = match Runtime::start_loaded(&config, nodes.count().max(1), registry) {
        Ok(rt) => rt,
        Err(e) => {
            // nothing ran: the empty recording would refuse the next start as an existing one
            if let Some(file) = recording {
                file.abandon();
            }
            return Err(CliError::new(e));
        }
    };
    let mut iface = Interface::new(Reporter::new(&nodes.logger()));
    let recorder = recording
        .map(|file| start_recorder(file, &mut rt))
        .transpose()?;
    let mut front_ends = nodes.start(&config, &mut rt, &mut iface)?;
    front_ends.extend(recorder.as_ref().map(FlightRecorder::front_end));
    if let Some(s) = rt.engine.switch() {
        tracing::info!(
            "Aseba switch listening on {}",
            s.local_addr().map(|a| a.to_string()).unwrap_or_default()
        );
    }
    let spin = Duration::from_micros(config.rt.nrt_poll_us);
    run_loop(&mut rt, &config, duration, |rt| {
        if let Some(f) = front_ends.iter().find(|f| !f.alive()) {
            tracing::error!(
                "a thread of the {} front end stopped: it no longer serves its clients; stopping",
                f.name()
            );
            return false;
        }
        front_end::step(&mut rt.engine, &mut iface, &mut front_ends, spin);
        true
    });
    let hops = front_ends.iter().find_map(|f| f.hop_times());
    for f in &front_ends {
        if let Some(s) = f.summary() {
            tracing::info!("{s}");
        }
    }
    // The robots, the recording and the report before ROS: tearing ROS down un-announces every endpoint of every
    // robot one by one (Fast DDS), seconds with a classroom of robots — it must not eat the stop guard's bound
    // (rt::signals::ORDERLY_BOUND) before the zero speed, the RESET, the recording's end and the report are done.
    // The front ends' threads outlive the RT thread: they wait on their rings with a timeout, and the NRT loop no
    // longer steps them.
    let stopped = rt.stop();
    // after the RT thread: its last records (the exit stops) are in the file
    let recording = recorder.map(|r| {
        let s = r.finish();
        if s.error.is_some() || s.dropped != (0, 0) {
            tracing::warn!("{}", s.describe());
        } else {
            tracing::info!("{}", s.describe());
        }
        s.report()
    });
    let finished = finish(&stopped, hops, recording, report);
    rt::signals::mark_orderly_stop_done();
    let teardown = Instant::now();
    drop(front_ends);
    tracing::debug!("front ends torn down in {:.2?}", teardown.elapsed());
    finished
}

/// The flight recorder's first file (`record.file`, `--record`; `None`: no recording), made before the runtime
/// starts, so that a bad path or an existing recording stops the start with the reason and nothing else started.
fn create_recording(
    config: &Config,
    ros_namespace: String,
    diagnostics_prefix: String,
) -> Result<Option<FlightFile>, CliError> {
    let r = &config.record;
    if !r.on() {
        return Ok(None);
    }
    let path = nrt_recorder::flight::absolute(std::path::Path::new(&r.file));
    let yaml = yaml_serde::to_string(&config.to_mapping()).unwrap_or_default();
    let cfg = FlightConfig {
        path,
        limits: nrt_recorder::RecordLimits {
            max_bytes: r.max_file_bytes(),
            max_duration: r.max_file_duration(),
            keep_files: r.keep_files,
        },
        metadata: nrt_recorder::flight::driver_metadata(env!("CARGO_PKG_VERSION"), &yaml),
        ros_namespace,
        diagnostics_prefix,
    };
    FlightFile::create(&cfg)
        .map(Some)
        .map_err(|e| CliError::new(format!("record.file: {e}")))
}

/// Starts the flight recorder's thread on `file` and the runtime's recording and odometry rings.
fn start_recorder(file: FlightFile, rt: &mut Runtime) -> Result<FlightRecorder, CliError> {
    let recording = rt.take_recording().ok_or_else(|| {
        CliError::new("record.file: the RT thread records nothing (no recording ring)")
    })?;
    let path = file.path().display().to_string();
    let recorder = FlightRecorder::start(file, recording, rt.engine.take_odometry_out())
        .map_err(|e| CliError::new(format!("record.file: {e}")))?;
    tracing::info!("recording into {path}");
    Ok(recorder)
}

/// The run loop of `thymio-rt run`, with or without ROS: `step` (one engine poll, which pumps the RT controllers
/// too, and at most one wait on the engine's doorbell) until a stop signal, the end of `duration`, the end of the
/// RT thread, a lost target with `shutdown_on_unconnect`, or `step` returning false.
fn run_loop(
    rt: &mut Runtime,
    config: &Config,
    duration: Option<Duration>,
    mut step: impl FnMut(&mut Runtime) -> bool,
) {
    let until = duration.map(|d| Instant::now() + d);
    let mut was_connected = false;
    let mut rt_set_up = false;
    while !should_stop(rt, until, config, &mut was_connected) {
        if !step(rt) {
            break;
        }
        if !rt_set_up && rt.engine.rt_setup().is_some() {
            rt_set_up = true;
            let problems = crate::privileges::after_rt_setup();
            if problems.is_empty() {
                tracing::info!("RT setup done: RLIMIT_RTPRIO lowered to 0, CAP_SYS_NICE dropped");
            } else {
                tracing::warn!("after the RT setup: {}", problems.join("; "));
            }
        }
    }
}

/// Applies the DDS boundary the user's ROS settings ask for (`nrt_ros2::dds_boundary`) and says which is in force.
#[cfg(feature = "ros2")]
pub(super) fn dds_boundary() -> Result<nrt_ros2::dds_boundary::DdsBoundary, CliError> {
    let boundary = nrt_ros2::dds_boundary::confine().map_err(CliError::new)?;
    if boundary.is_warning() {
        tracing::warn!("{}", boundary.describe());
    } else {
        tracing::info!("{}", boundary.describe());
    }
    Ok(boundary)
}

/// A ROS 1 argument as it was written.
fn ros1_arg_text(a: &Ros1Arg) -> String {
    match a {
        Ros1Arg::Name(n) => format!("__name:={n}"),
        Ros1Arg::Namespace(n) => format!("__ns:={n}"),
        Ros1Arg::Log(p) => format!("__log:={}", p.display()),
        Ros1Arg::Param(n, v) => format!(
            "_{}:={}",
            n.replace('.', "/"),
            yaml_serde::to_string(v).unwrap_or_default().trim()
        ),
        Ros1Arg::Remap(from, to) => format!("{from}:={to}"),
    }
}

/// Says "robots were sent zero speed" only for what the robots confirmed (their motor targets
/// read back as zero), and names every robot that was not confirmed.
fn log_stops(stopped: &Stopped) {
    let unconfirmed: Vec<String> = stopped
        .stops
        .iter()
        .filter(|s| s.confirmed == Some(false))
        .map(|s| format!("node {}", s.node))
        .collect();
    let blind: Vec<String> = stopped
        .stops
        .iter()
        .filter(|s| s.confirmed.is_none())
        .map(|s| format!("node {}", s.node))
        .collect();
    let reason = stopped.reason;
    if stopped.reason.is_none() {
        tracing::error!("stopped, but the RT thread could not be joined: zero speed not confirmed");
    } else if !unconfirmed.is_empty() {
        tracing::warn!(
            "stopped ({reason:?}); zero speed NOT confirmed by {} (sent, but not read back in time)",
            unconfirmed.join(", ")
        );
    } else if stopped.stops.is_empty() {
        tracing::info!("stopped ({reason:?}); no robot was driven");
    } else if blind.is_empty() {
        tracing::info!("stopped ({reason:?}); robots were sent zero speed (confirmed)");
    } else {
        tracing::info!(
            "stopped ({reason:?}); robots were sent zero speed (not readable, so not confirmed: {})",
            blind.join(", ")
        );
    }
}

/// Logs how the robots were stopped and writes the report (with `ros_hops`, the hops the ROS
/// side timed, if it ran); the per-hop table goes to the log too.
fn finish(
    stopped: &Stopped,
    ros_hops: Option<handoff::RosHops>,
    recording: Option<nrt_recorder::flight::FlightReport>,
    report: Option<&std::path::Path>,
) -> CliResult {
    log_stops(stopped);
    if let Some(path) = report {
        let stats = stopped
            .stats
            .as_ref()
            .ok_or_else(|| CliError::new("the RT thread left no statistics"))?;
        let mut r =
            rt::report::Report::new(stats, stopped.odometry.first(), Some(stopped.connector));
        if let Some(s) = &stopped.switch {
            r = r.with_switch(s);
        }
        if let Some(h) = ros_hops {
            r = r.with_ros_hops(h);
        }
        r = r.with_controller_names(&stopped.controller_names);
        if let Some(rec) = &recording {
            r = r.with_recording(rec);
        }
        tracing::info!("per-hop latency:\n{}", r.hops.to_text());
        tracing::info!("RT controllers:\n{}", r.controllers.to_text());
        r.write(path)
            .map_err(|e| CliError::new(format!("cannot write {}: {e}", path.display())))?;
        tracing::info!("report written to {}", path.display());
    }
    Ok(())
}
