//! One action-server shape on ROS 2 for every action of the layer's action state machine
//! ([`nrt_interface::action`]: the goal actions and the motor calibration): r2r's action server on the bridge node,
//! one per action and driven Thymio that has the controller, a transport of the layer (checks, goal, feedback,
//! result and their texts are there). Each action only says how its messages map to the layer's types
//! ([`RosAction`]). ROS 2's goal response carries no reason: a rejected goal's reason is on `/rosout` (warning
//! `NAME (node N): goal rejected: …`).
//!
//! A goal whose client is gone (the actions that ask for it, [`RosAction::PROBE`]): r2r does not show its action
//! server's publishers, so each server has a probe, a publisher of its own on the action's hidden
//! `<action>/_action/status` (the status's type and QoS, never published on) whose matched subscriptions are the
//! action clients listening (every rclpy / rclcpp action client subscribes to it). While a goal runs, the layer is
//! told whether there are any ([`nrt_interface::action::CLIENT_GONE_TIMEOUT`]). A client that exits leaves the DDS
//! graph at once; one killed leaves it when its DDS participant's lease runs out (Fast DDS: within its lease
//! duration).

use super::action_cancels::ActionCancels;
use super::report::Reporter;
use super::spinner::NodeAccess;
use super::thymio_endpoints::topic;
use futures::{FutureExt, Stream, StreamExt};
use handoff::NodeId;
use nrt_engine::engine::{Engine, EngineEvent};
use nrt_interface::action::{
    action_named, ActionHandle, ActionKind, Actions, End, GoalId, HandleOf, OnEngine,
};
use r2r::action_msgs::msg::GoalStatusArray;
use r2r::{
    ActionServerGoal, ActionServerGoalRequest, Publisher, QosProfile, WrappedActionTypeSupport,
};
use std::collections::BTreeMap;
use std::time::Instant;

/// The layer's feedback of action `A`.
type FeedbackOf<A> = <<A as RosAction>::Kind as ActionKind>::Feedback;
/// The layer's result of action `A`.
type ResultOf<A> = <<A as RosAction>::Kind as ActionKind>::Result;

/// How one action's r2r messages map to the layer's goal, feedback and result.
pub trait RosAction: WrappedActionTypeSupport + 'static {
    /// The layer's kind of the action.
    type Kind: OnEngine;
    /// The action's name (one of the kind's [`ActionKind::NAMES`]).
    const NAME: &'static str;
    /// Whether the layer is told if anyone listens to the action's status (see the module documentation).
    const PROBE: bool;
    /// The layer's goal of a goal message.
    fn goal(g: &Self::Goal) -> <Self::Kind as ActionKind>::Request;
    /// The feedback message.
    fn feedback_msg(f: &FeedbackOf<Self>) -> Self::Feedback;
    /// The result message.
    fn result_msg(r: ResultOf<Self>) -> Self::Result;
}

type Goals<A> = Box<dyn Stream<Item = ActionServerGoalRequest<A>> + Unpin>;

/// Every driven robot's action server of the action `A`.
pub struct ActionServers<A: RosAction> {
    servers: BTreeMap<NodeId, Goals<A>>,
    /// Each server's probe of its status's subscribers (see the module documentation).
    probes: BTreeMap<NodeId, Publisher<GoalStatusArray>>,
    /// The cancel requests of the goals running.
    cancels: ActionCancels<GoalId>,
    reporter: Reporter,
}

impl<A: RosAction> ActionServers<A>
where
    ActionServerGoal<A>: Send,
{
    /// No action server yet.
    pub fn new(reporter: Reporter) -> Self {
        ActionServers {
            servers: BTreeMap::new(),
            probes: BTreeMap::new(),
            cancels: ActionCancels::new(),
            reporter,
        }
    }

    /// Creates an action server for each robot the layer serves as it comes (r2r cannot remove one: it stays, its
    /// goals rejected while the robot is gone, and is reused if the robot comes back).
    pub fn on_engine_event(
        &mut self,
        ros: &mut NodeAccess,
        engine: &Engine,
        actions: &Actions<A::Kind>,
        event: &EngineEvent,
    ) {
        let (EngineEvent::RobotReady { node, robot }, Some(action)) =
            (event, action_named::<A::Kind>(A::NAME))
        else {
            return;
        };
        if !actions.serves(action, *robot) || self.servers.contains_key(node) {
            return;
        }
        let ns = nrt_interface::frames::robot_namespace(engine, *node);
        let name = topic(&ns, A::NAME);
        match ros.get().create_action_server::<A>(&name) {
            Ok(server) => {
                self.servers.insert(*node, Box::new(server));
            }
            Err(e) => self
                .reporter
                .error(&format!("node {node}: no {} action: {e}", A::NAME)),
        }
        if !A::PROBE {
            return;
        }
        // the status's QoS (rcl_action's: reliable, transient local, the last one), so that every client matches
        let qos = QosProfile::default()
            .keep_last(1)
            .reliable()
            .transient_local();
        let status = format!("{name}/_action/status");
        match ros.get().create_publisher::<GoalStatusArray>(&status, qos) {
            Ok(probe) => {
                self.probes.insert(*node, probe);
            }
            Err(e) => self.reporter.warn(&format!(
                "node {node}: {}: no probe of its clients ({e}): a goal whose client is gone runs to its end",
                A::NAME
            )),
        }
    }

    /// Tells the layer, for each robot whose goal of this action runs, whether an action client listens to its
    /// status (never blocks; nothing without [`RosAction::PROBE`]).
    pub fn watch_clients(&self, actions: &mut Actions<A::Kind>, now: Instant) {
        let Some(action) = action_named::<A::Kind>(A::NAME) else {
            return;
        };
        let running: Vec<NodeId> = actions.running(action).collect();
        for node in running {
            let Some(probe) = self.probes.get(&node) else {
                continue;
            };
            if let Ok(n) = probe.get_inter_process_subscription_count() {
                actions.client_listening(node, action, n > 0, now);
            }
        }
    }

    /// Hands the goals and cancels that came to the layer (never blocks); whether it accepted a cancel (r2r sends
    /// the answer at its spinner's next wait: wake it).
    pub fn serve(
        &mut self,
        engine: &mut Engine,
        actions: &mut Actions<A::Kind>,
        now: Instant,
    ) -> bool {
        for (node, server) in self.servers.iter_mut() {
            while let Some(Some(req)) = server.next().now_or_never() {
                let goal = A::goal(&req.goal);
                let Ok(checked) = actions.check(A::Kind::host_ref(engine), *node, &goal) else {
                    let _ = req.reject();
                    continue;
                };
                match req.accept() {
                    Ok((handle, cancels)) => {
                        let handle: Box<HandleOf<A::Kind>> = Box::new(Ros2Goal::<A>(handle));
                        let host = A::Kind::host(engine);
                        let id = actions.start(host, *node, checked, handle, now);
                        self.cancels.insert(id, cancels);
                    }
                    Err(e) => self.reporter.warn(&format!(
                        "{} (node {node}): cannot accept a goal: {e}",
                        A::NAME
                    )),
                }
            }
        }
        let cancelled = self.cancels.accept_all(|id| actions.is_active(id));
        for &id in &cancelled {
            actions.cancel(A::Kind::host(engine), id);
        }
        !cancelled.is_empty()
    }
}

/// An accepted goal of r2r's action server.
struct Ros2Goal<A: RosAction>(ActionServerGoal<A>);

impl<A: RosAction> ActionHandle<FeedbackOf<A>, ResultOf<A>> for Ros2Goal<A>
where
    ActionServerGoal<A>: Send,
{
    fn feedback(&mut self, f: &FeedbackOf<A>) {
        let _ = self.0.publish_feedback(A::feedback_msg(f));
    }

    fn finish(mut self: Box<Self>, end: End, r: ResultOf<A>) -> Result<(), String> {
        let result = A::result_msg(r);
        match end {
            End::Succeeded => self.0.succeed(result),
            End::Aborted => self.0.abort(result),
            End::Canceled => self.0.cancel(result),
        }
        .map_err(|e| e.to_string())
    }
}
