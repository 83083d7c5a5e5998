//! The ROS 2 front end end to end through rclpy (feature `ros2`): the asebaros and ROS-Thymio interfaces, control,
//! parameters, TF, several robots, several hosts, faults of the network.
//!
//! One test binary per peer family (issue 43: each integration-test binary links the whole driver): each module
//! below was a binary of its own. Run one with `cargo nextest run --features ros1,ros2 --test <binary> <filter>`.

mod common;
#[path = "ros/hosts.rs"]
mod lan_hosts;
#[path = "ros/rclpy_peer.rs"]
mod rclpy_peer;
#[path = "ros/driver.rs"]
mod ros_driver;

#[path = "ros2/aliases.rs"]
mod aliases;
#[path = "ros2/bridge.rs"]
mod bridge;
#[path = "ros2/calibration.rs"]
mod calibration;
#[path = "ros2/control.rs"]
mod control;
#[path = "ros2/dropin.rs"]
mod dropin;
#[path = "ros2/hosts.rs"]
mod hosts;
#[path = "ros2/hot_path.rs"]
mod hot_path;
#[path = "ros2/input.rs"]
mod input;
#[path = "ros2/multi.rs"]
mod multi;
#[path = "ros2/net_faults.rs"]
mod net_faults;
#[path = "ros2/params.rs"]
mod params;
#[path = "ros2/rivals.rs"]
mod rivals;
#[path = "ros2/soak.rs"]
mod soak;
#[path = "ros2/tf.rs"]
mod tf;
#[path = "ros2/thymio.rs"]
mod thymio;
