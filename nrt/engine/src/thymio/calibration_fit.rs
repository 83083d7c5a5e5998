//! The motor model fit of the calibration action (pure): least squares of
//! `speed = q0·m + q1·m·|m|` over the measured (target, true speed) points of one wheel, the
//! model `rt::mapping::si_to_units` inverts.
//!
//! The driver accepts only `q1 ≥ 0` (a model whose speed keeps rising with the target, see
//! [`Calibration::validate`](super::calibration::Calibration::validate)): when the unconstrained
//! optimum has `q1 < 0`, the constrained optimum is on the boundary, `q1 = 0` and `q0` the
//! least-squares slope (the problem is a convex quadratic). A fit is refused when the points
//! cannot determine it or it is absurd for a Thymio (see [`FitError`]).

/// The nominal `q0` of a Thymio (ROS-Thymio's default: 2.93 units per mm/s), the robot
/// profile's.
pub use msgs::thymio::NOMINAL_Q0;
/// Smallest and largest `q0` accepted, as multiples of [`NOMINAL_Q0`].
pub const Q0_RANGE: (f64, f64) = (0.25, 4.0);
/// Largest relative RMS residual accepted.
pub const MAX_RESIDUAL: f64 = 0.1;

/// A fitted wheel model.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WheelFit {
    /// Linear coefficient (m/s per unit).
    pub q0: f64,
    /// Quadratic coefficient (≥ 0).
    pub q1: f64,
    /// RMS of the residuals relative to the mean measured speed.
    pub residual: f64,
    /// Points used.
    pub points: usize,
}

/// Why a fit is refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FitError {
    /// Not enough points, or fewer than two distinct targets.
    #[error(
        "{wheel} wheel: {points} measurements at {targets} distinct targets; the fit needs at least 3 at 2 targets"
    )]
    TooFewPoints {
        /// Wheel.
        wheel: &'static str,
        /// Points.
        points: usize,
        /// Distinct targets.
        targets: usize,
    },
    /// A point is not finite or not positive.
    #[error(
        "{wheel} wheel: measurement ({target} units, {speed} m/s) is not a positive finite speed"
    )]
    BadPoint {
        /// Wheel.
        wheel: &'static str,
        /// Target.
        target: f64,
        /// Speed.
        speed: f64,
    },
    /// The fitted model is not a Thymio's.
    #[error(
        "{wheel} wheel: fitted q0 = {q0:e}, q1 = {q1:e} is absurd (q0 must be within {}..{} × the nominal {NOMINAL_Q0:e}): wrong axis_length, wheel slipping or a line missed?",
        Q0_RANGE.0,
        Q0_RANGE.1
    )]
    Absurd {
        /// Wheel.
        wheel: &'static str,
        /// q0.
        q0: f64,
        /// q1.
        q1: f64,
    },
    /// The measurements scatter too much around the model.
    #[error(
        "{wheel} wheel: the measurements scatter {:.1} % around the fitted model (at most {:.0} %): the robot slipped or crossings were missed",
        residual * 100.0,
        MAX_RESIDUAL * 100.0
    )]
    Scatter {
        /// Wheel.
        wheel: &'static str,
        /// Relative RMS residual.
        residual: f64,
    },
}

/// Fits `speed = q0·m + q1·m·|m|` (with `q1 ≥ 0`) to `(target m, speed)` points of `wheel`.
pub fn fit_wheel(wheel: &'static str, points: &[(f64, f64)]) -> Result<WheelFit, FitError> {
    for &(m, v) in points {
        if !(m.is_finite() && v.is_finite() && m > 0.0 && v > 0.0) {
            return Err(FitError::BadPoint {
                wheel,
                target: m,
                speed: v,
            });
        }
    }
    let mut targets: Vec<f64> = points.iter().map(|p| p.0).collect();
    targets.sort_by(f64::total_cmp);
    targets.dedup();
    if points.len() < 3 || targets.len() < 2 {
        return Err(FitError::TooFewPoints {
            wheel,
            points: points.len(),
            targets: targets.len(),
        });
    }
    // normal equations of v = q0·m + q1·m² (m > 0)
    let (mut s2, mut s3, mut s4, mut sv1, mut sv2) = (0.0, 0.0, 0.0, 0.0, 0.0);
    for &(m, v) in points {
        s2 += m * m;
        s3 += m * m * m;
        s4 += m * m * m * m;
        sv1 += m * v;
        sv2 += m * m * v;
    }
    let det = s2 * s4 - s3 * s3;
    let (mut q0, mut q1) = ((sv1 * s4 - sv2 * s3) / det, (s2 * sv2 - s3 * sv1) / det);
    if !(det > 0.0 && q0.is_finite() && q1.is_finite()) || q1 < 0.0 {
        (q0, q1) = (sv1 / s2, 0.0);
    }
    let (lo, hi) = (Q0_RANGE.0 * NOMINAL_Q0, Q0_RANGE.1 * NOMINAL_Q0);
    // at the firmware's nominal top target the quadratic term must not dominate absurdly
    if !(q0 >= lo && q0 <= hi && q1 * f64::from(msgs::thymio::NOMINAL_MAX_SPEED) <= q0 * 4.0) {
        return Err(FitError::Absurd { wheel, q0, q1 });
    }
    let n = points.len() as f64;
    let mean = points.iter().map(|p| p.1).sum::<f64>() / n;
    let sq: f64 = points
        .iter()
        .map(|&(m, v)| (v - q0 * m - q1 * m * m).powi(2))
        .sum();
    let residual = (sq / n).sqrt() / mean;
    if residual > MAX_RESIDUAL {
        return Err(FitError::Scatter { wheel, residual });
    }
    Ok(WheelFit {
        q0,
        q1,
        residual,
        points: points.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small deterministic noise in [−amp, amp] (relative).
    fn noisy(points: &[(f64, f64)], amp: f64) -> Vec<(f64, f64)> {
        let mut s: u64 = 42;
        points
            .iter()
            .map(|&(m, v)| {
                s = s
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let u = (s >> 11) as f64 / (1u64 << 53) as f64;
                (m, v * (1.0 + amp * (2.0 * u - 1.0)))
            })
            .collect()
    }

    fn model(q0: f64, q1: f64, targets: &[f64], repeat: usize) -> Vec<(f64, f64)> {
        targets
            .iter()
            .flat_map(|&m| std::iter::repeat_n((m, q0 * m + q1 * m * m), repeat))
            .collect()
    }

    #[test]
    fn recovers_linear_and_quadratic_models_through_noise() {
        let targets = [100.0, 150.0, 200.0, 300.0, 400.0, 500.0];
        let q0 = NOMINAL_Q0 * 1.06;
        let f = fit_wheel("left", &noisy(&model(q0, 0.0, &targets, 4), 0.01)).unwrap();
        assert!((f.q0 / q0 - 1.0).abs() < 0.01, "{f:?}");
        assert!(f.q1 * 500.0 < 0.01 * q0, "{f:?}");
        assert_eq!(f.points, 24);
        let q1 = 2e-8;
        let f = fit_wheel("right", &noisy(&model(q0, q1, &targets, 4), 0.005)).unwrap();
        assert!((f.q0 / q0 - 1.0).abs() < 0.02, "{f:?}");
        assert!((f.q1 / q1 - 1.0).abs() < 0.3, "{f:?}");
        assert!(f.residual < 0.01);
    }

    #[test]
    fn a_saturating_motor_gets_the_best_model_with_q1_zero() {
        let targets = [100.0, 200.0, 300.0, 400.0, 500.0];
        let pts = model(NOMINAL_Q0, -1e-7, &targets, 2);
        let f = fit_wheel("left", &pts).unwrap();
        assert_eq!(f.q1, 0.0);
        let slope =
            pts.iter().map(|p| p.0 * p.1).sum::<f64>() / pts.iter().map(|p| p.0 * p.0).sum::<f64>();
        assert!((f.q0 - slope).abs() < 1e-12);
    }

    #[test]
    fn refuses_what_cannot_be_fitted_with_a_reason() {
        let one = model(NOMINAL_Q0, 0.0, &[200.0], 5);
        let e = fit_wheel("left", &one).unwrap_err();
        assert!(matches!(e, FitError::TooFewPoints { targets: 1, .. }));
        assert!(e.to_string().contains("left wheel"), "{e}");
        let e = fit_wheel("left", &model(NOMINAL_Q0, 0.0, &[100.0, 200.0], 1)).unwrap_err();
        assert!(matches!(e, FitError::TooFewPoints { points: 2, .. }));
        let e = fit_wheel("right", &model(NOMINAL_Q0 * 10.0, 0.0, &[100.0, 200.0], 2));
        assert!(matches!(e, Err(FitError::Absurd { .. })), "{e:?}");
        let e = fit_wheel("right", &[(100.0, 0.03), (200.0, f64::NAN), (300.0, 0.1)]);
        assert!(matches!(e, Err(FitError::BadPoint { .. })));
        let scattered = [(100.0, 0.034), (100.0, 0.05), (200.0, 0.068), (200.0, 0.04)];
        let e = fit_wheel("left", &scattered).unwrap_err();
        assert!(matches!(e, FitError::Scatter { .. }), "{e:?}");
        assert!(e.to_string().contains('%'));
    }
}
