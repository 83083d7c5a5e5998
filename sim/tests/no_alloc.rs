//! The simulation allocates nothing once running: a world of two Thymios running a program
//! (timer events, motor targets, an emitted event and an LED native each 10 ms), polled by a
//! host for variables and changed variables, steps 3 simulated seconds without one heap
//! allocation on the stepping thread (counted by a global allocator).

use msgs::wire::{Message, Words, MAX_FRAME};
use sim::world::{World, WorldConfig};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};

struct Counting;

thread_local! {
    static COUNTING: Cell<bool> = const { Cell::new(false) };
}
static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

fn note() {
    if COUNTING.try_with(Cell::get).unwrap_or(false) {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
    }
}

// SAFETY: every call is forwarded unchanged to the system allocator; only a counter is added.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note();
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note();
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// FW14 program: init sets timer.period[0] = 10; timer0 counts in v[128], writes both motor
/// targets, emits event 0 with v[128..130] and calls leds.top(v128, v128, v128).
const PROGRAM: [u16; 24] = [
    5, 0xFFFF, 5, 0xFFEF, 8, // event table
    0x100A, 0x407C, 0x0000, // init: timer.period[0] = 10
    0x3080, 0x1001, 0x8002, 0x4080, // v128 += 1
    0x3080, 0x4056, 0x3080, 0x4057, // motor.{left,right}.target = v128
    0xB000, 128, 2, // emit 0 v[128..130]
    0x1080, 0x1080, 0x1080, 0xC028, // leds.top
    0x0000,
];

fn frame(msg: &Message<'_>, buf: &mut [u8; MAX_FRAME]) -> usize {
    msg.encode(0, buf).unwrap()
}

#[test]
fn stepping_a_running_world_does_not_allocate() {
    let mut w = World::new(&WorldConfig {
        robots: 2,
        realtime: false,
        ..WorldConfig::default()
    });
    let (mut tx, mut rx) = w.attach(vec![0, 1], 1 << 16);
    let words: Vec<i16> = PROGRAM.iter().map(|w| *w as i16).collect();
    let mut buf = [0u8; MAX_FRAME];
    for dest in [1, 2] {
        let upload = Message::SetBytecode {
            dest,
            start: 0,
            words: Words::from_slice(&words),
        };
        for m in [upload, Message::Run { dest }] {
            let n = frame(&m, &mut buf);
            for b in &buf[..n] {
                tx.push(*b).unwrap();
            }
        }
    }
    let mut polls = [[0u8; MAX_FRAME]; 2];
    let get = frame(
        &Message::GetVariables {
            dest: 1,
            start: 0,
            length: 140,
        },
        &mut polls[0],
    );
    let changed = frame(&Message::GetChangedVariables { dest: 2 }, &mut polls[1]);
    let lens = [get, changed];
    let mut received = 0usize;
    let mut run = |w: &mut World, ms: u64, received: &mut usize| {
        for t in 0..ms {
            if t % 50 == 0 {
                for (p, n) in polls.iter().zip(lens) {
                    for b in &p[..n] {
                        tx.push(*b).unwrap();
                    }
                }
            }
            w.step();
            while rx.pop().is_ok() {
                *received += 1;
            }
        }
    };
    // warm-up: upload, first events, buffers at their working size
    run(&mut w, 500, &mut received);
    assert!(
        w.robots.iter().all(|r| r.targets[0] > 10),
        "the program runs"
    );
    ALLOCATIONS.store(0, Ordering::Relaxed);
    received = 0;
    COUNTING.with(|c| c.set(true));
    run(&mut w, 3000, &mut received);
    COUNTING.with(|c| c.set(false));
    let allocations = ALLOCATIONS.load(Ordering::Relaxed);
    assert!(received > 10_000, "host received {received} bytes");
    assert_eq!(allocations, 0, "heap allocations while stepping");
    assert_eq!(w.dropped_frames(), 0);
}
