//! A robot's motion limits as parameters (issue 26): diff_drive_controller's names and semantics,
//! `linear.x.*` and `angular.z.*` (`max_velocity`, `min_velocity`, `max_acceleration`,
//! `max_deceleration`, `max_acceleration_reverse`, `max_deceleration_reverse`, `max_jerk`; NaN
//! or absent = off) and `publish_limited_velocity` (the driver node's `~/cmd_vel_out`). The
//! rule on the values is the RT side's ([`handoff::MotionLimits::validate`]), reported here
//! under the parameter's own name; the limits reach the RT limiter through
//! `NrtLiveParams::nrt_set_motion_limits` (see `engine::robot_params`).

use crate::schema::{ranges, Invalid};
use handoff::{AxisLimits, MotionLimits, ParamError};
use serde::{Deserialize, Serialize};

/// One axis' limits as configured (`linear.x`, `angular.z`); every one NaN (off) by default.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AxisLimitsParams {
    /// Highest velocity (≥ 0).
    pub max_velocity: f64,
    /// Lowest velocity (≤ 0); NaN: `-max_velocity`.
    pub min_velocity: f64,
    /// Largest rate of |v| increase while v ≥ 0.
    pub max_acceleration: f64,
    /// Largest rate of |v| decrease while v > 0.
    pub max_deceleration: f64,
    /// Largest rate of |v| increase while v < 0; NaN: `max_acceleration`.
    pub max_acceleration_reverse: f64,
    /// Largest rate of |v| decrease while v < 0; NaN: `max_deceleration`.
    pub max_deceleration_reverse: f64,
    /// Largest rate of change of the acceleration.
    pub max_jerk: f64,
}

impl AxisLimitsParams {
    /// The RT side's limits.
    pub fn to_rt(&self) -> AxisLimits {
        AxisLimits {
            max_velocity: self.max_velocity,
            min_velocity: self.min_velocity,
            max_acceleration: self.max_acceleration,
            max_deceleration: self.max_deceleration,
            max_acceleration_reverse: self.max_acceleration_reverse,
            max_deceleration_reverse: self.max_deceleration_reverse,
            max_jerk: self.max_jerk,
        }
    }
}

impl Default for AxisLimitsParams {
    fn default() -> Self {
        let off = AxisLimits::OFF;
        AxisLimitsParams {
            max_velocity: off.max_velocity,
            min_velocity: off.min_velocity,
            max_acceleration: off.max_acceleration,
            max_deceleration: off.max_deceleration,
            max_acceleration_reverse: off.max_acceleration_reverse,
            max_deceleration_reverse: off.max_deceleration_reverse,
            max_jerk: off.max_jerk,
        }
    }
}

/// Two NaN (off) limits are equal: equality compares what is in effect.
impl PartialEq for AxisLimitsParams {
    fn eq(&self, other: &Self) -> bool {
        self.to_rt() == other.to_rt()
    }
}

/// `linear.*`: the forward speed's limits under `x` (diff_drive_controller's name).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LinearLimits {
    /// `linear.x.*` [m/s, m/s², m/s³].
    pub x: AxisLimitsParams,
}

/// `angular.*`: the yaw rate's limits under `z` (diff_drive_controller's name).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AngularLimits {
    /// `angular.z.*` [rad/s, rad/s², rad/s³].
    pub z: AxisLimitsParams,
}

/// The limits the RT limiter is given for `linear` and `angular`.
pub fn to_rt(linear: &LinearLimits, angular: &AngularLimits) -> MotionLimits {
    MotionLimits {
        linear: linear.x.to_rt(),
        angular: angular.z.to_rt(),
    }
}

/// Checks the limits: the acceleration, deceleration and jerk limits that are set (not NaN)
/// against their physically meaningful range ([`ranges::motion_limit`]: a deceleration of 0 or
/// 1e-9 let a robot coast on for seconds, an acceleration of 5e-324 kept it from ever moving),
/// then the RT side's rule ([`MotionLimits::validate`]); the error names the parameter
/// (`linear.x.max_acceleration`) and says what it needs.
pub fn validate(linear: &LinearLimits, angular: &AngularLimits) -> Result<(), Invalid> {
    let limits = to_rt(linear, angular);
    for (angular, axis, prefix) in [
        (false, &limits.linear, "linear.x."),
        (true, &limits.angular, "angular.z."),
    ] {
        for (field, v) in [
            ("max_acceleration", axis.max_acceleration),
            ("max_deceleration", axis.max_deceleration),
            ("max_acceleration_reverse", axis.max_acceleration_reverse),
            ("max_deceleration_reverse", axis.max_deceleration_reverse),
            ("max_jerk", axis.max_jerk),
        ] {
            if let Some(range) = ranges::motion_limit(angular, field).filter(|_| !v.is_nan()) {
                range.check(&format!("{prefix}{field}"), v)?;
            }
        }
    }
    let Err(e) = limits.validate() else {
        return Ok(());
    };
    let (field, value, rule) = match e {
        ParamError::NotFinite(name) => (
            name,
            "infinite".to_owned(),
            "is refused: a limit is a finite number, or .nan (off)",
        ),
        ParamError::OutOfRange { name, value } if name.ends_with("min_velocity") => (
            name,
            value.to_string(),
            "is refused: the lowest velocity allowed is ≤ 0 (standing still is always allowed), or .nan (-max_velocity)",
        ),
        ParamError::OutOfRange { name, value } => (
            name,
            value.to_string(),
            "is refused: a limit is a magnitude ≥ 0, or .nan (off)",
        ),
        ParamError::NoSuchRobot(r) => (
            "linear",
            r.to_string(),
            "is no robot (unreachable)",
        ),
    };
    Err(Invalid::new(&param_name(field), value, rule))
}

/// The parameter name of the RT side's field name (`linear.max_jerk` → `linear.x.max_jerk`).
pub fn param_name(field: &str) -> String {
    if let Some(rest) = field.strip_prefix("linear.") {
        format!("linear.x.{rest}")
    } else if let Some(rest) = field.strip_prefix("angular.") {
        format!("angular.z.{rest}")
    } else {
        field.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absent_limits_are_off_and_refusals_name_the_parameter() {
        let l: LinearLimits = yaml_serde::from_str("x: {max_acceleration: 0.2}").unwrap();
        let a = AngularLimits::default();
        let rt = to_rt(&l, &a);
        assert_eq!(rt.linear.max_acceleration, 0.2);
        assert!(rt.linear.max_velocity.is_nan() && rt.angular.is_off());
        assert_eq!(validate(&l, &a), Ok(()));
        let nan: LinearLimits = yaml_serde::from_str("x: {max_velocity: .nan}").unwrap();
        assert!(to_rt(&nan, &a).is_off());

        let bad: LinearLimits = yaml_serde::from_str("x: {max_acceleration: -0.5}").unwrap();
        let e = validate(&bad, &a).unwrap_err();
        assert_eq!(e.key, "linear.x.max_acceleration");
        assert_eq!(e.value, "-0.5");
        let bad: AngularLimits = yaml_serde::from_str("z: {min_velocity: 0.1}").unwrap();
        let e = validate(&l, &bad).unwrap_err();
        assert_eq!(e.key, "angular.z.min_velocity");
        assert!(e.to_string().contains("≤ 0"), "{e}");
        let bad: LinearLimits = yaml_serde::from_str("x: {max_jerk: .inf}").unwrap();
        assert_eq!(validate(&bad, &a).unwrap_err().key, "linear.x.max_jerk");
    }

    /// Issue 42: rates too small to stop (or start) a robot in time are refused with their
    /// range, on both axes; NaN (off) and the bounds themselves are accepted.
    #[test]
    fn rates_below_their_physical_minimum_are_refused_with_the_range() {
        let lin = |yaml: &str| -> LinearLimits { yaml_serde::from_str(yaml).unwrap() };
        let ang = |yaml: &str| -> AngularLimits { yaml_serde::from_str(yaml).unwrap() };
        let off_l = LinearLimits::default();
        let off_a = AngularLimits::default();
        for field in [
            "max_acceleration",
            "max_deceleration",
            "max_acceleration_reverse",
            "max_deceleration_reverse",
        ] {
            for bad in ["0", "1e-9", "5e-324", "0.049", "1001", "-0.1"] {
                let e = validate(&lin(&format!("x: {{{field}: {bad}}}")), &off_a).unwrap_err();
                assert_eq!(e.key, format!("linear.x.{field}"));
                assert!(e.to_string().contains("[0.05, 1000] m/s²"), "{e}");
            }
            for bad in ["0", "1e-9", "5e-324", "0.99", "20001", "-0.1"] {
                let e = validate(&off_l, &ang(&format!("z: {{{field}: {bad}}}"))).unwrap_err();
                assert_eq!(e.key, format!("angular.z.{field}"));
                assert!(e.to_string().contains("[1, 20000] rad/s²"), "{e}");
            }
            for ok in ["0.05", "1000", ".nan"] {
                assert_eq!(
                    validate(&lin(&format!("x: {{{field}: {ok}}}")), &off_a),
                    Ok(())
                );
            }
            for ok in ["1", "20000", ".nan"] {
                assert_eq!(
                    validate(&off_l, &ang(&format!("z: {{{field}: {ok}}}"))),
                    Ok(())
                );
            }
        }
        for bad in ["0", "1e-9", "0.09", "2e6"] {
            let e = validate(&lin(&format!("x: {{max_jerk: {bad}}}")), &off_a).unwrap_err();
            assert!(e.to_string().contains("[0.1, 1000000] m/s³"), "{e}");
        }
        let e = validate(&off_l, &ang("z: {max_jerk: 1.9}")).unwrap_err();
        assert_eq!(e.key, "angular.z.max_jerk");
        assert!(e.to_string().contains("[2, 20000000] rad/s³"), "{e}");
        // Velocity bounds keep their own rule: 0 (no forward motion) is a velocity bound.
        assert_eq!(validate(&lin("x: {max_velocity: 0}"), &off_a), Ok(()));
    }
}
