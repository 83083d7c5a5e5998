//! Shared vocabulary of thymio-rt: the Aseba wire protocol and its codec, bytecode opcodes,
//! target descriptions and the Thymio-II robot profile (`thymio`). The RT <-> NRT transport
//! (rings, cells, endpoints, doorbells) is the `handoff` crate (`msgs/handoff`), so that the
//! compiler and the simulator build without it.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod description;
pub mod opcodes;
pub mod reassembler;
pub mod target;
pub mod thymio;
pub mod wire;
pub mod yaml_guard;
