//! Helpers for the tests that run the driver in this process (`thymio_rt::runtime::Runtime`) and for the simulated
//! robot they drive.

use super::{thymio_rt, wait_listening, Proc};
use nrt_engine::engine::EngineEvent;
use std::time::{Duration, Instant};
use thymio_rt::config::Config;
use thymio_rt::runtime::Runtime;

/// `thymio-rt sim` serving one robot (node 1) on `port` for `duration_s` seconds; waits until it runs and listens.
pub fn sim_server(port: u16, duration_s: u32) -> Proc {
    let mut c = thymio_rt();
    c.args([
        "sim",
        "--listen",
        &format!("tcp:127.0.0.1:{port}"),
        "--duration",
        &duration_s.to_string(),
    ]);
    let mut p = Proc::spawn("thymio-rt sim", c);
    p.wait_line(Duration::from_secs(10), |l| {
        l.contains("simulation running")
    });
    wait_listening(port, Duration::from_secs(5));
    p
}

/// The target string of a TCP peer on this host.
pub fn tcp_target(port: u16) -> String {
    format!("tcp:host=127.0.0.1;port={port}")
}

/// Runs the RT thread as tests can: no real-time priority, no memory lock.
pub fn unprivileged(c: &mut Config) {
    c.rt.priority = 0;
    c.rt.lock_memory = false;
}

/// A configuration that only observes `target`: no switch, no driver, unprivileged.
pub fn observer_config(target: String) -> Config {
    let mut c = Config::default();
    c.bridge.targets = vec![target];
    c.bridge.port = 0;
    c.driver.enabled = false;
    unprivileged(&mut c);
    c
}

/// The path of `config/aseba/<name>`, one of the robot's Aseba scripts.
pub fn aseba_script(name: &str) -> String {
    super::root()
        .join("config/aseba")
        .join(name)
        .display()
        .to_string()
}

/// A configuration that runs script `config/aseba/<script>` on the default target (the embedded simulator), with
/// the switch on `switch_port` (0: none), unprivileged.
pub fn script_config(script: &str, switch_port: u16) -> Config {
    let mut c = Config::default();
    c.bridge.port = switch_port;
    c.bridge.script.path = aseba_script(script);
    unprivileged(&mut c);
    c
}

/// Polls `rt` until it reports an event that satisfies `f`; returns when it was seen.
pub fn wait_event(
    rt: &mut Runtime,
    timeout: Duration,
    f: impl Fn(&EngineEvent) -> bool,
) -> Instant {
    rt.poll_until(timeout, |_, events| {
        events.iter().any(&f).then(Instant::now)
    })
    .expect("event in time")
}
