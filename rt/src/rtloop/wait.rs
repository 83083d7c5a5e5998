//! The RT loop's one wait: an epoll set holding every live link's readiness descriptor, the
//! NRT → RT wake eventfd, the stop-signal eventfd, the link port's offer eventfd and a timerfd
//! armed at an absolute CLOCK_MONOTONIC deadline (ns precision). Everything is created in [`Waiter::new`] (NRT);
//! waiting, arming and (de)registering are plain syscalls on preallocated state.
//!
//! A link is `On` (in the set), `Muted` (taken out for the rest of the period: it used up its
//! read budget, so its level-triggered readiness would only spin the loop) or `Off` (no
//! descriptor, or the link is dead or gone). Links that are not `On` are read by the periodic
//! cycle. Should epoll or the timerfd be unavailable, the wait is a plain sleep until the
//! deadline and every link is polled each period, as before I/O wake-ups existed.

use crate::clock::{sleep_until, timespec_ns};
use handoff::MAX_LINKS;
use nix::errno::Errno;
use nix::sys::epoll::{Epoll, EpollCreateFlags, EpollEvent, EpollFlags, EpollTimeout};
use nix::sys::timerfd::{ClockId, Expiration, TimerFd, TimerFlags, TimerSetTimeFlags};
use std::os::fd::BorrowedFd;

const TOKEN_TIMER: u64 = u64::MAX;
const TOKEN_WAKE: u64 = u64::MAX - 1;
const TOKEN_SIGNAL: u64 = u64::MAX - 2;
const TOKEN_OFFER: u64 = u64::MAX - 3;
/// Events taken per wait: every link plus the four special descriptors.
const MAX_EVENTS: usize = MAX_LINKS + 4;

/// Registration of one link slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reg {
    Off,
    On,
    Muted,
}

/// What ended a wait.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Ready {
    /// Link slots found readable (bit `i` = slot `i`).
    pub links: u64,
    /// The NRT → RT wake fd was rung (drain it before reading the rings).
    pub wake: bool,
    /// The deadline passed (or the wait was a plain sleep).
    pub timer: bool,
    /// A stop signal arrived.
    pub signal: bool,
    /// NRT offered a link (drain the link port's offer fd; the periodic cycle takes it).
    pub offer: bool,
}

/// The wait's preallocated state.
pub(crate) struct Waiter {
    /// `None`: no epoll or timerfd could be made; waiting sleeps.
    epoll: Option<(Epoll, TimerFd)>,
    /// Deadline the timer is armed for (0: not armed or expired).
    armed_ns: u64,
    events: [EpollEvent; MAX_EVENTS],
    reg: [Reg; MAX_LINKS],
}

impl Waiter {
    /// Creates the epoll set and the timer and registers the NRT wake fd, the stop-signal fd and
    /// the link port's offer fd (any may be absent). NRT side.
    pub fn new(
        wake: Option<BorrowedFd<'_>>,
        signal: Option<BorrowedFd<'_>>,
        offer: Option<BorrowedFd<'_>>,
    ) -> Self {
        let epoll = Self::make(wake, signal, offer)
            .map_err(|e| tracing::warn!("RT loop: no epoll/timerfd ({e}): links are polled"))
            .ok();
        Waiter {
            epoll,
            armed_ns: 0,
            events: [EpollEvent::empty(); MAX_EVENTS],
            reg: [Reg::Off; MAX_LINKS],
        }
    }

    fn make(
        wake: Option<BorrowedFd<'_>>,
        signal: Option<BorrowedFd<'_>>,
        offer: Option<BorrowedFd<'_>>,
    ) -> Result<(Epoll, TimerFd), Errno> {
        let epoll = Epoll::new(EpollCreateFlags::EPOLL_CLOEXEC)?;
        let timer = TimerFd::new(
            ClockId::CLOCK_MONOTONIC,
            TimerFlags::TFD_NONBLOCK | TimerFlags::TFD_CLOEXEC,
        )?;
        epoll.add(&timer, EpollEvent::new(EpollFlags::EPOLLIN, TOKEN_TIMER))?;
        if let Some(fd) = wake {
            epoll.add(fd, EpollEvent::new(EpollFlags::EPOLLIN, TOKEN_WAKE))?;
        }
        if let Some(fd) = signal {
            epoll.add(fd, EpollEvent::new(EpollFlags::EPOLLIN, TOKEN_SIGNAL))?;
        }
        if let Some(fd) = offer {
            epoll.add(fd, EpollEvent::new(EpollFlags::EPOLLIN, TOKEN_OFFER))?;
        }
        Ok((epoll, timer))
    }

    /// Whether links with a descriptor are waited on (else every link is polled).
    #[cfg(test)]
    pub fn event_driven(&self) -> bool {
        self.epoll.is_some()
    }

    /// Whether slot `i` is read by the periodic cycle (not in the set).
    pub fn polled(&self, i: usize) -> bool {
        self.reg.get(i) != Some(&Reg::On)
    }

    /// Adds slot `i`'s descriptor to the set (a link just attached, or unmuted). A link without
    /// descriptor, or one that cannot be added, stays polled.
    pub fn add(&mut self, i: usize, fd: Option<BorrowedFd<'_>>) {
        let (Some((epoll, _)), Some(fd), Some(reg)) = (&self.epoll, fd, self.reg.get_mut(i)) else {
            return;
        };
        if *reg != Reg::On
            && epoll
                .add(fd, EpollEvent::new(EpollFlags::EPOLLIN, i as u64))
                .is_ok()
        {
            *reg = Reg::On;
        }
    }

    /// Takes slot `i` out of the set until [`Waiter::unmute`]: it used up its read budget.
    pub fn mute(&mut self, i: usize, fd: Option<BorrowedFd<'_>>) {
        if self.reg.get(i) == Some(&Reg::On) {
            self.remove(i, fd);
            self.reg[i] = Reg::Muted;
        }
    }

    /// Whether slot `i` is muted.
    pub fn muted(&self, i: usize) -> bool {
        self.reg.get(i) == Some(&Reg::Muted)
    }

    /// Puts a muted slot back in the set (a new period).
    pub fn unmute(&mut self, i: usize, fd: Option<BorrowedFd<'_>>) {
        if self.muted(i) {
            self.reg[i] = Reg::Off;
            self.add(i, fd);
        }
    }

    /// Takes slot `i` out of the set for good (dead link, or about to be detached: call it
    /// while the descriptor is still open).
    pub fn remove(&mut self, i: usize, fd: Option<BorrowedFd<'_>>) {
        let Some(reg) = self.reg.get_mut(i) else {
            return;
        };
        if *reg == Reg::On {
            if let (Some((epoll, _)), Some(fd)) = (&self.epoll, fd) {
                let _ = epoll.delete(fd);
            }
        }
        *reg = Reg::Off;
    }

    /// Waits until a registered descriptor is readable or `deadline_ns` (CLOCK_MONOTONIC)
    /// passed. A signal handler that ran on this thread ends the wait early with nothing ready
    /// (the caller checks its stop flags and waits again).
    pub fn wait(&mut self, deadline_ns: u64) -> Ready {
        let mut ready = Ready::default();
        let Some((epoll, timer)) = &self.epoll else {
            ready.timer = sleep_until(deadline_ns).is_ok();
            return ready;
        };
        if self.armed_ns != deadline_ns {
            let at = timespec_ns(deadline_ns);
            // A deadline in the past fires at once.
            if timer
                .set(
                    Expiration::OneShot(at),
                    TimerSetTimeFlags::TFD_TIMER_ABSTIME,
                )
                .is_err()
            {
                ready.timer = sleep_until(deadline_ns).is_ok();
                return ready;
            }
            self.armed_ns = deadline_ns;
        }
        let n = match epoll.wait(&mut self.events, EpollTimeout::NONE) {
            Ok(n) => n,
            Err(Errno::EINTR) => return ready,
            Err(_) => {
                ready.timer = sleep_until(deadline_ns).is_ok();
                return ready;
            }
        };
        for ev in &self.events[..n.min(MAX_EVENTS)] {
            match ev.data() {
                TOKEN_TIMER => {
                    // Expired: re-arming (even for the same deadline) resets it.
                    self.armed_ns = 0;
                    ready.timer = true;
                }
                TOKEN_WAKE => ready.wake = true,
                TOKEN_SIGNAL => ready.signal = true,
                TOKEN_OFFER => ready.offer = true,
                i if (i as usize) < MAX_LINKS => ready.links |= 1 << i,
                _ => {}
            }
        }
        ready
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::monotonic_ns;
    use crate::link::{Link, PipeLink};
    use handoff::Doorbell;

    const MS: u64 = 1_000_000;

    #[test]
    fn the_deadline_ends_an_idle_wait_not_earlier() {
        let bell = Doorbell::new();
        let mut w = Waiter::new(bell.fd(), None, None);
        assert!(w.event_driven());
        let deadline = monotonic_ns() + 5 * MS;
        let r = w.wait(deadline);
        assert!(r.timer && !r.wake && r.links == 0, "{r:?}");
        assert!(monotonic_ns() >= deadline);
        // a past deadline returns at once, also when it is the same as the last one
        assert!(w.wait(deadline).timer);
    }

    #[test]
    fn a_ring_or_a_readable_link_ends_the_wait_before_the_deadline() {
        let bell = Doorbell::new();
        let mut w = Waiter::new(bell.fd(), None, None);
        let far = monotonic_ns() + 60_000 * MS;
        bell.ring();
        assert_eq!(
            w.wait(far),
            Ready {
                wake: true,
                ..Ready::default()
            }
        );
        bell.drain();
        let (mut ours, mut peer) = PipeLink::pair(64);
        w.add(3, ours.rt_fd());
        assert!(!w.polled(3) && w.polled(4));
        peer.write(b"x").unwrap();
        assert_eq!(w.wait(far).links, 1 << 3);
        // muted: the readable link no longer ends the wait
        w.mute(3, ours.rt_fd());
        assert!(w.muted(3) && w.polled(3));
        let soon = monotonic_ns() + 2 * MS;
        assert_eq!(w.wait(soon).links, 0);
        w.unmute(3, ours.rt_fd());
        assert_eq!(w.wait(far).links, 1 << 3);
        let mut buf = [0u8; 8];
        assert_eq!(ours.read(&mut buf), Ok(1));
        w.remove(3, ours.rt_fd());
        assert!(w.polled(3));
    }

    #[test]
    fn the_stop_fd_ends_the_wait() {
        let stop = Doorbell::new();
        let mut w = Waiter::new(None, stop.fd(), None);
        stop.ring();
        assert!(w.wait(monotonic_ns() + 60_000 * MS).signal);
    }
}
