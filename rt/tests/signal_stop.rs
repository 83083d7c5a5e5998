//! SIGTERM stops the RT loop, which sends zero speed to every robot before it ends; the signal
//! ends the loop's wait at once, even a long one on a thread the signal was not delivered to.
//! (Its own test binary: the signal handlers are process-wide.)

use handoff::{
    channels, ChannelConfig, ExitReason, NodeId, RobotConfig, RobotId, RtCommand, RtEvent, Twist2,
};
use msgs::reassembler::Reassembler;
use rt::link::{Link, PipeLink};
use rt::link_port::link_port;
use rt::rtloop::{spawn, RtConfig};
use rt::sched::RtSetup;
use std::time::{Duration, Instant};

/// A period far longer than a stop may take.
const PERIOD: Duration = Duration::from_secs(3);

/// `set_speed` arguments written to the robot end so far.
fn speeds(peer: &mut PipeLink, reasm: &mut Reassembler, out: &mut Vec<Vec<i16>>) {
    let mut buf = [0u8; 1024];
    loop {
        let n = peer.read(&mut buf).unwrap();
        if n == 0 {
            return;
        }
        let mut input = &buf[..n];
        while let Some(f) = reasm.push(&mut input) {
            let f = f.unwrap();
            if f.kind == 1 {
                out.push(
                    f.payload
                        .chunks(2)
                        .map(|w| i16::from_le_bytes([w[0], w[1]]))
                        .collect(),
                );
            }
        }
    }
}

#[test]
fn sigterm_sends_zero_speed_then_stops() {
    rt::signals::install_stop_handlers().unwrap();
    let (rt_ends, mut nrt) = channels(&ChannelConfig::default());
    let (rt_port, mut port) = link_port();
    let (ours, mut peer) = PipeLink::pair(4096);
    port.nrt_offer(0, Box::new(ours)).unwrap();
    nrt.nrt_push_command(RtCommand::ConfigureRobot {
        robot: RobotId(0),
        config: RobotConfig::script(NodeId(1), 2, 1, false),
    })
    .unwrap();
    let cfg = RtConfig {
        setup: RtSetup::unprivileged(),
        honor_signals: true,
        period: PERIOD,
        ..Default::default()
    };
    let handle = spawn(
        cfg,
        rt_ends,
        rt_port,
        rt::controllers::RtControllers::none(),
        Vec::new(),
    )
    .unwrap();
    // The link is taken at the first deadline; a set-point then goes out at once.
    let deadline = Instant::now() + Duration::from_secs(20);
    while !std::iter::from_fn(|| nrt.nrt_pop_event()).any(|e| matches!(e, RtEvent::LinkUp { .. })) {
        assert!(Instant::now() < deadline, "no link");
        std::thread::yield_now();
    }
    nrt.nrt_set_cmd_vel(
        RobotId(0),
        Twist2 {
            linear: 0.1,
            angular: 0.0,
        },
    )
    .unwrap();
    let mut reasm = Reassembler::new();
    let mut seen = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(20);
    while seen.is_empty() {
        assert!(Instant::now() < deadline, "no set_speed frame");
        speeds(&mut peer, &mut reasm, &mut seen);
        std::thread::yield_now();
    }
    assert_eq!(seen, [vec![293, 293]]);
    assert!(!rt::signals::stop_signalled());
    // raise(3) delivers the signal to this thread: only the stop eventfd wakes the RT thread.
    let t0 = Instant::now();
    nix::sys::signal::raise(nix::sys::signal::Signal::SIGTERM).unwrap();
    assert!(rt::signals::stop_signalled());
    let exit = handle.join().unwrap();
    assert_eq!(exit.reason, ExitReason::Signal);
    assert!(
        t0.elapsed() < PERIOD / 2,
        "stopped {:?} after the signal (period {PERIOD:?})",
        t0.elapsed()
    );
    speeds(&mut peer, &mut reasm, &mut seen);
    assert_eq!(seen, [vec![293, 293], vec![0, 0]]);
    let last = std::iter::from_fn(|| nrt.nrt_pop_event()).last();
    assert_eq!(
        last,
        Some(RtEvent::Exiting {
            reason: ExitReason::Signal
        })
    );
}
