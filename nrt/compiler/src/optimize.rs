//! The official compiler's optimisations on the scalar tree: constant folding in C `int`
//! arithmetic, neutral and absorbing elements, power-of-two multiplications and divisions
//! as shifts, `not` removal by de Morgan, static array accesses, dead `if`/`while` removal,
//! and folding of conditions into `if`/`when`/`while` nodes. `None` means "removed".

use super::errors::{err, CResult, Pos};
use super::tree::Node;
use msgs::opcodes::{BinaryOp, UnaryOp};

fn internal(pos: Pos) -> super::errors::CompileError {
    err!(pos, "Internal compiler error, please report a bug containing the source which triggered this error")
}

fn is_empty_block(n: &Node) -> bool {
    matches!(n, Node::Block { children, .. } | Node::Program { children, .. } if children.is_empty())
}

fn imm_of(n: &Node) -> Option<i32> {
    match n {
        Node::Imm { value, .. } => Some(*value),
        _ => None,
    }
}

fn some_box(n: Node) -> Box<Node> {
    Box::new(n)
}

/// A child that the official compiler asserts is never removed.
fn keep(n: Node) -> CResult<Node> {
    let pos = n.pos();
    optimize(n)?.ok_or_else(|| internal(pos))
}

/// Optimises `n`; `None` when the node disappears.
pub fn optimize(n: Node) -> CResult<Option<Node>> {
    Ok(Some(match n {
        Node::Block { pos, children } => Node::Block {
            pos,
            children: block(children)?,
        },
        Node::Program { pos, children } => Node::Program {
            pos,
            children: block(children)?,
        },
        Node::Assign { pos, lhs, rhs } => Node::Assign {
            pos,
            lhs: some_box(keep(*lhs)?),
            rhs: some_box(keep(*rhs)?),
        },
        Node::IfWhen {
            pos,
            cond,
            then,
            otherwise,
            edge,
            end_line,
        } => return if_when(pos, *cond, *then, otherwise.map(|o| *o), edge, end_line),
        Node::While { pos, cond, body } => return while_loop(pos, *cond, *body),
        Node::Emit {
            pos,
            id,
            addr,
            size,
            temp,
        } => {
            let temp = match temp {
                Some(t) => Some(some_box(keep(*t)?)),
                None => None,
            };
            Node::Emit {
                pos,
                id,
                addr,
                size,
                temp,
            }
        }
        Node::Binary { pos, op, l, r } => binary(pos, op, keep(*l)?, keep(*r)?)?,
        Node::Unary { pos, op, c } => unary(pos, op, keep(*c)?)?,
        Node::ArrayRead {
            pos,
            addr,
            size,
            name,
            index,
        } => {
            let index = keep(*index)?;
            match imm_of(&index) {
                Some(v) => {
                    let i = v as u32;
                    if i >= size {
                        return Err(err!(
                            pos,
                            "Out of bound static array access. Trying to read index {} of array {} of size {}",
                            i,
                            name,
                            size
                        ));
                    }
                    Node::Load {
                        pos,
                        addr: addr.wrapping_add(i),
                    }
                }
                None => Node::ArrayRead {
                    pos,
                    addr,
                    size,
                    name,
                    index: some_box(index),
                },
            }
        }
        Node::ArrayWrite {
            pos,
            addr,
            size,
            name,
            index,
        } => {
            let index = keep(*index)?;
            match imm_of(&index) {
                Some(v) => {
                    let i = v as u32;
                    if i >= size {
                        return Err(err!(
                            pos,
                            "Out of bound static array access. Trying to write index {} of array {} of size {}",
                            i,
                            name,
                            size
                        ));
                    }
                    Node::Store {
                        pos,
                        addr: addr.wrapping_add(i),
                    }
                }
                None => Node::ArrayWrite {
                    pos,
                    addr,
                    size,
                    name,
                    index: some_box(index),
                },
            }
        }
        Node::LoadNativeArg {
            pos,
            temp,
            addr,
            size,
            name,
            index,
        } => Node::LoadNativeArg {
            pos,
            temp,
            addr,
            size,
            name,
            index: some_box(keep(*index)?),
        },
        Node::Call {
            pos,
            id,
            args,
            templates,
        } => Node::Call {
            pos,
            id,
            args: args.into_iter().map(keep).collect::<CResult<_>>()?,
            templates,
        },
        leaf @ (Node::EventDecl { .. }
        | Node::SubDecl { .. }
        | Node::CallSub { .. }
        | Node::Imm { .. }
        | Node::Load { .. }
        | Node::Store { .. }
        | Node::Return { .. }) => leaf,
        other => return Err(internal(other.pos())),
    }))
}

/// `BlockNode::optimize`: removed children and empty blocks disappear.
fn block(children: Vec<Node>) -> CResult<Vec<Node>> {
    let mut out = Vec::with_capacity(children.len());
    for c in children {
        if let Some(o) = optimize(c)? {
            if !matches!(o, Node::Block { ref children, .. } if children.is_empty()) {
                out.push(o);
            }
        }
    }
    Ok(out)
}

fn if_when(
    pos: Pos,
    cond: Node,
    then: Node,
    otherwise: Option<Node>,
    edge: bool,
    end_line: u32,
) -> CResult<Option<Node>> {
    let cond = keep(cond)?;
    let then = optimize(then)?;
    let otherwise = match otherwise {
        Some(o) => optimize(o)?,
        None => None,
    };
    let then_empty = then.as_ref().is_none_or(is_empty_block);
    let else_empty = otherwise.as_ref().is_none_or(is_empty_block);
    if then_empty && else_empty {
        return Ok(None);
    }
    if let Some(v) = imm_of(&cond) {
        return Ok(if v != 0 { then } else { otherwise });
    }
    let then = then.unwrap_or(Node::Block {
        pos,
        children: Vec::new(),
    });
    let Node::Binary { op, l, r, .. } = cond else {
        return Err(internal(pos));
    };
    Ok(Some(Node::FoldedIfWhen {
        pos,
        op,
        left: l,
        right: r,
        then: some_box(then),
        otherwise: otherwise.map(some_box),
        edge,
        end_line,
    }))
}

fn while_loop(pos: Pos, cond: Node, body: Node) -> CResult<Option<Node>> {
    let cond = keep(cond)?;
    let body = optimize(body)?;
    if let Some(v) = imm_of(&cond) {
        if v != 0 {
            return Err(err!(pos, "Infinite loops not allowed"));
        }
        return Ok(None);
    }
    let Some(body) = body.filter(|b| !is_empty_block(b)) else {
        return Ok(None);
    };
    let Node::Binary { op, l, r, .. } = cond else {
        return Err(internal(pos));
    };
    Ok(Some(Node::FoldedWhile {
        pos,
        op,
        left: l,
        right: r,
        body: some_box(body),
    }))
}

/// C `int` folding of a binary operator (x86 semantics for shifts).
fn fold(pos: Pos, op: BinaryOp, a: i32, b: i32) -> CResult<i32> {
    use BinaryOp::*;
    Ok(match op {
        ShiftLeft => a.wrapping_shl(b as u32),
        ShiftRight => a.wrapping_shr(b as u32),
        Add => a.wrapping_add(b),
        Sub => a.wrapping_sub(b),
        Mult => a.wrapping_mul(b),
        Div | Mod if b == 0 => return Err(err!(pos, "Division by zero")),
        Div => a.wrapping_div(b),
        Mod => a.wrapping_rem(b),
        BitOr => a | b,
        BitXor => a ^ b,
        BitAnd => a & b,
        Equal => (a == b) as i32,
        NotEqual => (a != b) as i32,
        BiggerThan => (a > b) as i32,
        BiggerEqualThan => (a >= b) as i32,
        SmallerThan => (a < b) as i32,
        SmallerEqualThan => (a <= b) as i32,
        Or => (a != 0 || b != 0) as i32,
        And => (a != 0 && b != 0) as i32,
    })
}

/// `isPOT` of the official compiler (positive powers of two, 1 included).
fn is_pot(v: i32) -> bool {
    v > 0 && (v & (v - 1)) == 0
}

fn binary(pos: Pos, mut op: BinaryOp, l: Node, r: Node) -> CResult<Node> {
    use BinaryOp::*;
    let (li, ri) = (imm_of(&l), imm_of(&r));
    if let (Some(a), Some(b)) = (li, ri) {
        return Ok(Node::Imm {
            pos,
            value: fold(pos, op, a, b)?,
        });
    }
    // neutral elements: the surviving side replaces the operation
    let mut survivor_left: Option<bool> = None;
    match op {
        Mult | Div => {
            if ri == Some(1) {
                survivor_left = Some(true);
            }
            if li == Some(1) && op == Mult {
                survivor_left = Some(false);
            }
        }
        Add | Sub => {
            if ri == Some(0) {
                survivor_left = Some(true);
            }
            if li == Some(0) && op == Add {
                survivor_left = Some(false);
            }
        }
        BitOr | Or => {
            if ri == Some(0) {
                survivor_left = Some(true);
            }
            if li == Some(0) {
                survivor_left = Some(false);
            }
        }
        BitAnd => {
            if ri == Some(-1) {
                survivor_left = Some(true);
            }
            if li == Some(-1) {
                survivor_left = Some(false);
            }
        }
        And => {
            if ri.is_some_and(|v| v != 0) {
                survivor_left = Some(true);
            }
            if li.is_some_and(|v| v != 0) {
                survivor_left = Some(false);
            }
        }
        _ => {}
    }
    match survivor_left {
        Some(true) => return Ok(l),
        Some(false) => return Ok(r),
        None => {}
    }
    // absorbing elements
    if matches!(op, Mult | BitAnd | And) && (ri == Some(0) || li == Some(0)) {
        return Ok(Node::Imm { pos, value: 0 });
    }
    if op == BitOr && (ri == Some(-1) || li == Some(-1)) {
        return Ok(Node::Imm { pos, value: -1 });
    }
    if op == Or && (ri.is_some_and(|v| v != 0) || li.is_some_and(|v| v != 0)) {
        return Ok(Node::Imm { pos, value: 1 });
    }
    let mut r = r;
    if let Some(v) = ri.filter(|v| is_pot(*v)) {
        if op == Mult || op == Div {
            op = if op == Mult { ShiftLeft } else { ShiftRight };
            r = Node::Imm {
                pos: r.pos(),
                value: v.trailing_zeros() as i32,
            };
        }
    }
    if op == Div && imm_of(&r) == Some(0) {
        return Err(err!(pos, "Division by zero"));
    }
    Ok(Node::Binary {
        pos,
        op,
        l: some_box(l),
        r: some_box(r),
    })
}

fn unary(pos: Pos, op: UnaryOp, c: Node) -> CResult<Node> {
    if let Some(v) = imm_of(&c) {
        let value = match op {
            UnaryOp::Neg => v.wrapping_neg(),
            UnaryOp::Abs => {
                if v == -32768 {
                    return Err(err!(
                        pos,
                        "-32768 has no positive correspondance in 16 bits integers"
                    ));
                }
                v.wrapping_abs()
            }
            UnaryOp::BitNot => !v,
            UnaryOp::Not => (v == 0) as i32,
        };
        return Ok(Node::Imm { pos, value });
    }
    if op == UnaryOp::Not {
        if let Node::Binary { .. } = c {
            return de_morgan(c);
        }
    }
    Ok(Node::Unary {
        pos,
        op,
        c: some_box(c),
    })
}

/// `deMorganNotRemoval`: negates a condition.
fn de_morgan(n: Node) -> CResult<Node> {
    use BinaryOp::*;
    let Node::Binary { pos, op, l, r } = n else {
        return Err(internal(n.pos()));
    };
    let (op, l, r) = match op {
        Equal => (NotEqual, l, r),
        NotEqual => (Equal, l, r),
        BiggerThan => (SmallerEqualThan, l, r),
        BiggerEqualThan => (SmallerThan, l, r),
        SmallerThan => (BiggerEqualThan, l, r),
        SmallerEqualThan => (BiggerThan, l, r),
        Or => (And, some_box(de_morgan(*l)?), some_box(de_morgan(*r)?)),
        And => (Or, some_box(de_morgan(*l)?), some_box(de_morgan(*r)?)),
        _ => return Err(internal(pos)),
    };
    Ok(Node::Binary { pos, op, l, r })
}
