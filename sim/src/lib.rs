//! Aseba VM and the simulated Thymio-II, with its servers.
//!
//! - [`vm`]: the Aseba virtual machine and the standard natives, as the official ones.
//! - [`node`]: the node side of the Aseba protocol around a VM.
//! - [`thymio`]: the simulated Thymio-II (firmware, body, arena).
//! - [`rx`]: how a simulated node frames the bytes it receives (as the firmware, but never wedged).
//! - [`world`]: robots stepping together in real time (or faster), with in-process byte pipes.
//! - [`server`]: robots served over TCP (one port per robot) and pseudo-terminals.

pub mod generic;
pub mod node;
pub mod rng;
pub mod rx;
pub mod server;
pub mod thymio;
pub mod vm;
pub mod world;
