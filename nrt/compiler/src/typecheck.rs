//! Type checking of the scalar tree (unit, bool, integer), as the official compiler does it:
//! conditions of `if`/`when`/`while` must be comparisons, `and`/`or` or `not`; subroutine
//! calls are resolved here.

use super::errors::{err, CResult, Pos};
use super::symbols::{find, Symbols};
use super::tree::Node;
use msgs::opcodes::{BinaryOp, UnaryOp};

/// The type of a node's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ty {
    /// A statement.
    Unit,
    /// A condition.
    Bool,
    /// A 16-bit integer.
    Int,
}

impl Ty {
    fn name(self) -> &'static str {
        match self {
            Ty::Unit => "unit",
            Ty::Bool => "bool",
            Ty::Int => "integer",
        }
    }
}

fn expect(pos: Pos, expected: Ty, found: Ty) -> CResult<()> {
    if expected != found {
        return Err(err!(
            pos,
            "Expecting {} type, found {} type instead",
            expected.name(),
            found.name()
        ));
    }
    Ok(())
}

fn is_condition(n: &Node) -> bool {
    match n {
        Node::Binary { op, .. } => {
            (*op as u8) >= BinaryOp::Equal as u8 && (*op as u8) <= BinaryOp::And as u8
        }
        Node::Unary { op, .. } => *op == UnaryOp::Not,
        _ => false,
    }
}

fn check_condition(cond: &Node) -> CResult<()> {
    if !is_condition(cond) {
        return Err(err!(
            cond.pos(),
            "Expecting a condition, found a {} instead",
            cond.node_name()
        ));
    }
    Ok(())
}

/// Type-checks `n` (mutably: subroutine ids are filled in) and returns its type.
pub fn typecheck(n: &mut Node, sym: &Symbols<'_>) -> CResult<Ty> {
    let pos = n.pos();
    match n {
        Node::Assign { lhs, rhs, .. } => {
            let t = typecheck(lhs, sym)?;
            expect(pos, Ty::Unit, t)?;
            let t = typecheck(rhs, sym)?;
            expect(pos, Ty::Int, t)?;
            Ok(Ty::Unit)
        }
        Node::IfWhen { cond, then, otherwise, .. } => {
            let t = typecheck(cond, sym)?;
            expect(pos, Ty::Bool, t)?;
            let t = typecheck(then, sym)?;
            expect(pos, Ty::Unit, t)?;
            if let Some(o) = otherwise {
                let t = typecheck(o, sym)?;
                expect(pos, Ty::Unit, t)?;
            }
            check_condition(cond)?;
            Ok(Ty::Unit)
        }
        Node::While { cond, body, .. } => {
            let t = typecheck(cond, sym)?;
            expect(pos, Ty::Bool, t)?;
            let t = typecheck(body, sym)?;
            expect(pos, Ty::Unit, t)?;
            check_condition(cond)?;
            Ok(Ty::Unit)
        }
        Node::CallSub { name, id, .. } => {
            let found = find(
                &sym.sub_by_name,
                name,
                pos,
                |n| format!("Subroutine {n} does not exists"),
                |n, b| format!("Subroutine {n} does not exists, do you mean {b}?"),
            )?;
            *id = Some(found);
            Ok(Ty::Unit)
        }
        Node::Binary { op, l, r, .. } => {
            let op = *op;
            let (operand, result) = match op {
                BinaryOp::Equal
                | BinaryOp::NotEqual
                | BinaryOp::BiggerThan
                | BinaryOp::BiggerEqualThan
                | BinaryOp::SmallerThan
                | BinaryOp::SmallerEqualThan => (Ty::Int, Ty::Bool),
                BinaryOp::Or | BinaryOp::And => (Ty::Bool, Ty::Bool),
                _ => (Ty::Int, Ty::Int),
            };
            let t = typecheck(l, sym)?;
            expect(pos, operand, t)?;
            let t = typecheck(r, sym)?;
            expect(pos, operand, t)?;
            Ok(result)
        }
        Node::Unary { op, c, .. } => {
            let (operand, result) = if *op == UnaryOp::Not { (Ty::Bool, Ty::Bool) } else { (Ty::Int, Ty::Int) };
            let t = typecheck(c, sym)?;
            expect(pos, operand, t)?;
            Ok(result)
        }
        Node::Imm { .. } | Node::Load { .. } | Node::ArrayRead { .. } | Node::LoadNativeArg { .. } => Ok(Ty::Int),
        Node::EventDecl { .. }
        | Node::Emit { .. }
        | Node::SubDecl { .. }
        | Node::Store { .. }
        | Node::ArrayWrite { .. }
        | Node::Call { .. }
        | Node::Return { .. } => Ok(Ty::Unit),
        Node::Block { children, .. } | Node::Program { children, .. } => {
            for c in children {
                typecheck(c, sym)?;
            }
            Ok(Ty::Unit)
        }
        other => Err(err!(
            pos,
            "Internal compiler error, please report a bug containing the source which triggered this error ({})",
            other.node_name()
        )),
    }
}
