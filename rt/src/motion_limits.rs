//! Motion limits in the RT loop (issue 26): every owner's command, after the filters and before
//! the wheel mapping, goes through a per-robot speed limiter with diff_drive_controller's
//! semantics, per axis (linear x, angular z), applied every cycle with that cycle's `dt`, in its
//! order: **jerk → acceleration → velocity**.
//!
//! - Jerk: the acceleration `(v − v₀)/dt` stays within `a₀ ± max_jerk·dt` (`a₀`: the previous
//!   step's). Like diff_drive_controller's, this per-cycle limiter does not plan: a step can
//!   overshoot by what the acceleration carries; the velocity bounds still hold.
//! - Acceleration: `|v|` rises at most at `max_acceleration` (`_reverse` below zero) and falls at
//!   most at `max_deceleration` (`_reverse` below zero), the side chosen by `v₀`'s sign. A step
//!   that would cross zero under a rate limit stops at zero for that cycle (the other side's
//!   acceleration then starts from rest), so neither side's rate is exceeded.
//! - Velocity: `min_velocity ≤ v ≤ max_velocity`.
//!
//! NaN turns a limit off ([`handoff::AxisLimits`]); all off is the identity, bit for bit.
//! Bad inputs never panic: a non-finite wanted twist is a stop (zero out, state reset to zero,
//! as [`crate::mapping::map_twist`] stops on it); a `dt` that is not a positive finite number
//! leaves the state unchanged and returns the previous output (no time passed: nothing may
//! change). Stops that must not be slowed (watchdog, exit, an obstacle stop, an owner change)
//! reset the state at once ([`RtLimiter::rt_reset`]).
//!
//! [`rt_limit_command`] applies it to a [`WheelCommand`] of any owner.

pub use handoff::{AxisLimits, MotionLimits};
use handoff::{RobotCalibration, Twist2, WheelCommand};

use crate::mapping::{units_to_si, wheel_speeds};

/// One axis' state: the last output and the acceleration of the step that led to it
/// (equivalent to the last two outputs and their interval).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct AxisState {
    v: f64,
    a: f64,
}

impl AxisState {
    fn step(&mut self, wanted: f64, dt: f64, l: &AxisLimits) -> f64 {
        let v0 = self.v;
        let mut v = wanted;
        // Jerk (comparisons with a NaN limit are false: off).
        let j = l.max_jerk * dt;
        if v - v0 > (self.a + j) * dt {
            v = v0 + (self.a + j) * dt;
        } else if v - v0 < (self.a - j) * dt {
            v = v0 + (self.a - j) * dt;
        }
        // Acceleration / deceleration, by the side v₀ is on.
        let [acc_f, dec_f] = l.rates(false);
        let [acc_r, dec_r] = l.rates(true);
        let rise = if v0 < 0.0 { dec_r } else { acc_f };
        let fall = if v0 > 0.0 { dec_f } else { acc_r };
        if v - v0 > rise * dt {
            v = v0 + rise * dt;
        } else if v0 - v > fall * dt {
            v = v0 - fall * dt;
        }
        let crosses = (v0 > 0.0 && v < 0.0) || (v0 < 0.0 && v > 0.0);
        let rates_on = !(acc_f.is_nan() && dec_f.is_nan() && acc_r.is_nan() && dec_r.is_nan());
        if crosses && rates_on {
            v = 0.0;
        }
        // Velocity.
        let [min, max] = l.velocity_bounds();
        if v > max {
            v = max;
        }
        if v < min {
            v = min;
        }
        self.a = (v - v0) / dt;
        if !self.a.is_finite() {
            self.a = 0.0;
        }
        self.v = v;
        v
    }
}

/// A robot's speed limiter: the last commanded twist and its acceleration, per axis. `Copy`,
/// no allocation, never panics.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct RtLimiter {
    linear: AxisState,
    angular: AxisState,
}

impl RtLimiter {
    /// At rest.
    pub const fn new() -> Self {
        RtLimiter {
            linear: AxisState { v: 0.0, a: 0.0 },
            angular: AxisState { v: 0.0, a: 0.0 },
        }
    }

    /// The twist for this cycle: `wanted` limited by `limits` over `dt_s` seconds since the
    /// previous call (see the module documentation for bad inputs).
    pub fn rt_limit(&mut self, wanted: Twist2, dt_s: f64, limits: &MotionLimits) -> Twist2 {
        if !(wanted.linear.is_finite() && wanted.angular.is_finite()) {
            self.rt_reset(Twist2::default());
            return Twist2::default();
        }
        if !(dt_s.is_finite() && dt_s > 0.0) {
            return self.rt_last();
        }
        Twist2 {
            linear: self.linear.step(wanted.linear, dt_s, &limits.linear),
            angular: self.angular.step(wanted.angular, dt_s, &limits.angular),
        }
    }

    /// Sets the state to `at` with no acceleration, at once (a stop that must not be slowed:
    /// `rt_reset(Twist2::default())`); a non-finite axis is taken as zero.
    pub fn rt_reset(&mut self, at: Twist2) {
        let f = |x: f64| if x.is_finite() { x } else { 0.0 };
        self.linear = AxisState {
            v: f(at.linear),
            a: 0.0,
        };
        self.angular = AxisState {
            v: f(at.angular),
            a: 0.0,
        };
    }

    /// Sets the axes of `at` that differ from the state (acceleration zero on those only).
    fn rt_override(&mut self, at: Twist2) {
        for (s, v) in [
            (&mut self.linear, at.linear),
            (&mut self.angular, at.angular),
        ] {
            if s.v != v {
                *s = AxisState {
                    v: if v.is_finite() { v } else { 0.0 },
                    a: 0.0,
                };
            }
        }
    }

    /// Whether the state is `at` with no acceleration: a command of `at` passes as it is.
    pub fn rt_steady_at(&self, at: Twist2) -> bool {
        self.linear.v == at.linear
            && self.angular.v == at.angular
            && self.linear.a == 0.0
            && self.angular.a == 0.0
    }

    /// The last output.
    pub fn rt_last(&self) -> Twist2 {
        Twist2 {
            linear: self.linear.v,
            angular: self.angular.v,
        }
    }
}

/// The body twist of a command (`None` for [`WheelCommand::Stop`]): wheel speeds and raw
/// targets (through the calibration) by `v = (l + r)/2`, `ω = (r − l)/L`.
pub fn command_twist(cmd: WheelCommand, cal: &RobotCalibration) -> Option<Twist2> {
    let body = |[l, r]: [f64; 2]| Twist2 {
        linear: (l + r) / 2.0,
        angular: (r - l) / cal.axis_length,
    };
    match cmd {
        WheelCommand::Stop => None,
        WheelCommand::Twist(t) => Some(t),
        WheelCommand::WheelSpeeds(v) => Some(body(v)),
        WheelCommand::Targets([l, r]) => Some(body([
            units_to_si(l as f64, cal.left),
            units_to_si(r as f64, cal.right),
        ])),
    }
}

/// An owner's command for this cycle through the limiter: `owned` is the owner's command,
/// `filtered` the same after the filters. Returns the command to map and the twist it commands.
///
/// - [`WheelCommand::Stop`] stops at once (state reset to zero); so does a non-finite twist.
/// - An axis a filter changed (the obstacle stop zeroes the forward part) takes the filter's
///   value at once: a reflex is never slowed.
/// - A command the limits leave as it is passes unchanged (bit for bit, its kind kept); a
///   limited one becomes a [`WheelCommand::Twist`] (from a twist) or
///   [`WheelCommand::WheelSpeeds`] (from wheel speeds or raw targets).
/// - All limits off, or raw motor targets ([`WheelCommand::Targets`]: the motor calibration
///   measures the motors' own response): the command passes, the state follows it (limits
///   start from the command in effect).
pub fn rt_limit_command(
    limiter: &mut RtLimiter,
    owned: WheelCommand,
    filtered: WheelCommand,
    dt_s: f64,
    limits: &MotionLimits,
    cal: &RobotCalibration,
) -> (WheelCommand, Twist2) {
    let Some(want) = command_twist(filtered, cal) else {
        limiter.rt_reset(Twist2::default());
        return (WheelCommand::Stop, Twist2::default());
    };
    if !(want.linear.is_finite() && want.angular.is_finite()) {
        limiter.rt_reset(Twist2::default());
        return (WheelCommand::Stop, Twist2::default());
    }
    // raw motor targets (the motor calibration's runs: it measures the motors' own response, in motor units)
    // and all limits off pass as they are; the state follows them, so limits start from the command in effect
    if limits.is_off() || matches!(filtered, WheelCommand::Targets(_)) {
        limiter.rt_reset(want);
        return (filtered, want);
    }
    let mut out = limiter.rt_limit(want, dt_s, limits);
    if filtered != owned {
        let before = command_twist(owned, cal).unwrap_or_default();
        if want.linear != before.linear {
            out.linear = want.linear;
        }
        if want.angular != before.angular {
            out.angular = want.angular;
        }
        limiter.rt_override(out);
    }
    if out == want {
        return (filtered, want);
    }
    let cmd = match filtered {
        WheelCommand::Twist(_) => WheelCommand::Twist(out),
        _ => WheelCommand::WheelSpeeds(wheel_speeds(out, cal.axis_length)),
    };
    (cmd, out)
}

#[cfg(test)]
mod tests;
