//! The checks and expansions between parsing and type checking, as the official compiler
//! does them: vector sizes, then pass 1 (compound assignments become plain ones), then pass 2
//! (vector operations become scalar ones, accesses become loads and stores).

use super::errors::{err, CResult};
use super::symbols::Symbols;
use super::tree::Node;

/// `checkVectorSize` over the vectorial tree.
pub fn check_vector_size(n: &Node) -> CResult<()> {
    match n {
        Node::Assign { pos, lhs, rhs } | Node::ArithAssign { pos, lhs, rhs, .. } => {
            let (l, r) = (lhs.vector_size()?, rhs.vector_size()?);
            if l != r {
                return Err(err!(
                    *pos,
                    "Size error! Size of array1 = {} ; size of array2 = {}",
                    l,
                    r
                ));
            }
            Ok(())
        }
        Node::IfWhen {
            pos,
            cond,
            then,
            otherwise,
            ..
        } => {
            if cond.vector_size()? != 1 {
                return Err(err!(*pos, "Condition of the if cannot be a vector"));
            }
            check_vector_size(then)?;
            if let Some(o) = otherwise {
                check_vector_size(o)?;
            }
            Ok(())
        }
        Node::While { pos, cond, body } => {
            if cond.vector_size()? != 1 {
                return Err(err!(*pos, "Condition of the while cannot be a vector"));
            }
            check_vector_size(body)
        }
        _ => {
            for c in n.children() {
                check_vector_size(c)?;
            }
            Ok(())
        }
    }
}

/// Pass 1: `v op= e` → `v = v op e`, `v++` → `v = v + [1, …]`. Tuples and memory accesses are
/// left for pass 2.
pub fn abstract_nodes(n: Node) -> CResult<Node> {
    Ok(match n {
        Node::Tuple { .. } | Node::Memory { .. } => n,
        Node::UnaryArithAssign { pos, op, mem } => {
            let size = mem.vector_size()?;
            let ones = Node::Tuple {
                pos,
                items: (0..size).map(|_| Node::Imm { pos, value: 1 }).collect(),
            };
            abstract_nodes(Node::ArithAssign {
                pos,
                op,
                lhs: mem,
                rhs: Box::new(ones),
            })?
        }
        Node::ArithAssign { pos, op, lhs, rhs } => {
            let lhs = abstract_nodes(*lhs)?;
            let rhs = abstract_nodes(*rhs)?;
            let copy = lhs.clone();
            let binary = Node::Binary {
                pos,
                op,
                l: Box::new(lhs),
                r: Box::new(rhs),
            };
            Node::Assign {
                pos,
                lhs: Box::new(copy),
                rhs: Box::new(binary),
            }
        }
        other => map_children(other, &mut |c| abstract_nodes(c))?,
    })
}

/// Rebuilds `n` with `f` applied to every child, in order.
pub fn map_children(n: Node, f: &mut impl FnMut(Node) -> CResult<Node>) -> CResult<Node> {
    let bx = |b: Box<Node>, f: &mut dyn FnMut(Node) -> CResult<Node>| -> CResult<Box<Node>> {
        Ok(Box::new(f(*b)?))
    };
    Ok(match n {
        Node::Block { pos, children } => Node::Block {
            pos,
            children: children.into_iter().map(&mut *f).collect::<CResult<_>>()?,
        },
        Node::Program { pos, children } => Node::Program {
            pos,
            children: children.into_iter().map(&mut *f).collect::<CResult<_>>()?,
        },
        Node::Assign { pos, lhs, rhs } => Node::Assign {
            pos,
            lhs: bx(lhs, f)?,
            rhs: bx(rhs, f)?,
        },
        Node::IfWhen {
            pos,
            cond,
            then,
            otherwise,
            edge,
            end_line,
        } => Node::IfWhen {
            pos,
            cond: bx(cond, f)?,
            then: bx(then, f)?,
            otherwise: match otherwise {
                Some(o) => Some(bx(o, f)?),
                None => None,
            },
            edge,
            end_line,
        },
        Node::While { pos, cond, body } => Node::While {
            pos,
            cond: bx(cond, f)?,
            body: bx(body, f)?,
        },
        Node::Emit {
            pos,
            id,
            addr,
            size,
            temp,
        } => Node::Emit {
            pos,
            id,
            addr,
            size,
            temp: match temp {
                Some(t) => Some(bx(t, f)?),
                None => None,
            },
        },
        Node::Binary { pos, op, l, r } => Node::Binary {
            pos,
            op,
            l: bx(l, f)?,
            r: bx(r, f)?,
        },
        Node::Unary { pos, op, c } => Node::Unary {
            pos,
            op,
            c: bx(c, f)?,
        },
        Node::ArrayWrite {
            pos,
            addr,
            size,
            name,
            index,
        } => Node::ArrayWrite {
            pos,
            addr,
            size,
            name,
            index: bx(index, f)?,
        },
        Node::ArrayRead {
            pos,
            addr,
            size,
            name,
            index,
        } => Node::ArrayRead {
            pos,
            addr,
            size,
            name,
            index: bx(index, f)?,
        },
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
            index: bx(index, f)?,
        },
        Node::Call {
            pos,
            id,
            args,
            templates,
        } => Node::Call {
            pos,
            id,
            args: args.into_iter().map(&mut *f).collect::<CResult<_>>()?,
            templates,
        },
        Node::Tuple { pos, items } => Node::Tuple {
            pos,
            items: items.into_iter().map(&mut *f).collect::<CResult<_>>()?,
        },
        Node::Memory {
            pos,
            addr,
            size,
            name,
            index,
            write,
        } => Node::Memory {
            pos,
            addr,
            size,
            name,
            index: match index {
                Some(i) => Some(bx(i, f)?),
                None => None,
            },
            write,
        },
        Node::ArithAssign { pos, op, lhs, rhs } => Node::ArithAssign {
            pos,
            op,
            lhs: bx(lhs, f)?,
            rhs: bx(rhs, f)?,
        },
        Node::UnaryArithAssign { pos, op, mem } => Node::UnaryArithAssign {
            pos,
            op,
            mem: bx(mem, f)?,
        },
        Node::FoldedIfWhen {
            pos,
            op,
            left,
            right,
            then,
            otherwise,
            edge,
            end_line,
        } => Node::FoldedIfWhen {
            pos,
            op,
            left: bx(left, f)?,
            right: bx(right, f)?,
            then: bx(then, f)?,
            otherwise: match otherwise {
                Some(o) => Some(bx(o, f)?),
                None => None,
            },
            edge,
            end_line,
        },
        Node::FoldedWhile {
            pos,
            op,
            left,
            right,
            body,
        } => Node::FoldedWhile {
            pos,
            op,
            left: bx(left, f)?,
            right: bx(right, f)?,
            body: bx(body, f)?,
        },
        leaf @ (Node::EventDecl { .. }
        | Node::SubDecl { .. }
        | Node::CallSub { .. }
        | Node::Imm { .. }
        | Node::Store { .. }
        | Node::Load { .. }
        | Node::Return { .. }) => leaf,
    })
}

/// Pass 2: element `index` of the vectorial node `n` as scalar nodes. `allow_temps` is false
/// for constant-expression folding (the official compiler has no allocator there).
pub fn vectorial(n: Node, sym: &mut Symbols<'_>, index: u32, allow_temps: bool) -> CResult<Node> {
    match n {
        Node::Assign { pos, lhs, rhs } => {
            let Node::Memory { name: lname, .. } = &*lhs else {
                return Err(err!(
                    pos,
                    "Expecting an assignment to a variable, found {} instead",
                    lhs.node_name()
                ));
            };
            let lsize = lhs.vector_size()?;
            if rhs.uses_name(lname) && lsize > 1 && allow_temps {
                let temp = sym.temp_assignment(pos, (*rhs).clone())?;
                let temp_var = match &temp {
                    Node::Assign { lhs, .. } => (**lhs).clone(),
                    _ => unreachable!("temp_assignment builds an assignment"),
                };
                let block = Node::Block {
                    pos,
                    children: vec![
                        temp,
                        Node::Assign {
                            pos,
                            lhs,
                            rhs: Box::new(temp_var),
                        },
                    ],
                };
                return vectorial(block, sym, 0, allow_temps);
            }
            let mut children = Vec::with_capacity(lsize as usize);
            for i in 0..lsize {
                let l = memory(&lhs, sym, i, true, allow_temps)?;
                let r = vectorial((*rhs).clone(), sym, i, allow_temps)?;
                children.push(Node::Assign {
                    pos,
                    lhs: Box::new(l),
                    rhs: Box::new(r),
                });
            }
            Ok(Node::Block { pos, children })
        }
        Node::Tuple { items, .. } => {
            let mut total = 0u32;
            for item in items {
                let prev = total;
                total = total.wrapping_add(item.vector_size()?);
                if index < total {
                    return vectorial(item, sym, index - prev, allow_temps);
                }
            }
            Err(err!(super::errors::Pos::default(), "Internal compiler error, please report a bug containing the source which triggered this error"))
        }
        m @ Node::Memory { .. } => memory(&m, sym, index, false, allow_temps),
        Node::Imm { .. } => Ok(n),
        other => map_children(other, &mut |c| vectorial(c, sym, index, allow_temps)),
    }
}

/// `MemoryVectorNode::expandVectorialNodes`: a store/load at a static address, or an indexed
/// access.
fn memory(
    m: &Node,
    sym: &mut Symbols<'_>,
    index: u32,
    write: bool,
    allow_temps: bool,
) -> CResult<Node> {
    let Node::Memory {
        pos,
        addr,
        size,
        name,
        index: idx,
        ..
    } = m
    else {
        return Err(err!(
            m.pos(),
            "Expecting an assignment to a variable, found {} instead",
            m.node_name()
        ));
    };
    match idx.as_deref() {
        None | Some(Node::Tuple { .. }) => {
            let pointer = m.vector_addr()?.wrapping_add(index);
            if pointer as u64 >= *addr as u64 + *size as u64 {
                return Err(super::tree::out_of_bound(*pos, name, index as i32, *size));
            }
            Ok(if write {
                Node::Store {
                    pos: *pos,
                    addr: pointer,
                }
            } else {
                Node::Load {
                    pos: *pos,
                    addr: pointer,
                }
            })
        }
        Some(expr) => {
            let index_node = Box::new(vectorial(expr.clone(), sym, index, allow_temps)?);
            let (pos, addr, size, name) = (*pos, *addr, *size, name.clone());
            Ok(if write {
                Node::ArrayWrite {
                    pos,
                    addr,
                    size,
                    name,
                    index: index_node,
                }
            } else {
                Node::ArrayRead {
                    pos,
                    addr,
                    size,
                    name,
                    index: index_node,
                }
            })
        }
    }
}
