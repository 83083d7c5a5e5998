//! Property tests: the VM, the node protocol and the simulated robot never panic and never
//! hang, whatever the bytecode and whatever the bytes and messages on the link; the VM's
//! invariants (stack pointer, program counter, flags) hold after every instruction; and the
//! simulated Thymio never stops answering, whatever arrived before (oversize frames, garbage).

use msgs::description::{thymio_ii_fw14, TargetDescription};
use msgs::opcodes::{FLAG_EVENT_ACTIVE, FLAG_EVENT_RUNNING, FLAG_STEP_BY_STEP};
use msgs::wire::{kind, Message};
use proptest::prelude::*;
use sim::generic::StdTarget;
use sim::node::{Node, NodeConfig};
use sim::vm::std_natives::StdState;
use sim::vm::{Outbox, Vm, VmSizes};
use sim::world::{World, WorldConfig};

/// Counts what the VM sends, and checks each message encodes.
#[derive(Default)]
struct Count(usize);

impl Outbox for Count {
    fn send(&mut self, msg: &Message<'_>) {
        assert!(msg.to_frame(1).is_ok(), "unencodable message {msg:?}");
        self.0 += 1;
    }
}

/// Bytecode words biased towards valid instructions with small operands, so that programs
/// run for a while instead of faulting on the first word.
fn word() -> impl Strategy<Value = u16> {
    prop_oneof![
        4 => (0u16..16, 0u16..48).prop_map(|(op, arg)| (op << 12) | arg),
        2 => (0u16..16, any::<u8>()).prop_map(|(op, arg)| (op << 12) | arg as u16),
        1 => any::<u16>(),
        1 => 0u16..64,
    ]
}

fn check_invariants(vm: &Vm, sizes: VmSizes) {
    let sp = vm.sp();
    assert!(
        sp >= -1 && sp < sizes.stack as i32,
        "sp {sp} outside the stack"
    );
    let known = FLAG_EVENT_ACTIVE | FLAG_STEP_BY_STEP | FLAG_EVENT_RUNNING;
    assert_eq!(vm.flags() & !known, 0, "unknown flags {:#x}", vm.flags());
    assert_eq!(vm.variables().len(), sizes.variables);
    assert_eq!(vm.bytecode().len(), sizes.bytecode.max(1));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    /// Arbitrary bytecode, run as init then as arbitrary events, with and without a step
    /// limit, stepped one by one: no panic, invariants after every instruction.
    #[test]
    fn vm_survives_arbitrary_bytecode(
        table in 0u16..8,
        code in prop::collection::vec(word(), 0..300),
        events in prop::collection::vec(any::<u16>(), 0..6),
        stack in 0usize..24,
        variables in 0usize..96,
    ) {
        let sizes = VmSizes { bytecode: 320, variables, stack };
        let mut vm = Vm::new(1, sizes);
        let mut target = StdTarget { std: StdState::new(7) };
        let mut out = Count::default();
        let mut image = vec![table * 2 + 1];
        for i in 0..table {
            image.extend([if i == 0 { 0xFFFF } else { i - 1 }, 1 + table * 2 + i * 5]);
        }
        image.extend(code);
        image.truncate(sizes.bytecode);
        vm.write_bytecode(0, image.into_iter()).unwrap();
        vm.reset(&mut target, &mut out);
        vm.cmd_run(&mut out);
        vm.run(2000, &mut target, &mut out);
        check_invariants(&vm, sizes);
        for e in events {
            vm.setup_event(e % (table + 1), &mut out);
            for _ in 0..500 {
                if !vm.event_active() || vm.step_by_step() {
                    break;
                }
                vm.step(&mut target, &mut out);
                check_invariants(&vm, sizes);
            }
            vm.cmd_run(&mut out);
            vm.run(1000, &mut target, &mut out);
            check_invariants(&vm, sizes);
        }
    }

    /// Arbitrary messages (known kinds with arbitrary payloads) to a firmware-14 node and to a
    /// generic node: answered or ignored, never a panic; everything the node says encodes.
    #[test]
    fn node_survives_arbitrary_messages(
        msgs in prop::collection::vec(
            (prop_oneof![0xA000u16..0xA016, 0x9000u16..0x900F, 0u16..8, 0x8000u16..0x8007],
             prop::bool::weighted(0.8),
             prop::collection::vec(any::<u16>(), 0..40)),
            1..40),
    ) {
        for description in [thymio_ii_fw14(), small_description()] {
            let mut node = Node::new(description, NodeConfig {
                id: 1, protocol: 9, variables_chunk: 47, name: "p".into(), uuid: [0; 16],
            });
            let mut target = StdTarget { std: StdState::new(1) };
            let mut out = Count::default();
            for (k, to_us, words) in &msgs {
                let mut payload: Vec<u8> = Vec::new();
                if kind::has_dest(*k) && *to_us {
                    payload.extend_from_slice(&1u16.to_le_bytes());
                }
                for w in words {
                    payload.extend_from_slice(&w.to_le_bytes());
                }
                let mut frame = Vec::new();
                frame.extend_from_slice(&(payload.len() as u16).to_le_bytes());
                frame.extend_from_slice(&0u16.to_le_bytes());
                frame.extend_from_slice(&k.to_le_bytes());
                frame.extend_from_slice(&payload);
                let Ok((frame, _)) = msgs::wire::Frame::parse(&frame) else { continue };
                let Ok(msg) = frame.message() else { continue };
                node.handle(frame.source, &msg, &mut target, &mut out);
                node.vm.run(1000, &mut target, &mut out);
            }
        }
    }

    /// Arbitrary bytes and arbitrary programs through the in-process link of a simulated
    /// Thymio stepping its firmware: no panic, the world keeps stepping.
    #[test]
    fn robot_survives_arbitrary_link_bytes(
        code in prop::collection::vec(word(), 0..200),
        noise in prop::collection::vec(any::<u8>(), 0..600),
        ms in 1u64..60,
    ) {
        let mut w = World::new(&WorldConfig { realtime: false, ..WorldConfig::default() });
        let (mut tx, mut rx) = w.attach(vec![0], 1 << 16);
        let words: Vec<i16> = std::iter::once(3i16).chain([-1, 3]).chain(code.iter().map(|w| *w as i16)).collect();
        for (i, chunk) in words.chunks(200).enumerate() {
            let m = Message::SetBytecode { dest: 1, start: (i * 200) as u16, words: msgs::wire::Words::from_slice(chunk) };
            for b in m.to_frame(0).unwrap() {
                let _ = tx.push(b);
            }
        }
        for b in (Message::Run { dest: 1 }).to_frame(0).unwrap().into_iter().chain(noise) {
            let _ = tx.push(b);
        }
        for _ in 0..ms {
            w.step();
            while rx.pop().is_ok() {}
        }
        let vm = &w.robots[0].node.vm;
        prop_assert!(vm.sp() < 32);
        prop_assert_eq!(w.time_ms, ms);
    }
}

/// Hostile input for a robot's link: random bytes, frames too long for the protocol (a user
/// event of 259+ words, whole or cut), frames with a length that never comes.
fn hostile_bytes() -> impl Strategy<Value = Vec<u8>> {
    let piece = prop_oneof![
        prop::collection::vec(any::<u8>(), 0..300),
        (259usize..1200, any::<u16>(), any::<bool>()).prop_map(|(words, kind, whole)| {
            let mut f = Vec::new();
            f.extend_from_slice(&((2 * words) as u16).to_le_bytes());
            f.extend_from_slice(&0u16.to_le_bytes());
            f.extend_from_slice(&(kind & 0x7FFF).to_le_bytes());
            let body = if whole { 2 * words } else { words };
            f.extend((0..body).map(|i| i as u8));
            f
        }),
        (0u16..516, any::<u16>(), 0usize..40).prop_map(|(len, kind, have)| {
            let mut f = Vec::new();
            f.extend_from_slice(&len.to_le_bytes());
            f.extend_from_slice(&0u16.to_le_bytes());
            f.extend_from_slice(&kind.to_le_bytes());
            f.extend(std::iter::repeat_n(0u8, have.min(len as usize)));
            f
        }),
    ];
    prop::collection::vec(piece, 1..6).prop_map(|v| v.concat())
}

/// Kinds of the frames robot 0 sends within `ms` simulated milliseconds.
fn replies(w: &mut World, rx: &mut rtrb::Consumer<u8>, ms: u64) -> Vec<u16> {
    let mut bytes = Vec::new();
    for _ in 0..ms {
        w.step();
        while let Ok(b) = rx.pop() {
            bytes.push(b);
        }
    }
    let mut kinds = Vec::new();
    let mut at = 0;
    while let Some(h) = msgs::wire::read_header(&bytes[at..]) {
        kinds.push(h.kind);
        at += 6 + h.len;
    }
    kinds
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// Any byte stream, then (the link quiet for the firmware's timeout) a valid request: the
    /// simulated Thymio answers it. An oversize frame (a user event of 259 words or more)
    /// used to wedge it for good: its bytes were re-read as frames and the stream never
    /// found its boundaries again.
    #[test]
    fn robot_answers_after_any_bytes(noise in hostile_bytes(), split in 1usize..64) {
        let mut w = World::new(&WorldConfig { realtime: false, ..WorldConfig::default() });
        let (mut tx, mut rx) = w.attach(vec![0], 1 << 16);
        for chunk in noise.chunks(split) {
            for b in chunk {
                let _ = tx.push(*b);
            }
            w.step();
        }
        replies(&mut w, &mut rx, sim::rx::QUIET_MS + 1);
        let request = [
            Message::ListNodes { version: 9 }.to_frame(0).unwrap(),
            Message::GetVariables { dest: 1, start: 0, length: 4 }.to_frame(0).unwrap(),
        ]
        .concat();
        for b in request {
            tx.push(b).unwrap();
        }
        let kinds = replies(&mut w, &mut rx, 20);
        prop_assert!(kinds.contains(&kind::NODE_PRESENT), "no NODE_PRESENT: {kinds:04X?}");
        prop_assert!(kinds.contains(&kind::VARIABLES), "no VARIABLES: {kinds:04X?}");
    }
}

/// A small description: 40 variables, stack 8, the standard natives.
fn small_description() -> TargetDescription {
    let mut d = TargetDescription::new("small", 9, 64, 8, 40);
    d.push_variable("_id", 1);
    d.push_variable("event.source", 1);
    d.push_variable("event.args", 32);
    msgs::description::push_standard_natives(&mut d);
    d
}
