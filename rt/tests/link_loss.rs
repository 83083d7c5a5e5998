//! Link loss and reconnection through the whole RT side (connector + RT loop): a serial link
//! on a pseudo-terminal whose far end goes away, and a TCP peer that closes and comes back.

use handoff::{
    channels, ChannelConfig, LinkDownReason, LinkId, NodeId, NrtEnds, RobotConfig, RobotId,
    RtCommand, RtEvent,
};
use msgs::wire::{encode_user_event, MAX_FRAME};
use rt::link::SerialSpec;
use rt::link_port::link_port;
use rt::nrt_connector::{spawn_connector, ConnectSpec, ConnectorConfig};
use rt::report::Report;
use rt::rtloop::{spawn, RtConfig};
use rt::sched::RtSetup;
use std::io::Write;
use std::time::{Duration, Instant};

fn cfg() -> RtConfig {
    RtConfig {
        setup: RtSetup::unprivileged(),
        honor_signals: false,
        stats_period: Duration::from_millis(50),
        ..Default::default()
    }
}

fn fast() -> ConnectorConfig {
    ConnectorConfig {
        retry_interval: Duration::from_millis(100),
        serial_settle: Duration::from_millis(20),
        ..Default::default()
    }
}

fn odometry(l: i16, r: i16, ticks: i16) -> Vec<u8> {
    let mut out = [0u8; MAX_FRAME];
    let n = encode_user_event(1, 2, &[l, r, ticks], &mut out).unwrap();
    out[..n].to_vec()
}

/// Waits (bounded) for an event matching `pred`, keeping every event seen in `log`.
fn wait(nrt: &mut NrtEnds, log: &mut Vec<RtEvent>, pred: impl Fn(&RtEvent) -> bool) -> RtEvent {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        nrt.nrt_drain_frames(|_| {});
        while let Some(ev) = nrt.nrt_pop_event() {
            log.push(ev);
            if pred(&ev) {
                return ev;
            }
        }
        assert!(Instant::now() < deadline, "event not seen; got {log:?}");
        std::thread::sleep(Duration::from_millis(1));
    }
}

#[test]
fn serial_loss_marks_the_robot_stale_and_is_reported() {
    let pty = nix::pty::openpty(None, None).unwrap();
    let path = nix::unistd::ttyname(&pty.slave).unwrap();
    let (rt_ends, mut nrt) = channels(&ChannelConfig::default());
    let mut odometry_out = nrt.nrt_take_odometry_out().unwrap();
    let (rt_port, port) = link_port();
    let spec = ConnectSpec::Serial(SerialSpec::device(&path));
    let connector = spawn_connector(fast(), vec![spec], vec![], port).unwrap();
    let handle = spawn(
        cfg(),
        rt_ends,
        rt_port,
        rt::controllers::RtControllers::none(),
        Vec::new(),
    )
    .unwrap();
    let mut log = Vec::new();
    wait(&mut nrt, &mut log, |e| {
        matches!(
            e,
            RtEvent::LinkUp {
                link: LinkId(0),
                target: 0,
                ..
            }
        )
    });
    drop(pty.slave);
    nrt.nrt_push_command(RtCommand::ConfigureRobot {
        robot: RobotId(0),
        config: RobotConfig::script(NodeId(1), 2, 1, false),
    })
    .unwrap();
    // The "robot" writes odometry on the pty master until a sample comes out (on the odometry ring).
    let mut k = 0i16;
    let deadline = Instant::now() + Duration::from_secs(20);
    while odometry_out.nrt_pop().is_none() {
        assert!(Instant::now() < deadline);
        k += 1;
        nix::unistd::write(&pty.master, &odometry(10 * k, 10 * k, 5 * k)).unwrap();
        std::thread::sleep(Duration::from_millis(10)); // the robot's 20 Hz-ish pace
        nrt.nrt_drain_frames(|_| {});
        log.extend(std::iter::from_fn(|| nrt.nrt_pop_event()));
    }
    // Unplug.
    drop(pty.master);
    let down = wait(&mut nrt, &mut log, |e| {
        matches!(e, RtEvent::LinkDown { .. })
    });
    // A pty whose master closed reads as a hang-up (0 bytes) or EIO, as an unplugged USB port.
    assert!(
        matches!(
            down,
            RtEvent::LinkDown {
                link: LinkId(0),
                target: 0,
                reason: LinkDownReason::Eof | LinkDownReason::Io { errno: 5, .. }
            }
        ),
        "{down:?}"
    );
    wait(&mut nrt, &mut log, |e| {
        *e == RtEvent::RobotStale { robot: RobotId(0) }
    });
    // The device is gone: the connector keeps trying and failing.
    let t = Instant::now();
    while connector.stats().failures < 2 {
        assert!(t.elapsed() < Duration::from_secs(20));
        std::thread::sleep(Duration::from_millis(10));
    }
    handle.stop();
    let exit = handle.join().unwrap();
    let stats = connector.join();
    assert_eq!(
        (exit.stats.links.attached, exit.stats.links.detached),
        (1, 1)
    );
    assert_eq!(exit.stats.links.connected, 0);
    let r = Report::new(&exit.stats, exit.odometry.first(), Some(stats));
    assert!(!r.link.connected);
    assert_eq!(r.link.reconnects, 0);
    assert!(r.odom.samples >= 1);
}

#[test]
fn tcp_peer_that_comes_back_is_reconnected() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port_no = listener.local_addr().unwrap().port();
    let (rt_ends, mut nrt) = channels(&ChannelConfig::default());
    let (rt_port, port) = link_port();
    let spec = ConnectSpec::Tcp {
        host: "127.0.0.1".into(),
        port: port_no,
    };
    let connector = spawn_connector(fast(), vec![spec], vec![], port).unwrap();
    let handle = spawn(
        cfg(),
        rt_ends,
        rt_port,
        rt::controllers::RtControllers::none(),
        Vec::new(),
    )
    .unwrap();
    let mut log = Vec::new();
    let (mut peer, _) = listener.accept().unwrap();
    wait(&mut nrt, &mut log, |e| matches!(e, RtEvent::LinkUp { .. }));
    // Line noise then a frame: the frame arrives, the noise is counted.
    peer.write_all(&[0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01])
        .unwrap();
    peer.write_all(&odometry(1, 2, 3)).unwrap();
    peer.write_all(&odometry(4, 5, 6)).unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut frames = 0;
    while frames < 1 {
        assert!(Instant::now() < deadline);
        frames += nrt.nrt_drain_frames(|f| assert_eq!(f.bytes[4..6], [2, 0]));
        std::thread::sleep(Duration::from_millis(1));
    }
    drop(peer);
    wait(&mut nrt, &mut log, |e| {
        matches!(
            e,
            RtEvent::LinkDown {
                reason: LinkDownReason::Eof,
                ..
            }
        )
    });
    let (_peer2, _) = listener.accept().unwrap();
    wait(&mut nrt, &mut log, |e| matches!(e, RtEvent::LinkUp { .. }));
    handle.stop();
    let exit = handle.join().unwrap();
    let stats = connector.join();
    let r = Report::new(&exit.stats, None, Some(stats));
    assert_eq!(r.link.reconnects, 1);
    assert!(r.link.connected);
    assert!(r.link.frames_rejected >= 1 && r.link.bytes_discarded >= 1);
}
