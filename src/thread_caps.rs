//! Capabilities are per thread, and a process linked with the ROS 2 libraries already has threads when `main`
//! starts (created by their load-time constructors): dropping capabilities on the main thread leaves those with all
//! of root's. [`shed_other_threads`] makes every other thread of the process drop them too, as libcap's psx does:
//! each thread is sent a real-time signal whose handler makes the same system calls (`PR_CAPBSET_DROP`,
//! `PR_CAP_AMBIENT_CLEAR_ALL`, `capset`) on itself, then counts itself done.

use nix::libc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// `_LINUX_CAPABILITY_VERSION_3`: two 32-bit words per set.
const CAPABILITY_VERSION_3: u32 = 0x2008_0522;

#[repr(C)]
struct CapHeader {
    version: u32,
    pid: libc::c_int,
}

#[repr(C)]
#[derive(Clone, Copy)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

/// What the handler keeps (effective = permitted), its inheritable set, the highest capability number, and how many
/// threads did it / failed.
static KEEP: AtomicU64 = AtomicU64::new(0);
static INHERIT: AtomicU64 = AtomicU64::new(0);
static LAST_CAP: AtomicU64 = AtomicU64::new(0);
static DONE: AtomicUsize = AtomicUsize::new(0);
static FAILED: AtomicUsize = AtomicUsize::new(0);

/// Runs on each other thread: only raw system calls (async-signal-safe), no allocation.
extern "C" fn shed_here(_: libc::c_int) {
    let keep = KEEP.load(Ordering::SeqCst);
    let inherit = INHERIT.load(Ordering::SeqCst);
    let mut ok = true;
    for cap in 0..=LAST_CAP.load(Ordering::SeqCst) {
        if keep & (1 << cap) == 0 {
            // SAFETY: prctl with integer arguments only; it changes the calling thread's bounding set.
            let r = unsafe { libc::prctl(libc::PR_CAPBSET_DROP, cap as libc::c_ulong, 0, 0, 0) };
            ok &= r == 0;
        }
    }
    // SAFETY: as above (the thread's ambient set).
    unsafe {
        libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL as libc::c_ulong,
            0,
            0,
            0,
        )
    };
    let header = CapHeader {
        version: CAPABILITY_VERSION_3,
        pid: 0,
    };
    let word = |m: u64, i: u32| (m >> (32 * i)) as u32;
    let data = [0, 1].map(|i| CapData {
        effective: word(keep, i),
        permitted: word(keep, i),
        inheritable: word(inherit, i),
    });
    // SAFETY: capset(2) reads one header and two data words that live on this stack frame for the call.
    let r = unsafe { libc::syscall(libc::SYS_capset, &header, data.as_ptr()) };
    ok &= r == 0;
    if ok {
        DONE.fetch_add(1, Ordering::SeqCst);
    } else {
        FAILED.fetch_add(1, Ordering::SeqCst);
    }
}

/// Whether thread `tid` of this process still has a bounding set wider than the caller's (it did not shed).
fn has_full_bounding_set(tid: libc::pid_t) -> bool {
    let bounding = |path: &str| {
        std::fs::read_to_string(path).ok().and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("CapBnd:"))
                .and_then(|v| u64::from_str_radix(v.trim(), 16).ok())
        })
    };
    match (
        bounding(&format!("/proc/self/task/{tid}/status")),
        bounding("/proc/thread-self/status"),
    ) {
        (Some(theirs), Some(mine)) => theirs & !mine != 0,
        _ => true,
    }
}

/// The ids of this process's threads other than the caller.
fn other_threads() -> Vec<libc::pid_t> {
    // SAFETY: gettid has no arguments and cannot fail.
    let me = unsafe { libc::gettid() };
    std::fs::read_dir("/proc/self/task")
        .map(|d| {
            d.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
                .filter(|t| *t != me)
                .collect()
        })
        .unwrap_or_default()
}

/// Makes every other thread of the process keep only `keep` (effective and permitted; a bitmask of capability
/// numbers) and `inheritable`, and drop the rest from its bounding set. Returns how many threads did; `Err` says
/// how many could not (e.g. a thread that blocks the signal), within one second.
pub fn shed_other_threads(keep: u64, inheritable: u64) -> Result<usize, String> {
    let threads = other_threads();
    if threads.is_empty() {
        return Ok(0);
    }
    let last = std::fs::read_to_string("/proc/sys/kernel/cap_last_cap")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(40);
    KEEP.store(keep, Ordering::SeqCst);
    INHERIT.store(inheritable & keep, Ordering::SeqCst);
    LAST_CAP.store(last, Ordering::SeqCst);
    DONE.store(0, Ordering::SeqCst);
    FAILED.store(0, Ordering::SeqCst);
    let signal = libc::SIGRTMIN() + 5;
    // SAFETY: a zeroed sigaction is a valid "no flags, empty mask" value; the handler is an extern "C" fn that
    // only makes raw system calls and atomic updates; afterwards the signal is ignored (below).
    let mut action: libc::sigaction = unsafe { std::mem::zeroed() };
    action.sa_sigaction = shed_here as *const () as usize;
    action.sa_flags = libc::SA_RESTART;
    // SAFETY: see above; `previous` receives the old action.
    let mut previous: libc::sigaction = unsafe { std::mem::zeroed() };
    // SAFETY: valid pointers to the two actions for the call.
    if unsafe { libc::sigaction(signal, &action, &mut previous) } != 0 {
        return Err(format!("sigaction: {}", std::io::Error::last_os_error()));
    }
    // SAFETY: getpid cannot fail.
    let pid = unsafe { libc::getpid() };
    let mut sent = 0;
    for tid in &threads {
        // SAFETY: tgkill with this process's id, one of its thread ids and a signal number.
        if unsafe { libc::syscall(libc::SYS_tgkill, pid, *tid, signal) } == 0 {
            sent += 1;
        }
    }
    let deadline = Instant::now() + Duration::from_secs(1);
    while DONE.load(Ordering::SeqCst) + FAILED.load(Ordering::SeqCst) < sent
        && Instant::now() < deadline
    {
        std::thread::sleep(Duration::from_millis(1));
    }
    // Ignored from now on, not restored: setting SIG_IGN discards the instances still pending on threads that block
    // the signal, which the default action (terminate) would otherwise act on if one ever unblocked it.
    let mut ignore = previous;
    ignore.sa_sigaction = libc::SIG_IGN;
    // SAFETY: a valid action (the saved one, with SIG_IGN as its handler).
    unsafe { libc::sigaction(signal, &ignore, std::ptr::null_mut()) };
    let done = DONE.load(Ordering::SeqCst);
    if done == threads.len() {
        Ok(done)
    } else {
        // A thread that blocks every signal (the ROS 2 wheels' LTTng-UST listeners do) never ran the handler.
        let kept: Vec<String> = threads
            .iter()
            .filter(|t| has_full_bounding_set(**t))
            .map(|t| t.to_string())
            .collect();
        Err(format!(
            "{} of {} thread(s) started before main by linked libraries kept their capabilities (they block \
             every signal; tids {}): run thymio-rt unprivileged with RLIMIT_RTPRIO/RLIMIT_MEMLOCK raised to \
             avoid them",
            threads.len() - done,
            threads.len(),
            kept.join(" ")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn with_no_other_thread_nothing_is_signalled() {
        // the test harness runs each test on a thread of its own: there are others, so only check the listing
        let others = other_threads();
        // SAFETY: gettid cannot fail.
        let me = unsafe { libc::gettid() };
        assert!(!others.contains(&me));
    }
}
