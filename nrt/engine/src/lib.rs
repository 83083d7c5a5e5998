//! Non-real-time domain, the network engine: network manager, engine and script loading, Aseba switch, sharing
//! policy, live parameters, and the Thymio driver model. The compiler is `nrt-compiler`; the ROS 2 bridge `nrt-ros2`.
#![warn(missing_docs)]

pub mod diagnostics;
pub mod engine;
pub mod network;
pub mod params;
pub mod policy;
pub mod rivals;
pub mod schema;
pub mod switch;
pub mod thymio;

#[cfg(any(test, feature = "testutil"))]
pub mod testutil;
