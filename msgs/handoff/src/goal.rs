//! The goal port of a goal controller (`drive_distance`, `rotate_angle`,
//! `navigate_to_position`): one generic private port between the NRT action server, which
//! accepts, cancels and reports goals, and the RT controller, which drives to them. Fixed-size
//! `Copy` records on two SPSC rings, so that the RT half never allocates or blocks (the same
//! shape as the calibration port).
//!
//! NRT sends [`GoalCommand`]s (a goal with its id, or a cancel); RT answers with
//! [`GoalReport`]s: `Started`, periodic `Feedback`, then exactly one of `Succeeded`,
//! `Canceled` or `Aborted` (with a [`GoalAbort`] reason) per started goal.

use crate::goal_command::{GoalCommand, GoalId};
use crate::Pose2;
use rtrb::{Consumer, Producer, RingBuffer};

/// Why a goal was aborted (the robot is stopped).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GoalAbort {
    /// The cliff reflex held the robot (a front ground sensor saw no floor).
    Cliff,
    /// The obstacle stop held the robot.
    Obstacle,
    /// The wheels did not move while commanded, for the controller's `stall_timeout`.
    Stall,
    /// Another owner took the wheels, or the controller was stopped.
    OwnerLost,
    /// The robot's link went down.
    LinkLost,
    /// The goal is not one this controller does, or not finite / out of range.
    BadGoal,
}

impl GoalAbort {
    /// What happened, for the action's result.
    pub fn message(self) -> &'static str {
        match self {
            GoalAbort::Cliff => "the cliff reflex stopped the robot (no floor ahead)",
            GoalAbort::Obstacle => "the obstacle stop held the robot",
            GoalAbort::Stall => "the wheels did not move while commanded (stall)",
            GoalAbort::OwnerLost => "another owner took the wheels",
            GoalAbort::LinkLost => "the robot's link went down",
            GoalAbort::BadGoal => "the goal is not finite or out of range",
        }
    }
}

/// RT → NRT.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum GoalReport {
    /// The goal runs (the controller owns the wheels).
    Started {
        /// Id.
        id: GoalId,
    },
    /// Progress.
    Feedback {
        /// Id.
        id: GoalId,
        /// Distance (m) or angle (rad) left, by the goal's kind (navigate: distance).
        remaining: f64,
        /// Odometry pose.
        pose: Pose2,
    },
    /// Reached; the robot is stopped.
    Succeeded {
        /// Id.
        id: GoalId,
        /// Final odometry pose.
        pose: Pose2,
    },
    /// Canceled on request (or replaced); the robot is stopped.
    Canceled {
        /// Id.
        id: GoalId,
        /// Final odometry pose.
        pose: Pose2,
    },
    /// Aborted; the robot is stopped.
    Aborted {
        /// Id.
        id: GoalId,
        /// Why.
        reason: GoalAbort,
        /// Final odometry pose.
        pose: Pose2,
    },
}

impl GoalReport {
    /// The goal it is about.
    pub fn id(&self) -> GoalId {
        match *self {
            GoalReport::Started { id }
            | GoalReport::Feedback { id, .. }
            | GoalReport::Succeeded { id, .. }
            | GoalReport::Canceled { id, .. }
            | GoalReport::Aborted { id, .. } => id,
        }
    }

    /// Whether it ends its goal.
    pub fn is_final(&self) -> bool {
        matches!(
            self,
            GoalReport::Succeeded { .. } | GoalReport::Canceled { .. } | GoalReport::Aborted { .. }
        )
    }
}

/// Records in flight each way.
pub const GOAL_RING: usize = 64;

/// RT half: commands in, reports out.
#[derive(Debug)]
pub struct RtGoalPort {
    commands: Consumer<GoalCommand>,
    reports: Producer<GoalReport>,
    dropped: u64,
}

impl RtGoalPort {
    /// The next command, if any.
    pub fn rt_next_command(&mut self) -> Option<GoalCommand> {
        let command = self.commands.pop().ok()?;
        crate::record::rt_record_controller(|robot, controller| crate::RecInput::Goal {
            robot,
            controller,
            command,
        });
        Some(command)
    }

    /// Sends `report`; false (counted) if the NRT side is behind.
    pub fn rt_report(&mut self, report: GoalReport) -> bool {
        let ok = self.reports.push(report).is_ok();
        if !ok {
            self.dropped += 1;
        }
        ok
    }

    /// Reports lost because the ring was full.
    pub fn rt_dropped(&self) -> u64 {
        self.dropped
    }
}

/// NRT half: commands out, reports in.
#[derive(Debug)]
pub struct NrtGoalPort {
    commands: Producer<GoalCommand>,
    reports: Consumer<GoalReport>,
}

/// The command ring is full (the RT side stopped reading).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the goal controller does not take commands (its ring is full)")]
pub struct GoalPortFull;

impl NrtGoalPort {
    /// Sends `cmd` to the RT controller.
    pub fn nrt_send(&mut self, cmd: GoalCommand) -> Result<(), GoalPortFull> {
        self.commands.push(cmd).map_err(|_| GoalPortFull)
    }

    /// The next report, if any.
    pub fn nrt_next_report(&mut self) -> Option<GoalReport> {
        self.reports.pop().ok()
    }
}

/// A goal port (allocates its two rings once).
///
/// # Example
///
/// ```
/// use handoff::{goal_port, GoalCommand, GoalId};
///
/// let (mut rt, mut nrt) = goal_port();
/// nrt.nrt_send(GoalCommand::Cancel { id: GoalId(3) }).unwrap();
/// assert_eq!(rt.rt_next_command(), Some(GoalCommand::Cancel { id: GoalId(3) }));
/// ```
pub fn goal_port() -> (RtGoalPort, NrtGoalPort) {
    let (mut cp, mut cc) = RingBuffer::new(GOAL_RING);
    let (mut rp, mut rc) = RingBuffer::new(GOAL_RING);
    let id = GoalId(0);
    super::prefault_ring(&mut cp, &mut cc, GoalCommand::Cancel { id });
    super::prefault_ring(&mut rp, &mut rc, GoalReport::Started { id });
    (
        RtGoalPort {
            commands: cc,
            reports: rp,
            dropped: 0,
        },
        NrtGoalPort {
            commands: cp,
            reports: rc,
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::goal_command::*;
    use std::f64::consts::PI;

    #[test]
    fn yaw_is_normalised_to_minus_pi_exclusive_pi_inclusive() {
        for (yaw, want) in [
            (0.0, 0.0),
            (PI, PI),
            (-PI, PI),
            (2.0 * PI, 0.0),
            (-0.5, -0.5),
            (7.0, 7.0 - 2.0 * PI),
            (-7.0, -7.0 + 2.0 * PI),
            (999.0, 999.0 - 159.0 * 2.0 * PI),
        ] {
            let got = normalize_yaw(yaw);
            assert!((got - want).abs() < 1e-9, "{yaw}: {got} vs {want}");
            assert!(got > -PI && got <= PI, "{yaw}: {got}");
        }
    }

    #[test]
    fn huge_targets_and_bad_speed_limits_are_refused_with_their_range() {
        let drive = |distance, max_translation_speed| Goal::DriveDistance {
            distance,
            max_translation_speed,
        };
        let rotate = |angle, max_rotation_speed| Goal::RotateAngle {
            angle,
            max_rotation_speed,
        };
        let navigate = |x, v, w| Goal::NavigateToPosition {
            pose: Pose2 {
                x,
                y: 0.0,
                theta: 0.0,
            },
            achieve_goal_heading: false,
            max_translation_speed: v,
            max_rotation_speed: w,
        };
        for (goal, starts) in [
            (
                drive(1e17, 0.1),
                "distance = 100000000000000000 m is out of range",
            ),
            (
                drive(0.05, f64::NAN),
                "the goal must be finite: max_translation_speed = NaN",
            ),
            (
                drive(0.05, f64::INFINITY),
                "the goal must be finite: max_translation_speed = inf",
            ),
            (
                drive(0.05, -0.1),
                "max_translation_speed = -0.1 m/s: a speed limit must be 0",
            ),
            (drive(0.05, 1e-300), "max_translation_speed = 0.000"),
            (
                rotate(1e17, 1.0),
                "angle = 100000000000000000 rad is out of range",
            ),
            (rotate(1.0, -1.0), "max_rotation_speed = -1 rad/s"),
            (
                navigate(1e17, 0.0, 0.0),
                "x = 100000000000000000 m is out of range",
            ),
            (
                navigate(1.0, f64::NEG_INFINITY, 0.0),
                "the goal must be finite: max_translation_speed",
            ),
            (
                navigate(1.0, 0.1, f64::NAN),
                "the goal must be finite: max_rotation_speed",
            ),
        ] {
            let why = goal.check().expect_err(&format!("{goal:?}")).to_string();
            assert!(why.starts_with(starts), "{why}");
        }
        for ok in [
            drive(-0.05, 0.0),
            drive(MAX_POSE_COORDINATE, 0.3),
            rotate(-20.0, MIN_GOAL_ROTATION_SPEED),
            navigate(-MAX_POSE_COORDINATE, MIN_GOAL_TRANSLATION_SPEED, 50.0),
        ] {
            assert_eq!(ok.check(), Ok(()), "{ok:?}");
        }
    }
}
