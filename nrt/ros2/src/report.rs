//! Reports for ROS users: the console (rcutils, like any ROS node) and `/rosout`.
//!
//! r2r 0.9.7 does not create the node's `/rosout` publisher (since Iron, rcl leaves that to the client library), so
//! the bridge publishes `rcl_interfaces/msg/Log` itself, with the QoS rcl gives `/rosout`. This is how a ROS client
//! learns why a request was refused: the asebaros services have no error field.

use r2r::rcl_interfaces::msg::Log;
use r2r::{LogSeverity, Publisher, QosProfile};
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
pub fn level(severity: &LogSeverity) -> u8 {
    match severity {
        LogSeverity::Unset => 0,
        LogSeverity::Debug => 10,
        LogSeverity::Info => 20,
        LogSeverity::Warn => 30,
        LogSeverity::Error => 40,
        LogSeverity::Fatal => 50,
    }
}

/// Reports on behalf of one node (cheap to clone).
#[derive(Clone)]
pub struct Reporter {
    logger: String,
    rosout: Publisher<Log>,
}

impl Reporter {
    /// A reporter for `node`, with its `/rosout` publisher.
    pub fn new(node: &mut r2r::Node) -> Result<Reporter, r2r::Error> {
        Ok(Reporter {
            logger: node.logger().to_owned(),
            rosout: node.create_publisher(ROSOUT, rosout_qos())?,
        })
    }

    /// The node's logger name (`ns.name`).
    pub fn logger(&self) -> &str {
        &self.logger
    }

    /// Logs `text` with `severity` on the console and on `/rosout`.
    pub fn report(&self, severity: LogSeverity, text: &str) {
        // rcutils takes C strings
        let text = text.replace('\0', "\u{fffd}");
        let since_epoch = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        let log = Log {
            stamp: super::convert::time(since_epoch),
            level: level(&severity),
            name: self.logger.clone(),
            msg: text.clone(),
            file: file!().to_owned(),
            function: String::new(),
            line: line!(),
        };
        r2r::log(&text, &self.logger, file!(), line!(), severity);
        // A failed publish is already on the console.
        let _ = self.rosout.publish(&log);
    }

    /// [`Self::report`] at error level.
    pub fn error(&self, text: &str) {
        self.report(LogSeverity::Error, text);
    }

    /// [`Self::report`] at warning level.
    pub fn warn(&self, text: &str) {
        self.report(LogSeverity::Warn, text);
    }

    /// [`Self::report`] at info level.
    pub fn info(&self, text: &str) {
        self.report(LogSeverity::Info, text);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_are_those_of_rcl_interfaces_log() {
        assert_eq!(level(&LogSeverity::Debug), 10);
        assert_eq!(level(&LogSeverity::Info), 20);
        assert_eq!(level(&LogSeverity::Warn), 30);
        assert_eq!(level(&LogSeverity::Error), 40);
        assert_eq!(level(&LogSeverity::Fatal), 50);
    }
}
