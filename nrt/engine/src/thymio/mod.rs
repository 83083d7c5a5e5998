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

/// Names of the 7 horizontal proximity sensors, in `prox.horizontal` order.
pub const PROXIMITY_NAMES: [&str; 7] = [
    "left",
    "center_left",
    "center",
    "center_right",
    "right",
    "rear_left",
    "rear_right",
];

/// Names of the 2 ground sensors.
pub const GROUND_NAMES: [&str; 2] = ["left", "right"];

/// Names of the 5 buttons, in the order of the `buttons` event.
pub const BUTTON_NAMES: [&str; 5] = ["backward", "left", "center", "forward", "right"];
