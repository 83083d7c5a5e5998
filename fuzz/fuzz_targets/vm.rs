//! Arbitrary bytecode and arbitrary bytes on the link of a simulated Thymio: the VM, the node
//! and the firmware never panic and never hang (every step is bounded).
#![no_main]
use libfuzzer_sys::fuzz_target;
use msgs::wire::{Message, Words};
use sim::world::{World, WorldConfig};

fuzz_target!(|data: &[u8]| {
    let mut w = World::new(&WorldConfig { realtime: false, ..WorldConfig::default() });
    let (mut tx, mut rx) = w.attach(vec![0], 1 << 16);
    let split = (data.first().copied().unwrap_or(0) as usize * 8).min(data.len()) & !1;
    let (code, rest) = data.split_at(split);
    let mut send = |bytes: &[u8]| {
        for b in bytes {
            let _ = tx.push(*b);
        }
    };
    for (i, chunk) in code.chunks(512).enumerate() {
        let msg = Message::SetBytecode { dest: 1, start: (i * 256) as u16, words: Words::from_le_bytes(chunk) };
        if let Ok(frame) = msg.to_frame(0) {
            send(&frame);
        }
    }
    send(&Message::Run { dest: 1 }.to_frame(0).unwrap());
    send(rest);
    for _ in 0..30 {
        w.step();
        while rx.pop().is_ok() {}
    }
});
