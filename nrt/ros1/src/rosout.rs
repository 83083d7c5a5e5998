//! ROS 1's `/rosout` ([`nrt_ros1_client::rosout`]) as a sink of the layer's reporter (`nrt_interface::report`): a
//! ROS 1 user reads the lines a ROS 2 user reads on its `/rosout` (why a request was refused, a link lost, a script
//! failed), e.g. with `rqt_console` or `rostopic echo /rosout`.

use super::Ros1Error;
use nrt_interface::report::{LogSink, Severity};
use nrt_ros1_client::graph::Graph;
use nrt_ros1_client::rosout::level as lv;
use std::sync::Arc;
use std::time::SystemTime;

pub use nrt_ros1_client::rosout::ROSOUT;

/// `rosgraph_msgs/Log` level of a severity (DEBUG 1, INFO 2, WARN 4, ERROR 8; FATAL 16 is not used).
pub fn level(severity: Severity) -> u8 {
    match severity {
        Severity::Debug => lv::DEBUG,
        Severity::Info => lv::INFO,
        Severity::Warn => lv::WARN,
        Severity::Error => lv::ERROR,
    }
}

/// The node's `/rosout` publisher, a sink of the reporter.
pub struct Rosout(nrt_ros1_client::rosout::Rosout);

impl Rosout {
    /// Advertises `/rosout` for the node of `graph`.
    pub fn advertise(graph: &Graph) -> Result<Arc<Rosout>, Ros1Error> {
        Ok(Arc::new(Rosout(
            nrt_ros1_client::rosout::Rosout::advertise(graph)?,
        )))
    }
}

impl LogSink for Rosout {
    fn log(&self, severity: Severity, _logger: &str, text: &str, stamp: SystemTime) {
        // a line that cannot be queued is already on the console
        self.0.log(level(severity), text, stamp);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_are_those_of_rosgraph_msgs_log() {
        let levels = [
            Severity::Debug,
            Severity::Info,
            Severity::Warn,
            Severity::Error,
        ]
        .map(level);
        assert_eq!(levels, [1, 2, 4, 8]);
    }
}
