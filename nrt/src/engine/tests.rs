//! The engine against a hand-driven RT side of the rings.
use super::*;
use crate::testutil::{description_frames, small_target};
use msgs::rtmsg::{channels, ChannelConfig, RtEnds};
use msgs::wire::{kind, Message, Words, MAX_FRAME};
use std::io::{Read, Write};
use std::net::TcpStream;

fn engine(port: u16) -> (Engine, RtEnds) {
    let (rt, nrt) = channels(&ChannelConfig::default());
    let bridge = BridgeParams {
        port,
        ..Default::default()
    };
    let e = Engine::new(
        EngineConfig {
            bridge,
            driver: DriverParams::default(),
        },
        nrt,
    )
    .unwrap();
    (e, rt)
}

/// Frames the engine queued for the links: (target, type).
fn written(rt: &mut RtEnds) -> Vec<(LinkTarget, u16, Vec<u8>)> {
    let mut out = Vec::new();
    let mut buf = [0u8; MAX_FRAME];
    while let Some(r) = rt.try_pop_outgoing(&mut buf) {
        let (to, n) = r.unwrap();
        let (f, _) = Frame::parse(&buf[..n]).unwrap();
        out.push((to, f.kind, buf[..n].to_vec()));
    }
    out
}

fn up(e: &mut Engine, rt: &mut RtEnds) {
    assert!(rt.try_push_event(RtEvent::LinkUp {
        link: 0,
        target: 0,
        kind: LinkKind::Pipe
    }));
    e.poll(Instant::now());
}

#[test]
fn discovery_runs_through_the_rings() {
    let (mut e, mut rt) = engine(0);
    up(&mut e, &mut rt);
    assert!(e.connected());
    let w = written(&mut rt);
    assert_eq!(w[0].0, LinkTarget::One(0));
    assert_eq!(w[0].1, kind::LIST_NODES);
    rt.try_forward_frame(
        0,
        1,
        &Message::NodePresent { version: 9 }.to_frame(3).unwrap(),
    );
    e.poll(Instant::now());
    assert_eq!(written(&mut rt)[0].1, kind::GET_NODE_DESCRIPTION);
    for f in description_frames(&small_target(9), 3) {
        assert!(rt.try_forward_frame(0, 2, &f));
    }
    e.poll(Instant::now());
    let events: Vec<EngineEvent> = std::iter::from_fn(|| e.next_event()).collect();
    assert!(events.contains(&EngineEvent::Network(NetworkEvent::NodeAccepted { id: 3 })));
    assert!(events
        .iter()
        .any(|ev| matches!(ev, EngineEvent::LinkUp { link: 0, .. })));
    assert!(e.network().node(3).unwrap().is_bridged());
}

#[test]
fn link_down_marks_nodes_lost() {
    let (mut e, mut rt) = engine(0);
    up(&mut e, &mut rt);
    rt.try_forward_frame(
        0,
        1,
        &Message::NodePresent { version: 9 }.to_frame(3).unwrap(),
    );
    for f in description_frames(&small_target(9), 3) {
        rt.try_forward_frame(0, 2, &f);
    }
    e.poll(Instant::now());
    rt.try_push_event(RtEvent::LinkDown {
        link: 0,
        target: 0,
        reason: msgs::rtmsg::LinkDownReason::Eof,
    });
    e.poll(Instant::now());
    assert!(!e.connected());
    assert!(!e.network().node(3).unwrap().connected);
}

#[test]
fn switch_shares_the_link() {
    // port 0 disables the switch: take a free port
    let free = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let (mut e, mut rt) = engine(free);
    up(&mut e, &mut rt);
    written(&mut rt);
    let mut client = TcpStream::connect(("127.0.0.1", free)).unwrap();
    client
        .set_read_timeout(Some(std::time::Duration::from_millis(20)))
        .unwrap();
    let deadline = Instant::now() + std::time::Duration::from_secs(5);
    while e.switch().unwrap().stats().connected == 0 {
        assert!(Instant::now() < deadline);
        e.poll(Instant::now());
    }
    // robot → client
    let ev = Message::UserEvent {
        id: 4,
        args: Words::from_slice(&[9]),
    }
    .to_frame(3)
    .unwrap();
    rt.try_forward_frame(0, 5, &ev);
    e.poll(Instant::now());
    let mut got = Vec::new();
    let mut buf = [0u8; 256];
    while got.len() < ev.len() {
        assert!(Instant::now() < deadline, "client got {got:?}");
        if let Ok(n) = client.read(&mut buf) {
            got.extend_from_slice(&buf[..n]);
        }
        e.poll(Instant::now());
    }
    assert!(got.windows(ev.len()).any(|w| w == ev));
    // client → robot link
    let cmd = Message::GetVariables {
        dest: 3,
        start: 0,
        length: 1,
    }
    .to_frame(0)
    .unwrap();
    client.write_all(&cmd).unwrap();
    loop {
        assert!(Instant::now() < deadline);
        e.poll(Instant::now());
        let w = written(&mut rt);
        if w.iter()
            .any(|(to, _, f)| *to == LinkTarget::All && *f == cmd)
        {
            break;
        }
    }
}

#[test]
fn script_events_are_checked_and_prefixed() {
    let (mut e, mut rt) = engine(0);
    up(&mut e, &mut rt);
    rt.try_forward_frame(
        0,
        1,
        &Message::NodePresent { version: 9 }.to_frame(3).unwrap(),
    );
    for f in description_frames(&small_target(9), 3) {
        rt.try_forward_frame(0, 2, &f);
    }
    e.poll(Instant::now());
    written(&mut rt);
    assert_eq!(
        e.emit_script_event(3, "ping", &[1]),
        Err(EngineError::UnknownEvent {
            node: 3,
            name: "ping".into()
        })
    );
    let script = LoadedScript {
        events: vec![("ping".into(), 2), ("pong".into(), 0)],
        bytecode: vec![1],
        ..Default::default()
    };
    e.network_mut().load_script(3, script).unwrap();
    e.poll(Instant::now());
    assert_eq!(
        written(&mut rt).iter().map(|w| w.1).collect::<Vec<_>>(),
        vec![kind::SET_BYTECODE, kind::RUN]
    );
    assert_eq!(
        e.emit_script_event(3, "ping", &[1]),
        Err(EngineError::EventSize {
            name: "ping".into(),
            expected: 2,
            got: 1
        })
    );
    e.emit_script_event(3, "ping", &[1, 2]).unwrap();
    let w = written(&mut rt);
    assert_eq!(w.len(), 1);
    assert_eq!((w[0].0, w[0].1), (LinkTarget::All, 0));
    assert_eq!(&w[0].2[6..], &[1, 0, 2, 0]);
    assert_eq!(e.set_cmd_vel(3, 0.1, 0.0), Err(EngineError::NotARobot(3)));
}

#[test]
fn rt_events_are_reported() {
    let (mut e, mut rt) = engine(0);
    rt.try_push_event(RtEvent::Exiting {
        reason: msgs::rtmsg::ExitReason::Signal,
    });
    e.poll(Instant::now());
    assert!(e.rt_exited());
    assert_eq!(
        e.next_event(),
        Some(EngineEvent::RtExited(msgs::rtmsg::ExitReason::Signal))
    );
}

#[test]
fn shutdown_asks_rt_to_stop() {
    let (mut e, mut rt) = engine(0);
    e.shutdown();
    assert_eq!(rt.try_pop_command(), Some(RtCommand::Shutdown));
}
