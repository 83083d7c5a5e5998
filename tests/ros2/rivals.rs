//! Two drivers on the same names (issue 25 item 3): started with the same defaults on one ROS network (one robot
//! each, the same namespace), both would serve the same `cmd_vel`, so that a command meant for one robot moves
//! both. Each driver notices the other's `odom` within seconds and says so loudly — an error on the console and on
//! `/rosout` naming the publishers, an ERROR status `asebaros: Name conflicts` in `/diagnostics` — and says when it
//! is again alone.
#![cfg(feature = "ros2")]

use crate::ros_driver;

use ros_driver::{
    driver_script_yaml, ros_driver, rosout_peer, stop, subscribe_diagnostics, LOG_ERROR,
};
use serde_json::Value;
use std::time::{Duration, Instant};

const TEST_TIMEOUT: Duration = Duration::from_secs(180);

fn conflicts_status(array: &Value) -> Option<Value> {
    array["status"]
        .as_array()?
        .iter()
        .find(|s| s["name"] == "asebaros: Name conflicts")
        .cloned()
}

/// One test, two scenarios in turn: both would share the test's ROS domain, and a conflict of one would be seen on
/// the other's `/rosout` and `/diagnostics`.
#[test]
fn drivers_on_the_same_names_see_each_other_and_drivers_in_their_own_namespaces_do_not() {
    let deadline = Instant::now() + TEST_TIMEOUT;
    drivers_in_their_own_namespaces_are_no_rivals(deadline);
    two_drivers_on_the_same_names_see_each_other_and_say_so(deadline);
}

fn two_drivers_on_the_same_names_see_each_other_and_say_so(deadline: Instant) {
    let dir = tempfile::tempdir().unwrap();
    let ns = format!("rv{}", std::process::id());
    let odom = format!("/{ns}/odom");
    let yaml = driver_script_yaml();
    let mut peer = rosout_peer(deadline);
    subscribe_diagnostics(&mut peer, deadline);

    let mut first = ros_driver(dir.path(), &ns, &yaml, &["--switch-port", "0"], &[]);
    // alone: no conflict
    let alone = peer
        .message("/diagnostics", deadline, |a| conflicts_status(a).is_some())
        .unwrap();
    assert_eq!(conflicts_status(&alone).unwrap()["level"], 0, "{alone}");

    let second_dir = tempfile::tempdir().unwrap();
    let mut second = ros_driver(second_dir.path(), &ns, &yaml, &["--switch-port", "0"], &[]);
    let started = Instant::now();
    for d in [&mut first, &mut second] {
        let line = d.wait_line(Duration::from_secs(30), |l| {
            l.contains("another driver publishes") && l.contains(&odom)
        });
        assert!(line.contains("2 publishers"), "{line}");
    }
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "the conflict took {:?} to be noticed",
        started.elapsed()
    );
    // on /rosout, as an error
    let log = peer
        .message("/rosout", deadline, |m| {
            m["msg"]
                .as_str()
                .is_some_and(|t| t.contains("another driver publishes"))
        })
        .unwrap();
    assert_eq!(log["level"].as_u64(), Some(LOG_ERROR), "{log}");
    // and ERROR in /diagnostics, naming the topic
    let array = peer
        .message("/diagnostics", deadline, |a| {
            conflicts_status(a).is_some_and(|s| s["level"] == 2)
        })
        .unwrap();
    let status = conflicts_status(&array).unwrap();
    assert!(
        status["message"].as_str().unwrap().contains(&odom),
        "{status}"
    );

    // the second one goes: the first is alone again and says so
    stop(second);
    first.wait_line(Duration::from_secs(30), |l| {
        l.contains("again the only publisher") && l.contains(&odom)
    });
    peer.message("/diagnostics", deadline, |a| {
        conflicts_status(a).is_some_and(|s| s["level"] == 0)
    })
    .unwrap();
    stop(first);
}

fn drivers_in_their_own_namespaces_are_no_rivals(deadline: Instant) {
    let dir = tempfile::tempdir().unwrap();
    let pid = std::process::id();
    let yaml = driver_script_yaml();
    let mut peer = rosout_peer(deadline);
    subscribe_diagnostics(&mut peer, deadline);
    let a = ros_driver(
        dir.path(),
        &format!("na{pid}"),
        &yaml,
        &["--switch-port", "0"],
        &[],
    );
    let b = ros_driver(
        dir.path(),
        &format!("nb{pid}"),
        &yaml,
        &["--switch-port", "0"],
        &[],
    );
    // both robots' odometry flows, and three rounds of checks later no conflict was said
    for ns in [format!("na{pid}"), format!("nb{pid}")] {
        peer.subscribe(
            &format!("/{ns}/odom"),
            "nav_msgs/msg/Odometry",
            "volatile",
            deadline,
        )
        .unwrap();
        peer.message(&format!("/{ns}/odom"), deadline, |_| true)
            .unwrap();
    }
    let mut seen = 0;
    while seen < 3 {
        let array = peer
            .message("/diagnostics", deadline, |a| conflicts_status(a).is_some())
            .unwrap();
        assert_eq!(conflicts_status(&array).unwrap()["level"], 0, "{array}");
        seen += 1;
    }
    assert!(!peer.received("/rosout", |m| m["msg"]
        .as_str()
        .is_some_and(|t| t.contains("another driver publishes"))));
    stop(a);
    stop(b);
}
