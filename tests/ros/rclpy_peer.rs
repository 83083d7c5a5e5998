//! Test support shared by the ROS tests of `nrt` and of the root package (included with `#[path]`): an rclpy peer
//! process (`tests/ros/rclpy_peer.py`, run by the project's ROS venv) that reports on stdout one JSON object a line,
//! and a way to run a test in a child process without `LD_LIBRARY_PATH`.
//!
//! Everything is bounded in time: reads take a deadline, peers are killed when dropped.
#![allow(dead_code)] // each including crate uses a part

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

/// The checkout holding `.venv-ros` and `tests/ros/` (found upwards from the including crate's manifest).
pub fn project_root() -> PathBuf {
    let mut dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    while !dir.join("tests/ros/rclpy_peer.py").is_file() {
        assert!(
            dir.pop(),
            "tests/ros/rclpy_peer.py not found above {}",
            env!("CARGO_MANIFEST_DIR")
        );
    }
    dir
}

#[allow(clippy::duplicate_mod)] // tests/common includes it too: both copies find the same domain
#[path = "../common/domain.rs"]
mod domain;
/// The DDS domain of this test process: distinct between concurrently running test processes, away from the
/// default domain 0 (tests/common/domain.rs).
#[allow(unused_imports)] // not every including binary uses it
pub use domain::test_domain_id;

/// A running `rclpy_peer.py`.
pub struct RclpyPeer {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    stderr: Arc<Mutex<String>>,
    /// Reports read but not consumed yet, oldest first.
    backlog: Vec<Value>,
}

impl RclpyPeer {
    /// Starts `rclpy_peer.py ARGS` on DDS domain `domain_id`, confined to loopback.
    ///
    /// Without the ROS 2 venv the test fails, naming it and its install step. There is no opt-out here: the ROS 2
    /// tests only build (feature `ros2`) against the toolchain that same venv holds.
    pub fn spawn(domain_id: u32, args: &[&str]) -> std::io::Result<Self> {
        let root = project_root();
        let python = root.join(".venv-ros/bin/python");
        assert!(
            python.exists(),
            "rclpy (the ROS 2 venv, {}) not found: run scripts/setup-ros2.sh",
            python.display()
        );
        let mut cmd = Command::new(python);
        cmd.arg(root.join("tests/ros/rclpy_peer.py"))
            .args(args)
            .env("ROS_DOMAIN_ID", domain_id.to_string())
            .env("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST");
        Self::spawn_command(cmd)
    }

    /// Starts `cmd`, a command that runs `rclpy_peer.py` (the venv's python and the script are the caller's to name,
    /// e.g. behind `ip netns exec`, with the ROS environment it wants).
    pub fn spawn_command(mut cmd: Command) -> std::io::Result<Self> {
        let mut child = cmd
            .env("PYTHONUNBUFFERED", "1")
            // The wheels' bootstrapper must run in the child to set its library path.
            .env_remove("_ROS_WHEELS_BOOTSTRAP_COMPLETE")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()?;
        let (tx, lines) = mpsc::channel();
        let stdout = child.stdout.take().expect("piped stdout");
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let stderr = Arc::new(Mutex::new(String::new()));
        let sink = Arc::clone(&stderr);
        let mut pipe = child.stderr.take().expect("piped stderr");
        thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = pipe.read(&mut buf) {
                if n == 0 {
                    break;
                }
                sink.lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });
        let stdin = child.stdin.take();
        Ok(Self {
            child,
            stdin,
            lines,
            stderr,
            backlog: Vec::new(),
        })
    }

    /// Starts a peer in `serve` mode (commands on stdin) and waits until it is ready.
    pub fn serve(domain_id: u32, deadline: Instant) -> Result<Self, String> {
        let mut peer = Self::spawn(domain_id, &["serve", "--timeout", "300"])
            .map_err(|e| format!("cannot start the rclpy peer: {e}"))?;
        peer.wait_for("ready", deadline)?;
        Ok(peer)
    }

    /// Reads one more report into the backlog; false at `deadline`.
    fn read_one(&mut self, deadline: Instant) -> Result<bool, String> {
        let left = deadline.saturating_duration_since(Instant::now());
        match self.lines.recv_timeout(left) {
            Ok(line) => {
                let report =
                    serde_json::from_str(&line).map_err(|e| format!("bad line {line:?}: {e}"))?;
                self.backlog.push(report);
                Ok(true)
            }
            Err(RecvTimeoutError::Timeout) => Ok(false),
            Err(RecvTimeoutError::Disconnected) => {
                let status = self.child.wait().map(|s| s.to_string()).unwrap_or_default();
                Err(format!("peer ended ({status}); stderr: {}", self.stderr()))
            }
        }
    }

    /// The first report (backlog first) for which `accept` gives `Some`, consumed; `Ok(None)` at `deadline`.
    /// A `timeout` report of the peer is an error.
    pub fn poll_map<T>(
        &mut self,
        deadline: Instant,
        mut accept: impl FnMut(&Value) -> Option<Result<T, String>>,
    ) -> Result<Option<T>, String> {
        let mut seen = 0;
        loop {
            while seen < self.backlog.len() {
                if self.backlog[seen]["event"] == "timeout" {
                    return Err(format!("the peer timed out; stderr: {}", self.stderr()));
                }
                if let Some(result) = accept(&self.backlog[seen]) {
                    self.backlog.remove(seen);
                    return result.map(Some);
                }
                seen += 1;
            }
            if !self.read_one(deadline)? {
                return Ok(None);
            }
        }
    }

    /// Like [`Self::poll_map`], but reaching `deadline` is an error naming `what`.
    pub fn expect_map<T>(
        &mut self,
        deadline: Instant,
        what: &str,
        accept: impl FnMut(&Value) -> Option<Result<T, String>>,
    ) -> Result<T, String> {
        self.poll_map(deadline, accept)?
            .ok_or_else(|| format!("no {what} in time; stderr: {}", self.stderr()))
    }

    /// Consumes the first report whose `event` is `event`.
    pub fn wait_for(&mut self, event: &str, deadline: Instant) -> Result<Value, String> {
        self.expect_map(deadline, event, |r| {
            (r["event"] == event).then(|| Ok(r.clone()))
        })
    }

    /// Like [`Self::wait_for`] but gives up quietly (`None`) at `deadline`.
    pub fn poll_for(&mut self, event: &str, deadline: Instant) -> Result<Option<Value>, String> {
        self.poll_map(deadline, |r| (r["event"] == event).then(|| Ok(r.clone())))
    }

    /// Sends a command (serve mode).
    pub fn send(&mut self, command: &Value) -> Result<(), String> {
        let stdin = self.stdin.as_mut().ok_or("stdin closed")?;
        writeln!(stdin, "{command}")
            .and_then(|_| stdin.flush())
            .map_err(|e| format!("cannot write to the peer: {e}"))
    }

    /// Runs command `command` and waits for its report `event` (`error` reports of the same op fail).
    fn run(
        &mut self,
        command: Value,
        event: &str,
        key: &str,
        deadline: Instant,
    ) -> Result<Value, String> {
        let op = command["op"].clone();
        let name = command[key].clone();
        self.send(&command)?;
        self.expect_map(deadline, &format!("{event} of {name}"), |r| {
            if r["event"] == "error" && r["op"] == op {
                Some(Err(format!("{op} {name}: {}", r["message"])))
            } else if r["event"] == event && r[key] == name {
                Some(Ok(r.clone()))
            } else {
                None
            }
        })
    }

    /// Subscribes the peer to `topic`.
    pub fn subscribe(
        &mut self,
        topic: &str,
        type_name: &str,
        durability: &str,
        deadline: Instant,
    ) -> Result<(), String> {
        let cmd = json!({"op": "subscribe", "topic": topic, "type": type_name,
                         "durability": durability, "depth": 100});
        self.run(cmd, "subscribed", "topic", deadline).map(|_| ())
    }

    /// Calls `service` (waiting for it to exist) and returns the response's fields.
    pub fn call(
        &mut self,
        service: &str,
        type_name: &str,
        request: Value,
        deadline: Instant,
    ) -> Result<Value, String> {
        let timeout = deadline
            .saturating_duration_since(Instant::now())
            .as_secs_f64();
        let cmd = json!({"op": "call", "service": service, "type": type_name,
                         "request": request, "timeout": timeout});
        self.run(cmd, "response", "service", deadline)
            .map(|r| r["data"].clone())
    }

    /// Publishes `msg` on `topic` once it has `subscribers` subscribers.
    pub fn publish(
        &mut self,
        topic: &str,
        type_name: &str,
        msg: Value,
        subscribers: usize,
        deadline: Instant,
    ) -> Result<(), String> {
        let timeout = deadline
            .saturating_duration_since(Instant::now())
            .as_secs_f64();
        let cmd = json!({"op": "publish", "topic": topic, "type": type_name, "msg": msg,
                         "subscribers": subscribers, "timeout": timeout});
        self.run(cmd, "published", "topic", deadline).map(|_| ())
    }

    /// Publishes `msg` on `topic` (once it has `subscribers` subscribers) again and again until `heard`
    /// says its effect was seen, giving each try a second: a new publisher may see the subscription before
    /// the subscription sees it, and a volatile subscription drops what was written before its side matched.
    /// `heard` gets the peer and the end of the try's wait.
    pub fn publish_until_heard(
        &mut self,
        topic: &str,
        type_name: &str,
        msg: Value,
        subscribers: usize,
        deadline: Instant,
        mut heard: impl FnMut(&mut Self, Instant) -> bool,
    ) -> Result<(), String> {
        loop {
            if Instant::now() >= deadline {
                return Err(format!("what was published on {topic} was never heard"));
            }
            self.publish(topic, type_name, msg.clone(), subscribers, deadline)?;
            let try_end = deadline.min(Instant::now() + Duration::from_secs(1));
            if heard(self, try_end) {
                return Ok(());
            }
        }
    }

    /// How many publishers `topic` has in the ROS graph, as the peer sees it now.
    pub fn publishers(&mut self, topic: &str, deadline: Instant) -> Result<u64, String> {
        let r = self.run(
            json!({"op": "count", "topic": topic}),
            "count",
            "topic",
            deadline,
        )?;
        r["publishers"]
            .as_u64()
            .ok_or_else(|| format!("bad count report {r}"))
    }

    /// The subscriptions of `topic` of other nodes than the peer, as the peer sees the graph now:
    /// `{"node", "namespace", "reliability", "durability", "depth"}` each.
    pub fn subscribers(&mut self, topic: &str, deadline: Instant) -> Result<Vec<Value>, String> {
        let r = self.run(
            json!({"op": "subscribers", "topic": topic}),
            "subscribers",
            "topic",
            deadline,
        )?;
        r["subscribers"]
            .as_array()
            .cloned()
            .ok_or_else(|| format!("bad subscribers report {r}"))
    }

    /// Every topic of the ROS graph published by another node than the peer, as the peer sees it now: `{"topic",
    /// "types", "publishers": [{"node", "namespace", "reliability", "durability"}]}`.
    pub fn topics(&mut self, deadline: Instant) -> Result<Vec<Value>, String> {
        let r = self.run(json!({"op": "topics"}), "topics", "op", deadline)?;
        r["topics"]
            .as_array()
            .cloned()
            .ok_or_else(|| format!("bad topics report {r}"))
    }

    /// The data of the first message received on `topic` that satisfies `pred`.
    pub fn message(
        &mut self,
        topic: &str,
        deadline: Instant,
        mut pred: impl FnMut(&Value) -> bool,
    ) -> Result<Value, String> {
        self.expect_map(deadline, &format!("message on {topic}"), |r| {
            (r["event"] == "message" && r["topic"] == topic && pred(&r["data"]))
                .then(|| Ok(r["data"].clone()))
        })
    }

    /// Whether a message on `topic` satisfying `pred` arrived (already read; does not wait).
    pub fn received(&self, topic: &str, mut pred: impl FnMut(&Value) -> bool) -> bool {
        self.backlog
            .iter()
            .any(|r| r["event"] == "message" && r["topic"] == topic && pred(&r["data"]))
    }

    /// Drops the messages on `topic` read so far: later [`Self::message`] calls see newer ones only.
    pub fn forget(&mut self, topic: &str) {
        self.backlog
            .retain(|r| !(r["event"] == "message" && r["topic"] == topic));
    }

    /// The reports read but not consumed, one a line (for failure messages).
    pub fn unconsumed(&self) -> String {
        self.backlog
            .iter()
            .map(|r| r.to_string())
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// What the peer wrote on stderr so far.
    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }
}

impl Drop for RclpyPeer {
    /// Lets the peer exit by itself (end of commands: stdin closed; an `echo` peer ends after its
    /// messages) and kills it only if it has not within 3 s. A peer killed while Fast DDS tears
    /// its participant down can leave the shared-memory transport's interprocess mutex locked:
    /// the next participant of the host to close that port then crashes (seen as SIGSEGV in
    /// `rcl_node_fini`, in this crate's smoke tests).
    fn drop(&mut self) {
        drop(self.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(3);
        while Instant::now() < deadline {
            if !matches!(self.child.try_wait(), Ok(None)) {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs the test `name` (its path in the test binary) in a child copy of this test executable from which
/// `LD_LIBRARY_PATH` and `LD_PRELOAD` are removed, and returns true; returns false when already in such a child (the
/// caller then runs the test body). This proves the executable's own DT_RPATH and NEEDED entries suffice.
pub fn rerun_without_ld_library_path(name: &str, timeout: Duration) -> bool {
    const MARK: &str = "THYMIO_RT_CLEAN_LD_CHILD";
    if std::env::var_os(MARK).is_some() {
        assert!(std::env::var_os("LD_LIBRARY_PATH").is_none());
        return false;
    }
    let exe = std::env::current_exe().expect("test executable path");
    let mut child = Command::new(exe)
        .args([name, "--exact", "--nocapture", "--test-threads=1"])
        .env(MARK, "1")
        .env_remove("LD_LIBRARY_PATH")
        .env_remove("LD_PRELOAD")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn the test executable");
    let stdout = read_all(child.stdout.take().expect("piped stdout"));
    let stderr = read_all(child.stderr.take().expect("piped stderr"));
    let deadline = Instant::now() + timeout;
    let collect =
        |rx: &Receiver<String>| rx.recv_timeout(deadline.saturating_duration_since(Instant::now()));
    let (out, err) = match (collect(&stdout), collect(&stderr)) {
        (Ok(out), Ok(err)) => (out, err),
        _ => {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{name} did not end within {timeout:?} without LD_LIBRARY_PATH");
        }
    };
    let status = child.wait().expect("wait for the test executable");
    assert!(
        status.success() && out.contains("1 passed"),
        "{name} failed without LD_LIBRARY_PATH ({status}):\n{out}\n{err}"
    );
    true
}

/// Reads `pipe` to its end in a thread; the whole text arrives on the returned channel.
fn read_all(mut pipe: impl Read + Send + 'static) -> Receiver<String> {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let mut text = String::new();
        let _ = pipe.read_to_string(&mut text);
        let _ = tx.send(text);
    });
    rx
}
