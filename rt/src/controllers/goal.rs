//! The goal controllers' common part: [`GoalController`] runs goals that come through a private
//! goal port (`handoff::goal_port`, the NRT half for the front ends' action servers) with a
//! [`Motion`] (`drive_distance`, `rotate_angle`, `navigate_to_position`, see `goal_motions`)
//! that says how to move toward the goal and when it is there.
//!
//! Per goal: `Started` once the controller owns the wheels, `Feedback` every
//! `feedback_period`, then one of `Succeeded`, `Canceled` (a cancel, or a new goal replacing
//! it) or `Aborted`: the cliff reflex or the obstacle stop held the robot
//! ([`RobotView::reflexes`]), the wheels did not move while commanded for `stall_timeout`
//! (a stall), the link went down, another owner took the wheels, or the goal was bad. The robot
//! is stopped after each end. A goal waits (pending) until the controller owns the wheels.
//!
//! Parameters (live, under `~/controllers/<name>/`): the motion's, and `stall_timeout` (s),
//! `stall_speed` (m/s: a wheel slower than this does not move; a command slower than twice
//! this is not expected to move it), `feedback_period` (s).

use super::{Controller, RobotView};
use handoff::{
    ControllerInit, DeclareError, Goal, GoalAbort, GoalCommand, GoalId, GoalReport, ParamId, Pose2,
    RtGoalPort, RtParams, Twist2, WheelCommand,
};

/// One step of a motion.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Step {
    /// Command `twist`; `remaining` (m or rad, ≥ 0) is left.
    Go {
        /// The twist for this cycle.
        twist: Twist2,
        /// What is left (feedback).
        remaining: f64,
    },
    /// The goal is reached.
    Done,
}

/// How a goal controller moves toward its goal (RT side: no allocation, no panic).
pub trait Motion: Send + Sized + 'static {
    /// Registry name (and owner name).
    const NAME: &'static str;
    /// Declares its parameters on `init` (NRT side, before the runner's).
    fn declare(init: &mut ControllerInit) -> Result<Self, DeclareError>;
    /// Takes `goal` from `robot`'s state; `Err(BadGoal)` if it is not this motion's kind or
    /// not finite / out of range.
    fn begin(&mut self, goal: &Goal, robot: &RobotView, params: &RtParams)
        -> Result<(), GoalAbort>;
    /// The command toward the goal taken by the last successful [`Motion::begin`].
    fn step(&mut self, robot: &RobotView, params: &RtParams) -> Step;
}

/// The runner's own parameters.
#[derive(Debug, Clone, Copy)]
struct RunnerParams {
    stall_timeout: ParamId,
    stall_speed: ParamId,
    feedback_period: ParamId,
}

/// A goal controller: goals from its port, moved toward by `M` (one per robot slot).
#[derive(Debug)]
pub struct GoalController<M> {
    port: RtGoalPort,
    params: RtParams,
    p: RunnerParams,
    motion: M,
    pending: Option<(GoalId, Goal)>,
    running: Option<GoalId>,
    /// Last time the wheels moved, or the command was too slow to expect them to (ns).
    moved_ns: u64,
    next_feedback_ns: u64,
}

impl<M: Motion + std::fmt::Debug> GoalController<M> {
    /// Declares the motion's and the runner's parameters on `init`; talks through `port`.
    pub fn new(init: &mut ControllerInit, port: RtGoalPort) -> Result<Self, DeclareError> {
        let motion = M::declare(init)?;
        let p = RunnerParams {
            stall_timeout: init.parameter(
                "stall_timeout",
                1.0,
                0.1,
                30.0,
                "commanded but not moving for this long is a stall (s)",
            )?,
            stall_speed: init.parameter(
                "stall_speed",
                0.005,
                0.0,
                0.1,
                "wheel speed below which a wheel does not move (m/s)",
            )?,
            feedback_period: init.parameter(
                "feedback_period",
                0.1,
                0.01,
                10.0,
                "time between feedback reports (s)",
            )?,
        };
        Ok(GoalController {
            port,
            params: init.rt_params(),
            p,
            motion,
            pending: None,
            running: None,
            moved_ns: 0,
            next_feedback_ns: 0,
        })
    }

    /// The registry factory: the NRT half of the port goes to the front end as the private
    /// port (a [`handoff::NrtGoalPort`]).
    pub fn factory(init: &mut ControllerInit) -> Result<Box<dyn Controller>, DeclareError> {
        let (rt, nrt) = handoff::goal_port();
        let c = Self::new(init, rt)?;
        init.private_port(Box::new(nrt));
        Ok(Box::new(c))
    }

    /// The goal running, if any.
    pub fn running(&self) -> Option<GoalId> {
        self.running
    }

    fn end(&mut self, report: GoalReport) {
        self.port.rt_report(report);
        self.running = None;
    }

    fn abort(&mut self, id: GoalId, reason: GoalAbort, pose: Pose2) {
        self.end(GoalReport::Aborted { id, reason, pose });
    }

    /// Starts the pending goal, if any (the controller owns the wheels).
    fn begin_pending(&mut self, robot: &RobotView) {
        let Some((id, goal)) = self.pending.take() else {
            return;
        };
        match self.motion.begin(&goal, robot, &self.params) {
            Ok(()) => {
                self.running = Some(id);
                self.port.rt_report(GoalReport::Started { id });
                self.moved_ns = robot.now_ns;
                self.next_feedback_ns = robot.now_ns;
            }
            Err(reason) => self.abort(id, reason, robot.pose),
        }
    }

    /// Whether the wheels are stalled under `twist` (updates the last time they moved).
    fn stalled(&mut self, robot: &RobotView, twist: Twist2) -> bool {
        let slow = self.params.get(self.p.stall_speed);
        let half_axis = robot.calibration.axis_length / 2.0;
        let asked = twist.linear.abs() + twist.angular.abs() * half_axis;
        let radius = robot.calibration.wheel_radius;
        let moving = robot.wheel_vel.iter().any(|w| (w * radius).abs() > slow);
        if moving || asked < 2.0 * slow {
            self.moved_ns = robot.now_ns;
        }
        let timeout = (self.params.get(self.p.stall_timeout) * 1e9) as u64;
        robot.now_ns.saturating_sub(self.moved_ns) > timeout
    }
}

impl<M: Motion + std::fmt::Debug> Controller for GoalController<M> {
    fn stop(&mut self, robot: &RobotView) {
        if let Some(id) = self.running {
            let reason = if robot.stale || !robot.link_up {
                GoalAbort::LinkLost
            } else {
                GoalAbort::OwnerLost
            };
            self.abort(id, reason, robot.pose);
        }
    }

    fn serve(&mut self, robot: &RobotView, _owner: bool) {
        self.params.rt_refresh();
        while let Some(cmd) = self.port.rt_next_command() {
            match cmd {
                GoalCommand::Start { id, goal } => {
                    let pose = robot.pose;
                    if let Some(old) = self.running.take() {
                        self.port.rt_report(GoalReport::Canceled { id: old, pose });
                    }
                    if let Some((old, _)) = self.pending.take() {
                        self.port.rt_report(GoalReport::Canceled { id: old, pose });
                    }
                    self.pending = Some((id, goal));
                }
                GoalCommand::Cancel { id } => {
                    let pose = robot.pose;
                    if self.running == Some(id) {
                        self.end(GoalReport::Canceled { id, pose });
                    } else if self.pending.is_some_and(|(p, _)| p == id) {
                        self.pending = None;
                        self.port.rt_report(GoalReport::Canceled { id, pose });
                    }
                }
            }
        }
    }

    fn update(&mut self, robot: &RobotView) -> WheelCommand {
        if robot.odom_t_ns.is_none() {
            return WheelCommand::Stop;
        }
        self.begin_pending(robot);
        let Some(id) = self.running else {
            return WheelCommand::Stop;
        };
        let pose = robot.pose;
        if robot.reflexes.cliff {
            self.abort(id, GoalAbort::Cliff, pose);
            return WheelCommand::Stop;
        }
        if robot.reflexes.obstacle {
            self.abort(id, GoalAbort::Obstacle, pose);
            return WheelCommand::Stop;
        }
        match self.motion.step(robot, &self.params) {
            Step::Done => {
                self.end(GoalReport::Succeeded { id, pose });
                WheelCommand::Stop
            }
            Step::Go { twist, remaining } => {
                if self.stalled(robot, twist) {
                    self.abort(id, GoalAbort::Stall, pose);
                    return WheelCommand::Stop;
                }
                if robot.now_ns >= self.next_feedback_ns {
                    let period = (self.params.get(self.p.feedback_period) * 1e9) as u64;
                    self.next_feedback_ns = robot.now_ns.saturating_add(period);
                    self.port.rt_report(GoalReport::Feedback {
                        id,
                        remaining,
                        pose,
                    });
                }
                WheelCommand::Twist(twist)
            }
        }
    }
}
