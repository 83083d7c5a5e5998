//! The goal actions on ROS 2: `/<ns>/drive_distance`, `/<ns>/rotate_angle`, `/<ns>/navigate_to_position`
//! (`thymio_rt_msgs/action/DriveDistance`, `RotateAngle`, `NavigateToPosition`; r2r's action servers on the bridge
//! node), one per action and driven Thymio that has the controller: the front end's one action-server shape
//! ([`ActionServers`], where a goal whose client is gone is watched) over the layer's goal actions
//! ([`nrt_interface::goal_actions`]: checks, goal, feedback, result and their texts); each action only says how its
//! messages map ([`RosAction`]).

use super::action_server::{ActionServers, RosAction};
use super::report::Reporter;
use super::spinner::NodeAccess;
use handoff::{Goal, Pose2};
use nrt_engine::engine::{Engine, EngineEvent};
use nrt_interface::goal_actions::{GoalActions, GoalFeedback, GoalKind, GoalResult};
use r2r::geometry_msgs::msg::Pose2D;
use r2r::thymio_rt_msgs::action::{DriveDistance, NavigateToPosition, RotateAngle};
use std::time::Instant;

fn pose_msg(p: Pose2) -> Pose2D {
    Pose2D {
        x: p.x,
        y: p.y,
        theta: p.theta,
    }
}

impl RosAction for DriveDistance::Action {
    type Kind = GoalKind;
    const NAME: &'static str = "drive_distance";
    const PROBE: bool = true;
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

impl RosAction for RotateAngle::Action {
    type Kind = GoalKind;
    const NAME: &'static str = "rotate_angle";
    const PROBE: bool = true;
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

impl RosAction for NavigateToPosition::Action {
    type Kind = GoalKind;
    const NAME: &'static str = "navigate_to_position";
    const PROBE: bool = true;
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

/// The three goal actions' servers.
pub struct GoalActionsRos2 {
    drive: ActionServers<DriveDistance::Action>,
    rotate: ActionServers<RotateAngle::Action>,
    navigate: ActionServers<NavigateToPosition::Action>,
}

impl GoalActionsRos2 {
    /// No action server yet.
    pub fn new(reporter: Reporter) -> Self {
        GoalActionsRos2 {
            drive: ActionServers::new(reporter.clone()),
            rotate: ActionServers::new(reporter.clone()),
            navigate: ActionServers::new(reporter),
        }
    }

    /// See [`ActionServers::on_engine_event`].
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

    /// See [`ActionServers::watch_clients`].
    pub fn watch_clients(&self, goals: &mut GoalActions, now: Instant) {
        self.drive.watch_clients(goals, now);
        self.rotate.watch_clients(goals, now);
        self.navigate.watch_clients(goals, now);
    }

    /// See [`ActionServers::serve`].
    pub fn serve(&mut self, engine: &mut Engine, goals: &mut GoalActions, now: Instant) -> bool {
        let drive = self.drive.serve(engine, goals, now);
        let rotate = self.rotate.serve(engine, goals, now);
        let navigate = self.navigate.serve(engine, goals, now);
        drive || rotate || navigate
    }
}
