//! ROS 1 across hosts (issue 25 items 2 and 4), each host a network namespace of its own (tests/common/netns.rs):
//! Debian's rosmaster on one host, `thymio-rt run --ros1` on the robot's host (`ROS_IP` of its interface), rospy on
//! a laptop (`ROS_IP` of its own): the laptop gets odometry and drives the robot. The master host's link goes down
//! and comes back, then the master is killed and another one started: the driver keeps serving without a restart
//! and the laptop drives it again each time.
#![cfg(feature = "ros1")]

mod common;
#[path = "ros1/peers.rs"]
mod peers;

use common::netns::{Lan, Multicast};
use common::Proc;
use peers::{need_ros1, rospy_in, PYTHON};
use serde_json::Value;
use std::process::Stdio;
use std::time::{Duration, Instant};

const MASTER_PORT: u16 = 11311;
const TEST_TIMEOUT: Duration = Duration::from_secs(150);

/// Waits until something listens on TCP `port` of host `host`.
fn wait_listening_on(lan: &Lan, host: usize, port: u16, deadline: Instant) {
    let suffix = format!(":{port}");
    loop {
        let out = lan
            .command(host, "ss")
            .arg("-tlnH")
            .stdin(Stdio::null())
            .output()
            .expect("ss");
        let listening = String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| l.split_whitespace().nth(3))
            .any(|a| a.ends_with(&suffix));
        if listening {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "nothing listens on {port} of host {host}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Debian's rosmaster on host `host`, listening on its address, up when this returns.
fn master_on(lan: &Lan, host: usize, master: &str, deadline: Instant) -> Proc {
    let mut c = lan.command(host, PYTHON);
    c.args([
        "/usr/bin/rosmaster",
        "--core",
        "-p",
        &MASTER_PORT.to_string(),
    ])
    .env("ROS_IP", lan.host(host).addr.to_string())
    .env("ROS_MASTER_URI", master)
    .env(
        "ROS_HOME",
        std::env::temp_dir().join(format!("ros1-home-hosts-{}", std::process::id())),
    );
    let p = Proc::spawn("rosmaster", c);
    wait_listening_on(lan, host, MASTER_PORT, deadline);
    p
}

/// `thymio-rt run --ros1 --no-ros` on the embedded simulator on host `host`, `ROS_IP` its address, once its ROS 1
/// interface is up.
fn driver_on(lan: &Lan, host: usize, master: &str) -> Proc {
    let bin = common::thymio_rt();
    let mut c = lan.command(host, bin.get_program());
    c.args([
        "run",
        "--ros1",
        "--no-ros",
        "--switch-port",
        "0",
        "--duration",
        "170",
    ])
    .env("ROS_MASTER_URI", master)
    .env("ROS_IP", lan.host(host).addr.to_string())
    .env_remove("ROS_HOSTNAME")
    .env_remove("ROS_NAMESPACE")
    .env_remove("THYMIO_LOG");
    let mut p = Proc::spawn("thymio-rt --ros1", c);
    p.wait_line(Duration::from_secs(60), |l| {
        l.contains("ROS 1 interface up")
    });
    p
}

/// rospy on host `laptop` drives the robot until odometry shows it moved (each try bounded; retried until
/// `deadline`, as a new node may find the master or the driver not registered yet): the last result.
fn laptop_drives(lan: &Lan, laptop: usize, master: &str, deadline: Instant) -> Value {
    let ip = lan.host(laptop).addr.to_string();
    loop {
        let v = rospy_in(
            lan.command(laptop, "timeout"),
            master,
            &ip,
            &["drive", "20"],
            Duration::from_secs(30),
        );
        let moved = v["odom_dx"].as_f64().is_some_and(|dx| dx > 0.01);
        if moved || Instant::now() >= deadline {
            return v;
        }
        std::thread::sleep(Duration::from_millis(500));
    }
}

#[test]
fn a_laptop_drives_the_robot_through_a_master_on_another_host() {
    if !common::can_make_hosts() {
        return;
    }
    if !need_ros1() {
        return;
    }
    let deadline = Instant::now() + TEST_TIMEOUT;
    let lan = Lan::new(3, Multicast::On).expect("make the LAN");
    let (master_host, robot, laptop) = (0, 1, 2);
    let master = format!("http://{}:{MASTER_PORT}", lan.host(master_host).addr);
    let mut rosmaster = master_on(&lan, master_host, &master, deadline);
    let mut driver = driver_on(&lan, robot, &master);

    let v = laptop_drives(&lan, laptop, &master, deadline);
    assert!(v["odom_dx"].as_f64().unwrap_or(0.0) > 0.01, "{v}");

    // the master's host drops off the network and comes back: the driver still serves
    lan.set_link(master_host, false).unwrap();
    std::thread::sleep(Duration::from_secs(3));
    lan.set_link(master_host, true).unwrap();
    let v = laptop_drives(&lan, laptop, &master, deadline);
    assert!(
        v["odom_dx"].as_f64().unwrap_or(0.0) > 0.01,
        "after the master's link came back: {v}"
    );

    // the master dies and another starts (empty): the driver registers again by itself
    rosmaster.child.kill().unwrap();
    let _ = rosmaster.child.wait();
    let _rosmaster = master_on(&lan, master_host, &master, deadline);
    let v = laptop_drives(&lan, laptop, &master, deadline);
    assert!(
        v["odom_dx"].as_f64().unwrap_or(0.0) > 0.01,
        "after a new master: {v}"
    );

    driver.drain();
    assert!(
        driver.child.try_wait().unwrap().is_none(),
        "the driver ended:\n{}",
        driver.seen.join("\n")
    );
    let _ = driver.child.kill();
}
