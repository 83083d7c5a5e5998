//! ROS 1's `/rosout` (`rosgraph_msgs/Log`), a sink of the layer's reporter (`nrt_interface::report`): a ROS 1 user
//! reads the lines a ROS 2 user reads on its `/rosout` (why a request was refused, a link lost, a script failed),
//! e.g. with `rqt_console` or `rostopic echo /rosout`.

use super::conv;
use super::Ros1Error;
use nrt_interface::report::{LogSink, Severity};
use nrt_ros1_client::graph::Graph;
use nrt_ros1_client::net::Publisher;
use nrt_ros1_client::ros1_msgs::{rosgraph_msgs::Log, std_msgs::Header};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

/// `/rosout` (absolute).
pub const ROSOUT: &str = "/rosout";
/// Lines queued toward each subscriber (rospy's `/rosout` publisher keeps 100).
const QUEUE: usize = 100;

/// `rosgraph_msgs/Log` level of a severity (DEBUG 1, INFO 2, WARN 4, ERROR 8; FATAL 16 is not used).
pub fn level(severity: Severity) -> u8 {
    match severity {
        Severity::Debug => 1,
        Severity::Info => 2,
        Severity::Warn => 4,
        Severity::Error => 8,
    }
}

/// The node's `/rosout` publisher.
pub struct Rosout {
    publisher: Publisher<Log>,
    /// The node's global name (ROS 1 loggers are named after their node).
    node: String,
    seq: AtomicU32,
}

impl Rosout {
    /// Advertises `/rosout` for the node of `graph`.
    pub fn advertise(graph: &Graph) -> Result<Arc<Rosout>, Ros1Error> {
        Ok(Arc::new(Rosout {
            publisher: graph.advertise(ROSOUT, QUEUE, false)?,
            node: graph.name.clone(),
            seq: AtomicU32::new(0),
        }))
    }

    /// The message of one line.
    fn message(&self, severity: Severity, text: &str, stamp: SystemTime) -> Log {
        Log {
            header: Header {
                seq: self.seq.fetch_add(1, Ordering::Relaxed),
                stamp: conv::time(stamp.duration_since(UNIX_EPOCH).unwrap_or_default()),
                frame_id: String::new(),
            },
            level: level(severity),
            name: self.node.clone(),
            msg: text.to_owned(),
            file: file!().to_owned(),
            function: String::new(),
            line: line!(),
            topics: Vec::new(),
        }
    }
}

impl LogSink for Rosout {
    fn log(&self, severity: Severity, _logger: &str, text: &str, stamp: SystemTime) {
        // a line that cannot be queued is already on the console
        let _ = self.publisher.publish(&self.message(severity, text, stamp));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use roslibrust::RosMessageType;

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

    /// The vendored definition is Debian's (python3-rosgraph-msgs, the peer of the tests): same MD5 sum.
    #[test]
    fn the_log_md5_sum_is_debians() {
        let path = "/usr/lib/python3/dist-packages/rosgraph_msgs/msg/_Log.py";
        let text = std::fs::read_to_string(path).unwrap_or_else(|e| {
            panic!("{path}: {e} (scripts/setup-ros1.sh installs python3-rosgraph-msgs)")
        });
        let debian = text
            .lines()
            .find_map(|l| l.trim().strip_prefix("_md5sum = "))
            .expect("_md5sum in _Log.py")
            .trim_matches('"');
        assert_eq!(Log::DESCRIPTION.md5sum, debian);
        assert_eq!(Log::DESCRIPTION.md5sum, "acffd30cd6b6de30f120938c17c593fb");
    }
}
