//! Arbitrary bytecode, arbitrary protocol messages and arbitrary bytes on the link of a
//! simulated Thymio: the VM, the node and the firmware never panic and never hang (every step
//! is bounded).
//!
//! Input: byte 0 × 8 = bytes of bytecode (uploaded and run); then 8-byte records, each a
//! message to node 1 (kind 0xA000 + record[0] % 0x16 or a user event, payload from the
//! record); a record starting with 0xFF sends the remaining input as raw link bytes.
#![no_main]
use libfuzzer_sys::fuzz_target;
use msgs::wire::{Message, Words};
use sim::world::{World, WorldConfig};

fuzz_target!(|data: &[u8]| {
    let mut w = World::new(&WorldConfig {
        realtime: false,
        ..WorldConfig::default()
    });
    let (mut tx, mut rx) = w.attach(vec![0], 1 << 16);
    let split = (data.first().copied().unwrap_or(0) as usize * 8).min(data.len()) & !1;
    let (code, mut rest) = data.split_at(split);
    let mut send = |bytes: &[u8]| {
        for b in bytes {
            let _ = tx.push(*b);
        }
    };
    for (i, chunk) in code.chunks(512).enumerate() {
        let msg = Message::SetBytecode {
            dest: 1,
            start: (i * 256) as u16,
            words: Words::from_le_bytes(chunk),
        };
        if let Ok(frame) = msg.to_frame(0) {
            send(&frame);
        }
    }
    send(&Message::Run { dest: 1 }.to_frame(0).unwrap());
    while let Some((record, tail)) = rest.split_first_chunk::<8>() {
        if record[0] == 0xFF {
            break;
        }
        let kind = if record[0] & 0x80 != 0 {
            (record[1] & 0x0F) as u16
        } else {
            0xA000 + (record[0] % 0x16) as u16
        };
        let mut frame = Vec::with_capacity(14);
        frame.extend_from_slice(&8u16.to_le_bytes());
        frame.extend_from_slice(&0u16.to_le_bytes());
        frame.extend_from_slice(&kind.to_le_bytes());
        frame.extend_from_slice(&1u16.to_le_bytes());
        frame.extend_from_slice(&record[2..]);
        send(&frame);
        rest = tail;
    }
    send(rest);
    for _ in 0..30 {
        w.step();
        while rx.pop().is_ok() {}
    }
});
