//! Node protocol: what a firmware-14 node answers to each request.

use super::*;
use crate::generic::StdTarget;
use crate::vm::std_natives::StdState;
use msgs::description::thymio_ii_fw14;
use msgs::opcodes::{FLAG_EVENT_ACTIVE, FLAG_STEP_BY_STEP};
use msgs::wire::kind;

/// Records (kind, payload bytes) of what the node sends.
#[derive(Default)]
struct Rec(Vec<(u16, Vec<u8>)>);

impl Outbox for Rec {
    fn send(&mut self, msg: &Message<'_>) {
        let frame = msg.to_frame(1).unwrap();
        let k = u16::from_le_bytes([frame[4], frame[5]]);
        self.0.push((k, frame[6..].to_vec()));
    }
}

impl Rec {
    fn kinds(&self) -> Vec<u16> {
        self.0.iter().map(|m| m.0).collect()
    }
    fn take(&mut self) -> Vec<(u16, Vec<u8>)> {
        std::mem::take(&mut self.0)
    }
}

fn ev(a: &[i16]) -> Message<'_> {
    Message::UserEvent {
        id: 5,
        args: Words::from_slice(a),
    }
}

fn words(bytes: &[u8]) -> Vec<i16> {
    bytes
        .chunks(2)
        .map(|c| i16::from_le_bytes([c[0], c[1]]))
        .collect()
}

fn node(protocol: u16) -> (Node, StdTarget, Rec) {
    let config = NodeConfig {
        id: 3,
        protocol,
        variables_chunk: 47,
        name: "robot".into(),
        uuid: [7; 16],
    };
    let target = StdTarget {
        std: StdState::new(0),
    };
    (Node::new(thymio_ii_fw14(), config), target, Rec::default())
}

fn handle(n: &mut Node, t: &mut StdTarget, r: &mut Rec, m: Message<'_>) -> NodeRequest {
    n.handle(0, &m, t, r)
}

#[test]
fn discovery_and_description_fragments() {
    let (mut n, mut t, mut r) = node(9);
    handle(&mut n, &mut t, &mut r, Message::ListNodes { version: 9 });
    assert_eq!(r.take(), vec![(kind::NODE_PRESENT, vec![9, 0])]);
    // modern nodes ignore GET_DESCRIPTION from a host claiming version > 4
    handle(
        &mut n,
        &mut t,
        &mut r,
        Message::GetDescription { version: 9 },
    );
    assert!(r.take().is_empty());
    let frag = |fragment| Message::GetNodeDescriptionFragment {
        dest: 3,
        version: 9,
        fragment,
    };
    handle(&mut n, &mut t, &mut r, frag(-1));
    assert_eq!(r.kinds(), vec![kind::DESCRIPTION]);
    r.take();
    handle(&mut n, &mut t, &mut r, frag(44));
    assert_eq!(r.kinds(), vec![kind::LOCAL_EVENT_DESCRIPTION]);
    r.take();
    handle(&mut n, &mut t, &mut r, frag(44 + 17 + 59));
    assert_eq!(r.kinds(), vec![kind::NATIVE_FUNCTION_DESCRIPTION]);
    r.take();
    handle(&mut n, &mut t, &mut r, frag(44 + 17 + 60));
    assert!(r.take().is_empty(), "past the last item: nothing");
    handle(&mut n, &mut t, &mut r, frag(-2));
    assert_eq!(r.take().len(), 122);
    // another node's request is not ours
    handle(
        &mut n,
        &mut t,
        &mut r,
        Message::GetNodeDescription {
            dest: 1,
            version: 9,
        },
    );
    assert!(r.take().is_empty());
}

#[test]
fn variables_in_47_word_replies_and_refused_ranges() {
    let (mut n, mut t, mut r) = node(9);
    let values: Vec<i16> = (0..100).collect();
    handle(
        &mut n,
        &mut t,
        &mut r,
        Message::SetVariables {
            dest: 3,
            start: 200,
            values: Words::from_slice(&values),
        },
    );
    assert!(r.take().is_empty());
    handle(
        &mut n,
        &mut t,
        &mut r,
        Message::GetVariables {
            dest: 3,
            start: 200,
            length: 100,
        },
    );
    let got = r.take();
    let starts: Vec<i16> = got.iter().map(|m| words(&m.1)[0]).collect();
    assert_eq!(starts, vec![200, 247, 294]);
    let all: Vec<i16> = got.iter().flat_map(|m| words(&m.1)[1..].to_vec()).collect();
    assert_eq!(all, values);
    // out of memory: the Thymio's assert message, the VM stopped
    handle(
        &mut n,
        &mut t,
        &mut r,
        Message::GetVariables {
            dest: 3,
            start: 600,
            length: 41,
        },
    );
    let got = r.take();
    assert_eq!(got[0].0, kind::NODE_SPECIFIC_ERROR);
    assert_eq!(&got[0].1[3..], b"VM ASSERT !");
    assert_eq!(n.vm.flags(), FLAG_STEP_BY_STEP);
}

#[test]
fn user_events_fill_event_args_unless_stepping_inside_an_event() {
    let (mut n, mut t, mut r) = node(9);
    // handler of event 5 at 3: STOP
    let code = [3u16, 5, 3, 0x0000];
    n.vm.write_bytecode(0, code.iter().copied()).unwrap();
    let args: Vec<i16> = (1..=40).collect();

    n.handle(9, &ev(&args), &mut t, &mut r);
    assert_eq!(n.vm.variables()[1], 9, "event.source");
    assert_eq!(
        &n.vm.variables()[2..34],
        &args[..32],
        "32 args kept, the rest dropped"
    );
    assert_eq!(n.vm.variables()[34], 0);
    assert!(n.vm.event_active());
    // paused inside the event: ignored
    n.vm.cmd_pause(&mut r);
    n.handle(4, &ev(&[99]), &mut t, &mut r);
    assert_eq!(n.vm.variables()[1], 9);
    assert_eq!(n.vm.variables()[2], 1);
    assert_eq!(n.vm.flags(), FLAG_STEP_BY_STEP | FLAG_EVENT_ACTIVE);
}

#[test]
fn device_info_from_protocol_6_only() {
    let (mut n, mut t, mut r) = node(9);
    handle(
        &mut n,
        &mut t,
        &mut r,
        Message::SetDeviceInfo {
            dest: 3,
            info: 2,
            data: b"alice",
        },
    );
    handle(
        &mut n,
        &mut t,
        &mut r,
        Message::GetDeviceInfo { dest: 3, info: 2 },
    );
    assert_eq!(
        r.take(),
        vec![(kind::DEVICE_INFO, b"\x02\x05alice".to_vec())]
    );
    handle(
        &mut n,
        &mut t,
        &mut r,
        Message::GetDeviceInfo { dest: 3, info: 3 },
    );
    // RF settings: network, node, channel unreadable (0xFFFF)
    assert_eq!(r.take()[0].1[2..], [0, 0, 0, 0, 0xFF, 0xFF]);
    let (mut old, mut t, mut r) = node(5);
    handle(
        &mut old,
        &mut t,
        &mut r,
        Message::GetDeviceInfo { dest: 3, info: 2 },
    );
    handle(
        &mut old,
        &mut t,
        &mut r,
        Message::GetChangedVariables { dest: 3 },
    );
    handle(
        &mut old,
        &mut t,
        &mut r,
        Message::GetNodeDescriptionFragment {
            dest: 3,
            version: 5,
            fragment: -1,
        },
    );
    assert!(r.take().is_empty(), "a protocol-5 node does not know these");
}

#[test]
fn debug_commands_and_breakpoints() {
    let (mut n, mut t, mut r) = node(9);
    let code = [3u16, 0xFFFF, 3, 0x1001, 0x4080, 0x0000];
    handle(
        &mut n,
        &mut t,
        &mut r,
        Message::SetBytecode {
            dest: 3,
            start: 0,
            words: Words::from_slice(&code.map(|w| w as i16)),
        },
    );
    // reset after the upload: paused on the init event
    assert_eq!(
        r.take(),
        vec![(kind::EXECUTION_STATE_CHANGED, vec![3, 0, 3, 0])]
    );
    handle(
        &mut n,
        &mut t,
        &mut r,
        Message::BreakpointSet { dest: 3, pc: 4 },
    );
    handle(
        &mut n,
        &mut t,
        &mut r,
        Message::BreakpointSet { dest: 3, pc: 5000 },
    );
    assert_eq!(
        r.take(),
        vec![
            (kind::BREAKPOINT_SET_RESULT, vec![4, 0, 1, 0]),
            (
                kind::NODE_SPECIFIC_ERROR,
                b"\x03\x00\x0bVM ASSERT !".to_vec()
            ),
            (kind::BREAKPOINT_SET_RESULT, vec![0x88, 0x13, 1, 0]),
        ]
    );
    // the assert stopped the VM; back to the paused init event
    handle(&mut n, &mut t, &mut r, Message::Reset { dest: 3 });
    r.take();
    handle(&mut n, &mut t, &mut r, Message::Step { dest: 3 });
    assert_eq!(n.vm.pc(), 4);
    handle(
        &mut n,
        &mut t,
        &mut r,
        Message::BreakpointClearAll { dest: 3 },
    );
    handle(&mut n, &mut t, &mut r, Message::Run { dest: 3 });
    n.vm.run(100, &mut t, &mut r);
    assert_eq!(n.vm.variables()[128], 1);
    assert!(!n.vm.event_active());
    r.take();
    handle(
        &mut n,
        &mut t,
        &mut r,
        Message::GetExecutionState { dest: 3 },
    );
    assert_eq!(
        r.take(),
        vec![(kind::EXECUTION_STATE_CHANGED, vec![5, 0, 0, 0])]
    );
    assert_eq!(
        handle(&mut n, &mut t, &mut r, Message::Reboot { dest: 3 }),
        NodeRequest::Reboot
    );
    handle(&mut n, &mut t, &mut r, Message::WriteBytecode { dest: 3 });
    assert_eq!(n.flash.as_deref().map(|f| &f[..6]), Some(&code[..]));
    assert_eq!(&r.take()[0].1[3..], b"Flashing OK");
}
