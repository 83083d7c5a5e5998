//! The ground sensors' model: what `prox.ground.reflected` reads over the floor and over a drop.
//!
//! A ground sensor emits infrared and measures what comes back; `prox.ground.delta` is reflected minus
//! ambient. Over a white floor most of the light comes back (the simulator reads `delta` ≈ 980), over black
//! tape little (reflectance 0.05: `delta` ≈ 60). Past a table's edge the floor is far below the sensor and
//! nothing measurable comes back: `reflected` is the ambient light alone and `delta` is a few units around 0,
//! below any printed black (docs/safety.md "Cliff reflex" gives the real Thymios' figures).

use crate::rng::Rng;

/// `prox.ground.reflected` at reflectance 0 (the emitter's light scattered inside the sensor and by the floor
/// just under it): what keeps a black floor above the void.
const FLOOR_BASE: f64 = 30.0;
/// `prox.ground.reflected` gained from reflectance 0 to 1 (white paper).
const FLOOR_GAIN: f64 = 970.0;
/// Noise of a reading over the floor (standard deviation, raw units).
const FLOOR_NOISE: f64 = 5.0;
/// Noise of a reading over the void (only the ambient light's flicker).
const VOID_NOISE: f64 = 2.0;

/// `prox.ground.reflected` for a sensor over `ground` (`Some(reflectance)` on the floor, `None` over a drop)
/// with `ambient` light, as a 10-bit reading.
pub fn ground_reflected(ground: Option<f64>, ambient: i16, rng: &mut Rng) -> i16 {
    let r = match ground {
        Some(reflectance) => FLOOR_BASE + FLOOR_GAIN * reflectance + rng.noise(FLOOR_NOISE),
        None => f64::from(ambient) + rng.noise(VOID_NOISE),
    };
    r.clamp(0.0, 1023.0) as i16
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Smallest and largest `delta` over many readings.
    fn delta_range(ground: Option<f64>) -> (i16, i16) {
        let mut rng = Rng::new(7);
        let (mut lo, mut hi) = (i16::MAX, i16::MIN);
        for _ in 0..10_000 {
            let d = ground_reflected(ground, 20, &mut rng) - 20;
            (lo, hi) = (lo.min(d), hi.max(d));
        }
        (lo, hi)
    }

    #[test]
    fn white_black_and_void_are_told_apart() {
        let (white_lo, _) = delta_range(Some(1.0));
        let (black_lo, black_hi) = delta_range(Some(0.05));
        let (_, void_hi) = delta_range(None);
        assert!(white_lo > 900, "white {white_lo}");
        assert!(
            (30..100).contains(&black_lo) && black_hi < 100,
            "black {black_lo}..{black_hi}"
        );
        assert!(void_hi < 15, "void {void_hi}");
        // the cliff reflex's default threshold (30) lies between the void and black tape
        assert!(void_hi < 30 && black_lo > 30);
    }
}
