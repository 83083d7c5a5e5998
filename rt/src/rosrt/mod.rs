//! "ROS from the RT layer" (the XBotCore pattern, ROS-free here): code that runs inside the RT
//! cycle and talks to the NRT side only through the handoff primitives of `msgs::handoff`
//! (`publisher`, `latest`, `service`), whose RT halves never block or allocate.
//!
//! - [`Controller`]: code that runs inside the RT cycle with read access to a robot's state and
//!   write access to its velocity command; [`ObstacleStop`] is the shipped example (its
//!   tunables come through a latest-value cell, its edges go out through a publisher).

mod controller;
mod obstacle;

pub use controller::{Controller, RobotView};
pub use obstacle::{ObstacleStop, ObstacleStopParams, ReflexEvent};
