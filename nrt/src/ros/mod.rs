//! ROS 2 bridge (feature `ros2`): the NRT thread that owns the r2r node.

#[cfg(test)]
#[path = "../../../tests/ros/rclpy_peer.rs"]
mod rclpy_peer;
#[cfg(test)]
mod smoke_tests;
