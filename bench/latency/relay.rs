//! A timestamping relay between a driver and a robot (Aseba over TCP): every odometry event frame
//! the robot sends is stamped when the relay reads it from the robot's socket and hands it on
//! (the wire, robot → driver), every `set_speed` event frame the driver sends is stamped when the
//! relay reads it from the driver's socket (the wire, driver → robot). Stamps are
//! CLOCK_MONOTONIC, the clock of `time.monotonic_ns()` in the rclpy client. The relay changes
//! nothing in the bytes: latencies are measured at the link, as the reference advises, not
//! through the simulator.

use msgs::reassembler::Reassembler;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A stamped event: time (ns), event id, arguments.
pub type Stamped = (u64, u16, Vec<i16>);

/// What the relay saw.
#[derive(Default)]
pub struct Log {
    /// Robot → driver events.
    pub to_driver: Vec<Stamped>,
    /// Driver → robot events.
    pub to_robot: Vec<Stamped>,
}

/// A running relay.
pub struct Relay {
    /// Port the driver connects to.
    pub port: u16,
    /// What it saw.
    pub log: Arc<Mutex<Log>>,
}

/// Copies `from` to `to`, logging the `watch` events; when either side ends, closes both, so that
/// no connection to the robot outlives its driver (Playground would keep sending into it).
fn pump(
    from: TcpStream,
    to: Arc<Mutex<TcpStream>>,
    log: Arc<Mutex<Log>>,
    to_driver: bool,
    watch: u16,
) {
    copy(&from, &to, &log, to_driver, watch);
    let _ = from.shutdown(std::net::Shutdown::Both);
    let _ = to
        .lock()
        .expect("relay writer")
        .shutdown(std::net::Shutdown::Both);
}

fn copy(
    mut from: &TcpStream,
    to: &Mutex<TcpStream>,
    log: &Mutex<Log>,
    to_driver: bool,
    watch: u16,
) {
    let mut r = Reassembler::new();
    let mut buf = [0u8; 4096];
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        let t = rt::clock::monotonic_ns();
        if to
            .lock()
            .expect("relay writer")
            .write_all(&buf[..n])
            .is_err()
        {
            return;
        }
        let mut input = &buf[..n];
        while let Some(f) = r.push(&mut input) {
            let Ok(f) = f else { continue };
            if f.kind == watch {
                if let Ok(msgs::wire::Message::UserEvent { id, args }) = f.message() {
                    let mut l = log.lock().expect("relay log");
                    let dir = if to_driver {
                        &mut l.to_driver
                    } else {
                        &mut l.to_robot
                    };
                    dir.push((t, id, args.to_vec()));
                }
            }
        }
    }
}

impl Relay {
    /// Relays one driver connection to `127.0.0.1:robot_port`, logging robot events of id
    /// `robot_event` and driver events of id `driver_event`.
    pub fn start(robot_port: u16, robot_event: u16, driver_event: u16) -> Relay {
        let listener = TcpListener::bind("127.0.0.1:0").expect("relay bind");
        let port = listener.local_addr().expect("relay addr").port();
        let log = Arc::new(Mutex::new(Log::default()));
        let l = log.clone();
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { continue };
                let mut robot = None;
                for _ in 0..100 {
                    if let Ok(s) = TcpStream::connect(("127.0.0.1", robot_port)) {
                        robot = Some(s);
                        break;
                    }
                    std::thread::sleep(Duration::from_millis(50));
                }
                let Some(robot) = robot else { continue };
                let _ = client.set_nodelay(true);
                let _ = robot.set_nodelay(true);
                let client_w = Arc::new(Mutex::new(client.try_clone().expect("clone")));
                let robot_w = Arc::new(Mutex::new(robot.try_clone().expect("clone")));
                let (la, lb) = (l.clone(), l.clone());
                std::thread::spawn(move || pump(robot, client_w, la, true, robot_event));
                std::thread::spawn(move || pump(client, robot_w, lb, false, driver_event));
            }
        });
        Relay { port, log }
    }
}
