//! Hostile or careless input that must not defeat the driver's safety nor stall it (issue 14,
//! items 5–8), against the thymio-rt binary where it can, else the runtime with the embedded
//! simulated Thymio; the robot is read from its own side, through the Aseba switch, by a
//! separate client process (`thymio-rt vars get`).

use crate::common;

use common::*;
use handoff::NodeId;
use nrt_engine::engine::EngineEvent;
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};
use thymio_rt::config::Config;
use thymio_rt::runtime::Runtime;

/// Runs `thymio-rt run --no-ros` with the configuration `yaml`; the bounded exit and its output.
fn run_with_config(dir: &Path, yaml: &str, extra: &[&str]) -> (std::process::ExitStatus, String) {
    let cfg = dir.join("config.yaml");
    std::fs::write(&cfg, yaml).unwrap();
    let mut c = thymio_rt();
    c.args(["run", "--no-ros", "--config"])
        .arg(&cfg)
        .args(extra);
    let mut p = Proc::spawn("thymio-rt run", c);
    let status = p.wait_exit(Duration::from_secs(20));
    (status, p.seen.join("\n"))
}

const QUIET: &str = "port: 0\nrt: {priority: 0, lock_memory: false}\n";

/// `script.path` naming a device, a FIFO or an oversized file: a clear error at start, at once
/// (before: `/dev/zero` was read until memory ran out, a FIFO blocked the start for ever).
#[test]
fn script_path_that_is_not_a_script_file_is_a_clear_error_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo.aesl");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let big = dir.path().join("big.aesl");
    std::fs::write(&big, vec![b' '; 2 << 20]).unwrap();
    for (path, reason) in [
        (
            "/dev/zero".to_owned(),
            "not a regular file (a character device)",
        ),
        (fifo.display().to_string(), "not a regular file (a FIFO)"),
        (
            dir.path().display().to_string(),
            "not a regular file (a directory)",
        ),
        (
            big.display().to_string(),
            "too large (2097152 bytes; at most 1048576 bytes)",
        ),
        (
            dir.path().join("none.aesl").display().to_string(),
            "not found",
        ),
    ] {
        let t0 = Instant::now();
        let (status, out) = run_with_config(
            dir.path(),
            &format!("{QUIET}script: {{path: \"{path}\"}}\n"),
            &["--duration", "10"],
        );
        assert!(!status.success(), "{path}: {out}");
        assert!(
            out.contains(&format!("cannot read script {path}: {reason}")),
            "{path}: {out}"
        );
        assert!(
            t0.elapsed() < Duration::from_secs(8),
            "{path}: {:?}",
            t0.elapsed()
        );
    }
}

/// `--report` says whether allocations on the RT thread were counted, and counts them (the
/// binary installs the counting allocator): 0 after warm-up is a measurement now.
#[test]
fn report_allocations_are_measured() {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("report.json");
    let (status, out) = run_with_config(
        dir.path(),
        QUIET,
        &["--duration", "1", "--report", report.to_str().unwrap()],
    );
    assert!(status.success(), "{out}");
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    assert_eq!(v["rt"]["allocation_counting"], true, "{}", v["rt"]);
    assert_eq!(v["rt"]["allocations"], 0, "{}", v["rt"]);
    // The loop ran (a loop with nothing to do sleeps past its 10 ms period: a few cycles in a second).
    assert!(v["rt"]["cycles"].as_u64().unwrap() >= 1, "{}", v["rt"]);
}

/// A simulated Thymio on a pseudo-terminal (as a USB one would be): opening it logs no DTR
/// warning (a pseudo-terminal has no modem lines), and the node answers.
#[test]
fn pseudo_terminal_gives_no_dtr_warning() {
    let port = free_port();
    let mut c = thymio_rt();
    c.args([
        "sim",
        "--listen",
        &format!("tcp:127.0.0.1:{port}"),
        "--pty",
        "--duration",
        "60",
    ]);
    let mut sim = Proc::spawn("thymio-rt sim", c);
    let line = sim.wait_line(Duration::from_secs(10), |l| l.contains("ser:device="));
    let target = line[line.find("ser:device=").unwrap()..].trim().to_string();
    let out = thymio_rt()
        .args(["nodes", "--target", &target])
        .env("THYMIO_LOG", "info")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("thymio-II"));
    assert!(!err.contains("DTR"), "{err}");
}

// ---- raw motor commands of the generic interface -----------------------------------------------

/// Reads `var` of node 1 through the switch with a separate `thymio-rt vars get`, polling the
/// runtime meanwhile; `keep` is called every 50 ms (to keep sending commands).
fn read_remote(
    rt: &mut Runtime,
    switch: u16,
    var: &str,
    mut keep: impl FnMut(&mut Runtime),
) -> i16 {
    let mut child: Child = thymio_rt()
        .args([
            "vars",
            "get",
            "--target",
            &format!("tcp:host=127.0.0.1;port={switch}"),
            "--node",
            "1",
            var,
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut next_keep = Instant::now();
    loop {
        if Instant::now() >= next_keep {
            keep(rt);
            next_keep += Duration::from_millis(50);
        }
        rt.poll();
        if child.try_wait().unwrap().is_some() {
            let out = child.wait_with_output().unwrap();
            let text = String::from_utf8_lossy(&out.stdout);
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            return text.trim().parse().unwrap_or_else(|_| panic!("{text}"));
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("vars get {var} did not answer in time");
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// Polls until `var` reads `want` from the robot's side (after the commands stopped).
fn wait_remote(rt: &mut Runtime, switch: u16, var: &str, want: i16, within: Duration) {
    let deadline = Instant::now() + within;
    loop {
        let v = read_remote(rt, switch, var, |_| {});
        if v == want {
            return;
        }
        assert!(Instant::now() < deadline, "{var} = {v}, never {want}");
    }
}

/// Waits until both motor targets of node 1, read through the switch, are 0.
fn wait_remote_stopped(rt: &mut Runtime, switch: u16) {
    for var in ["motor.left.target", "motor.right.target"] {
        wait_remote(rt, switch, var, 0, Duration::from_secs(10));
    }
}

fn driven_runtime() -> (Runtime, u16) {
    let switch = free_port();
    let mut rt = Runtime::start(&script_config("thymio_ros.aesl", switch)).expect("runtime");
    wait_event(&mut rt, Duration::from_secs(15), |e| {
        matches!(
            e,
            EngineEvent::RobotReady {
                node: NodeId(1),
                ..
            }
        )
    });
    (rt, switch)
}

/// `set_speed` (what `aseba/events/set_speed` sends) of 32767 to a driven robot: the robot's
/// targets are capped at the driver's ±500 while it keeps coming, and the cmd_vel watchdog
/// stops the robot when it stops (before: 32767 reached the motors, for ever).
#[test]
fn raw_set_speed_is_capped_and_watched() {
    let (mut rt, switch) = driven_runtime();
    let send = |rt: &mut Runtime| {
        rt.engine
            .emit_script_event(NodeId(1), "set_speed", &[32767, 32767])
            .expect("set_speed");
    };
    assert_eq!(read_remote(&mut rt, switch, "motor.left.target", send), 500);
    assert_eq!(
        read_remote(&mut rt, switch, "motor.right.target", send),
        500
    );
    // a ratio below the cap is kept to the unit
    let arc = |rt: &mut Runtime| {
        rt.engine
            .emit_script_event(NodeId(1), "set_speed", &[200, -100])
            .expect("set_speed");
    };
    assert_eq!(read_remote(&mut rt, switch, "motor.left.target", arc), 200);
    assert_eq!(
        read_remote(&mut rt, switch, "motor.right.target", arc),
        -100
    );
    // stop sending: the watchdog (0.5 s) stops the robot
    let t0 = Instant::now();
    wait_event(&mut rt, Duration::from_secs(3), |e| {
        matches!(e, EngineEvent::WatchdogStop { node: NodeId(1) })
    });
    assert!(t0.elapsed() < Duration::from_secs(2), "{:?}", t0.elapsed());
    wait_remote_stopped(&mut rt, switch);
    // the wrong size is still an error
    assert!(rt
        .engine
        .emit_script_event(NodeId(1), "set_speed", &[1])
        .is_err());
    rt.stop();
}

/// Writes of `motor.left.target` / `motor.right.target` (what `aseba/set_variable` does) to a
/// driven robot go through the same cap and watchdog; the other wheel keeps its last raw target.
#[test]
fn raw_motor_target_writes_are_capped_and_watched() {
    let (mut rt, switch) = driven_runtime();
    let write = |rt: &mut Runtime| {
        rt.engine
            .set_variable(NodeId(1), "motor.left.target", &[32767])
            .expect("set_variable");
    };
    assert_eq!(
        read_remote(&mut rt, switch, "motor.left.target", write),
        500
    );
    let both = |rt: &mut Runtime| {
        rt.engine
            .set_variable(NodeId(1), "motor.left.target", &[-300])
            .unwrap();
        rt.engine
            .set_variable(NodeId(1), "motor.right.target", &[150])
            .unwrap();
    };
    assert_eq!(
        read_remote(&mut rt, switch, "motor.left.target", both),
        -300
    );
    assert_eq!(
        read_remote(&mut rt, switch, "motor.right.target", both),
        150
    );
    wait_remote_stopped(&mut rt, switch);
    assert!(rt
        .engine
        .set_variable(NodeId(1), "motor.left.target", &[1, 2])
        .is_err());
    rt.stop();
}

/// The multi-robot script (`set_speed` carries the node id first, `include_id_in_events`): the
/// named event and an anonymous `set_speed` addressed to the robot are capped and watched too.
#[test]
fn raw_set_speed_with_node_id_and_anonymous_is_capped_and_watched() {
    let switch = free_port();
    let mut c =
        Config::from_yaml("nodes: {thymio: {include_id_in_events: true}}\nset_id_variable: true\n")
            .unwrap();
    c.bridge.port = switch;
    c.bridge.script.path = aseba_script("thymio_ros_multi.aesl");
    unprivileged(&mut c);
    let mut rt = Runtime::start(&c).expect("runtime");
    wait_event(&mut rt, Duration::from_secs(15), |e| {
        matches!(
            e,
            EngineEvent::RobotReady {
                node: NodeId(1),
                ..
            }
        )
    });
    let named = |rt: &mut Runtime| {
        rt.engine
            .emit_script_event(NodeId(1), "set_speed", &[-32768, 0])
            .expect("set_speed");
    };
    assert_eq!(
        read_remote(&mut rt, switch, "motor.left.target", named),
        -500
    );
    let id = rt
        .engine
        .network()
        .node(NodeId(1))
        .and_then(|n| n.script.as_ref())
        .and_then(|s| s.events.iter().position(|(e, _)| e == "set_speed"))
        .expect("set_speed in the script") as u16;
    let anonymous = move |rt: &mut Runtime| {
        rt.engine
            .emit_anonymous(id, &[1, 1000, 32767])
            .expect("anonymous set_speed");
    };
    assert_eq!(
        read_remote(&mut rt, switch, "motor.right.target", anonymous),
        500
    );
    // 1000 / 32767 of the cap: the ratio is kept (trunc(500 · 1000 / 32767) = 15)
    assert_eq!(
        read_remote(&mut rt, switch, "motor.left.target", anonymous),
        15
    );
    wait_remote(
        &mut rt,
        switch,
        "motor.right.target",
        0,
        Duration::from_secs(10),
    );
    rt.stop();
}

/// A node the driver does not drive (driver disabled) gets the write as it comes, as before.
#[test]
fn raw_writes_to_a_node_not_driven_pass_unchanged() {
    let switch = free_port();
    let mut c = script_config("thymio_ros.aesl", switch);
    c.driver.enabled = false;
    let mut rt = Runtime::start(&c).expect("runtime");
    wait_event(&mut rt, Duration::from_secs(15), |e| {
        matches!(e, EngineEvent::ScriptLoaded { node: NodeId(1) })
    });
    let write = |rt: &mut Runtime| {
        rt.engine
            .set_variable(NodeId(1), "motor.left.target", &[700])
            .expect("set_variable");
    };
    assert_eq!(
        read_remote(&mut rt, switch, "motor.left.target", write),
        700
    );
    rt.engine
        .set_variable(NodeId(1), "motor.left.target", &[0])
        .unwrap();
    rt.stop();
}
