//! `thymio-rt run --ros1` on a build without the feature `ros1` fails at once, saying how to build it (it
//! neither runs without ROS 1 nor ignores the flag).
#![cfg(not(feature = "ros1"))]

use crate::common;

use std::time::Duration;

#[test]
fn ros1_without_the_feature_says_how_to_build_it() {
    let mut c = common::thymio_rt();
    c.args([
        "run",
        "--ros1",
        "--no-ros",
        "--duration",
        "5",
        "--switch-port",
        "0",
    ]);
    let mut p = common::Proc::spawn("thymio-rt run --ros1", c);
    let status = p.wait_exit(Duration::from_secs(20));
    assert!(!status.success(), "{}", p.seen.join("\n"));
    assert!(
        p.seen.iter().any(|l| l.contains("--features ros1")),
        "{}",
        p.seen.join("\n")
    );
}
