//! "ROS from the RT layer" (the XBotCore pattern, ROS-free here): code that runs inside the RT
//! cycle and talks to the NRT side only through the handoff primitives of `handoff`
//! (`publisher`, `latest`, `service`, the typed endpoints of `ControllerInit`), whose RT halves
//! never block or allocate.
//!
//! - [`Controller`]: code that can own a robot's wheels (one instance per robot slot, made by a
//!   [`Registry`] factory at init); the communication switch picks the owner per robot.
//!   Shipped ([`Registry::shipped`]): [`LineFollower`] (`line_follower`), [`GoToPose`]
//!   (`go_to_pose`), [`CalibrateMotors`] (`calibrate_motors`) and the goal controllers
//!   ([`GoalController`] with a [`Motion`]: `drive_distance`, `rotate_angle`,
//!   `navigate_to_position`), whose goals come through a private goal port.
//! - [`Filter`]: code applied to whatever the owner commands; [`ObstacleStop`] and
//!   [`CliffStop`] are, and [`PickupStop`] (their tunables come through a latest-value cell, their edges go out
//!   through a publisher).

pub mod calibration;
mod calibration_timing;
mod cliff;
mod controller;
pub mod go_to_pose;
pub mod goal;
pub mod goal_motions;
#[cfg(test)]
mod goal_tests;
pub mod line_follower;
mod obstacle;
mod pickup;
mod reflex;
mod registry;

pub use calibration::CalibrateMotors;
pub use calibration_timing::LineTimer;
pub use cliff::{CliffStop, CliffStopParams};
pub use controller::{Controller, Filter, Reflex, Reflexes, RobotView};
pub use go_to_pose::GoToPose;
pub use goal::{GoalController, Motion, Step};
pub use goal_motions::{DriveDistance, NavigateToPosition, RotateAngle};
pub use line_follower::LineFollower;
pub use obstacle::{ObstacleStop, ObstacleStopParams};
pub use pickup::{classify as pickup_sample, PickupStop, PickupStopParams, Sample as PickupSample};
pub use reflex::{hold_translation, ReflexEvent, ReflexState};
pub use registry::{ControllerFactory, Registry, RegistryError, RtControllers, SHIPPED};
