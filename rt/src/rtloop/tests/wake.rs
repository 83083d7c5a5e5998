//! The loop wakes on I/O: a set-point reaches the wire, and received odometry reaches the
//! publisher ring, within a small fraction of a long period; a change held back by
//! `min_speed_interval` goes when the interval ends, not at the next period; a stop request
//! ends a long wait at once. Bounds are behaviour checks with wide margins (a polling loop
//! misses them by most of a 100 ms period), not benchmarks.

use super::*;
use crate::testutil::until;
use handoff::{NrtOdomOut, RobotId};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

const PERIOD: Duration = Duration::from_millis(100);
/// Far below the period: a loop that waits for its next cycle misses it most of the time, and
/// every trial must make it.
const SMALL: Duration = Duration::from_millis(20);

struct Running {
    nrt: NrtEnds,
    peer: PipeLink,
    handle: RtHandle,
    out: NrtOdomOut,
}

/// A loop with a 100 ms period, robot 0 (node `NODE`) on a pipe link, its link up.
fn running(min_speed_interval: Duration) -> Running {
    let (rt_ends, mut nrt) = channels(&ChannelConfig {
        robots: 2,
        ..Default::default()
    });
    let out = nrt.nrt_take_odometry_out().unwrap();
    let cfg = RtConfig {
        period: PERIOD,
        min_speed_interval,
        ..test_config()
    };
    let (peer, handle) = spawn_on_pipe(rt_ends, &mut nrt, cfg, true);
    Running {
        nrt,
        peer,
        handle,
        out,
    }
}

fn go(nrt: &NrtEnds, linear: f64) {
    nrt.nrt_set_cmd_vel(
        RobotId(0),
        Twist2 {
            linear,
            angular: 0.0,
        },
    )
    .unwrap();
}

/// Waits for the next speed frame on the robot's end; returns its wheel targets.
fn next_speed(peer: &mut PipeLink) -> Vec<i16> {
    until(Duration::from_secs(10), || {
        received(peer)
            .into_iter()
            .find(|(k, _)| *k == SET_SPEED)
            .map(|(_, a)| a)
    })
}

#[test]
fn a_set_point_reaches_the_wire_without_waiting_for_the_period() {
    let mut r = running(Duration::ZERO);
    for k in 1..=6 {
        let linear = 0.01 * k as f64;
        let t0 = Instant::now();
        go(&r.nrt, linear);
        let got = next_speed(&mut r.peer);
        let took = t0.elapsed();
        assert!(
            took < SMALL,
            "set-point {k} took {took:?} (period {PERIOD:?})"
        );
        assert_eq!(got[0], (linear * 2930.0).round_ties_even() as i16);
    }
    r.handle.stop();
    let exit = r.handle.join().unwrap();
    // every set-point was timed from its stamp to the write that took its frame
    let hop = exit.stats.hops.cmd_to_wire;
    assert!(hop.count >= 6, "{hop:?}");
    assert!(hop.max < SMALL.as_nanos() as u64, "{hop:?}");
}

#[test]
fn a_change_held_back_by_the_speed_interval_goes_when_the_interval_ends() {
    let gap = Duration::from_millis(30);
    let mut r = running(gap);
    // The first change is written at once, no earlier than t0; the second (within the
    // interval) is held back until the interval after the first ends, not until the period.
    let t0 = Instant::now();
    go(&r.nrt, 0.05);
    next_speed(&mut r.peer);
    go(&r.nrt, 0.1);
    assert_eq!(next_speed(&mut r.peer)[0], 293);
    let took = t0.elapsed();
    assert!(
        took >= gap && took < gap + 2 * SMALL,
        "held change written {took:?} after the first (interval {gap:?}, period {PERIOD:?})"
    );
    r.handle.stop();
    r.handle.join().unwrap();
}

#[test]
fn received_odometry_is_handed_over_before_the_next_deadline() {
    let mut r = running(Duration::ZERO);
    // The first event initialises the integrator; each further one is a sample.
    r.peer.write(&event(NODE, ODOMETRY, &[0, 0, 0])).unwrap();
    for k in 1..=6i16 {
        while r.out.nrt_pop().is_some() {}
        r.out.nrt_drain_bell();
        let before = monotonic_ns();
        let t0 = Instant::now();
        r.peer
            .write(&event(NODE, ODOMETRY, &[100, 100, 10 * k]))
            .unwrap();
        let h = until(Duration::from_secs(10), || {
            r.out.nrt_wait(Duration::from_millis(100));
            r.out.nrt_pop()
        });
        let took = t0.elapsed();
        assert!(
            took < SMALL,
            "odometry {k} took {took:?} (period {PERIOD:?})"
        );
        let s = h.sample;
        assert_eq!(s.seq, k as u32 - 1);
        // read at a wake-up (a periodic one may have begun just before the write and read it: its wake-up time is
        // at most a cycle's work earlier, far less than SMALL), decoded after that, handed over after that
        let earliest = before.saturating_sub(SMALL.as_nanos() as u64);
        assert!(
            earliest <= s.wire_ns && s.wire_ns <= s.t_ns && s.t_ns <= h.handed_ns,
            "before {before}, wire {}, decoded {}, handed {}",
            s.wire_ns,
            s.t_ns,
            h.handed_ns
        );
    }
    r.handle.stop();
    let exit = r.handle.join().unwrap();
    let hop = exit.stats.hops.wire_to_decoded;
    assert!(
        hop.count >= 7 && hop.max < SMALL.as_nanos() as u64,
        "{hop:?}"
    );
    assert_eq!(exit.stats.hops.odometry_out_drops, 0);
}

#[test]
fn a_stop_request_ends_a_long_wait_at_once() {
    let (rt_ends, _nrt) = channels(&ChannelConfig::default());
    let (rt_port, _port) = link_port();
    let cfg = RtConfig {
        period: Duration::from_secs(30),
        ..test_config()
    };
    let handle = spawn(cfg, rt_ends, rt_port, RtControllers::none(), Vec::new()).unwrap();
    let t0 = Instant::now();
    handle.stop();
    let exit = handle.join().unwrap();
    assert_eq!(exit.reason, ExitReason::Requested);
    assert!(t0.elapsed() < Duration::from_secs(5), "{:?}", t0.elapsed());
}

/// Runs the waiting loop on this thread for `cycles` periods while a peer writes `chunk` bytes
/// to its link as fast as its pace allows; returns the loop (its counters).
fn flooded_loop(cfg: RtConfig, chunk: usize, cycles: u64) -> RtLoop {
    let (rt_ends, _nrt) = channels(&ChannelConfig::default());
    let (rt_port, mut port) = link_port();
    let (ours, mut peer) = PipeLink::pair(1 << 16);
    port.nrt_offer(0, Box::new(ours)).unwrap();
    let cfg = RtConfig {
        max_cycles: Some(cycles),
        ..cfg
    };
    let mut rt = RtLoop::new(cfg, rt_ends, rt_port, RtControllers::none(), Vec::new());
    rt.cycle(monotonic_ns()); // takes the link
    let stop = std::sync::Arc::new(AtomicBool::new(false));
    let writer = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let junk = vec![0xFFu8; chunk];
            while !stop.load(Ordering::Relaxed) {
                let _ = peer.write(&junk);
                std::thread::sleep(Duration::from_micros(20)); // the peer's pace
            }
        })
    };
    let period = ns(cfg.period);
    assert_eq!(
        rt.run_periodic(monotonic_ns(), period),
        ExitReason::CycleLimit
    );
    stop.store(true, Ordering::Relaxed);
    writer.join().unwrap();
    rt
}

#[test]
fn a_link_that_keeps_waking_the_loop_gets_a_bounded_number_of_wake_ups_per_period() {
    // one byte at a time: every write is a wake-up, far more than 4 per 10 ms period
    let cfg = RtConfig {
        period: Duration::from_millis(10),
        io_wake_spacing: Duration::from_micros(2500),
        read_budget: 1 << 30,
        ..test_config()
    };
    let rt = flooded_loop(cfg, 1, 20);
    let s = &rt.stats;
    assert!(s.io_wake_limited > 0, "the bound was reached");
    assert!(
        s.io_wakes <= 4 * (s.cycles + 1),
        "{} I/O wake-ups in {} periods",
        s.io_wakes,
        s.cycles
    );
}

#[test]
fn a_link_that_used_up_its_read_budget_is_left_out_of_the_wait_until_the_next_period() {
    // 64 bytes per period, 4 KiB per write: the first wake-up uses the budget up
    let cfg = RtConfig {
        period: Duration::from_millis(10),
        read_budget: 64,
        ..test_config()
    };
    let rt = flooded_loop(cfg, 4096, 20);
    let s = &rt.stats;
    assert_eq!(s.io_wake_limited, 0, "the wake-up bound was never needed");
    assert!(
        s.io_wakes <= s.cycles + 1,
        "{} I/O wake-ups in {} periods",
        s.io_wakes,
        s.cycles
    );
    assert!(rt.slots.totals().bytes_rx <= 64 * (s.cycles + 2));
}
