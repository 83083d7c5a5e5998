//! Disassembler of bytecode images (`thymio-rt compile --dump`, debugging), in the style of
//! the official compiler's dump.

use super::emit::word_size;
use super::EventDef;
use msgs::description::TargetDescription;
use msgs::opcodes::{BinaryOp, Opcode, UnaryOp, BRANCH_IS_WHEN};
use std::collections::BTreeMap;
use std::fmt::Write;

fn event_name(id: u16, target: &TargetDescription, events: &[EventDef]) -> String {
    if id == 0xFFFF {
        return "init".into();
    }
    if let Some(e) = events.get(id as usize) {
        return format!("event {}", e.name);
    }
    let local = 0xFFFEi32 - id as i32;
    if id >= 0x1000 && local >= 0 {
        if let Some(e) = target.local_events.get(local as usize) {
            return format!("event {}", e.name);
        }
        return format!("unknown local event {local}");
    }
    format!("unknown global event {id}")
}

fn sext12(w: u16) -> i16 {
    ((w << 4) as i16) >> 4
}

/// One line per instruction, with segment headers. Never panics, whatever the words.
pub fn disassemble(bytecode: &[u16], target: &TargetDescription, events: &[EventDef]) -> String {
    let mut out = String::new();
    let Some(&table) = bytecode.first() else {
        return "empty bytecode\n".into();
    };
    let mut starts = BTreeMap::new();
    let mut i = 1usize;
    while i + 1 < (table as usize).min(bytecode.len()) {
        starts.insert(bytecode[i + 1] as usize, bytecode[i]);
        i += 2;
    }
    let _ = writeln!(
        out,
        "{} events, {} words on {}",
        starts.len(),
        bytecode.len(),
        target.bytecode_size
    );
    let mut pc = table as usize;
    while pc < bytecode.len() {
        if let Some(id) = starts.get(&pc) {
            let _ = writeln!(out, "{}:", event_name(*id, target, events));
        }
        let w = bytecode[pc];
        let arg = |k: usize| bytecode.get(pc + k).copied().unwrap_or(0);
        let text = match Opcode::of(w) {
            None => format!("INVALID {w:04x}"),
            Some(op) => match op {
                Opcode::Stop => "STOP".into(),
                Opcode::SmallImmediate => format!("SMALL_IMMEDIATE {}", sext12(w)),
                Opcode::LargeImmediate => format!("LARGE_IMMEDIATE {}", arg(1) as i16),
                Opcode::Load => format!("LOAD {}", w & 0xFFF),
                Opcode::Store => format!("STORE {}", w & 0xFFF),
                Opcode::LoadIndirect => {
                    format!("LOAD_INDIRECT in array at {} of size {}", w & 0xFFF, arg(1))
                }
                Opcode::StoreIndirect => format!(
                    "STORE_INDIRECT in array at {} of size {}",
                    w & 0xFFF,
                    arg(1)
                ),
                Opcode::UnaryArithmetic => match UnaryOp::from_code(w & 0xFF) {
                    Some(u) => format!("UNARY_ARITHMETIC {u:?}"),
                    None => format!("UNARY_ARITHMETIC ?{}", w & 0xFF),
                },
                Opcode::BinaryArithmetic => match BinaryOp::from_code(w & 0xFF) {
                    Some(b) => format!("BINARY_ARITHMETIC {}", b.symbol()),
                    None => format!("BINARY_ARITHMETIC ?{}", w & 0xFF),
                },
                Opcode::Jump => format!("JUMP {}", sext12(w)),
                Opcode::ConditionalBranch => {
                    let op = BinaryOp::from_code(w & 0xFF).map_or("?", |b| b.symbol());
                    let edge = if w & BRANCH_IS_WHEN != 0 {
                        " (edge)"
                    } else {
                        ""
                    };
                    format!(
                        "CONDITIONAL_BRANCH {op}{edge}, skip {} if false",
                        arg(1) as i16
                    )
                }
                Opcode::Emit => {
                    let id = w & 0xFFF;
                    let name = events
                        .get(id as usize)
                        .map_or(id.to_string(), |e| e.name.clone());
                    format!("EMIT {name} addr {} size {}", arg(1), arg(2))
                }
                Opcode::NativeCall => {
                    let id = (w & 0xFFF) as usize;
                    let name = target.natives.get(id).map_or("?", |n| n.name.as_str());
                    format!("CALL {id} ({name})")
                }
                Opcode::SubCall => format!("SUB_CALL @ {}", w & 0xFFF),
                Opcode::SubRet => "SUB_RET".into(),
            },
        };
        let _ = writeln!(out, "    {pc:4}: {text}");
        pc += word_size(w);
    }
    out
}
