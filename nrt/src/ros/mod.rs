//! ROS 2 bridge (feature `ros2`): the NRT thread that owns the r2r node.
