//! A driver with an RT controller of one's own: thymio-rt's whole driver (command line, configuration, ROS 2 / ROS 1
//! front ends, safety) with `follow_heading` registered beside the shipped controllers. Which controllers a robot
//! loads, and their start parameters, is `control.controllers` of the configuration (my_controller.yaml).

use std::process::ExitCode;
use thymio_rt::rt::controllers::Registry;

mod follow_heading;

/// Counts the RT thread's allocations, so that `run --report` says how many there were (`allocation_counting:
/// true`); without it the driver works the same and the report says it did not count.
#[global_allocator]
static ALLOC: thymio_rt::rt::alloc::CountingAlloc = thymio_rt::rt::alloc::CountingAlloc;

fn main() -> ExitCode {
    // The shipped controllers, then ours: its owner id follows theirs.
    let mut registry = Registry::shipped();
    if let Err(e) = registry.register(
        follow_heading::NAME,
        Box::new(|init| Ok(Box::new(follow_heading::FollowHeading::new(init)?))),
    ) {
        eprintln!("my_controller: {e}");
        return ExitCode::FAILURE;
    }
    thymio_rt::run(registry)
}
