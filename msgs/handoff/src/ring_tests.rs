//! Unit tests of [`super`]: the RT ↔ NRT rings.

use super::*;
use msgs::wire::{encode_user_event, HOST_SOURCE};

fn event(id: u16, args: &[i16]) -> Vec<u8> {
    let mut out = [0u8; MAX_FRAME];
    let n = encode_user_event(HOST_SOURCE, id, args, &mut out).unwrap();
    out[..n].to_vec()
}

#[test]
fn frames_cross_both_ways_whole_and_in_order() {
    let (mut rt, mut nrt) = channels(&ChannelConfig {
        frames_to_nrt_bytes: 600,
        frames_from_nrt_bytes: 600,
        ..Default::default()
    });
    // Many wrap-arounds of the small rings.
    for i in 0..200i16 {
        let f = event(3, &[i, -i, i / 2]);
        assert!(rt.rt_push_frame(LinkId((i % 7) as u8), 1000 + i as u64, &f));
        let got = nrt.nrt_pop_frame().unwrap();
        assert_eq!(
            (got.link, got.t_ns, got.bytes),
            (LinkId((i % 7) as u8), 1000 + i as u64, &f[..])
        );
        assert!(nrt.nrt_pop_frame().is_none());

        let to = if i % 2 == 0 {
            LinkTarget::All
        } else {
            LinkTarget::One(LinkId(5))
        };
        nrt.nrt_push_frame(to, &f).unwrap();
        let mut out = [0u8; MAX_FRAME];
        let (t, n) = rt.rt_pop_frame(&mut out).unwrap().unwrap();
        assert_eq!((t, &out[..n]), (to, &f[..]));
        assert!(rt.rt_pop_frame(&mut out).is_none());
    }
}

#[test]
fn a_record_pushed_while_rt_looks_is_never_taken_for_garbage() {
    // NRT pushes while RT polls a nearly always empty ring: every frame arrives, in order,
    // and no record is ever reported invalid (the fill level is read once per pop).
    let (mut rt, mut nrt) = channels(&ChannelConfig {
        frames_from_nrt_bytes: 256,
        ..Default::default()
    });
    const N: i16 = 20_000;
    let producer = std::thread::spawn(move || {
        for round in 0..20 {
            for i in 0..N {
                let f = event(round, &[i]);
                // yield, not spin: on a loaded 2-core machine a spinning pair starves each other
                while nrt.nrt_push_frame(LinkTarget::One(LinkId(1)), &f) == Err(SendError::Full) {
                    std::thread::yield_now();
                }
            }
        }
        nrt
    });
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let mut out = [0u8; MAX_FRAME];
    for round in 0..20 {
        for i in 0..N {
            let (to, n) = loop {
                match rt.rt_pop_frame(&mut out) {
                    Some(r) => break r.expect("a whole record taken for garbage"),
                    None => {
                        assert!(std::time::Instant::now() < deadline, "frame lost");
                        std::thread::yield_now();
                    }
                }
            };
            assert_eq!(
                (to, &out[..n]),
                (LinkTarget::One(LinkId(1)), &event(round, &[i])[..])
            );
        }
    }
    producer.join().unwrap();
}

#[test]
fn full_rings_refuse_without_tearing() {
    let (mut rt, mut nrt) = channels(&ChannelConfig {
        frames_to_nrt_bytes: 10 + MAX_FRAME,
        frames_from_nrt_bytes: 1 + MAX_FRAME,
        ..Default::default()
    });
    let big = event(1, &[7; 258]);
    assert!(rt.rt_push_frame(LinkId(0), 1, &big));
    assert!(!rt.rt_push_frame(LinkId(0), 2, &big));
    assert_eq!(nrt.nrt_pop_frame().unwrap().t_ns, 1);
    assert!(nrt.nrt_pop_frame().is_none());

    nrt.nrt_push_frame(LinkTarget::One(LinkId(1)), &big)
        .unwrap();
    assert_eq!(
        nrt.nrt_push_frame(LinkTarget::One(LinkId(1)), &big),
        Err(SendError::Full)
    );
}

#[test]
fn send_frame_validates() {
    let (_rt, mut nrt) = channels(&ChannelConfig::default());
    let f = event(1, &[1, 2]);
    assert!(matches!(
        nrt.nrt_push_frame(LinkTarget::All, &f[..7]),
        Err(SendError::Invalid(FrameError::Incomplete { .. }))
    ));
    let mut two = f.clone();
    two.extend_from_slice(&f);
    assert_eq!(
        nrt.nrt_push_frame(LinkTarget::All, &two),
        Err(SendError::TrailingBytes(f.len()))
    );
    assert!(matches!(
        nrt.nrt_push_frame(LinkTarget::All, &[0xFF, 0xFF, 0, 0, 1, 0]),
        Err(SendError::Invalid(FrameError::Oversize(_)))
    ));
}

#[test]
fn abandonment_is_visible_both_ways() {
    let (rt, nrt) = channels(&ChannelConfig::default());
    assert!(!rt.rt_peer_gone() && !nrt.nrt_peer_gone());
    drop(nrt);
    assert!(rt.rt_peer_gone());
    let (rt, nrt) = channels(&ChannelConfig::default());
    drop(rt);
    assert!(nrt.nrt_peer_gone());
}

#[test]
fn events_and_commands_are_fifo_and_bounded() {
    let (mut rt, mut nrt) = channels(&ChannelConfig {
        events: 2,
        commands: 1,
        ..Default::default()
    });
    assert!(rt.rt_push_event(RtEvent::RobotStale { robot: RobotId(1) }));
    assert!(rt.rt_push_event(RtEvent::WatchdogStop { robot: RobotId(2) }));
    assert!(!rt.rt_push_event(RtEvent::RobotStale { robot: RobotId(3) }));
    assert_eq!(
        nrt.nrt_pop_event(),
        Some(RtEvent::RobotStale { robot: RobotId(1) })
    );
    assert_eq!(
        nrt.nrt_pop_event(),
        Some(RtEvent::WatchdogStop { robot: RobotId(2) })
    );
    assert_eq!(nrt.nrt_pop_event(), None);
    nrt.nrt_push_command(RtCommand::Shutdown).unwrap();
    assert_eq!(
        nrt.nrt_push_command(RtCommand::Shutdown),
        Err(SendError::Full)
    );
    assert_eq!(rt.rt_pop_command(), Some(RtCommand::Shutdown));
    assert_eq!(rt.rt_pop_command(), None);
}

#[test]
fn the_rt_side_rings_the_doorbell_only_after_pushing() {
    let (mut rt, nrt) = channels(&ChannelConfig::default());
    let bell = nrt.nrt_doorbell().clone();
    rt.rt_wake_nrt();
    assert!(
        !bell.wait(std::time::Duration::from_millis(1)),
        "nothing pushed"
    );
    assert!(rt.rt_push_event(RtEvent::RobotStale { robot: RobotId(0) }));
    assert!(rt.rt_push_frame(LinkId(0), 1, &event(1, &[2])));
    rt.rt_wake_nrt();
    assert!(bell.wait(std::time::Duration::from_secs(5)));
    rt.rt_wake_nrt();
    assert!(
        !bell.wait(std::time::Duration::from_millis(1)),
        "rung once per push batch"
    );
}

#[test]
fn frames_not_wanted_at_once_wait_until_wanted_or_half_the_ring_is_full() {
    let cfg = ChannelConfig {
        frames_to_nrt_bytes: 4096,
        events: 16,
        ..ChannelConfig::default()
    };
    let (mut rt, mut nrt) = channels(&cfg);
    let bell = nrt.nrt_doorbell().clone();
    let quiet = |what: &str| assert!(!bell.wait(std::time::Duration::from_millis(1)), "{what}");
    assert!(nrt.nrt_frames_wanted(), "wanted until NRT says otherwise");
    nrt.nrt_set_frames_wanted(false);
    let frame = event(1, &[2, 3]);
    assert!(rt.rt_push_frame(LinkId(0), 1, &frame));
    let proximity = handoff_proximity();
    assert!(rt.rt_push_event(RtEvent::Proximity(proximity)));
    rt.rt_wake_nrt();
    quiet("a frame and a proximity reading nobody wants at once");
    // still there for NRT's own wake-up, in order
    assert_eq!(nrt.nrt_pop_frame().unwrap().bytes, &frame[..]);
    assert_eq!(nrt.nrt_pop_event(), Some(RtEvent::Proximity(proximity)));
    // an event other than a reading rings at once, and takes the waiting frames with it
    assert!(rt.rt_push_frame(LinkId(0), 2, &frame));
    assert!(rt.rt_push_event(RtEvent::RobotStale { robot: RobotId(0) }));
    rt.rt_wake_nrt();
    assert!(bell.wait(std::time::Duration::from_secs(5)));
    rt.rt_wake_nrt();
    quiet("nothing new since the ring");
    // wanted again: the next frame rings
    nrt.nrt_set_frames_wanted(true);
    rt.rt_wake_nrt();
    quiet("wanting rings for what comes next, not for nothing");
    assert!(rt.rt_push_frame(LinkId(0), 3, &frame));
    rt.rt_wake_nrt();
    assert!(bell.wait(std::time::Duration::from_secs(5)));
    while nrt.nrt_pop_frame().is_some() {}
    while nrt.nrt_pop_event().is_some() {}
    // not wanted: rung once the frames fill half their ring, before any is dropped
    nrt.nrt_set_frames_wanted(false);
    let record = RX_RECORD_HEADER + frame.len();
    let half = rt.frames_out.buffer().capacity() / 2 / record;
    for i in 0..half {
        assert!(rt.rt_push_frame(LinkId(0), i as u64, &frame));
        rt.rt_wake_nrt();
        quiet("under half the ring");
    }
    assert!(rt.rt_push_frame(LinkId(0), 99, &frame));
    rt.rt_wake_nrt();
    assert!(bell.wait(std::time::Duration::from_secs(5)), "half full");
    assert_eq!(nrt.nrt_drain_frames(|_| {}), half + 1, "none lost");
    // the same for proximity readings in the event ring
    for _ in 0..8 {
        assert!(rt.rt_push_event(RtEvent::Proximity(proximity)));
    }
    rt.rt_wake_nrt();
    quiet("half the event ring, not more");
    assert!(rt.rt_push_event(RtEvent::Proximity(proximity)));
    rt.rt_wake_nrt();
    assert!(
        bell.wait(std::time::Duration::from_secs(5)),
        "events half full"
    );
}

fn handoff_proximity() -> crate::ProximitySample {
    crate::ProximitySample {
        robot: RobotId(0),
        node: crate::NodeId(1),
        link: LinkId(0),
        t_ns: 5,
        values: [1; 7],
    }
}

#[test]
fn a_controller_output_rings_at_once_but_odometry_does_not() {
    let (mut rt, mut nrt) = channels(&ChannelConfig::default());
    let bell = nrt.nrt_doorbell().clone();
    nrt.nrt_set_frames_wanted(false);
    let _odom = nrt.nrt_take_odometry_out().unwrap();
    assert!(rt.rt_publish_joint_state(crate::JointStateSample::default()));
    rt.rt_wake_nrt();
    assert!(
        !bell.wait(std::time::Duration::from_millis(1)),
        "the publisher threads' samples wake their thread, not the NRT loop"
    );
    let (mut out, mut nrt_out) = crate::publisher::<u8>(4);
    assert!(out.rt_publish(7));
    rt.rt_wake_nrt();
    assert!(bell.wait(std::time::Duration::from_secs(5)), "an RT output");
    assert_eq!(nrt_out.nrt_pop(), Some(7));
    rt.rt_wake_nrt();
    assert!(!bell.wait(std::time::Duration::from_millis(1)), "once");
}
