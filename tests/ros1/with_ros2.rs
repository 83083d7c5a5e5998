//! Both front ends at once (`--features ros1,ros2`, `thymio-rt run --ros1` with the ROS 2 bridge on): one engine,
//! one RT odometry ring and publisher thread each. rospy drives the simulated robot through ROS 1 and receives ROS
//! 1's odometry, while an rclpy subscriber receives ROS 2's `odom` of the same motion (neither ring starves the
//! other).
#![cfg(all(feature = "ros1", feature = "ros2"))]

use crate::common;
use crate::peers;
use crate::rclpy_peer;

use common::{free_port, Proc};
use peers::{driver_command, need_ros1, rosmaster, rospy};
use rclpy_peer::{test_domain_id, RclpyPeer};
use std::time::{Duration, Instant};

#[test]
fn ros1_and_ros2_front_ends_run_side_by_side() {
    if !need_ros1() {
        return; // peer missing, run opted out: skip recorded
    }
    let deadline = Instant::now() + Duration::from_secs(150);
    let port = free_port();
    let _master = rosmaster(port);
    let mut c = driver_command(port);
    c.env("ROS_DOMAIN_ID", test_domain_id().to_string())
        .env("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
        .env_remove("LD_LIBRARY_PATH")
        .env_remove("LD_PRELOAD");
    let mut drv = Proc::spawn("thymio-rt --ros1 (and ROS 2)", c);
    drv.wait_line(Duration::from_secs(60), |l| {
        l.contains("ROS 2 and ROS 1 interfaces up")
    });
    let mut peer = RclpyPeer::serve(test_domain_id(), deadline).unwrap();
    peer.subscribe("/odom", "nav_msgs/msg/Odometry", "volatile", deadline)
        .unwrap();
    let d = rospy(port, &["drive", "20"], Duration::from_secs(40));
    assert!(
        d["odom_dx"].as_f64().unwrap_or(0.0) > 0.01,
        "ROS 1 did not see the robot move: {d}"
    );
    let m = peer
        .message("/odom", deadline, |m| {
            m["pose"]["pose"]["position"]["x"].as_f64().unwrap_or(0.0) > 0.01
        })
        .unwrap_or_else(|e| panic!("ROS 2 odom did not follow: {e}"));
    assert_eq!(m["header"]["frame_id"], "odom", "{m}");
    drv.drain();
}
