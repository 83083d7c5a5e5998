//! The bounded queue between a socket task and its consumer (a subscriber's connection, a subscription's
//! handle): one consumer, pushes never wait, and a full queue drops its **oldest** message, as rospy and roscpp
//! do — a `cmd_vel` of zero right after a non-zero one is never the one lost.

use std::collections::VecDeque;
use std::sync::Mutex;
use tokio::sync::Notify;

struct Inner<T> {
    items: VecDeque<T>,
    closed: bool,
    dropped: u64,
}

/// A bounded drop-oldest queue with one async consumer.
pub(crate) struct Queue<T> {
    inner: Mutex<Inner<T>>,
    ready: Notify,
    capacity: usize,
}

impl<T> Queue<T> {
    /// Holds at most `capacity` items (at least 1).
    pub fn new(capacity: usize) -> Queue<T> {
        let capacity = capacity.max(1);
        Queue {
            inner: Mutex::new(Inner {
                items: VecDeque::with_capacity(capacity.min(64)),
                closed: false,
                dropped: 0,
            }),
            ready: Notify::new(),
            capacity,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner<T>> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Appends `item`, dropping the oldest if full; `false` (and nothing kept) once closed.
    pub fn push(&self, item: T) -> bool {
        let mut i = self.lock();
        if i.closed {
            return false;
        }
        if i.items.len() >= self.capacity {
            i.items.pop_front();
            i.dropped += 1;
        }
        i.items.push_back(item);
        drop(i);
        self.ready.notify_one();
        true
    }

    /// The oldest item, waiting for one; `None` once closed and empty.
    pub async fn pop(&self) -> Option<T> {
        loop {
            {
                let mut i = self.lock();
                if let Some(x) = i.items.pop_front() {
                    return Some(x);
                }
                if i.closed {
                    return None;
                }
            }
            // a push or close in between left a permit: this returns at once
            self.ready.notified().await;
        }
    }

    /// No more pushes; the consumer gets what is left, then `None`.
    pub fn close(&self) {
        self.lock().closed = true;
        self.ready.notify_one();
    }

    /// Items dropped because the queue was full.
    pub fn dropped(&self) -> u64 {
        self.lock().dropped
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::net::block;

    #[test]
    fn a_full_queue_drops_its_oldest() {
        let q = Queue::new(2);
        for i in 0..5 {
            assert!(q.push(i));
        }
        assert_eq!(q.dropped(), 3);
        assert_eq!(block(q.pop()), Some(3));
        assert_eq!(block(q.pop()), Some(4));
    }

    #[test]
    fn a_closed_queue_hands_out_the_rest_then_none() {
        let q = Queue::new(4);
        q.push(1);
        q.close();
        assert!(!q.push(2));
        assert_eq!(block(q.pop()), Some(1));
        assert_eq!(block(q.pop()), None);
    }

    #[test]
    fn a_waiting_consumer_is_woken_by_a_push_from_another_thread() {
        let q = std::sync::Arc::new(Queue::new(1));
        let p = q.clone();
        let t = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(20));
            p.push(7)
        });
        assert_eq!(block(q.pop()), Some(7));
        assert!(t.join().unwrap());
    }
}
