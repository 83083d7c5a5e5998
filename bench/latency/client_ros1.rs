//! The fast ROS 1 client of the end-to-end benchmark: client.rs's contract on ROS 1 (TCPROS), with roslibrust's own
//! ROS 1 node (`roslibrust::ros1`, crate roslibrust_ros1) — not the driver's transport (nrt-ros1's `net`), so that
//! the client shares no code, and no bug, with the front end it measures. Only the message types are nrt-ros1's
//! (roslibrust's generated types of its vendored definitions, the same that roslibrust's node serialises).
//!
//! One thread: a current-thread tokio runtime runs the node (its XML-RPC server, the TCPROS connections) and the
//! measuring loop, which waits for either the next odom message or the next publish time, never polling.
//! `ROS_MASTER_URI` and `ROS_IP` come from the environment (crate::ros1::env).
//!
//! roslibrust 0.26 sets TCP_NODELAY on neither connection and asks for it in no header, and has no option for
//! it; the driver's side sets it on its own. Once both connections are up the client sets it on each of its own
//! connected TCP sockets ([`nodelay_all`]: its `cmd_vel` writes are then not held back by Nagle's algorithm), as
//! rospy's `tcp_nodelay=True` does on both ends. roslibrust's publisher has no count of connected subscribers
//! either (`has_connected_clients` counts its own accept task), so READY waits for a connection accepted on the
//! listening port that `advertise` opened ([`Sockets`]) and for a first `odom`, as the rospy client does.

use crate::client::Args;
#[cfg(feature = "ros1")]
use crate::client::{speed, yaw, Rows};

/// The kind (and the `client` field of the rows) of this client.
pub const KIND: &str = "roslibrust";

/// The TCP sockets of this process, from /proc/self/fd.
#[cfg(feature = "ros1")]
#[derive(Debug, Default)]
struct Sockets {
    /// Ports we listen on.
    listening: Vec<u16>,
    /// `(fd, local port)` of every connected TCP socket.
    connected: Vec<(std::os::fd::RawFd, u16)>,
}

#[cfg(feature = "ros1")]
impl Sockets {
    /// The TCP sockets open now.
    fn now() -> Sockets {
        use nix::sys::socket::{getpeername, getsockname, getsockopt, sockopt, SockType};
        use nix::sys::socket::{SockaddrLike, SockaddrStorage};
        let mut s = Sockets::default();
        let Ok(dir) = std::fs::read_dir("/proc/self/fd") else {
            return s;
        };
        for e in dir.flatten() {
            let is_socket = std::fs::read_link(e.path())
                .is_ok_and(|l| l.to_string_lossy().starts_with("socket:"));
            let Some(fd) = e.file_name().to_str().and_then(|n| n.parse().ok()) else {
                continue;
            };
            if !is_socket {
                continue;
            }
            // SAFETY: fd is open in this process now (listed in /proc/self/fd); it is only queried, and one closed
            // meanwhile makes the calls fail.
            let borrowed = unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) };
            if getsockopt(&borrowed, sockopt::SockType) != Ok(SockType::Stream) {
                continue;
            }
            let Ok(local) = getsockname::<SockaddrStorage>(fd) else {
                continue;
            };
            let port = match (local.as_sockaddr_in(), local.as_sockaddr_in6()) {
                (Some(a), _) => a.port(),
                (None, Some(a)) => a.port(),
                _ => continue, // a Unix socket
            };
            if local.family().is_none() {
                continue;
            }
            if getsockopt(&borrowed, sockopt::AcceptConn) == Ok(true) {
                s.listening.push(port);
            } else if getpeername::<SockaddrStorage>(fd).is_ok() {
                s.connected.push((fd, port));
            }
        }
        s
    }
}

/// Sets TCP_NODELAY on every connected TCP socket of this process; how many.
#[cfg(feature = "ros1")]
fn nodelay_all() -> Result<usize, String> {
    use nix::sys::socket::{setsockopt, sockopt};
    let mut n = 0;
    for (fd, port) in Sockets::now().connected {
        // SAFETY: as in Sockets::now; setting TCP_NODELAY on a socket closed meanwhile fails harmlessly.
        let borrowed = unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) };
        setsockopt(&borrowed, sockopt::TcpNoDelay, &true)
            .map_err(|e| format!("TCP_NODELAY on the connection of local port {port}: {e}"))?;
        n += 1;
    }
    Ok(n)
}

/// Runs the client (see the module documentation).
#[cfg(feature = "ros1")]
pub fn run(args: &Args) -> Result<(), String> {
    let master = std::env::var("ROS_MASTER_URI").map_err(|_| "ROS_MASTER_URI is not set")?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("tokio runtime: {e}"))?;
    let rows = rt.block_on(measure(args, &master))?;
    rt.shutdown_timeout(std::time::Duration::from_secs(2));
    rows.finish(args)
}

/// The node, READY, the measuring window; the stamps.
#[cfg(feature = "ros1")]
async fn measure(args: &Args, master: &str) -> Result<Rows, String> {
    use nrt_ros1::ros1_msgs::{geometry_msgs::Twist, nav_msgs::Odometry};
    use roslibrust::ros1::NodeHandle;
    use std::time::Duration;
    use tokio::time::{sleep_until, Instant};
    let name = format!("/latency_client_roslibrust_{}", std::process::id());
    let nh = NodeHandle::new(master, &name)
        .await
        .map_err(|e| format!("ROS 1 node {name} on {master}: {e}"))?;
    let mut rows = Rows::for_run(args);
    let mut odom = nh
        .subscribe::<Odometry>("/odom", 1000)
        .await
        .map_err(|e| format!("odom subscription: {e}"))?;
    let before = Sockets::now().listening;
    let cmd_vel = nh
        .advertise::<Twist>("/cmd_vel", 10, false)
        .await
        .map_err(|e| format!("cmd_vel publisher: {e}"))?;
    let ours: Vec<u16> = Sockets::now()
        .listening
        .into_iter()
        .filter(|p| !before.contains(p))
        .collect();
    let deadline = Instant::now() + args.timeout;
    let mut heard = false;
    // the driver's cmd_vel subscription connected to our publisher's port, and a first odom
    while !(heard
        && Sockets::now()
            .connected
            .iter()
            .any(|(_, p)| ours.contains(p)))
    {
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
            // the connection is seen in /proc, which wakes nothing: looked at again every 10 ms until the deadline
            _ = sleep_until((Instant::now() + Duration::from_millis(10)).min(deadline)) => {
                if Instant::now() >= deadline {
                    return Err(format!(
                        "within {:?}: {} (listening on {ours:?})",
                        args.timeout,
                        if heard { "the driver's cmd_vel subscription did not connect" } else { "no odom came" }
                    ));
                }
            }
        }
    }
    let nodelay = nodelay_all()?;
    println!("READY (TCP_NODELAY set on {nodelay} connection(s))");
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
                cmd_vel.publish(&twist).await.map_err(|e| format!("cmd_vel publish: {e}"))?;
                next += period;
            }
            m = odom.next() => match m {
                Some(Ok(m)) => {
                    let t = rt::clock::monotonic_ns();
                    let (p, q) = (&m.pose.pose.position, &m.pose.pose.orientation);
                    rows.odom.push((t, p.x, p.y, yaw(q.z, q.w)));
                }
                // a full queue (lagged) too: a lost message would shift the matching by order
                Some(Err(e)) => return Err(format!("odom: {e}")),
                None => return Err("odom: the subscription ended".into()),
            },
        }
    }
    twist.linear.x = 0.0;
    cmd_vel
        .publish(&twist)
        .await
        .map_err(|e| format!("stop publish: {e}"))?;
    // the publication's connection task writes it: let it run before the node goes
    tokio::task::yield_now().await;
    tokio::task::yield_now().await;
    Ok(rows)
}

/// Without ROS 1 there is no roslibrust client.
#[cfg(not(feature = "ros1"))]
pub fn run(_args: &Args) -> Result<(), String> {
    Err("the roslibrust client needs the ros1 feature".into())
}
