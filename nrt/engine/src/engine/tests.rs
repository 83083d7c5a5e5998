//! The engine against a hand-driven RT side of the rings.
use super::*;
use crate::network::{LoadedScript, NetworkEvent};
use crate::testutil::{description_frames, small_target};
use handoff::{channels, ChannelConfig, LinkKind, NodeId, RtEnds, RtEvent};
use msgs::wire::{kind, Frame, Message, Words, MAX_FRAME};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

pub(super) fn engine(port: u16) -> (Engine, RtEnds) {
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
pub(super) fn written(rt: &mut RtEnds) -> Vec<(LinkTarget, u16, Vec<u8>)> {
    let mut out = Vec::new();
    let mut buf = [0u8; MAX_FRAME];
    while let Some(r) = rt.rt_pop_frame(&mut buf) {
        let (to, n) = r.unwrap();
        let (f, _) = Frame::parse(&buf[..n]).unwrap();
        out.push((to, f.kind, buf[..n].to_vec()));
    }
    out
}

/// Node 3 announces itself on link 0 and sends its description (a small Thymio-like target); the engine polls.
pub(super) fn described_node(e: &mut Engine, rt: &mut RtEnds) {
    rt.rt_push_frame(
        LinkId(0),
        1,
        &Message::NodePresent { version: 9 }.to_frame(3).unwrap(),
    );
    for f in description_frames(&small_target(9), 3) {
        rt.rt_push_frame(LinkId(0), 2, &f);
    }
    e.poll(Instant::now());
}

pub(super) fn up(e: &mut Engine, rt: &mut RtEnds) {
    assert!(rt.rt_push_event(RtEvent::LinkUp {
        link: LinkId(0),
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
    assert_eq!(w[0].0, LinkTarget::One(LinkId(0)));
    assert_eq!(w[0].1, kind::LIST_NODES);
    rt.rt_push_frame(
        LinkId(0),
        1,
        &Message::NodePresent { version: 9 }.to_frame(3).unwrap(),
    );
    e.poll(Instant::now());
    assert_eq!(written(&mut rt)[0].1, kind::GET_NODE_DESCRIPTION);
    for f in description_frames(&small_target(9), 3) {
        assert!(rt.rt_push_frame(LinkId(0), 2, &f));
    }
    e.poll(Instant::now());
    let events: Vec<EngineEvent> = std::iter::from_fn(|| e.next_event()).collect();
    assert!(
        events.contains(&EngineEvent::Network(NetworkEvent::NodeAccepted {
            id: NodeId(3)
        }))
    );
    assert!(events.iter().any(|ev| matches!(
        ev,
        EngineEvent::LinkUp {
            link: LinkId(0),
            ..
        }
    )));
    assert!(e.network().node(NodeId(3)).unwrap().is_bridged());
}

#[test]
fn link_down_marks_nodes_lost() {
    let (mut e, mut rt) = engine(0);
    up(&mut e, &mut rt);
    described_node(&mut e, &mut rt);
    link_down(&mut rt);
    e.poll(Instant::now());
    assert!(!e.connected());
    assert!(!e.network().node(NodeId(3)).unwrap().connected);
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
    rt.rt_push_frame(LinkId(0), 5, &ev);
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
        // to each robot link, within its budget
        if w.iter()
            .any(|(to, _, f)| matches!(to, LinkTarget::One(_)) && *f == cmd)
        {
            break;
        }
    }
}

#[test]
fn script_events_are_checked_and_prefixed() {
    let (mut e, mut rt) = engine(0);
    up(&mut e, &mut rt);
    described_node(&mut e, &mut rt);
    written(&mut rt);
    assert_eq!(
        e.emit_script_event(NodeId(3), "ping", &[1]),
        Err(EngineError::UnknownEvent {
            node: NodeId(3),
            name: "ping".into()
        })
    );
    let script = LoadedScript {
        events: vec![("ping".into(), 2), ("pong".into(), 0)],
        bytecode: vec![1],
        ..Default::default()
    };
    e.network_mut().load_script(NodeId(3), script).unwrap();
    e.poll(Instant::now());
    assert_eq!(
        written(&mut rt).iter().map(|w| w.1).collect::<Vec<_>>(),
        vec![kind::SET_BYTECODE, kind::RUN]
    );
    assert_eq!(
        e.emit_script_event(NodeId(3), "ping", &[1]),
        Err(EngineError::EventSize {
            name: "ping".into(),
            expected: 2,
            got: 1
        })
    );
    // another link is up: the event goes to node 3's link only (it was sent to every link)
    assert!(rt.rt_push_event(RtEvent::LinkUp {
        link: LinkId(1),
        target: 1,
        kind: LinkKind::Pipe
    }));
    e.poll(Instant::now());
    written(&mut rt);
    e.emit_script_event(NodeId(3), "ping", &[1, 2]).unwrap();
    let w = written(&mut rt);
    assert_eq!(w.len(), 1);
    assert_eq!((w[0].0, w[0].1), (LinkTarget::One(LinkId(0)), 0));
    assert_eq!(&w[0].2[6..], &[1, 0, 2, 0]);
    assert_eq!(
        e.set_cmd_vel(NodeId(3), 0.1, 0.0),
        Err(EngineError::NotARobot(NodeId(3)))
    );
}

#[test]
fn rt_events_are_reported() {
    let (mut e, mut rt) = engine(0);
    rt.rt_push_event(RtEvent::Exiting {
        reason: handoff::ExitReason::Signal,
    });
    e.poll(Instant::now());
    assert!(e.rt_exited());
    assert_eq!(
        e.next_event(),
        Some(EngineEvent::RtExited(handoff::ExitReason::Signal))
    );
}

#[test]
fn shutdown_asks_rt_to_stop() {
    let (mut e, mut rt) = engine(0);
    e.shutdown();
    assert_eq!(rt.rt_pop_command(), Some(RtCommand::Shutdown));
}

/// Node 3 discovered on link 0 and running a driver script, driven as an RT robot.
pub(super) fn driven_robot(e: &mut Engine, rt: &mut RtEnds) -> RobotId {
    up(e, rt);
    described_node(e, rt);
    let script = LoadedScript {
        events: vec![("odometry".into(), 3), ("set_speed".into(), 2)],
        bytecode: vec![1],
        ..Default::default()
    };
    e.network_mut()
        .load_script(NodeId(3), script.clone())
        .unwrap();
    e.configure_robot(NodeId(3), &script).unwrap();
    let robot = e.robots().of_node(NodeId(3)).expect("a robot slot").robot;
    assert!(matches!(
        rt.rt_pop_command(),
        Some(RtCommand::ConfigureRobot { robot: r, .. }) if r == robot
    ));
    std::iter::from_fn(|| e.next_event()).for_each(drop);
    robot
}

#[test]
fn the_ground_event_is_resolved_for_the_rt_controllers() {
    let (mut e, mut rt) = engine(0);
    driven_robot(&mut e, &mut rt);
    let script = LoadedScript {
        events: ["odometry", "set_speed", "proximity", "ground"]
            .map(|n| (n.into(), 2))
            .to_vec(),
        bytecode: vec![1],
        ..Default::default()
    };
    e.configure_robot(NodeId(3), &script).unwrap();
    let config = std::iter::from_fn(|| rt.rt_pop_command()).find_map(|c| match c {
        RtCommand::ConfigureRobot { config, .. } => Some(config),
        _ => None,
    });
    let config = config.expect("configured again");
    assert_eq!(
        (config.proximity_event, config.ground_event),
        (Some(2), Some(3))
    );
}

#[test]
fn rt_decoded_proximity_reaches_nrt_typed_and_is_marked_rt_owned() {
    let (mut e, mut rt) = engine(0);
    let robot = driven_robot(&mut e, &mut rt);
    let slot = e.robots().of_node(NodeId(3)).unwrap();
    // the script of driven_robot has odometry (id 0) but no proximity event
    assert!(slot.decoded_by_rt(0) && !slot.decoded_by_rt(1));
    let sample = handoff::ProximitySample {
        robot,
        node: NodeId(3),
        link: LinkId(0),
        t_ns: 9,
        values: [7; msgs::thymio::PROXIMITY_COUNT],
    };
    assert!(rt.rt_push_event(RtEvent::Proximity(sample)));
    e.poll(Instant::now());
    assert!(std::iter::from_fn(|| e.next_event()).any(
        |ev| matches!(ev, EngineEvent::Proximity { node: NodeId(3), sample: s } if s == sample)
    ));
}

/// Link 0 ends (EOF).
fn link_down(rt: &mut RtEnds) {
    assert!(rt.rt_push_event(RtEvent::LinkDown {
        link: LinkId(0),
        target: 0,
        reason: handoff::LinkDownReason::Eof,
    }));
}

fn events(e: &mut Engine) -> Vec<EngineEvent> {
    std::iter::from_fn(|| e.next_event()).collect()
}

#[test]
fn a_robot_lost_too_long_is_removed_and_added_back_when_its_node_returns() {
    let (mut e, mut rt) = engine(0);
    let robot = driven_robot(&mut e, &mut rt);
    let t0 = Instant::now();
    link_down(&mut rt);
    e.poll(t0);
    // a short loss keeps the robot
    e.poll(t0 + Duration::from_secs(9));
    assert!(e.robots().of_node(NodeId(3)).is_some());
    assert!(!events(&mut e)
        .iter()
        .any(|ev| matches!(ev, EngineEvent::RobotRemoved { .. })));
    e.poll(t0 + Duration::from_secs(11));
    assert!(e.robots().of_node(NodeId(3)).is_none());
    assert!(events(&mut e).contains(&EngineEvent::RobotRemoved {
        node: NodeId(3),
        robot
    }));
    assert_eq!(rt.rt_pop_command(), Some(RtCommand::RemoveRobot { robot }));
    assert_eq!(
        e.set_cmd_vel(NodeId(3), 0.1, 0.0),
        Err(EngineError::NotARobot(NodeId(3)))
    );
    // the node is heard again: driven again, on its (new) link
    assert!(rt.rt_push_event(RtEvent::LinkUp {
        link: LinkId(1),
        target: 0,
        kind: LinkKind::Pipe
    }));
    e.poll(Instant::now());
    rt.rt_push_frame(
        LinkId(1),
        1,
        &Message::NodePresent { version: 9 }.to_frame(3).unwrap(),
    );
    e.poll(Instant::now());
    let ev = events(&mut e);
    assert!(ev.contains(&EngineEvent::Network(NetworkEvent::NodeBack {
        id: NodeId(3)
    })));
    assert!(
        ev.iter().any(|ev| matches!(
            ev,
            EngineEvent::RobotReady {
                node: NodeId(3),
                ..
            }
        )),
        "{ev:?}"
    );
    let again = std::iter::from_fn(|| rt.rt_pop_command()).find_map(|c| match c {
        RtCommand::ConfigureRobot { config, .. } => Some(config),
        _ => None,
    });
    assert_eq!(again.expect("robot configured again").link, Some(LinkId(1)));
}

#[test]
fn a_robot_back_before_the_timeout_is_kept() {
    let (mut e, mut rt) = engine(0);
    let robot = driven_robot(&mut e, &mut rt);
    let t0 = Instant::now();
    link_down(&mut rt);
    e.poll(t0);
    up(&mut e, &mut rt);
    rt.rt_push_frame(
        LinkId(0),
        1,
        &Message::NodePresent { version: 9 }.to_frame(3).unwrap(),
    );
    e.poll(t0 + Duration::from_secs(1));
    e.poll(t0 + Duration::from_secs(60));
    assert_eq!(e.robots().of_node(NodeId(3)).map(|s| s.robot), Some(robot));
    // back on the same link: the RT side keeps its configuration (and its odometry)
    assert!(!std::iter::from_fn(|| rt.rt_pop_command())
        .any(|c| matches!(c, RtCommand::ConfigureRobot { .. })));
    assert!(!events(&mut e)
        .iter()
        .any(|ev| matches!(ev, EngineEvent::RobotRemoved { .. })));
}

#[test]
fn a_script_without_the_driver_events_removes_the_robot() {
    let (mut e, mut rt) = engine(0);
    let robot = driven_robot(&mut e, &mut rt);
    let plain = LoadedScript {
        events: vec![("ping".into(), 1)],
        bytecode: vec![1],
        ..Default::default()
    };
    e.configure_robot(NodeId(3), &plain).unwrap();
    assert!(e.robots().of_node(NodeId(3)).is_none());
    assert_eq!(rt.rt_pop_command(), Some(RtCommand::RemoveRobot { robot }));
    let ev = events(&mut e);
    // said once, naming the node and the missing events
    match &ev[..] {
        [EngineEvent::NotDriven {
            node: NodeId(3),
            message,
        }, EngineEvent::RobotRemoved {
            node: NodeId(3),
            robot: r,
        }] => {
            assert_eq!(*r, robot);
            assert!(
                message.contains("node 3 (thymio-II) is not driven")
                    && message.contains("lacks the driver events odometry, set_speed"),
                "{message}"
            );
        }
        other => panic!("{other:?}"),
    }
    e.configure_robot(NodeId(3), &plain).unwrap();
    assert!(!events(&mut e)
        .iter()
        .any(|ev| matches!(ev, EngineEvent::NotDriven { .. })));
}

#[test]
fn reflex_edges_become_events_and_state_of_their_node() {
    let (mut e, mut rt) = engine(0);
    let robot = driven_robot(&mut e, &mut rt);
    e.report_obstacle_stop(robot, true);
    assert!(e.obstacle_stop_holds(NodeId(3)));
    e.report_obstacle_stop(robot, false);
    assert!(!e.obstacle_stop_holds(NodeId(3)));
    // a free slot (robot gone meanwhile) reports nothing
    e.report_obstacle_stop(RobotId(robot.0 + 1), true);
    let reflex: Vec<_> = events(&mut e)
        .into_iter()
        .filter_map(|ev| match ev {
            EngineEvent::ObstacleStop { node, engaged } => Some((node, engaged)),
            _ => None,
        })
        .collect();
    assert_eq!(reflex, [(NodeId(3), true), (NodeId(3), false)]);
    // the cliff reflex likewise, on its own flag and event
    e.report_cliff_stop(robot, true);
    assert!(e.cliff_stop_holds(NodeId(3)) && !e.obstacle_stop_holds(NodeId(3)));
    e.report_cliff_stop(RobotId(robot.0 + 1), false);
    assert!(e.cliff_stop_holds(NodeId(3)), "another slot's edge");
    let cliff: Vec<_> = events(&mut e)
        .into_iter()
        .filter_map(|ev| match ev {
            EngineEvent::CliffStop { node, engaged } => Some((node, engaged)),
            _ => None,
        })
        .collect();
    assert_eq!(cliff, [(NodeId(3), true)]);
}

#[test]
fn the_switch_budget_is_sized_to_each_link() {
    let (mut e, _rt) = engine(0);
    e.params.targets = vec![
        "ser:device=/dev/ttyACM0;baud=9600".into(),
        "tcp:host=127.0.0.1;port=33333".into(),
        "ser:name=Thymio-II".into(),
    ];
    let now = Instant::now();
    // serial: 3/4 of baud / 10
    assert_eq!(e.link_budget(0, LinkKind::Serial, now).rate(), 720);
    assert_eq!(e.link_budget(2, LinkKind::Serial, now).rate(), 8_640);
    // TCP and the embedded simulator: switch.tcp_budget
    assert_eq!(e.link_budget(1, LinkKind::Tcp, now).rate(), 100_000);
    assert_eq!(e.link_budget(7, LinkKind::Pipe, now).rate(), 100_000);
}

/// A controller port driven from the test: what it should report, and the `obstacle_stop.enabled` it was last given.
#[derive(Clone, Default)]
struct TestPort(std::sync::Arc<std::sync::Mutex<(Vec<ControllerReport>, Option<bool>)>>);

impl ControllerPort for TestPort {
    fn pump(&mut self, driver: &DriverParams, report: &mut dyn FnMut(ControllerReport)) {
        let mut s = self.0.lock().unwrap();
        s.1 = Some(driver.obstacle_stop.enabled);
        s.0.drain(..).for_each(report);
    }
}

/// The engine owns the controllers' plumbing: `poll` alone (whatever loop calls it: the command line's, the ROS
/// bridge's) turns a controller's reports into events and hands it live parameter changes.
#[test]
fn poll_pumps_the_attached_controllers() {
    let (mut e, mut rt) = engine(0);
    let port = TestPort::default();
    e.attach_controller(Box::new(port.clone()));
    let robot = driven_robot(&mut e, &mut rt);
    assert_eq!(port.0.lock().unwrap().1, Some(false));
    port.0
        .lock()
        .unwrap()
        .0
        .push(ControllerReport::ObstacleStop {
            robot,
            engaged: true,
        });
    e.poll(Instant::now());
    assert!(e.obstacle_stop_holds(NodeId(3)));
    assert!(events(&mut e).contains(&EngineEvent::ObstacleStop {
        node: NodeId(3),
        engaged: true
    }));
    e.set_live_param("obstacle_stop.enabled", yaml_serde::Value::Bool(true))
        .unwrap();
    e.poll(Instant::now());
    assert_eq!(port.0.lock().unwrap().1, Some(true));
}

#[path = "vm_state_tests.rs"]
mod vm_state;

#[test]
fn a_script_loaded_while_a_node_settles_is_not_overwritten_by_the_default() {
    let (mut e, mut rt) = engine(0);
    let script = |origin: &str| {
        ScriptSource {
        origin: origin.into(),
        text: "<!DOCTYPE aesl-source>\n<network>\n<event size=\"1\" name=\"ping\"/>\n\
               <node nodeId=\"3\" name=\"thymio-II\">var n = 0\nonevent ping\nn++</node>\n</network>\n"
            .into(),
        constants: Default::default(),
    }
    };
    // the default script of nodes discovered from now on (no node yet)
    assert!(e
        .load_script(script("default.aesl"), &[], true)
        .unwrap()
        .is_empty());
    up(&mut e, &mut rt);
    described_node(&mut e, &mut rt);
    assert!(
        e.wants_frames(),
        "a node being accepted wants its frames at once"
    );
    assert_eq!(
        e.load_script(script("user.aesl"), &[NodeId(3)], false)
            .unwrap(),
        vec![NodeId(3)]
    );
    // past the settle: the default script would be loaded now
    e.poll(Instant::now() + Duration::from_secs(1));
    let script = e
        .network()
        .node(NodeId(3))
        .and_then(|n| n.script.clone())
        .unwrap();
    assert_eq!(script.origin, "user.aesl", "the user's script stays");
}
