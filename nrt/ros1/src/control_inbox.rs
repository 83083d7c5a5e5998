//! What the ROS 1 handlers and tasks hand to the NRT loop ([`ControlCall`], lifecycle calls included) and the inbox
//! they hand it through ([`ControlInbox`]): a leaf module shared by the control interface ([`crate::control`]) and
//! the endpoints it registers ([`crate::controllers`], [`crate::lifecycle`]).

use handoff::{MsgValue, NodeId, RosValue};
use nrt_interface::controllers::{EndpointId, MsgAnswer};
use nrt_interface::lifecycle::State as LState;
use nrt_interface::owner_switch::Answer;
use nrt_interface::set_odometry::SetOdometryRequest;
use nrt_ros1_client::Bell;
use std::sync::mpsc::{sync_channel, Sender, SyncSender};
use std::time::Duration;

/// What a lifecycle call asks of the NRT loop.
#[derive(Debug, Clone)]
pub enum LifecycleCall {
    /// `change_state`: the transition's id and label.
    Change(u8, String),
    /// Only the current state.
    State,
}

/// The NRT loop's answer: whether the transition succeeded (true for [`LifecycleCall::State`]) and the state now.
pub type LifecycleAnswer = (bool, LState);

/// How much longer than the layer's own timeout a service handler waits for the NRT loop (which wakes at least
/// every 50 ms): the caller reads the layer's reason, not ours.
pub const ANSWER_MARGIN: Duration = Duration::from_secs(2);

/// What a service handler or subscription task hands to the NRT loop.
#[derive(Debug)]
pub enum ControlCall {
    /// `switch_controller` of robot `node`.
    Switch {
        /// The robot.
        node: NodeId,
        /// The owner asked for.
        owner: String,
        /// Where the answer goes.
        reply: SyncSender<Answer>,
    },
    /// `thymio_driver/set_odometry` of robot `node`.
    SetOdometry {
        /// The robot.
        node: NodeId,
        /// The new pose.
        request: SetOdometryRequest,
        /// Where the answer goes.
        reply: SyncSender<Answer>,
    },
    /// A lifecycle call of managed robot `node` ([`super::lifecycle`]).
    Lifecycle {
        /// The robot.
        node: NodeId,
        /// What it asks.
        call: LifecycleCall,
        /// Where the answer goes.
        reply: SyncSender<LifecycleAnswer>,
    },
    /// A message on a controller's subscription.
    Message {
        /// The robot.
        node: NodeId,
        /// The endpoint.
        endpoint: EndpointId,
        /// The message.
        value: RosValue,
    },
    /// A call of a controller's service.
    Service {
        /// The robot.
        node: NodeId,
        /// The endpoint.
        endpoint: EndpointId,
        /// The request.
        request: RosValue,
        /// Where the answer goes.
        reply: SyncSender<Answer>,
    },
    /// A message on a controller's subscription of a ROS type of its own ([`handoff::msg_endpoints`]).
    TypedMessage {
        /// The robot.
        node: NodeId,
        /// The endpoint.
        endpoint: EndpointId,
        /// The message, decoded.
        msg: MsgValue,
    },
    /// A call of a controller's service of a ROS type of its own.
    TypedService {
        /// The robot.
        node: NodeId,
        /// The endpoint.
        endpoint: EndpointId,
        /// The request, decoded.
        request: MsgValue,
        /// Where the answer goes.
        reply: SyncSender<MsgAnswer>,
    },
}

/// Where handlers and tasks hand their calls (with the NRT loop's bell).
#[derive(Clone)]
pub struct ControlInbox {
    pub(crate) tx: Sender<ControlCall>,
    pub(crate) bell: Bell,
}

impl ControlInbox {
    /// Hands `call` to the NRT loop; false when the loop is gone.
    pub fn send(&self, call: ControlCall) -> bool {
        let sent = self.tx.send(call).is_ok();
        self.bell.ring();
        sent
    }

    /// Hands the call `make` builds to the NRT loop and waits for the layer's answer, at most `layer_timeout` +
    /// [`ANSWER_MARGIN`] (on tokio's blocking pool, never on the RT thread).
    pub fn ask<A>(
        &self,
        layer_timeout: Duration,
        make: impl FnOnce(SyncSender<A>) -> ControlCall,
    ) -> Result<A, anyhow::Error> {
        let (tx, rx) = sync_channel(1);
        if !self.send(make(tx)) {
            return Err(anyhow::anyhow!("the driver is stopping"));
        }
        let wait = layer_timeout + ANSWER_MARGIN;
        rx.recv_timeout(wait).map_err(|_| {
            anyhow::anyhow!("no answer from the driver within {} s", wait.as_secs_f64())
        })
    }
}
