//! The fast clients of the end-to-end benchmark (issue 29), and what every client of it shares.
//!
//! The rclpy and rospy clients (e2e_client.py, e2e_client_ros1.py) cost hundreds of µs per message themselves,
//! which hides what a driver adds. The fast clients keep the same contract with as little of their own work as
//! their stack allows: this module's r2r client for ROS 2 ([`run_r2r`]), client_ros1.rs's TCPROS client for
//! ROS 1. Like the floor, they are not separate binaries: the latency bench re-executes itself with [`ENV`] set to
//! the client's kind and the client's arguments on its command line ([`Args`]).
//!
//! The contract (e2e_client.py's): `--out FILE --duration S [--rate HZ] [--timeout S]`; prints READY once the
//! driver's `cmd_vel` subscription and `odom` publisher are there, publishes `cmd_vel` at HZ for S seconds with the
//! alternating speed of [`speed`], receives `odom`, stamps both with CLOCK_MONOTONIC ns (the relay's clock) just
//! before each publish and as soon as each odom message is taken, writes FILE
//! (`{"cmd_vel": [[t_ns, linear_x], ...], "odom": [[t_ns, x, y, yaw], ...]}`) and prints DONE.
// without either ROS feature the helpers shared by the clients serve none
#![cfg_attr(not(any(feature = "ros1", feature = "ros2")), allow(dead_code))]

use std::time::Duration;

pub use crate::kinds::CLIENT_ENV as ENV;

/// A client's arguments, e2e_client.py's.
#[derive(Debug, Clone)]
pub struct Args {
    /// Where the JSON goes.
    pub out: std::path::PathBuf,
    /// How long `cmd_vel` is published once READY.
    pub duration: Duration,
    /// `cmd_vel` messages per second.
    pub rate: f64,
    /// Longest wait for the driver's endpoints.
    pub timeout: Duration,
}

impl Args {
    /// Parses `--out FILE --duration S [--rate HZ] [--timeout S]`.
    pub fn parse(args: impl IntoIterator<Item = String>) -> Result<Args, String> {
        let (mut out, mut duration, mut rate, mut timeout) = (None, None, 20.0, 60.0);
        let mut it = args.into_iter();
        while let Some(flag) = it.next() {
            let value = it.next().ok_or_else(|| format!("{flag}: no value"))?;
            let secs = |v: &str| {
                v.parse::<f64>()
                    .ok()
                    .filter(|s| s.is_finite() && *s > 0.0)
                    .ok_or_else(|| format!("{flag} {v}: not a positive number"))
            };
            match flag.as_str() {
                "--out" => out = Some(value.into()),
                "--duration" => duration = Some(secs(&value)?),
                "--rate" => rate = secs(&value)?,
                "--timeout" => timeout = secs(&value)?,
                _ => return Err(format!("unknown argument {flag}")),
            }
        }
        Ok(Args {
            out: out.ok_or("--out is required")?,
            duration: Duration::from_secs_f64(duration.ok_or("--duration is required")?),
            rate,
            timeout: Duration::from_secs_f64(timeout),
        })
    }

    /// The period of `cmd_vel`.
    pub fn period(&self) -> Duration {
        Duration::from_secs_f64(1.0 / self.rate)
    }
}

/// The `k`-th `cmd_vel` speed (m/s): ±(0.03 + 0.01·(k mod 5)), alternating in sign, as e2e_client.py: every
/// message changes the wheel targets and the robot rocks in place.
pub fn speed(k: u64) -> f64 {
    let sign = if k & 1 == 0 { 1.0 } else { -1.0 };
    sign * (0.03 + 0.01 * (k % 5) as f64)
}

/// What a client measured: its stamps, in the JSON of e2e_client.py.
#[derive(Debug, Default)]
pub struct Rows {
    /// `(t_ns, linear_x)` of every `cmd_vel` published.
    pub cmd_vel: Vec<(u64, f64)>,
    /// `(t_ns, x, y, yaw)` of every `odom` received.
    pub odom: Vec<(u64, f64, f64, f64)>,
}

impl Rows {
    /// Room for `args`' run at 100 Hz odometry, so that no push allocates while measuring.
    pub fn for_run(args: &Args) -> Rows {
        let secs = args.duration.as_secs_f64() + 5.0;
        Rows {
            cmd_vel: Vec::with_capacity((secs * args.rate) as usize + 16),
            odom: Vec::with_capacity((secs * 200.0) as usize + 16),
        }
    }

    /// Writes the JSON to `args.out` and prints DONE.
    pub fn finish(&self, args: &Args) -> Result<(), String> {
        let text = serde_json::json!({"cmd_vel": self.cmd_vel, "odom": self.odom}).to_string();
        std::fs::write(&args.out, text).map_err(|e| format!("{}: {e}", args.out.display()))?;
        println!(
            "DONE {} cmd_vel, {} odom",
            self.cmd_vel.len(),
            self.odom.len()
        );
        Ok(())
    }
}

/// The yaw of a planar orientation quaternion.
pub fn yaw(z: f64, w: f64) -> f64 {
    2.0 * z.atan2(w)
}

/// Waits, spinning `node`, until `ready` holds or `timeout` passes; `what` names what did not appear.
#[cfg(feature = "ros2")]
fn spin_until(
    node: &mut nrt_ros2::r2r::Node,
    timeout: Duration,
    what: &str,
    mut ready: impl FnMut(&nrt_ros2::r2r::Node) -> bool,
) -> Result<(), String> {
    let deadline = std::time::Instant::now() + timeout;
    while !ready(node) {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() {
            return Err(format!("{what} did not appear within {timeout:?}"));
        }
        node.spin_once(left.min(Duration::from_millis(20)));
    }
    Ok(())
}

/// The r2r client: one thread, woken by rcl's wait set (`spin_once` until the next publish time); `odom` taken in
/// rcl's native form (no conversion to r2r's owned types), `cmd_vel` published from one native message refilled
/// each time.
#[cfg(feature = "ros2")]
pub fn run_r2r(args: &Args) -> Result<(), String> {
    use nrt_ros2::futures::StreamExt;
    use nrt_ros2::r2r::{self, geometry_msgs::msg::Twist, nav_msgs::msg::Odometry, QosProfile};
    use std::task::{Context, Poll, Waker};
    use std::time::Instant;
    let err = |what: &'static str| move |e: r2r::Error| format!("{what}: {e}");
    let ctx = r2r::Context::create().map_err(err("rcl context"))?;
    let mut node = r2r::Node::create(ctx, "latency_client_r2r", "").map_err(err("node"))?;
    // best effort matches both reliable and best-effort publishers
    let odom_qos = QosProfile::default().best_effort().keep_last(1000);
    let mut odom = node
        .subscribe_native::<Odometry>("/odom", odom_qos)
        .map_err(err("odom subscription"))?;
    let cmd_vel = node
        .create_publisher::<Twist>("/cmd_vel", QosProfile::default().keep_last(10))
        .map_err(err("cmd_vel publisher"))?;
    spin_until(
        &mut node,
        args.timeout,
        "the driver's cmd_vel subscription or odom publisher",
        |n| {
            cmd_vel
                .get_inter_process_subscription_count()
                .is_ok_and(|c| c > 0)
                && n.get_publishers_info_by_topic("/odom", false)
                    .is_ok_and(|p| !p.is_empty())
        },
    )?;
    println!("READY");
    let mut rows = Rows::for_run(args);
    let mut twist = r2r::NativeMsg::<Twist>::from(&Twist::default());
    let mut cx = Context::from_waker(Waker::noop());
    let period = args.period();
    let start = Instant::now();
    let (end, drained) = (
        start + args.duration,
        start + args.duration + Duration::from_millis(200),
    );
    let (mut next, mut k) = (start, 0u64);
    loop {
        let now = Instant::now();
        if now >= next && now < end {
            twist.linear.x = speed(k);
            k += 1;
            rows.cmd_vel
                .push((rt::clock::monotonic_ns(), twist.linear.x));
            cmd_vel
                .publish_native(&mut twist)
                .map_err(err("cmd_vel publish"))?;
            next += period;
        }
        // after the last one, 200 ms for it to reach the wire before the stop (a driver may coalesce them)
        let wake = if now < end { next.min(end) } else { drained };
        if now >= drained {
            break;
        }
        node.spin_once(wake.saturating_duration_since(Instant::now()));
        while let Poll::Ready(Some(m)) = odom.poll_next_unpin(&mut cx) {
            let t = rt::clock::monotonic_ns();
            let (p, q) = (&m.pose.pose.position, &m.pose.pose.orientation);
            rows.odom.push((t, p.x, p.y, yaw(q.z, q.w)));
        }
    }
    twist.linear.x = 0.0;
    cmd_vel
        .publish_native(&mut twist)
        .map_err(err("stop publish"))?;
    rows.finish(args)
}

/// Without ROS 2 there is no r2r client.
#[cfg(not(feature = "ros2"))]
pub fn run_r2r(_args: &Args) -> Result<(), String> {
    Err("the r2r client needs the ros2 feature".into())
}
