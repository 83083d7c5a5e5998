//! The Thymio driver logic of ROS-Thymio (ros-aseba-interface.md §3), free of ROS: sensor
//! conversions (REP-117 ranges, laser scan, IMU, buttons), actuator commands validated and
//! turned into the robot script's events, calibration, frames and the robot model. The ROS 2
//! bridge maps these values to messages; the RT domain does odometry and velocity mapping.

pub mod actuators;
pub mod calibration;
pub mod calibration_file;
pub mod calibration_fit;
pub mod calibration_run;
pub mod events;
pub mod model;
pub mod motion_limits;
pub mod odometry_params;
pub mod params;
pub mod sensors;

// The names of the sensors and buttons are the robot profile's (`msgs::thymio`), re-exported
// here beside the driver logic that uses them.
pub use msgs::thymio::{BUTTON_NAMES, GROUND_NAMES, PROXIMITY_NAMES};
