//! Helpers of the sim crate's tests: the official VM node of pyaseba as a child process
//! (stopped on drop) and a raw Aseba TCP peer with bounded waits.
#![allow(dead_code)]

use msgs::description::{DescriptionAssembler, TargetDescription};
use msgs::reassembler::Reassembler;
use msgs::wire::Message;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

#[path = "../../../tests/common/missing.rs"]
pub mod missing;

/// Root of the repository.
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// A TCP port free on 127.0.0.1 now.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// pyaseba's official VM node (tests/py/official_vm_node.py), killed when dropped.
pub struct Official {
    child: Child,
    /// Its TCP port on 127.0.0.1.
    pub port: u16,
}

impl Official {
    /// Starts the node and waits (≤ 30 s) until it listens. Without the pyaseba venv the test fails, naming it and
    /// its install step; `None` only when the run opted out (`missing::peer_missing`; the skip is recorded: end the
    /// test).
    pub fn start() -> Option<Official> {
        let python = repo().join(".venv-aseba/bin/python");
        if !python.exists() {
            missing::peer_missing(
                &format!("the pyaseba venv ({})", python.display()),
                missing::ASEBA_SETUP,
            );
            return None;
        }
        let port = free_port();
        let mut child = Command::new(python)
            .arg(repo().join("tests/py/official_vm_node.py"))
            .args(["--port", &port.to_string(), "--duration", "300"])
            .env("LANG", "C.UTF-8")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start python");
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let deadline = Instant::now() + Duration::from_secs(30);
        let official = Official { child, port };
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match rx.recv_timeout(left) {
                Ok(line) if line.starts_with("READY") => return Some(official),
                Ok(_) => {}
                Err(_) => panic!("the official VM node did not start"),
            }
        }
    }
}

impl Drop for Official {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A raw Aseba client over TCP.
pub struct Peer {
    stream: TcpStream,
    reasm: Reassembler,
    pending: Vec<(u16, Vec<u8>)>,
}

impl Peer {
    /// Connects to 127.0.0.1:`port` (retrying ≤ 10 s while the server comes up).
    pub fn connect(port: u16) -> Peer {
        let deadline = Instant::now() + Duration::from_secs(10);
        let stream = loop {
            match TcpStream::connect(("127.0.0.1", port)) {
                Ok(s) => break s,
                Err(e) if Instant::now() > deadline => panic!("connect to {port}: {e}"),
                Err(_) => std::thread::yield_now(),
            }
        };
        stream
            .set_read_timeout(Some(Duration::from_millis(50)))
            .unwrap();
        stream.set_nodelay(true).unwrap();
        Peer {
            stream,
            reasm: Reassembler::new(),
            pending: Vec::new(),
        }
    }

    /// Sends a message from the host (source 0).
    pub fn send(&mut self, msg: &Message<'_>) {
        self.stream.write_all(&msg.to_frame(0).unwrap()).unwrap();
    }

    /// Frames received until one matches `stop` (≤ 5 s), without that one.
    pub fn until(&mut self, mut stop: impl FnMut(u16, &[u8]) -> bool) -> Vec<(u16, Vec<u8>)> {
        let deadline = Instant::now() + Duration::from_secs(5);
        let mut got = Vec::new();
        loop {
            while !self.pending.is_empty() {
                let (k, p) = self.pending.remove(0);
                if stop(k, &p) {
                    return got;
                }
                got.push((k, p));
            }
            assert!(Instant::now() < deadline, "no reply; got {got:?}");
            let mut buf = [0u8; 4096];
            match self.stream.read(&mut buf) {
                Ok(0) => panic!("connection closed; got {got:?}"),
                Ok(n) => {
                    let mut input = &buf[..n];
                    while let Some(f) = self.reasm.push(&mut input) {
                        let f = f.expect("a valid frame");
                        self.pending.push((f.kind, f.payload.to_vec()));
                    }
                }
                Err(_) => {}
            }
        }
    }

    /// The description of node 1 (GET_NODE_DESCRIPTION), as a [`TargetDescription`].
    pub fn description(&mut self) -> TargetDescription {
        self.send(&Message::GetNodeDescription {
            dest: 1,
            version: 9,
        });
        let mut assembler = DescriptionAssembler::new();
        self.until(|k, p| {
            Message::decode(k, p).is_ok_and(|msg| assembler.feed(&msg) && assembler.is_complete())
        });
        assembler.finish().expect("a description")
    }
}
