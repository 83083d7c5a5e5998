//! RT → NRT value queue.

use rtrb::{Consumer, Producer, RingBuffer};

/// RT half: pushes values without blocking.
#[derive(Debug)]
pub struct RtPublisher<T> {
    queue: Producer<T>,
    dropped: u64,
}

/// NRT half: drains what the RT side published.
#[derive(Debug)]
pub struct PublisherNrt<T> {
    queue: Consumer<T>,
}

/// A publisher pair with room for `capacity` values in flight.
pub fn rt_publisher<T: Copy + Send>(capacity: usize) -> (RtPublisher<T>, PublisherNrt<T>) {
    let (p, c) = RingBuffer::new(capacity.max(1));
    (
        RtPublisher {
            queue: p,
            dropped: 0,
        },
        PublisherNrt { queue: c },
    )
}

impl<T: Copy + Send> RtPublisher<T> {
    /// Queues `value`; false (and counted) if the queue is full.
    pub fn try_publish(&mut self, value: T) -> bool {
        let ok = self.queue.push(value).is_ok();
        if !ok {
            self.dropped += 1;
        }
        ok
    }

    /// Values dropped because the NRT side was behind.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// Whether the NRT half is gone.
    pub fn is_abandoned(&self) -> bool {
        self.queue.is_abandoned()
    }
}

impl<T: Copy + Send> PublisherNrt<T> {
    /// The oldest pending value.
    pub fn pop(&mut self) -> Option<T> {
        self.queue.pop().ok()
    }

    /// Calls `f` on every pending value, oldest first; returns how many.
    pub fn drain(&mut self, mut f: impl FnMut(T)) -> usize {
        let mut n = 0;
        while let Ok(v) = self.queue.pop() {
            f(v);
            n += 1;
        }
        n
    }

    /// Drops every pending value but the newest, and returns it.
    pub fn latest(&mut self) -> Option<T> {
        let mut last = None;
        self.drain(|v| last = Some(v));
        last
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_arrive_in_order_and_overflow_is_counted() {
        let (mut rt, mut nrt) = rt_publisher::<u32>(3);
        for i in 0..5 {
            rt.try_publish(i);
        }
        assert_eq!(rt.dropped(), 2);
        assert_eq!(nrt.pop(), Some(0));
        let mut seen = Vec::new();
        assert_eq!(nrt.drain(|v| seen.push(v)), 2);
        assert_eq!(seen, [1, 2]);
        rt.try_publish(7);
        rt.try_publish(8);
        assert_eq!(nrt.latest(), Some(8));
        assert_eq!(nrt.pop(), None);
        drop(nrt);
        assert!(rt.is_abandoned());
    }

    #[test]
    fn crosses_threads() {
        let (mut rt, mut nrt) = rt_publisher::<u64>(16);
        let t = std::thread::spawn(move || {
            let mut sent = 0;
            while sent < 10_000 {
                if rt.try_publish(sent) {
                    sent += 1;
                }
            }
        });
        let mut next = 0;
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while next < 10_000 {
            if let Some(v) = nrt.pop() {
                assert_eq!(v, next);
                next += 1;
            }
            assert!(std::time::Instant::now() < deadline);
        }
        t.join().unwrap();
    }
}
