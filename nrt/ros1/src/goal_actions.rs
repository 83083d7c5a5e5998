//! The goal actions on ROS 1: actionlib servers ([`nrt_ros1_client::actionlib`]) `<ns>/drive_distance`, `<ns>/rotate_angle`
//! and `<ns>/navigate_to_position` (`thymio_rt_msgs/DriveDistanceAction`, `RotateAngleAction`,
//! `NavigateToPositionAction`, the names ROS 2's actions have) for each driven Thymio that has the controllers, a
//! transport of the layer's ONE goal state machine ([`nrt_interface::goal_actions`]: the checks, the goal, the
//! feedback, the result and their texts). One generic server set ([`GoalActionServers`]) per action; each action only
//! says how its messages map to the layer's types ([`GoalAction`]). A rejection's reason is the goal's status text.
//! While a goal runs, the layer is told whether anyone subscribes to the action's `status` or `feedback` (a goal
//! whose client is gone is aborted: [`nrt_interface::goal_actions::CLIENT_GONE_TIMEOUT`]).

use handoff::{Goal, NodeId, Pose2};
use nrt_engine::engine::{Engine, EngineEvent};
use nrt_interface::calibration::End;
use nrt_interface::goal_actions::{
    ActionId, GoalActionHandle, GoalActions, GoalFeedback, GoalId, GoalResult,
};
use nrt_interface::report::Reporter;
use nrt_ros1_client::actionlib::{self, ActionServer, ActionTypes, ServerGoal};
use nrt_ros1_client::actionlib_state::{Asked, Terminal};
use nrt_ros1_client::graph::{global, Graph};
use nrt_ros1_client::ros1_msgs::actionlib_msgs::{GoalID, GoalStatus};
use nrt_ros1_client::ros1_msgs::geometry_msgs::Pose2D;
use nrt_ros1_client::ros1_msgs::std_msgs::Header;
use nrt_ros1_client::ros1_msgs::thymio_rt_msgs as tm;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::time::Instant;

/// How one goal action's actionlib messages map to the layer's goal, feedback and result.
pub trait GoalAction: ActionTypes + Sized {
    /// The action's name (one of [`nrt_interface::goal_actions::ACTIONS`]).
    const NAME: &'static str;
    /// The layer's goal of a goal message.
    fn goal(g: Self::Goal) -> Goal;
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

/// Implements [`ActionTypes`] for `$a` from the generated `thymio_rt_msgs::$a*` messages.
macro_rules! action_types {
    ($a:ident, $goal:ident, $fb:ident, $res:ident, $ag:ident, $af:ident, $ar:ident) => {
        /// The action's actionlib message types.
        pub struct $a;

        impl ActionTypes for $a {
            type Goal = tm::$goal;
            type Feedback = tm::$fb;
            type Result = tm::$res;
            type ActionGoal = tm::$ag;
            type ActionFeedback = tm::$af;
            type ActionResult = tm::$ar;

            fn split(goal: Self::ActionGoal) -> (GoalID, Self::Goal) {
                (goal.goal_id, goal.goal)
            }

            fn feedback(
                header: Header,
                status: GoalStatus,
                feedback: Self::Feedback,
            ) -> Self::ActionFeedback {
                tm::$af {
                    header,
                    status,
                    feedback,
                }
            }

            fn result(
                header: Header,
                status: GoalStatus,
                result: Self::Result,
            ) -> Self::ActionResult {
                tm::$ar {
                    header,
                    status,
                    result,
                }
            }
        }
    };
}

action_types!(
    DriveDistance,
    DriveDistanceGoal,
    DriveDistanceFeedback,
    DriveDistanceResult,
    DriveDistanceActionGoal,
    DriveDistanceActionFeedback,
    DriveDistanceActionResult
);
action_types!(
    RotateAngle,
    RotateAngleGoal,
    RotateAngleFeedback,
    RotateAngleResult,
    RotateAngleActionGoal,
    RotateAngleActionFeedback,
    RotateAngleActionResult
);
action_types!(
    NavigateToPosition,
    NavigateToPositionGoal,
    NavigateToPositionFeedback,
    NavigateToPositionResult,
    NavigateToPositionActionGoal,
    NavigateToPositionActionFeedback,
    NavigateToPositionActionResult
);

impl GoalAction for DriveDistance {
    const NAME: &'static str = "drive_distance";
    fn goal(g: tm::DriveDistanceGoal) -> Goal {
        Goal::DriveDistance {
            distance: g.distance,
            max_translation_speed: g.max_translation_speed,
        }
    }
    fn feedback_msg(f: &GoalFeedback) -> tm::DriveDistanceFeedback {
        tm::DriveDistanceFeedback {
            remaining_travel_distance: f.remaining,
            pose: pose_msg(f.pose),
        }
    }
    fn result_msg(r: GoalResult) -> tm::DriveDistanceResult {
        tm::DriveDistanceResult {
            success: r.success,
            message: r.message,
            reason: r.reason.to_owned(),
            pose: pose_msg(r.pose),
        }
    }
}

impl GoalAction for RotateAngle {
    const NAME: &'static str = "rotate_angle";
    fn goal(g: tm::RotateAngleGoal) -> Goal {
        Goal::RotateAngle {
            angle: g.angle,
            max_rotation_speed: g.max_rotation_speed,
        }
    }
    fn feedback_msg(f: &GoalFeedback) -> tm::RotateAngleFeedback {
        tm::RotateAngleFeedback {
            remaining_angle_travel: f.remaining,
            pose: pose_msg(f.pose),
        }
    }
    fn result_msg(r: GoalResult) -> tm::RotateAngleResult {
        tm::RotateAngleResult {
            success: r.success,
            message: r.message,
            reason: r.reason.to_owned(),
            pose: pose_msg(r.pose),
        }
    }
}

impl GoalAction for NavigateToPosition {
    const NAME: &'static str = "navigate_to_position";
    fn goal(g: tm::NavigateToPositionGoal) -> Goal {
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
    fn feedback_msg(f: &GoalFeedback) -> tm::NavigateToPositionFeedback {
        tm::NavigateToPositionFeedback {
            remaining_travel_distance: f.remaining,
            pose: pose_msg(f.pose),
        }
    }
    fn result_msg(r: GoalResult) -> tm::NavigateToPositionResult {
        tm::NavigateToPositionResult {
            success: r.success,
            message: r.message,
            reason: r.reason.to_owned(),
            pose: pose_msg(r.pose),
        }
    }
}

/// An accepted goal of an actionlib server.
struct Ros1Goal<A: GoalAction>(ServerGoal<A>);

impl<A: GoalAction> GoalActionHandle for Ros1Goal<A>
where
    ServerGoal<A>: Send,
{
    fn feedback(&mut self, f: &GoalFeedback) {
        let _ = self.0.feedback(A::feedback_msg(f));
    }

    fn finish(self: Box<Self>, end: End, r: GoalResult) -> Result<(), String> {
        let how = match end {
            End::Succeeded => Terminal::Succeeded,
            End::Aborted => Terminal::Aborted,
            End::Canceled => Terminal::Canceled,
        };
        let text = r.message.clone();
        self.0.finish(how, &text, A::result_msg(r));
        Ok(())
    }
}

struct Server<A: GoalAction> {
    name: String,
    action: ActionServer<A>,
    /// Its goals running in the layer, by actionlib id.
    running: BTreeMap<String, GoalId>,
}

type Built<A> = (NodeId, String, ActionServer<A>);

/// Every driven robot's actionlib server of the goal action `A`.
pub struct GoalActionServers<A: GoalAction> {
    graph: Graph,
    base: String,
    servers: BTreeMap<NodeId, Server<A>>,
    building: BTreeSet<NodeId>,
    built: Receiver<Built<A>>,
    built_tx: Sender<Built<A>>,
    reporter: Reporter,
}

impl<A: GoalAction> GoalActionServers<A>
where
    ActionServer<A>: Send,
    ServerGoal<A>: Send,
{
    /// No server yet; the robots' go under the namespace `base`.
    pub fn new(graph: &Graph, base: &str, reporter: Reporter) -> Self {
        let (built_tx, built) = channel();
        GoalActionServers {
            graph: graph.clone(),
            base: base.to_owned(),
            servers: BTreeMap::new(),
            building: BTreeSet::new(),
            built,
            built_tx,
            reporter,
        }
    }

    /// Has the registrar thread make the server of each robot the layer serves as it comes; drops a robot's as it
    /// goes (the layer ended its goal).
    pub fn on_engine_event(&mut self, engine: &Engine, goals: &GoalActions, event: &EngineEvent) {
        let Some(action) = ActionId::from_name(A::NAME) else {
            return;
        };
        match event {
            EngineEvent::RobotReady { node, robot } => {
                if !goals.serves(action, *robot)
                    || self.servers.contains_key(node)
                    || !self.building.insert(*node)
                {
                    return;
                }
                let ns = nrt_interface::frames::robot_namespace(engine, *node);
                let name = global(&[&self.base, &ns, A::NAME]);
                let (tx, id, reporter) = (self.built_tx.clone(), *node, self.reporter.clone());
                self.graph
                    .submit(move |g| match ActionServer::<A>::new(g, &name) {
                        Ok(server) => {
                            let _ = tx.send((id, name, server));
                            g.bell.ring();
                        }
                        Err(e) => reporter.error(&format!("node {id}: no {} action: {e}", A::NAME)),
                    });
            }
            EngineEvent::RobotRemoved { node, .. } => {
                self.building.remove(node);
                if let Some(s) = self.servers.remove(node) {
                    self.forget(&s.name);
                }
            }
            _ => {}
        }
    }

    fn forget(&self, name: &str) {
        for t in actionlib::topics(name) {
            self.graph.forget(&t);
        }
    }

    /// Takes the servers made into use, and hands the goals and cancels that came to the layer (never waits).
    pub fn serve(&mut self, engine: &mut Engine, goals: &mut GoalActions, now: Instant) {
        while let Ok((node, name, action)) = self.built.try_recv() {
            if !self.building.remove(&node) {
                // the robot went while its server was made
                drop(action);
                self.forget(&name);
                continue;
            }
            let server = Server {
                name,
                action,
                running: BTreeMap::new(),
            };
            self.servers.insert(node, server);
        }
        let action = ActionId::from_name(A::NAME);
        for (node, s) in self.servers.iter_mut() {
            s.running.retain(|_, id| goals.is_active(*id));
            // a goal whose client is gone (nrt_interface::goal_actions): anyone on status or feedback?
            if let Some(action) = action.filter(|a| goals.running(*a).any(|n| n == *node)) {
                goals.client_listening(*node, action, s.action.listened(), now);
            }
            while let Some(asked) = s.action.next(now) {
                match asked {
                    Asked::Goal(id, g) => {
                        let goal = A::goal(g);
                        match goals.check(engine, *node, &goal) {
                            Err(why) => s.action.reject(&id, &why),
                            Ok(goal) => {
                                let Some(handle) = s.action.accept(&id) else {
                                    continue;
                                };
                                let handle = Box::new(Ros1Goal(handle));
                                let started = goals.start(engine, *node, goal, handle, now);
                                s.running.insert(id, started);
                            }
                        }
                    }
                    Asked::Cancel(id) => {
                        if let Some(started) = s.running.remove(&id) {
                            goals.cancel(engine, started);
                        }
                    }
                }
            }
        }
    }

    /// Publishes every server's status when it changed or is due.
    pub fn publish(&mut self, now: Instant) {
        for s in self.servers.values_mut() {
            s.action.publish_status(now);
        }
    }
}

/// The three goal actions' servers.
pub struct GoalActionsRos1 {
    drive: GoalActionServers<DriveDistance>,
    rotate: GoalActionServers<RotateAngle>,
    navigate: GoalActionServers<NavigateToPosition>,
}

impl GoalActionsRos1 {
    /// No server yet; the robots' go under the namespace `base`.
    pub fn new(graph: &Graph, base: &str, reporter: Reporter) -> Self {
        GoalActionsRos1 {
            drive: GoalActionServers::new(graph, base, reporter.clone()),
            rotate: GoalActionServers::new(graph, base, reporter.clone()),
            navigate: GoalActionServers::new(graph, base, reporter),
        }
    }

    /// See [`GoalActionServers::on_engine_event`].
    pub fn on_engine_event(&mut self, engine: &Engine, goals: &GoalActions, event: &EngineEvent) {
        self.drive.on_engine_event(engine, goals, event);
        self.rotate.on_engine_event(engine, goals, event);
        self.navigate.on_engine_event(engine, goals, event);
    }

    /// See [`GoalActionServers::serve`].
    pub fn serve(&mut self, engine: &mut Engine, goals: &mut GoalActions, now: Instant) {
        self.drive.serve(engine, goals, now);
        self.rotate.serve(engine, goals, now);
        self.navigate.serve(engine, goals, now);
    }

    /// See [`GoalActionServers::publish`].
    pub fn publish(&mut self, now: Instant) {
        self.drive.publish(now);
        self.rotate.publish(now);
        self.navigate.publish(now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn goal_messages_are_the_layers_goals_and_results_carry_the_reason() {
        let g = NavigateToPosition::goal(tm::NavigateToPositionGoal {
            goal_pose: Pose2D {
                x: 0.5,
                y: -0.5,
                theta: 1.0,
            },
            achieve_goal_heading: true,
            max_translation_speed: 0.05,
            max_rotation_speed: 0.0,
        });
        let pose = Pose2 {
            x: 0.5,
            y: -0.5,
            theta: 1.0,
        };
        assert_eq!(
            g,
            Goal::NavigateToPosition {
                pose,
                achieve_goal_heading: true,
                max_translation_speed: 0.05,
                max_rotation_speed: 0.0
            }
        );
        let d = DriveDistance::goal(tm::DriveDistanceGoal {
            distance: -0.2,
            max_translation_speed: 0.1,
        });
        assert_eq!(
            d,
            Goal::DriveDistance {
                distance: -0.2,
                max_translation_speed: 0.1
            }
        );
        let r = RotateAngle::result_msg(GoalResult {
            success: false,
            message: "aborted".into(),
            reason: "cliff",
            pose,
        });
        assert_eq!((r.reason.as_str(), r.pose.theta), ("cliff", 1.0));
    }
}
