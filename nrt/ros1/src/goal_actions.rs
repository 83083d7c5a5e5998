//! The goal actions on ROS 1: actionlib servers `<ns>/drive_distance`, `<ns>/rotate_angle` and
//! `<ns>/navigate_to_position` (`thymio_rt_msgs/DriveDistanceAction`, `RotateAngleAction`,
//! `NavigateToPositionAction`, the names ROS 2's actions have) for each driven Thymio that has the controllers: the
//! front end's one action-server shape ([`ActionServers`], which tells the layer whether a goal's client listens)
//! over the layer's goal actions ([`nrt_interface::goal_actions`]: the checks, the goal, the feedback, the result
//! and their texts); each action only says how its messages map to the layer's types ([`Ros1Action`]).

use super::action_server::{ActionServers, Ros1Action};
use handoff::{Goal, Pose2};
use nrt_engine::engine::{Engine, EngineEvent};
use nrt_interface::goal_actions::{GoalActions, GoalFeedback, GoalKind, GoalResult};
use nrt_interface::report::Reporter;
use nrt_ros1_client::actionlib::ActionTypes;
use nrt_ros1_client::graph::Graph;
use nrt_ros1_client::ros1_msgs::actionlib_msgs::{GoalID, GoalStatus};
use nrt_ros1_client::ros1_msgs::geometry_msgs::Pose2D;
use nrt_ros1_client::ros1_msgs::std_msgs::Header;
use nrt_ros1_client::ros1_msgs::thymio_rt_msgs as tm;
use std::time::Instant;

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

impl Ros1Action for DriveDistance {
    type Kind = GoalKind;
    const NAME: &'static str = "drive_distance";
    const WATCH_CLIENTS: bool = true;
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

impl Ros1Action for RotateAngle {
    type Kind = GoalKind;
    const NAME: &'static str = "rotate_angle";
    const WATCH_CLIENTS: bool = true;
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

impl Ros1Action for NavigateToPosition {
    type Kind = GoalKind;
    const NAME: &'static str = "navigate_to_position";
    const WATCH_CLIENTS: bool = true;
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

/// The three goal actions' servers.
pub struct GoalActionsRos1 {
    drive: ActionServers<DriveDistance>,
    rotate: ActionServers<RotateAngle>,
    navigate: ActionServers<NavigateToPosition>,
}

impl GoalActionsRos1 {
    /// No server yet; the robots' go under the namespace `base`.
    pub fn new(graph: &Graph, base: &str, reporter: Reporter) -> Self {
        GoalActionsRos1 {
            drive: ActionServers::new(graph, base, reporter.clone()),
            rotate: ActionServers::new(graph, base, reporter.clone()),
            navigate: ActionServers::new(graph, base, reporter),
        }
    }

    /// See [`ActionServers::on_engine_event`].
    pub fn on_engine_event(&mut self, engine: &Engine, goals: &GoalActions, event: &EngineEvent) {
        self.drive.on_engine_event(engine, goals, event);
        self.rotate.on_engine_event(engine, goals, event);
        self.navigate.on_engine_event(engine, goals, event);
    }

    /// See [`ActionServers::serve`].
    pub fn serve(&mut self, engine: &mut Engine, goals: &mut GoalActions, now: Instant) {
        self.drive.serve(engine, goals, now);
        self.rotate.serve(engine, goals, now);
        self.navigate.serve(engine, goals, now);
    }

    /// See [`ActionServers::publish`].
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
