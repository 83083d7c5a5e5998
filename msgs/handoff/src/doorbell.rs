//! A doorbell between threads: the RT thread rings it when it pushed something to the NRT side
//! (at most once per cycle), the ROS spinner rings it when ROS has work, and the NRT loop waits on
//! it with a timeout instead of polling the rings at a fixed rate.
//!
//! It is an eventfd. Ringing is one non-blocking `write(2)`: it never blocks, never allocates
//! and cannot fail in a way that matters (the counter would have to reach 2^64 − 1). Waiting is a
//! `ppoll(2)` with a microsecond timeout followed by a `read(2)` that resets the counter. Should
//! the eventfd not be available (descriptor limit), the doorbell is silent and waiting sleeps
//! the whole timeout: the NRT side then polls, as it would without it.

use nix::poll::{ppoll, PollFd, PollFlags};
use nix::sys::eventfd::{EfdFlags, EventFd};
use nix::sys::time::TimeSpec;
use std::os::fd::{AsFd, BorrowedFd};
use std::sync::Arc;
use std::time::Duration;

/// A cloneable wake-up signal (see the module documentation).
#[derive(Debug, Clone)]
pub struct Doorbell {
    fd: Option<Arc<EventFd>>,
}

impl Default for Doorbell {
    fn default() -> Self {
        Self::new()
    }
}

impl Doorbell {
    /// A new doorbell; silent if the eventfd cannot be created.
    pub fn new() -> Doorbell {
        let fd = EventFd::from_value_and_flags(0, EfdFlags::EFD_NONBLOCK | EfdFlags::EFD_CLOEXEC)
            .ok()
            .map(Arc::new);
        Doorbell { fd }
    }

    /// A doorbell that never rings (waiting sleeps the whole timeout).
    pub fn silent() -> Doorbell {
        Doorbell { fd: None }
    }

    /// Whether ringing wakes a waiter.
    pub fn is_live(&self) -> bool {
        self.fd.is_some()
    }

    /// Wakes the waiter (or makes its next wait return at once). Never blocks, never allocates.
    pub fn ring(&self) {
        if let Some(fd) = &self.fd {
            // EAGAIN (counter saturated) means it is already rung.
            let _ = fd.write(1);
        }
    }

    /// The eventfd, for a thread that waits on several descriptors at once (epoll, ppoll): it
    /// is readable while rung; call [`Doorbell::drain`] after it woke the waiter. `None` if
    /// silent.
    pub fn fd(&self) -> Option<BorrowedFd<'_>> {
        self.fd.as_deref().map(|fd| fd.as_fd())
    }

    /// Consumes every ring so far without waiting (one non-blocking `read(2)`); whether it was
    /// rung. Never blocks, never allocates.
    pub fn drain(&self) -> bool {
        self.fd.as_ref().is_some_and(|fd| fd.read().is_ok())
    }

    /// Waits until rung or `timeout` passed; whether it was rung. Every ring before the call is
    /// consumed by it.
    pub fn wait(&self, timeout: Duration) -> bool {
        let Some(fd) = &self.fd else {
            std::thread::sleep(timeout);
            return false;
        };
        let mut fds = [PollFd::new(fd.as_fd(), PollFlags::POLLIN)];
        let rung =
            matches!(ppoll(&mut fds, Some(TimeSpec::from_duration(timeout)), None), Ok(n) if n > 0);
        if rung {
            // Non-blocking: resets the counter; EAGAIN if another waiter took it first.
            let _ = fd.read();
        }
        rung
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ring_before_the_wait_is_not_lost_and_is_consumed_once() {
        let bell = Doorbell::new();
        assert!(bell.is_live());
        bell.ring();
        bell.ring();
        assert!(bell.wait(Duration::from_secs(5)));
        assert!(
            !bell.wait(Duration::from_millis(1)),
            "two rings, one wake-up"
        );
    }

    #[test]
    fn a_ring_from_another_thread_ends_the_wait() {
        let bell = Doorbell::new();
        let ringer = bell.clone();
        let t = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            ringer.ring();
        });
        // Far longer than the test may last: only the ring can end it with true.
        assert!(bell.wait(Duration::from_secs(60)));
        t.join().unwrap();
    }

    #[test]
    fn the_fd_is_readable_while_rung_and_drain_consumes_it() {
        let bell = Doorbell::new();
        let readable = |b: &Doorbell| {
            let mut fds = [PollFd::new(b.fd().unwrap(), PollFlags::POLLIN)];
            ppoll(
                &mut fds,
                Some(TimeSpec::from_duration(Duration::ZERO)),
                None,
            )
            .unwrap()
                > 0
        };
        assert!(!readable(&bell) && !bell.drain());
        bell.ring();
        assert!(readable(&bell));
        assert!(bell.drain());
        assert!(!readable(&bell) && !bell.drain());
        assert!(Doorbell::silent().fd().is_none() && !Doorbell::silent().drain());
    }

    #[test]
    fn silent_bell_waits_the_timeout() {
        let bell = Doorbell::silent();
        bell.ring();
        assert!(!bell.is_live());
        assert!(!bell.wait(Duration::from_millis(1)));
    }
}
