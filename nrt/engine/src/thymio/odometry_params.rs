//! The odometry parameters diff_drive_controller has and ROS-Thymio lacks (issue 26): the covariance diagonals of
//! `odom` (`pose_covariance_diagonal`, `twist_covariance_diagonal`: six variances each, x y z roll pitch yaw) and
//! whether `odom → base_link` goes on `/tf` (`enable_odom_tf`). Unset (an empty list), a diagonal keeps
//! ROS-Thymio's covariances (pose unknown: `covariance[0] = -1`; twist from the wheels' dead band), so that a
//! ROS-Thymio parameter file gives the same messages.

use crate::schema::Invalid;

/// The number of values of a covariance diagonal (x, y, z, roll, pitch, yaw).
pub const DIAGONAL_LEN: usize = 6;

/// Checks one diagonal (`key` names it): empty (ROS-Thymio's covariances) or six finite variances ≥ 0.
///
/// # Example
///
/// ```
/// use nrt_engine::thymio::odometry_params::check_diagonal;
///
/// assert!(check_diagonal("pose_covariance_diagonal", &[]).is_ok());
/// assert!(check_diagonal("pose_covariance_diagonal", &[0.001, 0.001, 1e6, 1e6, 1e6, 0.03]).is_ok());
/// let e = check_diagonal("twist_covariance_diagonal", &[0.1, 0.1]).unwrap_err();
/// assert_eq!(e.key, "twist_covariance_diagonal");
/// ```
pub fn check_diagonal(key: &str, values: &[f64]) -> Result<(), Invalid> {
    let shown = || format!("{values:?}");
    if !values.is_empty() && values.len() != DIAGONAL_LEN {
        return Err(Invalid::new(
            key,
            shown(),
            format!(
                "needs {DIAGONAL_LEN} variances (x, y, z, roll, pitch, yaw), or none for ROS-Thymio's covariances; got {}",
                values.len()
            ),
        ));
    }
    if let Some((i, v)) = values
        .iter()
        .enumerate()
        .find(|(_, v)| !v.is_finite() || **v < 0.0)
    {
        return Err(Invalid::new(
            key,
            shown(),
            format!("a variance is finite and ≥ 0 (element {i} is {v})"),
        ));
    }
    Ok(())
}

/// A checked diagonal as an array (`None`: unset, ROS-Thymio's covariances).
pub fn diagonal(values: &[f64]) -> Option<[f64; DIAGONAL_LEN]> {
    values.try_into().ok()
}

/// The row-major 6×6 covariance with `diagonal` on its diagonal and zeros elsewhere.
///
/// # Example
///
/// ```
/// use nrt_engine::thymio::odometry_params::covariance;
///
/// let c = covariance([1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
/// assert_eq!((c[0], c[7], c[35], c[1]), (1.0, 2.0, 6.0, 0.0));
/// ```
pub fn covariance(diagonal: [f64; DIAGONAL_LEN]) -> [f64; 36] {
    let mut c = [0.0; 36];
    for (i, v) in diagonal.into_iter().enumerate() {
        c[i * (DIAGONAL_LEN + 1)] = v;
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diagonals_are_six_finite_variances_or_none() {
        assert!(check_diagonal("d", &[0.0; 6]).is_ok());
        for bad in [
            vec![0.1; 5],
            vec![0.1; 7],
            vec![0.1, 0.1, -0.1, 0.1, 0.1, 0.1],
            vec![0.1, 0.1, 0.1, f64::NAN, 0.1, 0.1],
            vec![0.1, 0.1, 0.1, 0.1, f64::INFINITY, 0.1],
        ] {
            let e = check_diagonal("pose_covariance_diagonal", &bad).unwrap_err();
            assert_eq!(e.key, "pose_covariance_diagonal");
            assert!(
                e.rule.contains("6 variances") || e.rule.contains("finite and ≥ 0"),
                "{e:?}"
            );
        }
        assert_eq!(diagonal(&[]), None);
        assert_eq!(diagonal(&[1.0; 6]), Some([1.0; 6]));
    }
}
