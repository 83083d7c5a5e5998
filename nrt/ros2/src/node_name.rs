//! The driver node's name (a leaf module: the node and the parameter-file checks both use it).

/// The node name, ROS-Thymio's.
pub const NODE_NAME: &str = "thymio_driver";
