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
//! A goal's speed limit of 0 means the parameter's; a larger one is capped by it; a goal that
//! [`Goal::check`] refuses (a speed limit not finite, negative or too slow, a target out of the
//! odometry frame's range) is a bad goal.
//!
//! Progress is measured from the start of the goal, never from absolute coordinates:
//! `drive_distance` and `rotate_angle` sum the wheels' turns since the start (the odometry's own
//! wheel angles, [`RobotView::wheel_pos`]: the same travel the pose integrates, but free of the
//! pose's magnitude, so a far origin or a `set_odometry` during the goal changes nothing).

use super::go_to_pose::{check_goal, steer, Params, MAX_GOAL_DISTANCE, MAX_GOAL_HEADING};
use super::goal::{Motion, Step};
use super::RobotView;
use handoff::{ControllerInit, DeclareError, Goal, GoalAbort, ParamId, RtParams, Twist2};

/// The wheels' travel since the start of a goal, summed step by step from the odometry's wheel
/// angles: how far the centre went along the start heading (m) and how far it turned (rad).
#[derive(Debug, Clone, Copy, Default)]
struct Travel {
    last: [f64; 2],
    /// Along the start heading (m).
    along: f64,
    /// Turned since the start (rad, unwrapped).
    turned: f64,
}

impl Travel {
    fn start(robot: &RobotView) -> Travel {
        Travel {
            last: robot.wheel_pos,
            ..Travel::default()
        }
    }

    /// Adds the wheels' turns since the last call (an arc: its chord along the heading midway).
    fn update(&mut self, robot: &RobotView) {
        let (r, axis) = (
            robot.calibration.wheel_radius,
            robot.calibration.axis_length,
        );
        let dl = (robot.wheel_pos[0] - self.last[0]) * r;
        let dr = (robot.wheel_pos[1] - self.last[1]) * r;
        self.last = robot.wheel_pos;
        if !(dl.is_finite() && dr.is_finite() && axis > 0.0) {
            return;
        }
        let dtheta = (dr - dl) / axis;
        self.along += (dl + dr) / 2.0 * (self.turned + dtheta / 2.0).cos();
        self.turned += dtheta;
    }
}
use std::f64::consts::PI;

/// `goal`'s limit capped by the parameter `param` (0, or not finite — refused before: the parameter).
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
    travel: Travel,
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
            travel: Travel::default(),
            distance: 0.0,
            goal_max: 0.0,
        })
    }

    fn begin(&mut self, goal: &Goal, robot: &RobotView, _: &RtParams) -> Result<(), GoalAbort> {
        match *goal {
            Goal::DriveDistance {
                distance,
                max_translation_speed,
            } if goal.check().is_ok() && distance.abs() <= MAX_GOAL_DISTANCE => {
                self.travel = Travel::start(robot);
                self.distance = distance;
                self.goal_max = max_translation_speed;
                Ok(())
            }
            _ => Err(GoalAbort::BadGoal),
        }
    }

    fn step(&mut self, robot: &RobotView, params: &RtParams) -> Step {
        self.travel.update(robot);
        let left = self.distance - self.travel.along;
        if left.abs() <= params.get(self.tolerance) {
            return Step::Done;
        }
        let max = cap(self.goal_max, params.get(self.max_speed));
        let linear = proportional(params.get(self.k), left, params.get(self.min_speed), max);
        let angular = (params.get(self.k_heading) * -self.travel.turned).clamp(-1.0, 1.0);
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
    travel: Travel,
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
            travel: Travel::default(),
            goal_max: 0.0,
        })
    }

    fn begin(&mut self, goal: &Goal, robot: &RobotView, _: &RtParams) -> Result<(), GoalAbort> {
        match *goal {
            Goal::RotateAngle {
                angle,
                max_rotation_speed,
            } if goal.check().is_ok() && angle.abs() <= MAX_GOAL_HEADING => {
                self.angle = angle;
                self.travel = Travel::start(robot);
                self.goal_max = max_rotation_speed;
                Ok(())
            }
            _ => Err(GoalAbort::BadGoal),
        }
    }

    fn step(&mut self, robot: &RobotView, params: &RtParams) -> Step {
        self.travel.update(robot);
        let left = self.angle - self.travel.turned;
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
    goal: handoff::Pose2,
    heading: bool,
    goal_max: [f64; 2],
    in_position: bool,
}

impl Motion for NavigateToPosition {
    const NAME: &'static str = "navigate_to_position";

    fn declare(init: &mut ControllerInit) -> Result<Self, DeclareError> {
        Ok(NavigateToPosition {
            p: Params::declare(init, ["max_translation_speed", "max_rotation_speed"])?,
            goal: handoff::Pose2::default(),
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
            } if goal.check().is_ok() && check_goal(&pose, &robot.pose).is_ok() => {
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
