//! Hostile input through the Aseba switch (issue 14): any local process can connect to it, so
//! nothing it sends may kill the robot or the driver. Real peers: the thymio-rt binary (or the
//! driver's runtime, where the test drives it) against a simulated Thymio served by
//! `thymio-rt sim`, observed from the robot's side (a direct connection to the simulated robot,
//! a relay counting what reaches it) and through the switch with raw TCP clients.

use crate::common;

use common::*;
use handoff::NodeId;
use msgs::description::thymio_ii_fw14;
use msgs::wire::{kind, read_header, Message};
use nrt_engine::engine::EngineEvent;
use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use thymio_rt::config::Config;
use thymio_rt::runtime::Runtime;

/// A raw Aseba TCP client: whole frames out, frames in (source, kind, payload).
struct Client {
    s: TcpStream,
    buf: Vec<u8>,
}

impl Client {
    fn connect(port: u16) -> Client {
        let s = TcpStream::connect(("127.0.0.1", port)).unwrap();
        s.set_read_timeout(Some(Duration::from_millis(20))).unwrap();
        Client { s, buf: Vec::new() }
    }

    fn send(&mut self, frame: &[u8]) {
        self.s.write_all(frame).unwrap();
    }

    /// Waits (bounded) for a frame matching `pred`.
    fn wait(&mut self, timeout: Duration, pred: impl Fn(u16, u16, &[u8]) -> bool) -> bool {
        let deadline = Instant::now() + timeout;
        let mut chunk = [0u8; 8192];
        while Instant::now() < deadline {
            while let Some(h) = read_header(&self.buf) {
                if self.buf.len() < 6 + h.len {
                    break;
                }
                let hit = pred(h.source, h.kind, &self.buf[6..6 + h.len]);
                self.buf.drain(..6 + h.len);
                if hit {
                    return true;
                }
            }
            match self.s.read(&mut chunk) {
                Ok(0) => return false,
                Ok(n) => self.buf.extend_from_slice(&chunk[..n]),
                Err(_) => {}
            }
        }
        false
    }
}

/// A well-formed user event of `words` arguments (the protocol allows 258 at most).
fn user_event(id: u16, words: usize) -> Vec<u8> {
    let args: Vec<u8> = (0..words).flat_map(|i| (i as i16).to_le_bytes()).collect();
    msgs::wire::unchecked_frame(0, id, &args)
}

fn get_variables(start: u16, length: u16) -> Vec<u8> {
    Message::GetVariables {
        dest: 1,
        start,
        length,
    }
    .to_frame(0)
    .unwrap()
}

/// A 259-word user event sent to the switch is refused and counted for its client; the robot
/// keeps answering on the driver's link (a fresh variable read through the switch), keeps
/// running the driver's script (its odometry events still come), and `--report` shows it.
/// Before the fix the switch forwarded the event's body as frames and the simulated robot never
/// answered the driver's link again.
#[test]
fn an_oversize_event_is_refused_counted_and_the_robot_keeps_answering() {
    let robot_port = free_port();
    let _sim = sim_server(robot_port, 90);
    let switch_port = free_port();
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("report.json");
    let mut c = thymio_rt();
    c.arg("run")
        .arg("--config")
        .arg(root().join("config/thymio-rt.yaml"))
        .arg("--no-ros")
        .args(["--target", &tcp_target(robot_port)])
        .args(["--switch-port", &switch_port.to_string()])
        .arg("--report")
        .arg(&report)
        .args(["--duration", "60"]);
    let mut driver = Proc::spawn("thymio-rt run", c);
    driver.wait_line(Duration::from_secs(15), |l| l.contains("node 1 is robot"));

    let mut client = Client::connect(switch_port);
    let odometry_id = |k: u16| k < 0x8000;
    assert!(
        client.wait(Duration::from_secs(5), |src, k, _| src == 1
            && odometry_id(k)),
        "the robot's events reach switch clients"
    );
    // the largest event the protocol allows goes through; one word more is refused
    client.send(&user_event(900, 258));
    client.send(&user_event(900, 259));
    client.send(&get_variables(0, 2));
    assert!(
        client.wait(Duration::from_secs(5), |src, k, p| src == 1
            && k == kind::VARIABLES
            && p.len() == 6),
        "the robot answers a fresh variable read through the switch"
    );
    // a later read too, and the script still runs (its events keep coming)
    client.send(&get_variables(0, 1));
    assert!(client.wait(Duration::from_secs(5), |src, k, p| src == 1
        && k == kind::VARIABLES
        && p.len() == 4));
    client.buf.clear();
    assert!(client.wait(Duration::from_secs(5), |src, k, _| src == 1
        && odometry_id(k)));
    // the driver still has the node: the robot answers it on its link, seen from the robot's side
    let mut direct = Client::connect(robot_port);
    direct.send(&Message::ListNodes { version: 9 }.to_frame(0).unwrap());
    assert!(direct.wait(Duration::from_secs(5), |src, k, _| src == 1
        && k == kind::NODE_PRESENT));

    driver.signal(nix::sys::signal::Signal::SIGINT);
    assert!(driver.wait_exit(Duration::from_secs(10)).success());
    assert!(
        !driver
            .seen
            .iter()
            .any(|l| l.contains("no longer driven") || l.contains("disconnected: link")),
        "the driver kept the node:\n{}",
        driver.seen.join("\n")
    );
    let r: serde_json::Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    let sw = &r["switch"];
    assert_eq!(sw["oversize"], 1, "{sw}");
    assert_eq!(sw["max_payload"], 516);
    assert_eq!(sw["clients"][0]["oversize"], 1, "{sw}");
    assert_eq!(sw["clients"][0]["frames_in"], 3, "{sw}");
}

/// The configuration of the driver's runtime toward `target`, switch on `switch_port`.
fn driver_config(target: String, switch_port: u16, tcp_budget: u32) -> Config {
    let mut c = Config::from_file(&root().join("config/thymio-rt.yaml")).unwrap();
    c.bridge.targets = vec![target];
    c.bridge.port = switch_port;
    c.bridge.switch.tcp_budget = tcp_budget;
    unprivileged(&mut c);
    c
}

/// Reads `motor.left.target` from the robot's side (a direct connection to the simulated
/// robot), retrying until `pred` holds.
fn wait_robot_target(direct: &mut Client, within: Duration, pred: impl Fn(i16) -> bool) -> bool {
    let addr = thymio_ii_fw14()
        .variable("motor.left.target")
        .unwrap()
        .address;
    let deadline = Instant::now() + within;
    while Instant::now() < deadline {
        direct.send(&get_variables(addr, 1));
        let hit = direct.wait(Duration::from_millis(200), |src, k, p| {
            src == 1
                && k == kind::VARIABLES
                && p.len() == 4
                && u16::from_le_bytes([p[0], p[1]]) == addr
                && pred(i16::from_le_bytes([p[2], p[3]]))
        });
        if hit {
            return true;
        }
    }
    false
}

/// A local client floods the switch for 3 s: what reaches the robot link (counted by a relay
/// between the driver and the simulated robot) stays within the link's budget plus the
/// driver's own traffic, the excess is counted for the client, and the robot is still driven
/// (a new cmd_vel reaches its motor targets, read from the robot's side; odometry flows).
/// Before the fix the flood went to the link unthrottled.
#[test]
fn a_switch_flood_is_held_to_the_link_budget_and_the_robot_is_still_driven() {
    const BUDGET: u32 = 20_000;
    let robot_port = free_port();
    let _sim = sim_server(robot_port, 90);
    let relay = Relay::start(robot_port);
    let switch_port = free_port();
    let mut rt =
        Runtime::start(&driver_config(tcp_target(relay.port), switch_port, BUDGET)).unwrap();
    // odometry comes on the RT thread's odometry ring (a publisher thread's in the driver)
    let mut odometry_out = rt.engine.take_odometry_out().unwrap();
    rt.poll_until(Duration::from_secs(15), |_, events| {
        events
            .iter()
            .any(|e| {
                matches!(
                    e,
                    EngineEvent::RobotReady {
                        node: NodeId(1),
                        ..
                    }
                )
            })
            .then_some(())
    })
    .expect("robot ready");
    let mut direct = Client::connect(robot_port);
    let drive = |rt: &mut Runtime, v: f64| {
        rt.engine.set_cmd_vel(NodeId(1), v, 0.0).unwrap();
        rt.poll()
    };
    // forward, seen on the robot
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut reached = false;
    while !reached && Instant::now() < deadline {
        drive(&mut rt, 0.1);
        reached = wait_robot_target(&mut direct, Duration::from_millis(100), |t| t > 100);
    }
    assert!(reached, "cmd_vel reaches the robot before the flood");

    // the flood: small valid events as fast as the socket takes them, for 3 s
    let stop = Arc::new(AtomicBool::new(false));
    let sent = Arc::new(AtomicU64::new(0));
    let flooder = {
        let (stop, sent) = (stop.clone(), sent.clone());
        std::thread::spawn(move || {
            let mut s = TcpStream::connect(("127.0.0.1", switch_port)).unwrap();
            s.set_nonblocking(true).unwrap();
            let frames: Vec<u8> = (0..64).flat_map(|_| user_event(900, 1)).collect();
            while !stop.load(Ordering::Relaxed) {
                match s.write(&frames) {
                    Ok(n) => {
                        sent.fetch_add(n as u64, Ordering::Relaxed);
                    }
                    Err(e) if e.kind() == ErrorKind::WouldBlock => std::thread::yield_now(),
                    Err(_) => break,
                }
            }
        })
    };
    let t0 = Instant::now();
    let bytes0 = relay.upstream_bytes();
    let mut odometry = 0;
    let mut reversed = false;
    while t0.elapsed() < Duration::from_secs(3) {
        let v = if t0.elapsed() < Duration::from_secs(1) {
            0.1
        } else {
            -0.1
        };
        drive(&mut rt, v);
        while let Some(h) = odometry_out.nrt_pop() {
            odometry += u32::from(h.sample.node == NodeId(1));
        }
        if v < 0.0 && !reversed {
            reversed = wait_robot_target(&mut direct, Duration::from_millis(50), |t| t < -100);
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    let elapsed = t0.elapsed().as_secs_f64();
    let to_robot = relay.upstream_bytes() - bytes0;
    stop.store(true, Ordering::Relaxed);
    flooder.join().unwrap();
    let offered = sent.load(Ordering::Relaxed);

    let report = rt.engine.switch().unwrap().report();
    let flood_client = &report.clients[0];
    // the budget (with its burst) plus the driver's own traffic (speed frames, requests)
    let allowed = (BUDGET as f64 * (elapsed + nrt_engine::switch::BURST_SECONDS)) as u64 + 30_000;
    assert!(
        to_robot <= allowed,
        "{to_robot} bytes reached the robot in {elapsed:.1} s, more than {allowed} (client offered {offered})"
    );
    assert!(
        offered > 10 * allowed,
        "the client flooded ({offered} bytes)"
    );
    assert!(flood_client.over_budget > 0, "{report:?}");
    assert_eq!(report.totals.over_budget, flood_client.over_budget);
    assert!(
        flood_client.frames_in > flood_client.over_budget,
        "some of the flood went through: {report:?}"
    );
    assert!(reversed, "a new cmd_vel reached the robot during the flood");
    assert!(
        odometry > 10,
        "odometry flowed during the flood ({odometry})"
    );
    rt.stop();
}

/// The simulated Thymio itself drops what the firmware cannot take: a 259-word event (and a
/// frame announcing 60 000 bytes that never come) sent straight to `thymio-rt sim` on one
/// connection, then requests on the same connection are answered. Before the fix the robot
/// never answered that connection again.
#[test]
fn the_simulated_robot_drops_oversize_frames_and_keeps_answering() {
    let port = free_port();
    let _sim = sim_server(port, 90);
    let mut c = Client::connect(port);
    let list = Message::ListNodes { version: 9 }.to_frame(0).unwrap();
    c.send(&user_event(900, 259));
    c.send(&list);
    assert!(c.wait(Duration::from_secs(3), |src, k, _| src == 1
        && k == kind::NODE_PRESENT));
    c.send(&get_variables(0, 2));
    assert!(c.wait(Duration::from_secs(3), |src, k, _| src == 1
        && k == kind::VARIABLES));
    // a header whose body never comes: given up once the link is quiet, then answered again
    c.send(&[0x60, 0xEA, 0, 0, 3, 0, 1, 2, 3]);
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut answered = false;
    while !answered && Instant::now() < deadline {
        c.send(&list);
        answered = c.wait(Duration::from_millis(300), |src, k, _| {
            src == 1 && k == kind::NODE_PRESENT
        });
    }
    assert!(
        answered,
        "the robot answers after a frame that never completes"
    );
}
