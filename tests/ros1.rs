//! The ROS 1 front end end to end with Debian's rosmaster, rospy, actionlib, dynamic_reconfigure, roslaunch (feature
//! `ros1`).
//!
//! One test binary per peer family (issue 43: each integration-test binary links the whole driver): each module
//! below was a binary of its own. Run one with `cargo nextest run --features ros1,ros2 --test <binary> <filter>`.

mod common;
#[path = "ros1/peers.rs"]
mod peers;
#[path = "ros/rclpy_peer.rs"]
mod rclpy_peer;

#[path = "ros1/aligned.rs"]
mod aligned;
#[path = "ros1/args.rs"]
mod args;
#[path = "ros1/bridge.rs"]
mod bridge;
#[path = "ros1/calibration.rs"]
mod calibration;
#[path = "ros1/control.rs"]
mod control;
#[path = "ros1/hostile.rs"]
mod hostile;
#[path = "ros1/hosts.rs"]
mod hosts;
#[path = "ros1/joints.rs"]
mod joints;
#[path = "ros1/reconfigure.rs"]
mod reconfigure;
#[path = "ros1/rivals.rs"]
mod rivals;
#[path = "ros1/with_ros2.rs"]
mod with_ros2;
