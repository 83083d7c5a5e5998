//! The Aseba compiler: Aseba source to a bytecode image, word for word what the official
//! (Mobsya) compiler produces (aseba.md §3.2–3.11).
//!
//! The passes are those of the official compiler: tokenize, parse to a vectorial tree (with
//! the temporaries allocator), check vector sizes, expand compound assignments, expand
//! vector operations to scalar ones, type-check, optimise, emit one bytecode segment per event
//! and subroutine, fix up, check the stack, link. Every failure is a [`CompileError`] with a
//! 1-based line and column and the official wording; no input makes the compiler panic.
//!
//! ```
//! use msgs::description::thymio_ii_fw14;
//! use nrt_compiler::{compile, disasm::disassemble};
//!
//! let source = "var turns = 0\n\
//!               onevent button.center\n\
//!               \tturns = turns + 1\n\
//!               \tmotor.left.target = 200\n";
//! let target = thymio_ii_fw14();
//! let program = compile(source, &target, &[], &[]).expect("a valid program");
//! // The script's own variables come after the target's (Thymio-II: 128 words).
//! assert_eq!(program.variables[0].name, "turns");
//! assert_eq!(program.variables[0].address, 128);
//! // One bytecode image: event vector table, then code; one source line per word.
//! assert_eq!(program.lines.len(), program.bytecode.len());
//! assert!(disassemble(&program.bytecode, &target, &[]).contains("button.center"));
//! ```
#![warn(missing_docs)]

pub mod aesl;
pub mod disasm;
mod emit;
mod errors;
mod expand;
mod lexer;
mod optimize;
mod parser;
mod symbols;
mod tree;
mod typecheck;

#[cfg(test)]
mod tests;

pub use aesl::{parse_aesl, Aesl, AeslError, AeslNode};
pub use errors::CompileError;
pub use lexer::is_keyword;

use msgs::description::{NamedVariable, TargetDescription};

/// A global event: name and argument size in words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventDef {
    /// Name.
    pub name: String,
    /// Argument size in words.
    pub size: u16,
}

/// A compiled program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Program {
    /// The whole bytecode image: event vector table then code.
    pub bytecode: Vec<u16>,
    /// 0-based source line of each bytecode word (0 for the event table).
    pub lines: Vec<u16>,
    /// Variables the script defines (beyond the target's), in address order.
    pub variables: Vec<NamedVariable>,
    /// Words of variable memory used by named variables (target's and script's).
    pub allocated_variables: u16,
    /// Maximum evaluation-stack depth per event id (for reports).
    pub max_stack: Vec<(u16, u32)>,
}

/// Compiles `source` for `target`, with the network's global `events` (id = index) and
/// `constants`.
///
/// Errors carry the 1-based position and the official compiler's wording:
///
/// ```
/// use msgs::description::thymio_ii_fw14;
/// use nrt_compiler::{compile, EventDef};
///
/// let events = [EventDef { name: "ping".into(), size: 1 }];
/// let constants = [("LIMIT".to_string(), 3)];
/// let ok = compile("var n = LIMIT\nemit ping [n]\n", &thymio_ii_fw14(), &events, &constants);
/// assert!(ok.is_ok());
///
/// let err = compile("var n = 1\nn = m + 1\n", &thymio_ii_fw14(), &events, &constants).unwrap_err();
/// assert_eq!((err.line, err.col), (2, 5));
/// assert!(err.message.contains("m"), "{}", err.message);
/// ```
pub fn compile(
    source: &str,
    target: &TargetDescription,
    events: &[EventDef],
    constants: &[(String, i32)],
) -> Result<Program, CompileError> {
    let events: Vec<(String, i32)> = events
        .iter()
        .map(|e| (e.name.clone(), e.size as i32))
        .collect();
    let mut sym = symbols::Symbols::new(target, events, constants);
    if sym.free_var > target.variables_size as u32 {
        return Err(CompileError {
            line: 0,
            col: 0,
            message: "Broken target description: not enough room for internal variables".into(),
        });
    }
    let tokens = lexer::tokenize(source)?;
    let program = parser::Parser::new(tokens, &mut sym).program()?;
    expand::check_vector_size(&program)?;
    let program = expand::abstract_nodes(program)?;
    let mut program = expand::vectorial(program, &mut sym, 0, true)?;
    typecheck::typecheck(&mut program, &sym)?;
    let program = optimize::optimize(program)?.unwrap_or(tree::Node::Program {
        pos: errors::Pos::default(),
        children: Vec::new(),
    });
    let mut pre = emit::Emitter::new().program(&program)?;
    let sub_lines: Vec<u32> = sym.subroutines.iter().map(|(_, line)| *line).collect();
    pre.fixup(&sub_lines);
    if !pre.verify_stack(target.stack_size as u32) {
        return Err(CompileError {
            line: 0,
            col: 0,
            message: "Execution stack will overflow, check for any recursive subroutine call and cut long mathematical expressions".into(),
        });
    }
    let (bytecode, lines) = pre.link(target.bytecode_size as usize)?;
    let named = target.named_variables_size() as u32;
    let mut variables: Vec<NamedVariable> = sym
        .variables
        .iter()
        .filter(|(_, (addr, _))| *addr >= named)
        .map(|(name, (addr, size))| NamedVariable {
            name: name.clone(),
            address: *addr as u16,
            size: *size as u16,
        })
        .collect();
    variables.sort_by_key(|v| v.address);
    Ok(Program {
        bytecode,
        lines,
        variables,
        allocated_variables: sym.free_var as u16,
        max_stack: pre
            .events
            .iter()
            .map(|(id, s)| (*id, s.max_stack))
            .collect(),
    })
}
