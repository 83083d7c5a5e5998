//! Child processes of the harness (killed on drop) and their CPU use.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

/// A child process whose output lines are collected; killed on drop.
pub struct Proc {
    pub child: Child,
    lines: Receiver<String>,
    name: String,
    seen: Vec<String>,
}

impl Proc {
    /// Starts `cmd` (stdout and stderr collected, stdin null). It is killed when the harness
    /// ends, even by SIGKILL (parent-death signal): no child outlives a run.
    pub fn spawn(name: &str, mut cmd: Command) -> Proc {
        use std::os::unix::process::CommandExt;
        cmd.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        // SAFETY: only prctl(PR_SET_PDEATHSIG), async-signal-safe, runs between fork and exec.
        unsafe {
            cmd.pre_exec(|| {
                nix::sys::prctl::set_pdeathsig(nix::sys::signal::Signal::SIGKILL)
                    .map_err(std::io::Error::from)
            });
        }
        let mut child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {name}: {e}"));
        let (tx, rx) = mpsc::channel();
        for out in [
            Box::new(child.stdout.take().expect("piped")) as Box<dyn std::io::Read + Send>,
            Box::new(child.stderr.take().expect("piped")),
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
        Proc {
            child,
            lines: rx,
            name: name.into(),
            seen: Vec::new(),
        }
    }

    /// Waits (bounded) for a line containing `needle`.
    pub fn wait_for(&mut self, needle: &str, timeout: Duration) -> Result<String, String> {
        let deadline = Instant::now() + timeout;
        loop {
            match self
                .lines
                .recv_timeout(deadline.saturating_duration_since(Instant::now()))
            {
                Ok(l) => {
                    self.seen.push(l.clone());
                    if l.contains(needle) {
                        return Ok(l);
                    }
                }
                Err(_) => {
                    return Err(format!(
                        "{}: no \"{needle}\" within {timeout:?}; output:\n{}",
                        self.name,
                        self.seen.join("\n")
                    ))
                }
            }
        }
    }

    /// Waits (bounded) for the exit status.
    pub fn wait(&mut self, timeout: Duration) -> Result<std::process::ExitStatus, String> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(s) = self.child.try_wait().map_err(|e| e.to_string())? {
                while let Ok(l) = self.lines.try_recv() {
                    self.seen.push(l);
                }
                return Ok(s);
            }
            if Instant::now() > deadline {
                return Err(format!("{} did not exit within {timeout:?}", self.name));
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Waits (bounded) for the exit status, then for the end of its output (its pipes closed), and returns every
    /// line it wrote (those [`Proc::wait_for`] saw too): the last lines, written as it exits, come after the exit.
    pub fn wait_exit(
        &mut self,
        timeout: Duration,
    ) -> Result<(std::process::ExitStatus, Vec<String>), String> {
        let deadline = Instant::now() + timeout;
        let status = self.wait(timeout)?;
        loop {
            match self
                .lines
                .recv_timeout(deadline.saturating_duration_since(Instant::now()))
            {
                Ok(l) => self.seen.push(l),
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    return Err(format!(
                        "{}: its output did not end within {timeout:?} of its exit",
                        self.name
                    ))
                }
            }
        }
        Ok((status, self.seen.clone()))
    }

    /// Sends SIGINT.
    pub fn interrupt(&self) {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(self.child.id() as i32),
            nix::sys::signal::Signal::SIGINT,
        );
    }

    /// CPU time used so far (user + system, all threads), in seconds.
    pub fn cpu_seconds(&self) -> f64 {
        cpu_seconds(self.child.id())
    }

    /// CPU time used so far by the process and its live descendants, in seconds.
    pub fn tree_cpu_seconds(&self) -> f64 {
        tree_cpu_seconds(self.child.id())
    }
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

/// Runs the command on `cpus` only (its affinity mask, kept across exec).
pub fn pinned_to<'a>(cmd: &'a mut Command, cpus: &[usize]) -> &'a mut Command {
    use std::os::unix::process::CommandExt;
    let mut set = nix::sched::CpuSet::new();
    for c in cpus {
        let _ = set.set(*c);
    }
    // SAFETY: only sched_setaffinity (a system call, async-signal-safe) on a set built before the fork, between
    // fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            nix::sched::sched_setaffinity(nix::unistd::Pid::from_raw(0), &set)
                .map_err(std::io::Error::from)
        });
    }
    cmd
}

/// CPU time (seconds) of every thread of process `pid`: `(tid, name, seconds)`; from the scheduler's own
/// account in ns (`schedstat`) where the kernel has it, else user + system time in clock ticks.
pub fn thread_cpu_seconds(pid: u32) -> Vec<(u32, String, f64)> {
    let hz = nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK)
        .ok()
        .flatten()
        .unwrap_or(100) as f64;
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|tid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/stat")).ok()?;
            let (head, rest) = stat.rsplit_once(')')?;
            let name = head.split_once('(')?.1.to_owned();
            let f: Vec<&str> = rest.split_whitespace().collect();
            let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
            let ns = std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/schedstat"))
                .ok()
                .and_then(|t| t.split_whitespace().next()?.parse::<f64>().ok());
            Some((
                tid,
                name,
                ns.map_or((ticks(11) + ticks(12)) / hz, |ns| ns / 1e9),
            ))
        })
        .collect()
}

/// The group of thread `tid` (named `name`) of process `pid`: `main`, `rt` or its name without a pool number.
fn group_of(pid: u32, tid: u32, name: &str) -> String {
    if tid == pid {
        "main".to_owned()
    } else if name == "thymio-rt" {
        "rt".to_owned()
    } else {
        // numbered pools (tokio-runtime-w, …) as one
        name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '-')
            .to_owned()
    }
}

/// CPU seconds per thread group of process `pid`: `rt` (the RT thread, named `thymio-rt` but not the main
/// thread), `main` (the NRT loop), then the other threads by name.
pub fn thread_groups(pid: u32) -> std::collections::BTreeMap<String, f64> {
    let mut groups = std::collections::BTreeMap::new();
    for (tid, name, s) in thread_cpu_seconds(pid) {
        *groups.entry(group_of(pid, tid, &name)).or_insert(0.0) += s;
    }
    groups
}

/// Context switches (voluntary and not: each is one wake-up) per thread group of process `pid`, grouped as
/// [`thread_groups`] groups them.
pub fn thread_switches(pid: u32) -> std::collections::BTreeMap<String, u64> {
    let mut groups = std::collections::BTreeMap::new();
    for (tid, name, _) in thread_cpu_seconds(pid) {
        let status =
            std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/status")).unwrap_or_default();
        let n: u64 = status
            .lines()
            .filter(|l| {
                l.starts_with("voluntary_ctxt_switches")
                    || l.starts_with("nonvoluntary_ctxt_switches")
            })
            .filter_map(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
            .sum();
        *groups.entry(group_of(pid, tid, &name)).or_insert(0) += n;
    }
    groups
}

/// Fraction of one core each thread group used between two [`thread_groups`] readings `wall_s` seconds apart.
pub fn thread_shares(
    before: &std::collections::BTreeMap<String, f64>,
    after: &std::collections::BTreeMap<String, f64>,
    wall_s: f64,
) -> std::collections::BTreeMap<String, f64> {
    after
        .iter()
        .map(|(k, v)| {
            (
                k.clone(),
                (v - before.get(k).copied().unwrap_or(0.0)) / wall_s,
            )
        })
        .collect()
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Fields of /proc/<pid>/stat after the command name (which may contain spaces, inside
/// parentheses): index 0 is field 3 (state).
fn stat_fields(pid: u32) -> Vec<String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    after.split_whitespace().map(str::to_owned).collect()
}

/// User + system CPU time of `pid` and of every live descendant (seconds).
pub fn tree_cpu_seconds(pid: u32) -> f64 {
    let parents: Vec<(u32, u32)> = std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|p| Some((p, stat_fields(p).get(1)?.parse::<u32>().ok()?)))
        .collect();
    let mut tree = vec![pid];
    let mut i = 0;
    while i < tree.len() {
        let parent = tree[i];
        tree.extend(
            parents
                .iter()
                .filter(|(_, pp)| *pp == parent)
                .map(|(p, _)| *p),
        );
        i += 1;
    }
    tree.into_iter().map(cpu_seconds).sum()
}

/// User + system CPU time of process `pid` (seconds), from /proc/<pid>/stat.
pub fn cpu_seconds(pid: u32) -> f64 {
    let f = stat_fields(pid);
    let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    // utime and stime are fields 14 and 15 of stat, i.e. 11 and 12 after the name
    let hz = nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK)
        .ok()
        .flatten()
        .unwrap_or(100) as f64;
    (ticks(11) + ticks(12)) / hz
}
