//! Non-real-time domain: network manager, compiler and script loading, Aseba switch, ROS 2 bridge.
