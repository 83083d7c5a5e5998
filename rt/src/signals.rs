//! SIGINT/SIGTERM → a stop flag the RT loop checks at every wake-up (it then writes zero speed
//! to every robot, reads it back, and exits), an eventfd that wakes the RT loop's wait at once
//! ([`stop_wake_fd`]), and a guard thread that bounds the exit.
//!
//! Further signals never skip the zero-speed write: the handler only counts them. The guard
//! (a thread started by [`install_stop_handlers`], woken through a pipe by the handler) ends
//! the process with `_exit(130)`:
//! - as soon as the zero-speed frames are flushed ([`mark_zero_speed_flushed`]) once a second
//!   signal has come — a second signal only shortens what follows the stop (read-back,
//!   report, RESET, ROS teardown);
//! - [`ZERO_SPEED_BOUND`] after the first signal if a second one came and the zero speed
//!   could still not be flushed (a stuck link: the robot's own watchdog stops it);
//! - [`ORDERLY_BOUND`] after the first signal if the stop itself (zero speed, read-back, RESET,
//!   recording, report) is not done by then (a stuck orderly exit);
//! - once it is done ([`mark_orderly_stop_done`]), what is left is the front ends' teardown
//!   (un-announcing every ROS endpoint of every robot): [`TEARDOWN_BOUND`] more, or at once on a
//!   further signal.

use nix::errno::Errno;
use nix::sys::signal::{sigaction, SaFlags, SigAction, SigHandler, SigSet, Signal};
use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// After a second signal, the longest wait for the zero-speed frames to be flushed.
pub const ZERO_SPEED_BOUND: Duration = Duration::from_millis(200);
/// After the first signal, the longest orderly stop (zero speed, read-back, RESET, recording,
/// report) before the guard ends the process.
pub const ORDERLY_BOUND: Duration = Duration::from_secs(2);
/// After the orderly stop is done ([`mark_orderly_stop_done`]), the longest teardown of the front
/// ends (ROS un-announces every endpoint of every robot: seconds with a classroom of robots).
pub const TEARDOWN_BOUND: Duration = Duration::from_secs(10);
/// Exit status of an exit forced by the guard (128 + SIGINT, as a shell reports Ctrl-C).
pub const FORCED_EXIT_STATUS: i32 = 130;

static STOP: AtomicBool = AtomicBool::new(false);
static SIGNALS: AtomicU32 = AtomicU32::new(0);
static ZERO_FLUSHED: AtomicBool = AtomicBool::new(false);
static STOP_DONE: AtomicBool = AtomicBool::new(false);
/// Write end of the guard's pipe (-1: no guard).
static WAKE_FD: AtomicI32 = AtomicI32::new(-1);
static GUARD: std::sync::Once = std::sync::Once::new();
/// An eventfd written by the handler on every signal (-1: none); never closed.
static STOP_WAKE_FD: AtomicI32 = AtomicI32::new(-1);

extern "C" fn on_signal(_: nix::libc::c_int) {
    // Only async-signal-safe operations: atomics and write(2).
    SIGNALS.fetch_add(1, Ordering::SeqCst);
    STOP.store(true, Ordering::SeqCst);
    let fd = WAKE_FD.load(Ordering::SeqCst);
    if fd >= 0 {
        let byte = 1u8;
        // SAFETY: write(2) is async-signal-safe; `byte` outlives the call; the fd is a
        // non-blocking pipe end kept open for the process's lifetime (a full pipe is fine:
        // the guard is awake already).
        unsafe { nix::libc::write(fd, (&byte as *const u8).cast(), 1) };
    }
    let fd = STOP_WAKE_FD.load(Ordering::SeqCst);
    if fd >= 0 {
        let one = 1u64;
        // SAFETY: write(2) is async-signal-safe; `one` (8 bytes, as an eventfd requires)
        // outlives the call; the fd is a non-blocking eventfd never closed.
        unsafe { nix::libc::write(fd, (&one as *const u64).cast(), 8) };
    }
}

/// A descriptor that becomes readable (and stays so) once SIGINT or SIGTERM arrived after
/// [`install_stop_handlers`], for the RT loop to wait on beside its links; `None` before.
pub fn stop_wake_fd() -> Option<BorrowedFd<'static>> {
    let fd = STOP_WAKE_FD.load(Ordering::SeqCst);
    // SAFETY: a non-negative value is an eventfd that is never closed (leaked on purpose).
    (fd >= 0).then(|| unsafe { BorrowedFd::borrow_raw(fd) })
}

/// Installs the SIGINT and SIGTERM handlers and starts the exit guard (process-wide; call
/// once from `main`; later calls only reinstall the handlers).
pub fn install_stop_handlers() -> Result<(), Errno> {
    let mut guard_result = Ok(());
    GUARD.call_once(|| guard_result = start_guard());
    guard_result?;
    let action = SigAction::new(
        SigHandler::Handler(on_signal),
        SaFlags::SA_RESTART,
        SigSet::empty(),
    );
    for sig in [Signal::SIGINT, Signal::SIGTERM] {
        // SAFETY: the handler only touches atomics and calls write(2), both async-signal-safe.
        unsafe { sigaction(sig, &action) }?;
    }
    Ok(())
}

fn start_guard() -> Result<(), Errno> {
    use nix::fcntl::OFlag;
    use nix::sys::eventfd::{EfdFlags, EventFd};
    let wake = EventFd::from_value_and_flags(0, EfdFlags::EFD_NONBLOCK | EfdFlags::EFD_CLOEXEC)?;
    // Leaked on purpose: the handler may write to it at any time.
    let wake = std::mem::ManuallyDrop::new(wake);
    STOP_WAKE_FD.store(
        std::os::fd::AsFd::as_fd(&*wake).as_raw_fd(),
        Ordering::SeqCst,
    );
    let (read, write) = nix::unistd::pipe2(OFlag::O_CLOEXEC)?;
    nix::fcntl::fcntl(&write, nix::fcntl::FcntlArg::F_SETFL(OFlag::O_NONBLOCK))?;
    std::thread::Builder::new()
        .name("stop-guard".into())
        .spawn(move || guard(read))
        .map_err(|e| Errno::from_raw(e.raw_os_error().unwrap_or(nix::libc::EAGAIN)))?;
    // The write end stays open for the process's lifetime (the handler may run any time).
    let fd = std::mem::ManuallyDrop::new(write);
    WAKE_FD.store(fd.as_raw_fd(), Ordering::SeqCst);
    Ok(())
}

/// What the guard does at `since_first` after the first signal, `since_done` after the orderly stop
/// was done (`None`: not yet).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    Wait,
    Exit,
}

fn verdict(
    signals: u32,
    zero_flushed: bool,
    since_first: Duration,
    since_done: Option<Duration>,
) -> Verdict {
    let hurried = signals >= 2;
    let exit = match since_done {
        // only the teardown is left: a further signal or its bound ends it
        Some(d) => hurried || d >= TEARDOWN_BOUND,
        None => {
            since_first >= ORDERLY_BOUND
                || (hurried && (zero_flushed || since_first >= ZERO_SPEED_BOUND))
        }
    };
    if exit {
        Verdict::Exit
    } else {
        Verdict::Wait
    }
}

fn guard(read: OwnedFd) {
    let mut byte = [0u8; 16];
    // Blocks until the first signal (EINTR: retry).
    loop {
        match nix::unistd::read(&read, &mut byte) {
            Ok(0) => return,
            Ok(_) => break,
            Err(Errno::EINTR) => continue,
            Err(_) => return,
        }
    }
    let first = Instant::now();
    let mut done: Option<Instant> = None;
    loop {
        if done.is_none() && STOP_DONE.load(Ordering::SeqCst) {
            done = Some(Instant::now());
        }
        let v = verdict(
            SIGNALS.load(Ordering::SeqCst),
            ZERO_FLUSHED.load(Ordering::SeqCst),
            first.elapsed(),
            done.map(|d| d.elapsed()),
        );
        if v == Verdict::Exit {
            // SAFETY: `_exit` never returns; it skips destructors and atexit handlers on
            // purpose (the orderly exit is stuck or was cut short by a further signal).
            unsafe { nix::libc::_exit(FORCED_EXIT_STATUS) };
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Whether SIGINT or SIGTERM arrived since the handlers were installed.
pub fn stop_signalled() -> bool {
    STOP.load(Ordering::Relaxed)
}

/// Whether a further signal asked to cut the exit short (after the zero-speed write).
pub fn hurry_signalled() -> bool {
    SIGNALS.load(Ordering::Relaxed) >= 2
}

/// Called by the RT loop's exit path once the zero-speed frames are flushed to every link (or
/// the links are gone): from then on a further signal ends the process at once.
pub fn mark_zero_speed_flushed() {
    ZERO_FLUSHED.store(true, Ordering::SeqCst);
}

/// Called by the driver once the stop is done — robots stopped, RESET sent, recording closed,
/// report written — before it tears its front ends down: from then on the guard bounds the rest
/// by [`TEARDOWN_BOUND`] instead of [`ORDERLY_BOUND`], and a further signal ends it at once.
pub fn mark_orderly_stop_done() {
    STOP_DONE.store(true, Ordering::SeqCst);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_signal_waits_for_the_orderly_exit_up_to_its_bound() {
        let ms = Duration::from_millis;
        assert_eq!(verdict(1, true, ms(500), None), Verdict::Wait);
        assert_eq!(verdict(1, false, ms(500), None), Verdict::Wait);
        assert_eq!(verdict(1, true, ORDERLY_BOUND, None), Verdict::Exit);
    }

    #[test]
    fn once_the_stop_is_done_the_teardown_has_its_own_bound() {
        let ms = Duration::from_millis;
        // a slow ROS teardown past the orderly bound is not cut short...
        assert_eq!(
            verdict(1, true, ORDERLY_BOUND + ms(500), Some(ms(600))),
            Verdict::Wait
        );
        // ...up to its own bound, or a further signal
        assert_eq!(
            verdict(1, true, ORDERLY_BOUND, Some(TEARDOWN_BOUND)),
            Verdict::Exit
        );
        assert_eq!(verdict(2, true, ms(100), Some(ms(1))), Verdict::Exit);
    }

    #[test]
    fn a_second_signal_never_skips_the_zero_speed_write() {
        let ms = Duration::from_millis;
        assert_eq!(verdict(2, false, ms(1), None), Verdict::Wait);
        assert_eq!(verdict(5, false, ms(150), None), Verdict::Wait);
        assert_eq!(verdict(2, true, ms(1), None), Verdict::Exit);
        // a stuck link: bounded anyway
        assert_eq!(verdict(2, false, ZERO_SPEED_BOUND, None), Verdict::Exit);
    }
}
