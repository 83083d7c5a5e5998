//! Recursive-descent parser producing the vectorial tree, filling the symbol tables
//! ([`Symbols`], with the temporary-memory allocator).

use super::errors::{err, CResult, CompileError, Pos};
use super::lexer::{Tok, Token};
use super::symbols::{find, Symbols};
use super::tree::{Node, NOVAL};
use msgs::opcodes::{BinaryOp, UnaryOp};

/// The parser.
pub struct Parser<'s, 't> {
    toks: Vec<Token>,
    i: usize,
    pub sym: &'s mut Symbols<'t>,
}

fn bin(pos: Pos, op: BinaryOp, l: Node, r: Node) -> Node {
    Node::Binary {
        pos,
        op,
        l: Box::new(l),
        r: Box::new(r),
    }
}

fn imm(pos: Pos, value: i32) -> Node {
    Node::Imm { pos, value }
}

/// A tuple holding one constant (`TupleVectorNode(pos, value)`).
fn tuple1(pos: Pos, value: i32) -> Node {
    Node::Tuple {
        pos,
        items: vec![imm(pos, value)],
    }
}

impl<'s, 't> Parser<'s, 't> {
    /// A parser over tokens.
    pub fn new(toks: Vec<Token>, sym: &'s mut Symbols<'t>) -> Self {
        Parser { toks, i: 0, sym }
    }

    fn front(&self) -> &Token {
        &self.toks[self.i.min(self.toks.len() - 1)]
    }
    fn tok(&self) -> Tok {
        self.front().tok
    }
    fn nth(&self, n: usize) -> Option<Tok> {
        self.toks.get(self.i + n).map(|t| t.tok)
    }
    fn pos(&self) -> Pos {
        self.front().pos
    }
    fn pop(&mut self) {
        if self.i + 1 < self.toks.len() {
            self.i += 1;
        }
    }

    fn expect(&self, t: Tok) -> CResult<()> {
        if self.tok() != t {
            return Err(err!(
                self.pos(),
                "Expecting {}, found {} instead",
                t.name(),
                self.tok().name()
            ));
        }
        Ok(())
    }

    fn expect_one_of(&self, ts: &[Tok]) -> CResult<()> {
        if ts.contains(&self.tok()) {
            return Ok(());
        }
        let names: Vec<&str> = ts.iter().map(|t| t.name()).collect();
        Err(err!(
            self.pos(),
            "Expecting one of {}; but found {} instead",
            names.join(", "),
            self.tok().name()
        ))
    }

    fn expect_abs_int16(&self, negative: bool) -> CResult<i32> {
        self.expect(Tok::Int)?;
        let v = self.front().value;
        let limit = if negative { 32768 } else { 32767 };
        if v < 0 || v > limit {
            return Err(err!(
                self.pos(),
                "Integer value {} out of [-32768;32767] range",
                v
            ));
        }
        Ok(v)
    }

    /// `expectInt16Literal` (does not consume the literal).
    fn expect_int16(&mut self) -> CResult<i32> {
        if self.tok() == Tok::Neg {
            self.pop();
            return Ok(-self.expect_abs_int16(true)?);
        }
        if self.front().value < 0 && self.tok() == Tok::Int {
            let i = self.i;
            self.toks[i].value *= -1;
            return Ok(-self.expect_abs_int16(true)?);
        }
        self.expect_abs_int16(false)
    }

    fn find_constant(&self, name: &str, pos: Pos) -> CResult<i32> {
        find(
            &self.sym.constants,
            name,
            pos,
            |n| format!("Constant {n} not defined"),
            |n, b| format!("Constant {n} not defined, do you mean {b}?"),
        )
    }

    /// `expectConstant` (does not consume).
    fn expect_constant(&self) -> CResult<i32> {
        self.expect(Tok::Ident)?;
        let name = self.front().text.clone();
        let v = self.find_constant(&name, self.pos())?;
        if !(-32768..=32767).contains(&v) {
            return Err(err!(
                self.pos(),
                "Constant {} has value {}, which is out of [-32768;32767] range",
                name,
                v
            ));
        }
        Ok(v)
    }

    fn expect_int16_or_constant(&mut self) -> CResult<i32> {
        if matches!(self.tok(), Tok::Neg | Tok::Int) {
            self.expect_int16()
        } else {
            self.expect_constant()
        }
    }

    fn find_variable(&self, name: &str, pos: Pos) -> CResult<(u32, u32)> {
        find(
            &self.sym.variables,
            name,
            pos,
            |n| format!("{n} is not a defined variable"),
            |n, b| format!("{n} is not a defined variable, do you mean {b}?"),
        )
    }

    fn find_global_event(&self, name: &str, pos: Pos) -> CResult<u16> {
        find(
            &self.sym.global_events,
            name,
            pos,
            |n| format!("{n} is not a known event"),
            |n, b| format!("{n} is not a known event, do you mean {b}?"),
        )
        .map_err(|e| {
            if self.sym.all_events.contains_key(name) {
                CompileError::at(pos, format!("{name} is a local event that you cannot emit"))
            } else {
                e
            }
        })
    }

    fn find_any_event(&self, name: &str, pos: Pos) -> CResult<u16> {
        find(
            &self.sym.all_events,
            name,
            pos,
            |n| format!("{n} is not a known event"),
            |n, b| format!("{n} is not a known event, do you mean {b}?"),
        )
    }

    // ---- program and statements ------------------------------------------------------------

    /// `parseProgram`.
    pub fn program(&mut self) -> CResult<Node> {
        let pos = self.pos();
        let mut children = Vec::new();
        while self.tok() == Tok::Const {
            self.const_def()?;
        }
        while self.tok() == Tok::Var {
            if let Some(n) = self.var_def()? {
                children.push(n);
            }
        }
        while self.tok() != Tok::End {
            children.push(self.statement()?);
        }
        Ok(Node::Program { pos, children })
    }

    fn statement(&mut self) -> CResult<Node> {
        self.sym.end_var = 0;
        match self.tok() {
            Tok::Var => Err(err!(
                self.pos(),
                "Variable definition is allowed only at the beginning of the program before any statement"
            )),
            Tok::Onevent => self.on_event(),
            Tok::Sub => self.sub_decl(),
            _ => self.block_statement(),
        }
    }

    fn block_statement(&mut self) -> CResult<Node> {
        match self.tok() {
            Tok::If => self.if_when(false),
            Tok::When => self.if_when(true),
            Tok::For => self.for_loop(),
            Tok::While => self.while_loop(),
            Tok::Emit => self.emit(false),
            Tok::HiddenEmit => self.emit(true),
            Tok::Call => self.function_call(),
            Tok::Callsub => self.call_sub(),
            Tok::Return => {
                let pos = self.pos();
                self.pop();
                Ok(Node::Return { pos })
            }
            _ => self.assignment(),
        }
    }

    fn const_def(&mut self) -> CResult<()> {
        self.pop();
        if self.tok() != Tok::Ident {
            return Err(err!(
                self.pos(),
                "Expecting identifier, found {}",
                self.front().describe()
            ));
        }
        let name = self.front().text.clone();
        let pos = self.pos();
        self.pop();
        if self.sym.constants.contains_key(&name) {
            return Err(err!(pos, "Constant {} is already defined", name));
        }
        if self.tok() != Tok::Assign {
            return Err(err!(
                self.pos(),
                "Expecting assignment, found {} instead",
                self.front().describe()
            ));
        }
        self.pop();
        let tree = self.binary_or()?;
        let v = self.constant_expression(pos, tree)?;
        self.sym.constants.insert(name, v);
        Ok(())
    }

    fn var_def(&mut self) -> CResult<Option<Node>> {
        self.pop();
        if self.tok() != Tok::Ident {
            return Err(err!(
                self.pos(),
                "Expecting identifier, found {}",
                self.front().describe()
            ));
        }
        let name = self.front().text.clone();
        let pos = self.pos();
        let addr = self.sym.free_var;
        self.pop();
        let mut size = self.var_def_size()?;
        if self.sym.variables.contains_key(&name) {
            return Err(err!(pos, "Variable {} is already defined", name));
        }
        if self.sym.constants.contains_key(&name) {
            return Err(err!(
                pos,
                "Variable {} has the same name as a constant",
                name
            ));
        }
        let mut init = None;
        if self.tok() == Tok::Assign {
            let apos = self.pos();
            self.pop();
            let rvalue = match self.tuple_vector(true)? {
                Some(t) => t,
                None => self.binary_or()?,
            };
            if size == NOVAL {
                size = rvalue.vector_size()?;
            }
            let lhs = Node::Memory {
                pos,
                addr,
                size,
                name: name.clone(),
                index: None,
                write: false,
            };
            init = Some(Node::Assign {
                pos: apos,
                lhs: Box::new(lhs),
                rhs: Box::new(rvalue),
            });
        }
        if size == 0 || size == NOVAL {
            return Err(err!(pos, "Array {} has undefined size", name));
        }
        self.sym.variables.insert(name, (addr, size));
        self.sym.free_var = self.sym.free_var.wrapping_add(size);
        if self.sym.free_var > self.sym.target.variables_size as u32 {
            return Err(err!(pos, "No more free variable space"));
        }
        Ok(init)
    }

    fn var_def_size(&mut self) -> CResult<u32> {
        if self.tok() != Tok::BracketOpen {
            return Ok(1);
        }
        let pos = self.pos();
        self.pop();
        let result = if self.tok() == Tok::BracketClose {
            NOVAL
        } else {
            let tree = self.binary_or()?;
            let r = self.constant_expression(pos, tree)?;
            if r < 0 {
                return Err(err!(pos, "Array size: result is negative ({})", r));
            } else if r == 0 {
                return Err(err!(pos, "Array size: result is null"));
            }
            self.expect(Tok::BracketClose)?;
            r as u32
        };
        self.pop();
        Ok(result)
    }

    fn assignment(&mut self) -> CResult<Node> {
        self.expect(Tok::Ident)?;
        let lhs = self.binary_or()?;
        let pos = self.pos();
        let op = match self.tok() {
            Tok::Assign => {
                self.pop();
                let rhs = self.binary_or()?;
                return Ok(Node::Assign {
                    pos,
                    lhs: Box::new(lhs),
                    rhs: Box::new(rhs),
                });
            }
            Tok::PlusPlus | Tok::MinusMinus => {
                let op = if self.tok() == Tok::PlusPlus {
                    BinaryOp::Add
                } else {
                    BinaryOp::Sub
                };
                self.pop();
                return Ok(Node::UnaryArithAssign {
                    pos,
                    op,
                    mem: Box::new(lhs),
                });
            }
            Tok::AddEqual => BinaryOp::Add,
            Tok::NegEqual => BinaryOp::Sub,
            Tok::MultEqual => BinaryOp::Mult,
            Tok::DivEqual => BinaryOp::Div,
            Tok::ModEqual => BinaryOp::Mod,
            Tok::ShiftLeftEqual => BinaryOp::ShiftLeft,
            Tok::ShiftRightEqual => BinaryOp::ShiftRight,
            Tok::BitOrEqual => BinaryOp::BitOr,
            Tok::BitXorEqual => BinaryOp::BitXor,
            Tok::BitAndEqual => BinaryOp::BitAnd,
            _ => {
                return Err(err!(
                    self.pos(),
                    "Expecting assignment, found {} instead",
                    self.front().describe()
                ))
            }
        };
        self.pop();
        let rhs = self.binary_or()?;
        Ok(Node::ArithAssign {
            pos,
            op,
            lhs: Box::new(lhs),
            rhs: Box::new(rhs),
        })
    }

    fn block_until(&mut self, ends: &[Tok]) -> CResult<Node> {
        let pos = self.pos();
        let mut children = Vec::new();
        while !ends.contains(&self.tok()) {
            children.push(self.block_statement()?);
        }
        Ok(Node::Block { pos, children })
    }

    fn if_when(&mut self, edge: bool) -> CResult<Node> {
        let pos = self.pos();
        self.pop();
        let cond = self.or()?;
        self.expect(if edge { Tok::Do } else { Tok::Then })?;
        self.pop();
        let then = self.block_until(&[Tok::Else, Tok::Elseif, Tok::EndKw])?;
        let mut otherwise = None;
        if !edge {
            if self.tok() == Tok::Else {
                self.pop();
                otherwise = Some(Box::new(self.block_until(&[Tok::EndKw])?));
            }
            if self.tok() == Tok::Elseif {
                let nested = self.if_when(false)?;
                // the official parser appends the elseif chain after a possible else block
                let otherwise = otherwise.or(Some(Box::new(nested)));
                return Ok(Node::IfWhen {
                    pos,
                    cond: Box::new(cond),
                    then: Box::new(then),
                    otherwise,
                    edge,
                    end_line: 0,
                });
            }
        }
        let end_line = self.pos().row;
        self.expect(Tok::EndKw)?;
        self.pop();
        Ok(Node::IfWhen {
            pos,
            cond: Box::new(cond),
            then: Box::new(then),
            otherwise,
            edge,
            end_line,
        })
    }

    fn for_loop(&mut self) -> CResult<Node> {
        let wpos = self.pos();
        self.pop();
        let var = self.variable()?;
        let vpos = var.pos();
        self.expect(Tok::In)?;
        self.pop();
        let start = self.expect_int16_or_constant()?;
        let start_pos = self.pos();
        self.pop();
        self.expect(Tok::Colon)?;
        self.pop();
        let end = self.expect_int16_or_constant()?;
        let end_pos = self.pos();
        self.pop();
        let mut step = 1;
        if self.tok() == Tok::Step {
            self.pop();
            step = self.expect_int16_or_constant()?;
            if step == 0 {
                return Err(err!(self.pos(), "Null steps are not allowed in for loops"));
            }
            self.pop();
        }
        if step > 0 {
            if start > end {
                return Err(err!(
                    start_pos,
                    "Start index must be lower than end index in increasing loops"
                ));
            }
            if end == 32767 {
                return Err(err!(
                    end_pos,
                    "End index cannot be 32767 in increasing loops"
                ));
            }
        } else {
            if start < end {
                return Err(err!(
                    start_pos,
                    "Start index must be higher than end index in decreasing loops"
                ));
            }
            if end == -32768 {
                return Err(err!(
                    end_pos,
                    "End index cannot be -32768 in decreasing loops"
                ));
            }
        }
        self.expect(Tok::Do)?;
        self.pop();
        let mut children = vec![Node::Assign {
            pos: start_pos,
            lhs: Box::new(var.clone()),
            rhs: Box::new(tuple1(start_pos, start)),
        }];
        if start == end {
            while self.tok() != Tok::EndKw {
                children.push(self.block_statement()?);
            }
        } else {
            let op = if start <= end {
                BinaryOp::SmallerEqualThan
            } else {
                BinaryOp::BiggerEqualThan
            };
            let cond = bin(wpos, op, var.clone(), tuple1(end_pos, end));
            let bpos = self.pos();
            let mut body = Vec::new();
            while self.tok() != Tok::EndKw {
                body.push(self.block_statement()?);
            }
            let inc = bin(vpos, BinaryOp::Add, var.clone(), tuple1(vpos, step));
            body.push(Node::Assign {
                pos: vpos,
                lhs: Box::new(var),
                rhs: Box::new(inc),
            });
            children.push(Node::While {
                pos: wpos,
                cond: Box::new(cond),
                body: Box::new(Node::Block {
                    pos: bpos,
                    children: body,
                }),
            });
        }
        self.pop();
        Ok(Node::Block {
            pos: wpos,
            children,
        })
    }

    fn while_loop(&mut self) -> CResult<Node> {
        let pos = self.pos();
        self.pop();
        let cond = self.or()?;
        self.expect(Tok::Do)?;
        self.pop();
        let body = self.block_until(&[Tok::EndKw])?;
        self.pop();
        Ok(Node::While {
            pos,
            cond: Box::new(cond),
            body: Box::new(body),
        })
    }

    fn on_event(&mut self) -> CResult<Node> {
        let pos = self.pos();
        self.pop();
        self.expect(Tok::Ident)?;
        let name = self.front().text.clone();
        let id = self.find_any_event(&name, self.pos())?;
        if self.sym.implemented.contains(&id) {
            return Err(err!(
                self.pos(),
                "Event {} is already implemented",
                self.sym.event_name(id)
            ));
        }
        self.sym.implemented.insert(id);
        self.pop();
        Ok(Node::EventDecl { pos, id })
    }

    fn emit(&mut self, shorter_ok: bool) -> CResult<Node> {
        let pos = self.pos();
        self.pop();
        self.expect(Tok::Ident)?;
        let name = self.front().text.clone();
        let id = self.find_global_event(&name, self.pos())?;
        self.pop();
        let (ev_name, ev_size) = self.sym.events[id as usize].clone();
        let ev_size = ev_size as u32;
        if ev_size == 0 {
            return Ok(Node::Emit {
                pos,
                id,
                addr: 0,
                size: 0,
                temp: None,
            });
        }
        let arg = self.binary_or()?;
        let static_memory = matches!(arg, Node::Memory { .. }) && arg.vector_addr()? != NOVAL;
        let (addr, size, temp) = if static_memory {
            (arg.vector_addr()?, arg.vector_size()?, None)
        } else {
            let t = self.sym.temp_assignment(pos, arg)?;
            let (a, s) = match &t {
                Node::Assign { lhs, .. } => (lhs.vector_addr()?, lhs.vector_size()?),
                _ => unreachable!("temp_assignment builds an assignment"),
            };
            (a, s, Some(Box::new(t)))
        };
        if shorter_ok {
            if size > ev_size {
                return Err(err!(
                    pos,
                    "Event {} needs an array of size {} or smaller, but one of size {} is passed",
                    ev_name,
                    ev_size,
                    size
                ));
            }
        } else if size != ev_size {
            return Err(err!(
                pos,
                "Event {} needs an array of size {}, but one of size {} is passed",
                ev_name,
                ev_size,
                size
            ));
        }
        Ok(Node::Emit {
            pos,
            id,
            addr,
            size,
            temp,
        })
    }

    fn sub_decl(&mut self) -> CResult<Node> {
        let pos = self.pos();
        self.pop();
        self.expect(Tok::Ident)?;
        let name = self.front().text.clone();
        if self.sym.sub_by_name.contains_key(&name) {
            return Err(err!(self.pos(), "Subroutine {} is already defined", name));
        }
        let id = self.sym.subroutines.len() as u16;
        self.sym.subroutines.push((name.clone(), pos.row));
        self.sym.sub_by_name.insert(name, id);
        self.pop();
        Ok(Node::SubDecl { pos, id })
    }

    fn call_sub(&mut self) -> CResult<Node> {
        let pos = self.pos();
        self.pop();
        self.expect(Tok::Ident)?;
        let name = self.front().text.clone();
        self.pop();
        Ok(Node::CallSub {
            pos,
            name,
            id: None,
        })
    }

    // ---- expressions -------------------------------------------------------------------------

    /// `parseOr`.
    pub fn or(&mut self) -> CResult<Node> {
        let mut node = self.and()?;
        while self.tok() == Tok::Or {
            let pos = self.pos();
            self.pop();
            let r = self.and()?;
            node = bin(pos, BinaryOp::Or, node, r);
        }
        Ok(node)
    }

    fn and(&mut self) -> CResult<Node> {
        let mut node = self.not()?;
        while self.tok() == Tok::And {
            let pos = self.pos();
            self.pop();
            let r = self.not()?;
            node = bin(pos, BinaryOp::And, node, r);
        }
        Ok(node)
    }

    fn not(&mut self) -> CResult<Node> {
        let pos = self.pos();
        let mut odd = false;
        while self.tok() == Tok::Not {
            odd = !odd;
            self.pop();
        }
        let c = self.condition()?;
        Ok(if odd {
            Node::Unary {
                pos,
                op: UnaryOp::Not,
                c: Box::new(c),
            }
        } else {
            c
        })
    }

    fn condition(&mut self) -> CResult<Node> {
        let mut node = self.binary_or()?;
        loop {
            let op = match self.tok() {
                Tok::Equal => BinaryOp::Equal,
                Tok::NotEqual => BinaryOp::NotEqual,
                Tok::Bigger => BinaryOp::BiggerThan,
                Tok::BiggerEqual => BinaryOp::BiggerEqualThan,
                Tok::Smaller => BinaryOp::SmallerThan,
                Tok::SmallerEqual => BinaryOp::SmallerEqualThan,
                _ => return Ok(node),
            };
            let pos = self.pos();
            self.pop();
            let r = self.binary_or()?;
            node = bin(pos, op, node, r);
        }
    }

    /// `parseBinaryOrExpression`.
    pub fn binary_or(&mut self) -> CResult<Node> {
        let mut node = self.binary_xor()?;
        while self.tok() == Tok::BitOr {
            let pos = self.pos();
            self.pop();
            let r = self.binary_xor()?;
            node = bin(pos, BinaryOp::BitOr, node, r);
        }
        Ok(node)
    }

    fn binary_xor(&mut self) -> CResult<Node> {
        let mut node = self.binary_and()?;
        while self.tok() == Tok::BitXor {
            let pos = self.pos();
            self.pop();
            let r = self.binary_and()?;
            node = bin(pos, BinaryOp::BitXor, node, r);
        }
        Ok(node)
    }

    fn binary_and(&mut self) -> CResult<Node> {
        let mut node = self.shift()?;
        while self.tok() == Tok::BitAnd {
            let pos = self.pos();
            self.pop();
            let r = self.shift()?;
            node = bin(pos, BinaryOp::BitAnd, node, r);
        }
        Ok(node)
    }

    fn shift(&mut self) -> CResult<Node> {
        let mut node = self.add()?;
        loop {
            let op = match self.tok() {
                Tok::ShiftLeft => BinaryOp::ShiftLeft,
                Tok::ShiftRight => BinaryOp::ShiftRight,
                _ => return Ok(node),
            };
            let pos = self.pos();
            self.pop();
            let r = self.add()?;
            node = bin(pos, op, node, r);
        }
    }

    fn add(&mut self) -> CResult<Node> {
        let mut node = self.mult()?;
        loop {
            let op = match self.tok() {
                Tok::Add => BinaryOp::Add,
                Tok::Neg => BinaryOp::Sub,
                _ => return Ok(node),
            };
            let pos = self.pos();
            self.pop();
            let r = self.mult()?;
            node = bin(pos, op, node, r);
        }
    }

    fn mult(&mut self) -> CResult<Node> {
        let mut node = self.unary()?;
        loop {
            let op = match self.tok() {
                Tok::Mult => BinaryOp::Mult,
                Tok::Div => BinaryOp::Div,
                Tok::Mod => BinaryOp::Mod,
                _ => return Ok(node),
            };
            let pos = self.pos();
            self.pop();
            let r = self.unary()?;
            node = bin(pos, op, node, r);
        }
    }

    fn unary(&mut self) -> CResult<Node> {
        self.expect_one_of(&[
            Tok::ParOpen,
            Tok::BracketOpen,
            Tok::Neg,
            Tok::BitNot,
            Tok::Abs,
            Tok::Ident,
            Tok::Int,
        ])?;
        let pos = self.pos();
        match self.tok() {
            Tok::ParOpen => {
                self.pop();
                let e = self.or()?;
                self.expect(Tok::ParClose)?;
                self.pop();
                Ok(e)
            }
            Tok::BracketOpen => Ok(self
                .tuple_vector(false)?
                .expect("not in compatibility mode")),
            Tok::Neg => {
                if self.nth(1) == Some(Tok::Int) {
                    self.pop();
                    let i = self.i;
                    self.toks[i].value = self.toks[i].value.wrapping_neg();
                    self.toks[i].text = format!("-{}", self.toks[i].text);
                    self.unary()
                } else {
                    self.pop();
                    let c = self.unary()?;
                    Ok(Node::Unary {
                        pos,
                        op: UnaryOp::Neg,
                        c: Box::new(c),
                    })
                }
            }
            Tok::BitNot => {
                self.pop();
                let c = self.unary()?;
                Ok(Node::Unary {
                    pos,
                    op: UnaryOp::BitNot,
                    c: Box::new(c),
                })
            }
            Tok::Abs => {
                self.pop();
                let c = self.unary()?;
                Ok(Node::Unary {
                    pos,
                    op: UnaryOp::Abs,
                    c: Box::new(c),
                })
            }
            Tok::Int => {
                let v = self.expect_int16()?;
                self.pop();
                Ok(tuple1(pos, v))
            }
            _ => self.constant_or_variable(),
        }
    }

    /// `parseTupleVector`; in compatibility mode (var initialisers without brackets), `None`
    /// when the tokens do not start a comma list.
    fn tuple_vector(&mut self, compatibility: bool) -> CResult<Option<Node>> {
        if !compatibility {
            self.expect(Tok::BracketOpen)?;
            self.pop();
        } else if !(self.nth(1) == Some(Tok::Comma)
            || (self.tok() == Tok::Neg && self.nth(2) == Some(Tok::Comma)))
        {
            return Ok(None);
        }
        let pos = self.pos();
        let mut items = Vec::new();
        loop {
            if self.tok() == Tok::BracketOpen {
                items.push(
                    self.tuple_vector(false)?
                        .expect("not in compatibility mode"),
                );
            } else {
                items.push(self.binary_or()?);
            }
            if self.tok() != Tok::Comma {
                break;
            }
            self.pop();
        }
        if !compatibility {
            self.expect(Tok::BracketClose)?;
            self.pop();
        }
        Ok(Some(Node::Tuple { pos, items }))
    }

    fn constant_or_variable(&mut self) -> CResult<Node> {
        self.expect(Tok::Ident)?;
        let name = self.front().text.clone();
        if self.sym.constants.contains_key(&name) {
            let pos = self.pos();
            let v = self.expect_constant()?;
            self.pop();
            return Ok(tuple1(pos, v));
        }
        self.variable()
    }

    /// `parseVariable`: a variable, possibly indexed (`v[i]`, `v[a:b]`, `v[expr]`).
    fn variable(&mut self) -> CResult<Node> {
        self.expect(Tok::Ident)?;
        let name = self.front().text.clone();
        let vpos = self.pos();
        let (addr, size) = self.find_variable(&name, vpos)?;
        self.pop();
        let mut index = None;
        if self.tok() == Tok::BracketOpen {
            let mut pos = self.pos();
            self.pop();
            let (start_tree, start) = self.try_constant_expression(pos)?;
            match start_tree {
                None => {
                    let mut items = vec![imm(pos, start)];
                    if self.tok() == Tok::Colon {
                        pos = self.pos();
                        self.pop();
                        let (end_tree, end) = self.try_constant_expression(pos)?;
                        if end_tree.is_some() {
                            return Err(err!(
                                pos,
                                "Expecting a constant expression as a second index"
                            ));
                        }
                        if end < start {
                            return Err(err!(
                                self.pos(),
                                "End of range index must be lower or equal to start of range index"
                            ));
                        }
                        items.push(imm(pos, end));
                    }
                    index = Some(Box::new(Node::Tuple { pos, items }));
                }
                Some(tree) => index = Some(Box::new(tree)),
            }
            self.expect(Tok::BracketClose)?;
            self.pop();
        }
        Ok(Node::Memory {
            pos: vpos,
            addr,
            size,
            name,
            index,
            write: false,
        })
    }

    /// `tryParsingConstantExpression`: `(None, value)` if constant, else `(Some(tree), 0)`.
    fn try_constant_expression(&mut self, pos: Pos) -> CResult<(Option<Node>, i32)> {
        let tree = self.binary_or()?;
        match self.constant_expression(pos, tree.clone()) {
            Ok(v) => Ok((None, v)),
            Err(_) => Ok((Some(tree), 0)),
        }
    }

    /// `expectConstantExpression`: folds `tree` to a constant or fails.
    fn constant_expression(&mut self, pos: Pos, tree: Node) -> CResult<i32> {
        let fake = Node::Memory {
            pos,
            addr: 0,
            size: 1,
            name: "fake".into(),
            index: None,
            write: false,
        };
        let assign = Node::Assign {
            pos,
            lhs: Box::new(fake),
            rhs: Box::new(tree),
        };
        let not_const = || err!(pos, "Not a valid constant expression");
        let expanded = super::expand::abstract_nodes(assign)?;
        let scalar = super::expand::vectorial(expanded, self.sym, 0, false)?;
        let optimized = super::optimize::optimize(scalar)?;
        let Some(Node::Block { children, .. }) = optimized else {
            return Err(not_const());
        };
        match children.first() {
            Some(Node::Assign { rhs, .. }) => match **rhs {
                Node::Imm { value, .. } => Ok(value),
                _ => Err(not_const()),
            },
            _ => Err(not_const()),
        }
    }

    /// `parseFunctionCall`.
    fn function_call(&mut self) -> CResult<Node> {
        let pos = self.pos();
        self.pop();
        self.expect(Tok::Ident)?;
        let fname = self.front().text.clone();
        let id = find(
            &self.sym.functions,
            &fname,
            pos,
            |n| format!("Target does not provide function {n}"),
            |n, b| format!("Target does not provide function {n}, do you mean {b}?"),
        )?;
        let function = self.sym.target.natives[id as usize].clone();
        self.pop();
        self.expect(Tok::ParOpen)?;
        self.pop();
        let mut args = Vec::new();
        let mut templates_out = Vec::new();
        if function.params.is_empty() {
            if self.tok() != Tok::ParClose {
                return Err(err!(
                    self.pos(),
                    "Function {} requires no argument, some are used",
                    fname
                ));
            }
            self.pop();
            return Ok(Node::Call {
                pos,
                id,
                args,
                templates: templates_out,
            });
        }
        let min_template = function
            .params
            .iter()
            .map(|p| p.size as i32)
            .min()
            .unwrap_or(0)
            .min(0);
        let mut templates = vec![-1i64; (-min_template) as usize];
        let n = function.params.len();
        for (i, param) in function.params.iter().enumerate() {
            if self.tok() == Tok::ParClose {
                return Err(err!(
                    self.pos(),
                    "Function {} requires {} arguments, only {} are provided",
                    fname,
                    n,
                    i
                ));
            }
            let vpos = self.pos();
            let pre = self.binary_or()?;
            let mut addr = pre.vector_addr()?;
            let size = pre.vector_size()?;
            if !matches!(pre, Node::Memory { .. }) {
                let t = self.sym.temp_assignment(pos, pre)?;
                addr = match &t {
                    Node::Assign { lhs, .. } => lhs.vector_addr()?,
                    _ => unreachable!("temp_assignment builds an assignment"),
                };
                args.push(Node::Block {
                    pos: vpos,
                    children: vec![t, imm(vpos, addr as i32)],
                });
            } else if addr == NOVAL {
                let temp = self.sym.alloc_temp(vpos, 1)?;
                let Node::Memory {
                    pos: mpos,
                    addr: maddr,
                    size: msize,
                    name,
                    index,
                    ..
                } = pre
                else {
                    unreachable!("matched above")
                };
                let index = index.expect("a dynamic access has an index");
                args.push(Node::LoadNativeArg {
                    pos: mpos,
                    temp,
                    addr: maddr,
                    size: msize,
                    name,
                    index,
                });
            } else {
                args.push(imm(vpos, addr as i32));
            }
            let psize = param.size as i32;
            if psize > 0 {
                if size != psize as u32 {
                    return Err(err!(
                        vpos,
                        "Argument {} ({}) of function {} is of size {}, function definition demands size {}",
                        i,
                        param.name,
                        fname,
                        size,
                        psize
                    ));
                }
            } else if psize < 0 {
                let t = (-psize - 1) as usize;
                if templates[t] < 0 {
                    templates[t] = size as i64;
                } else if templates[t] != size as i64 {
                    return Err(err!(
                        vpos,
                        "Argument {} ({}) of function {} is of size {}, while a previous instance of the template parameter was of size {}",
                        i,
                        param.name,
                        fname,
                        size,
                        templates[t]
                    ));
                }
            } else {
                templates_out.push(size as i32);
            }
            if i + 1 == n {
                if self.tok() == Tok::Comma {
                    return Err(err!(
                        self.pos(),
                        "Function {} requires {} arguments, more are used",
                        fname,
                        n
                    ));
                }
                self.expect(Tok::ParClose)?;
            } else {
                if self.tok() == Tok::ParClose {
                    return Err(err!(
                        self.pos(),
                        "Function {} requires {} arguments, only {} are provided",
                        fname,
                        n,
                        i + 1
                    ));
                }
                self.expect(Tok::Comma)?;
            }
            self.pop();
        }
        templates_out.extend(templates.iter().filter(|t| **t >= 0).map(|t| *t as i32));
        Ok(Node::Call {
            pos,
            id,
            args,
            templates: templates_out,
        })
    }
}
