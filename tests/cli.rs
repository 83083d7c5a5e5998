//! The command line: every subcommand's refusals, and what a build without ROS 1 says. Also run by the build without
//! ROS (scripts/test.sh).
//!
//! One test binary per peer family (issue 43: each integration-test binary links the whole driver): each module
//! below was a binary of its own. Run one with `cargo nextest run --features ros1,ros2 --test <binary> <filter>`.

mod common;

#[path = "cli/cli_args.rs"]
mod cli_args;
#[path = "cli/ros1_cli.rs"]
mod ros1_cli;
