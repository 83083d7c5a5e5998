//! Another driver on our names, seen by the ROS 1 front end through the master (issue 25 item 3): another node
//! publishing a robot's `odom` is said loudly on the console, and an ERROR status `asebaros: Name conflicts` is in
//! `/diagnostics` until it is gone.
#![cfg(feature = "ros1")]

use crate::common;
use crate::peers;

use common::{free_port, Proc};
use peers::{driver, master_uri, need_ros1, rosmaster, PYTHON};
use std::process::Command;
use std::time::Duration;

/// A rospy node `name` that publishes `topic` (nav_msgs/Odometry) until its standard input closes.
fn rival(port: u16, name: &str, topic: &str) -> Proc {
    let mut c = Command::new("timeout");
    c.args(["120", PYTHON, "-c"])
        .arg(
            "import sys, rospy\nfrom nav_msgs.msg import Odometry\nrospy.init_node(sys.argv[1], anonymous=False, \
             disable_signals=True)\np = rospy.Publisher(sys.argv[2], Odometry, queue_size=1)\nprint('up', flush=True)\n\
             sys.stdin.read()\n",
        )
        .args([name, topic])
        .env("ROS_MASTER_URI", master_uri(port))
        .env("ROS_IP", "127.0.0.1")
        .env(
            "ROS_HOME",
            std::env::temp_dir().join(format!("ros1-home-{port}")),
        );
    let mut p = Proc::spawn("rospy rival", c);
    p.wait_line(Duration::from_secs(30), |l| l == "up");
    p
}

/// The level of `asebaros: Name conflicts` in the next `/diagnostics` that has it (rospy), or -1.
fn conflicts_level(port: u16) -> i64 {
    let out = Command::new("timeout")
        .args(["30", PYTHON, "-c"])
        .arg(
            "import rospy\nfrom diagnostic_msgs.msg import DiagnosticArray\nrospy.init_node('diag_reader', \
             anonymous=True, disable_signals=True)\nfor _ in range(10):\n    a = rospy.wait_for_message(\
             '/diagnostics', DiagnosticArray, timeout=5)\n    s = [s for s in a.status if s.name == \
             'asebaros: Name conflicts']\n    if s:\n        print(s[0].level)\n        break\n",
        )
        .env("ROS_MASTER_URI", master_uri(port))
        .env("ROS_IP", "127.0.0.1")
        .output()
        .expect("rospy");
    String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .unwrap_or(-1)
}

#[test]
fn another_publisher_of_odom_is_said_loudly_and_in_diagnostics() {
    if !need_ros1() {
        return; // peer missing, run opted out: skip recorded
    }
    let port = free_port();
    let _master = rosmaster(port);
    let mut d = driver(port, &[]);
    d.wait_line(Duration::from_secs(60), |l| l.contains("Thymio node"));
    let mut other = rival(port, "other_driver", "/odom");
    let line = d.wait_line(Duration::from_secs(20), |l| {
        l.contains("another driver publishes /odom")
    });
    assert!(
        line.contains("/other_driver") && line.contains("ERROR"),
        "{line}"
    );
    assert_eq!(conflicts_level(port), 2);
    other.close_stdin();
    other.wait_exit(Duration::from_secs(10));
    d.wait_line(Duration::from_secs(20), |l| {
        l.contains("again the only publisher of /odom")
    });
    assert_eq!(conflicts_level(port), 0);
}
