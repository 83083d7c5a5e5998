//! ROS 1's `/rosout` (`rosgraph_msgs/Log`): the lines a node logs for its users, read with `rqt_console` or
//! `rostopic echo /rosout`. The user decides what goes there (thymio-rt: its reporter's lines, through `nrt-ros1`).

use super::graph::{Graph, GraphError};
use super::net::Publisher;
use super::ros1_msgs::{rosgraph_msgs::Log, std_msgs::Header};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::SystemTime;

/// `/rosout` (absolute).
pub const ROSOUT: &str = "/rosout";
/// Lines queued toward each subscriber (rospy's `/rosout` publisher keeps 100).
const QUEUE: usize = 100;

/// `rosgraph_msgs/Log` levels.
pub mod level {
    /// Details.
    pub const DEBUG: u8 = 1;
    /// What happened.
    pub const INFO: u8 = 2;
    /// Something refused or degraded.
    pub const WARN: u8 = 4;
    /// Something failed.
    pub const ERROR: u8 = 8;
    /// The node cannot go on.
    pub const FATAL: u8 = 16;
}

/// The node's `/rosout` publisher.
pub struct Rosout {
    publisher: Publisher<Log>,
    /// The node's global name (ROS 1 loggers are named after their node).
    node: String,
    seq: AtomicU32,
}

impl Rosout {
    /// Advertises `/rosout` for the node of `graph` (blocking: a master round trip).
    pub fn advertise(graph: &Graph) -> Result<Rosout, GraphError> {
        Ok(Rosout {
            publisher: graph.advertise(ROSOUT, QUEUE, false)?,
            node: graph.name.clone(),
            seq: AtomicU32::new(0),
        })
    }

    /// Queues the line `text` of `level` ([`level`]) logged at `stamp`; a line that cannot be queued is dropped
    /// (the caller has it on its console).
    pub fn log(&self, level: u8, text: &str, stamp: SystemTime) {
        let _ = self.publisher.publish(&self.message(level, text, stamp));
    }

    /// The message of one line.
    fn message(&self, level: u8, text: &str, stamp: SystemTime) -> Log {
        Log {
            header: Header {
                seq: self.seq.fetch_add(1, Ordering::Relaxed),
                stamp: super::time(stamp),
                frame_id: String::new(),
            },
            level,
            name: self.node.clone(),
            msg: text.to_owned(),
            file: file!().to_owned(),
            function: String::new(),
            line: line!(),
            topics: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use roslibrust::RosMessageType;

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
