"""A package of a ROS 2 workspace that uses thymio_rt_msgs (tests/packaging/colcon_package.rs)."""
