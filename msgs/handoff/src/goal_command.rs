//! What NRT asks a goal controller to do ([`GoalCommand`]: start a [`Goal`] with its [`GoalId`], or cancel), with
//! the ranges a goal and a pose are checked against: plain data shared by the goal port ([`crate::goal_port`]) and
//! the recorder's payload ([`crate::RecInput`]); a leaf module.

use crate::Pose2;

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
