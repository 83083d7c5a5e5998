//! The checks on a connected network: each node's protocol version and whether the driver's
//! script compiles for its firmware, the battery, live proximity and ground readings against the
//! reflexes' thresholds, and (asked for) a short wheel check. The network is reached as `thymio-rt
//! nodes` and `vars` reach it ([`super::super::common`]): a runtime with neither switch nor driver.

use super::checks::{self, Check, Status};
use super::sensors;
use crate::cli::common::{read_variable, tool_runtime, wait_for_nodes, TargetArgs};
use crate::config::Config;
use crate::runtime::Runtime;
use handoff::NodeId;
use nrt_engine::engine::{ScriptError, ScriptSource};
use nrt_engine::network::{Node, HOST_PROTOCOL_VERSION, MIN_TARGET_PROTOCOL_VERSION};
use serde_json::json;
use std::time::{Duration, Instant};

/// What to do once connected.
#[derive(Debug, Clone)]
pub struct Options {
    /// Samples of the proximity and ground sensors.
    pub samples: usize,
    /// Run the wheel check.
    pub wheels: bool,
    /// Bound of each wait on the network.
    pub timeout: Duration,
}

/// Speed target of the wheel check (about 4 cm/s: a slow creep).
pub const WHEEL_TARGET: i16 = 100;

/// Connects to `target` and checks every node found; the runtime is stopped before returning.
pub fn check(target: &str, config: &Config, opts: &Options) -> Vec<Check> {
    let args = TargetArgs {
        target: target.to_owned(),
        timeout: opts.timeout.as_secs_f64(),
    };
    let mut rt = match tool_runtime(&args) {
        Ok(rt) => rt,
        Err(e) => return vec![connect_failure(target, &e.message)],
    };
    let checks = match wait_for_nodes(&mut rt, target, opts.timeout) {
        Err(e) => vec![connect_failure(target, &e.message)],
        Ok(()) => {
            let nodes: Vec<Node> = rt.engine.network().nodes().cloned().collect();
            let ids: Vec<u16> = nodes.iter().map(|n| n.id.0).collect();
            let mut out = vec![Check::new(
                "connect",
                Status::Ok,
                format!("{} node(s) answered: {ids:?}", nodes.len()),
            )
            .data(json!({ "nodes": ids }))];
            for node in &nodes {
                out.extend(node_checks(&mut rt, node, config, opts));
            }
            out
        }
    };
    rt.stop();
    checks
}

/// A failed connection: its cause and, by target kind, the fix.
fn connect_failure(target: &str, cause: &str) -> Check {
    let fix = if cause.contains("no Aseba node answered") {
        "switch the robot on (hold its centre button); a wireless robot must be paired with its dongle \
         (Thymio Suite); only one program may talk to the robot at a time"
    } else if target.starts_with("ser:") {
        "check the port lines above (plugged in, not held by another program, permission)"
    } else if target.starts_with("tcp:") {
        "start what serves this address (asebaswitch, Aseba Playground, `thymio-rt sim`) or correct host and port"
    } else {
        "check the target string (ser:device=/dev/ttyACM0, tcp:host=H;port=P, sim)"
    };
    Check::new("connect", Status::Fail, cause.to_owned()).fix(fix)
}

/// The checks of one node.
fn node_checks(rt: &mut Runtime, node: &Node, config: &Config, opts: &Options) -> Vec<Check> {
    let id = node.id.0;
    let max = config.bridge.max_protocol_version();
    let mut out = vec![checks::protocol(
        node.protocol_version,
        MIN_TARGET_PROTOCOL_VERSION,
        max,
        HOST_PROTOCOL_VERSION,
    )
    .node(id)];
    let Some(desc) = node.description.as_ref() else {
        out.push(
            Check::new(
                "describe",
                Status::Fail,
                "the node did not send its description",
            )
            .node(id),
        );
        return out;
    };
    let has = |name: &str| desc.variables.iter().any(|v| v.name == name);
    let fw = if has("_fwversion") {
        read_variable(rt, node.id, "_fwversion", opts.timeout).ok()
    } else {
        None
    };
    out.push(script_check(node, config, fw.as_deref()).node(id));
    out.push(
        if has("_vbat") {
            match read_variable(rt, node.id, "_vbat", opts.timeout) {
                Ok(v) => checks::battery(v.first().copied()),
                Err(e) => read_failure("battery", "_vbat", &e.message),
            }
        } else {
            checks::battery(None)
        }
        .node(id),
    );
    out.extend(
        sensor_checks(rt, node.id, config, opts, &has)
            .into_iter()
            .map(|c| c.node(id)),
    );
    out.push(
        if !opts.wheels {
            Check::new(
                "wheels",
                Status::Skip,
                "not asked (--wheels drives the robot: lift it or give it room)",
            )
        } else if has("motor.left.speed") && has("motor.left.target") {
            wheel_check(rt, node.id, opts.timeout)
        } else {
            Check::new("wheels", Status::Skip, "the node has no motor variables")
        }
        .node(id),
    );
    out
}

/// Whether the driver's script compiles for the node's description (what its firmware offers).
fn script_check(node: &Node, config: &Config, fw: Option<&[i16]>) -> Check {
    let path = &config.bridge.script.path;
    let firmware = fw.map_or("firmware version unknown".to_owned(), |v| {
        format!("firmware {:?}", v)
    });
    let data = json!({"script": path, "fwversion": fw, "name": node.description.as_ref().map(|d| d.name.clone())});
    if path.is_empty() {
        return Check::new(
            "script",
            Status::Skip,
            format!("no script configured ({firmware})"),
        )
        .data(data);
    }
    let compiled = ScriptSource::from_file(path, &config.bridge.script.constants)
        .and_then(|s| s.compile_for(node));
    match compiled {
        Ok(Some(p)) => Check::new(
            "script",
            Status::Ok,
            format!("{path} compiles for it: {} words of bytecode ({firmware})", p.bytecode.len()),
        )
        .data(data),
        Ok(None) => Check::new("script", Status::Skip, format!("{path} has no program for this node ({firmware})")).data(data),
        Err(e @ ScriptError::Compile { .. }) => Check::new(
            "script",
            Status::Fail,
            format!("the driver's script does not compile for this node ({firmware}): {e}"),
        )
        .fix(
            "update the robot's firmware with Thymio Suite (the script is written for firmware 14); \
             for Aseba Playground's robot set script.path: builtin:aseba/thymio_ros_playground.aesl",
        )
        .data(data),
        Err(e) => Check::new("script", Status::Fail, e.to_string())
            .fix("correct script.path in the configuration")
            .data(data),
    }
}

/// A variable that could not be read.
fn read_failure(check: &'static str, var: &str, cause: &str) -> Check {
    Check::new(check, Status::Fail, format!("cannot read {var}: {cause}"))
        .fix("the link drops answers: check the cable or the radio, then run the check again")
}

/// Samples `prox.horizontal` and `prox.ground.delta` (one sensor period apart) and judges them.
fn sensor_checks(
    rt: &mut Runtime,
    node: NodeId,
    config: &Config,
    opts: &Options,
    has: &dyn Fn(&str) -> bool,
) -> Vec<Check> {
    let mut out = Vec::new();
    for (check, var) in [
        ("proximity", "prox.horizontal"),
        ("ground", "prox.ground.delta"),
    ] {
        if !has(var) {
            out.push(Check::new(
                check,
                Status::Skip,
                format!("the node has no {var}"),
            ));
            continue;
        }
        let mut samples = Vec::with_capacity(opts.samples);
        let mut error = None;
        for i in 0..opts.samples.max(1) {
            if i > 0 {
                // the firmware updates these sensors at 10 Hz (ground) to 20 Hz (proximity)
                rt.poll_until(Duration::from_millis(100), |_, _| None::<()>);
            }
            match read_variable(rt, node, var, opts.timeout) {
                Ok(v) => samples.push(v),
                Err(e) => {
                    error = Some(e.message);
                    break;
                }
            }
        }
        if let Some(e) = error {
            out.push(read_failure(check, var, &e));
            continue;
        }
        let spreads = sensors::spreads(&samples);
        out.push(if check == "proximity" {
            let o = &config.driver.obstacle_stop;
            sensors::proximity(&spreads, o.threshold, o.enabled)
        } else {
            let c = &config.driver.cliff_stop;
            sensors::ground(&spreads, c.threshold, c.enabled)
        });
    }
    out
}

/// Drives both wheels slowly forward then backward, reads their measured speeds back, and stops
/// them (always, also after a failure). Ctrl-C and SIGTERM wait for the stop: without a script the
/// firmware keeps a motor target for ever, so an interrupted check would leave the robot creeping.
/// Each read is bounded by a second, so they wait a few seconds at most.
fn wheel_check(rt: &mut Runtime, node: NodeId, timeout: Duration) -> Check {
    let _deferred = DeferInterrupts::new();
    eprintln!(
        "thymio-rt doctor: wheel check of node {node}: both wheels forward then backward at {WHEEL_TARGET} \
         (about 4 cm/s), then stopped; Ctrl-C waits for the stop"
    );
    let timeout = timeout.min(Duration::from_secs(1));
    let run = |rt: &mut Runtime| -> Result<Check, String> {
        let forward = drive(rt, node, WHEEL_TARGET, timeout)?;
        let backward = drive(rt, node, -WHEEL_TARGET, timeout)?;
        let stopped = drive(rt, node, 0, timeout)?;
        Ok(checks::wheels(forward, backward, stopped, WHEEL_TARGET))
    };
    let result = run(rt);
    let stop = set_targets(rt, node, 0).and_then(|()| {
        read_variable(rt, node, "motor.left.target", timeout).map_err(|e| e.message)
    });
    match (result, stop) {
        (Ok(c), Ok(_)) => c,
        (Err(e), _) | (Ok(_), Err(e)) => Check::new("wheels", Status::Fail, format!("wheel check: {e}"))
            .fix("the robot may still move: switch it off (hold its centre button), check the link, run the check again"),
    }
}

/// SIGINT and SIGTERM ignored while it lives (the previous dispositions restored when dropped).
struct DeferInterrupts {
    previous: [(nix::libc::c_int, nix::libc::sighandler_t); 2],
}

impl DeferInterrupts {
    fn new() -> Self {
        let ignore = |sig| {
            // SAFETY: installing SIG_IGN runs no code in the handler's context; the previous
            // disposition is kept to be restored.
            (sig, unsafe { nix::libc::signal(sig, nix::libc::SIG_IGN) })
        };
        DeferInterrupts {
            previous: [ignore(nix::libc::SIGINT), ignore(nix::libc::SIGTERM)],
        }
    }
}

impl Drop for DeferInterrupts {
    fn drop(&mut self) {
        for (sig, handler) in self.previous {
            if handler != nix::libc::SIG_ERR {
                // SAFETY: restores the disposition `signal` returned for this signal.
                unsafe { nix::libc::signal(sig, handler) };
            }
        }
    }
}

/// Sets both motor targets to `target` and reads the measured speeds until they reach it (within
/// a third: the check's criterion) or one second passes; the last speeds read.
fn drive(
    rt: &mut Runtime,
    node: NodeId,
    target: i16,
    timeout: Duration,
) -> Result<[i16; 2], String> {
    set_targets(rt, node, target)?;
    let deadline = Instant::now() + Duration::from_secs(1);
    loop {
        let l = read_variable(rt, node, "motor.left.speed", timeout).map_err(|e| e.message)?;
        let r = read_variable(rt, node, "motor.right.speed", timeout).map_err(|e| e.message)?;
        let speeds = [
            l.first().copied().unwrap_or(0),
            r.first().copied().unwrap_or(0),
        ];
        let near = speeds
            .iter()
            .all(|s| (i32::from(*s) - i32::from(target)).abs() < i32::from(WHEEL_TARGET / 3));
        if near || Instant::now() >= deadline {
            return Ok(speeds);
        }
        rt.poll_until(Duration::from_millis(50), |_, _| None::<()>);
    }
}

/// Writes both motor targets.
fn set_targets(rt: &mut Runtime, node: NodeId, target: i16) -> Result<(), String> {
    for var in ["motor.left.target", "motor.right.target"] {
        rt.engine
            .network_mut()
            .set_variable(node, var, &[target])
            .map_err(|e| e.to_string())?;
    }
    Ok(())
}
