//! Aseba peers without ROS: the network tools and the switch against official nodes, the simulated Thymio against
//! official clients, the compiler and the VM against the official ones, the built-in descriptions, a second driver on
//! one robot.
//!
//! One test binary per peer family (issue 43: each integration-test binary links the whole driver): each module
//! below was a binary of its own. Run one with `cargo nextest run --features ros1,ros2 --test <binary> <filter>`.

mod common;

#[path = "aseba/aseba_peers.rs"]
mod aseba_peers;
#[path = "aseba/compiler_corpus.rs"]
mod compiler_corpus;
#[path = "aseba/descriptions.rs"]
mod descriptions;
#[path = "aseba/second_driver.rs"]
mod second_driver;
#[path = "aseba/sim_peers.rs"]
mod sim_peers;
#[path = "aseba/sim_robot.rs"]
mod sim_robot;
#[path = "aseba/vm_differential.rs"]
mod vm_differential;
