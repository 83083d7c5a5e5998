use super::*;
use msgs::thymio::{AXIS_LENGTH, NOMINAL_MAX_SPEED, NOMINAL_Q0, WHEEL_RADIUS};
use proptest::prelude::*;

fn cal(q0: f64, q1: f64, axis: f64) -> RobotCalibration {
    RobotCalibration {
        left: Quadratic { q0, q1 },
        right: Quadratic { q0, q1 },
        axis_length: axis,
        wheel_radius: WHEEL_RADIUS,
        max_units: f64::from(NOMINAL_MAX_SPEED),
    }
}

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * (1.0 + a.abs().max(b.abs()))
}

#[test]
fn wrap_delta_follows_the_reference_rules() {
    assert_eq!(wrap_delta(10, 5), 5);
    assert_eq!(wrap_delta(-32768, 32767), 1);
    assert_eq!(wrap_delta(32767, -32768), -1);
    assert_eq!(wrap_delta(0, -32768), 32768); // exactly 2^15 stays (`>` in the reference)
    assert_eq!(wrap_delta(-32768, 0), -32768);
}

#[test]
fn straight_and_pivot_steps() {
    let s = arc_step(0.01, 0.01, AXIS_LENGTH);
    assert_eq!((s.ds, s.dtheta, s.dx, s.dy), (0.01, 0.0, 0.01, 0.0));
    let p = arc_step(-0.01, 0.01, 0.1);
    assert_eq!((p.ds, p.dx, p.dy), (0.0, 0.0, 0.0));
    assert!(close(p.dtheta, 0.2, 1e-12));
    // Quarter circle of radius 1 to the left.
    let q = arc_step(
        (1.0 - 0.05) * std::f64::consts::FRAC_PI_2,
        1.05 * std::f64::consts::FRAC_PI_2,
        0.1,
    );
    assert!(close(q.dtheta, std::f64::consts::FRAC_PI_2, 1e-12));
    assert!(close(q.dx, 1.0, 1e-12) && close(q.dy, 1.0, 1e-12), "{q:?}");
}

#[test]
fn integrator_initialises_then_uses_on_robot_time() {
    let c = cal(0.001, 0.0, 0.1);
    let mut o = Integrator::default();
    let first = OdomInput {
        counts: [100, 100],
        ticks: Some(65530),
        t_ns: 1_000_000_000,
    };
    assert_eq!(o.step(first, &c, 100.0), Err(Skip::Initialised));
    // 10 ticks later (wrapping), receive time far off: dt comes from the robot.
    let next = OdomInput {
        counts: [150, 150],
        ticks: Some(4),
        t_ns: 9_000_000_000,
    };
    let out = o.step(next, &c, 100.0).unwrap();
    assert!(close(out.dt, 0.1, 1e-12));
    assert!(close(out.pose.x, 0.05, 1e-12) && out.pose.y == 0.0);
    assert!(close(out.twist.linear, 0.5, 1e-12) && out.twist.angular == 0.0);
    assert!(close(out.wheel_pos[0], 0.05 / 0.022, 1e-12));
    assert!(close(out.wheel_vel[1], 0.5 / 0.022, 1e-12));
    // Same ticks again: skipped, and its travel is kept for the next step.
    let dup = OdomInput {
        counts: [170, 170],
        ticks: Some(4),
        t_ns: 9_100_000_000,
    };
    assert_eq!(o.step(dup, &c, 100.0), Err(Skip::NonPositiveDt));
    let later = OdomInput {
        counts: [170, 170],
        ticks: Some(14),
        t_ns: 9_200_000_000,
    };
    assert!(close(o.step(later, &c, 100.0).unwrap().pose.x, 0.07, 1e-12));
}

#[test]
fn integrator_falls_back_to_receive_time_and_resets() {
    let c = cal(0.001, 0.0, 0.1);
    let mut o = Integrator::default();
    let a = OdomInput {
        counts: [0, 0],
        ticks: None,
        t_ns: 0,
    };
    let b = OdomInput {
        counts: [-10, 10],
        ticks: None,
        t_ns: 50_000_000,
    };
    o.step(a, &c, 100.0).unwrap_err();
    let out = o.step(b, &c, 100.0).unwrap();
    assert!(close(out.dt, 0.05, 1e-12));
    assert!(close(out.twist.angular, 0.2 / 0.05, 1e-12) && out.twist.linear == 0.0);
    o.reset(Pose2 {
        x: 1.0,
        y: 2.0,
        theta: 3.0,
    });
    assert_eq!(o.step(b, &c, 100.0), Err(Skip::Initialised));
    assert_eq!(o.pose().x, 1.0);
}

#[test]
fn long_straight_run_across_many_counter_wraps() {
    // 40 units/s forward for 1 hour at 20 Hz: counters wrap ~4 times.
    let c = cal(NOMINAL_Q0, 0.0, AXIS_LENGTH);
    let mut o = Integrator::default();
    let mut sum: i64 = 0;
    let mut ticks: u16 = 0;
    for k in 0..=72_000u64 {
        let counts = [sum as i16, sum as i16];
        let _ = o.step(
            OdomInput {
                counts,
                ticks: Some(ticks),
                t_ns: k * 50_000_000,
            },
            &c,
            100.0,
        );
        sum += 2; // 40 units/s · 0.05 s
        ticks = ticks.wrapping_add(5);
    }
    let expected = 72_000.0 * 2.0 * NOMINAL_Q0;
    assert!(close(o.pose().x, expected, 1e-9), "{}", o.pose().x);
    assert_eq!(o.pose().theta, 0.0);
}

proptest! {
    #[test]
    fn wrap_recovers_any_delta_below_half_range(prev in any::<i16>(), d in -32767i32..=32767) {
        let now = (prev as i32 + d) as i16; // wrapping
        prop_assert_eq!(wrap_delta(now, prev), d);
    }

    #[test]
    fn calibration_is_odd_and_monotonic(d in -5000.0f64..5000.0, e in 0.0f64..100.0, q0 in 1e-5f64..1e-2, q1 in 0.0f64..1e-6) {
        let q = Quadratic { q0, q1 };
        prop_assert!(close(calibrate(-d, q), -calibrate(d, q), 1e-12));
        prop_assert!(calibrate(d + e, q) >= calibrate(d, q));
    }

    #[test]
    fn arc_endpoint_lies_on_the_circle(dl in -0.5f64..0.5, dr in -0.5f64..0.5, axis in 0.05f64..0.2) {
        let s = arc_step(dl, dr, axis);
        prop_assert!(close(s.ds, (dl + dr) / 2.0, 1e-12));
        if s.dtheta.abs() > 1e-3 {
            let r = s.ds / s.dtheta;
            let dist = (s.dx * s.dx + (s.dy - r) * (s.dy - r)).sqrt();
            prop_assert!((dist - r.abs()).abs() < 1e-9 * (1.0 + r.abs()), "dist {} r {}", dist, r);
        }
        // Chord length = |2R sin(Δθ/2)|, i.e. ≤ |Δs|.
        prop_assert!((s.dx * s.dx + s.dy * s.dy).sqrt() <= s.ds.abs() + 1e-12);
    }

    #[test]
    fn constant_curvature_splits_integrate_exactly(dl in -0.3f64..0.3, dr in -0.3f64..0.3, n in 1usize..20, theta0 in -4.0f64..4.0) {
        let axis = AXIS_LENGTH;
        let start = Pose2 { x: 0.3, y: -0.2, theta: theta0 };
        let whole = apply(start, &arc_step(dl, dr, axis));
        let mut p = start;
        for _ in 0..n {
            p = apply(p, &arc_step(dl / n as f64, dr / n as f64, axis));
        }
        prop_assert!((p.x - whole.x).abs() < 1e-9 && (p.y - whole.y).abs() < 1e-9, "{:?} vs {:?}", p, whole);
        prop_assert!((p.theta - whole.theta).abs() < 1e-9);
    }

    #[test]
    fn tiny_rotations_stay_finite_and_continuous(ds in -0.1f64..0.1, e in -20i32..-2, m in -1.0f64..1.0) {
        // Heading changes from 1e-20 to 1e-2 rad, across the series/closed-form switch.
        let k = m * 10f64.powi(e);
        let axis = AXIS_LENGTH;
        let s = arc_step(ds - k * axis / 2.0, ds + k * axis / 2.0, axis);
        prop_assert!(s.dx.is_finite() && s.dy.is_finite());
        // dx = Δs(1 − Δθ²/6 + …), dy = Δs(Δθ/2 − Δθ³/24 + …).
        let t = s.dtheta;
        prop_assert!((s.dx - s.ds * (1.0 - t * t / 6.0)).abs() <= ds.abs() * (t.powi(4) / 100.0 + 1e-15));
        prop_assert!((s.dy - s.ds * (t / 2.0 - t.powi(3) / 24.0)).abs() <= ds.abs() * (t.abs().powi(5) / 100.0 + 1e-15));
    }

    #[test]
    fn integrator_twist_times_dt_is_the_step(c0 in any::<i16>(), dl in -2000i32..2000, dr in -2000i32..2000, dticks in 1u16..200, t0 in any::<u16>()) {
        let c = cal(NOMINAL_Q0, 1e-7, AXIS_LENGTH);
        let mut o = Integrator::default();
        let a = OdomInput { counts: [c0, c0], ticks: Some(t0), t_ns: 0 };
        let b = OdomInput {
            counts: [(c0 as i32 + dl) as i16, (c0 as i32 + dr) as i16],
            ticks: Some(t0.wrapping_add(dticks)),
            t_ns: 1,
        };
        o.step(a, &c, 100.0).unwrap_err();
        let out = o.step(b, &c, 100.0).unwrap();
        let step = arc_step(calibrate(dl as f64, c.left), calibrate(dr as f64, c.right), c.axis_length);
        prop_assert!(close(out.dt, dticks as f64 / 100.0, 1e-12));
        prop_assert!(close(out.twist.linear * out.dt, step.ds, 1e-9));
        prop_assert!(close(out.twist.angular * out.dt, step.dtheta, 1e-9));
        prop_assert!(close(out.wheel_vel[0] * out.dt * c.wheel_radius, calibrate(dl as f64, c.left), 1e-9));
    }
}
