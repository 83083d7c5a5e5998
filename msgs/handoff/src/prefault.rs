//! [`prefault_ring`]: touching a fresh SPSC ring's memory once (a leaf module every port's constructor uses).

use rtrb::{Consumer, Producer};

/// Writes and reads every slot of a fresh ring once, so that neither thread takes a first-touch
/// page fault on it later (a new ring's memory may not be mapped yet).
pub fn prefault_ring<T: Copy>(p: &mut Producer<T>, c: &mut Consumer<T>, filler: T) {
    while p.push(filler).is_ok() {}
    while c.pop().is_ok() {}
}
