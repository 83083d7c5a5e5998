//! A `/tf` listener for the CPU and scale points that have no client: thymio-rt hands a robot's odometry to its
//! publisher thread only while someone subscribes to `odom`, `/tf`, `joint_states` or `cmd_vel_out`
//! (`nrt_interface::odom_demand`), so without a listener those points would measure a driver that publishes
//! nothing. One subscriber to `/tf` (as every tf listener, rviz or Nav2 has) makes every robot's samples
//! published, as a driver in use publishes them; the Python driver publishes with or without one, and gets the
//! same listener where it is compared.
//!
//! The bench binary re-executed with [`crate::kinds::CLIENT_ENV`] = [`KIND`] and `--limit S`: an r2r node (compiled,
//! taking each message in rcl's native form, so that it costs the machine little beside the driver), `LISTENING`
//! on stdout once the first `/tf` message came, then it takes messages until `S` seconds passed.

use crate::procs::Proc;
use std::process::Command;
use std::time::Duration;

pub use crate::kinds::TF_LISTENER as KIND;

/// Starts a listener in ROS 2 domain `domain` (loopback only) and waits until it heard `/tf`.
pub fn start(domain: u32, limit: Duration) -> Result<Proc, String> {
    let exe = std::env::current_exe().map_err(|e| format!("the bench binary's path: {e}"))?;
    let mut c = Command::new(exe);
    c.env(crate::client::ENV, KIND)
        .args(["--limit", &limit.as_secs().to_string()]);
    crate::kinds::ros_env(&mut c, domain);
    let mut p = Proc::spawn("tf listener", c);
    p.wait_for("LISTENING", Duration::from_secs(60))?;
    Ok(p)
}

/// `--limit S` (seconds).
fn parse_limit(args: impl IntoIterator<Item = String>) -> Result<Duration, String> {
    let mut args = args.into_iter();
    match (args.next().as_deref(), args.next(), args.next()) {
        (Some("--limit"), Some(s), None) => s
            .parse()
            .map(Duration::from_secs)
            .map_err(|e| format!("--limit {s}: {e}")),
        _ => Err("usage: --limit SECONDS".into()),
    }
}

/// The listener's process (see the module documentation).
#[cfg(feature = "ros2")]
pub fn main() -> Result<(), String> {
    use nrt_ros2::futures::StreamExt;
    use nrt_ros2::r2r::{self, tf2_msgs::msg::TFMessage, QosProfile};
    use std::task::{Context, Poll, Waker};
    use std::time::Instant;
    let limit = parse_limit(std::env::args().skip(1))?;
    let err = |what: &'static str| move |e: r2r::Error| format!("{what}: {e}");
    let ctx = r2r::Context::create().map_err(err("rcl context"))?;
    let mut node = r2r::Node::create(ctx, "bench_tf_listener", "").map_err(err("node"))?;
    // best effort matches both reliable and best-effort publishers
    let mut tf = node
        .subscribe_native::<TFMessage>("/tf", QosProfile::default().best_effort().keep_last(100))
        .map_err(err("/tf subscription"))?;
    let mut cx = Context::from_waker(Waker::noop());
    let end = Instant::now() + limit;
    let mut heard = 0u64;
    while Instant::now() < end {
        node.spin_once(Duration::from_millis(100));
        while let Poll::Ready(Some(_)) = tf.poll_next_unpin(&mut cx) {
            heard += 1;
            if heard == 1 {
                println!("LISTENING");
            }
        }
    }
    Ok(())
}

#[cfg(not(feature = "ros2"))]
pub fn main() -> Result<(), String> {
    parse_limit(std::env::args().skip(1))?;
    Err("the tf listener needs the ros2 feature".into())
}
