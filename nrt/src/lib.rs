//! Non-real-time domain: network manager, compiler and script loading, Aseba switch, ROS 2 bridge.
#![warn(missing_docs)]

pub mod compiler;
pub mod engine;
pub mod network;
pub mod params;
pub mod policy;
#[cfg(feature = "ros2")]
pub mod ros;
pub mod switch;
pub mod thymio;

#[cfg(test)]
mod testutil;
