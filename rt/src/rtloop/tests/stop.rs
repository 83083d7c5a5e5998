//! The stop paths that do not trust the robot's script: direct writes of the motor targets,
//! their read-back, the refresh until a stop is confirmed, the link-back stop, and what NRT
//! hands while the robots stop after a signal.

use super::*;
use handoff::{NodeId, RobotId};

const TARGETS: u16 = 140;

fn configure_direct(nrt: &mut NrtEnds, rt: &mut RtLoop, now: u64) {
    let mut config = RobotConfig::script(NodeId(NODE), ODOMETRY, SET_SPEED, false);
    config.motor_targets = Some(TARGETS);
    nrt.nrt_push_command(RtCommand::ConfigureRobot {
        robot: RobotId(0),
        config,
    })
    .unwrap();
    rt.cycle(now);
}

fn variables(values: [i16; 2]) -> Vec<u8> {
    let mut out = [0u8; MAX_FRAME];
    let n = Message::Variables {
        start: TARGETS,
        values: Words::from_slice(&values),
    }
    .encode(NODE, &mut out)
    .unwrap();
    out[..n].to_vec()
}

fn go(nrt: &mut NrtEnds, linear: f64) {
    nrt.nrt_set_cmd_vel(
        RobotId(0),
        Twist2 {
            linear,
            angular: 0.0,
        },
    )
    .unwrap();
}

fn refreshing_loop() -> (RtLoop, NrtEnds, NrtLinkPort) {
    let (rt_ends, nrt) = channels(&ChannelConfig {
        robots: 4,
        ..Default::default()
    });
    let (rt_port, port) = link_port();
    let cfg = RtConfig {
        speed_refresh: Duration::from_millis(100),
        ..test_config()
    };
    (
        RtLoop::new(cfg, rt_ends, rt_port, RtControllers::none(), Vec::new()),
        nrt,
        port,
    )
}

#[test]
fn a_watchdog_stop_also_writes_the_targets_and_is_refreshed_until_read_back_as_zero() {
    let (mut rt, mut nrt, mut port) = refreshing_loop();
    let mut peer = attach(&mut rt, &mut port, &mut nrt, 0);
    configure_direct(&mut nrt, &mut rt, 0);
    go(&mut nrt, 0.1);
    rt.cycle(10 * MS);
    assert_eq!(received(&mut peer), [(SET_SPEED, vec![293, 293])]);
    // moving: refreshed (it feeds the on-robot watchdog)
    rt.cycle(110 * MS);
    assert_eq!(received(&mut peer), [(SET_SPEED, vec![293, 293])]);
    // the cmd_vel watchdog (0.5 s): set_speed, SET_VARIABLES and GET_VARIABLES
    rt.cycle(520 * MS);
    assert_eq!(
        received(&mut peer),
        [
            (SET_SPEED, vec![0, 0]),
            (kind::SET_VARIABLES, vec![0, 0]),
            (kind::GET_VARIABLES, vec![]),
        ]
    );
    // not confirmed (a stopped VM ignored set_speed, say): refreshed
    rt.cycle(625 * MS);
    assert_eq!(received(&mut peer).len(), 3);
    // the robot answers: still moving (someone wrote the targets back) → refreshed again
    peer.write(&variables([293, 293])).unwrap();
    rt.cycle(730 * MS);
    assert_eq!(received(&mut peer).len(), 3);
    // read back as zero: confirmed, no more refreshes
    peer.write(&variables([0, 0])).unwrap();
    rt.cycle(731 * MS);
    assert_eq!(rt.robots[0].stop_confirmed(), Some(true));
    rt.cycle(2000 * MS);
    assert!(received(&mut peer).is_empty());
}

#[test]
fn without_a_readable_address_a_stop_is_repeated_a_few_times() {
    let (mut rt, mut nrt, mut port) = refreshing_loop();
    let mut peer = attach(&mut rt, &mut port, &mut nrt, 0);
    configure(&mut nrt, &mut rt, 0);
    go(&mut nrt, 0.1);
    rt.cycle(10 * MS);
    assert_eq!(received(&mut peer), [(SET_SPEED, vec![293, 293])]);
    go(&mut nrt, 0.0);
    rt.cycle(20 * MS);
    assert_eq!(received(&mut peer), [(SET_SPEED, vec![0, 0])]);
    let mut refreshes = 0;
    for t in 1..20 {
        rt.cycle((20 + t * 100) * MS);
        refreshes += received(&mut peer).len();
    }
    assert_eq!(refreshes, crate::robot::BLIND_ZERO_REFRESHES as usize);
    assert_eq!(rt.robots[0].stop_confirmed(), None);
}

#[test]
fn after_a_link_loss_zero_speed_goes_out_first_when_a_link_is_back() {
    let (mut rt, mut nrt, mut port) = build();
    let mut peer = attach(&mut rt, &mut port, &mut nrt, 0);
    configure_direct(&mut nrt, &mut rt, 0);
    peer.write(&event(NODE, ODOMETRY, &[0, 0, 0])).unwrap();
    go(&mut nrt, 0.1);
    rt.cycle(10 * MS);
    assert_eq!(received(&mut peer), [(SET_SPEED, vec![293, 293])]);
    drop(peer);
    rt.cycle(20 * MS);
    assert!(events(&mut nrt).contains(&RtEvent::RobotStale { robot: RobotId(0) }));
    let _ = port.nrt_take_returned().unwrap();
    let mut back = attach(&mut rt, &mut port, &mut nrt, 0);
    rt.cycle(30 * MS);
    assert_eq!(
        received(&mut back),
        [
            (SET_SPEED, vec![0, 0]),
            (kind::SET_VARIABLES, vec![0, 0]),
            (kind::GET_VARIABLES, vec![]),
        ]
    );
    // a new set-point drives it again
    go(&mut nrt, 0.1);
    rt.cycle(40 * MS);
    assert_eq!(received(&mut back), [(SET_SPEED, vec![293, 293])]);
}

#[test]
fn the_exit_waits_for_the_read_back_and_reports_it() {
    let (mut rt, mut nrt, mut port) = build();
    let peer = attach(&mut rt, &mut port, &mut nrt, 0);
    configure_direct(&mut nrt, &mut rt, 0);
    go(&mut nrt, 0.1);
    rt.cycle(10 * MS);
    // The robot end answers every GET_VARIABLES with zero targets, from another thread.
    let stop = Arc::new(AtomicBool::new(false));
    let answering = {
        let stop = stop.clone();
        let mut peer = peer;
        std::thread::spawn(move || {
            let mut r = Reassembler::new();
            let mut buf = [0u8; 4096];
            let mut seen = Vec::new();
            while !stop.load(Ordering::Relaxed) {
                let n = peer.read(&mut buf).unwrap();
                let mut input = &buf[..n];
                while let Some(f) = r.push(&mut input) {
                    let kind = f.unwrap().kind;
                    seen.push(kind);
                    if kind == kind::GET_VARIABLES {
                        peer.write(&variables([0, 0])).unwrap();
                    }
                }
                std::thread::yield_now();
            }
            seen
        })
    };
    rt.stop_robots(ExitReason::Requested);
    assert_eq!(rt.robots[0].stop_confirmed(), Some(true));
    stop.store(true, Ordering::Relaxed);
    let seen = answering.join().unwrap();
    assert!(seen.contains(&kind::SET_VARIABLES) && seen.contains(&kind::GET_VARIABLES));
}

#[test]
fn an_unanswered_exit_stop_is_reported_unconfirmed_within_the_bound() {
    let (mut rt, mut nrt, mut port) = build();
    let _peer = attach(&mut rt, &mut port, &mut nrt, 0);
    configure_direct(&mut nrt, &mut rt, 0);
    go(&mut nrt, 0.1);
    rt.cycle(10 * MS);
    let t = std::time::Instant::now();
    rt.stop_robots(ExitReason::Requested);
    assert!(t.elapsed() < Duration::from_secs(2));
    assert_eq!(rt.robots[0].stop_confirmed(), Some(false));
}

/// Stopped by a signal, the RT thread stops the robots at once, but NRT (told by the same signal) hands its
/// closing frames after: RESET with `reset_on_closing`. They used to be left in the ring (the loop had
/// exited); now the exit waits for NRT's Shutdown and lets out only what stops or resets a VM — not a
/// `set_speed` that raced with the stop.
#[test]
fn a_signal_exit_waits_for_nrts_closing_frames_and_lets_out_only_stops_and_resets() {
    let (mut rt, mut nrt, mut port) = build_with(RtConfig {
        // far beyond the test: only NRT's Shutdown ends the wait
        exit_flush_timeout: Duration::from_secs(60),
        ..test_config()
    });
    let mut peer = attach(&mut rt, &mut port, &mut nrt, 0);
    configure(&mut nrt, &mut rt, MS);
    let exiting = std::thread::spawn(move || {
        rt.stop_robots(ExitReason::Signal);
        rt
    });
    let mut got = Vec::new();
    crate::testutil::until(Duration::from_secs(10), || {
        got.extend(received(&mut peer));
        !got.is_empty()
    });
    assert_eq!(got, [(SET_SPEED, vec![0, 0])], "the stop goes out first");
    // what NRT hands once it has heard the signal: a racing set_speed, its RESET, then Shutdown
    nrt.nrt_push_frame(LinkTarget::All, &event(0, SET_SPEED, &[300, 300]))
        .unwrap();
    let reset = Message::Reset { dest: NODE }.to_frame(0).unwrap();
    nrt.nrt_push_frame(LinkTarget::One(LinkId(0)), &reset)
        .unwrap();
    nrt.nrt_push_command(RtCommand::Shutdown).unwrap();
    let rt = exiting.join().unwrap();
    assert_eq!(received(&mut peer), [(kind::RESET, vec![])]);
    assert_eq!(rt.stats.drops.refused_at_exit, 1);
}
