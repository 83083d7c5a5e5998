//! The network manager: discovery, descriptions, acceptance, variables, events, commands —
//! as asebaros does it (ros-aseba-interface.md §2.4, aseba.md §2.3–2.8).
//!
//! It is sans-IO: frames come in through [`NetworkManager::on_frame`], frames to send go out
//! through [`NetworkManager::pop_outgoing`], and what happened is reported as
//! [`NetworkEvent`]s. Time is passed in, so the behaviour is deterministic and testable; the
//! NRT loop glues it to the RT rings (or, in tools, to a link directly).

mod manager;
mod node;
mod requests;
mod types;

pub use manager::NetworkManager;
pub use node::{IgnoreReason, LoadedScript, Node, NodeState, Via};
pub use requests::RequestId;
pub use types::{Command, Dest, ManagerConfig, NetError, NetworkEvent, Outgoing};

/// Protocol version this host announces.
pub const HOST_PROTOCOL_VERSION: u16 = 9;
/// Lowest protocol version of a target node (`ASEBA_MIN_TARGET_PROTOCOL_VERSION`).
pub const MIN_TARGET_PROTOCOL_VERSION: u16 = 4;

#[cfg(test)]
mod tests;
