//! The project's own tools: the scripts' environment, the documentation's links, the rule for a test that could check
//! nothing, the multi-host test bench.
//!
//! One test binary per peer family (issue 43: each integration-test binary links the whole driver): each module
//! below was a binary of its own. Run one with `cargo nextest run --features ros1,ros2 --test <binary> <filter>`.

mod common;
#[path = "ros/rclpy_peer.rs"]
mod rclpy_peer;

#[path = "project/domain.rs"]
mod domain;
#[path = "project/netns_lan.rs"]
mod netns_lan;
#[path = "project/scripts_env.rs"]
mod scripts_env;
#[path = "project/skip_rule.rs"]
mod skip_rule;
