//! The NRT half of a controller's message endpoints as a front end sees it ([`NrtMessagePort`]: type-erased
//! drains, stores and calls of ROS messages in their JSON shape, [`MsgValue`], converted with a [`MsgCtx`]); re-exported
//! by [`crate::msg_endpoints`], which builds them. Apart so that [`crate::NrtEndpoint`] can hold one without the
//! endpoints and the message endpoints using each other.

use crate::ids::{NodeId, RobotId};
use crate::params::monotonic_ns;
use crate::ros_value::RosValue;
use crate::service::{RequestId, ServiceError};

/// A ROS message on the NRT side, in the JSON shape of ROS 2 messages (see the module documentation).
pub type MsgValue = serde_json::Value;

/// Converts an RT value to its ROS message (NRT side).
pub type ToMsg<T> = fn(&T, &MsgCtx) -> MsgValue;

/// Converts a ROS message to an RT value (NRT side); `Err`: why the message is refused (nothing reaches RT).
pub type FromMsg<T> = fn(&MsgValue) -> Result<T, String>;

/// What a conversion to a message may need: the robot, and stamps on the ROS clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MsgCtx {
    /// The driven robot's Aseba node.
    pub node: NodeId,
    /// Its RT slot.
    pub robot: RobotId,
    /// System time now minus CLOCK_MONOTONIC now (ns), read once by the front end per batch.
    system_minus_steady_ns: i128,
}

impl MsgCtx {
    /// The context of robot `node` in slot `robot`, with both clocks read now.
    pub fn new(node: NodeId, robot: RobotId) -> MsgCtx {
        let system = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as i128);
        MsgCtx {
            node,
            robot,
            system_minus_steady_ns: system - i128::from(monotonic_ns()),
        }
    }

    /// An RT time (CLOCK_MONOTONIC ns, e.g. `RobotView::now_ns`; 0 = now) as a ROS stamp
    /// (`{"sec", "nanosec"}`, system time since the epoch).
    pub fn stamp(&self, mono_ns: u64) -> MsgValue {
        let mono = if mono_ns == 0 {
            monotonic_ns()
        } else {
            mono_ns
        };
        let t = (i128::from(mono) + self.system_minus_steady_ns).max(0);
        serde_json::json!({
            "sec": (t / 1_000_000_000) as i64,
            "nanosec": (t % 1_000_000_000) as u32,
        })
    }

    /// A `std_msgs/Header` stamped at RT time `mono_ns` in frame `frame_id`.
    pub fn header(&self, mono_ns: u64, frame_id: &str) -> MsgValue {
        serde_json::json!({"stamp": self.stamp(mono_ns), "frame_id": frame_id})
    }
}

/// NRT half of a message publisher (type-erased): drains what RT published, as messages.
pub trait NrtMessageDrain: Send {
    /// Hands every value RT published since the last call, converted, to `f`; returns how many.
    fn nrt_drain(&mut self, ctx: &MsgCtx, f: &mut dyn FnMut(MsgValue)) -> usize;
}

/// NRT half of a message subscriber (type-erased): converts and stores.
pub trait NrtMessageStore: Send {
    /// Converts `msg` and stores it for RT; `Err` (nothing stored): the conversion's refusal.
    fn nrt_store(&mut self, msg: &MsgValue) -> Result<(), String>;

    /// Stores an RT value as the flight recorder recorded it (a replay); `Err`: the subscriber's type is not the
    /// value's.
    fn nrt_store_recorded(&mut self, value: RosValue) -> Result<(), String>;
}

/// Why a message service call was not forwarded to RT.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MsgCallError {
    /// The conversion refused the request.
    #[error("bad request: {0}")]
    Refused(String),
    /// Too many requests in flight.
    #[error(transparent)]
    Busy(#[from] ServiceError),
}

/// NRT half of a message service (type-erased): forwards converted requests, polls converted responses.
pub trait NrtMessageCall: Send {
    /// Converts `request` and forwards it to RT.
    fn nrt_call(&mut self, request: &MsgValue) -> Result<RequestId, MsgCallError>;
    /// The next answer RT gave, converted.
    fn nrt_poll_response(&mut self, ctx: &MsgCtx) -> Option<(RequestId, MsgValue)>;
}

/// The NRT half of a message endpoint, by role.
pub enum NrtMessagePort {
    /// RT publishes; the front end publishes the converted messages.
    Publisher(Box<dyn NrtMessageDrain>),
    /// The front end subscribes and stores each message.
    Subscriber(Box<dyn NrtMessageStore>),
    /// The front end serves the service through RT.
    Service(Box<dyn NrtMessageCall>),
}

impl std::fmt::Debug for NrtMessagePort {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            NrtMessagePort::Publisher(_) => "Publisher(..)",
            NrtMessagePort::Subscriber(_) => "Subscriber(..)",
            NrtMessagePort::Service(_) => "Service(..)",
        })
    }
}
