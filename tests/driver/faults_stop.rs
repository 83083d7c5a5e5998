//! The robot stops whatever happens (issue 14): stop signals close together, a link cut, a
//! SIGKILLed driver, a VM stopped by a switch client. The robot is a `thymio-rt sim` process;
//! its motor targets are read from the robot's side by the test's own Aseba client (its own
//! TCP connection to the simulated robot, independent of the driver).

use crate::common;

use common::*;
use handoff::NodeId;
use nix::sys::signal::Signal;
use nrt_engine::engine::EngineEvent;
use nrt_engine::network::{Command as NetCommand, NetworkEvent};
use std::path::Path;
use std::time::{Duration, Instant};
use thymio_rt::config::Config;
use thymio_rt::runtime::Runtime;

/// The driver script's on-robot timeout (`SPEED_TIMEOUT`, ms) in the default configuration.
const ON_ROBOT_TIMEOUT: Duration = Duration::from_millis(300);
/// Margin for reading the targets back through the test's own client (generous: a behaviour
/// check, not a speed target).
const MARGIN: Duration = Duration::from_millis(1500);
/// Life of the simulated robot (seconds): longer than any test here.
const SIM_SECONDS: u32 = 120;

/// The test's own Aseba client on the robot (no driver, no switch, no script).
fn observer(port: u16) -> Runtime {
    let mut rt = Runtime::start(&observer_config(tcp_target(port))).unwrap();
    rt.poll_until(Duration::from_secs(10), |e, _| {
        e.network()
            .node(NodeId(1))
            .filter(|n| n.connected && n.variable("motor.left.target").is_some())
            .map(|_| ())
    })
    .expect("the observer sees node 1 and its description");
    rt
}

/// One read of a variable of node `node` through `rt` (None: no answer in time).
fn read(rt: &mut Runtime, node: NodeId, name: &str) -> Option<Vec<i16>> {
    let req = rt
        .engine
        .network_mut()
        .get_variable(node, name, Instant::now())
        .ok()?;
    rt.poll_until(Duration::from_secs(1), |_, events| {
        events.iter().find_map(|e| match e {
            EngineEvent::Network(NetworkEvent::Variables { request, result })
                if *request == req =>
            {
                Some(result.clone().ok())
            }
            _ => None,
        })
    })
    .flatten()
}

/// Node 1's motor targets `[left, right]`, read from the robot.
fn targets(rt: &mut Runtime) -> Option<[i16; 2]> {
    targets_of(rt, NodeId(1))
}

/// A node's motor targets `[left, right]`, read from the robot.
fn targets_of(rt: &mut Runtime, node: NodeId) -> Option<[i16; 2]> {
    let l = read(rt, node, "motor.left.target")?;
    let r = read(rt, node, "motor.right.target")?;
    Some([l[0], r[0]])
}

/// Waits until node 1's targets satisfy `f`; returns when it was seen.
fn wait_targets(
    rt: &mut Runtime,
    within: Duration,
    what: &str,
    f: impl Fn([i16; 2]) -> bool,
) -> Instant {
    wait_targets_of(rt, NodeId(1), within, what, f)
}

/// Waits until a node's targets satisfy `f`; returns when it was seen.
fn wait_targets_of(
    rt: &mut Runtime,
    node: NodeId,
    within: Duration,
    what: &str,
    f: impl Fn([i16; 2]) -> bool,
) -> Instant {
    let deadline = Instant::now() + within;
    let mut last = None;
    loop {
        if let Some(t) = targets_of(rt, node) {
            if f(t) {
                return Instant::now();
            }
            last = Some(t);
        }
        assert!(
            Instant::now() < deadline,
            "{what}: not within {within:?} (last read: {last:?})"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn moving(t: [i16; 2]) -> bool {
    t[0] > 0 && t[1] > 0
}

fn stopped(t: [i16; 2]) -> bool {
    t == [0, 0]
}

/// A configuration file for the driver binary: the driver script with `extra` YAML in its
/// `script` section, no RT privileges needed.
fn driver_config(dir: &Path, extra: &str) -> std::path::PathBuf {
    driver_config_with(dir, "thymio_ros.aesl", extra)
}

fn driver_config_with(dir: &Path, script: &str, extra: &str) -> std::path::PathBuf {
    let script = root().join("config/aseba").join(script);
    let text = format!(
        "script:\n  path: {}\n  reload_on_reconnect: true\n{extra}\nrt:\n  priority: 0\n  lock_memory: false\n",
        script.display()
    );
    let path = dir.join("driver.yaml");
    std::fs::write(&path, text).unwrap();
    path
}

/// `thymio-rt run --no-ros` driving node 1 forward through `target`.
fn driver(config: &Path, target: &str, switch_port: u16) -> Proc {
    let mut c = thymio_rt();
    c.env("THYMIO_LOG", "info").args([
        "run",
        "--no-ros",
        "-c",
        config.to_str().unwrap(),
        "-t",
        target,
        "--switch-port",
        &switch_port.to_string(),
        "--cmd-vel",
        "0.1,0",
    ]);
    Proc::spawn("thymio-rt run", c)
}

#[test]
fn close_stop_signals_never_skip_the_zero_speed() {
    let port = free_port();
    let _sim = sim_server(port, SIM_SECONDS);
    let mut obs = observer(port);
    let dir = tempfile::tempdir().unwrap();
    // The on-robot watchdog off: only the driver's own stop can stop the robot here.
    let config = driver_config(dir.path(), "  constants:\n    SPEED_TIMEOUT: 0\n");
    let trials: [&[Signal]; 6] = [
        &[Signal::SIGINT, Signal::SIGINT],
        &[Signal::SIGINT, Signal::SIGTERM],
        &[Signal::SIGTERM, Signal::SIGINT],
        &[Signal::SIGINT; 5],
        &[
            Signal::SIGTERM,
            Signal::SIGINT,
            Signal::SIGTERM,
            Signal::SIGINT,
        ],
        &[Signal::SIGINT, Signal::SIGINT],
    ];
    for (i, signals) in trials.iter().enumerate() {
        let mut d = driver(&config, &tcp_target(port), 0);
        wait_targets(&mut obs, Duration::from_secs(20), "driven", moving);
        let sent = Instant::now();
        for s in signals.iter() {
            d.signal(*s);
        }
        let status = d.wait_exit(Duration::from_secs(5));
        let took = sent.elapsed();
        d.drain();
        eprintln!("trial {i} ({signals:?}): exit {status:?} {took:?} after the first signal");
        let t = targets(&mut obs);
        assert_eq!(
            t,
            Some([0, 0]),
            "trial {i} ({signals:?}): the robot kept its target; exit {status:?} after {took:?}; output:\n{}",
            d.seen.join("\n")
        );
        assert!(
            took < Duration::from_millis(200) + Duration::from_millis(300),
            "trial {i}: exit took {took:?}"
        );
    }
}

/// A driver binary (its configuration's `extra` YAML) driving the simulated robot forward, stopped by one SIGINT
/// once the robot moves (`before` runs on the observer first). Checks the exit and its confirmed stop; returns the
/// robot's process (alive), the observer and the driver's output.
fn stopped_by_one_signal(
    extra: &str,
    before: impl FnOnce(&mut Runtime),
) -> (Proc, Runtime, String) {
    let port = free_port();
    let sim = sim_server(port, SIM_SECONDS);
    let mut obs = observer(port);
    let dir = tempfile::tempdir().unwrap();
    let config = driver_config(dir.path(), extra);
    let mut d = driver(&config, &tcp_target(port), 0);
    wait_targets(&mut obs, Duration::from_secs(20), "driven", moving);
    before(&mut obs);
    d.signal(Signal::SIGINT);
    let status = d.wait_exit(Duration::from_secs(5));
    let log = d.seen.join("\n");
    assert!(status.success(), "{status}:\n{log}");
    assert!(
        log.contains("robots were sent zero speed (confirmed)"),
        "{log}"
    );
    assert_eq!(targets(&mut obs), Some([0, 0]));
    (sim, obs, log)
}

#[test]
fn one_stop_signal_stops_and_confirms() {
    stopped_by_one_signal("  constants:\n    SPEED_TIMEOUT: 0\n", |_| {});
}

/// `reset_on_closing` (asebaros): the robots' VMs are reset when the driver closes — also when Ctrl-C closes it.
/// The RT thread, stopped by the signal itself, used to end before NRT (told by the same signal) had handed it
/// the RESET frames: the robot's VM kept running. Now the exit waits for them.
#[test]
fn reset_on_closing_reaches_the_robot_after_a_stop_signal() {
    let step_by_step =
        |obs: &mut Runtime| vm_flags(obs).map(|f| f & msgs::opcodes::FLAG_STEP_BY_STEP != 0);
    let (_sim, mut obs, log) = stopped_by_one_signal("reset_on_closing: true", |obs| {
        assert_eq!(step_by_step(obs), Some(false), "the driver's script runs");
    });
    assert_eq!(
        step_by_step(&mut obs),
        Some(true),
        "the VM was not reset at closing:\n{log}"
    );
}

#[test]
fn a_cut_link_stops_the_robot_by_itself() {
    let port = free_port();
    let _sim = sim_server(port, SIM_SECONDS);
    let mut obs = observer(port);
    let relay = Relay::start(port);
    let dir = tempfile::tempdir().unwrap();
    let config = driver_config(dir.path(), "");
    let _d = driver(&config, &tcp_target(relay.port), 0);
    wait_targets(&mut obs, Duration::from_secs(20), "driven", moving);
    // Moving steadily: the driver's refresh keeps the on-robot watchdog fed.
    std::thread::sleep(ON_ROBOT_TIMEOUT * 3);
    assert!(
        targets(&mut obs).is_some_and(moving),
        "kept moving while fed"
    );
    let cut = Instant::now();
    drop(relay);
    let seen = wait_targets(
        &mut obs,
        ON_ROBOT_TIMEOUT + MARGIN,
        "stopped after the link cut",
        stopped,
    );
    eprintln!("stopped {:?} after the cut", seen - cut);
}

#[test]
fn a_killed_driver_leaves_a_stopped_robot() {
    let port = free_port();
    let _sim = sim_server(port, SIM_SECONDS);
    let mut obs = observer(port);
    let dir = tempfile::tempdir().unwrap();
    let config = driver_config(dir.path(), "");
    let mut d = driver(&config, &tcp_target(port), 0);
    wait_targets(&mut obs, Duration::from_secs(20), "driven", moving);
    let killed = Instant::now();
    d.signal(Signal::SIGKILL);
    d.wait_exit(Duration::from_secs(5));
    let seen = wait_targets(
        &mut obs,
        ON_ROBOT_TIMEOUT + MARGIN,
        "stopped after SIGKILL",
        stopped,
    );
    eprintln!("stopped {:?} after SIGKILL", seen - killed);
}

#[test]
fn a_killed_driver_leaves_a_stopped_playground_robot() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let Some(_pg) = playground(dir.path(), port, 1) else {
        return; // peer missing, run opted out: skip recorded
    };
    let mut obs = Runtime::start(&observer_config(tcp_target(port))).unwrap();
    let node = obs
        .poll_until(Duration::from_secs(20), |e, _| {
            e.network()
                .nodes()
                .find(|n| n.connected && n.variable("motor.left.target").is_some())
                .map(|n| n.id)
        })
        .expect("the observer sees the Playground's Thymio");
    let config = driver_config_with(dir.path(), "thymio_ros_playground.aesl", "");
    let mut d = driver(&config, &tcp_target(port), 0);
    wait_targets_of(&mut obs, node, Duration::from_secs(30), "driven", moving);
    let killed = Instant::now();
    d.signal(Signal::SIGKILL);
    d.wait_exit(Duration::from_secs(5));
    let seen = wait_targets_of(
        &mut obs,
        node,
        ON_ROBOT_TIMEOUT + MARGIN,
        "Playground robot stopped after SIGKILL",
        stopped,
    );
    eprintln!("stopped {:?} after SIGKILL", seen - killed);
    obs.stop();
}

/// The driver in this process, driving node 1 of `port` (switch on `switch_port`).
fn inproc_driver(port: u16, switch_port: u16, restart: bool) -> Runtime {
    let mut c = Config::from_file(&root().join("config/thymio-rt.yaml")).unwrap();
    c.bridge.targets = vec![tcp_target(port)];
    c.bridge.port = switch_port;
    unprivileged(&mut c);
    c.driver.restart_stopped_vm = restart;
    let mut rt = Runtime::start(&c).unwrap();
    wait_event(&mut rt, Duration::from_secs(20), |e| {
        matches!(
            e,
            EngineEvent::RobotReady {
                node: NodeId(1),
                ..
            }
        )
    });
    rt
}

/// A switch client: sends STOP to node 1's VM through the driver's switch port.
fn stop_vm_through_switch(switch_port: u16) {
    use std::io::Write;
    let mut s = std::net::TcpStream::connect(("127.0.0.1", switch_port)).unwrap();
    // STOP (0xA006) from source 0 to node 1
    s.write_all(&[2, 0, 0, 0, 0x06, 0xA0, 1, 0]).unwrap();
    s.flush().unwrap();
    // keep the connection until the switch has read it
    std::thread::sleep(Duration::from_millis(100));
}

/// Drives the robot forward through `d` until the observer sees it move.
fn drive(d: &mut Runtime, obs: &mut Runtime) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        d.engine.set_cmd_vel(NodeId(1), 0.1, 0.0).unwrap();
        d.poll();
        if targets(obs).is_some_and(moving) {
            return;
        }
        assert!(Instant::now() < deadline, "the robot does not move");
    }
}

/// Polls the driver until `f` holds (bounded).
fn poll_driver(d: &mut Runtime, within: Duration, what: &str, f: impl Fn(&Runtime) -> bool) {
    let deadline = Instant::now() + within;
    while !f(d) {
        assert!(Instant::now() < deadline, "{what}: not within {within:?}");
        d.poll();
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// The robot's VM execution flags, asked by the observer.
fn vm_flags(obs: &mut Runtime) -> Option<u16> {
    obs.engine
        .network_mut()
        .command(NodeId(1), NetCommand::GetExecutionState)
        .ok()?;
    obs.poll_until(Duration::from_secs(1), |_, events| {
        events.iter().find_map(|e| match e {
            EngineEvent::Network(NetworkEvent::ExecutionState {
                id: NodeId(1),
                flags,
                ..
            }) => Some(*flags),
            _ => None,
        })
    })
}

#[test]
fn a_vm_stopped_by_a_switch_client_cannot_defeat_the_stop_paths() {
    let port = free_port();
    let _sim = sim_server(port, SIM_SECONDS);
    let mut obs = observer(port);

    // restart_stopped_vm off: the VM stays stopped; the stops must not need it.
    let switch_port = free_port();
    let mut d = inproc_driver(port, switch_port, false);
    drive(&mut d, &mut obs);
    stop_vm_through_switch(switch_port);
    poll_driver(&mut d, Duration::from_secs(5), "halt reported", |d| {
        d.engine
            .vm_record(NodeId(1))
            .is_some_and(|r| r.halted && r.halts == 1)
    });
    assert!(d.engine.vm_record(NodeId(1)).unwrap().by_switch_client);
    assert!(vm_flags(&mut obs).is_some_and(|f| f & msgs::opcodes::FLAG_STEP_BY_STEP != 0));
    // no more cmd_vel: the RT watchdog (cmd_vel_timeout 0.5 s) stops it; the VM's set_speed
    // handler cannot run, and neither can the on-robot watchdog
    let t0 = Instant::now();
    while t0.elapsed() < Duration::from_millis(500) + MARGIN {
        d.poll();
        if targets(&mut obs).is_some_and(stopped) {
            break;
        }
    }
    assert_eq!(
        targets(&mut obs),
        Some([0, 0]),
        "the watchdog stop reached a stopped VM"
    );
    // the robot moving again with its VM still stopped (someone wrote its targets): the exit
    // stop writes them directly and reads them back
    obs.engine
        .network_mut()
        .set_variable(NodeId(1), "motor.left.target", &[150])
        .unwrap();
    obs.engine
        .network_mut()
        .set_variable(NodeId(1), "motor.right.target", &[150])
        .unwrap();
    wait_targets(&mut obs, Duration::from_secs(5), "moving again", moving);
    let stopped_rt = d.stop();
    assert_eq!(stopped_rt.stops.len(), 1);
    assert_eq!(
        stopped_rt.stops[0].confirmed,
        Some(true),
        "exit stop read back"
    );
    assert_eq!(
        targets(&mut obs),
        Some([0, 0]),
        "the exit stop reached a stopped VM"
    );

    // restart_stopped_vm on: the VM is set running again and reported once
    let switch_port = free_port();
    let mut d = inproc_driver(port, switch_port, true);
    drive(&mut d, &mut obs);
    stop_vm_through_switch(switch_port);
    // bounded generously: a loaded 2-core machine (the suite runs two tests at once) once took over 5 s here
    poll_driver(
        &mut d,
        Duration::from_secs(15),
        "halt seen and restarted",
        |d| {
            d.engine
                .vm_record(NodeId(1))
                .is_some_and(|r| r.halts == 1 && r.restarts >= 1)
        },
    );
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        d.engine.set_cmd_vel(NodeId(1), 0.1, 0.0).unwrap();
        d.poll();
        if vm_flags(&mut obs).is_some_and(|f| f & msgs::opcodes::FLAG_STEP_BY_STEP == 0) {
            break;
        }
        assert!(Instant::now() < deadline, "the VM was not restarted");
    }
    // running again: set_speed works (the robot moves), the record says running
    drive(&mut d, &mut obs);
    poll_driver(&mut d, Duration::from_secs(5), "record running", |d| {
        d.engine
            .vm_record(NodeId(1))
            .is_some_and(|r| !r.halted && r.halts == 1)
    });
    let s = d.stop();
    assert_eq!(s.stops[0].confirmed, Some(true));
    assert_eq!(targets(&mut obs), Some([0, 0]));
    obs.stop();
}
