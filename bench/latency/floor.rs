//! The floor of the end-to-end benchmark (issue 19): a zero-work driver on r2r. `cmd_vel`
//! received → one `set_speed` event frame written to the robot; an `odometry` event frame read →
//! one `nav_msgs/Odometry` published; nothing else (no handshake, no script, no `/tf`). Through the
//! same robot, relay and client as the real drivers, it marks what this machine's DDS, rclpy
//! client and loopback cost by themselves.
//!
//! It is not a separate binary: the latency bench re-executes itself with
//! `THYMIO_BENCH_FLOOR=<relay port>` (see [`ENV`]), so nothing extra is built or installed for
//! users and no dependency is declared for it (r2r and its Stream trait come re-exported by
//! nrt-ros2).

#[cfg(feature = "ros2")]
use nrt_ros2::{futures::StreamExt, r2r};
use std::time::Duration;

/// Environment variable that turns the bench binary into the floor: the relay port to connect to.
pub const ENV: &str = "THYMIO_BENCH_FLOOR";

/// m/s per wheel speed unit (the simulation calibration q0 of the other drivers): the one multiply
/// the floor does so that its wheel targets and odometry look like a driver's.
#[cfg_attr(not(any(feature = "ros1", feature = "ros2")), allow(dead_code))]
pub const Q0: f64 = 0.000332;

/// Event ids of the driver script (config/aseba/thymio_ros_playground.aesl).
#[cfg_attr(not(any(feature = "ros1", feature = "ros2")), allow(dead_code))]
const SET_SPEED: u16 = 1;
#[cfg_attr(not(any(feature = "ros1", feature = "ros2")), allow(dead_code))]
const ODOMETRY: u16 = 2;

/// The one `set_speed` event frame a floor writes for a `cmd_vel` of `linear_x` m/s (both wheels alike).
#[cfg_attr(not(any(feature = "ros1", feature = "ros2")), allow(dead_code))]
pub fn set_speed_frame(linear_x: f64) -> Result<Vec<u8>, String> {
    let v = (linear_x / Q0).round().clamp(-500.0, 500.0) as i16;
    msgs::wire::Message::UserEvent {
        id: SET_SPEED,
        args: msgs::wire::Words::from_slice(&[v, v]),
    }
    .to_frame(0)
    .map_err(|e| format!("set_speed frame: {e}"))
}

/// Reads the robot's frames from `reader` until it ends, calling `on_odometry` with the x position (m) each
/// odometry event gives (the wheel odometries' mean times [`Q0`]); every other frame is skipped.
#[cfg_attr(not(any(feature = "ros1", feature = "ros2")), allow(dead_code))]
pub fn read_odometry(mut reader: impl std::io::Read, mut on_odometry: impl FnMut(f64)) {
    let mut r = msgs::reassembler::Reassembler::new();
    let mut buf = [0u8; 4096];
    loop {
        let n = match reader.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        let mut input = &buf[..n];
        while let Some(f) = r.push(&mut input) {
            let Ok(f) = f else { continue };
            if f.kind != ODOMETRY {
                continue;
            }
            if let Ok(msgs::wire::Message::UserEvent { args, .. }) = f.message() {
                if let (Some(left), Some(right)) = (args.get(0), args.get(1)) {
                    on_odometry(Q0 * (left as f64 + right as f64) / 2.0);
                }
            }
        }
    }
}

/// Runs the floor against the robot behind 127.0.0.1:`port` for at most `limit`.
#[cfg(feature = "ros2")]
pub fn run(port: u16, limit: Duration) -> Result<(), String> {
    use std::io::Write;
    let err = |e: r2r::Error| e.to_string();
    let ctx = r2r::Context::create().map_err(err)?;
    let mut node = r2r::Node::create(ctx, "floor", "").map_err(err)?;
    let odom = node
        .create_publisher::<r2r::nav_msgs::msg::Odometry>("/odom", r2r::QosProfile::default())
        .map_err(err)?;
    let mut cmd_vel = node
        .subscribe::<r2r::geometry_msgs::msg::Twist>("/cmd_vel", r2r::QosProfile::default())
        .map_err(err)?;
    let robot = std::net::TcpStream::connect(("127.0.0.1", port)).map_err(|e| e.to_string())?;
    robot.set_nodelay(true).map_err(|e| e.to_string())?;
    let mut writer = robot.try_clone().map_err(|e| e.to_string())?;
    let reader = robot;
    std::thread::spawn(move || {
        // In rcl's native form, refilled and published without conversion (as thymio-rt's
        // publisher thread does): the floor does no work a driver could avoid.
        let mut msg = r2r::NativeMsg::<r2r::nav_msgs::msg::Odometry>::from(
            &r2r::nav_msgs::msg::Odometry::default(),
        );
        read_odometry(reader, |x| {
            let m = &mut *msg;
            m.pose.pose.position.x = x;
            m.pose.pose.orientation.w = 1.0;
            let _ = odom.publish_native(&mut msg);
        });
    });
    println!("READY");
    let end = std::time::Instant::now() + limit;
    let waker = std::task::Waker::noop();
    let mut cx = std::task::Context::from_waker(waker);
    while std::time::Instant::now() < end {
        node.spin_once(Duration::from_millis(100));
        while let std::task::Poll::Ready(Some(t)) = cmd_vel.poll_next_unpin(&mut cx) {
            let frame = set_speed_frame(t.linear.x)?;
            writer.write_all(&frame).map_err(|e| e.to_string())?;
        }
    }
    Ok(())
}

/// Without ROS 2 there is no floor.
#[cfg(not(feature = "ros2"))]
pub fn run(_port: u16, _limit: Duration) -> Result<(), String> {
    Err("the floor needs the ros2 feature".into())
}
