//! The driver without ROS, as a user starts it: defaults, `--record` refusals, privileges, the RT controllers in
//! closed loop, and the faults it must survive (link faults, hostile input, stops).
//!
//! One test binary per peer family (issue 43: each integration-test binary links the whole driver): each module
//! below was a binary of its own. Run one with `cargo nextest run --features ros1,ros2 --test <binary> <filter>`.

mod common;

#[path = "driver/faults.rs"]
mod faults;
#[path = "driver/faults_input.rs"]
mod faults_input;
#[path = "driver/faults_stop.rs"]
mod faults_stop;
#[path = "driver/faults_switch.rs"]
mod faults_switch;
#[path = "driver/privileges.rs"]
mod privileges;
#[path = "driver/record_args.rs"]
mod record_args;
#[path = "driver/rt_closed_loop.rs"]
mod rt_closed_loop;
#[path = "driver/run_defaults.rs"]
mod run_defaults;
