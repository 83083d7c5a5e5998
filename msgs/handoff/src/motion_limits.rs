//! Motion limits of one robot (issue 26), the configuration both sides share: NRT validates and
//! stores it in the live parameters ([`super::NrtLiveParams::nrt_set_motion_limits`]), the RT
//! thread's limiter (`rt::motion_limits::RtLimiter`) applies it every cycle.
//!
//! Semantics are diff_drive_controller's speed limiter, per axis (linear x, angular z): velocity
//! bounds, acceleration (|v| increasing) and deceleration (|v| decreasing) rates, with
//! `_reverse` variants for negative velocities, and a jerk bound. Every limit is a magnitude
//! except `min_velocity` (the lowest velocity allowed, ≤ 0). **NaN turns a limit off**; a NaN
//! `_reverse` limit takes its forward counterpart and a NaN `min_velocity` is `-max_velocity`
//! (as in diff_drive_controller), so all-NaN (the default) is the identity.
//!
//! [`MotionLimits::validate`] is the RT side's structural rule (finite, signs). A rate is not "off"
//! at 0: it is a rate of zero (a deceleration of 0 never slows the robot, an acceleration of 0
//! never starts it); the physically meaningful ranges of the rates and the jerk (e.g.
//! deceleration ≥ 0.05 m/s²) are the parameters' (`nrt_engine::schema::ranges::motion_limit`),
//! checked on every input path before the limits reach here. Whatever the limits, the RT
//! watchdogs arm on what the limiter still commands (`rt::robot::Robot::moving`).

use super::values::ParamError;

/// One axis' limits (m/s and m/s² … for `linear`, rad/s … for `angular`); NaN = off.
/// Equality compares what is in effect: two NaN (off) limits are equal.
#[derive(Debug, Clone, Copy, serde::Serialize, serde::Deserialize)]
pub struct AxisLimits {
    /// Highest velocity (≥ 0).
    pub max_velocity: f64,
    /// Lowest velocity (≤ 0); NaN: `-max_velocity`.
    pub min_velocity: f64,
    /// Largest rate of |v| increase while v ≥ 0 (≥ 0).
    pub max_acceleration: f64,
    /// Largest rate of |v| decrease while v > 0 (≥ 0).
    pub max_deceleration: f64,
    /// Largest rate of |v| increase while v < 0 (≥ 0); NaN: `max_acceleration`.
    pub max_acceleration_reverse: f64,
    /// Largest rate of |v| decrease while v < 0 (≥ 0); NaN: `max_deceleration`.
    pub max_deceleration_reverse: f64,
    /// Largest rate of change of the acceleration (≥ 0).
    pub max_jerk: f64,
}

impl AxisLimits {
    /// Every limit off.
    pub const OFF: AxisLimits = AxisLimits {
        max_velocity: f64::NAN,
        min_velocity: f64::NAN,
        max_acceleration: f64::NAN,
        max_deceleration: f64::NAN,
        max_acceleration_reverse: f64::NAN,
        max_deceleration_reverse: f64::NAN,
        max_jerk: f64::NAN,
    };

    /// `[lowest, highest]` velocity in effect (NaN: that side unbounded).
    pub fn velocity_bounds(&self) -> [f64; 2] {
        let min = if self.min_velocity.is_nan() {
            -self.max_velocity
        } else {
            self.min_velocity
        };
        [min, self.max_velocity]
    }

    /// `[acceleration, deceleration]` rates in effect for velocities of sign `reverse`
    /// (NaN: off).
    pub fn rates(&self, reverse: bool) -> [f64; 2] {
        let or = |r: f64, f: f64| if r.is_nan() { f } else { r };
        if reverse {
            [
                or(self.max_acceleration_reverse, self.max_acceleration),
                or(self.max_deceleration_reverse, self.max_deceleration),
            ]
        } else {
            [self.max_acceleration, self.max_deceleration]
        }
    }

    /// Whether every limit is off.
    pub fn is_off(&self) -> bool {
        self.fields().iter().all(|(_, v)| v.is_nan())
    }

    fn fields(&self) -> [(&'static str, f64); 7] {
        [
            ("max_velocity", self.max_velocity),
            ("min_velocity", self.min_velocity),
            ("max_acceleration", self.max_acceleration),
            ("max_deceleration", self.max_deceleration),
            ("max_acceleration_reverse", self.max_acceleration_reverse),
            ("max_deceleration_reverse", self.max_deceleration_reverse),
            ("max_jerk", self.max_jerk),
        ]
    }

    /// Checks the axis; errors name the field (`linear.max_acceleration`): infinite values
    /// (NaN turns a limit off), negative limits and a positive `min_velocity` (so that
    /// `min_velocity ≤ 0 ≤ max_velocity`: a `min_velocity` above `max_velocity` is refused by
    /// its sign, and standing still is always allowed).
    pub fn validate(&self, axis: Axis) -> Result<(), ParamError> {
        for (name, v) in self.fields() {
            let name = axis.field(name);
            if v.is_infinite() {
                return Err(ParamError::NotFinite(name));
            }
            let bad = if name.ends_with("min_velocity") {
                v > 0.0
            } else {
                v < 0.0
            };
            if bad {
                return Err(ParamError::OutOfRange { name, value: v });
            }
        }
        Ok(())
    }
}

impl PartialEq for AxisLimits {
    fn eq(&self, other: &Self) -> bool {
        self.fields()
            .iter()
            .zip(other.fields())
            .all(|((_, a), (_, b))| a == &b || (a.is_nan() && b.is_nan()))
    }
}

impl Default for AxisLimits {
    fn default() -> Self {
        AxisLimits::OFF
    }
}

/// Which axis: for error messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Axis {
    /// Forward speed (linear x).
    Linear,
    /// Yaw rate (angular z).
    Angular,
}

impl Axis {
    fn field(self, name: &'static str) -> &'static str {
        macro_rules! names {
            ($($n:literal),*) => {
                match (self, name) {
                    $((Axis::Linear, $n) => concat!("linear.", $n),
                      (Axis::Angular, $n) => concat!("angular.", $n),)*
                    _ => name,
                }
            };
        }
        names!(
            "max_velocity",
            "min_velocity",
            "max_acceleration",
            "max_deceleration",
            "max_acceleration_reverse",
            "max_deceleration_reverse",
            "max_jerk"
        )
    }
}

/// A robot's motion limits: `linear` (m/s, m/s², m/s³) and `angular` (rad/s, …). `Default`:
/// all off.
///
/// # Example
///
/// ```
/// use handoff::{AxisLimits, MotionLimits, ParamError};
///
/// let mut l = MotionLimits::default();
/// assert!(l.validate().is_ok() && l.is_off());
/// l.linear.max_acceleration = -1.0;
/// assert_eq!(
///     l.validate(),
///     Err(ParamError::OutOfRange { name: "linear.max_acceleration", value: -1.0 })
/// );
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct MotionLimits {
    /// Forward speed limits.
    pub linear: AxisLimits,
    /// Yaw rate limits.
    pub angular: AxisLimits,
}

impl MotionLimits {
    /// Checks both axes (see [`AxisLimits::validate`]).
    pub fn validate(&self) -> Result<(), ParamError> {
        self.linear.validate(Axis::Linear)?;
        self.angular.validate(Axis::Angular)
    }

    /// Whether every limit is off.
    pub fn is_off(&self) -> bool {
        self.linear.is_off() && self.angular.is_off()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_bad_limit_is_refused_by_name() {
        let ok = MotionLimits {
            linear: AxisLimits {
                max_velocity: 0.2,
                min_velocity: -0.1,
                max_acceleration: 0.5,
                max_deceleration: 1.0,
                max_acceleration_reverse: 0.3,
                max_deceleration_reverse: 0.6,
                max_jerk: 5.0,
            },
            angular: AxisLimits {
                max_velocity: 2.0,
                ..AxisLimits::OFF
            },
        };
        assert_eq!(ok.validate(), Ok(()));
        let mut l = ok;
        l.angular.max_jerk = -0.1;
        assert_eq!(
            l.validate(),
            Err(ParamError::OutOfRange {
                name: "angular.max_jerk",
                value: -0.1
            })
        );
        let mut l = ok;
        l.linear.max_deceleration_reverse = f64::INFINITY;
        assert_eq!(
            l.validate(),
            Err(ParamError::NotFinite("linear.max_deceleration_reverse"))
        );
        let mut l = ok;
        l.linear.min_velocity = 0.3;
        assert_eq!(
            l.validate(),
            Err(ParamError::OutOfRange {
                name: "linear.min_velocity",
                value: 0.3
            })
        );
        let mut l = ok;
        l.angular.max_velocity = -1.0;
        assert!(matches!(
            l.validate(),
            Err(ParamError::OutOfRange {
                name: "angular.max_velocity",
                ..
            })
        ));
    }

    #[test]
    fn nan_reverse_limits_take_the_forward_ones() {
        let a = AxisLimits {
            max_velocity: 0.2,
            max_acceleration: 0.5,
            max_deceleration_reverse: 0.7,
            ..AxisLimits::OFF
        };
        assert_eq!(a.velocity_bounds(), [-0.2, 0.2]);
        assert_eq!(a.rates(true)[0], 0.5);
        assert_eq!(a.rates(true)[1], 0.7);
        assert!(a.rates(false)[1].is_nan());
        assert!(!a.is_off() && AxisLimits::OFF.is_off());
        // Off equals off; a limit set differs from off.
        assert_eq!(AxisLimits::OFF, AxisLimits::default());
        assert_ne!(a, AxisLimits::OFF);
    }
}
