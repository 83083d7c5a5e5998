//! The fast ROS 1 client of the end-to-end benchmark: client.rs's contract on ROS 1 (TCPROS), on the driver's own
//! ROS 1 transport, nrt-ros1's public `net` API (its TCPROS and XML-RPC, roslibrust's generated message types), the
//! same as the ROS 1 floor (floor_ros1.rs). It is a fast client, not an independent one: it shares its transport,
//! and any bug of it, with the front end it measures; rospy (e2e_client_ros1.py) is the independent ROS 1 client.
//! It needs nothing beyond the `ros1` feature (no second ROS 1 stack in the dev-dependencies).
//!
//! One thread: a current-thread tokio runtime runs the node (its XML-RPC slave API, the TCPROS connections) and the
//! measuring loop, which waits for either the next odom message or the next publish time, never polling. The
//! master calls (register, lookup) are blocking and made before the runtime runs. `ROS_MASTER_URI` and `ROS_IP`
//! come from the environment (crate::ros1::env).
//!
//! The transport sets TCP_NODELAY on both connections (the `odom` subscription's, which also asks the publisher
//! for it with `tcp_nodelay=1`, and the accepted `cmd_vel` subscriber's), as rospy's `tcp_nodelay=True` does on
//! both ends. READY comes once the driver's `cmd_vel` subscription is connected to our publisher and a first
//! `odom` came, as in the rospy client.

use crate::client::Args;
#[cfg(feature = "ros1")]
use crate::client::{speed, yaw, Rows};

pub use crate::kinds::TCPROS as KIND;

/// Runs the client (see the module documentation).
#[cfg(feature = "ros1")]
pub fn run(args: &Args) -> Result<(), String> {
    use nrt_ros1::net::{Address, Limits, Node};
    use nrt_ros1::ros1_msgs::{geometry_msgs::Twist, nav_msgs::Odometry};
    let master = std::env::var("ROS_MASTER_URI").map_err(|_| "ROS_MASTER_URI is not set")?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("tokio runtime: {e}"))?;
    let address = Address::from_env().map_err(|e| format!("ROS_IP / ROS_HOSTNAME: {e}"))?;
    let name = format!("/latency_client_{KIND}_{}", std::process::id());
    let node = Node::start(
        rt.handle().clone(),
        &master,
        &name,
        address,
        Limits::default(),
    )
    .map_err(|e| format!("ROS 1 node {name} on {master}: {e}"))?;
    // a queue long enough that none is dropped (a lost message would shift the matching by order)
    let odom = node
        .subscribe::<Odometry>("/odom", 1000)
        .map_err(|e| format!("odom subscription: {e}"))?;
    let cmd_vel = node
        .advertise::<Twist>("/cmd_vel", 10, false)
        .map_err(|e| format!("cmd_vel publisher: {e}"))?;
    let rows = rt.block_on(measure(args, odom, cmd_vel));
    // unregistered from the master on the runtime's blocking pool, which the shutdown waits for
    drop(node);
    rt.shutdown_timeout(std::time::Duration::from_secs(2));
    rows?.finish(args)
}

/// READY, the measuring window; the stamps.
#[cfg(feature = "ros1")]
async fn measure(
    args: &Args,
    mut odom: nrt_ros1::net::Subscriber<nrt_ros1::ros1_msgs::nav_msgs::Odometry>,
    cmd_vel: nrt_ros1::net::Publisher<nrt_ros1::ros1_msgs::geometry_msgs::Twist>,
) -> Result<Rows, String> {
    use nrt_ros1::ros1_msgs::geometry_msgs::Twist;
    use std::time::Duration;
    use tokio::time::{sleep, sleep_until, Instant};
    let mut rows = Rows::for_run(args);
    let deadline = Instant::now() + args.timeout;
    let mut heard = false;
    // the driver's cmd_vel subscription connected to our publisher, and a first odom
    while !(heard && cmd_vel.subscriber_count() > 0) {
        tokio::select! {
            m = odom.next() => match m {
                Some(Ok(m)) => {
                    let (p, q) = (&m.pose.pose.position, &m.pose.pose.orientation);
                    rows.odom.push((rt::clock::monotonic_ns(), p.x, p.y, yaw(q.z, q.w)));
                    heard = true;
                }
                Some(Err(e)) => return Err(format!("odom: {e}")),
                None => return Err("odom: the subscription ended".into()),
            },
            // a subscriber's connection wakes nothing here: looked at again every 10 ms until the deadline
            _ = sleep_until((Instant::now() + Duration::from_millis(10)).min(deadline)) => {
                if Instant::now() >= deadline {
                    return Err(format!(
                        "within {:?}: {}",
                        args.timeout,
                        if heard { "the driver's cmd_vel subscription did not connect" } else { "no odom came" }
                    ));
                }
            }
        }
    }
    println!("READY");
    let start = Instant::now();
    let (end, drained) = (
        start + args.duration,
        start + args.duration + Duration::from_millis(200),
    );
    let (mut next, mut k, period) = (start, 0u64, args.period());
    let mut twist = Twist::default();
    loop {
        // after the last cmd_vel, 200 ms for it to reach the wire before the stop (a driver may coalesce them)
        let wake = if next < end { next } else { drained };
        tokio::select! {
            biased;
            _ = sleep_until(wake) => {
                if wake == drained {
                    break;
                }
                twist.linear.x = speed(k);
                k += 1;
                rows.cmd_vel.push((rt::clock::monotonic_ns(), twist.linear.x));
                // queued for the connection's task, which writes it as soon as this loop waits again
                cmd_vel.publish(&twist).map_err(|e| format!("cmd_vel publish: {e}"))?;
                next += period;
            }
            m = odom.next() => match m {
                Some(Ok(m)) => {
                    let t = rt::clock::monotonic_ns();
                    let (p, q) = (&m.pose.pose.position, &m.pose.pose.orientation);
                    rows.odom.push((t, p.x, p.y, yaw(q.z, q.w)));
                }
                Some(Err(e)) => return Err(format!("odom: {e}")),
                None => return Err("odom: the subscription ended".into()),
            },
        }
    }
    twist.linear.x = 0.0;
    cmd_vel
        .publish(&twist)
        .map_err(|e| format!("stop publish: {e}"))?;
    // dropping the publisher closes its connections' queues, which their tasks still write out: let them run
    // before the runtime goes
    drop(cmd_vel);
    drop(odom);
    sleep(Duration::from_millis(50)).await;
    Ok(rows)
}

/// Without ROS 1 there is no TCPROS client.
#[cfg(not(feature = "ros1"))]
pub fn run(_args: &Args) -> Result<(), String> {
    Err("the TCPROS client needs the ros1 feature".into())
}
