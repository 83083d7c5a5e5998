//! The ROS 1 floor of the end-to-end benchmark (issue 29): floor.rs's zero-work driver on ROS 1. `cmd_vel` received
//! → one `set_speed` event frame written to the robot; an `odometry` event frame read → one `nav_msgs/Odometry`
//! published; nothing else. Registered with the bench's rosmaster (crate::ros1), through the same robot, relay and
//! clients as thymio-rt's ROS 1 front end, it marks what ROS 1's TCPROS, the client and loopback cost by
//! themselves.
//!
//! As floor.rs runs on the driver's ROS 2 stack (r2r), this one runs on the driver's ROS 1 transport, nrt-ros1's
//! public `net` API (TCPROS and XML-RPC, TCP_NODELAY on every connection, roslibrust's generated message types):
//! the difference to thymio-rt's ROS 1 row is then what the driver does beyond its transport. A self-re-exec mode
//! of the bench binary: [`ENV`] gives the relay port, crate::FLOOR_LIMIT_ENV the time limit.
//!
//! Threads: the caller's (the `cmd_vel` loop, on a tokio runtime whose one worker runs the node's connections)
//! and one blocking reader of the robot that publishes odometry, as floor.rs's.

use std::time::Duration;

/// Environment variable that turns the bench binary into the ROS 1 floor: the relay port to connect to.
pub const ENV: &str = "THYMIO_BENCH_FLOOR_ROS1";

/// Runs the ROS 1 floor against the robot behind 127.0.0.1:`port` for at most `limit` or until SIGINT (then
/// unregistered from the master, so that the next row's clients are not sent to it).
#[cfg(feature = "ros1")]
pub fn run(port: u16, limit: Duration) -> Result<(), String> {
    use crate::floor::{read_odometry, set_speed_frame};
    use nrt_ros1::net::{Address, Limits, Node};
    use nrt_ros1::ros1_msgs::{geometry_msgs::Twist, nav_msgs::Odometry};
    use std::io::Write;
    let master = std::env::var("ROS_MASTER_URI").map_err(|_| "ROS_MASTER_URI is not set")?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .map_err(|e| format!("tokio runtime: {e}"))?;
    let address = Address::from_env().map_err(|e| format!("ROS_IP / ROS_HOSTNAME: {e}"))?;
    let node = Node::start(
        rt.handle().clone(),
        &master,
        "/floor_ros1",
        address,
        Limits::default(),
    )
    .map_err(|e| format!("ROS 1 node on {master}: {e}"))?;
    let odom = node
        .advertise::<Odometry>("/odom", 100, false)
        .map_err(|e| format!("odom publisher: {e}"))?;
    let mut cmd_vel = node
        .subscribe::<Twist>("/cmd_vel", 100)
        .map_err(|e| format!("cmd_vel subscription: {e}"))?;
    let robot = std::net::TcpStream::connect(("127.0.0.1", port))
        .map_err(|e| format!("the robot's relay on port {port}: {e}"))?;
    robot
        .set_nodelay(true)
        .map_err(|e| format!("TCP_NODELAY to the robot: {e}"))?;
    let mut writer = robot
        .try_clone()
        .map_err(|e| format!("the robot's socket: {e}"))?;
    let reader = robot
        .try_clone()
        .map_err(|e| format!("the robot's socket: {e}"))?;
    let publisher = std::thread::spawn(move || {
        // one message refilled (the floor builds nothing per frame but what serialising it needs)
        let mut msg = Odometry::default();
        msg.pose.pose.orientation.w = 1.0;
        read_odometry(reader, |x| {
            msg.pose.pose.position.x = x;
            let _ = odom.publish(&msg);
        });
        // `odom` dropped here: unadvertised, off the runtime
    });
    println!("READY");
    let served = rt.block_on(async {
        let serve = async {
            while let Some(t) = cmd_vel.next().await {
                let t = t.map_err(|e| format!("cmd_vel: {e}"))?;
                writer
                    .write_all(&set_speed_frame(t.linear.x)?)
                    .map_err(|e| format!("writing to the robot: {e}"))?;
            }
            Ok::<(), String>(())
        };
        tokio::select! {
            r = serve => r,
            _ = tokio::signal::ctrl_c() => Ok(()),
            _ = tokio::time::sleep(limit) => Ok(()),
        }
    });
    // the reader sees the end of the socket and returns, unadvertising odom; then cmd_vel is unsubscribed
    let _ = robot.shutdown(std::net::Shutdown::Both);
    let joined = publisher
        .join()
        .map_err(|_| "the odometry thread panicked".to_owned());
    drop(cmd_vel);
    drop(node);
    rt.shutdown_timeout(Duration::from_secs(2));
    served.and(joined)
}

/// Without ROS 1 there is no ROS 1 floor.
#[cfg(not(feature = "ros1"))]
pub fn run(_port: u16, _limit: Duration) -> Result<(), String> {
    Err("the ROS 1 floor needs the ros1 feature".into())
}
