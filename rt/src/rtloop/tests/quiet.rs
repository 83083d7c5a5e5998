//! A loop with nothing to do sleeps past its period (`RtLoop::quiet_until`), and keeps its period while
//! a robot moves: the periodic cycle runs at each deadline then, as the watchdog and the refreshes
//! need. What ends quietness wakes it at once (an offered link here; set-points: `wake.rs`), and the
//! statistics are still reported at their period.

use super::*;
use crate::testutil::until;

fn stats_of(nrt: &mut NrtEnds, last: &mut Option<RtStats>) -> usize {
    let mut n = 0;
    while let Some(s) = nrt.nrt_take_stats() {
        *last = Some(s);
        n += 1;
    }
    n
}

#[test]
fn a_loop_whose_robot_moves_keeps_its_deadlines_and_counts_cycles() {
    let (rt_ends, mut nrt) = channels(&ChannelConfig::default());
    let (rt_port, _port) = link_port();
    nrt.nrt_push_command(RtCommand::ConfigureRobot {
        robot: RobotId(0),
        config: RobotConfig::script(NodeId(NODE), ODOMETRY, SET_SPEED, false),
    })
    .unwrap();
    // moving (no link: its frames go nowhere) for far longer than the run, well within the watchdog
    nrt.nrt_set_cmd_vel(
        RobotId(0),
        Twist2 {
            linear: 0.05,
            angular: 0.0,
        },
    )
    .unwrap();
    let cfg = RtConfig {
        max_cycles: Some(50),
        period: Duration::from_millis(1),
        ..test_config()
    };
    let t0 = monotonic_ns();
    let exit = spawn(cfg, rt_ends, rt_port, RtControllers::none(), Vec::new())
        .unwrap()
        .join()
        .unwrap();
    let elapsed = monotonic_ns() - t0;
    assert_eq!(exit.reason, ExitReason::CycleLimit);
    assert_eq!(exit.stats.cycles, 50);
    // 50 absolute 1 ms deadlines (plus skipped ones on overrun) cannot pass in under 50 ms.
    assert!(elapsed >= 50 * MS - MS, "{elapsed}");
    assert_eq!(exit.stats.wakeup_latency_ns.count, 50);
    assert_eq!(exit.stats.cycle_ns.count, 50);
}

#[test]
fn a_quiet_loop_sleeps_through_its_periods_and_counts_them() {
    let (rt_ends, _nrt) = channels(&ChannelConfig::default());
    let (rt_port, _port) = link_port();
    let cfg = RtConfig {
        max_cycles: Some(50),
        period: Duration::from_millis(1),
        ..test_config()
    };
    let t0 = monotonic_ns();
    let exit = spawn(cfg, rt_ends, rt_port, RtControllers::none(), Vec::new())
        .unwrap()
        .join()
        .unwrap();
    let elapsed = monotonic_ns() - t0;
    assert_eq!(exit.reason, ExitReason::CycleLimit);
    // 50 periods passed, in a few cycles: the first one (it reads what NRT set up) and the last
    assert!(elapsed >= 49 * MS, "{elapsed}");
    assert!(exit.stats.cycles <= 3, "{} cycles", exit.stats.cycles);
}

/// Honouring stop signals without their wake descriptor (no handler installed in this test process,
/// or no eventfd): only the periodic cycle sees a signal, so a quiet loop keeps its period.
#[test]
fn a_loop_that_cannot_be_woken_by_a_stop_signal_keeps_its_period() {
    assert!(
        crate::signals::stop_wake_fd().is_none(),
        "no handler installed here"
    );
    let (rt_ends, _nrt) = channels(&ChannelConfig::default());
    let (rt_port, _port) = link_port();
    let cfg = RtConfig {
        max_cycles: Some(50),
        period: Duration::from_millis(1),
        honor_signals: true,
        ..test_config()
    };
    let exit = spawn(cfg, rt_ends, rt_port, RtControllers::none(), Vec::new())
        .unwrap()
        .join()
        .unwrap();
    assert_eq!(exit.reason, ExitReason::CycleLimit);
    assert_eq!(exit.stats.cycles, 50, "slept through periods");
}

#[test]
fn a_quiet_loop_reports_its_statistics_and_takes_an_offered_link_at_once() {
    let (rt_ends, mut nrt) = channels(&ChannelConfig::default());
    let (rt_port, mut port) = link_port();
    let cfg = RtConfig {
        period: Duration::from_millis(10),
        stats_period: Duration::from_millis(300),
        ..test_config()
    };
    let handle = spawn(cfg, rt_ends, rt_port, RtControllers::none(), Vec::new()).unwrap();
    // two reports (0.6 s, 60 periods): a cycle for each, hardly more
    let mut last = None;
    let mut reports = 0;
    until(Duration::from_secs(10), || {
        reports += stats_of(&mut nrt, &mut last);
        reports >= 2
    });
    let cycles = last.map_or(0, |s| s.cycles);
    assert!(
        (2..=6).contains(&cycles),
        "{cycles} cycles for {reports} reports"
    );
    // an offered link is taken at once, not at the next report (up to 0.3 s away)
    let (ours, _peer) = PipeLink::pair(1 << 12);
    let t0 = std::time::Instant::now();
    port.nrt_offer(3, Box::new(ours)).unwrap();
    until(Duration::from_secs(10), || {
        events(&mut nrt)
            .iter()
            .any(|e| matches!(e, RtEvent::LinkUp { target: 3, .. }))
    });
    assert!(
        t0.elapsed() < Duration::from_millis(150),
        "{:?}",
        t0.elapsed()
    );
    handle.stop();
    assert_eq!(handle.join().unwrap().reason, ExitReason::Requested);
}

#[test]
fn a_quiet_loop_ends_at_once_when_nrt_goes_away() {
    let (rt_ends, mut nrt) = channels(&ChannelConfig::default());
    let (rt_port, _port) = link_port();
    let cfg = RtConfig {
        period: Duration::from_millis(10),
        stats_period: Duration::from_secs(1),
        ..test_config()
    };
    let handle = spawn(cfg, rt_ends, rt_port, RtControllers::none(), Vec::new()).unwrap();
    // its first report: the cycle that made it is past, the next one is a second away
    let mut last = None;
    until(Duration::from_secs(10), || {
        stats_of(&mut nrt, &mut last) > 0
    });
    let t0 = std::time::Instant::now();
    drop(nrt);
    let exit = handle.join().unwrap();
    assert_eq!(exit.reason, ExitReason::NrtGone);
    assert!(
        t0.elapsed() < Duration::from_millis(300),
        "{:?}",
        t0.elapsed()
    );
}

/// A robot moving at a steady set-point needs the periodic cycle only at its duties' deadlines: the loop sleeps
/// between them, yet the speed is re-sent every `speed_refresh` and the watchdog stops the robot at its deadline
/// (never before it), as when every period ran.
#[test]
fn a_cruising_robot_is_refreshed_and_stopped_at_its_deadlines_and_the_loop_sleeps_between() {
    const REFRESH: u64 = 50 * MS;
    const WATCHDOG: u64 = 500 * MS;
    let (rt_ends, mut nrt) = channels(&ChannelConfig::default());
    let cfg = RtConfig {
        period: Duration::from_millis(1),
        speed_refresh: Duration::from_nanos(REFRESH),
        ..test_config()
    };
    let (mut peer, handle) = spawn_on_pipe(rt_ends, &mut nrt, cfg, true);
    assert_eq!(nrt.nrt_params().nrt_watchdog(), WATCHDOG as f64 * 1e-9);
    let t0 = monotonic_ns();
    nrt.nrt_set_cmd_vel(
        RobotId(0),
        Twist2 {
            linear: 0.1,
            angular: 0.0,
        },
    )
    .unwrap();
    // every speed frame the robot receives, with when it was read here (polled every 1 ms)
    let mut writes: Vec<(u64, Vec<i16>)> = Vec::new();
    let deadline = t0 + 5_000 * MS;
    while !writes.iter().any(|(_, a)| a == &[0, 0]) {
        assert!(monotonic_ns() < deadline, "no stop within 5 s: {writes:?}");
        std::thread::sleep(Duration::from_millis(1));
        let now = monotonic_ns() - t0;
        writes.extend(
            received(&mut peer)
                .into_iter()
                .filter(|(k, _)| *k == SET_SPEED)
                .map(|(_, a)| (now, a)),
        );
    }
    handle.stop();
    let exit = handle.join().unwrap();
    let (stop_t, moving) = (writes.last().unwrap().0, &writes[..writes.len() - 1]);
    assert!(moving.iter().all(|(_, a)| a == &[293, 293]), "{writes:?}");
    // the set-point at once, then a refresh each 50 ms until the watchdog: 10 in all on time, fewer if some
    // refreshes were late on a loaded machine, never more
    assert!((6..=11).contains(&moving.len()), "{writes:?}");
    // the watchdog stops at its deadline: read here no earlier than it (its clock starts when the RT thread took
    // the set-point, after t0), and within a few periods after it (wide margin for a loaded machine)
    assert!(stop_t >= WATCHDOG, "stopped early at {stop_t} ns");
    assert!(stop_t < WATCHDOG + 100 * MS, "stopped late at {stop_t} ns");
    assert_eq!(exit.stats.watchdog_stops, 1);
    // ~550 periods of 1 ms passed; the loop ran a cycle at the set-point, each refresh and the stop (and a few
    // to confirm it), not one per period
    assert!(exit.stats.cycles < 100, "{} cycles", exit.stats.cycles);
}

/// More frames from NRT than one wake-up takes: the rest go at the next period, not when a quiet loop next wakes
/// (its ring is rung once, and a quiet loop could sleep until its statistics report, up to a second away).
#[test]
fn frames_beyond_one_wake_up_go_at_the_next_period_not_after_a_quiet_sleep() {
    const FRAMES: usize = MAX_INPUTS_PER_CYCLE + 44;
    let (rt_ends, mut nrt) = channels(&ChannelConfig::default());
    let cfg = RtConfig {
        period: Duration::from_millis(10),
        ..test_config()
    };
    let (mut peer, handle) = spawn_on_pipe(rt_ends, &mut nrt, cfg, false);
    // the loop quiet again (no robot, the link settled) before the frames come
    std::thread::sleep(Duration::from_millis(50));
    let frame = event(0, 20, &[1, 2, 3]);
    let t0 = std::time::Instant::now();
    for _ in 0..FRAMES {
        nrt.nrt_push_frame(LinkTarget::One(LinkId(0)), &frame)
            .unwrap();
    }
    let mut got = 0;
    while got < FRAMES {
        assert!(
            t0.elapsed() < Duration::from_secs(5),
            "{got} of {FRAMES} frames within 5 s"
        );
        std::thread::sleep(Duration::from_millis(1));
        got += received(&mut peer).len();
    }
    // two wake-ups: the ring, then the next period (10 ms); a loop that slept on would take ~1 s
    assert!(
        t0.elapsed() < Duration::from_millis(500),
        "{:?}",
        t0.elapsed()
    );
    handle.stop();
    assert_eq!(handle.join().unwrap().reason, ExitReason::Requested);
}
