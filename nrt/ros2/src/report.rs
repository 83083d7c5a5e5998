//! Reports for ROS users: the layer's [`Reporter`] (`nrt_interface::report`: the console once, through `tracing`,
//! and every front end's `/rosout`), with ROS 2's `/rosout` as one of its sinks ([`Rosout`]).
//!
//! r2r 0.9.7 does not create the node's `/rosout` publisher (since Iron, rcl leaves that to the client library), so
//! the bridge publishes `rcl_interfaces/msg/Log` itself, with the QoS rcl gives `/rosout`. This is how a ROS client
//! learns why a request was refused: the asebaros services have no error field.

pub use nrt_interface::report::{LogSink, Reporter, Severity};
use r2r::rcl_interfaces::msg::Log;
use r2r::{Publisher, QosProfile};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// `/rosout` (absolute).
pub const ROSOUT: &str = "/rosout";

/// The QoS of `/rosout` in rcl: reliable, transient_local, depth 1000, lifespan 10 s.
pub fn rosout_qos() -> QosProfile {
    QosProfile::default()
        .keep_last(1000)
        .reliable()
        .transient_local()
        .lifespan(Duration::from_secs(10))
}

/// `rcl_interfaces/msg/Log` level of a severity.
pub fn level(severity: Severity) -> u8 {
    match severity {
        Severity::Debug => 10,
        Severity::Info => 20,
        Severity::Warn => 30,
        Severity::Error => 40,
    }
}

/// A node's `/rosout` publisher, a sink of the layer's reporter: its lines are named after the node's logger
/// (`ns.asebaros`), as rcl names them (r2r's publisher is `Send`, not `Sync`: the lock is held for one publish).
pub struct Rosout {
    publisher: Mutex<Publisher<Log>>,
    logger: String,
}

impl Rosout {
    /// `node`'s `/rosout` publisher.
    pub fn new(node: &mut r2r::Node) -> Result<Arc<Rosout>, r2r::Error> {
        let publisher = node.create_publisher(ROSOUT, rosout_qos())?;
        Ok(Arc::new(Rosout {
            publisher: Mutex::new(publisher),
            logger: node.logger().to_owned(),
        }))
    }
}

impl LogSink for Rosout {
    fn log(&self, severity: Severity, _logger: &str, text: &str, stamp: SystemTime) {
        let since_epoch = stamp.duration_since(UNIX_EPOCH).unwrap_or_default();
        let log = Log {
            stamp: super::convert::time(since_epoch),
            level: level(severity),
            name: self.logger.clone(),
            msg: text.to_owned(),
            file: file!().to_owned(),
            function: String::new(),
            line: line!(),
        };
        // A failed publish is already on the console.
        let publisher = self.publisher.lock().unwrap_or_else(|e| e.into_inner());
        let _ = publisher.publish(&log);
    }
}

/// A reporter of its own for `node` (its logger name), its lines on `node`'s `/rosout` (the robots' driver nodes).
pub fn node_reporter(node: &mut r2r::Node) -> Result<Reporter, r2r::Error> {
    let reporter = Reporter::new(node.logger());
    reporter.add_sink(Rosout::new(node)?);
    Ok(reporter)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_are_those_of_rcl_interfaces_log() {
        assert_eq!(level(Severity::Debug), 10);
        assert_eq!(level(Severity::Info), 20);
        assert_eq!(level(Severity::Warn), 30);
        assert_eq!(level(Severity::Error), 40);
    }
}
