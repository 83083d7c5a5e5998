//! Helpers of the rt integration tests: real peers (headless Aseba Playground, the official
//! community compiler and loader), child processes killed on drop, bounded waits.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

#[path = "../../../tests/common/missing.rs"]
pub mod missing;

/// Repository root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Whether a program is on the PATH.
pub fn have(program: &str) -> bool {
    std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).any(|d| d.join(program).is_file()))
        .unwrap_or(false)
}

/// A free TCP port on 127.0.0.1.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A scratch directory removed on drop.
pub struct TempDir(pub PathBuf);

impl TempDir {
    /// A fresh directory under the system temp dir.
    pub fn new(tag: &str) -> TempDir {
        let p = std::env::temp_dir().join(format!(
            "rt-{tag}-{}-{}",
            std::process::id(),
            rt::clock::monotonic_ns()
        ));
        std::fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A child process killed on drop; its output goes to a log file.
pub struct Proc {
    pub child: Child,
    pub log: PathBuf,
}

impl Proc {
    /// Starts `cmd`, logging to `log`.
    pub fn spawn(mut cmd: Command, log: PathBuf) -> Proc {
        let out = std::fs::File::create(&log).unwrap();
        cmd.stdin(Stdio::null())
            .stdout(out.try_clone().unwrap())
            .stderr(out);
        let child = cmd.spawn().expect("spawn");
        Proc { child, log }
    }

    /// Waits (bounded) for exit.
    pub fn wait(&mut self, limit: Duration) -> std::process::ExitStatus {
        let deadline = Instant::now() + limit;
        loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                return s;
            }
            assert!(
                Instant::now() < deadline,
                "process did not exit: {}",
                self.output()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// What it printed so far.
    pub fn output(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Headless Aseba Playground with one Thymio listening on 127.0.0.1:`port`. Without Debian's `aseba`
/// (the Playground, and the switch and loader [`load_driver_script`] uses) the test fails, naming the missing
/// program and its install step; `None` only when the run opted out (`missing::peer_missing`; the skip is
/// recorded: end the test). The robot's name is unique: Playgrounds advertise their robots by name over zeroconf,
/// and a name taken by another running Playground kills it.
pub fn playground(dir: &Path, port: u16) -> Option<Proc> {
    let aseba = ["asebaplayground", "asebaswitch", "asebamassloader"];
    if let Some(p) = missing::first_missing(&aseba) {
        missing::peer_missing(p, missing::ASEBA_SETUP);
        return None;
    }
    let scene = format!(
        "<!DOCTYPE aseba-playground>\n<aseba-playground>\n\
         <color name=\"wall\" r=\"0.9\" g=\"0.9\" b=\"0.9\"/>\n\
         <world w=\"400\" h=\"400\" color=\"wall\"/>\n\
         <robot type=\"thymio2\" x=\"100\" y=\"200\" port=\"{port}\" name=\"rt-{port}\"/>\n\
         </aseba-playground>\n"
    );
    let path = dir.join("scene.playground");
    std::fs::write(&path, scene).unwrap();
    let mut c = Command::new("asebaplayground");
    c.arg(&path)
        .env("QT_QPA_PLATFORM", "offscreen")
        .env("XDG_RUNTIME_DIR", dir)
        .env("HOME", dir)
        .env("LANG", "C.UTF-8");
    // No readiness probe: a connection opened and closed at once can crash the Playground;
    // the loader retries connecting on its own.
    let p = Proc::spawn(c, dir.join("playground.log"));
    Some(p)
}

/// Whether something listens on 127.0.0.1:`port` (read from /proc, without connecting: a
/// connection opened and closed at once can crash the Playground).
pub fn listening(port: u16) -> bool {
    let needle = format!(":{port:04X}");
    ["/proc/net/tcp", "/proc/net/tcp6"].iter().any(|f| {
        std::fs::read_to_string(f)
            .unwrap_or_default()
            .lines()
            .any(|l| {
                let cols: Vec<&str> = l.split_whitespace().collect();
                cols.len() > 3 && cols[1].ends_with(&needle) && cols[3] == "0A"
            })
    })
}

/// Compiles the driver's Aseba script with the official community compiler and loads it into
/// the robot at `port` (asebamassloader --once) through an `asebaswitch`, returned to be kept
/// for the whole test: the Playground then sees no client leave before the RT loop connects (it
/// has been seen to close a connection opened right after the loader's one closed).
pub fn load_driver_script(dir: &Path, port: u16, pg: &mut Proc) -> Proc {
    let script = root().join("config/aseba/thymio_ros_playground.aesl");
    let deadline = Instant::now() + Duration::from_secs(60);
    let alive = |pg: &mut Proc, what: &str| {
        if let Some(status) = pg.child.try_wait().unwrap() {
            panic!("the Playground died ({status}) {what}: {}", pg.output());
        }
    };
    while !listening(port) {
        alive(pg, "before listening");
        assert!(Instant::now() < deadline, "the Playground does not listen");
        std::thread::sleep(Duration::from_millis(20));
    }
    let switch_port = free_port();
    // The switch's first connection has been refused (seen once in CI) although the Playground listened and
    // stayed alive: a switch that ends that way is started again (3 tries), the Playground checked each time.
    let mut tries = 0;
    let switch = loop {
        tries += 1;
        let mut c = Command::new("asebaswitch");
        c.arg("-p")
            .arg(switch_port.to_string())
            .arg(format!("tcp:127.0.0.1;{port}"));
        let mut switch = Proc::spawn(c, dir.join(format!("asebaswitch-{tries}.log")));
        let ended = loop {
            if listening(switch_port) {
                break None;
            }
            alive(pg, "while asebaswitch connects");
            if let Some(status) = switch.child.try_wait().unwrap() {
                break Some(status);
            }
            assert!(Instant::now() < deadline, "asebaswitch does not listen");
            std::thread::sleep(Duration::from_millis(20));
        };
        match ended {
            None => break switch,
            Some(status) if tries >= 3 => {
                panic!(
                    "asebaswitch ended ({status}) {tries} times: {}",
                    switch.output()
                )
            }
            Some(_) => {}
        }
    };
    let mut c = Command::new("asebamassloader");
    c.arg("--once")
        .arg(&script)
        .arg(format!("tcp:host=127.0.0.1;port={switch_port}"))
        .env("LANG", "C.UTF-8")
        .env("LC_ALL", "C.UTF-8");
    let mut p = Proc::spawn(c, dir.join("massloader.log"));
    while p.child.try_wait().unwrap().is_none() {
        alive(pg, "while loading");
        assert!(
            Instant::now() < deadline,
            "massloader hangs: {}",
            p.output()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        p.output().contains("bytecodes loaded"),
        "massloader: {}",
        p.output()
    );
    switch
}

/// Polls `f` until it returns `Some`, failing after `limit`.
pub fn until<T>(limit: Duration, mut f: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(
            Instant::now() < deadline,
            "condition not reached within {limit:?}"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
}
