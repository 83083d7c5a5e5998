//! RT → NRT value queue: the RT side publishes without blocking (a full queue drops and counts),
//! the NRT side drains, e.g. to publish on ROS.

use rtrb::{Consumer, Producer, RingBuffer};
use std::cell::Cell;

thread_local! {
    /// A value was queued for the NRT loop on this thread (an RT controller's topic, a reflex's edge) since
    /// [`rt_take_published`] last looked: the RT thread rings NRT's doorbell for it at once
    /// ([`crate::RtEnds::rt_wake_nrt`]). A const-initialised `Cell` without destructor: reading and setting it
    /// never allocates.
    static PUBLISHED: Cell<bool> = const { Cell::new(false) };
}

/// Whether a value was queued for the NRT loop on this thread since the last call (see [`PUBLISHED`]).
pub(crate) fn rt_take_published() -> bool {
    PUBLISHED.with(|p| p.replace(false))
}

/// RT half: pushes values without blocking.
#[derive(Debug)]
pub struct RtPublisher<T> {
    queue: Producer<T>,
    dropped: u64,
}

/// NRT half: drains what the RT side published.
#[derive(Debug)]
pub struct NrtPublisher<T> {
    queue: Consumer<T>,
}

/// A publisher with room for `capacity` values in flight: `(rt, nrt)` halves.
///
/// # Example
///
/// ```
/// use handoff::publisher;
///
/// let (mut rt, mut nrt) = publisher::<u32>(2);
/// assert!(rt.rt_publish(1));
/// assert!(rt.rt_publish(2));
/// assert!(!rt.rt_publish(3)); // full: dropped and counted
/// assert_eq!(rt.rt_dropped(), 1);
/// assert_eq!(nrt.nrt_pop(), Some(1));
/// assert_eq!(nrt.nrt_latest(), Some(2)); // the newest, older ones dropped
/// ```
pub fn publisher<T: Copy + Send>(capacity: usize) -> (RtPublisher<T>, NrtPublisher<T>) {
    let (p, c) = RingBuffer::new(capacity.max(1));
    (
        RtPublisher {
            queue: p,
            dropped: 0,
        },
        NrtPublisher { queue: c },
    )
}

impl<T: Copy + Send> RtPublisher<T> {
    /// Queues `value` for the NRT loop, which the RT thread then wakes at once; false (and counted) if the queue
    /// is full.
    pub fn rt_publish(&mut self, value: T) -> bool {
        let ok = self.rt_publish_quiet(value);
        PUBLISHED.with(|p| p.set(p.get() | ok));
        ok
    }

    /// Queues `value` for a consumer the caller wakes itself (the odometry publisher threads); false (and
    /// counted) if the queue is full.
    pub(crate) fn rt_publish_quiet(&mut self, value: T) -> bool {
        let ok = self.queue.push(value).is_ok();
        if !ok {
            self.dropped += 1;
        }
        ok
    }

    /// Values dropped because the NRT side was behind.
    pub fn rt_dropped(&self) -> u64 {
        self.dropped
    }

    /// Whether the NRT half is gone.
    pub fn rt_peer_gone(&self) -> bool {
        self.queue.is_abandoned()
    }
}

impl<T: Copy + Send> NrtPublisher<T> {
    /// The oldest pending value.
    pub fn nrt_pop(&mut self) -> Option<T> {
        self.queue.pop().ok()
    }

    /// Calls `f` on every pending value, oldest first; returns how many.
    pub fn nrt_drain(&mut self, mut f: impl FnMut(T)) -> usize {
        let mut n = 0;
        while let Ok(v) = self.queue.pop() {
            f(v);
            n += 1;
        }
        n
    }

    /// Whether the RT half is gone.
    pub fn nrt_peer_gone(&self) -> bool {
        self.queue.is_abandoned()
    }

    /// Drops every pending value but the newest, and returns it.
    pub fn nrt_latest(&mut self) -> Option<T> {
        let mut last = None;
        self.nrt_drain(|v| last = Some(v));
        last
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_arrive_in_order_and_overflow_is_counted() {
        let (mut rt, mut nrt) = publisher::<u32>(3);
        for i in 0..5 {
            rt.rt_publish(i);
        }
        assert_eq!(rt.rt_dropped(), 2);
        assert_eq!(nrt.nrt_pop(), Some(0));
        let mut seen = Vec::new();
        assert_eq!(nrt.nrt_drain(|v| seen.push(v)), 2);
        assert_eq!(seen, [1, 2]);
        rt.rt_publish(7);
        rt.rt_publish(8);
        assert_eq!(nrt.nrt_latest(), Some(8));
        assert_eq!(nrt.nrt_pop(), None);
        drop(nrt);
        assert!(rt.rt_peer_gone());
    }

    #[test]
    fn crosses_threads() {
        let (mut rt, mut nrt) = publisher::<u64>(16);
        let t = std::thread::spawn(move || {
            let mut sent = 0;
            while sent < 10_000 {
                if rt.rt_publish(sent) {
                    sent += 1;
                }
            }
        });
        let mut next = 0;
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while next < 10_000 {
            if let Some(v) = nrt.nrt_pop() {
                assert_eq!(v, next);
                next += 1;
            }
            assert!(std::time::Instant::now() < deadline);
        }
        t.join().unwrap();
    }
}
