//! The goal actions on ROS 2: `/<ns>/drive_distance`, `/<ns>/rotate_angle`, `/<ns>/navigate_to_position`
//! (`thymio_rt_msgs/action/DriveDistance`, `RotateAngle`, `NavigateToPosition`; r2r's action servers on the bridge
//! node), one per action and driven Thymio that has the controller: a transport of the layer's ONE goal state
//! machine ([`nrt_interface::goal_actions`]: checks, goal, feedback, result and their texts). One generic server set
//! ([`GoalActionServers`]) per action; each action only says how its messages map ([`GoalAction`]). ROS 2's goal
//! response carries no reason: a rejected goal's reason is on `/rosout`.
//!
//! A goal whose client is gone: r2r does not show its action server's publishers, so each server has a probe, a
//! publisher of its own on the action's hidden `<action>/_action/status` (the status's type and QoS, never
//! published on) whose matched subscriptions are the action clients listening (every rclpy / rclcpp action client
//! subscribes to it). While a goal runs, the layer is told whether there are any
//! ([`nrt_interface::goal_actions::CLIENT_GONE_TIMEOUT`]). A client that exits leaves the DDS graph at once; one
//! killed leaves it when its DDS participant's lease runs out (Fast DDS: within its lease duration).

use super::action_cancels::ActionCancels;
use super::report::Reporter;
use super::spinner::NodeAccess;
use super::thymio_endpoints::topic;
use futures::{FutureExt, Stream, StreamExt};
use handoff::{Goal, NodeId, Pose2};
use nrt_engine::engine::{Engine, EngineEvent};
use nrt_interface::calibration::End;
use nrt_interface::goal_actions::{
    ActionId, GoalActionHandle, GoalActions, GoalFeedback, GoalId, GoalResult,
};
use r2r::action_msgs::msg::GoalStatusArray;
use r2r::geometry_msgs::msg::Pose2D;
use r2r::thymio_rt_msgs::action::{DriveDistance, NavigateToPosition, RotateAngle};
use r2r::{
    ActionServerGoal, ActionServerGoalRequest, Publisher, QosProfile, WrappedActionTypeSupport,
};
use std::collections::BTreeMap;
use std::time::Instant;

/// How one goal action's r2r messages map to the layer's goal, feedback and result.
pub trait GoalAction: WrappedActionTypeSupport + 'static {
    /// The action's name (one of [`nrt_interface::goal_actions::ACTIONS`]).
    const NAME: &'static str;
    /// The layer's goal of a goal message.
    fn goal(g: &Self::Goal) -> Goal;
    /// The feedback message.
    fn feedback_msg(f: &GoalFeedback) -> Self::Feedback;
    /// The result message.
    fn result_msg(r: GoalResult) -> Self::Result;
}

fn pose_msg(p: Pose2) -> Pose2D {
    Pose2D {
        x: p.x,
        y: p.y,
        theta: p.theta,
    }
}

impl GoalAction for DriveDistance::Action {
    const NAME: &'static str = "drive_distance";
    fn goal(g: &DriveDistance::Goal) -> Goal {
        Goal::DriveDistance {
            distance: g.distance,
            max_translation_speed: g.max_translation_speed,
        }
    }
    fn feedback_msg(f: &GoalFeedback) -> DriveDistance::Feedback {
        DriveDistance::Feedback {
            remaining_travel_distance: f.remaining,
            pose: pose_msg(f.pose),
        }
    }
    fn result_msg(r: GoalResult) -> DriveDistance::Result {
        DriveDistance::Result {
            success: r.success,
            message: r.message,
            reason: r.reason.to_owned(),
            pose: pose_msg(r.pose),
        }
    }
}

impl GoalAction for RotateAngle::Action {
    const NAME: &'static str = "rotate_angle";
    fn goal(g: &RotateAngle::Goal) -> Goal {
        Goal::RotateAngle {
            angle: g.angle,
            max_rotation_speed: g.max_rotation_speed,
        }
    }
    fn feedback_msg(f: &GoalFeedback) -> RotateAngle::Feedback {
        RotateAngle::Feedback {
            remaining_angle_travel: f.remaining,
            pose: pose_msg(f.pose),
        }
    }
    fn result_msg(r: GoalResult) -> RotateAngle::Result {
        RotateAngle::Result {
            success: r.success,
            message: r.message,
            reason: r.reason.to_owned(),
            pose: pose_msg(r.pose),
        }
    }
}

impl GoalAction for NavigateToPosition::Action {
    const NAME: &'static str = "navigate_to_position";
    fn goal(g: &NavigateToPosition::Goal) -> Goal {
        Goal::NavigateToPosition {
            pose: Pose2 {
                x: g.goal_pose.x,
                y: g.goal_pose.y,
                theta: g.goal_pose.theta,
            },
            achieve_goal_heading: g.achieve_goal_heading,
            max_translation_speed: g.max_translation_speed,
            max_rotation_speed: g.max_rotation_speed,
        }
    }
    fn feedback_msg(f: &GoalFeedback) -> NavigateToPosition::Feedback {
        NavigateToPosition::Feedback {
            remaining_travel_distance: f.remaining,
            pose: pose_msg(f.pose),
        }
    }
    fn result_msg(r: GoalResult) -> NavigateToPosition::Result {
        NavigateToPosition::Result {
            success: r.success,
            message: r.message,
            reason: r.reason.to_owned(),
            pose: pose_msg(r.pose),
        }
    }
}

type Goals<A> = Box<dyn Stream<Item = ActionServerGoalRequest<A>> + Unpin>;

/// Every driven robot's action server of the goal action `A`.
pub struct GoalActionServers<A: GoalAction> {
    servers: BTreeMap<NodeId, Goals<A>>,
    /// Each server's probe of its status's subscribers (see the module documentation).
    probes: BTreeMap<NodeId, Publisher<GoalStatusArray>>,
    /// The cancel requests of the goals running.
    cancels: ActionCancels<GoalId>,
    reporter: Reporter,
}

impl<A: GoalAction> GoalActionServers<A> {
    /// No action server yet.
    pub fn new(reporter: Reporter) -> Self {
        GoalActionServers {
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
        goals: &GoalActions,
        event: &EngineEvent,
    ) {
        let (EngineEvent::RobotReady { node, robot }, Some(action)) =
            (event, ActionId::from_name(A::NAME))
        else {
            return;
        };
        if !goals.serves(action, *robot) || self.servers.contains_key(node) {
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
    /// status (never blocks).
    pub fn watch_clients(&self, goals: &mut GoalActions, now: Instant) {
        let Some(action) = ActionId::from_name(A::NAME) else {
            return;
        };
        let running: Vec<NodeId> = goals.running(action).collect();
        for node in running {
            let Some(probe) = self.probes.get(&node) else {
                continue;
            };
            if let Ok(n) = probe.get_inter_process_subscription_count() {
                goals.client_listening(node, action, n > 0, now);
            }
        }
    }

    /// Hands the goals and cancels that came to the layer (never blocks); whether it accepted a cancel (r2r sends
    /// the answer at its spinner's next wait: wake it).
    pub fn serve(&mut self, engine: &mut Engine, goals: &mut GoalActions, now: Instant) -> bool {
        for (node, server) in self.servers.iter_mut() {
            while let Some(Some(req)) = server.next().now_or_never() {
                let goal = A::goal(&req.goal);
                if goals.check(engine, *node, &goal).is_err() {
                    let _ = req.reject();
                    continue;
                }
                match req.accept() {
                    Ok((handle, cancels)) => {
                        let id =
                            goals.start(engine, *node, goal, Box::new(Ros2Goal::<A>(handle)), now);
                        self.cancels.insert(id, cancels);
                    }
                    Err(e) => self.reporter.warn(&format!(
                        "{} (node {node}): cannot accept a goal: {e}",
                        A::NAME
                    )),
                }
            }
        }
        let cancelled = self.cancels.accept_all(|id| goals.is_active(id));
        for &id in &cancelled {
            goals.cancel(engine, id);
        }
        !cancelled.is_empty()
    }
}

/// An accepted goal of r2r's action server.
struct Ros2Goal<A: GoalAction>(ActionServerGoal<A>);

impl<A: GoalAction> GoalActionHandle for Ros2Goal<A>
where
    ActionServerGoal<A>: Send,
{
    fn feedback(&mut self, f: &GoalFeedback) {
        let _ = self.0.publish_feedback(A::feedback_msg(f));
    }

    fn finish(mut self: Box<Self>, end: End, r: GoalResult) -> Result<(), String> {
        let result = A::result_msg(r);
        match end {
            End::Succeeded => self.0.succeed(result),
            End::Aborted => self.0.abort(result),
            End::Canceled => self.0.cancel(result),
        }
        .map_err(|e| e.to_string())
    }
}

/// The three goal actions' servers.
pub struct GoalActionsRos2 {
    drive: GoalActionServers<DriveDistance::Action>,
    rotate: GoalActionServers<RotateAngle::Action>,
    navigate: GoalActionServers<NavigateToPosition::Action>,
}

impl GoalActionsRos2 {
    /// No action server yet.
    pub fn new(reporter: Reporter) -> Self {
        GoalActionsRos2 {
            drive: GoalActionServers::new(reporter.clone()),
            rotate: GoalActionServers::new(reporter.clone()),
            navigate: GoalActionServers::new(reporter),
        }
    }

    /// See [`GoalActionServers::on_engine_event`].
    pub fn on_engine_event(
        &mut self,
        ros: &mut NodeAccess,
        engine: &Engine,
        goals: &GoalActions,
        event: &EngineEvent,
    ) {
        self.drive.on_engine_event(ros, engine, goals, event);
        self.rotate.on_engine_event(ros, engine, goals, event);
        self.navigate.on_engine_event(ros, engine, goals, event);
    }

    /// See [`GoalActionServers::watch_clients`].
    pub fn watch_clients(&self, goals: &mut GoalActions, now: Instant) {
        self.drive.watch_clients(goals, now);
        self.rotate.watch_clients(goals, now);
        self.navigate.watch_clients(goals, now);
    }

    /// See [`GoalActionServers::serve`].
    pub fn serve(&mut self, engine: &mut Engine, goals: &mut GoalActions, now: Instant) -> bool {
        let drive = self.drive.serve(engine, goals, now);
        let rotate = self.rotate.serve(engine, goals, now);
        let navigate = self.navigate.serve(engine, goals, now);
        drive || rotate || navigate
    }
}
