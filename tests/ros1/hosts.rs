//! ROS 1 across hosts (issue 25 items 2 and 4), each host a network namespace of its own (tests/common/netns.rs):
//! Debian's rosmaster on one host, `thymio-rt run --ros1` on the robot's host (`ROS_IP` of its interface), rospy on
//! a laptop (`ROS_IP` of its own): the laptop gets odometry and drives the robot. The master host's link goes down
//! and comes back, then the master is killed and another one started: the driver keeps serving without a restart
//! and the laptop drives it again each time.
#![cfg(feature = "ros1")]

use crate::common;
use crate::peers;

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

/// A laptop's teleoperation (host 1): publishes `cmd_vel` forward at 20 Hz while told `go` on its stdin, nothing
/// while told `quiet`; says `connected` once the driver subscribes, `now go` / `now quiet` when told.
const LAPTOP: &str = r#"
import sys, threading, time, rospy
from geometry_msgs.msg import Twist
rospy.init_node("laptop", anonymous=True, disable_signals=True)
pub = rospy.Publisher("/cmd_vel", Twist, queue_size=100)
state = {"go": False}
def commands():
    for line in sys.stdin:
        state["go"] = line.strip() == "go"
        print("now " + line.strip(), flush=True)
threading.Thread(target=commands, daemon=True).start()
deadline = time.time() + 30
while pub.get_num_connections() == 0 and time.time() < deadline:
    time.sleep(0.05)
print("connected", flush=True)
cmd = Twist()
cmd.linear.x = 0.05
while True:
    if state["go"]:
        pub.publish(cmd)
    time.sleep(0.05)
"#;

/// On the robot's host: prints `vx V` for each odometry message (`ready` once connected).
const OBSERVER: &str = r#"
import time, rospy
from nav_msgs.msg import Odometry
rospy.init_node("observer", anonymous=True, disable_signals=True)
sub = rospy.Subscriber("/odom", Odometry, lambda m: print("vx %.4f" % m.twist.twist.linear.x, flush=True), queue_size=100)
deadline = time.time() + 30
while sub.get_num_connections() == 0 and time.time() < deadline:
    time.sleep(0.05)
print("ready", flush=True)
while True:
    time.sleep(1)
"#;

/// A rospy script `code` on host `host` with the master at `master` (bounded to 150 s).
fn python_on(lan: &Lan, host: usize, master: &str, name: &str, code: &str) -> Proc {
    let mut c = lan.command(host, "timeout");
    c.args(["150", PYTHON, "-c", code])
        .env("ROS_MASTER_URI", master)
        .env("ROS_IP", lan.host(host).addr.to_string())
        .env_remove("ROS_HOSTNAME")
        .env(
            "ROS_HOME",
            std::env::temp_dir().join(format!("ros1-home-hosts-{}", std::process::id())),
        );
    Proc::spawn(name, c)
}

/// The odometry speeds the observer printed from its line `from` on.
fn speeds(observer: &mut Proc, from: usize) -> Vec<f64> {
    observer.drain();
    observer.seen[from.min(observer.seen.len())..]
        .iter()
        .filter_map(|l| l.strip_prefix("vx ")?.parse().ok())
        .collect()
}

/// Waits (bounded by `within`) until the observer's speeds from line `from` on satisfy `ok`; whether they did.
fn until_speeds(
    observer: &mut Proc,
    from: usize,
    within: Duration,
    ok: impl Fn(&[f64]) -> bool,
) -> bool {
    let deadline = Instant::now() + within;
    loop {
        if ok(&speeds(observer, from)) {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// ROS 1 commands delayed by an outage are not obeyed: a laptop drives the robot at 20 Hz (`cmd_vel`, a plain
/// Twist), its link goes down for more than 1.5 s while it keeps publishing (the watchdog stops the robot), it
/// stops publishing, and the link comes back: TCP delivers the backlog in a burst, the driver drops it and the
/// robot stays stopped (no odometry speed) until the laptop publishes again — then it drives.
#[test]
fn ros1_outage_the_backlog_of_a_laptop_whose_link_comes_back_is_not_obeyed() {
    if !common::can_make_hosts() {
        return;
    }
    if !need_ros1() {
        return;
    }
    let deadline = Instant::now() + TEST_TIMEOUT;
    let lan = Lan::new(2, Multicast::Off).expect("make the LAN");
    let (robot, laptop) = (0, 1);
    let master = format!("http://{}:{MASTER_PORT}", lan.host(robot).addr);
    let _rosmaster = master_on(&lan, robot, &master, deadline);
    let mut driver = driver_on(&lan, robot, &master);
    let mut observer = python_on(&lan, robot, &master, "odom observer", OBSERVER);
    observer.wait_line(Duration::from_secs(40), |l| l == "ready");
    let mut teleop = python_on(&lan, laptop, &master, "laptop teleop", LAPTOP);
    teleop.wait_line(Duration::from_secs(40), |l| l == "connected");
    teleop.write_stdin("go\n");
    let moving = |v: &[f64]| v.iter().any(|x| *x > 0.01);
    assert!(
        until_speeds(&mut observer, 0, Duration::from_secs(20), moving),
        "the laptop never drove the robot: {:?}",
        speeds(&mut observer, 0)
    );

    // the laptop's cable is out; it goes on publishing; the watchdog stops the robot
    lan.set_link(laptop, false).unwrap();
    let down = Instant::now();
    let from = observer.seen.len();
    let stopped = |v: &[f64]| v.len() >= 5 && v[v.len() - 5..].iter().all(|x| x.abs() < 0.002);
    assert!(
        until_speeds(&mut observer, from, Duration::from_secs(10), stopped),
        "the watchdog did not stop the robot: {:?}",
        speeds(&mut observer, from)
    );
    // the outage lasts 1.5 s at least (its length is the scenario, not a wait for a peer)
    std::thread::sleep(
        (down + Duration::from_millis(1500)).saturating_duration_since(Instant::now()),
    );
    teleop.write_stdin("quiet\n");
    teleop.wait_line(Duration::from_secs(5), |l| l == "now quiet");

    // the cable is back: what TCP kept arrives, and must not drive the robot
    let from = observer.seen.len();
    lan.set_link(laptop, true).unwrap();
    let burst = Instant::now() + Duration::from_secs(15);
    let dropped = loop {
        driver.drain();
        if driver
            .seen
            .iter()
            .any(|l| l.contains("arrive in a burst after"))
        {
            break true;
        }
        if moving(&speeds(&mut observer, from)) || Instant::now() >= burst {
            break false;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    // had any of it been obeyed, the robot would drive within half a second (the watchdog period)
    let watched = Instant::now() + Duration::from_secs(1);
    while dropped && Instant::now() < watched && !moving(&speeds(&mut observer, from)) {
        std::thread::sleep(Duration::from_millis(20));
    }
    let after = speeds(&mut observer, from);
    assert!(
        dropped && !moving(&after) && !after.is_empty(),
        "after the link came back: backlog dropped {dropped}, odometry speeds {after:?}\ndriver:\n{}",
        driver.seen.join("\n")
    );

    // a fresh command drives it
    let from = observer.seen.len();
    teleop.write_stdin("go\n");
    assert!(
        until_speeds(&mut observer, from, Duration::from_secs(10), moving),
        "a fresh command after the outage did not drive the robot: {:?}\ndriver:\n{}",
        speeds(&mut observer, from),
        driver.seen.join("\n")
    );
}
