//! Sensor conversions of the Thymio driver, REP-117 compliant (ros-aseba-interface.md §3.3,
//! §3.6): `+inf` when nothing is seen, `-inf` when the reading is saturated (too close).

use super::calibration::ProximityCalibration;

// The sensors' range limits [m], field of view [rad] and the accelerometer's scale (units per
// g, standard gravity) are the robot profile's.
pub use msgs::thymio::{
    ACC_PER_G, G, GROUND_RANGE_MAX, GROUND_RANGE_MIN, PROXIMITY_RANGE_MAX, PROXIMITY_RANGE_MIN,
    SENSOR_FOV,
};
use msgs::thymio::{BUTTON_COUNT, PROXIMITY_COUNT};
/// Distance from the laser frame to the front sensors' arc [m].
pub const LASER_SHIFT: f32 = 0.08;
/// Angles of the 5 front sensors in the laser scan (right to left) [rad].
pub const LASER_ANGLE_MIN: f32 = -0.64;
/// Angle step of the laser scan [rad].
pub const LASER_ANGLE_INCREMENT: f32 = 0.32;

/// Distance [m] seen by a proximity sensor with reading `r` (power model), REP 117:
/// `+inf` if nothing reflects (`r == 0`), `-inf` if saturated (`r ≥ r_max`), else clamped
/// to `[0.0215, 0.14]`.
pub fn proximity_range(r: i16, cal: &ProximityCalibration) -> f32 {
    let [r_max, x0, c] = cal.parameters;
    let r = f64::from(r);
    if r <= 0.0 {
        return f32::INFINITY;
    }
    if r >= r_max {
        return f32::NEG_INFINITY;
    }
    let d = x0 + ((x0 * x0 - c) * (1.0 - r_max / r)).sqrt();
    (d as f32).clamp(PROXIMITY_RANGE_MIN, PROXIMITY_RANGE_MAX)
}

/// The 5 ranges of the laser scan (right to left, i.e. sensors 4, 3, 2, 1, 0) from the 7
/// proximity ranges. Finite ranges are shifted to the laser frame; `±inf` stay as they are,
/// so empty sectors are not obstacles (defect §6.2 #6).
pub fn laser_ranges(ranges: &[f32; PROXIMITY_COUNT]) -> [f32; 5] {
    let mut out = [0.0; 5];
    for (k, o) in out.iter_mut().enumerate() {
        let r = ranges[4 - k];
        *o = if r.is_finite() { r + LASER_SHIFT } else { r };
    }
    out
}

/// Range of a ground sensor: ground seen (`delta ≥ threshold`) → `-inf` (closer than the
/// sensor can measure), no ground (dark or a cliff) → `+inf`.
pub fn ground_range(delta: i16, threshold: i16) -> f32 {
    if delta >= threshold {
        f32::NEG_INFINITY
    } else {
        f32::INFINITY
    }
}

/// Linear acceleration [m/s²] in `base_link` (x forward, y left, z up) from `acc`
/// ([0] right→left, [1] front→back, [2] top→bottom; 1 g ≈ 23).
pub fn imu_acceleration(acc: [i16; 3]) -> [f64; 3] {
    let s = G / ACC_PER_G;
    [
        f64::from(acc[1]) * s,
        -f64::from(acc[0]) * s,
        f64::from(acc[2]) * s,
    ]
}

/// Temperature [°C] from tenths of a degree.
pub fn temperature_celsius(raw: i16) -> f64 {
    f64::from(raw) / 10.0
}

/// Microphone intensity in [0, 1].
pub fn sound_level(intensity: i16) -> f32 {
    (f32::from(intensity) / 255.0).clamp(0.0, 1.0)
}

/// Joy buttons `[backward, left, center, forward, right]` as 0/1.
pub fn joy_buttons(values: [i16; BUTTON_COUNT]) -> [i32; BUTTON_COUNT] {
    values.map(|v| i32::from(v != 0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::thymio::calibration::Calibration;

    fn cal() -> ProximityCalibration {
        Calibration::real().proximity[0]
    }

    #[test]
    fn proximity_model_matches_reference_points() {
        // ros-aseba-interface.md §3.6: r=2000 → 0.096 m; r=4000 → 0.031 m
        assert!((proximity_range(2000, &cal()) - 0.096).abs() < 0.001);
        assert!((proximity_range(4000, &cal()) - 0.031).abs() < 0.001);
        assert_eq!(proximity_range(0, &cal()), f32::INFINITY);
        assert_eq!(proximity_range(4505, &cal()), f32::NEG_INFINITY);
        assert_eq!(proximity_range(5000, &cal()), f32::NEG_INFINITY);
        assert_eq!(proximity_range(1, &cal()), PROXIMITY_RANGE_MAX);
        assert_eq!(proximity_range(-3, &cal()), f32::INFINITY);
    }

    #[test]
    fn proximity_range_is_monotonic_and_bounded() {
        let mut last = f32::INFINITY;
        for r in (1..4505).step_by(7) {
            let d = proximity_range(r, &cal());
            assert!(
                (PROXIMITY_RANGE_MIN..=PROXIMITY_RANGE_MAX).contains(&d),
                "r={r} d={d}"
            );
            assert!(d <= last);
            last = d;
        }
    }

    #[test]
    fn laser_keeps_infinities_and_orders_right_to_left() {
        let ranges = [0.05, f32::INFINITY, f32::NEG_INFINITY, 0.1, 0.02, 0.0, 0.0];
        let l = laser_ranges(&ranges);
        assert_eq!(l[0], 0.02 + LASER_SHIFT);
        assert_eq!(l[1], 0.1 + LASER_SHIFT);
        assert_eq!(l[2], f32::NEG_INFINITY);
        assert_eq!(l[3], f32::INFINITY);
        assert_eq!(l[4], 0.05 + LASER_SHIFT);
    }

    #[test]
    fn ground_imu_and_others() {
        assert_eq!(ground_range(500, 200), f32::NEG_INFINITY);
        assert_eq!(ground_range(100, 200), f32::INFINITY);
        let a = imu_acceleration([0, 0, 23]);
        assert_eq!(a, [0.0, -0.0, G]);
        let a = imu_acceleration([23, -23, 0]);
        assert!((a[0] + G).abs() < 1e-12 && (a[1] + G).abs() < 1e-12);
        assert_eq!(temperature_celsius(253), 25.3);
        assert_eq!(sound_level(255), 1.0);
        assert_eq!(joy_buttons([0, 1, 0, 2, 0]), [0, 1, 0, 1, 0]);
    }
}
