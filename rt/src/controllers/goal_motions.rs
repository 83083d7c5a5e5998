//! The three goal motions run by [`super::goal::GoalController`] (the Create 3's
//! DriveDistance, RotateAngle and NavigateToPosition, on odometry):
//! - [`DriveDistance`] (`drive_distance`): straight ahead (or back) by a signed distance along
//!   the start heading, holding that heading; the speed is proportional to what is left,
//!   between `min_speed` and the goal's (or the parameter's) top speed;
//! - [`RotateAngle`] (`rotate_angle`): in place by a signed angle (several turns allowed: the
//!   heading's changes are summed);
//! - [`NavigateToPosition`] (`navigate_to_position`): go-to-pose's law (turn toward the goal,
//!   drive while steering, then its heading if asked).
//!
//! A goal's speed limit of 0 or not finite means the parameter's; a larger one is capped by it.

use super::go_to_pose::{check_goal, steer, wrap, Params, MAX_GOAL_DISTANCE, MAX_GOAL_HEADING};
use super::goal::{Motion, Step};
use super::RobotView;
use handoff::{ControllerInit, DeclareError, Goal, GoalAbort, ParamId, Pose2, RtParams, Twist2};
use std::f64::consts::PI;

/// `goal`'s limit capped by the parameter `param` (0 / not finite: the parameter).
fn cap(goal: f64, param: f64) -> f64 {
    if goal.is_finite() && goal > 0.0 {
        goal.min(param)
    } else {
        param
    }
}

/// `k·e` within ±`max`, at least `min` in magnitude (so that it does not creep).
fn proportional(k: f64, e: f64, min: f64, max: f64) -> f64 {
    let v = (k * e).clamp(-max, max);
    if v.abs() < min {
        min.min(max).copysign(e)
    } else {
        v
    }
}

/// Drive a signed distance along the start heading.
#[derive(Debug)]
pub struct DriveDistance {
    max_speed: ParamId,
    k: ParamId,
    min_speed: ParamId,
    tolerance: ParamId,
    k_heading: ParamId,
    start: Pose2,
    distance: f64,
    goal_max: f64,
}

impl Motion for DriveDistance {
    const NAME: &'static str = "drive_distance";

    fn declare(init: &mut ControllerInit) -> Result<Self, DeclareError> {
        Ok(DriveDistance {
            max_speed: init.parameter("max_translation_speed", 0.1, 0.0, 0.3, "top speed (m/s)")?,
            k: init.parameter("k_linear", 2.0, 0.0, 20.0, "speed per metre left (1/s)")?,
            min_speed: init.parameter("min_speed", 0.01, 0.0, 0.1, "slowest speed (m/s)")?,
            tolerance: init.parameter(
                "distance_tolerance",
                0.005,
                0.0005,
                0.1,
                "distance left that counts as there (m)",
            )?,
            k_heading: init.parameter(
                "k_heading",
                3.0,
                0.0,
                20.0,
                "turn rate per radian off the start heading (1/s)",
            )?,
            start: Pose2::default(),
            distance: 0.0,
            goal_max: 0.0,
        })
    }

    fn begin(&mut self, goal: &Goal, robot: &RobotView, _: &RtParams) -> Result<(), GoalAbort> {
        match *goal {
            Goal::DriveDistance {
                distance,
                max_translation_speed,
            } if distance.is_finite() && distance.abs() <= MAX_GOAL_DISTANCE => {
                self.start = robot.pose;
                self.distance = distance;
                self.goal_max = max_translation_speed;
                Ok(())
            }
            _ => Err(GoalAbort::BadGoal),
        }
    }

    fn step(&mut self, robot: &RobotView, params: &RtParams) -> Step {
        let (s, p) = (self.start, robot.pose);
        let along = (p.x - s.x) * s.theta.cos() + (p.y - s.y) * s.theta.sin();
        let left = self.distance - along;
        if left.abs() <= params.get(self.tolerance) {
            return Step::Done;
        }
        let max = cap(self.goal_max, params.get(self.max_speed));
        let linear = proportional(params.get(self.k), left, params.get(self.min_speed), max);
        let angular = (params.get(self.k_heading) * wrap(s.theta - p.theta)).clamp(-1.0, 1.0);
        Step::Go {
            twist: Twist2 { linear, angular },
            remaining: left.abs(),
        }
    }
}

/// Turn in place by a signed angle.
#[derive(Debug)]
pub struct RotateAngle {
    max_speed: ParamId,
    k: ParamId,
    min_speed: ParamId,
    tolerance: ParamId,
    angle: f64,
    turned: f64,
    last_theta: f64,
    goal_max: f64,
}

impl Motion for RotateAngle {
    const NAME: &'static str = "rotate_angle";

    fn declare(init: &mut ControllerInit) -> Result<Self, DeclareError> {
        Ok(RotateAngle {
            max_speed: init.parameter(
                "max_rotation_speed",
                1.0,
                0.0,
                6.0,
                "top turn rate (rad/s)",
            )?,
            k: init.parameter(
                "k_angular",
                3.0,
                0.0,
                20.0,
                "turn rate per radian left (1/s)",
            )?,
            min_speed: init.parameter("min_speed", 0.1, 0.0, 1.0, "slowest turn rate (rad/s)")?,
            tolerance: init.parameter(
                "angle_tolerance",
                0.02,
                0.001,
                PI,
                "angle left that counts as there (rad)",
            )?,
            angle: 0.0,
            turned: 0.0,
            last_theta: 0.0,
            goal_max: 0.0,
        })
    }

    fn begin(&mut self, goal: &Goal, robot: &RobotView, _: &RtParams) -> Result<(), GoalAbort> {
        match *goal {
            Goal::RotateAngle {
                angle,
                max_rotation_speed,
            } if angle.is_finite() && angle.abs() <= MAX_GOAL_HEADING => {
                self.angle = angle;
                self.turned = 0.0;
                self.last_theta = robot.pose.theta;
                self.goal_max = max_rotation_speed;
                Ok(())
            }
            _ => Err(GoalAbort::BadGoal),
        }
    }

    fn step(&mut self, robot: &RobotView, params: &RtParams) -> Step {
        self.turned += wrap(robot.pose.theta - self.last_theta);
        self.last_theta = robot.pose.theta;
        let left = self.angle - self.turned;
        if left.abs() <= params.get(self.tolerance) {
            return Step::Done;
        }
        let max = cap(self.goal_max, params.get(self.max_speed));
        let angular = proportional(params.get(self.k), left, params.get(self.min_speed), max);
        Step::Go {
            twist: Twist2 {
                linear: 0.0,
                angular,
            },
            remaining: left.abs(),
        }
    }
}

/// Go to a pose (and its heading if asked).
#[derive(Debug)]
pub struct NavigateToPosition {
    p: Params,
    goal: Pose2,
    heading: bool,
    goal_max: [f64; 2],
    in_position: bool,
}

impl Motion for NavigateToPosition {
    const NAME: &'static str = "navigate_to_position";

    fn declare(init: &mut ControllerInit) -> Result<Self, DeclareError> {
        Ok(NavigateToPosition {
            p: Params::declare(init, ["max_translation_speed", "max_rotation_speed"])?,
            goal: Pose2::default(),
            heading: false,
            goal_max: [0.0; 2],
            in_position: false,
        })
    }

    fn begin(&mut self, goal: &Goal, robot: &RobotView, _: &RtParams) -> Result<(), GoalAbort> {
        match *goal {
            Goal::NavigateToPosition {
                pose,
                achieve_goal_heading,
                max_translation_speed,
                max_rotation_speed,
            } if check_goal(&pose, &robot.pose).is_ok() => {
                self.goal = pose;
                self.heading = achieve_goal_heading;
                self.goal_max = [max_translation_speed, max_rotation_speed];
                self.in_position = false;
                Ok(())
            }
            _ => Err(GoalAbort::BadGoal),
        }
    }

    fn step(&mut self, robot: &RobotView, params: &RtParams) -> Step {
        let mut gains = self.p.gains(params);
        gains.max_linear = cap(self.goal_max[0], gains.max_linear);
        gains.max_angular = cap(self.goal_max[1], gains.max_angular);
        let p = robot.pose;
        match steer(p, self.goal, &gains, &mut self.in_position, self.heading) {
            None => Step::Done,
            Some(twist) => Step::Go {
                twist,
                remaining: (self.goal.x - p.x).hypot(self.goal.y - p.y),
            },
        }
    }
}
