use super::*;
use crate::params::BridgeParams;
use crate::testutil::{description_frames, small_target};
use handoff::{LinkId, NodeId};
use msgs::description::TargetDescription;
use msgs::wire::{kind, Frame, Message, Words};
use std::time::{Duration, Instant};

struct Bench {
    m: NetworkManager,
    now: Instant,
}

impl Bench {
    fn new(params: &BridgeParams) -> Self {
        let mut b = Bench {
            m: NetworkManager::from_params(params),
            now: Instant::now(),
        };
        b.m.on_link_up(Via::Link(LinkId(0)), b.now);
        b
    }
    fn feed(&mut self, frame: &[u8]) {
        let (f, _) = Frame::parse(frame).unwrap();
        self.m.on_frame(Via::Link(LinkId(0)), &f, 42, self.now);
    }
    fn advance(&mut self, ms: u64) {
        self.now += Duration::from_millis(ms);
        self.m.tick(self.now);
    }
    fn sent(&mut self) -> Vec<(u16, Vec<u8>)> {
        std::iter::from_fn(|| self.m.pop_outgoing())
            .map(|o| {
                let (f, _) = Frame::parse(&o.frame).unwrap();
                (f.kind, f.payload.to_vec())
            })
            .collect()
    }
    fn events(&mut self) -> Vec<NetworkEvent> {
        std::iter::from_fn(|| self.m.poll_event()).collect()
    }
    fn discover(&mut self, id: u16, d: &TargetDescription) {
        self.feed(
            &Message::NodePresent {
                version: d.protocol_version,
            }
            .to_frame(id)
            .unwrap(),
        );
        for f in description_frames(d, id) {
            self.feed(&f);
        }
    }
}

#[test]
fn discovery_describes_and_accepts() {
    let mut b = Bench::new(&BridgeParams::default());
    assert_eq!(b.sent(), vec![(kind::LIST_NODES, vec![9, 0])]);
    b.feed(&Message::NodePresent { version: 9 }.to_frame(7).unwrap());
    assert_eq!(
        b.sent(),
        vec![(kind::GET_NODE_DESCRIPTION, vec![7, 0, 9, 0])]
    );
    let d = small_target(9);
    for f in description_frames(&d, 7) {
        b.feed(&f);
    }
    assert_eq!(
        b.events(),
        vec![
            NetworkEvent::NodeDiscovered {
                id: NodeId(7),
                protocol_version: 9
            },
            NetworkEvent::NodeAccepted { id: NodeId(7) }
        ]
    );
    let node = b.m.node(NodeId(7)).unwrap();
    assert_eq!(node.description.as_ref(), Some(&d));
    assert_eq!(node.variable("prox.horizontal").unwrap().address, 34);
    assert!(node.is_bridged());
    // periodic LIST_NODES, no GET_DESCRIPTION since a node is known
    b.advance(1000);
    assert_eq!(b.sent(), vec![(kind::LIST_NODES, vec![9, 0])]);
}

#[test]
fn lost_after_silence_and_back() {
    let mut b = Bench::new(&BridgeParams::default());
    b.discover(1, &small_target(9));
    b.events();
    b.advance(2900);
    assert!(b.events().is_empty());
    b.advance(200);
    assert_eq!(b.events(), vec![NetworkEvent::NodeLost { id: NodeId(1) }]);
    assert!(!b.m.node(NodeId(1)).unwrap().connected);
    // no node connected: legacy GET_DESCRIPTION broadcast accompanies LIST_NODES
    b.advance(1000);
    let kinds: Vec<u16> = b.sent().into_iter().map(|(k, _)| k).collect();
    assert!(kinds.contains(&kind::GET_DESCRIPTION));
    b.feed(&Message::NodePresent { version: 9 }.to_frame(1).unwrap());
    assert_eq!(b.events(), vec![NetworkEvent::NodeBack { id: NodeId(1) }]);
    // a described node is not described again
    assert!(!b
        .sent()
        .iter()
        .any(|(k, _)| *k == kind::GET_NODE_DESCRIPTION));
}

#[test]
fn link_down_disconnects_its_nodes() {
    let mut b = Bench::new(&BridgeParams::default());
    b.discover(1, &small_target(9));
    b.events();
    b.m.on_link_down(Via::Link(LinkId(0)), b.now);
    assert_eq!(b.events(), vec![NetworkEvent::NodeLost { id: NodeId(1) }]);
    assert!(!b.m.has_links());
    assert_eq!(
        b.m.get_variable(NodeId(1), "_id", b.now),
        Err(NetError::Disconnected(NodeId(1)))
    );
}

#[test]
fn chunked_variables_reply_is_reassembled() {
    let mut b = Bench::new(&BridgeParams::default());
    b.discover(1, &small_target(9));
    b.sent();
    b.events();
    let req = b.m.get_variable(NodeId(1), "big", b.now).unwrap();
    let big_addr =
        b.m.node(NodeId(1))
            .unwrap()
            .variable("big")
            .unwrap()
            .address;
    assert_eq!(
        b.sent(),
        vec![(
            kind::GET_VARIABLES,
            [1u16, big_addr, 100]
                .iter()
                .flat_map(|w| w.to_le_bytes())
                .collect()
        )]
    );
    let values: Vec<i16> = (0..100).map(|i| i * 3 - 50).collect();
    for (i, chunk) in values.chunks(47).enumerate() {
        assert!(b.events().is_empty());
        let start = big_addr + (i * 47) as u16;
        b.feed(
            &Message::Variables {
                start,
                values: Words::from_slice(chunk),
            }
            .to_frame(1)
            .unwrap(),
        );
    }
    assert_eq!(
        b.events(),
        vec![NetworkEvent::Variables {
            request: req,
            result: Ok(values)
        }]
    );
}

#[test]
fn bad_requests_are_errors() {
    let mut b = Bench::new(&BridgeParams::default());
    assert_eq!(
        b.m.get_variable(NodeId(3), "x", b.now),
        Err(NetError::UnknownNode(NodeId(3)))
    );
    b.discover(1, &small_target(9));
    assert_eq!(
        b.m.get_variable(NodeId(1), "nope", b.now),
        Err(NetError::UnknownVariable {
            node: NodeId(1),
            name: "nope".into()
        })
    );
    assert_eq!(
        b.m.set_variable(NodeId(1), "prox.horizontal", &[1, 2]),
        Err(NetError::WrongSize {
            name: "prox.horizontal".into(),
            expected: 7,
            got: 2
        })
    );
    assert!(matches!(
        b.m.get_variables(NodeId(1), 630, 20, b.now),
        Err(NetError::OutOfRange { .. })
    ));
    assert!(matches!(
        b.m.set_variables(NodeId(1), 639, &[1, 2]),
        Err(NetError::OutOfRange { .. })
    ));
    assert_eq!(b.m.emit(0x8000, &[]), Err(NetError::BadEventId(0x8000)));
    assert_eq!(b.m.emit(1, &[0; 259]), Err(NetError::TooLarge(259)));
    b.sent();
    b.m.set_variable(NodeId(1), "prox.horizontal", &[1, 2, 3, 4, 5, 6, 7])
        .unwrap();
    let sent = b.sent();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].0, kind::SET_VARIABLES);
}

#[test]
fn request_times_out_and_lost_node_fails_requests() {
    let mut b = Bench::new(&BridgeParams::default());
    b.discover(1, &small_target(9));
    b.events();
    let r1 = b.m.get_variable(NodeId(1), "_id", b.now).unwrap();
    b.advance(999);
    assert!(b.events().is_empty());
    b.advance(1);
    assert_eq!(
        b.events(),
        vec![NetworkEvent::Variables {
            request: r1,
            result: Err(NetError::Timeout {
                node: NodeId(1),
                ms: 1000
            })
        }]
    );
    let r2 = b.m.get_variable(NodeId(1), "_id", b.now).unwrap();
    b.m.on_link_down(Via::Link(LinkId(0)), b.now);
    let ev = b.events();
    assert!(ev.contains(&NetworkEvent::Variables {
        request: r2,
        result: Err(NetError::Lost(NodeId(1)))
    }));
}

#[test]
fn lost_items_are_fetched_again_by_fragments_on_protocol_8_and_up() {
    let mut b = Bench::new(&BridgeParams::default());
    let d = small_target(9);
    b.feed(&Message::NodePresent { version: 9 }.to_frame(1).unwrap());
    let frames = description_frames(&d, 1);
    // lose the 2nd variable (k = 1): the variables after it land in the wrong slots, so the
    // whole variable list (k = 0..5) is fetched again, one fragment at a time
    for (i, f) in frames.iter().enumerate() {
        if i != 2 {
            b.feed(f);
        }
    }
    b.sent();
    assert!(b.m.node(NodeId(1)).unwrap().description.is_none());
    b.advance(1000);
    let frag = |p: Vec<u8>| p[4] as usize;
    for k in 0..5 {
        let sent: Vec<_> = b
            .sent()
            .into_iter()
            .filter(|(k, _)| *k != kind::LIST_NODES)
            .collect();
        assert_eq!(sent.len(), 1, "{sent:?}");
        assert_eq!(sent[0].0, kind::GET_NODE_DESCRIPTION_FRAGMENT);
        assert_eq!(frag(sent[0].1.clone()), k);
        if k == 3 {
            // this reply is lost too: the same fragment is asked again after a while
            b.advance(250);
            assert_eq!(frag(b.sent()[0].1.clone()), k);
        }
        b.feed(&frames[1 + k]);
    }
    assert_eq!(b.m.node(NodeId(1)).unwrap().description.as_ref(), Some(&d));
    assert!(b
        .events()
        .contains(&NetworkEvent::NodeAccepted { id: NodeId(1) }));
}

#[test]
fn old_protocols_get_the_whole_description_again() {
    let mut b = Bench::new(&BridgeParams::default());
    let d = small_target(5);
    b.feed(&Message::NodePresent { version: 5 }.to_frame(1).unwrap());
    b.feed(&description_frames(&d, 1)[0]);
    b.sent();
    b.advance(1000);
    assert!(b
        .sent()
        .iter()
        .any(|(k, _)| *k == kind::GET_NODE_DESCRIPTION));
    for f in description_frames(&d, 1) {
        b.feed(&f);
    }
    assert!(b.m.node(NodeId(1)).unwrap().is_bridged());
}

#[test]
fn protocol_outside_range_is_ignored() {
    let params = BridgeParams {
        highest_acceptable_protocol_version: 8,
        ..Default::default()
    };
    let mut b = Bench::new(&params);
    b.discover(2, &small_target(9));
    assert!(b.events().contains(&NetworkEvent::NodeIgnored {
        id: NodeId(2),
        reason: IgnoreReason::Protocol(9)
    }));
}

#[test]
fn policy_rejection_is_reported() {
    let params: BridgeParams =
        yaml_serde::from_str("nodes: {t: {name: thymio-II, maximal_number: 1}}").unwrap();
    let mut b = Bench::new(&params);
    b.discover(1, &small_target(9));
    b.discover(2, &small_target(9));
    let ev = b.events();
    assert!(ev.contains(&NetworkEvent::NodeAccepted { id: NodeId(1) }));
    assert!(ev.contains(&NetworkEvent::NodeIgnored {
        id: NodeId(2),
        reason: IgnoreReason::Policy(crate::policy::Rejection::MaximalNumber)
    }));
}

#[test]
fn script_upload_is_chunked_then_run() {
    let mut b = Bench::new(&BridgeParams::default());
    b.discover(1, &small_target(9));
    b.sent();
    let bytecode: Vec<u16> = (0..600).collect();
    let script = LoadedScript {
        bytecode: bytecode.clone(),
        variables: vec![msgs::description::NamedVariable {
            name: "counter".into(),
            address: 141,
            size: 1,
        }],
        ..Default::default()
    };
    b.m.load_script(NodeId(1), script).unwrap();
    let sent = b.sent();
    let kinds: Vec<u16> = sent.iter().map(|(k, _)| *k).collect();
    assert_eq!(
        kinds,
        vec![kind::SET_BYTECODE; 3]
            .into_iter()
            .chain([kind::RUN])
            .collect::<Vec<_>>()
    );
    let mut uploaded = Vec::new();
    for (i, (_, p)) in sent.iter().take(3).enumerate() {
        let w: Vec<u16> = p
            .chunks(2)
            .map(|c| u16::from_le_bytes([c[0], c[1]]))
            .collect();
        assert_eq!((w[0], w[1]), (1, (i * 256) as u16));
        uploaded.extend_from_slice(&w[2..]);
    }
    assert_eq!(uploaded, bytecode);
    assert_eq!(
        b.m.node(NodeId(1))
            .unwrap()
            .variable("counter")
            .unwrap()
            .address,
        141
    );
    let too_big = LoadedScript {
        bytecode: vec![0; 1535],
        ..Default::default()
    };
    assert_eq!(
        b.m.load_script(NodeId(1), too_big),
        Err(NetError::BytecodeTooLarge {
            got: 1535,
            size: 1534
        })
    );
}

#[test]
fn user_events_and_vm_errors_are_reported() {
    let mut b = Bench::new(&BridgeParams::default());
    b.discover(1, &small_target(9));
    b.events();
    b.feed(
        &Message::UserEvent {
            id: 2,
            args: Words::from_slice(&[5, -5]),
        }
        .to_frame(1)
        .unwrap(),
    );
    b.feed(&Message::DivisionByZero { pc: 12 }.to_frame(1).unwrap());
    assert_eq!(
        b.events(),
        vec![
            NetworkEvent::UserEvent {
                source: NodeId(1),
                id: 2,
                args: vec![5, -5],
                stamp_ns: 42
            },
            NetworkEvent::VmError {
                id: NodeId(1),
                message: "division by zero at pc 12".into()
            }
        ]
    );
}

#[test]
fn frames_from_other_hosts_are_not_nodes() {
    let mut b = Bench::new(&BridgeParams::default());
    b.feed(&Message::ListNodes { version: 5 }.to_frame(0).unwrap());
    b.feed(
        &Message::GetVariables {
            dest: 1,
            start: 0,
            length: 1,
        }
        .to_frame(0)
        .unwrap(),
    );
    assert!(b.events().is_empty());
    assert_eq!(b.m.nodes().count(), 0);
}
