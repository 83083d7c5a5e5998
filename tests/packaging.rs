//! Built as users build them: the colcon package and an RT controller crate from outside the repository.
//!
//! One test binary per peer family (issue 43: each integration-test binary links the whole driver): each module
//! below was a binary of its own. Run one with `cargo nextest run --features ros1,ros2 --test <binary> <filter>`.

mod common;
#[path = "ros1/peers.rs"]
mod peers;
#[path = "ros/rclpy_peer.rs"]
mod rclpy_peer;

#[path = "packaging/colcon_package.rs"]
mod colcon_package;
#[path = "packaging/plugin_crate.rs"]
mod plugin_crate;
