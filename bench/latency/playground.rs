//! The robot of the end-to-end benchmark: Aseba Playground (Debian `aseba`), headless (Qt's
//! offscreen platform), with one Thymio-II per TCP port. Its simulator steps the world in
//! bursts (about three 10 ms steps every 30 ms), so 100 Hz odometry reaches a driver three frames
//! at a time: the realistic case, unlike a relay that plays evenly spaced events.
//!
//! The Python driver and the floor do not load scripts: [`load_driver_script`] leaves the robot
//! running the driver script (thymio-rt without ROS, `reset_on_closing: false`), as a ROS-Thymio
//! user loads it with Aseba Studio or asebamassloader before starting the Python driver.

use crate::procs::Proc;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// Odometry every motor event (100 Hz; the shipped default is every 5th, 20 Hz): the issue's
/// workload for every driver alike.
pub const MOTOR_PERIOD: &str = "1";
/// The driver script variant Aseba Playground's Thymio compiles (its prox.comm has no per-sensor
/// payloads, so the firmware-14 script does not compile there).
pub const SCRIPT: &str = "builtin:aseba/thymio_ros_playground.aesl";

/// A running Playground and the ports of its robots.
pub struct Playground {
    _proc: Proc,
    /// TCP port of each robot (node ids 1..).
    pub ports: Vec<u16>,
}

/// Starts Aseba Playground with `robots` Thymio-IIs; returns once every robot answers on its
/// port. `dir` holds the scene and Qt's runtime files.
pub fn start(dir: &Path, robots: usize) -> Result<Playground, String> {
    let ports = (0..robots)
        .map(|_| crate::free_port())
        .collect::<Result<Vec<_>, _>>()?;
    let mut scene = String::from(
        "<!DOCTYPE aseba-playground>\n<aseba-playground>\n<color name=\"wall\" r=\"0.9\" g=\"0.9\" b=\"0.9\"/>\n<world w=\"500\" h=\"500\" color=\"wall\"/>\n",
    );
    for (i, port) in ports.iter().enumerate() {
        scene.push_str(&format!(
            "<robot type=\"thymio2\" x=\"{}\" y=\"{}\" port=\"{port}\" name=\"t{i}\" nodeId=\"{}\"/>\n",
            60 + 120 * (i % 4),
            100 + 200 * (i / 4),
            i + 1,
        ));
    }
    scene.push_str("</aseba-playground>\n");
    std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    let path = dir.join("bench.playground");
    std::fs::write(&path, scene).map_err(|e| e.to_string())?;
    let mut c = Command::new("asebaplayground");
    c.arg(&path)
        .env("QT_QPA_PLATFORM", "offscreen")
        .env("XDG_RUNTIME_DIR", dir)
        .env("HOME", dir);
    crate::procs::ignoring_sigpipe(&mut c);
    let proc = Proc::spawn("asebaplayground", c);
    for port in &ports {
        wait_node(*port, Duration::from_secs(30))?;
    }
    Ok(Playground { _proc: proc, ports })
}

/// Waits until an Aseba node answers LIST_NODES on `port` (Playground listens before its robots
/// are ready).
fn wait_node(port: u16, timeout: Duration) -> Result<(), String> {
    let deadline = Instant::now() + timeout;
    while Instant::now() < deadline {
        // LIST_NODES (0xA011) from the host, protocol version 5; NODE_PRESENT answers
        if heard(
            port,
            &[2, 0, 0, 0, 0x11, 0xA0, 5, 0],
            0x900C,
            Duration::from_secs(1),
        ) {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    Err(format!("Playground's robot on port {port} did not answer"))
}

/// Whether a frame of `kind` arrives within `within` on a fresh connection to `port`, after
/// sending `request` (may be empty).
fn heard(port: u16, request: &[u8], kind: u16, within: Duration) -> bool {
    use std::io::{Read, Write};
    let Ok(mut s) = std::net::TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    if s.write_all(request).is_err() {
        return false;
    }
    let _ = s.set_read_timeout(Some(Duration::from_millis(200)));
    let mut r = msgs::reassembler::Reassembler::new();
    let mut buf = [0u8; 1024];
    let end = Instant::now() + within;
    while Instant::now() < end {
        let Ok(n) = s.read(&mut buf) else { continue };
        if n == 0 {
            return false;
        }
        let mut input = &buf[..n];
        while let Some(f) = r.push(&mut input) {
            if f.is_ok_and(|f| f.kind == kind) {
                return true;
            }
        }
    }
    false
}

/// Leaves the driver script (with odometry at 100 Hz) running on every robot of `ports`:
/// thymio-rt without ROS loads it, then exits without resetting the robots. The drivers measured
/// next load nothing: the robots must be heard emitting odometry afterwards (a robot left without
/// would only show as "too little odometry" a whole window later); the load is tried again if not
/// (rarely seen right after the previous row's driver reset the robot at its exit).
pub fn load_driver_script(driver: &Path, ports: &[u16]) -> Result<(), String> {
    const TRIES: usize = 3;
    for attempt in 1..=TRIES {
        run_loader(driver, ports)?;
        let silent: Vec<u16> = ports
            .iter()
            .copied()
            .filter(|p| !heard(*p, &[], crate::kinds::ODOMETRY, Duration::from_secs(3)))
            .collect();
        if silent.is_empty() {
            return Ok(());
        }
        eprintln!(
            "  script loader, try {attempt}/{TRIES}: no odometry from the robot(s) on port(s) {silent:?} afterwards"
        );
    }
    Err(format!(
        "the robots on ports {ports:?} emit no odometry after {TRIES} loads of the driver script"
    ))
}

/// One run of the script loader on `ports`, interrupted once every robot is driven.
fn run_loader(driver: &Path, ports: &[u16]) -> Result<(), String> {
    let mut c = Command::new(driver);
    c.args([
        "run",
        "--no-ros",
        "--switch-port",
        "0",
        "--duration",
        "120",
        "-c",
    ])
    .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("bench/latency/loader.yaml"));
    for p in ports {
        c.args(["-t", &format!("tcp:host=127.0.0.1;port={p}")]);
    }
    let mut p = Proc::spawn("script loader", c);
    for _ in ports {
        p.wait_for("driven as RT robot", Duration::from_secs(60))?;
    }
    p.interrupt();
    p.wait(Duration::from_secs(20))?;
    Ok(())
}
