//! Real-time domain: links, the pinned RT loop, odometry, velocity mapping, safety.
#![warn(missing_docs)]
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(clippy::undocumented_unsafe_blocks)]

pub mod alloc;
pub mod clock;
pub mod controller_report;
pub mod controllers;
pub mod hist;
pub mod link;
pub mod link_port;
pub mod mapping;
pub mod motion_limits;
pub mod nrt_connector;
pub mod odometry;
pub mod replay;
pub mod report;
pub mod robot;
pub mod rtloop;
pub mod sched;
pub mod signals;

#[cfg(test)]
mod testutil;
