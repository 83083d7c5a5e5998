//! Test support shared by the ROS tests of `nrt` and of the root package (included with `#[path]`): an rclpy peer
//! process (`tests/ros/rclpy_peer.py`, run by the project's ROS venv) that reports on stdout one JSON object a line,
//! and a way to run a test in a child process without `LD_LIBRARY_PATH`.
//!
//! Everything is bounded in time: reads take a deadline, peers are killed when dropped.
#![allow(dead_code)] // each including crate uses a part

use std::io::{BufRead, BufReader, Read};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
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

/// The DDS domain of this test process: distinct between concurrently running test processes (from the pid), away
/// from the default domain 0.
pub fn test_domain_id() -> u32 {
    100 + std::process::id() % 100
}

/// A running `rclpy_peer.py`.
pub struct RclpyPeer {
    child: Child,
    lines: Receiver<String>,
    stderr: Arc<Mutex<String>>,
}

impl RclpyPeer {
    /// Starts `rclpy_peer.py ARGS` on DDS domain `domain_id`, confined to loopback.
    pub fn spawn(domain_id: u32, args: &[&str]) -> std::io::Result<Self> {
        let root = project_root();
        let mut child = Command::new(root.join(".venv-ros/bin/python"))
            .arg(root.join("tests/ros/rclpy_peer.py"))
            .args(args)
            .env("ROS_DOMAIN_ID", domain_id.to_string())
            .env("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
            .env("PYTHONUNBUFFERED", "1")
            // The wheels' bootstrapper must run in the child to set its library path.
            .env_remove("_ROS_WHEELS_BOOTSTRAP_COMPLETE")
            .stdin(Stdio::null())
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
        Ok(Self {
            child,
            lines,
            stderr,
        })
    }

    /// The next reported JSON object, waiting until `deadline`.
    pub fn next_event(&mut self, deadline: Instant) -> Result<serde_json::Value, String> {
        let left = deadline.saturating_duration_since(Instant::now());
        match self.lines.recv_timeout(left) {
            Ok(line) => serde_json::from_str(&line).map_err(|e| format!("bad line {line:?}: {e}")),
            Err(RecvTimeoutError::Timeout) => {
                Err(format!("no report in time; stderr: {}", self.stderr()))
            }
            Err(RecvTimeoutError::Disconnected) => {
                let status = self.child.wait().map(|s| s.to_string()).unwrap_or_default();
                Err(format!("peer ended ({status}); stderr: {}", self.stderr()))
            }
        }
    }

    /// Skips reports until one whose `event` is `event` (returned), failing on `timeout` reports.
    pub fn wait_for(
        &mut self,
        event: &str,
        deadline: Instant,
    ) -> Result<serde_json::Value, String> {
        loop {
            let report = self.next_event(deadline)?;
            match report["event"].as_str() {
                Some(e) if e == event => return Ok(report),
                Some("timeout") => {
                    return Err(format!("peer timed out waiting; stderr: {}", self.stderr()))
                }
                _ => {}
            }
        }
    }

    /// Like [`Self::wait_for`] but gives up quietly (`None`) at `deadline` while the peer is still running.
    pub fn poll_for(
        &mut self,
        event: &str,
        deadline: Instant,
    ) -> Result<Option<serde_json::Value>, String> {
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Err(RecvTimeoutError::Timeout) => return Ok(None),
                Err(RecvTimeoutError::Disconnected) => return self.next_event(deadline).map(Some),
                Ok(line) => {
                    let report: serde_json::Value = serde_json::from_str(&line)
                        .map_err(|e| format!("bad line {line:?}: {e}"))?;
                    match report["event"].as_str() {
                        Some(e) if e == event => return Ok(Some(report)),
                        Some("timeout") => {
                            return Err(format!("peer timed out; stderr: {}", self.stderr()))
                        }
                        _ => {}
                    }
                }
            }
        }
    }

    /// What the peer wrote on stderr so far.
    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }
}

impl Drop for RclpyPeer {
    fn drop(&mut self) {
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
