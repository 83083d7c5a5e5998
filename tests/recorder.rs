//! The flight recorder end to end: recording the driver, replaying the recordings.
//!
//! One test binary per peer family (issue 43: each integration-test binary links the whole driver): each module
//! below was a binary of its own. Run one with `cargo nextest run --features ros1,ros2 --test <binary> <filter>`.

mod common;
#[path = "ros/rclpy_peer.rs"]
mod rclpy_peer;
#[path = "ros/driver.rs"]
mod ros_driver;

#[path = "recorder/recorder.rs"]
mod recorder;
#[path = "recorder/replay.rs"]
mod replay;
