//! The physically meaningful range of every numeric driver parameter and calibration value: a
//! value the types accept (a finite `f64`) but no Thymio can have is refused, with its name,
//! its value and the allowed range. Every path checks these same constants: the YAML
//! configuration and ROS 1 parameter-server reads ([`crate::schema::parse`] through
//! `DriverParams::validate`), live sets on either ROS ([`crate::schema::set`]), calibration
//! file entries and the calibration tool's result (`Calibration::validate`); the ROS 2 front
//! end publishes them in its parameter descriptors ([`of_driver_param`]).
//!
//! Why each bound is where it is: docs/configuration.md, "Ranges: values a Thymio can have".

use super::Invalid;

/// An inclusive range of a real parameter, with its unit and why it ends there.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Range {
    /// Smallest accepted value.
    pub min: f64,
    /// Largest accepted value.
    pub max: f64,
    /// Unit, as shown in a refusal.
    pub unit: &'static str,
    /// Why the range ends there (one phrase).
    pub why: &'static str,
}

impl Range {
    /// Whether `v` is finite and in the range.
    pub fn contains(&self, v: f64) -> bool {
        v.is_finite() && self.min <= v && v <= self.max
    }

    /// `Ok` if `v` is in the range; else an [`Invalid`] naming `key`, `v` and the range.
    pub fn check(&self, key: &str, v: f64) -> Result<(), Invalid> {
        if self.contains(v) {
            Ok(())
        } else {
            Err(Invalid::new(key, v, self.rule()))
        }
    }

    /// [`Range::check`] of element `label` (`q0`) of list parameter `key`.
    pub fn check_element(&self, key: &str, label: &str, v: f64) -> Result<(), Invalid> {
        if self.contains(v) {
            Ok(())
        } else {
            Err(Invalid::new(key, format!("{label} = {v}"), self.rule()))
        }
    }

    /// "is outside [min, max] unit (why)".
    pub fn rule(&self) -> String {
        format!(
            "is outside the allowed range [{}, {}] {} ({})",
            self.min, self.max, self.unit, self.why
        )
    }
}

/// Wheel separation (`axis_length`).
pub const AXIS_LENGTH: Range = Range {
    min: 0.05,
    max: 0.15,
    unit: "m",
    why: "a Thymio's wheels are 0.0935 m apart inside a 0.11 m wide body",
};
/// Linear motor coefficient `q0` of `motor.<side>.parameters` (speed = q0·u + q1·u·|u|).
pub const MOTOR_Q0: Range = Range {
    min: 4e-5,
    max: 2e-3,
    unit: "m/s per motor unit",
    why: "top speed at 500 units between 0.02 and 1 m/s; a Thymio does about 0.17",
};
/// Quadratic motor coefficient `q1` of `motor.<side>.parameters`.
pub const MOTOR_Q1: Range = Range {
    min: 0.0,
    max: 4e-6,
    unit: "m/s per motor unit²",
    why: "the quadratic term alone stays under 1 m/s at 500 units",
};
/// `motor.<side>.deadband`.
pub const MOTOR_DEADBAND: Range = Range {
    min: 0.0,
    max: 100.0,
    unit: "motor units",
    why: "at most a fifth of the ±500 range; a Thymio's is about 10",
};
/// `r_max` of `proximity.<name>.parameters` (raw reading at contact).
pub const PROXIMITY_R_MAX: Range = Range {
    min: 100.0,
    max: 32767.0,
    unit: "raw",
    why: "readings are 16-bit, a Thymio saturates near 4500",
};
/// `x0` of `proximity.<name>.parameters`.
pub const PROXIMITY_X0: Range = Range {
    min: -0.05,
    max: 0.05,
    unit: "m",
    why: "the model's offset is a few millimetres beside a 0.14 m reach",
};
/// `c` of `proximity.<name>.parameters`.
pub const PROXIMITY_C: Range = Range {
    min: 1e-4,
    max: 0.1,
    unit: "m²",
    why: "√c is the model's distance scale, 1 cm to 32 cm for a 0.14 m sensor",
};
/// `odom_max_rate` (≤ 0: every sample).
pub const ODOM_MAX_RATE: Range = Range {
    min: -1.0,
    max: 10_000.0,
    unit: "Hz",
    why: "-1 or 0 publishes every sample; the RT loop samples at most at 10 kHz",
};
/// `joint_state_rate`.
pub const JOINT_STATE_RATE: Range = Range {
    min: 0.0,
    max: 10_000.0,
    unit: "Hz",
    why: "0: none; the RT loop builds at most one per period",
};
/// `cmd_vel_timeout` (0 disables the watchdog).
pub const CMD_VEL_TIMEOUT: Range = Range {
    min: 0.0,
    max: 60.0,
    unit: "s",
    why: "0 disables it; a watchdog longer than a minute no longer stops a robot in time",
};
/// `lost_robot_timeout` (≤ 0 never removes).
pub const LOST_ROBOT_TIMEOUT: Range = Range {
    min: -1.0,
    max: 86_400.0,
    unit: "s",
    why: "-1 or 0 never removes; at most a day",
};
/// `obstacle_stop.max_age`.
pub const OBSTACLE_MAX_AGE: Range = Range {
    min: 0.001,
    max: 10.0,
    unit: "s",
    why: "proximity readings come every 0.1 s; a reading older than 10 s says nothing",
};
/// `linear.x.max_acceleration`, `max_deceleration` and their `_reverse` (NaN: off, checked
/// apart). 0 is no "off": it is a rate of zero, a robot that never starts (acceleration) or
/// never slows down (deceleration: it coasted on at 0.1 m/s, issue 42).
pub const LINEAR_RATE: Range = Range {
    min: 0.05,
    max: 1000.0,
    unit: "m/s²",
    why: ".nan: off; 0.05 stops a Thymio at its top speed (0.2 m/s) within 4 s; above 1000 one \
          1 ms cycle spans its whole speed range",
};
/// `angular.z.max_acceleration`, `max_deceleration` and their `_reverse` (NaN: off).
pub const ANGULAR_RATE: Range = Range {
    min: 1.0,
    max: 20_000.0,
    unit: "rad/s²",
    why: ".nan: off; 1 rad/s² (0.047 m/s² at wheels 0.0935 m apart) stops the top yaw rate \
          (4.3 rad/s) within 4.3 s; above 20000 one 1 ms cycle spans its whole range",
};
/// `linear.x.max_jerk` (NaN: off).
pub const LINEAR_JERK: Range = Range {
    min: 0.1,
    max: 1e6,
    unit: "m/s³",
    why: ".nan: off; 0.1 alone stops 0.2 m/s within 2 s; 1e6 reaches the top rate \
          (1000 m/s²) within one 1 ms cycle",
};
/// `angular.z.max_jerk` (NaN: off).
pub const ANGULAR_JERK: Range = Range {
    min: 2.0,
    max: 2e7,
    unit: "rad/s³",
    why: ".nan: off; 2 rad/s³ (0.094 m/s³ at the wheels) alone stops the top yaw rate within \
          2.1 s; 2e7 reaches the top rate (20000 rad/s²) within one 1 ms cycle",
};
/// A `calibrate_motors` goal's `timeout` (0: the standard one).
pub const CALIBRATION_TIMEOUT: Range = Range {
    min: 1.0,
    max: 3600.0,
    unit: "s",
    why: "0 for the standard; one measurement takes 3.4–17 s, an hour means it is stuck",
};
/// `ground.threshold` (raw `prox.ground.delta`, a 10-bit reading).
pub const GROUND_THRESHOLD: (i64, i64) = (0, 1023);
/// `obstacle_stop.threshold` (raw horizontal proximity).
pub const OBSTACLE_THRESHOLD: (i64, i64) = (1, 4500);
/// `cliff_stop.threshold` (raw `prox.ground.delta`; 0 would never see a drop).
pub const CLIFF_THRESHOLD: (i64, i64) = (1, 1023);

/// Checks an integer parameter against `(min, max)`.
pub fn check_int(key: &str, v: i64, (min, max): (i64, i64), why: &str) -> Result<(), Invalid> {
    if (min..=max).contains(&v) {
        Ok(())
    } else {
        Err(Invalid::new(
            key,
            v,
            format!("is outside the allowed range [{min}, {max}] ({why})"),
        ))
    }
}

/// The range of the scalar driver parameter `name` (dotted), if it has one: what the ROS 2
/// descriptors publish as `floating_point_range` (list parameters are checked element by
/// element and have no descriptor range).
pub fn of_driver_param(name: &str) -> Option<Range> {
    let parts: Vec<&str> = name.split('.').collect();
    Some(match parts.as_slice() {
        ["axis_length"] => AXIS_LENGTH,
        ["odom_max_rate"] => ODOM_MAX_RATE,
        ["joint_state_rate"] => JOINT_STATE_RATE,
        ["cmd_vel_timeout"] => CMD_VEL_TIMEOUT,
        ["lost_robot_timeout"] => LOST_ROBOT_TIMEOUT,
        ["obstacle_stop", "max_age"] | ["cliff_stop", "max_age"] => OBSTACLE_MAX_AGE,
        ["motor", _, "deadband"] => MOTOR_DEADBAND,
        ["linear", "x", rate] => motion_limit(false, rate)?,
        ["angular", "z", rate] => motion_limit(true, rate)?,
        _ => return None,
    })
}

/// The range of motion limit `field` (`max_deceleration`) of the angular (yaw rate) or the
/// linear axis, if it has one: the acceleration and deceleration rates and the jerk (the
/// velocity bounds have their own rule, `thymio::motion_limits`).
pub fn motion_limit(angular: bool, field: &str) -> Option<Range> {
    match field {
        "max_acceleration"
        | "max_deceleration"
        | "max_acceleration_reverse"
        | "max_deceleration_reverse" => Some(if angular { ANGULAR_RATE } else { LINEAR_RATE }),
        "max_jerk" => Some(if angular { ANGULAR_JERK } else { LINEAR_JERK }),
        _ => None,
    }
}

/// The integer range of the driver parameter `name` (dotted), if it has one (`integer_range`).
pub fn int_of_driver_param(name: &str) -> Option<(i64, i64)> {
    match name {
        "ground.threshold" => Some(GROUND_THRESHOLD),
        "obstacle_stop.threshold" => Some(OBSTACLE_THRESHOLD),
        "cliff_stop.threshold" => Some(CLIFF_THRESHOLD),
        _ => None,
    }
}

/// Checks a motor model `[q0, q1]` (`key` names the list).
pub fn check_quadratic(key: &str, [q0, q1]: [f64; 2]) -> Result<(), Invalid> {
    MOTOR_Q0.check_element(key, "q0", q0)?;
    MOTOR_Q1.check_element(key, "q1", q1)
}

/// Checks a proximity model `[r_max, x0, c]` (`key` names the list), `x0² < c` included.
pub fn check_proximity(key: &str, [r_max, x0, c]: [f64; 3]) -> Result<(), Invalid> {
    PROXIMITY_R_MAX.check_element(key, "r_max", r_max)?;
    PROXIMITY_X0.check_element(key, "x0", x0)?;
    PROXIMITY_C.check_element(key, "c", c)?;
    if x0 * x0 >= c {
        return Err(Invalid::new(
            key,
            format!("{:?}", [r_max, x0, c]),
            "needs x0² < c",
        ));
    }
    Ok(())
}

#[cfg(test)]
#[path = "ranges_tests.rs"]
mod tests;
