//! The network as a fault, and who reaches the robot (issue 25 items 4 and 5), each host a network namespace of its
//! own (tests/common/netns.rs):
//!
//! - a laptop streaming `cmd_vel` loses its link: the robot stops within `cmd_vel_timeout`; commands the laptop
//!   published during the outage are not obeyed when the link returns (the driver's `cmd_vel` reader is best
//!   effort: the laptop's reliable writer does not redeliver what it kept); the laptop, back, gets odometry and
//!   drives again without any restart; the same when the robot's host is the one that drops off the network;
//! - the Aseba switch listens on the robot's loopback only: another host cannot connect; with `address: 0.0.0.0`
//!   it can, and reads and writes the robot's variables.
#![cfg(feature = "ros2")]

use crate::common;
use crate::lan_hosts as hosts;
use crate::ros_driver;

use common::netns::{Lan, Multicast};
use hosts::{
    domain, drive_until, driver_on, driver_with, moving, peer_on, read_until, sees, sockets_of,
    speed_of, DriverSpec,
};
use ros_driver::stop;
use std::process::Stdio;
use std::time::{Duration, Instant};

const TEST_TIMEOUT: Duration = Duration::from_secs(90);
/// The driver's default `cmd_vel_timeout`.
const CMD_VEL_TIMEOUT: Duration = Duration::from_millis(500);
/// What a stop may take beyond the timeout: the odometry period and the wheels' deceleration.
const STOP_MARGIN: Duration = Duration::from_millis(700);
/// How long the outage lasts (well within DDS's 20 s participant lease: the peers stay matched).
const OUTAGE: Duration = Duration::from_secs(3);
/// How long the robot is watched once the link is back: beyond Fast DDS's 3 s heartbeat period, after which a
/// reliable writer would have repaired what the reader missed.
const WATCH: Duration = Duration::from_secs(5);

#[test]
fn a_laptop_that_loses_its_link_stops_the_robot_and_its_old_commands_are_not_obeyed() {
    if !common::can_make_hosts() {
        return;
    }
    let deadline = Instant::now() + TEST_TIMEOUT;
    let lan = Lan::new(2, Multicast::On).expect("make the LAN");
    let dir = tempfile::tempdir().unwrap();
    let (robot, laptop) = (0, 1);
    let dom = domain(0);
    let odom = "/net/odom";
    let cmd_vel = "/net/cmd_vel";
    let driver = driver_on(&lan, robot, dir.path(), "net", dom, &[]);
    // the robot's own host watches its odometry throughout
    let mut local = peer_on(&lan, robot, dom, &[], deadline);
    local
        .subscribe(odom, "nav_msgs/msg/Odometry", "volatile", deadline)
        .unwrap();
    let mut remote = peer_on(&lan, laptop, dom, &[], deadline);
    remote
        .subscribe(odom, "nav_msgs/msg/Odometry", "volatile", deadline)
        .unwrap();
    remote.message(odom, deadline, |_| true).unwrap();
    drive_until(&mut remote, cmd_vel, 0.1, deadline, |_| {
        sees(&mut local, odom, moving)
    });

    // the cable is out while the laptop keeps streaming: the robot stops within the timeout
    lan.set_link(laptop, false).unwrap();
    let down = Instant::now();
    local.forget(odom);
    let mut stopped_after = None;
    while down.elapsed() < OUTAGE {
        remote
            .publish(
                cmd_vel,
                "geometry_msgs/msg/Twist",
                serde_json::json!({"linear": {"x": 0.1}}),
                0,
                deadline,
            )
            .unwrap();
        read_until(&mut local, Instant::now() + Duration::from_millis(100));
        if stopped_after.is_none() && local.received(odom, |m| !moving(m)) {
            stopped_after = Some(down.elapsed());
        }
    }
    let stopped_after = stopped_after.unwrap_or_else(|| {
        panic!(
            "the robot did not stop during a {OUTAGE:?} outage:\n{}",
            local.unconsumed()
        )
    });
    assert!(
        stopped_after <= CMD_VEL_TIMEOUT + STOP_MARGIN,
        "the robot stopped {stopped_after:?} after the link went down"
    );

    // the laptop no longer streams; the cable is back: nothing it published during the outage moves the robot
    lan.set_link(laptop, true).unwrap();
    local.forget(odom);
    read_until(&mut local, Instant::now() + WATCH);
    assert!(
        local.received(odom, |_| true),
        "no odometry on the robot's host"
    );
    assert!(
        !local.received(odom, moving),
        "the robot obeyed commands published during the outage:\n{}",
        local.unconsumed()
    );

    // the laptop is a peer again, nothing restarted: it gets odometry and drives
    remote.forget(odom);
    remote.message(odom, deadline, |_| true).unwrap();
    drive_until(&mut remote, cmd_vel, 0.1, deadline, |p| {
        sees(p, odom, moving)
    });

    // now the robot's host drops off the network (the DDS peer of /net disappears for the laptop): the driver keeps
    // serving its own host (odometry; the watchdog stopped the robot); back, the laptop gets odometry and drives
    lan.set_link(robot, false).unwrap();
    local.forget(odom);
    local.message(odom, deadline, |m| !moving(m)).unwrap();
    std::thread::sleep(OUTAGE);
    local.forget(odom);
    local.message(odom, deadline, |_| true).unwrap();
    lan.set_link(robot, true).unwrap();
    remote.forget(odom);
    remote.message(odom, deadline, |_| true).unwrap();
    drive_until(&mut remote, cmd_vel, -0.1, deadline, |p| {
        sees(p, odom, |m| speed_of(m) < -0.05)
    });
    drop(remote);
    drop(local);
    stop(driver);
}

/// Runs `python3 -c` on host `host` trying a TCP connection to `addr:port`: `Ok(())` if it connects, the error
/// otherwise.
fn connect_from(lan: &Lan, host: usize, addr: &str, port: u16) -> Result<(), String> {
    let script = format!(
        "import socket,sys\ntry:\n socket.create_connection(('{addr}', {port}), timeout=3).close()\n\
         except OSError as e:\n print(e); sys.exit(1)"
    );
    let out = lan
        .command(host, "/usr/bin/python3")
        .args(["-c", &script])
        .stdin(Stdio::null())
        .output()
        .expect("python3");
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stdout).trim().to_owned())
    }
}

/// Waits until the driver listens on TCP port `port` of its host; returns the local addresses it listens on.
fn listening(lan: &Lan, host: usize, pid: u32, port: u16, deadline: Instant) -> Vec<String> {
    let suffix = format!(":{port}");
    loop {
        let socks = sockets_of(lan, host, pid, "-tlnpH");
        if socks.iter().any(|s| s.ends_with(&suffix)) {
            return socks;
        }
        assert!(
            Instant::now() < deadline,
            "the switch never listened on {port}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// `thymio-rt vars ARGS` on host `host` against the switch at `target`: (success, stdout, stderr).
fn vars_from(lan: &Lan, host: usize, target: &str, args: &[&str]) -> (bool, String, String) {
    let bin = common::thymio_rt();
    let out = lan
        .command(host, bin.get_program())
        .args(["vars"])
        .args([args[0], "--target", target, "--node", "1"])
        .args(&args[1..])
        .env_remove("THYMIO_LOG")
        .stdin(Stdio::null())
        .output()
        .expect("thymio-rt vars");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).trim().to_owned(),
        String::from_utf8_lossy(&out.stderr).trim().to_owned(),
    )
}

#[test]
fn the_aseba_switch_is_closed_to_other_hosts_unless_opened() {
    if !common::can_make_hosts() {
        return;
    }
    let deadline = Instant::now() + TEST_TIMEOUT;
    let lan = Lan::new(2, Multicast::On).expect("make the LAN");
    let dir = tempfile::tempdir().unwrap();
    let (robot, other) = (0, 1);
    let port = 33333;
    let robot_addr = lan.host(robot).addr.to_string();
    let remote_target = format!("tcp:host={robot_addr};port={port}");
    let local_only = [("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST".to_string())];

    // the default: loopback only
    let mut spec = DriverSpec::new("closed");
    spec.run_args = &["--switch-port", "33333"];
    let driver = driver_with(&lan, robot, dir.path(), &spec, domain(1), &local_only);
    let socks = listening(&lan, robot, driver.child.id(), port, deadline);
    assert_eq!(
        socks,
        vec![format!("127.0.0.1:{port}")],
        "listening sockets"
    );
    connect_from(&lan, robot, "127.0.0.1", port).expect("the robot's own host reaches its switch");
    let refused = connect_from(&lan, other, &robot_addr, port)
        .expect_err("another host connected to the switch");
    assert!(refused.contains("refused"), "{refused}");
    let (ok, _, err) = vars_from(&lan, other, &remote_target, &["get", "motor.left.target"]);
    assert!(
        !ok,
        "another host read the robot's variables through the switch"
    );
    assert!(!err.is_empty(), "no error said why");
    stop(driver);

    // opened on purpose: another host reads and writes the robot's variables
    let mut spec = DriverSpec::new("opened");
    spec.run_args = &["--switch-port", "33333"];
    spec.yaml = "address: 0.0.0.0\n";
    let mut driver = driver_with(&lan, robot, dir.path(), &spec, domain(2), &local_only);
    let socks = listening(&lan, robot, driver.child.id(), port, deadline);
    assert!(socks.contains(&format!("0.0.0.0:{port}")), "{socks:?}");
    let (ok, out, err) = vars_from(
        &lan,
        other,
        &remote_target,
        &["set", "leds.top", "0", "0", "32"],
    );
    assert!(ok, "set from another host: {out} {err}");
    let (ok, out, err) = vars_from(&lan, other, &remote_target, &["get", "leds.top"]);
    assert!(ok, "get from another host: {err}");
    assert_eq!(out, "0 0 32");
    driver.drain();
    assert!(
        driver
            .seen
            .iter()
            .any(|l| l.contains("other machines can reach the robot")),
        "no warning about the open switch:\n{}",
        driver.seen.join("\n")
    );
    stop(driver);
}
