//! Capabilities of `thymio-rt run`: what a process started as root (or with file
//! capabilities) keeps once it is running. The RT setup needs two privileges, SCHED_FIFO
//! (`CAP_SYS_NICE`) and `mlockall` (`CAP_IPC_LOCK`); both have an unprivileged form through
//! resource limits, which are the process's (capabilities are per thread, and every thread
//! created later inherits the creator's):
//!
//! 1. [`shed`], on the main thread before any thread of ours exists (threads the linked ROS 2 libraries start
//!    before `main` are made to drop the same: [`crate::thread_caps`]): raises `RLIMIT_RTPRIO` to 99
//!    (SCHED_FIFO at any priority without `CAP_SYS_NICE`; ROS parameters may still change
//!    `rt.priority`) and `RLIMIT_MEMLOCK` to unlimited (`mlockall(MCL_FUTURE)` without
//!    `CAP_IPC_LOCK`, and every later allocation stays lockable), then drops every capability
//!    from the bounding, ambient, inheritable, effective and permitted sets. Only
//!    `CAP_NET_BIND_SERVICE` is kept when the switch is configured on a port below 1024, and a
//!    capability whose limit could not be raised is kept (said in the report): the RT setup
//!    then works as before.
//! 2. [`after_rt_setup`], once the RT thread reported its setup: lowers `RLIMIT_RTPRIO` to 0 (the
//!    RT thread keeps its SCHED_FIFO; no other thread can take one) and the main thread drops a
//!    kept `CAP_SYS_NICE` (threads started before keep it: capabilities are per thread).
//!    `RLIMIT_MEMLOCK` stays unlimited, and a kept `CAP_IPC_LOCK` stays: with `MCL_FUTURE` every
//!    allocation of every thread is locked, and beyond the limit it would fail.
//!
//! Nothing happens for a process without capabilities (an unprivileged user): the RT setup
//! degrades as it always did.

use caps::{CapSet, Capability, CapsHashSet};
use nix::sys::resource::{getrlimit, setrlimit, Resource, RLIM_INFINITY};

/// Highest SCHED_FIFO priority.
const MAX_RT_PRIORITY: u64 = 99;

/// What [`shed`] did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Shed {
    /// Whether the process had capabilities (nothing was done otherwise).
    pub privileged: bool,
    /// Capabilities kept, with why.
    pub kept: Vec<(Capability, &'static str)>,
    /// Steps that failed (the process runs on; said at start).
    pub problems: Vec<String>,
}

impl Shed {
    /// One line for the log.
    pub fn describe(&self) -> String {
        if !self.privileged {
            return "no capabilities to drop (unprivileged)".into();
        }
        let kept: Vec<String> = self
            .kept
            .iter()
            .map(|(c, why)| format!("{c} ({why})"))
            .collect();
        let mut s = if kept.is_empty() {
            "every capability dropped (SCHED_FIFO and mlockall through RLIMIT_RTPRIO and RLIMIT_MEMLOCK)".to_owned()
        } else {
            format!("capabilities dropped except {}", kept.join(", "))
        };
        for p in &self.problems {
            s.push_str("; ");
            s.push_str(p);
        }
        s
    }
}

/// Drops every capability the process will not need (see the module); `low_port`: the Aseba
/// switch is configured on a port below 1024. Call before any thread is created.
pub fn shed(low_port: bool) -> Shed {
    let permitted = caps::read(None, CapSet::Permitted).unwrap_or_default();
    let bounding = caps::read(None, CapSet::Bounding).unwrap_or_default();
    if permitted.is_empty() {
        return Shed::default();
    }
    let mut out = Shed {
        privileged: true,
        ..Shed::default()
    };
    let mut keep = CapsHashSet::new();
    let mut raise = |resource, value: u64, cap, why, out: &mut Shed| {
        // within the hard limit no privilege is needed; above it, CAP_SYS_RESOURCE
        let raised = match getrlimit(resource) {
            Ok((_, hard)) if hard >= value => setrlimit(resource, value, hard),
            _ => setrlimit(resource, value, value),
        };
        if let Err(e) = raised {
            out.problems
                .push(format!("cannot raise {resource:?} ({e}): {cap} kept"));
            if permitted.contains(&cap) {
                out.kept.push((cap, why));
                keep.insert(cap);
            }
        }
    };
    raise(
        Resource::RLIMIT_RTPRIO,
        MAX_RT_PRIORITY,
        Capability::CAP_SYS_NICE,
        "SCHED_FIFO of the RT thread",
        &mut out,
    );
    raise(
        Resource::RLIMIT_MEMLOCK,
        RLIM_INFINITY,
        Capability::CAP_IPC_LOCK,
        "mlockall(MCL_FUTURE)",
        &mut out,
    );
    if low_port && permitted.contains(&Capability::CAP_NET_BIND_SERVICE) {
        out.kept.push((
            Capability::CAP_NET_BIND_SERVICE,
            "the switch's port is below 1024",
        ));
        keep.insert(Capability::CAP_NET_BIND_SERVICE);
    }
    // the bounding set first: dropping from it needs CAP_SETPCAP in the effective set
    for cap in bounding.difference(&keep) {
        if let Err(e) = caps::drop(None, CapSet::Bounding, *cap) {
            out.problems.push(format!("bounding set: {cap}: {e}"));
        }
    }
    let kept = |set: &CapsHashSet| set.intersection(&keep).copied().collect::<CapsHashSet>();
    let _ = caps::clear(None, CapSet::Ambient);
    let inheritable = caps::read(None, CapSet::Inheritable).unwrap_or_default();
    for (set, now) in [
        (CapSet::Inheritable, kept(&inheritable)),
        (CapSet::Effective, keep.clone()),
        (CapSet::Permitted, keep.clone()),
    ] {
        if let Err(e) = caps::set(None, set, &now) {
            out.problems.push(format!("{set:?}: {e}"));
        }
    }
    // threads that linked libraries started before main (the ROS 2 middleware's) drop the same
    let mask = |set: &CapsHashSet| set.iter().fold(0u64, |m, c| m | c.bitmask());
    if let Err(e) = crate::thread_caps::shed_other_threads(mask(&keep), mask(&kept(&inheritable))) {
        out.problems.push(e);
    }
    out
}

/// Once the RT thread has its scheduling: no other thread may take SCHED_FIFO (lowering a
/// limit needs no privilege), and the calling (main) thread drops `CAP_SYS_NICE` if [`shed`]
/// had to keep it; threads it creates from now on are without it. Returns what failed.
pub fn after_rt_setup() -> Vec<String> {
    let mut problems = Vec::new();
    if let Err(e) = setrlimit(Resource::RLIMIT_RTPRIO, 0, 0) {
        problems.push(format!("cannot lower RLIMIT_RTPRIO: {e}"));
    }
    let nice = Capability::CAP_SYS_NICE;
    // (not from the bounding set: that needs CAP_SETPCAP, gone since `shed`)
    for set in [CapSet::Effective, CapSet::Permitted] {
        if caps::has_cap(None, set, nice).unwrap_or(false) {
            if let Err(e) = caps::drop(None, set, nice) {
                problems.push(format!("cannot drop {nice} from {set:?}: {e}"));
            }
        }
    }
    problems
}
