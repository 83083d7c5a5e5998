//! The syntax tree, through the passes of the official compiler: the vectorial tree of the
//! parser (tuples, memory vectors, compound assignments), then, after expansion, the scalar
//! tree that is type-checked, optimised and emitted.

use super::errors::{err, CResult, Pos};
use msgs::opcodes::{BinaryOp, UnaryOp};

/// "No value" of vector sizes and addresses (`E_NOVAL`).
pub const NOVAL: u32 = u32::MAX;

/// A node.
#[derive(Debug, Clone, PartialEq)]
pub enum Node {
    /// Statements in sequence.
    Block { pos: Pos, children: Vec<Node> },
    /// The whole program.
    Program { pos: Pos, children: Vec<Node> },
    /// `lhs = rhs`.
    Assign {
        pos: Pos,
        lhs: Box<Node>,
        rhs: Box<Node>,
    },
    /// `if`/`when` before folding.
    IfWhen {
        pos: Pos,
        cond: Box<Node>,
        then: Box<Node>,
        otherwise: Option<Box<Node>>,
        edge: bool,
        end_line: u32,
    },
    /// `if`/`when` with its comparison folded in.
    FoldedIfWhen {
        pos: Pos,
        op: BinaryOp,
        left: Box<Node>,
        right: Box<Node>,
        then: Box<Node>,
        otherwise: Option<Box<Node>>,
        edge: bool,
        end_line: u32,
    },
    /// `while` before folding.
    While {
        pos: Pos,
        cond: Box<Node>,
        body: Box<Node>,
    },
    /// `while` with its comparison folded in.
    FoldedWhile {
        pos: Pos,
        op: BinaryOp,
        left: Box<Node>,
        right: Box<Node>,
        body: Box<Node>,
    },
    /// `onevent`.
    EventDecl { pos: Pos, id: u16 },
    /// `emit`, with the temporary assignment of its argument if any.
    Emit {
        pos: Pos,
        id: u16,
        addr: u32,
        size: u32,
        temp: Option<Box<Node>>,
    },
    /// `sub`.
    SubDecl { pos: Pos, id: u16 },
    /// `callsub`.
    CallSub {
        pos: Pos,
        name: String,
        id: Option<u16>,
    },
    /// Binary operator.
    Binary {
        pos: Pos,
        op: BinaryOp,
        l: Box<Node>,
        r: Box<Node>,
    },
    /// Unary operator.
    Unary { pos: Pos, op: UnaryOp, c: Box<Node> },
    /// Constant (the official compiler keeps C ints while folding).
    Imm { pos: Pos, value: i32 },
    /// Store to a variable.
    Store { pos: Pos, addr: u32 },
    /// Load of a variable.
    Load { pos: Pos, addr: u32 },
    /// Bounds-checked store at a computed index.
    ArrayWrite {
        pos: Pos,
        addr: u32,
        size: u32,
        name: String,
        index: Box<Node>,
    },
    /// Bounds-checked load at a computed index.
    ArrayRead {
        pos: Pos,
        addr: u32,
        size: u32,
        name: String,
        index: Box<Node>,
    },
    /// Address of `v[expr]` for a native call, bounds-checked.
    LoadNativeArg {
        pos: Pos,
        temp: u32,
        addr: u32,
        size: u32,
        name: String,
        index: Box<Node>,
    },
    /// Native call: argument address producers (in order) and template sizes.
    Call {
        pos: Pos,
        id: u16,
        args: Vec<Node>,
        templates: Vec<i32>,
    },
    /// `return`.
    Return { pos: Pos },
    /// `[a, b, …]` (vectorial).
    Tuple { pos: Pos, items: Vec<Node> },
    /// Variable access, whole or indexed (vectorial). `index`: a constant tuple (1 or 2
    /// values: element or range) or an expression.
    Memory {
        pos: Pos,
        addr: u32,
        size: u32,
        name: String,
        index: Option<Box<Node>>,
        write: bool,
    },
    /// `lhs op= rhs` (vectorial).
    ArithAssign {
        pos: Pos,
        op: BinaryOp,
        lhs: Box<Node>,
        rhs: Box<Node>,
    },
    /// `v++` / `v--` (vectorial).
    UnaryArithAssign {
        pos: Pos,
        op: BinaryOp,
        mem: Box<Node>,
    },
}

impl Node {
    /// Position.
    pub fn pos(&self) -> Pos {
        use Node::*;
        match self {
            Block { pos, .. }
            | Program { pos, .. }
            | Assign { pos, .. }
            | IfWhen { pos, .. }
            | FoldedIfWhen { pos, .. }
            | While { pos, .. }
            | FoldedWhile { pos, .. }
            | EventDecl { pos, .. }
            | Emit { pos, .. }
            | SubDecl { pos, .. }
            | CallSub { pos, .. }
            | Binary { pos, .. }
            | Unary { pos, .. }
            | Imm { pos, .. }
            | Store { pos, .. }
            | Load { pos, .. }
            | ArrayWrite { pos, .. }
            | ArrayRead { pos, .. }
            | LoadNativeArg { pos, .. }
            | Call { pos, .. }
            | Return { pos }
            | Tuple { pos, .. }
            | Memory { pos, .. }
            | ArithAssign { pos, .. }
            | UnaryArithAssign { pos, .. } => *pos,
        }
    }

    /// The node's name in error messages.
    pub fn node_name(&self) -> &'static str {
        use Node::*;
        match self {
            Block { .. } => "block",
            Program { .. } => "program block",
            Assign { .. } => "assignment",
            IfWhen { .. } => "if/when",
            FoldedIfWhen { .. } => "folded if/when",
            While { .. } => "while",
            FoldedWhile { .. } => "folded while",
            EventDecl { .. } => "event declaration",
            Emit { .. } => "emit",
            SubDecl { .. } => "subroutine declaration",
            CallSub { .. } => "subroutine call",
            Binary { .. } => "binary function",
            Unary { .. } => "unary function",
            Imm { .. } => "constant",
            Store { .. } => "variable access (write)",
            Load { .. } => "variable access (read)",
            ArrayWrite { .. } => "array access (write)",
            ArrayRead { .. } => "array access (read)",
            LoadNativeArg { .. } => "load native arg",
            Call { .. } => "native function call",
            Return { .. } => "return",
            Tuple { .. } => "array of constants",
            Memory { .. } => "vector access",
            ArithAssign { .. } => "arithmetic assignment",
            UnaryArithAssign { .. } => "unary arithmetic assignment",
        }
    }

    /// The value of a constant tuple element (`getImmediateValue`).
    pub fn tuple_imm(&self, i: usize) -> Option<i32> {
        match self {
            Node::Tuple { items, .. } => match items.get(i) {
                Some(Node::Imm { value, .. }) => Some(*value),
                _ => None,
            },
            _ => None,
        }
    }

    /// Number of elements (`getVectorSize`); `NOVAL` for statements.
    pub fn vector_size(&self) -> CResult<u32> {
        use Node::*;
        match self {
            Imm { .. } | Store { .. } | Load { .. } | ArrayWrite { .. } | ArrayRead { .. } => Ok(1),
            Tuple { items, .. } => {
                let mut s = 0u32;
                for i in items {
                    s = s.wrapping_add(i.vector_size()?);
                }
                Ok(s)
            }
            Memory {
                pos,
                size,
                name,
                index,
                ..
            } => match index.as_deref() {
                None => Ok(*size),
                Some(idx @ Tuple { items, .. }) => match items.len() {
                    1 => Ok(1),
                    2 => {
                        let a = idx.tuple_imm(0).unwrap_or(0);
                        let b = idx.tuple_imm(1).unwrap_or(0);
                        if b < 0 || b >= *size as i32 {
                            return Err(out_of_bound(*pos, name, b, *size));
                        }
                        Ok((b - a + 1) as u32)
                    }
                    _ => Err(err!(
                        *pos,
                        "MemoryVectorNode::getVectorSize: illegal operation"
                    )),
                },
                Some(_) => Ok(1),
            },
            _ => {
                let mut size = NOVAL;
                for c in self.children() {
                    let n = c.vector_size()?;
                    if size == NOVAL {
                        size = n;
                    } else if size != n {
                        return Err(err!(
                            self.pos(),
                            "Size error! Size of array1 = {} ; size of array2 = {}",
                            size,
                            n
                        ));
                    }
                }
                Ok(size)
            }
        }
    }

    /// First address (`getVectorAddr`); `NOVAL` if not static.
    pub fn vector_addr(&self) -> CResult<u32> {
        use Node::*;
        match self {
            Store { addr, .. }
            | Load { addr, .. }
            | ArrayWrite { addr, .. }
            | ArrayRead { addr, .. } => Ok(*addr),
            Memory {
                pos,
                addr,
                size,
                name,
                index,
                ..
            } => {
                let shift = match index.as_deref() {
                    None => 0,
                    Some(t @ Tuple { .. }) => t.tuple_imm(0).unwrap_or(0),
                    Some(_) => return Ok(NOVAL),
                };
                if shift < 0 || shift >= *size as i32 {
                    return Err(out_of_bound(*pos, name, shift, *size));
                }
                Ok(addr + shift as u32)
            }
            _ => match self.children().first() {
                Some(c) => c.vector_addr(),
                None => Ok(NOVAL),
            },
        }
    }

    /// Children in the official order (for the generic walks).
    pub fn children(&self) -> Vec<&Node> {
        use Node::*;
        match self {
            Block { children, .. } | Program { children, .. } => children.iter().collect(),
            Assign { lhs, rhs, .. } | ArithAssign { lhs, rhs, .. } => vec![lhs, rhs],
            IfWhen {
                cond,
                then,
                otherwise,
                ..
            } => {
                let mut v = vec![&**cond, &**then];
                v.extend(otherwise.as_deref());
                v
            }
            FoldedIfWhen {
                left,
                right,
                then,
                otherwise,
                ..
            } => {
                let mut v = vec![&**left, &**right, &**then];
                v.extend(otherwise.as_deref());
                v
            }
            While { cond, body, .. } => vec![cond, body],
            FoldedWhile {
                left, right, body, ..
            } => vec![left, right, body],
            Emit { temp, .. } => temp.as_deref().into_iter().collect(),
            Binary { l, r, .. } => vec![l, r],
            Unary { c, .. } => vec![c],
            ArrayWrite { index, .. } | ArrayRead { index, .. } | LoadNativeArg { index, .. } => {
                vec![index]
            }
            Call { args, .. } => args.iter().collect(),
            Tuple { items, .. } => items.iter().collect(),
            Memory { index, .. } => index.as_deref().into_iter().collect(),
            UnaryArithAssign { mem, .. } => vec![mem],
            EventDecl { .. }
            | SubDecl { .. }
            | CallSub { .. }
            | Imm { .. }
            | Store { .. }
            | Load { .. }
            | Return { .. } => {
                vec![]
            }
        }
    }

    /// Whether any memory access in the subtree names `name`.
    pub fn uses_name(&self, name: &str) -> bool {
        matches!(self, Node::Memory { name: n, .. } if n == name)
            || self.children().iter().any(|c| c.uses_name(name))
    }
}

/// The out-of-bound error of vector accesses.
pub fn out_of_bound(pos: Pos, name: &str, index: i32, size: u32) -> super::errors::CompileError {
    err!(
        pos,
        "Access of array {} out of bounds: accessing index {} while array is of size {}",
        name,
        index,
        size
    )
}
