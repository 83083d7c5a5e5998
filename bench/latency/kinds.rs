//! The names the bench's processes share (which client or listener a re-executed bench binary runs, the driver
//! script's odometry event, a ROS 2 process's environment): a leaf module every measurement uses.

use std::process::Command;

/// Environment variable that turns the bench binary into a client: its kind, [`R2R`], [`TCPROS`] or
/// [`TF_LISTENER`].
pub const CLIENT_ENV: &str = "THYMIO_BENCH_CLIENT";

/// The kind (and the `client` field of the rows) of the r2r client.
pub const R2R: &str = "r2r";

/// The kind (and the `client` field of the rows) of the ROS 1 client: its transport, TCPROS.
pub const TCPROS: &str = "tcpros";

/// The client kind of the `/tf` listener.
pub const TF_LISTENER: &str = "tf-listener";

/// The odometry event id of the driver script (config/aseba/thymio_ros_playground.aesl).
pub const ODOMETRY: u16 = 2;

/// A ROS 2 process environment confined to loopback in its own domain.
pub fn ros_env(cmd: &mut Command, domain: u32) {
    cmd.env("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
        .env("ROS_DOMAIN_ID", domain.to_string());
}
