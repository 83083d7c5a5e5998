//! Helpers shared by the integration tests: child processes killed on drop, free ports,
//! bounded waits, and launchers for the real peers (pyaseba nodes, Aseba Playground); `runtime`: the simulated robot
//! and the driver run in this process.
#![allow(dead_code)]

use std::ffi::OsStr;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

#[allow(clippy::duplicate_mod)]
// tests/ros/rclpy_peer.rs includes it too: both copies find the same domain
mod domain;
mod ports;
pub use ports::free_port;
pub mod missing;
pub mod netns;
mod runtime;
pub mod scenario;
/// This test process's ROS 2 domain (the same as `tests/ros/rclpy_peer.rs`'s, which the peers use).
#[allow(unused_imports)] // not every including binary uses it
pub use domain::test_domain_id;
#[allow(unused_imports)] // not every test runs the driver in process
pub use runtime::*;

/// The cargo target directory of this test binary (`<target>/debug/deps/<test>` is three levels below it): what
/// a test that builds something as a user does shares, so that it reuses the suite's compiled units.
pub fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.ancestors()
        .nth(3)
        .unwrap_or_else(|| panic!("no target directory above {}", exe.display()))
        .to_path_buf()
}

/// Runs `thymio-rt ARGS` to its end and returns its exit code and every line it printed (standard output and
/// error); the test fails if it runs longer than `within` (`why`: what that would mean, for the message).
pub fn run_to_end(args: &[&OsStr], within: Duration, why: &str) -> (Option<i32>, String) {
    let mut cmd = thymio_rt();
    cmd.args(args).stdin(Stdio::null());
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("thymio-rt starts");
    let readers: Vec<_> = [
        Box::new(child.stderr.take().unwrap()) as Box<dyn std::io::Read + Send>,
        Box::new(child.stdout.take().unwrap()),
    ]
    .into_iter()
    .map(|mut r| {
        std::thread::spawn(move || {
            let mut s = String::new();
            let _ = r.read_to_string(&mut s);
            s
        })
    })
    .collect();
    let deadline = Instant::now() + within;
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("thymio-rt {args:?} did not end within {within:?} ({why})");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let out: Vec<String> = readers.into_iter().map(|t| t.join().unwrap()).collect();
    (status.code(), out.join("\n"))
}

/// The JSON lines of a client's output (`lines`) whose `event` is `event`.
pub fn events(lines: &[String], event: &str) -> Vec<serde_json::Value> {
    lines
        .iter()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["event"] == event)
        .collect()
}

/// Root of the repository.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The thymio-rt binary under test: `THYMIO_RT_BIN` when set (scripts/test.sh points it at the
/// release binary, the one users run), else the one cargo built for these tests. Its ROS 2 side is
/// confined to loopback on this test process's domain ([`test_domain_id`]) whatever the caller's
/// environment says (scripts/ros2-env.sh keeps the user's settings); a test may set others after.
pub fn thymio_rt() -> Command {
    let bin = std::env::var_os("THYMIO_RT_BIN")
        .filter(|b| !b.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_thymio-rt")));
    let mut c = Command::new(bin);
    c.env_remove("THYMIO_LOG")
        .env("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
        .env("ROS_DOMAIN_ID", test_domain_id().to_string())
        .env_remove("ROS_STATIC_PEERS")
        .env_remove("ROS_LOCALHOST_ONLY");
    c
}

/// Python of the pyaseba venv (scripts/setup-aseba-peers.sh). Missing, it fails the test
/// ([`missing::peer_missing`]); `None` only when the run opted out (the skip is recorded: end the test).
pub fn pyaseba_python() -> Option<PathBuf> {
    let p = root().join(".venv-aseba/bin/python");
    if !p.exists() {
        missing::peer_missing(
            &format!("the pyaseba venv ({})", p.display()),
            missing::ASEBA_SETUP,
        );
        return None;
    }
    Some(p)
}

/// Whether the programs are on the PATH; a missing one fails the test ([`missing::peer_missing`], naming it and
/// `install`); `false` only when the run opted out (the skip is recorded: end the test).
pub fn need_programs(programs: &[&str], install: &str) -> bool {
    match missing::first_missing(programs) {
        None => true,
        Some(p) => {
            missing::peer_missing(p, install);
            false
        }
    }
}

/// Whether a program is on the PATH.
pub fn have(program: &str) -> bool {
    std::env::var_os("PATH")
        .map(|paths| std::env::split_paths(&paths).any(|d| d.join(program).is_file()))
        .unwrap_or(false)
}

/// Whether this machine can make test hosts (network namespaces, `netns`). Without `ip` the test fails like
/// any missing peer ([`need_programs`]); a machine that forbids namespaces (no CAP_SYS_ADMIN / CAP_NET_ADMIN) is
/// no missing peer: the skip is recorded as such, and fails the test in CI ([`missing::machine_cannot`]). `false`:
/// end the test.
pub fn can_make_hosts() -> bool {
    if !need_programs(&["ip"], "apt-get install iproute2") {
        return false;
    }
    match netns::unavailable() {
        None => true,
        Some(why) => {
            missing::machine_cannot(&why);
            false
        }
    }
}

/// A child process, killed when dropped; its output lines are collected in the background.
pub struct Proc {
    pub child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    pub seen: Vec<String>,
    name: String,
}

impl Proc {
    /// Spawns `cmd` with piped stdin/stdout/stderr (both outputs are merged in `lines`).
    pub fn spawn(name: &str, mut cmd: Command) -> Proc {
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {name}: {e}"));
        let (tx, rx) = mpsc::channel();
        for out in [
            Box::new(child.stdout.take().unwrap()) as Box<dyn std::io::Read + Send>,
            Box::new(child.stderr.take().unwrap()),
        ] {
            let tx = tx.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(out).lines().map_while(Result::ok) {
                    if tx.send(line).is_err() {
                        break;
                    }
                }
            });
        }
        let stdin = child.stdin.take();
        Proc {
            child,
            stdin,
            lines: rx,
            seen: Vec::new(),
            name: name.to_owned(),
        }
    }

    /// Waits (bounded) for an output line matching `pred`; returns it.
    pub fn wait_line(&mut self, timeout: Duration, pred: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    let hit = pred(&line);
                    self.seen.push(line.clone());
                    if hit {
                        return line;
                    }
                }
                Err(_) => panic!(
                    "{}: no expected line within {timeout:?}; output so far:\n{}",
                    self.name,
                    self.seen.join("\n")
                ),
            }
        }
    }

    /// Collects the lines printed so far without waiting.
    pub fn drain(&mut self) {
        while let Ok(l) = self.lines.try_recv() {
            self.seen.push(l);
        }
    }

    /// Closes stdin (the test peers stop when it closes).
    pub fn close_stdin(&mut self) {
        self.stdin.take();
    }

    /// Writes to stdin.
    pub fn write_stdin(&mut self, s: &str) {
        if let Some(i) = self.stdin.as_mut() {
            let _ = i.write_all(s.as_bytes());
            let _ = i.flush();
        }
    }

    /// Sends a signal.
    pub fn signal(&self, sig: nix::sys::signal::Signal) {
        let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(self.child.id() as i32), sig);
    }

    /// Waits (bounded) for the process to exit; returns its status.
    pub fn wait_exit(&mut self, timeout: Duration) -> std::process::ExitStatus {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                // the output threads may still hold its last lines: take them until its pipes close (bounded: a
                // process it started may hold them)
                let until = Instant::now() + Duration::from_secs(2);
                while let Ok(l) = self
                    .lines
                    .recv_timeout(until.saturating_duration_since(Instant::now()))
                {
                    self.seen.push(l);
                }
                return s;
            }
            assert!(
                Instant::now() < deadline,
                "{} did not exit within {timeout:?}",
                self.name
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for Proc {
    /// A process still running (a test that failed mid-way) gets SIGINT first and SIGKILL only
    /// after 2 s: a ROS process killed while Fast DDS tears its participant down can leave the
    /// shared-memory transport locked for the host's other participants.
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            self.signal(nix::sys::signal::Signal::SIGINT);
            let deadline = Instant::now() + Duration::from_secs(2);
            while matches!(self.child.try_wait(), Ok(None)) && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(10));
            }
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Official-VM nodes of pyaseba on 127.0.0.1:`port` (ids 1..=n, type "pyaseba-test"); `None` as
/// [`pyaseba_python`].
pub fn pyaseba_nodes(port: u16, n: usize) -> Option<Proc> {
    let python = pyaseba_python()?;
    let mut c = Command::new(python);
    c.arg(root().join("tests/py/pyaseba_node.py")).args([
        "--port",
        &port.to_string(),
        "--nodes",
        &n.to_string(),
        "--duration",
        "120",
    ]);
    let mut p = Proc::spawn("pyaseba nodes", c);
    p.wait_line(Duration::from_secs(20), |l| l.starts_with("READY"));
    Some(p)
}

/// Aseba Playground (headless) and the `asebaswitch`es in front of its robots.
pub struct Playground {
    /// The Playground process.
    pub proc: Proc,
    _switches: Vec<Proc>,
}

impl std::ops::Deref for Playground {
    type Target = Proc;
    fn deref(&self) -> &Proc {
        &self.proc
    }
}

impl std::ops::DerefMut for Playground {
    fn deref_mut(&mut self) -> &mut Proc {
        &mut self.proc
    }
}

/// Aseba Playground (headless) with `robots` Thymios (node ids 1, 2, …), reachable on ports
/// `base_port + i`. Without Debian's aseba the test fails; `None` only when the run opted out (see
/// [`need_programs`]).
///
/// Each robot is served through an `asebaswitch`, as on a real Aseba network: the Playground
/// of Debian's `aseba` package segfaults (in libstdc++) when clients disconnect from it
/// repeatedly, while the switch keeps one connection to it and takes the tools' comings and
/// goings.
pub fn playground(dir: &Path, base_port: u16, robots: usize) -> Option<Playground> {
    let (p, internal) = start_playground(dir, robots)?;
    let mut switches = Vec::new();
    for (i, inner) in internal.iter().enumerate() {
        switches.push(switch_to(base_port + i as u16, &[*inner], i));
    }
    Some(Playground {
        proc: p,
        _switches: switches,
    })
}

/// Aseba Playground (headless) with `robots` Thymios joined into ONE Aseba network by one
/// `asebaswitch` on `port` (as ROS-Thymio's documentation joins several networks): every
/// robot sees every user event sent there. `None` as [`playground`].
pub fn playground_network(dir: &Path, port: u16, robots: usize) -> Option<Playground> {
    let (p, internal) = start_playground(dir, robots)?;
    let switch = switch_to(port, &internal, 0);
    Some(Playground {
        proc: p,
        _switches: vec![switch],
    })
}

/// Starts the Debian Aseba tools (Playground, asebaswitch) with SIGPIPE ignored: they write to their
/// TCP clients without MSG_NOSIGNAL and do not handle SIGPIPE, so a client that closes its connection
/// while they are sending (the robot streams its events) kills the whole program at its next write —
/// every robot of a Playground with it. Ignored, the write fails with EPIPE and the tool drops that
/// client, as it does on EOF. (An ignored disposition is kept across exec.)
pub fn ignoring_sigpipe(cmd: &mut Command) -> &mut Command {
    use std::os::unix::process::CommandExt;
    // SAFETY: only sigaction (through nix::sys::signal::signal), async-signal-safe, runs between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            nix::sys::signal::signal(
                nix::sys::signal::Signal::SIGPIPE,
                nix::sys::signal::SigHandler::SigIgn,
            )
            .map(|_| ())
            .map_err(std::io::Error::from)
        });
    }
    cmd
}

/// Starts the Playground with `robots` Thymios; the ports its robots listen on, once they do.
fn start_playground(dir: &Path, robots: usize) -> Option<(Proc, Vec<u16>)> {
    if !need_programs(&["asebaplayground", "asebaswitch"], missing::ASEBA_SETUP) {
        return None;
    }
    let internal: Vec<u16> = (0..robots).map(|_| free_port()).collect();
    let mut scene = String::from(
        "<!DOCTYPE aseba-playground>\n<aseba-playground>\n<color name=\"wall\" r=\"0.9\" g=\"0.9\" b=\"0.9\"/>\n<world w=\"200\" h=\"200\" color=\"wall\"/>\n",
    );
    for (i, port) in internal.iter().enumerate() {
        scene.push_str(&format!(
            "<robot type=\"thymio2\" x=\"{}\" y=\"100\" port=\"{port}\" name=\"t{i}\" nodeId=\"{}\"/>\n",
            40 + 60 * i,
            i + 1,
        ));
    }
    scene.push_str("</aseba-playground>\n");
    let path = dir.join("scene.playground");
    std::fs::write(&path, scene).unwrap();
    let mut c = Command::new("asebaplayground");
    c.arg(&path)
        .env("QT_QPA_PLATFORM", "offscreen")
        .env("XDG_RUNTIME_DIR", dir)
        .env("HOME", dir)
        .env("LANG", "en_US.UTF-8");
    ignoring_sigpipe(&mut c);
    let p = Proc::spawn("asebaplayground", c);
    for inner in &internal {
        wait_listening(*inner, Duration::from_secs(30));
    }
    Some((p, internal))
}

/// An `asebaswitch` on `port` in front of the Playground robots listening on `inner`, once every
/// one of them answers through it (the Playground listens before its robots are ready, and the
/// switch connects to its targets one after the other).
fn switch_to(port: u16, inner: &[u16], i: usize) -> Proc {
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut c = Command::new("asebaswitch");
    c.arg("-p").arg(port.to_string());
    for p in inner {
        c.arg(format!("tcp:127.0.0.1;{p}"));
    }
    ignoring_sigpipe(&mut c);
    let switch = Proc::spawn("asebaswitch", c);
    loop {
        let answering = nodes_answering(port, inner.len());
        if answering >= inner.len() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "{answering} of asebaplayground's {} robot(s) (from robot {i}) answered through asebaswitch on {port}",
            inner.len()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    switch
}

/// How many distinct Aseba nodes answer LIST_NODES on a TCP port within a second (it returns as
/// soon as `want` have answered).
pub fn nodes_answering(port: u16, want: usize) -> usize {
    use std::io::{Read, Write};
    let Ok(mut s) = std::net::TcpStream::connect(("127.0.0.1", port)) else {
        return 0;
    };
    // LIST_NODES (0xA011) from the host, protocol version 5
    if s.write_all(&[2, 0, 0, 0, 0x11, 0xA0, 5, 0]).is_err() {
        return 0;
    }
    let mut present = std::collections::BTreeSet::new();
    let end = Instant::now() + Duration::from_secs(1);
    let mut buf = Vec::new();
    let mut chunk = [0u8; 1024];
    while Instant::now() < end {
        let _ = s.set_read_timeout(Some(Duration::from_millis(100)));
        match s.read(&mut chunk) {
            Ok(0) => return present.len(),
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(_) => {}
        }
        while buf.len() >= 6 {
            let len = u16::from_le_bytes([buf[0], buf[1]]) as usize;
            let source = u16::from_le_bytes([buf[2], buf[3]]);
            let kind = u16::from_le_bytes([buf[4], buf[5]]);
            if kind == 0x900C {
                present.insert(source);
                if present.len() >= want {
                    return present.len();
                }
            }
            if buf.len() < 6 + len {
                break;
            }
            buf.drain(..6 + len);
        }
    }
    present.len()
}

/// Waits (bounded) until a TCP port is in the LISTEN state, without connecting to it.
pub fn wait_listening(port: u16, timeout: Duration) {
    let deadline = Instant::now() + timeout;
    let needle = format!(":{port:04X} ");
    loop {
        let listening = ["/proc/net/tcp", "/proc/net/tcp6"].iter().any(|f| {
            std::fs::read_to_string(f)
                .unwrap_or_default()
                .lines()
                .any(|l| {
                    let cols: Vec<&str> = l.split_whitespace().collect();
                    cols.len() > 3 && format!("{} ", cols[1]).contains(&needle) && cols[3] == "0A"
                })
        });
        if listening {
            return;
        }
        assert!(Instant::now() < deadline, "nothing listens on port {port}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A TCP relay on 127.0.0.1 between a client and `upstream`, for fault injection: it can add
/// garbage to the upstream→client direction and be cut.
pub struct Relay {
    pub port: u16,
    garbage: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    /// Bytes relayed from the client to upstream (what reached the robot).
    upstream_bytes: std::sync::Arc<std::sync::atomic::AtomicU64>,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl Relay {
    /// Starts a relay to `127.0.0.1:upstream` (one client at a time).
    pub fn start(upstream: u16) -> Relay {
        use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
        use std::sync::Arc;
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        listener.set_nonblocking(true).unwrap();
        let garbage = Arc::new(AtomicUsize::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let upstream_bytes = Arc::new(std::sync::atomic::AtomicU64::new(0));
        let (g, s, ub) = (garbage.clone(), stop.clone(), upstream_bytes.clone());
        std::thread::spawn(move || {
            use std::io::Read;
            while !s.load(Ordering::Relaxed) {
                let Ok((mut client, _)) = listener.accept() else {
                    std::thread::sleep(Duration::from_millis(5));
                    continue;
                };
                let Ok(mut up) = std::net::TcpStream::connect(("127.0.0.1", upstream)) else {
                    continue;
                };
                client.set_nonblocking(true).unwrap();
                up.set_nonblocking(true).unwrap();
                let mut buf = [0u8; 4096];
                let mut x: u32 = 0x1234_5678;
                'conn: while !s.load(Ordering::Relaxed) {
                    let mut idle = true;
                    match up.read(&mut buf) {
                        Ok(0) => break 'conn,
                        Ok(n) => {
                            idle = false;
                            let extra = g.swap(0, Ordering::Relaxed);
                            let noise: Vec<u8> = (0..extra)
                                .map(|_| {
                                    x ^= x << 13;
                                    x ^= x >> 17;
                                    x ^= x << 5;
                                    x as u8
                                })
                                .collect();
                            if client.write_all(&noise).is_err()
                                || client.write_all(&buf[..n]).is_err()
                            {
                                break 'conn;
                            }
                        }
                        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                        Err(_) => break 'conn,
                    }
                    match client.read(&mut buf) {
                        Ok(0) => break 'conn,
                        Ok(n) => {
                            idle = false;
                            if up.write_all(&buf[..n]).is_err() {
                                break 'conn;
                            }
                            ub.fetch_add(n as u64, Ordering::Relaxed);
                        }
                        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                        Err(_) => break 'conn,
                    }
                    if idle {
                        std::thread::sleep(Duration::from_micros(200));
                    }
                }
            }
        });
        Relay {
            port,
            garbage,
            upstream_bytes,
            stop,
        }
    }

    /// Bytes relayed so far from the client to upstream.
    pub fn upstream_bytes(&self) -> u64 {
        self.upstream_bytes
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Inserts `n` random bytes before the next chunk from upstream.
    pub fn inject_garbage(&self, n: usize) {
        self.garbage.store(n, std::sync::atomic::Ordering::Relaxed);
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
    }
}

/// A pseudo-terminal at `link` carrying the byte stream of `127.0.0.1:port` (socat), like a
/// USB Thymio on a serial port. `None` as [`need_programs`] (socat).
pub fn serial_bridge(link: &Path, port: u16) -> Option<Proc> {
    if !need_programs(&["socat"], missing::ASEBA_SETUP) {
        return None;
    }
    let mut c = Command::new("socat");
    c.arg(format!("pty,link={},raw,echo=0", link.display()))
        .arg(format!("tcp:127.0.0.1:{port}"));
    let p = Proc::spawn("socat", c);
    let deadline = Instant::now() + Duration::from_secs(5);
    while !link.exists() {
        assert!(
            Instant::now() < deadline,
            "socat did not create {}",
            link.display()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    Some(p)
}
