//! The goal port of a goal controller (`drive_distance`, `rotate_angle`,
//! `navigate_to_position`): one generic private port between the NRT action server, which
//! accepts, cancels and reports goals, and the RT controller, which drives to them. Fixed-size
//! `Copy` records on two SPSC rings, so that the RT half never allocates or blocks (the same
//! shape as the calibration port).
//!
//! NRT sends [`GoalCommand`]s (a goal with its id, or a cancel); RT answers with
//! [`GoalReport`]s: `Started`, periodic `Feedback`, then exactly one of `Succeeded`,
//! `Canceled` or `Aborted` (with a [`GoalAbort`] reason) per started goal.

use crate::Pose2;
use rtrb::{Consumer, Producer, RingBuffer};

/// A goal's id, chosen by the NRT side (echoed in every report about it).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize,
)]
pub struct GoalId(pub u32);

/// What a goal controller is asked to do. A speed limit of 0 means the controller's own default (its
/// parameter); a larger one is capped by that parameter; [`Goal::check`] says which numbers are taken.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Goal {
    /// Drive straight `distance` metres (negative: backwards), holding the start heading.
    DriveDistance {
        /// Signed distance (m).
        distance: f64,
        /// Top speed (m/s).
        max_translation_speed: f64,
    },
    /// Turn in place by `angle` radians (positive: counter-clockwise; may exceed a turn).
    RotateAngle {
        /// Signed angle (rad).
        angle: f64,
        /// Top turn rate (rad/s).
        max_rotation_speed: f64,
    },
    /// Go to `pose` (odometry frame); its heading too if `achieve_goal_heading`.
    NavigateToPosition {
        /// Goal pose.
        pose: Pose2,
        /// Turn to the pose's heading once there.
        achieve_goal_heading: bool,
        /// Top speed (m/s).
        max_translation_speed: f64,
        /// Top turn rate (rad/s).
        max_rotation_speed: f64,
    },
}

/// Largest |x| and |y| (m) of a pose of the odometry frame that the driver takes (`set_odometry`, a goal's target):
/// 10 km, far beyond any track a Thymio drives (2.5 h at its top speed), while a double still resolves
/// 2·10⁻¹² m there (a 32-bit float, as RViz draws, 1 mm). Beyond it the steps of a double grow until progress no
/// longer registers (16 m at 10¹⁷), so a goal could never end.
pub const MAX_POSE_COORDINATE: f64 = 1.0e4;
/// Largest |yaw| (rad) taken before it is normalised to (-π, π]: a few turns of unwrapped angle, not a value whose
/// wrapping loses all precision.
pub const MAX_POSE_YAW: f64 = 1.0e3;
/// Slowest top translation speed (m/s) a goal may ask for (0 means the controller's parameter): twice the
/// goal controllers' default `stall_speed`, so that a robot asked to move is seen moving or stalled, never
/// commanded forever below what its wheels turn at.
pub const MIN_GOAL_TRANSLATION_SPEED: f64 = 0.01;
/// Slowest top turn rate (rad/s) a goal may ask for (0 means the controller's parameter): `rotate_angle`'s
/// default `min_speed`.
pub const MIN_GOAL_ROTATION_SPEED: f64 = 0.1;

/// `yaw` normalised to (-π, π].
///
/// ```
/// use handoff::normalize_yaw;
/// use std::f64::consts::PI;
/// assert_eq!(normalize_yaw(-PI), PI);
/// assert!((normalize_yaw(3.0 * PI + 0.5) - (-PI + 0.5)).abs() < 1e-12);
/// ```
pub fn normalize_yaw(yaw: f64) -> f64 {
    let tau = 2.0 * std::f64::consts::PI;
    let a = yaw.rem_euclid(tau); // [0, 2π] (2π only by rounding a tiny negative yaw)
    if a > std::f64::consts::PI {
        a - tau
    } else {
        a
    }
}

/// Why a pose or a goal is refused (every field named with its range; no allocation, usable on the RT side).
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
pub enum RangeError {
    /// Not a finite number.
    #[error("the goal must be finite: {field} = {value}")]
    NotFinite {
        /// The field.
        field: &'static str,
        /// Its value.
        value: f64,
    },
    /// Beyond the odometry frame's range.
    #[error("{field} = {value} m is out of range: |{field}| must be at most {max} m (MAX_POSE_COORDINATE)", max = MAX_POSE_COORDINATE)]
    Coordinate {
        /// The field.
        field: &'static str,
        /// Its value.
        value: f64,
    },
    /// An angle beyond ±[`MAX_POSE_YAW`].
    #[error("{field} = {value} rad is out of range: |{field}| must be at most {max} rad (MAX_POSE_YAW)", max = MAX_POSE_YAW)]
    Angle {
        /// The field.
        field: &'static str,
        /// Its value.
        value: f64,
    },
    /// A speed limit that is negative, or positive but below the slowest one (`min`).
    #[error("{field} = {value} {unit}: a speed limit must be 0 (the controller's parameter) or from {min} {unit} up")]
    Speed {
        /// The field.
        field: &'static str,
        /// Its value.
        value: f64,
        /// The slowest accepted.
        min: f64,
        /// m/s or rad/s.
        unit: &'static str,
    },
}

fn finite(field: &'static str, value: f64) -> Result<f64, RangeError> {
    if value.is_finite() {
        Ok(value)
    } else {
        Err(RangeError::NotFinite { field, value })
    }
}

/// Checks a coordinate (m) of the odometry frame: finite and within ±[`MAX_POSE_COORDINATE`].
pub fn check_coordinate(field: &'static str, value: f64) -> Result<(), RangeError> {
    if finite(field, value)?.abs() <= MAX_POSE_COORDINATE {
        Ok(())
    } else {
        Err(RangeError::Coordinate { field, value })
    }
}

/// Checks an angle (rad): finite and within ±[`MAX_POSE_YAW`].
pub fn check_angle(field: &'static str, value: f64) -> Result<(), RangeError> {
    if finite(field, value)?.abs() <= MAX_POSE_YAW {
        Ok(())
    } else {
        Err(RangeError::Angle { field, value })
    }
}

/// Checks a pose of the odometry frame (x, y within ±[`MAX_POSE_COORDINATE`], the heading within
/// ±[`MAX_POSE_YAW`]).
pub fn check_pose(pose: &Pose2) -> Result<(), RangeError> {
    check_coordinate("x", pose.x)?;
    check_coordinate("y", pose.y)?;
    check_angle("theta", pose.theta)
}

fn check_speed(
    field: &'static str,
    value: f64,
    min: f64,
    unit: &'static str,
) -> Result<(), RangeError> {
    if finite(field, value)? == 0.0 || value >= min {
        Ok(())
    } else {
        Err(RangeError::Speed {
            field,
            value,
            min,
            unit,
        })
    }
}

impl Goal {
    /// Checks every number of the goal: finite; a distance within ±[`MAX_POSE_COORDINATE`], an angle within
    /// ±[`MAX_POSE_YAW`], a target pose by [`check_pose`]; a speed limit 0 (the controller's parameter) or at least
    /// [`MIN_GOAL_TRANSLATION_SPEED`] / [`MIN_GOAL_ROTATION_SPEED`] (a larger one is capped by the parameter).
    ///
    /// ```
    /// use handoff::Goal;
    /// let g = Goal::DriveDistance { distance: 0.05, max_translation_speed: -1.0 };
    /// assert!(g.check().unwrap_err().to_string().starts_with("max_translation_speed = -1 m/s"));
    /// ```
    pub fn check(&self) -> Result<(), RangeError> {
        const LIN: (f64, &str) = (MIN_GOAL_TRANSLATION_SPEED, "m/s");
        const ROT: (f64, &str) = (MIN_GOAL_ROTATION_SPEED, "rad/s");
        match *self {
            Goal::DriveDistance {
                distance,
                max_translation_speed,
            } => {
                check_coordinate("distance", distance)?;
                check_speed("max_translation_speed", max_translation_speed, LIN.0, LIN.1)
            }
            Goal::RotateAngle {
                angle,
                max_rotation_speed,
            } => {
                check_angle("angle", angle)?;
                check_speed("max_rotation_speed", max_rotation_speed, ROT.0, ROT.1)
            }
            Goal::NavigateToPosition {
                pose,
                max_translation_speed,
                max_rotation_speed,
                ..
            } => {
                check_pose(&pose)?;
                check_speed("max_translation_speed", max_translation_speed, LIN.0, LIN.1)?;
                check_speed("max_rotation_speed", max_rotation_speed, ROT.0, ROT.1)
            }
        }
    }
}

/// NRT → RT.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum GoalCommand {
    /// Start `goal` (replaces a running goal, which is reported `Canceled`).
    Start {
        /// Id.
        id: GoalId,
        /// Goal.
        goal: Goal,
    },
    /// Cancel goal `id` (ignored if it is not the running one).
    Cancel {
        /// Id.
        id: GoalId,
    },
}

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
