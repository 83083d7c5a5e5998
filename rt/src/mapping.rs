//! Velocity mapping (ros-aseba-interface.md §3.5): twist → wheel speeds → inverse quadratic
//! calibration → curvature-preserving cap. Pure functions, no allocation.

use handoff::{Quadratic, RobotCalibration, Twist2, WheelCommand};

/// Wheel speeds beyond this (m/s) are scaled down together before the inverse calibration, so
/// that absurd but finite set-points keep their ratio and never overflow (far above any cap).
const SPEED_LIMIT: f64 = 1e3;

/// Wheel speeds (m/s): `v_l = v − ω·L/2`, `v_r = v + ω·L/2`.
pub fn wheel_speeds(t: Twist2, axis_length: f64) -> [f64; 2] {
    let half = t.angular * axis_length / 2.0;
    [t.linear - half, t.linear + half]
}

/// Motor units for a wheel speed `v` (m/s), unrounded: `v/q0` if `q1 = 0`, else the root of
/// `q0·m + q1·m·|m| = |v|` with the sign of `v`. Beyond the vertex of a concave model
/// (`q1 < 0`) the vertex is returned (the fastest the model allows).
pub fn si_to_units(v: f64, q: Quadratic) -> f64 {
    if q.q1 == 0.0 {
        return v / q.q0;
    }
    let disc = q.q0 * q.q0 + 4.0 * q.q1 * v.abs();
    if disc < 0.0 {
        return v.signum() * q.q0 / (-2.0 * q.q1);
    }
    0.5 * v.signum() * (-q.q0 + disc.sqrt()) / q.q1
}

/// ROS-Thymio's `si_to_aseba`: [`si_to_units`] rounded as Python's `round` does (half to even).
pub fn si_to_aseba(v: f64, q: Quadratic) -> f64 {
    si_to_units(v, q).round_ties_even()
}

/// Caps a pair of targets: if `max(|l|,|r|) > cap`, both become `trunc(cap/max·m)`, which
/// keeps their ratio (the curvature); the larger one becomes exactly `±trunc(cap)` (no
/// floating-point loss of a unit).
pub fn cap_pair(m: [f64; 2], cap: f64) -> [f64; 2] {
    let max = m[0].abs().max(m[1].abs());
    if max > cap {
        m.map(|x| {
            if x.abs() == max {
                (cap * x.signum()).trunc()
            } else {
                (cap / max * x).trunc()
            }
        })
    } else {
        m
    }
}

/// Wheel targets for a twist, both wheels together: exactly the reference mapping, guarded
/// against non-finite input (→ stop) and absurd magnitudes.
pub fn map_twist(t: Twist2, cal: &RobotCalibration) -> [i16; 2] {
    if !(t.linear.is_finite() && t.angular.is_finite()) {
        return [0, 0];
    }
    let mut v = wheel_speeds(t, cal.axis_length);
    let vmax = v[0].abs().max(v[1].abs());
    if !vmax.is_finite() {
        return [0, 0];
    }
    if vmax > SPEED_LIMIT {
        v = v.map(|x| x * (SPEED_LIMIT / vmax));
    }
    let m = [si_to_aseba(v[0], cal.left), si_to_aseba(v[1], cal.right)];
    if !(m[0].is_finite() && m[1].is_finite()) {
        return [0, 0];
    }
    let cap = cal.max_units.clamp(0.0, i16::MAX as f64);
    cap_pair(m, cap).map(|x| x as i16)
}

/// Wheel targets for wheel surface speeds `[left, right]` (m/s): each through its own inverse
/// calibration, rounded, and capped on its own to `±max_units` (no curvature preservation: a
/// joint command names each wheel). Any non-finite speed → stop.
pub fn map_wheel_speeds(v: [f64; 2], cal: &RobotCalibration) -> [i16; 2] {
    if !(v[0].is_finite() && v[1].is_finite()) {
        return [0, 0];
    }
    let cap = cal.max_units.clamp(0.0, i16::MAX as f64);
    let v = v.map(|x| x.clamp(-SPEED_LIMIT, SPEED_LIMIT));
    let m = [si_to_aseba(v[0], cal.left), si_to_aseba(v[1], cal.right)];
    if !(m[0].is_finite() && m[1].is_finite()) {
        return [0, 0];
    }
    m.map(|x| x.clamp(-cap, cap).trunc() as i16)
}

/// Raw targets clamped to the robot's `±max_units`.
pub fn clamp_targets(t: [i16; 2], cal: &RobotCalibration) -> [i16; 2] {
    let cap = cal.max_units.clamp(0.0, i16::MAX as f64).trunc() as i16;
    t.map(|x| x.clamp(-cap, cap))
}

/// Wheel targets for an owner's command ([`map_twist`], [`map_wheel_speeds`],
/// [`clamp_targets`]; `Stop` is zero).
pub fn map_command(cmd: WheelCommand, cal: &RobotCalibration) -> [i16; 2] {
    match cmd {
        WheelCommand::Stop => [0, 0],
        WheelCommand::Twist(t) => map_twist(t, cal),
        WheelCommand::WheelSpeeds(v) => map_wheel_speeds(v, cal),
        WheelCommand::Targets(t) => clamp_targets(t, cal),
    }
}

/// The wheel surface speed (m/s) the calibration model gives for `units`: `q0·m + q1·m·|m|`.
pub fn units_to_si(units: f64, q: Quadratic) -> f64 {
    q.q0 * units + q.q1 * units * units.abs()
}

#[cfg(test)]
mod tests {
    use super::*;
    use msgs::thymio::NOMINAL_Q0;
    use proptest::prelude::*;

    fn cal(q1: f64) -> RobotCalibration {
        RobotCalibration {
            left: Quadratic { q0: NOMINAL_Q0, q1 },
            right: Quadratic { q0: NOMINAL_Q0, q1 },
            ..Default::default()
        }
    }

    #[test]
    fn reference_examples() {
        let c = cal(0.0);
        // 0.1 m/s straight: 0.1 / (0.001/2.93) = 293 units per wheel.
        assert_eq!(
            map_twist(
                Twist2 {
                    linear: 0.1,
                    angular: 0.0
                },
                &c
            ),
            [293, 293]
        );
        // 0.2 m/s = 586 > 500: both scaled to 500.
        assert_eq!(
            map_twist(
                Twist2 {
                    linear: 0.2,
                    angular: 0.0
                },
                &c
            ),
            [500, 500]
        );
        // Pure rotation at 1 rad/s with L = 0.0935: ±0.04675 m/s = ±136.98 → ±137.
        assert_eq!(
            map_twist(
                Twist2 {
                    linear: 0.0,
                    angular: 1.0
                },
                &c
            ),
            [-137, 137]
        );
        // Capped arc: v = 0.15, ω = 2 → [0.0565, 0.2435] m/s = [165.545→166, 713.455→713];
        // scale 500/713: trunc(116.41) = 116, 500.
        assert_eq!(
            map_twist(
                Twist2 {
                    linear: 0.15,
                    angular: 2.0
                },
                &c
            ),
            [116, 500]
        );
        assert_eq!(
            map_twist(
                Twist2 {
                    linear: f64::NAN,
                    angular: 0.0
                },
                &c
            ),
            [0, 0]
        );
        assert_eq!(
            map_twist(
                Twist2 {
                    linear: 1e300,
                    angular: 0.0
                },
                &c
            ),
            [500, 500]
        );
        // As ROS-Thymio evaluates it: 500/620·155 = 124.999… truncates to 124 (CI found this one).
        assert_eq!(
            map_twist(
                Twist2 {
                    linear: 0.1323273909018926,
                    angular: -1.6989607293584341
                },
                &c
            ),
            [500, 124]
        );
        // Absurd but finite: the ratio (1 ± L/2) survives the pre-scaling.
        assert_eq!(
            map_twist(
                Twist2 {
                    linear: 1e300,
                    angular: -1e300
                },
                &c
            ),
            [500, 455]
        );
    }

    #[test]
    fn wheel_commands_map_per_wheel_and_cap_each_wheel_on_its_own() {
        let c = cal(0.0);
        // 0.1 m/s = 293 units; 0.3 m/s = 879 → capped alone to 500 (no ratio kept).
        assert_eq!(map_wheel_speeds([0.1, 0.3], &c), [293, 500]);
        assert_eq!(map_wheel_speeds([-0.3, 0.0], &c), [-500, 0]);
        assert_eq!(map_wheel_speeds([f64::NAN, 0.1], &c), [0, 0]);
        assert_eq!(map_wheel_speeds([f64::INFINITY, 0.1], &c), [0, 0]);
        assert_eq!(clamp_targets([700, -32768], &c), [500, -500]);
        assert_eq!(map_command(WheelCommand::Targets([12, -3]), &c), [12, -3]);
        assert_eq!(map_command(WheelCommand::Stop, &c), [0, 0]);
        let t = Twist2 {
            linear: 0.1,
            angular: 0.0,
        };
        assert_eq!(map_command(WheelCommand::Twist(t), &c), [293, 293]);
        let q = Quadratic { q0: 3e-4, q1: 2e-7 };
        assert!((units_to_si(si_to_units(0.12, q), q) - 0.12).abs() < 1e-12);
    }

    #[test]
    fn rounding_is_half_to_even_like_python() {
        let q = Quadratic { q0: 1.0, q1: 0.0 };
        assert_eq!(
            [0.5, 1.5, 2.5, -2.5].map(|v| si_to_aseba(v, q)),
            [0.0, 2.0, 2.0, -2.0]
        );
    }

    #[test]
    fn quadratic_model_inverts() {
        let q = Quadratic { q0: 3e-4, q1: 2e-7 };
        for m in [-500.0, -123.0, 0.0, 1.0, 77.0, 480.0] {
            let v = q.q0 * m + q.q1 * m * f64::abs(m);
            assert!((si_to_units(v, q) - m).abs() < 1e-6, "{m}");
        }
        // Concave model beyond its vertex saturates at the vertex.
        let c = Quadratic {
            q0: 1e-3,
            q1: -1e-6,
        };
        assert!((si_to_units(10.0, c) - 500.0).abs() < 1e-9);
        assert!((si_to_units(-10.0, c) + 500.0).abs() < 1e-9);
    }

    proptest! {
        #[test]
        fn targets_are_capped_and_keep_direction(v in -2.0f64..2.0, w in -20.0f64..20.0, q1 in 0.0f64..1e-6, cap in 10.0f64..1000.0) {
            let c = RobotCalibration { max_units: cap, ..cal(q1) };
            let m = map_twist(Twist2 { linear: v, angular: w }, &c);
            let unc = wheel_speeds(Twist2 { linear: v, angular: w }, c.axis_length);
            for i in 0..2 {
                prop_assert!((m[i] as f64).abs() <= cap);
                // Never reversed: same sign as the wheel speed, or zero.
                prop_assert!(m[i] as f64 * unc[i] >= 0.0);
            }
        }

        #[test]
        fn cap_preserves_curvature(v in -2.0f64..2.0, w in -20.0f64..20.0) {
            let c = cal(0.0);
            let m = map_twist(Twist2 { linear: v, angular: w }, &c);
            let raw = wheel_speeds(Twist2 { linear: v, angular: w }, c.axis_length).map(|x| si_to_aseba(x, c.left));
            let max = raw[0].abs().max(raw[1].abs());
            if max > 500.0 {
                // Scaled pair = ROS-Thymio's `int(500/max·m)`, evaluated in that order (so
                // 500/620·155 = 124.999… → 124, not 125): within one unit of the exact ratio.
                for i in 0..2 {
                    let expected = if raw[i].abs() == max { 500.0 * raw[i].signum() } else { (500.0 / max * raw[i]).trunc() };
                    prop_assert_eq!(m[i] as f64, expected);
                    prop_assert!((m[i] as f64 - raw[i] * 500.0 / max).abs() <= 1.0);
                }
                prop_assert!(m[0].unsigned_abs().max(m[1].unsigned_abs()) == 500);
            } else {
                prop_assert_eq!([m[0] as f64, m[1] as f64], raw);
            }
        }

        #[test]
        fn uncapped_targets_round_trip_through_the_calibration(v in -0.15f64..0.15, w in -1.5f64..1.5, q1 in 0.0f64..2e-7) {
            let c = cal(q1);
            let m = map_twist(Twist2 { linear: v, angular: w }, &c);
            let target = wheel_speeds(Twist2 { linear: v, angular: w }, c.axis_length);
            let capped = target.iter().any(|&x| si_to_aseba(x, c.left).abs() > 500.0);
            for i in 0..2 {
                if !capped {
                    let q = c.left;
                    let back = q.q0 * m[i] as f64 + q.q1 * m[i] as f64 * (m[i] as f64).abs();
                    // Within half a unit of the slope at that speed.
                    let slope = q.q0 + 2.0 * q.q1 * (m[i] as f64).abs() + 2.0 * q.q1;
                    prop_assert!((back - target[i]).abs() <= 0.5 * slope + 1e-12, "{} vs {}", back, target[i]);
                }
            }
        }
    }
}
