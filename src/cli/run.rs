//! `thymio-rt run`: the driver. The RT thread, the engine (network manager, switch, scripts),
//! the embedded simulated Thymio when no target is given, and the ROS 2 bridge when built with
//! the `ros2` feature.

use super::ros_args::{parse_ros1_arg, Ros1Arg};
use super::{CliError, CliResult};
use crate::config::Config;
use crate::runtime::{Runtime, Stopped};
use msgs::handoff::NodeId;
use nrt_engine::engine::EngineEvent;
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
pub fn main(args: Args) -> CliResult {
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
    let r1 = &args.ros1_args;
    let (stopped, ros_hops) = if ros1 && ros2 {
        run_both(config, duration, r1)?
    } else if ros1 {
        run_ros1(config, duration, r1)?
    } else if args.no_ros || !cfg!(feature = "ros2") {
        if !args.no_ros {
            tracing::warn!("this build has no ROS 2 bridge (build with --features ros2)");
        }
        (run_plain(&config, duration, args.cmd_vel)?, None)
    } else {
        if args.cmd_vel.is_some() {
            return Err(CliError::new(
                "--cmd-vel needs --no-ros (ROS drives the robots)",
            ));
        }
        run_ros(config, duration)?
    };
    finish(&stopped, ros_hops, args.report.as_deref())
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

fn log_event(e: &EngineEvent) {
    match e {
        EngineEvent::RtStarted(s) => tracing::info!(
            "RT thread running: scheduler {:?}, cpu {:?}, memory lock {:?}, PREEMPT_RT kernel: {}",
            s.mode(),
            s.cpu,
            s.memory_lock,
            s.realtime_kernel
        ),
        EngineEvent::LinkUp { link, target, kind } => {
            tracing::info!("connected: link {link} (target {target}, {kind:?})")
        }
        EngineEvent::LinkDown { link, target } => {
            tracing::warn!("disconnected: link {link} (target {target})")
        }
        EngineEvent::RobotReady { node, robot } => {
            tracing::info!("node {node} is robot {robot} (cmd_vel, odometry)")
        }
        EngineEvent::ScriptFailed { node, error } => {
            tracing::error!("node {node}: script not loaded: {error}")
        }
        EngineEvent::RobotRemoved { node, robot } => {
            tracing::warn!("node {node} is no longer driven (was robot {robot})")
        }
        EngineEvent::WatchdogStop { node } => {
            tracing::info!("node {node}: no cmd_vel in time, stopped")
        }
        _ => {}
    }
}

fn run_plain(
    config: &Config,
    duration: Option<Duration>,
    cmd_vel: Option<(f64, f64)>,
) -> Result<Stopped, CliError> {
    tracing::info!("starting on {}", describe(config));
    let mut rt = Runtime::start(config).map_err(CliError::new)?;
    if let Some(s) = rt.engine.switch() {
        tracing::info!(
            "Aseba switch listening on {}",
            s.local_addr().map(|a| a.to_string()).unwrap_or_default()
        );
    }
    let doorbell = rt.engine.doorbell();
    run_loop(&mut rt, config, duration, |rt| {
        for e in rt.poll() {
            log_event(&e);
        }
        if let Some((linear, angular)) = cmd_vel {
            let nodes: Vec<NodeId> = rt.engine.robots().iter().map(|s| s.node).collect();
            for node in nodes {
                if let Err(e) = rt.engine.set_cmd_vel(node, linear, angular) {
                    tracing::warn!("--cmd-vel: node {node}: {e}");
                }
            }
        }
        doorbell.wait(
            rt.engine
                .longest_wait(Duration::from_micros(config.rt.nrt_poll_us)),
        );
        true
    });
    Ok(rt.stop())
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
    while !should_stop(rt, until, config, &mut was_connected) {
        if !step(rt) {
            break;
        }
    }
}

/// Applies the DDS boundary the user's ROS settings ask for (`nrt_ros2::dds_boundary`) and says which is in force.
#[cfg(feature = "ros2")]
fn dds_boundary() -> Result<nrt_ros2::dds_boundary::DdsBoundary, CliError> {
    let boundary = nrt_ros2::dds_boundary::confine().map_err(CliError::new)?;
    if boundary.is_warning() {
        tracing::warn!("{}", boundary.describe());
    } else {
        tracing::info!("{}", boundary.describe());
    }
    Ok(boundary)
}

/// Runs with the ROS 2 bridge; the hops the ROS side timed come back with the RT thread's end.
#[cfg(feature = "ros2")]
fn run_ros(
    config: Config,
    duration: Option<Duration>,
) -> Result<(Stopped, Option<msgs::handoff::RosHops>), CliError> {
    use nrt_ros2::{RosNode, RosOptions};
    let mut node = RosNode::new(RosOptions::default()).map_err(CliError::new)?;
    let config = config
        .with_overrides(&node.parameter_overrides().map_err(CliError::new)?)
        .map_err(CliError::new)?;
    node.set_spin_period(Duration::from_micros(config.rt.nrt_poll_us))
        .map_err(CliError::new)?;
    tracing::info!("starting on {} with the ROS 2 bridge", describe(&config));
    let mut rt = Runtime::start(&config).map_err(CliError::new)?;
    let mut bridge = node
        .start(&config.to_mapping(), Config::is_live, &mut rt.engine)
        .map_err(CliError::new)?;
    if let Some(mut control) = rt.take_control() {
        // the calibration action takes its controller's private ports, the switch and the
        // controllers' endpoints serve the rest
        bridge.start_calibration(&mut control);
        bridge.serve_control(control, &rt.engine);
    }
    if let Some(sim) = rt.sim() {
        bridge
            .start_ground_truth(Box::new(sim.ground_truth()))
            .map_err(CliError::new)?;
    }
    tracing::info!("ROS 2 interface up");
    if let Some(s) = rt.engine.switch() {
        tracing::info!(
            "Aseba switch listening on {}",
            s.local_addr().map(|a| a.to_string()).unwrap_or_default()
        );
    }
    run_loop(&mut rt, &config, duration, |rt| {
        if !bridge.ros_alive() {
            tracing::error!(
                "a ROS thread (spinner, cmd_vel hot node or odometry publisher) stopped: \
                 ROS is no longer served; stopping"
            );
            return false;
        }
        bridge.step(&mut rt.engine);
        true
    });
    let hops = bridge.hop_times();
    drop(bridge);
    Ok((rt.stop(), Some(hops)))
}

#[cfg(not(feature = "ros2"))]
fn run_ros(
    config: Config,
    duration: Option<Duration>,
) -> Result<(Stopped, Option<msgs::handoff::RosHops>), CliError> {
    Ok((run_plain(&config, duration, None)?, None))
}

/// Runs with the ROS 1 front end only.
#[cfg(feature = "ros1")]
fn run_ros1(
    config: Config,
    duration: Option<Duration>,
    ros1_args: &[Ros1Arg],
) -> Result<(Stopped, Option<msgs::handoff::RosHops>), CliError> {
    use nrt_ros1::Ros1Node;
    let node = Ros1Node::new(ros1_options(ros1_args)?).map_err(CliError::new)?;
    let config = config
        .with_overrides(&node.parameter_overrides().map_err(CliError::new)?)
        .and_then(|c| c.with_overrides(&ros1_params(ros1_args)))
        .map_err(CliError::new)?;
    tracing::info!(
        "starting on {} with the ROS 1 front end ({})",
        describe(&config),
        node.name()
    );
    let mut rt = Runtime::start(&config).map_err(CliError::new)?;
    let mut bridge = node.start(&mut rt.engine).map_err(CliError::new)?;
    tracing::info!("ROS 1 interface up");
    let poll = Duration::from_micros(config.rt.nrt_poll_us);
    run_loop(&mut rt, &config, duration, |rt| {
        if !bridge.ros_alive() {
            tracing::error!("a ROS 1 thread stopped: ROS 1 is no longer served; stopping");
            return false;
        }
        bridge.step(&mut rt.engine, poll);
        true
    });
    log_ros1(&bridge);
    drop(bridge);
    Ok((rt.stop(), None))
}

/// The ROS 1 node's options: the environment's, then roslaunch's `__name:=` and `__ns:=`.
#[cfg(feature = "ros1")]
fn ros1_options(args: &[Ros1Arg]) -> Result<nrt_ros1::Ros1Options, CliError> {
    let mut options = nrt_ros1::Ros1Options::from_env().map_err(CliError::new)?;
    for a in args {
        match a {
            Ros1Arg::Name(n) => options.node_name = n.clone(),
            Ros1Arg::Namespace(ns) => options.namespace = ns.clone(),
            Ros1Arg::Log(_) | Ros1Arg::Param(..) => {}
        }
    }
    Ok(options)
}

/// The private parameters given as `_NAME:=VALUE`, as configuration entries.
#[cfg(feature = "ros1")]
fn ros1_params(args: &[Ros1Arg]) -> Vec<(String, serde_yaml::Value)> {
    args.iter()
        .filter_map(|a| match a {
            Ros1Arg::Param(n, v) => Some((n.clone(), v.clone())),
            _ => None,
        })
        .collect()
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
            serde_yaml::to_string(v).unwrap_or_default().trim()
        ),
    }
}

#[cfg(feature = "ros1")]
fn log_ros1(bridge: &nrt_ros1::Ros1Bridge) {
    let (published, registrations) = bridge.counters();
    tracing::info!(
        "ROS 1: {published} odometry samples published, registered again with a new master {registrations} time(s)"
    );
}

#[cfg(not(feature = "ros1"))]
fn run_ros1(
    config: Config,
    duration: Option<Duration>,
    _ros1_args: &[Ros1Arg],
) -> Result<(Stopped, Option<msgs::handoff::RosHops>), CliError> {
    Ok((run_plain(&config, duration, None)?, None))
}

/// Runs the ROS 2 bridge and the ROS 1 front end side by side: one NRT loop (the ROS 2 bridge's step hands every
/// engine event to ROS 1 too), one odometry ring and publisher thread each.
#[cfg(all(feature = "ros1", feature = "ros2"))]
fn run_both(
    config: Config,
    duration: Option<Duration>,
    ros1_args: &[Ros1Arg],
) -> Result<(Stopped, Option<msgs::handoff::RosHops>), CliError> {
    use nrt_ros1::Ros1Node;
    use nrt_ros2::{RosNode, RosOptions};
    let ros1 = Ros1Node::new(ros1_options(ros1_args)?).map_err(CliError::new)?;
    let mut node = RosNode::new(RosOptions::default()).map_err(CliError::new)?;
    // ROS 1's parameter server and private arguments, then ROS 2's parameters
    let config = config
        .with_overrides(&ros1.parameter_overrides().map_err(CliError::new)?)
        .and_then(|c| c.with_overrides(&ros1_params(ros1_args)))
        .map_err(CliError::new)?;
    let config = config
        .with_overrides(&node.parameter_overrides().map_err(CliError::new)?)
        .map_err(CliError::new)?;
    node.set_spin_period(Duration::from_micros(config.rt.nrt_poll_us))
        .map_err(CliError::new)?;
    tracing::info!(
        "starting on {} with the ROS 2 bridge and the ROS 1 front end",
        describe(&config)
    );
    let mut rt = Runtime::start_with(&config, 2).map_err(CliError::new)?;
    let mut bridge = node
        .start(&config.to_mapping(), Config::is_live, &mut rt.engine)
        .map_err(CliError::new)?;
    let mut bridge1 = ros1.start(&mut rt.engine).map_err(CliError::new)?;
    tracing::info!("ROS 2 and ROS 1 interfaces up");
    run_loop(&mut rt, &config, duration, |rt| {
        if !bridge.ros_alive() || !bridge1.ros_alive() {
            tracing::error!("a ROS 2 or ROS 1 thread stopped: ROS is no longer served; stopping");
            return false;
        }
        bridge.step_with(&mut rt.engine, &mut |e, ev| bridge1.on_engine_event(e, ev));
        bridge1.serve(&mut rt.engine);
        bridge1.publish(&rt.engine);
        true
    });
    log_ros1(&bridge1);
    let hops = bridge.hop_times();
    drop(bridge1);
    drop(bridge);
    Ok((rt.stop(), Some(hops)))
}

#[cfg(not(all(feature = "ros1", feature = "ros2")))]
fn run_both(
    config: Config,
    duration: Option<Duration>,
    _ros1_args: &[Ros1Arg],
) -> Result<(Stopped, Option<msgs::handoff::RosHops>), CliError> {
    Ok((run_plain(&config, duration, None)?, None))
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
    ros_hops: Option<msgs::handoff::RosHops>,
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
        tracing::info!("per-hop latency:\n{}", r.hops.to_text());
        r.write(path)
            .map_err(|e| CliError::new(format!("cannot write {}: {e}", path.display())))?;
        tracing::info!("report written to {}", path.display());
    }
    Ok(())
}
