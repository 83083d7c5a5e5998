//! A counting global allocator: counts heap allocations made by threads marked as RT.
//!
//! The binary installs it (`#[global_allocator] static A: rt::alloc::CountingAlloc =
//! rt::alloc::CountingAlloc;`); the RT thread marks itself with [`mark_current_thread_rt`].
//! On a non-RT thread an allocation costs one thread-local read on top of the system
//! allocator; on an RT thread it also costs one atomic increment (and a thread-local one).
//! Without the allocator installed every count stays 0 and [`is_installed`] says so.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// The counting allocator (wraps [`System`]).
#[derive(Debug, Default, Clone, Copy)]
pub struct CountingAlloc;

static INSTALLED: AtomicBool = AtomicBool::new(false);
static RT_ALLOCATIONS: AtomicU64 = AtomicU64::new(0);
static RT_DEALLOCATIONS: AtomicU64 = AtomicU64::new(0);

thread_local! {
    static IS_RT: Cell<bool> = const { Cell::new(false) };
    static THREAD_ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

#[inline]
fn on_rt_thread() -> bool {
    // `try_with`: the allocator may run while thread-locals are being torn down.
    IS_RT.try_with(Cell::get).unwrap_or(false)
}

#[inline]
fn count_allocation() {
    if !INSTALLED.load(Ordering::Relaxed) {
        INSTALLED.store(true, Ordering::Relaxed);
    }
    if on_rt_thread() {
        RT_ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        let _ = THREAD_ALLOCATIONS.try_with(|c| c.set(c.get() + 1));
    }
}

// SAFETY: every method forwards to `System` with the caller's arguments unchanged; the
// counting touches only atomics and const-initialised thread-locals (no allocation, no
// destructor registration), so the allocator is never re-entered.
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count_allocation();
        // SAFETY: forwarded contract of `GlobalAlloc::alloc`.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count_allocation();
        // SAFETY: forwarded contract of `GlobalAlloc::alloc_zeroed`.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count_allocation();
        // SAFETY: forwarded contract of `GlobalAlloc::realloc`.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if on_rt_thread() {
            RT_DEALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: forwarded contract of `GlobalAlloc::dealloc`.
        unsafe { System.dealloc(ptr, layout) }
    }
}

/// Marks (or unmarks) the current thread as RT: its allocations are counted from now on.
pub fn mark_current_thread_rt(rt: bool) {
    IS_RT.with(|c| c.set(rt));
}

/// Whether the current thread is marked RT.
pub fn current_thread_is_rt() -> bool {
    on_rt_thread()
}

/// Whether [`CountingAlloc`] is the global allocator (it has served at least one allocation).
pub fn is_installed() -> bool {
    INSTALLED.load(Ordering::Relaxed)
}

/// Allocations (incl. reallocations) made by all RT-marked threads since process start.
pub fn rt_allocations() -> u64 {
    RT_ALLOCATIONS.load(Ordering::Relaxed)
}

/// Deallocations made by all RT-marked threads since process start.
pub fn rt_deallocations() -> u64 {
    RT_DEALLOCATIONS.load(Ordering::Relaxed)
}

/// Allocations made by the current thread while it was marked RT.
pub fn current_thread_allocations() -> u64 {
    THREAD_ALLOCATIONS.try_with(Cell::get).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marking_is_per_thread() {
        mark_current_thread_rt(true);
        assert!(current_thread_is_rt());
        let other = std::thread::spawn(current_thread_is_rt).join().unwrap();
        assert!(!other);
        mark_current_thread_rt(false);
        assert!(!current_thread_is_rt());
        // The unit-test binary does not install the allocator: counts stay at 0.
        assert!(!is_installed());
        assert_eq!(current_thread_allocations(), 0);
    }
}
