//! One instruction (`AsebaVMStep`) and the operators.

use super::{Fault, Outbox, Target, Vm};
use msgs::opcodes::{
    BinaryOp, UnaryOp, BRANCH_IS_WHEN, BRANCH_WAS_TRUE, FLAG_EVENT_ACTIVE, FLAG_STEP_BY_STEP,
};
use msgs::wire::{Message, Words};

/// What an operator did besides its result.
enum OpError {
    None,
    DivisionByZero,
    Unknown(u16),
}

/// Binary operator with the official VM's C semantics: operands promoted to `int`, result
/// truncated to 16 bits; shift counts as x86 executes them (modulo 32).
fn binary(a: i16, b: i16, op: u16) -> (i16, OpError) {
    let (a32, b32) = (a as i32, b as i32);
    let r = match BinaryOp::from_code(op) {
        Some(BinaryOp::ShiftLeft) => a32.wrapping_shl(b32 as u32),
        Some(BinaryOp::ShiftRight) => a32.wrapping_shr(b32 as u32),
        Some(BinaryOp::Add) => a32 + b32,
        Some(BinaryOp::Sub) => a32 - b32,
        Some(BinaryOp::Mult) => a32.wrapping_mul(b32),
        Some(BinaryOp::Div) | Some(BinaryOp::Mod) if b == 0 => return (0, OpError::DivisionByZero),
        Some(BinaryOp::Div) => a32 / b32,
        Some(BinaryOp::Mod) => a32 % b32,
        Some(BinaryOp::BitOr) => a32 | b32,
        Some(BinaryOp::BitXor) => a32 ^ b32,
        Some(BinaryOp::BitAnd) => a32 & b32,
        Some(BinaryOp::Equal) => (a == b) as i32,
        Some(BinaryOp::NotEqual) => (a != b) as i32,
        Some(BinaryOp::BiggerThan) => (a > b) as i32,
        Some(BinaryOp::BiggerEqualThan) => (a >= b) as i32,
        Some(BinaryOp::SmallerThan) => (a < b) as i32,
        Some(BinaryOp::SmallerEqualThan) => (a <= b) as i32,
        Some(BinaryOp::Or) => (a != 0 || b != 0) as i32,
        Some(BinaryOp::And) => (a != 0 && b != 0) as i32,
        None => return (0, OpError::Unknown(op)),
    };
    (r as i16, OpError::None)
}

fn unary(v: i16, op: u16) -> Result<i16, Fault> {
    match UnaryOp::from_code(op) {
        Some(UnaryOp::Neg) => Ok(v.wrapping_neg()),
        Some(UnaryOp::Abs) => Ok(if v >= 0 { v } else { v.wrapping_neg() }),
        Some(UnaryOp::BitNot) => Ok(!v),
        _ => Err(Fault::Operator(op)),
    }
}

impl Vm {
    fn word_at(&self, pc: usize) -> Result<u16, Fault> {
        self.bytecode
            .get(pc)
            .copied()
            .ok_or(Fault::Bytecode(pc as i32))
    }

    pub(crate) fn push(&mut self, v: i16) -> Result<(), Fault> {
        if self.sp + 1 >= self.stack.len() as i32 {
            return Err(Fault::StackOverflow);
        }
        self.sp += 1;
        self.stack[self.sp as usize] = v;
        Ok(())
    }

    fn need(&self, n: i32) -> Result<(), Fault> {
        if self.sp < n - 1 {
            return Err(Fault::StackUnderflow);
        }
        Ok(())
    }

    fn jump_target(&self, disp: i32) -> Result<u16, Fault> {
        let t = self.pc as i32 + disp;
        if t < 0 || t >= self.bytecode.len() as i32 {
            return Err(Fault::Bytecode(t));
        }
        Ok(t as u16)
    }

    fn division_by_zero(&mut self, out: &mut dyn Outbox) {
        self.flags = FLAG_STEP_BY_STEP;
        out.send(&Message::DivisionByZero { pc: self.pc });
    }

    /// `AsebaVMStep`: executes the instruction at `pc`.
    pub fn step(&mut self, target: &mut dyn Target, out: &mut dyn Outbox) {
        if let Err(fault) = self.try_step(target, out) {
            self.assert_fault(fault, out);
        }
    }

    fn try_step(&mut self, target: &mut dyn Target, out: &mut dyn Outbox) -> Result<(), Fault> {
        if self.flags & FLAG_EVENT_ACTIVE == 0 {
            return Err(Fault::Bytecode(self.pc as i32));
        }
        let pc = self.pc as usize;
        let w = self.word_at(pc)?;
        let operand = w & 0x0FFF;
        match w >> 12 {
            0x0 => self.flags &= !FLAG_EVENT_ACTIVE,
            0x1 => {
                self.push(((w << 4) as i16) >> 4)?;
                self.pc += 1;
            }
            0x2 => {
                let v = self.word_at(pc + 1)?;
                self.push(v as i16)?;
                self.pc += 2;
            }
            0x3 => {
                let v = self.var(operand as u32)?;
                self.push(v)?;
                self.pc += 1;
            }
            0x4 => {
                self.need(1)?;
                self.var(operand as u32)?;
                let v = self.stack[self.sp as usize];
                self.sp -= 1;
                self.set_var(operand as u32, v)?;
                self.pc += 1;
            }
            0x5 => {
                self.need(1)?;
                let size = self.word_at(pc + 1)?;
                let index = self.stack[self.sp as usize] as u16;
                if index >= size {
                    self.out_of_bounds(size, index, out);
                    return Ok(());
                }
                let v = self.var(operand as u32 + index as u32)?;
                self.stack[self.sp as usize] = v;
                self.pc += 2;
            }
            0x6 => {
                self.need(2)?;
                let size = self.word_at(pc + 1)?;
                let value = self.stack[self.sp as usize - 1];
                let index = self.stack[self.sp as usize] as u16;
                if index >= size {
                    self.out_of_bounds(size, index, out);
                    return Ok(());
                }
                self.set_var(operand as u32 + index as u32, value)?;
                self.sp -= 2;
                self.pc += 2;
            }
            0x7 => {
                self.need(1)?;
                let top = self.sp as usize;
                self.stack[top] = unary(self.stack[top], w & 0xFF)?;
                self.pc += 1;
            }
            0x8 => {
                self.need(2)?;
                let top = self.sp as usize;
                let (r, e) = binary(self.stack[top - 1], self.stack[top], w & 0xFF);
                match e {
                    OpError::Unknown(op) => return Err(Fault::Operator(op)),
                    OpError::DivisionByZero => self.division_by_zero(out),
                    OpError::None => {}
                }
                self.sp -= 1;
                self.stack[top - 1] = r;
                self.pc += 1;
            }
            0x9 => {
                let disp = (((w << 4) as i16) >> 4) as i32;
                self.pc = self.jump_target(disp)?;
            }
            0xA => {
                self.need(2)?;
                let disp_word = self.word_at(pc + 1)?;
                let top = self.sp as usize;
                let (c, e) = binary(self.stack[top - 1], self.stack[top], w & 0xFF);
                match e {
                    OpError::Unknown(op) => return Err(Fault::Operator(op)),
                    OpError::DivisionByZero => self.division_by_zero(out),
                    OpError::None => {}
                }
                self.sp -= 2;
                let edge_blocked = w & BRANCH_IS_WHEN != 0 && w & BRANCH_WAS_TRUE != 0;
                let disp = if c != 0 && !edge_blocked {
                    2
                } else {
                    disp_word as i16 as i32
                };
                self.bytecode[pc] = if c != 0 {
                    w | BRANCH_WAS_TRUE
                } else {
                    w & !BRANCH_WAS_TRUE
                };
                self.pc = self.jump_target(disp)?;
            }
            0xB => {
                let start = self.word_at(pc + 1)? as u32;
                let len = self.word_at(pc + 2)? as u32;
                if len as usize > super::MAX_EVENT_ARGS {
                    return Err(Fault::EmitTooLong(len as usize));
                }
                self.check_range(start, len)?;
                if len as usize > target.max_emit_words() {
                    let msg = "Argument array size is too large (>32)";
                    self.emit_node_specific_error(msg, out);
                    self.pc += 3;
                    return Ok(());
                }
                let args = &self.variables[start as usize..(start + len) as usize];
                out.send(&Message::UserEvent {
                    id: operand,
                    args: Words::from_slice(args),
                });
                self.pc += 3;
            }
            0xC => {
                target.native(self, operand, out)?;
                self.pc = self.pc.wrapping_add(1);
            }
            0xD => {
                self.push((pc + 1) as i16)?;
                self.pc = operand;
            }
            0xE => {
                self.need(1)?;
                self.pc = self.stack[self.sp as usize] as u16;
                self.sp -= 1;
            }
            _ => return Err(Fault::Opcode(w)),
        }
        Ok(())
    }

    fn out_of_bounds(&mut self, size: u16, index: u16, out: &mut dyn Outbox) {
        self.flags = FLAG_STEP_BY_STEP;
        out.send(&Message::ArrayAccessOutOfBounds {
            pc: self.pc,
            size_index: Some((size, index)),
        });
    }
}
