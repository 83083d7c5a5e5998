//! CLOCK_MONOTONIC time in nanoseconds and absolute-deadline sleeping (`clock_nanosleep`
//! with `TIMER_ABSTIME`). Both are plain syscalls (vDSO for the read): no allocation.

use nix::sys::time::TimeSpec;
use nix::time::{clock_nanosleep, ClockId, ClockNanosleepFlags};

const NS_PER_S: u64 = 1_000_000_000;

/// Now on CLOCK_MONOTONIC (ns). The same clock stamps received frames, odometry and the NRT
/// side's set-points (one implementation: [`handoff::monotonic_ns`]).
pub use handoff::monotonic_ns;

/// `ns` on CLOCK_MONOTONIC as a `timespec` (for absolute deadlines).
pub fn timespec_ns(ns: u64) -> TimeSpec {
    TimeSpec::new(
        (ns / NS_PER_S) as libc_time_t,
        (ns % NS_PER_S) as libc_nsec_t,
    )
}

/// Why an absolute sleep ended early.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SleepError {
    /// A signal handler ran (the caller checks its stop flag and sleeps again if needed).
    #[error("interrupted by a signal")]
    Interrupted,
    /// Any other failure of `clock_nanosleep` (errno).
    #[error("clock_nanosleep failed: errno {0}")]
    Failed(i32),
}

/// Sleeps until `deadline_ns` on CLOCK_MONOTONIC (returns at once if it has passed).
pub fn sleep_until(deadline_ns: u64) -> Result<(), SleepError> {
    let ts = timespec_ns(deadline_ns);
    match clock_nanosleep(
        ClockId::CLOCK_MONOTONIC,
        ClockNanosleepFlags::TIMER_ABSTIME,
        &ts,
    ) {
        Ok(_) => Ok(()),
        Err(nix::errno::Errno::EINTR) => Err(SleepError::Interrupted),
        Err(e) => Err(SleepError::Failed(e as i32)),
    }
}

#[allow(non_camel_case_types)]
type libc_time_t = nix::libc::time_t;
#[allow(non_camel_case_types)]
type libc_nsec_t = nix::libc::c_long;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn monotonic_never_goes_back() {
        let mut last = monotonic_ns();
        assert!(last > 0);
        for _ in 0..10_000 {
            let now = monotonic_ns();
            assert!(now >= last);
            last = now;
        }
    }

    #[test]
    fn sleeps_until_an_absolute_deadline() {
        let start = monotonic_ns();
        let deadline = start + 2_000_000;
        sleep_until(deadline).unwrap();
        assert!(monotonic_ns() >= deadline);
        // A past deadline returns at once (no error).
        sleep_until(start).unwrap();
    }
}
