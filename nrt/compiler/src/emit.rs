//! Code generation, fix-up, stack check and link, as the official compiler does them: one
//! bytecode vector per event and per subroutine, then the event vector table, the events in
//! ascending id order and the subroutines after them.

use super::errors::{err, CResult, CompileError, Pos};
use super::tree::Node;
use msgs::opcodes::{Opcode, BRANCH_IS_WHEN};
use std::collections::BTreeMap;

/// Event id of the init code.
pub const INIT_EVENT: u16 = 0xFFFF;

/// A bytecode word with the source line it comes from (0-based).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Word {
    /// The word.
    pub word: u16,
    /// 0-based source line.
    pub line: u16,
}

/// A bytecode segment under construction.
#[derive(Debug, Clone, Default)]
pub struct Segment {
    /// The words.
    pub words: Vec<Word>,
    /// Deepest evaluation stack any statement of the segment needs.
    pub max_stack: u32,
    /// Call depth (subroutines), for the stack check.
    pub call_depth: u32,
    /// Line of the last word added (may differ from the last word's, after an `if`).
    pub last_line: u16,
}

impl Segment {
    fn push(&mut self, word: u16, line: u32) {
        self.words.push(Word {
            word,
            line: line as u16,
        });
        self.last_line = line as u16;
    }

    fn append(&mut self, other: &Segment) {
        for w in &other.words {
            self.push(w.word, w.line as u32);
        }
    }

    fn len(&self) -> usize {
        self.words.len()
    }

    /// Iterates over instruction start indices.
    fn instructions(&self) -> impl Iterator<Item = usize> + '_ {
        let mut pc = 0usize;
        std::iter::from_fn(move || {
            if pc >= self.words.len() {
                return None;
            }
            let at = pc;
            pc += word_size(self.words[at].word);
            Some(at)
        })
    }
}

/// Words taken by the instruction starting with `word`.
pub fn word_size(word: u16) -> usize {
    Opcode::of(word).map_or(1, Opcode::words)
}

/// Bytecode before linking.
#[derive(Debug, Default)]
pub struct PreLink {
    /// Event segments by id.
    pub events: BTreeMap<u16, Segment>,
    /// Subroutine segments by id.
    pub subs: BTreeMap<u16, Segment>,
    current: Target,
}

#[derive(Debug, Clone, Copy, Default)]
enum Target {
    #[default]
    Init,
    Event(u16),
    Sub(u16),
    Scratch(usize),
}

/// Emits a program tree.
pub struct Emitter {
    pre: PreLink,
    scratch: Vec<Segment>,
}

impl Default for Emitter {
    fn default() -> Self {
        Self::new()
    }
}

impl Emitter {
    /// An emitter with the init segment open.
    pub fn new() -> Self {
        let mut pre = PreLink::default();
        pre.events.insert(INIT_EVENT, Segment::default());
        pre.current = Target::Event(INIT_EVENT);
        Emitter {
            pre,
            scratch: Vec::new(),
        }
    }

    fn cur(&mut self) -> &mut Segment {
        match self.pre.current {
            Target::Init => self.pre.events.entry(INIT_EVENT).or_default(),
            Target::Event(id) => self.pre.events.entry(id).or_default(),
            Target::Sub(id) => self.pre.subs.entry(id).or_default(),
            Target::Scratch(i) => &mut self.scratch[i],
        }
    }

    fn push(&mut self, word: u16, pos: Pos) {
        self.cur().push(word, pos.row);
    }

    fn immediate(&mut self, value: i32, pos: Pos) {
        if (value.wrapping_abs() >> 11) == 0 {
            self.push(Opcode::SmallImmediate.with(value as u16), pos);
        } else {
            self.push(Opcode::LargeImmediate.with(0), pos);
            self.push(value as u16, pos);
        }
    }

    /// Emits `n` into a fresh scratch segment and returns it.
    fn scratch(&mut self, n: &Node) -> CResult<Segment> {
        let saved = self.pre.current;
        self.scratch.push(Segment::default());
        let idx = self.scratch.len() - 1;
        self.pre.current = Target::Scratch(idx);
        self.node(n)?;
        self.pre.current = saved;
        Ok(self.scratch.pop().unwrap_or_default())
    }

    /// Emits the program and computes each segment's stack depth (`ProgramNode::emit`).
    pub fn program(mut self, program: &Node) -> CResult<PreLink> {
        let Node::Program { children, .. } = program else {
            return Err(err!(program.pos(), "Internal compiler error, please report a bug containing the source which triggered this error"));
        };
        for c in children {
            self.node(c)?;
        }
        let mut current = Target::Event(INIT_EVENT);
        let mut max = 0u32;
        for c in children {
            match c {
                Node::EventDecl { id, .. } | Node::SubDecl { id, .. } => {
                    self.segment_mut(current).max_stack = max;
                    max = 0;
                    current = if matches!(c, Node::EventDecl { .. }) {
                        Target::Event(*id)
                    } else {
                        Target::Sub(*id)
                    };
                }
                _ => max = max.max(stack_depth(c)),
            }
        }
        self.segment_mut(current).max_stack = max;
        Ok(self.pre)
    }

    fn segment_mut(&mut self, t: Target) -> &mut Segment {
        match t {
            Target::Sub(id) => self.pre.subs.entry(id).or_default(),
            Target::Event(id) => self.pre.events.entry(id).or_default(),
            _ => self.pre.events.entry(INIT_EVENT).or_default(),
        }
    }

    fn node(&mut self, n: &Node) -> CResult<()> {
        match n {
            Node::Block { children, .. } | Node::Program { children, .. } => {
                for c in children {
                    self.node(c)?;
                }
            }
            Node::Assign { lhs, rhs, .. } => {
                self.node(rhs)?;
                self.node(lhs)?;
            }
            Node::FoldedIfWhen { pos, op, left, right, then, otherwise, edge, end_line } => {
                let ble = self.scratch(left)?;
                let bre = self.scratch(right)?;
                let btb = self.scratch(then)?;
                let bfb = match otherwise {
                    Some(o) => Some(self.scratch(o)?),
                    None => None,
                };
                let cur = self.cur();
                cur.append(&ble);
                cur.append(&bre);
                let edge_bit = if *edge { BRANCH_IS_WHEN } else { 0 };
                cur.push(Opcode::ConditionalBranch.with(*op as u16) | edge_bit, pos.row);
                let skip = 2 + btb.len() + usize::from(bfb.is_some());
                cur.push(skip as u16, pos.row);
                cur.append(&btb);
                if let Some(bfb) = bfb {
                    let jump_line = btb.words.last().map_or(pos.row, |w| w.line as u32);
                    cur.push(Opcode::Jump.with((bfb.len() + 1) as u16), jump_line);
                    cur.append(&bfb);
                }
                cur.last_line = *end_line as u16;
            }
            Node::FoldedWhile { pos, op, left, right, body } => {
                let ble = self.scratch(left)?;
                let bre = self.scratch(right)?;
                let bb = self.scratch(body)?;
                let cur = self.cur();
                cur.append(&ble);
                cur.append(&bre);
                cur.push(Opcode::ConditionalBranch.with(*op as u16), pos.row);
                cur.push((2 + bb.len() + 1) as u16, pos.row);
                cur.append(&bb);
                let back = -((ble.len() + bre.len() + bb.len() + 2) as i32);
                cur.push(Opcode::Jump.with(back as u16), pos.row);
            }
            Node::EventDecl { id, .. } => {
                self.pre.events.insert(*id, Segment::default());
                self.pre.current = Target::Event(*id);
            }
            Node::SubDecl { id, .. } => {
                self.pre.subs.insert(*id, Segment::default());
                self.pre.current = Target::Sub(*id);
            }
            Node::Emit { pos, id, addr, size, temp } => {
                if let Some(t) = temp {
                    self.node(t)?;
                }
                self.push(Opcode::Emit.with(*id), *pos);
                self.push(*addr as u16, *pos);
                self.push(*size as u16, *pos);
            }
            Node::CallSub { pos, id, .. } => {
                let Some(id) = id else {
                    return Err(err!(*pos, "Internal compiler error, please report a bug containing the source which triggered this error"));
                };
                self.push(Opcode::SubCall.with(*id), *pos);
            }
            Node::Binary { pos, op, l, r } => {
                self.node(l)?;
                self.node(r)?;
                self.push(Opcode::BinaryArithmetic.with(*op as u16), *pos);
            }
            Node::Unary { pos, op, c } => {
                self.node(c)?;
                self.push(Opcode::UnaryArithmetic.with(*op as u16), *pos);
            }
            Node::Imm { pos, value } => self.immediate(*value, *pos),
            Node::Load { pos, addr } => self.push(Opcode::Load.with(*addr as u16), *pos),
            Node::Store { pos, addr } => self.push(Opcode::Store.with(*addr as u16), *pos),
            Node::ArrayWrite { pos, addr, size, index, .. } => {
                self.node(index)?;
                self.push(Opcode::StoreIndirect.with(*addr as u16), *pos);
                self.push(*size as u16, *pos);
            }
            Node::ArrayRead { pos, addr, size, index, .. } => {
                self.node(index)?;
                self.push(Opcode::LoadIndirect.with(*addr as u16), *pos);
                self.push(*size as u16, *pos);
            }
            Node::LoadNativeArg { pos, temp, addr, size, index, .. } => {
                self.node(index)?;
                let t = *temp as u16;
                self.push(Opcode::Store.with(t), *pos);
                self.push(Opcode::Load.with(t), *pos);
                self.push(Opcode::Load.with(t), *pos);
                self.push(Opcode::LoadIndirect.with(*addr as u16), *pos);
                self.push(*size as u16, *pos);
                self.push(Opcode::Store.with(t), *pos);
                self.immediate(*addr as i32, *pos);
                self.push(Opcode::BinaryArithmetic.with(msgs::opcodes::BinaryOp::Add as u16), *pos);
            }
            Node::Call { pos, id, args, templates } => {
                for t in templates.iter().rev() {
                    self.immediate(*t, *pos);
                }
                for a in args.iter().rev() {
                    self.node(a)?;
                }
                self.push(Opcode::NativeCall.with(*id), *pos);
            }
            Node::Return { pos } => self.push(Opcode::Stop.with(0), *pos),
            other => {
                return Err(err!(
                    other.pos(),
                    "Internal compiler error, please report a bug containing the source which triggered this error"
                ))
            }
        }
        Ok(())
    }
}

/// `getStackDepth`.
pub fn stack_depth(n: &Node) -> u32 {
    match n {
        Node::Imm { .. } | Node::Load { .. } => 1,
        Node::Binary { l, r, .. } => stack_depth(l) + stack_depth(r),
        Node::FoldedIfWhen {
            left,
            right,
            then,
            otherwise,
            ..
        } => {
            let mut d = (stack_depth(left) + stack_depth(right)).max(stack_depth(then));
            if let Some(o) = otherwise {
                d = d.max(stack_depth(o));
            }
            d
        }
        Node::FoldedWhile {
            left, right, body, ..
        } => (stack_depth(left) + stack_depth(right)).max(stack_depth(body)),
        Node::LoadNativeArg { index, .. } => stack_depth(index).max(2),
        Node::Call {
            args, templates, ..
        } => args
            .iter()
            .enumerate()
            .map(|(i, a)| templates.len() as u32 + i as u32 + stack_depth(a))
            .max()
            .unwrap_or(0),
        _ => n.children().into_iter().map(stack_depth).max().unwrap_or(0),
    }
}

impl PreLink {
    /// `fixup`: empty events are dropped, every event ends with STOP, subroutines return.
    pub fn fixup(&mut self, sub_lines: &[u32]) {
        self.events.retain(|_, s| !s.words.is_empty());
        for s in self.events.values_mut() {
            let line = s.last_line as u32;
            s.push(Opcode::Stop.with(0), line);
        }
        for (id, s) in self.subs.iter_mut() {
            if s.words.is_empty() {
                let line = sub_lines.get(*id as usize).copied().unwrap_or(0);
                s.push(Opcode::SubRet.with(0), line);
                continue;
            }
            let starts: Vec<usize> = s.instructions().collect();
            let mut last = 16u16;
            for pc in starts {
                if s.words[pc].word >> 12 == Opcode::Stop as u16 {
                    s.words[pc].word = Opcode::SubRet.with(0);
                }
                last = s.words[pc].word >> 12;
            }
            if last != Opcode::SubRet as u16 {
                let line = s.last_line as u32;
                s.push(Opcode::SubRet.with(0), line);
            }
        }
    }

    /// `verifyStackCalls`: no event or call path may overflow the stack.
    pub fn verify_stack(&mut self, stack_size: u32) -> bool {
        let sub_calls = |s: &Segment| -> Vec<u16> {
            s.instructions()
                .filter(|pc| s.words[*pc].word >> 12 == Opcode::SubCall as u16)
                .map(|pc| s.words[pc].word & 0x0FFF)
                .collect()
        };
        for s in self.events.values() {
            if s.max_stack > stack_size {
                return false;
            }
        }
        let called: Vec<u16> = self.events.values().flat_map(sub_calls).collect();
        for id in called {
            if let Some(d) = self.subs.get_mut(&id) {
                d.call_depth = 1;
            }
        }
        loop {
            let mut activity = false;
            let ids: Vec<u16> = self.subs.keys().copied().collect();
            for id in ids {
                let (depth, max, calls) = {
                    let s = &self.subs[&id];
                    (s.call_depth, s.max_stack, sub_calls(s))
                };
                if depth + max > stack_size {
                    return false;
                }
                for callee in calls {
                    if let Some(d) = self.subs.get_mut(&callee) {
                        if depth + 1 > d.call_depth {
                            activity = true;
                            d.call_depth = depth + 1;
                        }
                    }
                }
            }
            if !activity {
                return true;
            }
        }
    }

    /// `link`: the event vector table, the events, the subroutines, resolved calls. Also
    /// returns the source line of every word.
    pub fn link(&self, bytecode_size: usize) -> Result<(Vec<u16>, Vec<u16>), CompileError> {
        let mut words: Vec<Word> = Vec::new();
        let mut addr = self.events.len() * 2 + 1;
        words.push(Word {
            word: addr as u16,
            line: 0,
        });
        for (id, s) in &self.events {
            words.push(Word { word: *id, line: 0 });
            words.push(Word {
                word: addr as u16,
                line: 0,
            });
            addr += s.len();
        }
        for s in self.events.values() {
            words.extend_from_slice(&s.words);
        }
        let mut sub_addr = BTreeMap::new();
        for (id, s) in &self.subs {
            sub_addr.insert(*id, words.len());
            words.extend_from_slice(&s.words);
        }
        let mut pc = 0usize;
        while pc < words.len() {
            let w = words[pc].word;
            if w >> 12 == Opcode::SubCall as u16 {
                let a = sub_addr.get(&(w & 0x0FFF)).copied().unwrap_or(0);
                words[pc].word = (w & 0xF000) | (a as u16);
            }
            // the table is walked like code, as the official linker does
            pc += word_size(words[pc].word);
        }
        if words.len() > bytecode_size {
            return Err(CompileError {
                line: 0,
                col: 0,
                message: "Script too big for target bytecode size".into(),
            });
        }
        Ok((
            words.iter().map(|w| w.word).collect(),
            words.iter().map(|w| w.line).collect(),
        ))
    }
}
