use super::*;
use crate::link::{Link, PipeLink};
use crate::link_port::{link_port, NrtLinkPort};
use handoff::{
    channels, ChannelConfig, LinkDownReason, LinkId, LinkTarget, NodeId, NrtEnds, Pose2,
    RobotConfig, RobotId, RtCommand, Twist2,
};
use msgs::reassembler::Reassembler;
use msgs::wire::{encode_user_event, kind, Message, Words};

const NODE: u16 = 5;
const SET_SPEED: u16 = 1;
const ODOMETRY: u16 = 2;
const MS: u64 = 1_000_000;

fn test_config() -> RtConfig {
    RtConfig {
        max_links: 2,
        setup: RtSetup::unprivileged(),
        honor_signals: false,
        stats_period: Duration::from_secs(3600),
        ..Default::default()
    }
}

fn build() -> (RtLoop, NrtEnds, NrtLinkPort) {
    build_with(test_config())
}

fn build_with(cfg: RtConfig) -> (RtLoop, NrtEnds, NrtLinkPort) {
    let (rt_ends, nrt) = channels(&ChannelConfig {
        robots: 4,
        ..Default::default()
    });
    let (rt_port, port) = link_port();
    (
        RtLoop::new(cfg, rt_ends, rt_port, RtControllers::none(), Vec::new()),
        nrt,
        port,
    )
}

fn event(source: u16, id: u16, args: &[i16]) -> Vec<u8> {
    let mut out = [0u8; MAX_FRAME];
    let n = encode_user_event(source, id, args, &mut out).unwrap();
    out[..n].to_vec()
}

/// Frames the robot end of a pipe received.
fn received(peer: &mut PipeLink) -> Vec<(u16, Vec<i16>)> {
    let mut r = Reassembler::new();
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let n = peer.read(&mut buf).unwrap();
        if n == 0 {
            return out;
        }
        let mut input = &buf[..n];
        while let Some(f) = r.push(&mut input) {
            let f = f.unwrap();
            let args = match f.message().unwrap() {
                Message::UserEvent { args, .. } => args.to_vec(),
                Message::SetVariables { values, .. } => values.to_vec(),
                _ => Vec::new(),
            };
            out.push((f.kind, args));
        }
    }
}

fn events(nrt: &mut NrtEnds) -> Vec<RtEvent> {
    std::iter::from_fn(|| nrt.nrt_pop_event()).collect()
}

fn attach(rt: &mut RtLoop, port: &mut NrtLinkPort, nrt: &mut NrtEnds, target: u16) -> PipeLink {
    let (ours, peer) = PipeLink::pair(1 << 14);
    port.nrt_offer(target, Box::new(ours)).unwrap();
    rt.cycle(0);
    assert!(events(nrt)
        .iter()
        .any(|e| matches!(e, RtEvent::LinkUp { target: t, .. } if *t == target)));
    peer
}

/// Spawns a loop on `cfg` with a pipe link offered on target 0 and, if `robot`, robot 0 (node `NODE`) configured on
/// that link; returns the robot's end of the pipe and the loop's handle once the link is up.
fn spawn_on_pipe(
    rt_ends: RtEnds,
    nrt: &mut NrtEnds,
    cfg: RtConfig,
    robot: bool,
) -> (PipeLink, RtHandle) {
    let (rt_port, mut port) = link_port();
    let (ours, peer) = PipeLink::pair(1 << 16);
    port.nrt_offer(0, Box::new(ours)).unwrap();
    if robot {
        let mut config = RobotConfig::script(NodeId(NODE), ODOMETRY, SET_SPEED, false);
        config.link = Some(LinkId(0));
        nrt.nrt_push_command(RtCommand::ConfigureRobot {
            robot: RobotId(0),
            config,
        })
        .unwrap();
    }
    let handle = spawn(cfg, rt_ends, rt_port, RtControllers::none(), Vec::new()).unwrap();
    crate::testutil::until(Duration::from_secs(10), || {
        events(nrt)
            .iter()
            .any(|e| matches!(e, RtEvent::LinkUp { .. }))
    });
    (peer, handle)
}

fn configure(nrt: &mut NrtEnds, rt: &mut RtLoop, now: u64) {
    nrt.nrt_push_command(RtCommand::ConfigureRobot {
        robot: RobotId(0),
        config: RobotConfig::script(NodeId(NODE), ODOMETRY, SET_SPEED, false),
    })
    .unwrap();
    rt.cycle(now);
}

#[test]
fn frames_are_forwarded_and_odometry_integrated() {
    let (mut rt, mut nrt, mut port) = build();
    let mut out = nrt.nrt_take_odometry_out().unwrap();
    let mut peer = attach(&mut rt, &mut port, &mut nrt, 7);
    configure(&mut nrt, &mut rt, 0);
    let mut bytes = event(NODE, ODOMETRY, &[0, 0, 0]);
    bytes.extend(event(NODE, 9, &[1, 2, 3])); // another script event
    bytes.extend(event(NODE, ODOMETRY, &[293, 293, 10]));
    peer.write(&bytes).unwrap();
    rt.cycle(MS);
    let mut frames = Vec::new();
    nrt.nrt_drain_frames(|f| frames.push((f.link, f.bytes.to_vec(), f.t_ns)));
    assert_eq!(frames.len(), 3);
    assert!(frames.iter().all(|f| f.0 == LinkId(0) && f.2 > 0));
    assert_eq!(frames[1].1, event(NODE, 9, &[1, 2, 3]));
    // odometry travels on the odometry ring (the event ring has no odometry)
    let odo: Vec<_> = std::iter::from_fn(|| out.nrt_pop().map(|h| h.sample)).collect();
    assert_eq!(odo.len(), 1);
    // 293 unit·s · 0.001/2.93 m = 0.1 m in 0.1 s of robot time.
    assert!((odo[0].pose.x - 0.1).abs() < 1e-9 && (odo[0].twist.linear - 1.0).abs() < 1e-9);
    assert_eq!(
        (odo[0].robot, odo[0].link, odo[0].robot_ticks),
        (RobotId(0), LinkId(0), Some(10))
    );
}

#[test]
fn set_points_become_one_set_speed_frame_and_the_watchdog_stops() {
    let (mut rt, mut nrt, mut port) = build();
    let mut peer = attach(&mut rt, &mut port, &mut nrt, 0);
    configure(&mut nrt, &mut rt, 0);
    nrt.nrt_set_cmd_vel(
        RobotId(0),
        Twist2 {
            linear: 0.1,
            angular: 0.0,
        },
    )
    .unwrap();
    rt.cycle(10 * MS);
    assert_eq!(received(&mut peer), [(SET_SPEED, vec![293, 293])]);
    // Same set-point held: nothing more until the watchdog (0.5 s) expires.
    rt.cycle(400 * MS);
    assert!(received(&mut peer).is_empty());
    rt.cycle(511 * MS);
    assert_eq!(received(&mut peer), [(SET_SPEED, vec![0, 0])]);
    assert!(events(&mut nrt).contains(&RtEvent::WatchdogStop { robot: RobotId(0) }));
    rt.cycle(2000 * MS);
    assert!(received(&mut peer).is_empty());
    assert_eq!(rt.stats.watchdog_stops, 1);
    // A new set-point re-arms it.
    nrt.nrt_set_cmd_vel(
        RobotId(0),
        Twist2 {
            linear: 0.0,
            angular: 1.0,
        },
    )
    .unwrap();
    rt.cycle(2001 * MS);
    assert_eq!(received(&mut peer), [(SET_SPEED, vec![-137, 137])]);
}

#[test]
fn nrt_frames_reach_their_link_or_all_links() {
    let (mut rt, mut nrt, mut port) = build();
    let mut a = attach(&mut rt, &mut port, &mut nrt, 0);
    let mut b = attach(&mut rt, &mut port, &mut nrt, 1);
    let list_nodes = [2, 0, 0, 0, 0x11, 0xA0, 5, 0];
    nrt.nrt_push_frame(LinkTarget::All, &list_nodes).unwrap();
    nrt.nrt_push_frame(LinkTarget::One(LinkId(1)), &event(0, 3, &[42]))
        .unwrap();
    nrt.nrt_push_frame(LinkTarget::One(LinkId(9)), &event(0, 3, &[1]))
        .unwrap();
    rt.cycle(0);
    assert_eq!(received(&mut a), [(kind::LIST_NODES, vec![])]);
    assert_eq!(
        received(&mut b),
        [(kind::LIST_NODES, vec![]), (3, vec![42])]
    );
    assert_eq!(rt.stats.drops.invalid_from_nrt, 1);
}

#[test]
fn dead_links_go_back_and_robots_become_stale() {
    let (mut rt, mut nrt, mut port) = build();
    let mut peer = attach(&mut rt, &mut port, &mut nrt, 3);
    configure(&mut nrt, &mut rt, 0);
    peer.write(&event(NODE, ODOMETRY, &[0, 0, 0])).unwrap();
    rt.cycle(MS);
    drop(peer);
    rt.cycle(2 * MS);
    let ev = events(&mut nrt);
    assert!(ev.contains(&RtEvent::LinkDown {
        link: LinkId(0),
        target: 3,
        reason: LinkDownReason::Eof
    }));
    assert!(ev.contains(&RtEvent::RobotStale { robot: RobotId(0) }));
    let back = port.nrt_take_returned().unwrap();
    assert_eq!((back.target, back.reason), (3, LinkDownReason::Eof));
    assert_eq!(rt.slots.totals().connected, 0);
    // The slot is free again.
    let _peer2 = attach(&mut rt, &mut port, &mut nrt, 4);
}

#[test]
fn slots_are_bounded_and_links_can_be_closed() {
    let (mut rt, mut nrt, mut port) = build();
    let _a = attach(&mut rt, &mut port, &mut nrt, 0);
    let _b = attach(&mut rt, &mut port, &mut nrt, 1);
    let (extra, _peer) = PipeLink::pair(16);
    port.nrt_offer(2, Box::new(extra)).unwrap();
    rt.cycle(0);
    let back = port.nrt_take_returned().unwrap();
    assert_eq!((back.target, back.reason), (2, LinkDownReason::NoSlot));
    nrt.nrt_push_command(RtCommand::CloseLink { link: LinkId(1) })
        .unwrap();
    rt.cycle(0);
    let back = port.nrt_take_returned().unwrap();
    assert_eq!((back.target, back.reason), (1, LinkDownReason::Requested));
}

#[test]
fn remove_robot_stops_it_and_reset_moves_it() {
    let (mut rt, mut nrt, mut port) = build();
    let mut peer = attach(&mut rt, &mut port, &mut nrt, 0);
    configure(&mut nrt, &mut rt, 0);
    nrt.nrt_push_command(RtCommand::ResetOdometry {
        robot: RobotId(0),
        pose: Pose2 {
            x: 1.0,
            y: 2.0,
            theta: 0.0,
        },
    })
    .unwrap();
    rt.cycle(MS);
    peer.write(&event(NODE, ODOMETRY, &[0, 0, 0])).unwrap();
    peer.write(&event(NODE, ODOMETRY, &[10, 10, 5])).unwrap();
    rt.cycle(2 * MS);
    assert!(rt.robots[0].last_odometry().unwrap().pose.x > 1.0);
    nrt.nrt_push_command(RtCommand::RemoveRobot { robot: RobotId(0) })
        .unwrap();
    rt.cycle(3 * MS);
    assert_eq!(received(&mut peer), [(SET_SPEED, vec![0, 0])]);
    assert!(rt.robots[0].config().is_none());
}

#[test]
fn run_stops_on_request_and_sends_zero_speed_first() {
    let (rt_ends, mut nrt) = channels(&ChannelConfig {
        robots: 2,
        ..Default::default()
    });
    let (rt_port, mut port) = link_port();
    let (ours, mut peer) = PipeLink::pair(1 << 14);
    port.nrt_offer(0, Box::new(ours)).unwrap();
    nrt.nrt_push_command(RtCommand::ConfigureRobot {
        robot: RobotId(1),
        config: RobotConfig::script(NodeId(NODE), ODOMETRY, SET_SPEED, false),
    })
    .unwrap();
    nrt.nrt_set_cmd_vel(
        RobotId(1),
        Twist2 {
            linear: 0.05,
            angular: 0.0,
        },
    )
    .unwrap();
    let handle = spawn(
        test_config(),
        rt_ends,
        rt_port,
        RtControllers::none(),
        Vec::new(),
    )
    .unwrap();
    let mut got = Vec::new();
    crate::testutil::until(Duration::from_secs(10), || {
        got.extend(received(&mut peer));
        !got.is_empty()
    });
    // 0.05 m/s = 146.5 units, rounded half to even as ROS-Thymio (Python) does.
    assert_eq!(got, [(SET_SPEED, vec![146, 146])]);
    handle.stop();
    let exit = handle.join().unwrap();
    assert_eq!(exit.reason, ExitReason::Requested);
    assert_eq!(received(&mut peer), [(SET_SPEED, vec![0, 0])]);
    assert!(exit.stats.cycles > 0);
    assert_eq!(exit.stats.scheduler, handoff::SchedulerMode::Fallback);
    let ev = events(&mut nrt);
    assert!(matches!(ev.first(), Some(RtEvent::Started(_))));
    assert_eq!(
        ev.last(),
        Some(&RtEvent::Exiting {
            reason: ExitReason::Requested
        })
    );
    assert_eq!(
        port.nrt_take_returned().unwrap().reason,
        LinkDownReason::Shutdown
    );
}

#[test]
fn run_stops_when_nrt_goes_away_and_stops_the_robots() {
    let (rt_ends, nrt) = channels(&ChannelConfig::default());
    let (rt_port, mut port) = link_port();
    let (ours, mut peer) = PipeLink::pair(1 << 14);
    port.nrt_offer(0, Box::new(ours)).unwrap();
    let mut nrt = nrt;
    nrt.nrt_push_command(RtCommand::ConfigureRobot {
        robot: RobotId(0),
        config: RobotConfig::script(NodeId(NODE), ODOMETRY, SET_SPEED, true),
    })
    .unwrap();
    nrt.nrt_set_cmd_vel(
        RobotId(0),
        Twist2 {
            linear: -0.1,
            angular: 0.0,
        },
    )
    .unwrap();
    let handle = spawn(
        test_config(),
        rt_ends,
        rt_port,
        RtControllers::none(),
        Vec::new(),
    )
    .unwrap();
    let mut got = Vec::new();
    crate::testutil::until(Duration::from_secs(10), || {
        got.extend(received(&mut peer));
        !got.is_empty()
    });
    // Multi-robot scripts: the node id comes first.
    assert_eq!(got, [(SET_SPEED, vec![NODE as i16, -293, -293])]);
    drop(nrt);
    let exit = handle.join().unwrap();
    assert_eq!(exit.reason, ExitReason::NrtGone);
    assert_eq!(received(&mut peer), [(SET_SPEED, vec![NODE as i16, 0, 0])]);
}

#[test]
fn a_cycle_that_forwards_something_rings_the_nrt_doorbell_unless_told_not_to() {
    for wake in [true, false] {
        let (rt_ends, mut nrt) = channels(&ChannelConfig::default());
        let (rt_port, mut port) = link_port();
        let cfg = RtConfig {
            wake_nrt: wake,
            ..test_config()
        };
        let mut rt = RtLoop::new(cfg, rt_ends, rt_port, RtControllers::none(), Vec::new());
        let bell = nrt.nrt_doorbell().clone();
        rt.cycle(0);
        assert!(!bell.wait(Duration::from_millis(1)), "a quiet cycle rings");
        let mut peer = attach(&mut rt, &mut port, &mut nrt, 1);
        bell.wait(Duration::ZERO);
        peer.write(&event(NODE, 9, &[1])).unwrap();
        rt.cycle(MS);
        let timeout = if wake {
            Duration::from_secs(60)
        } else {
            Duration::from_millis(1)
        };
        assert_eq!(bell.wait(timeout), wake, "wake_nrt {wake}");
        assert_eq!(nrt.nrt_drain_frames(|_| ()), 1);
    }
}

mod budget;
mod close;
mod hold;
mod limits;
mod owner;
mod quiet;
mod scale;
mod stop;
mod wake;
