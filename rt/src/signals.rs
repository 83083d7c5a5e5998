//! SIGINT/SIGTERM → a stop flag the RT loop polls (it then sends zero speed and exits).
//! A second signal exits the process at once (`_exit(130)`) in case the loop is stuck.

use nix::errno::Errno;
use nix::sys::signal::{sigaction, SaFlags, SigAction, SigHandler, SigSet, Signal};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

static STOP: AtomicBool = AtomicBool::new(false);
static SIGNALS: AtomicU32 = AtomicU32::new(0);

extern "C" fn on_signal(_: nix::libc::c_int) {
    // Only async-signal-safe operations: atomics and _exit.
    if SIGNALS.fetch_add(1, Ordering::SeqCst) >= 1 {
        // SAFETY: `_exit` is async-signal-safe and never returns.
        unsafe { nix::libc::_exit(130) };
    }
    STOP.store(true, Ordering::SeqCst);
}

/// Installs the SIGINT and SIGTERM handlers (process-wide; call once from `main`).
pub fn install_stop_handlers() -> Result<(), Errno> {
    let action = SigAction::new(
        SigHandler::Handler(on_signal),
        SaFlags::SA_RESTART,
        SigSet::empty(),
    );
    for sig in [Signal::SIGINT, Signal::SIGTERM] {
        // SAFETY: the handler only touches atomics and calls `_exit`, both async-signal-safe.
        unsafe { sigaction(sig, &action) }?;
    }
    Ok(())
}

/// Whether SIGINT or SIGTERM arrived since the handlers were installed.
pub fn stop_signalled() -> bool {
    STOP.load(Ordering::Relaxed)
}
