use super::*;
use handoff::Quadratic;
use proptest::prelude::*;

const DT: f64 = 0.01;

fn lin(l: AxisLimits) -> MotionLimits {
    MotionLimits {
        linear: l,
        angular: AxisLimits::OFF,
    }
}

fn fwd(v: f64) -> Twist2 {
    Twist2 {
        linear: v,
        angular: 0.0,
    }
}

/// `x ≤ bound`, a NaN bound being off.
fn at_most(x: f64, bound: f64) -> bool {
    bound.is_nan() || x <= bound
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

/// Runs `n` cycles toward `wanted`, returning the linear outputs.
fn run(l: &mut RtLimiter, wanted: Twist2, n: usize, limits: &MotionLimits) -> Vec<f64> {
    (0..n)
        .map(|_| l.rt_limit(wanted, DT, limits).linear)
        .collect()
}

#[test]
fn a_step_ramps_at_the_acceleration_then_holds() {
    let limits = lin(AxisLimits {
        max_acceleration: 0.5,
        ..AxisLimits::OFF
    });
    let mut l = RtLimiter::new();
    let out = run(&mut l, fwd(0.2), 50, &limits);
    for (k, v) in out.iter().enumerate().take(40) {
        assert!(close(*v, 0.005 * (k + 1) as f64), "cycle {k}: {v}");
    }
    assert!(close(out[39], 0.2) && out[40..].iter().all(|v| close(*v, 0.2)));
    // The other axis, with no limits, follows at once.
    let t = l.rt_limit(
        Twist2 {
            linear: 0.2,
            angular: 3.0,
        },
        DT,
        &limits,
    );
    assert_eq!(t.angular, 3.0);
}

#[test]
fn slowing_uses_the_deceleration_and_reverse_uses_its_own_rates() {
    let limits = lin(AxisLimits {
        max_acceleration: 1.0,
        max_deceleration: 2.0,
        max_acceleration_reverse: 0.25,
        max_deceleration_reverse: 0.5,
        ..AxisLimits::OFF
    });
    let mut l = RtLimiter::new();
    l.rt_reset(fwd(0.2));
    // Forward deceleration: 2 m/s² → 0.02 per 10 ms cycle.
    let out = run(&mut l, fwd(0.0), 3, &limits);
    assert!(close(out[0], 0.18) && close(out[1], 0.16) && close(out[2], 0.14));
    // Reverse acceleration from rest: 0.25 m/s².
    l.rt_reset(fwd(0.0));
    let out = run(&mut l, fwd(-0.1), 2, &limits);
    assert!(close(out[0], -0.0025) && close(out[1], -0.005), "{out:?}");
    // Reverse deceleration: 0.5 m/s².
    l.rt_reset(fwd(-0.1));
    let out = run(&mut l, fwd(0.0), 2, &limits);
    assert!(close(out[0], -0.095) && close(out[1], -0.09), "{out:?}");
    // A reversal stops at zero for a cycle, then accelerates the other way from rest.
    l.rt_reset(fwd(0.01));
    let out = run(&mut l, fwd(-0.1), 2, &limits);
    assert!(out[0] == 0.0 && close(out[1], -0.0025), "{out:?}");
}

#[test]
fn nan_reverse_rates_take_the_forward_ones() {
    let limits = lin(AxisLimits {
        max_acceleration: 1.0,
        max_deceleration: 2.0,
        ..AxisLimits::OFF
    });
    let mut l = RtLimiter::new();
    let out = run(&mut l, fwd(-0.1), 1, &limits);
    assert!(close(out[0], -0.01));
    l.rt_reset(fwd(-0.1));
    let out = run(&mut l, fwd(0.0), 1, &limits);
    assert!(close(out[0], -0.08));
}

#[test]
fn jerk_bounds_the_change_of_acceleration() {
    let limits = lin(AxisLimits {
        max_jerk: 10.0,
        ..AxisLimits::OFF
    });
    let mut l = RtLimiter::new();
    let out = run(&mut l, fwd(1.0), 5, &limits);
    // a_k = 10·dt·k → v_k = v_{k-1} + a_k·dt.
    let mut v = 0.0;
    for (k, got) in out.iter().enumerate() {
        v += 10.0 * DT * (k + 1) as f64 * DT;
        assert!(close(*got, v), "cycle {k}: {got} vs {v}");
    }
    // Acceleration and jerk together: the acceleration caps the jerk's ramp.
    let limits = lin(AxisLimits {
        max_jerk: 10.0,
        max_acceleration: 0.2,
        ..AxisLimits::OFF
    });
    let mut l = RtLimiter::new();
    let out = run(&mut l, fwd(1.0), 10, &limits);
    let steps: Vec<f64> = out.windows(2).map(|w| (w[1] - w[0]) / DT).collect();
    assert!(close(steps[0], 0.2) && steps.iter().all(|a| *a <= 0.2 + 1e-9));
    assert!(close(out[0], 0.001), "{out:?}");
}

#[test]
fn velocity_is_clamped_per_direction() {
    let limits = lin(AxisLimits {
        max_velocity: 0.2,
        min_velocity: -0.05,
        ..AxisLimits::OFF
    });
    let mut l = RtLimiter::new();
    assert_eq!(l.rt_limit(fwd(0.5), DT, &limits).linear, 0.2);
    assert_eq!(l.rt_limit(fwd(-0.5), DT, &limits).linear, -0.05);
    assert_eq!(l.rt_limit(fwd(0.1), DT, &limits).linear, 0.1);
    // A NaN min_velocity is −max_velocity.
    let limits = lin(AxisLimits {
        max_velocity: 0.2,
        ..AxisLimits::OFF
    });
    assert_eq!(l.rt_limit(fwd(-0.5), DT, &limits).linear, -0.2);
}

#[test]
fn bad_inputs_never_panic_and_are_documented() {
    let limits = lin(AxisLimits {
        max_acceleration: 1.0,
        ..AxisLimits::OFF
    });
    let mut l = RtLimiter::new();
    run(&mut l, fwd(0.5), 3, &limits);
    let before = l;
    // dt ≤ 0 or not finite: previous output, state unchanged.
    for dt in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        assert_eq!(l.rt_limit(fwd(0.5), dt, &limits), before.rt_last());
        assert_eq!(l, before);
    }
    // A non-finite wanted twist is a stop.
    let t = l.rt_limit(fwd(f64::NAN), DT, &limits);
    assert_eq!((t, l.rt_last()), (Twist2::default(), Twist2::default()));
    // Unvalidated limits (min above max, negative rates) do not panic.
    let odd = lin(AxisLimits {
        max_velocity: -1.0,
        min_velocity: 1.0,
        max_acceleration: -1.0,
        max_jerk: -3.0,
        ..AxisLimits::OFF
    });
    assert!(l.rt_limit(fwd(0.3), DT, &odd).linear.is_finite());
    l.rt_reset(fwd(f64::INFINITY));
    assert_eq!(l.rt_last(), Twist2::default());
}

fn cal() -> RobotCalibration {
    RobotCalibration {
        left: Quadratic { q0: 0.001, q1: 0.0 },
        right: Quadratic { q0: 0.001, q1: 0.0 },
        axis_length: 0.1,
        ..Default::default()
    }
}

#[test]
fn commands_are_limited_but_raw_targets_and_stops_are_not() {
    let limits = lin(AxisLimits {
        max_acceleration: 1.0,
        ..AxisLimits::OFF
    });
    let c = cal();
    let mut l = RtLimiter::new();
    let go = WheelCommand::Twist(fwd(0.1));
    let (cmd, t) = rt_limit_command(&mut l, go, go, DT, &limits, &c);
    assert_eq!(cmd, WheelCommand::Twist(fwd(0.01)));
    assert_eq!(t, fwd(0.01));
    // Wheel speeds: limited in the body frame, back to wheel speeds.
    let ws = WheelCommand::WheelSpeeds([0.1, 0.1]);
    let (cmd, _) = rt_limit_command(&mut l, ws, ws, DT, &limits, &c);
    let WheelCommand::WheelSpeeds([a, b]) = cmd else {
        panic!("{cmd:?}")
    };
    assert!(close(a, 0.02) && close(b, 0.02));
    // Raw targets (the motor calibration's runs) pass as they are, and the state follows them:
    // 100 units = 0.1 m/s.
    let tg = WheelCommand::Targets([100, 100]);
    let (cmd, t) = rt_limit_command(&mut l, tg, tg, DT, &limits, &c);
    assert_eq!(cmd, tg);
    assert!(close(t.linear, 0.1) && close(l.rt_last().linear, 0.1));
    // A stop stops at once.
    let (cmd, t) = rt_limit_command(
        &mut l,
        WheelCommand::Stop,
        WheelCommand::Stop,
        DT,
        &limits,
        &c,
    );
    assert_eq!(
        (cmd, t, l.rt_last()),
        (WheelCommand::Stop, fwd(0.0), fwd(0.0))
    );
    // An obstacle stop (a filter zeroing the forward part) is not slowed; the turn still is.
    let limits = MotionLimits {
        linear: AxisLimits {
            max_deceleration: 0.1,
            ..AxisLimits::OFF
        },
        angular: AxisLimits {
            max_acceleration: 1.0,
            ..AxisLimits::OFF
        },
    };
    l.rt_reset(fwd(0.2));
    let owned = WheelCommand::Twist(Twist2 {
        linear: 0.2,
        angular: 0.5,
    });
    let filtered = WheelCommand::Twist(Twist2 {
        linear: 0.0,
        angular: 0.5,
    });
    let (_, t) = rt_limit_command(&mut l, owned, filtered, DT, &limits, &c);
    assert_eq!(t.linear, 0.0);
    assert!(close(t.angular, 0.01));
    assert_eq!(l.rt_last(), t);
    // Not limited: the command passes as it is (kind and bits).
    let (cmd, _) = rt_limit_command(&mut l, tg, tg, 10.0, &limits, &c);
    assert_eq!(cmd, tg);
}

/// Limits drawn from a validated space: each field off (NaN) or in range.
fn axis_limits() -> impl Strategy<Value = AxisLimits> {
    let pos = || prop_oneof![Just(f64::NAN), 0.0..5.0f64];
    (pos(), pos(), pos(), pos(), pos(), pos(), pos()).prop_map(|(mx, mn, a, d, ar, dr, j)| {
        AxisLimits {
            max_velocity: mx,
            min_velocity: -mn,
            max_acceleration: a,
            max_deceleration: d,
            max_acceleration_reverse: ar,
            max_deceleration_reverse: dr,
            max_jerk: j,
        }
    })
}

proptest! {
    #[test]
    fn output_stays_within_the_bounds(
        lim in axis_limits(),
        steps in proptest::collection::vec((-10.0..10.0f64, 0.0001..0.1f64), 1..60),
    ) {
        let limits = lin(lim);
        prop_assert!(limits.validate().is_ok());
        let mut l = RtLimiter::new();
        let [min, max] = lim.velocity_bounds();
        for (want, dt) in steps {
            let v0 = l.rt_last().linear;
            let v = l.rt_limit(fwd(want), dt, &limits).linear;
            prop_assert!(v.is_finite());
            prop_assert!(at_most(v, max + 1e-12) && at_most(-v, -min + 1e-12), "{v} outside [{min}, {max}]");
            // The rate of the side v₀ is on bounds the step.
            let [af, df] = lim.rates(false);
            let [ar, dr] = lim.rates(true);
            let (rise, fall) = (if v0 < 0.0 { dr } else { af }, if v0 > 0.0 { df } else { ar });
            let tol = 1e-9;
            prop_assert!(at_most(v - v0, rise * dt + tol), "rose {} > {rise}·{dt}", v - v0);
            prop_assert!(at_most(v0 - v, fall * dt + tol), "fell {} > {fall}·{dt}", v0 - v);
        }
    }

    #[test]
    fn all_limits_off_is_the_identity(
        steps in proptest::collection::vec((-10.0..10.0f64, -10.0..10.0f64, -1.0..0.1f64), 1..40),
    ) {
        let mut l = RtLimiter::new();
        let off = MotionLimits::default();
        let c = cal();
        for (v, w, dt) in steps {
            let t = Twist2 { linear: v, angular: w };
            if dt > 0.0 {
                prop_assert_eq!(l.rt_limit(t, dt, &off), t);
            }
            let cmd = WheelCommand::WheelSpeeds([v, w]);
            prop_assert_eq!(rt_limit_command(&mut l, cmd, cmd, dt, &off, &c).0, cmd);
        }
    }
}
