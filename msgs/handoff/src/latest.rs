//! NRT → RT latest value: a triple buffer. The writer never waits for the reader and the reader
//! never waits for the writer; the reader always gets a whole value (never "try again"), the
//! newest one published before its read, and learns whether it is new.
//!
//! This is the one latest-value mechanism of the handoff: the live parameters
//! ([`super::RtLiveParams`]) and the RT controllers' tunables are built on it, read on the RT side through
//! [`super::RtIntake`] (which records what it takes for the flight recorder).

#![allow(unsafe_code)]

use std::cell::{Cell, UnsafeCell};
use std::marker::PhantomData;
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

/// Makes a half `Send` but not `Sync`: each half belongs to one thread at a time.
type NotSync = PhantomData<Cell<()>>;

/// RT half: reads the latest value, wait-free and without allocating (`Send`, not `Sync`).
pub struct RtLatest<T> {
    shared: Arc<Shared<T>>,
    r: u8,
    _not_sync: NotSync,
}

/// NRT half: stores values (e.g. from a ROS subscription callback) and remembers the last one
/// (`Send`, not `Sync`).
pub struct NrtLatest<T> {
    shared: Arc<Shared<T>>,
    w: u8,
    last: T,
    _not_sync: NotSync,
}

impl<T> std::fmt::Debug for RtLatest<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RtLatest")
    }
}
impl<T> std::fmt::Debug for NrtLatest<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("NrtLatest")
    }
}

/// A latest-value cell holding `initial` until the first store: `(rt, nrt)` halves.
///
/// # Example
///
/// ```
/// use handoff::latest;
///
/// let (mut rt, mut nrt) = latest(0.5f64);
/// assert_eq!(rt.rt_read(), (0.5, false)); // the initial value, not new
/// nrt.nrt_store(1.0);
/// nrt.nrt_store(2.0); // latest value wins
/// assert_eq!(rt.rt_read(), (2.0, true));
/// assert_eq!(rt.rt_read_new(), None); // nothing new since
/// assert_eq!(nrt.nrt_last(), 2.0);
/// ```
pub fn latest<T: Copy + Send>(initial: T) -> (RtLatest<T>, NrtLatest<T>) {
    let shared = Arc::new(Shared {
        slots: [
            UnsafeCell::new(initial),
            UnsafeCell::new(initial),
            UnsafeCell::new(initial),
        ],
        back: AtomicU8::new(1),
    });
    (
        RtLatest {
            shared: shared.clone(),
            r: 2,
            _not_sync: PhantomData,
        },
        NrtLatest {
            shared,
            w: 0,
            last: initial,
            _not_sync: PhantomData,
        },
    )
}

impl<T: Copy + Send> NrtLatest<T> {
    /// Publishes `value` as the latest (never waits for the reader).
    pub fn nrt_store(&mut self, value: T) {
        // SAFETY: slot `w` is owned by this writer (never the reader's, never `back`).
        unsafe { *self.shared.slots[self.w as usize].get() = value };
        let old = self.shared.back.swap(self.w | FRESH, Ordering::AcqRel);
        self.w = old & INDEX;
        self.last = value;
    }

    /// The last value stored (or the initial one).
    pub fn nrt_last(&self) -> T {
        self.last
    }
}

impl<T: Copy + Send> RtLatest<T> {
    /// The latest value and whether it is new since the previous read.
    pub fn rt_read(&mut self) -> (T, bool) {
        let fresh = self.shared.back.load(Ordering::Relaxed) & FRESH != 0;
        if fresh {
            let old = self.shared.back.swap(self.r, Ordering::AcqRel);
            self.r = old & INDEX;
        }
        // SAFETY: slot `r` is owned by this reader until it swaps it back.
        (unsafe { *self.shared.slots[self.r as usize].get() }, fresh)
    }

    /// The latest value, only if new since the previous read.
    pub fn rt_read_new(&mut self) -> Option<T> {
        // Polled every cycle for every controller of every robot: nothing new costs one load, not a copy of the
        // value (a controller's parameter block is 128 bytes).
        if self.shared.back.load(Ordering::Relaxed) & FRESH == 0 {
            return None;
        }
        let (v, _) = self.rt_read();
        Some(v)
    }
}

// SAFETY: each half owns one slot index and shares the rest through `Shared` (see its Sync).
unsafe impl<T: Send> Send for RtLatest<T> {}
// SAFETY: as above; `last` is a plain `T: Send` owned by the writer.
unsafe impl<T: Send> Send for NrtLatest<T> {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latest_value_wins_and_freshness_is_reported() {
        let (mut rt, mut nrt) = latest(0u32);
        assert_eq!(rt.rt_read(), (0, false));
        nrt.nrt_store(1);
        nrt.nrt_store(2);
        assert_eq!(rt.rt_read(), (2, true));
        assert_eq!(rt.rt_read(), (2, false));
        assert_eq!(rt.rt_read_new(), None);
        nrt.nrt_store(3);
        assert_eq!(rt.rt_read_new(), Some(3));
    }

    #[test]
    fn never_tears_or_goes_back_across_threads() {
        let (mut rt, mut nrt) = latest([0u64; 8]);
        let w = std::thread::spawn(move || {
            for i in 1..=300_000u64 {
                nrt.nrt_store([i; 8]);
            }
        });
        let mut last = 0;
        while !w.is_finished() {
            let (v, _) = rt.rt_read();
            assert!(v.iter().all(|&x| x == v[0]), "torn {v:?}");
            assert!(v[0] >= last);
            last = v[0];
        }
        w.join().unwrap();
        assert_eq!(rt.rt_read().0, [300_000; 8]);
    }
}
