//! What the network manager takes and reports: its timing, frames to send and their destination, events,
//! errors and VM commands.

use super::node::{IgnoreReason, Via};
use super::requests::RequestId;
use handoff::NodeId;
use msgs::wire::MAX_PAYLOAD_WORDS;
use std::time::Duration;

/// Timing of the manager.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ManagerConfig {
    /// Period of LIST_NODES (asebaros: 1 s).
    pub ping_period: Duration,
    /// Silence after which a node is considered gone (asebaros: 3 s).
    pub node_timeout: Duration,
    /// Delay before asking again for an incomplete description.
    pub describe_retry: Duration,
    /// Deadline of a GET_VARIABLES request.
    pub request_timeout: Duration,
    /// Highest protocol version accepted.
    pub max_protocol_version: u16,
}

impl Default for ManagerConfig {
    fn default() -> Self {
        Self {
            ping_period: Duration::from_secs(1),
            node_timeout: Duration::from_secs(3),
            describe_retry: Duration::from_secs(1),
            request_timeout: Duration::from_millis(1000),
            max_protocol_version: 100,
        }
    }
}

/// Where a frame goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dest {
    /// One link.
    Link(Via),
    /// Every link.
    All,
}

/// A frame to send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outgoing {
    /// Destination link(s).
    pub dest: Dest,
    /// The whole frame.
    pub frame: Vec<u8>,
}

/// What happened on the network.
#[derive(Debug, Clone, PartialEq)]
pub enum NetworkEvent {
    /// A node answered for the first time; its description is being read.
    NodeDiscovered {
        /// Node id.
        id: NodeId,
        /// Protocol version it announced.
        protocol_version: u16,
    },
    /// A node is described and bridged.
    NodeAccepted {
        /// Node id.
        id: NodeId,
    },
    /// A node is described but not bridged.
    NodeIgnored {
        /// Node id.
        id: NodeId,
        /// Why.
        reason: IgnoreReason,
    },
    /// A node went silent (or its link was lost).
    NodeLost {
        /// Node id.
        id: NodeId,
    },
    /// A lost node answered again.
    NodeBack {
        /// Node id.
        id: NodeId,
    },
    /// A user event from a node.
    UserEvent {
        /// Sender node id.
        source: NodeId,
        /// Event id (message type).
        id: u16,
        /// Arguments.
        args: Vec<i16>,
        /// RT receive time, CLOCK_MONOTONIC nanoseconds (0 if unknown).
        stamp_ns: u64,
    },
    /// A node reported its VM state.
    ExecutionState {
        /// Node id.
        id: NodeId,
        /// Program counter.
        pc: u16,
        /// Execution flags.
        flags: u16,
        /// RT receive time, CLOCK_MONOTONIC nanoseconds (0 if unknown): when the node said it, not
        /// when the engine got to it (a busy NRT loop can take seconds).
        stamp_ns: u64,
    },
    /// A node reported a VM error (it stopped) or a node-specific message.
    VmError {
        /// Node id.
        id: NodeId,
        /// Human-readable text.
        message: String,
    },
    /// A GET_VARIABLES request completed or failed.
    Variables {
        /// The request.
        request: RequestId,
        /// Values, or why not.
        result: Result<Vec<i16>, NetError>,
    },
}

/// Errors of network operations.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NetError {
    /// No such node.
    #[error("no node with id {0}")]
    UnknownNode(NodeId),
    /// The node is not described yet.
    #[error("node {0} is not described yet")]
    NotDescribed(NodeId),
    /// The node is not connected.
    #[error("node {0} is not connected")]
    Disconnected(NodeId),
    /// No such variable on the node.
    #[error("node {node} has no variable \"{name}\"")]
    UnknownVariable {
        /// Node id.
        node: NodeId,
        /// Variable name.
        name: String,
    },
    /// Wrong number of values for a variable.
    #[error("variable \"{name}\" has size {expected}, got {got} values")]
    WrongSize {
        /// Variable name.
        name: String,
        /// Its size.
        expected: usize,
        /// Values given.
        got: usize,
    },
    /// A raw access outside the node's variable memory.
    #[error("variables {start}..{end} outside the memory of node {node} ({size} words)")]
    OutOfRange {
        /// Node id.
        node: NodeId,
        /// First address.
        start: usize,
        /// One past the last address.
        end: usize,
        /// Memory size.
        size: usize,
    },
    /// Too many arguments for one message.
    #[error("{0} words exceed the {MAX_PAYLOAD_WORDS}-word limit of one message")]
    TooLarge(usize),
    /// Bytecode larger than the node's bytecode memory.
    #[error("bytecode of {got} words exceeds the node's {size}")]
    BytecodeTooLarge {
        /// Image size.
        got: usize,
        /// Node capacity.
        size: usize,
    },
    /// A user event id outside 0..0x8000.
    #[error("event id {0} is not a user event id (< 0x8000)")]
    BadEventId(u16),
    /// No reply in time.
    #[error("node {node} did not answer within {ms} ms")]
    Timeout {
        /// Node id.
        node: NodeId,
        /// Deadline.
        ms: u64,
    },
    /// The node was lost while waiting.
    #[error("node {0} was lost while waiting for its reply")]
    Lost(NodeId),
}

/// VM commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Command {
    /// RESET.
    Reset,
    /// RUN.
    Run,
    /// PAUSE.
    Pause,
    /// STEP.
    Step,
    /// STOP.
    Stop,
    /// GET_EXECUTION_STATE.
    GetExecutionState,
    /// WRITE_BYTECODE (persist the program).
    WriteBytecode,
    /// REBOOT.
    Reboot,
}
