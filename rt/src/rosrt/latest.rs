//! NRT → RT latest value: a triple buffer. The writer never waits for the reader and the
//! reader never waits for the writer; the reader always sees a whole value, the newest one
//! published before its read.

use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;

/// Bit of `back` telling that it holds a value the reader has not taken yet.
const FRESH: u8 = 0b100;
const INDEX: u8 = 0b011;

struct Shared<T> {
    slots: [UnsafeCell<T>; 3],
    /// Index of the slot owned by neither side, plus [`FRESH`].
    back: AtomicU8,
}

// SAFETY: each slot is accessed by at most one side at a time: the writer owns `w`, the
// reader owns `r`, and the third is only reachable through the atomic swap of `back`, whose
// AcqRel ordering publishes the writer's stores before the reader can own that slot.
unsafe impl<T: Send> Sync for Shared<T> {}

/// RT half: reads the latest value wait-free.
pub struct RtSubscriber<T> {
    shared: Arc<Shared<T>>,
    r: u8,
}

/// NRT half: stores values (e.g. from a ROS subscription callback).
pub struct SubscriberNrt<T> {
    shared: Arc<Shared<T>>,
    w: u8,
}

impl<T> std::fmt::Debug for RtSubscriber<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RtSubscriber")
    }
}
impl<T> std::fmt::Debug for SubscriberNrt<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SubscriberNrt")
    }
}

/// A subscriber pair holding `initial` until the first store.
pub fn rt_subscriber<T: Copy + Send>(initial: T) -> (RtSubscriber<T>, SubscriberNrt<T>) {
    let shared = Arc::new(Shared {
        slots: [
            UnsafeCell::new(initial),
            UnsafeCell::new(initial),
            UnsafeCell::new(initial),
        ],
        back: AtomicU8::new(1),
    });
    (
        RtSubscriber {
            shared: shared.clone(),
            r: 2,
        },
        SubscriberNrt { shared, w: 0 },
    )
}

impl<T: Copy + Send> SubscriberNrt<T> {
    /// Publishes `value` as the latest.
    pub fn store(&mut self, value: T) {
        // SAFETY: slot `w` is owned by this writer (never the reader's, never `back`).
        unsafe { *self.shared.slots[self.w as usize].get() = value };
        let old = self.shared.back.swap(self.w | FRESH, Ordering::AcqRel);
        self.w = old & INDEX;
    }
}

impl<T: Copy + Send> RtSubscriber<T> {
    /// The latest value and whether it is new since the previous read.
    pub fn read(&mut self) -> (T, bool) {
        let fresh = self.shared.back.load(Ordering::Relaxed) & FRESH != 0;
        if fresh {
            let old = self.shared.back.swap(self.r, Ordering::AcqRel);
            self.r = old & INDEX;
        }
        // SAFETY: slot `r` is owned by this reader until it swaps it back.
        (unsafe { *self.shared.slots[self.r as usize].get() }, fresh)
    }

    /// The latest value, only if new since the previous read.
    pub fn read_new(&mut self) -> Option<T> {
        let (v, fresh) = self.read();
        fresh.then_some(v)
    }
}

// SAFETY: each half owns one slot index and shares the rest through `Shared` (see its Sync).
unsafe impl<T: Send> Send for RtSubscriber<T> {}
// SAFETY: as above.
unsafe impl<T: Send> Send for SubscriberNrt<T> {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latest_value_wins_and_freshness_is_reported() {
        let (mut rt, mut nrt) = rt_subscriber(0u32);
        assert_eq!(rt.read(), (0, false));
        nrt.store(1);
        nrt.store(2);
        assert_eq!(rt.read(), (2, true));
        assert_eq!(rt.read(), (2, false));
        assert_eq!(rt.read_new(), None);
        nrt.store(3);
        assert_eq!(rt.read_new(), Some(3));
    }

    #[test]
    fn never_tears_or_goes_back_across_threads() {
        let (mut rt, mut nrt) = rt_subscriber([0u64; 8]);
        let w = std::thread::spawn(move || {
            for i in 1..=300_000u64 {
                nrt.store([i; 8]);
            }
        });
        let mut last = 0;
        while !w.is_finished() {
            let (v, _) = rt.read();
            assert!(v.iter().all(|&x| x == v[0]), "torn {v:?}");
            assert!(v[0] >= last);
            last = v[0];
        }
        w.join().unwrap();
        assert_eq!(rt.read().0, [300_000; 8]);
    }
}
