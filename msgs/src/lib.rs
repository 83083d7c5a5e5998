//! Shared vocabulary of thymio-rt: the Aseba wire protocol and its codec, bytecode opcodes,
//! target descriptions, and the fixed-size messages exchanged between the RT and NRT domains.
// Unsafe code only in `handoff::latest` (the triple buffer), each use with its SAFETY line.
#![deny(unsafe_code)]
#![warn(missing_docs)]

pub mod description;
pub mod handoff;
pub mod opcodes;
pub mod reassembler;
pub mod target;
pub mod wire;
