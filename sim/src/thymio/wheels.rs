//! Per-wheel differences of a simulated Thymio-II, the imperfections motor calibration exists
//! for: a speed gain (the wheel's true surface speed per motor unit relative to the nominal
//! [`UNIT_SPEED`](super::robot::UNIT_SPEED), as a wheel-radius, tyre or gear difference would
//! give — the robot's own speed reading, `motor.*.speed`, does not see it) and a deadband (a
//! target of at most that many units does not turn the wheel; the speed reading then shows 0).
//!
//! Each robot's wheels are drawn from its seed ([`WheelSpec::draw`]): deterministic per seed,
//! different between robots, or set explicitly for every robot (tests, reproductions).

use crate::rng::Rng;

/// How a world's robots' wheels differ from ideal ones (see the module documentation).
#[derive(Debug, Clone, PartialEq)]
pub struct WheelSpec {
    /// Each wheel's gain is drawn uniformly in `[1 − s, 1 + s]` (0: ideal wheels).
    pub gain_spread: f64,
    /// Each wheel's deadband is drawn uniformly in `[0, max]` motor units, rounded (0: none).
    pub deadband_max: u16,
    /// Explicit gains `[left, right]` for every robot (overrides `gain_spread`).
    pub gain: Option<[f64; 2]>,
    /// Explicit deadbands `[left, right]` (units) for every robot (overrides `deadband_max`).
    pub deadband: Option<[u16; 2]>,
}

impl Default for WheelSpec {
    /// Ideal wheels (see [`WheelSpec::IDEAL`]).
    fn default() -> Self {
        WheelSpec::IDEAL
    }
}

/// Why a wheel specification is refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum WheelSpecError {
    /// `gain_spread` outside `[0, MAX_SPREAD]`.
    #[error("wheel gain spread {0} outside [0, {MAX_SPREAD}]")]
    Spread(f64),
    /// An explicit gain outside `[MIN_GAIN, MAX_GAIN]`.
    #[error("wheel gain {0} outside [{MIN_GAIN}, {MAX_GAIN}]")]
    Gain(f64),
    /// A deadband above `MAX_DEADBAND`.
    #[error("wheel deadband {0} above {MAX_DEADBAND} units")]
    Deadband(u16),
}

/// Largest accepted `gain_spread`.
pub const MAX_SPREAD: f64 = 0.3;
/// Smallest accepted explicit gain.
pub const MIN_GAIN: f64 = 0.5;
/// Largest accepted explicit gain.
pub const MAX_GAIN: f64 = 1.5;
/// Largest accepted deadband (units).
pub const MAX_DEADBAND: u16 = 200;

impl WheelSpec {
    /// Ideal wheels: gain 1, no deadband (what the driver's simulation calibration assumes).
    pub const IDEAL: WheelSpec = WheelSpec {
        gain_spread: 0.0,
        deadband_max: 0,
        gain: None,
        deadband: None,
    };

    /// Checks the ranges.
    pub fn validate(&self) -> Result<(), WheelSpecError> {
        if !(0.0..=MAX_SPREAD).contains(&self.gain_spread) {
            return Err(WheelSpecError::Spread(self.gain_spread));
        }
        for g in self.gain.iter().flatten() {
            if !(MIN_GAIN..=MAX_GAIN).contains(g) {
                return Err(WheelSpecError::Gain(*g));
            }
        }
        let max = self.deadband.map_or(0, |d| d[0].max(d[1]));
        for d in [self.deadband_max, max] {
            if d > MAX_DEADBAND {
                return Err(WheelSpecError::Deadband(d));
            }
        }
        Ok(())
    }

    /// One robot's wheels, drawn from `seed` (a generator of its own: the robot's sensor noise
    /// is not shifted by it). Values out of range are clamped into it.
    pub fn draw(&self, seed: u64) -> Wheels {
        let mut rng = Rng::new(seed ^ 0x57EE_1D1F_F000_0000);
        let spread = self.gain_spread.clamp(0.0, MAX_SPREAD);
        let mut gain = [0.0; 2].map(|_| 1.0 + spread * (2.0 * rng.unit() - 1.0));
        let max = self.deadband_max.min(MAX_DEADBAND) as f64;
        let mut deadband = [0.0; 2].map(|_| (rng.unit() * (max + 1.0)).floor().min(max) as u16);
        if let Some(g) = self.gain {
            gain = g.map(|g| g.clamp(MIN_GAIN, MAX_GAIN));
        }
        if let Some(d) = self.deadband {
            deadband = d.map(|d| d.min(MAX_DEADBAND));
        }
        Wheels { gain, deadband }
    }
}

/// One robot's wheels.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Wheels {
    /// True surface speed per nominal one, `[left, right]`.
    pub gain: [f64; 2],
    /// Largest target that does not turn the wheel, `[left, right]` (units).
    pub deadband: [u16; 2],
}

impl Default for Wheels {
    fn default() -> Self {
        Wheels {
            gain: [1.0; 2],
            deadband: [0; 2],
        }
    }
}

impl Wheels {
    /// The speed (units) wheel `i` tends to for `target`: 0 within its deadband.
    pub fn effective_target(&self, i: usize, target: i16) -> f64 {
        let d = self.deadband.get(i).copied().unwrap_or(0);
        if target.unsigned_abs() <= d {
            0.0
        } else {
            target as f64
        }
    }

    /// Moves the wheel speeds `speeds` (units: what the speed reading sees) toward `targets`
    /// by the fraction `k` of the way (a first-order response; nothing within a deadband);
    /// returns the true surface speeds in nominal units (through the gains).
    pub fn follow(&self, speeds: &mut [f64; 2], targets: [i16; 2], k: f64) -> [f64; 2] {
        for (i, s) in speeds.iter_mut().enumerate() {
            *s += (self.effective_target(i, targets[i]) - *s) * k.min(1.0);
        }
        [speeds[0] * self.gain(0), speeds[1] * self.gain(1)]
    }

    /// The true surface speed factor of wheel `i`.
    pub fn gain(&self, i: usize) -> f64 {
        self.gain.get(i).copied().unwrap_or(1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ideal_by_default_and_drawn_per_seed() {
        assert_eq!(WheelSpec::default().draw(7), Wheels::default());
        let spec = WheelSpec {
            gain_spread: 0.05,
            deadband_max: 12,
            ..WheelSpec::IDEAL
        };
        spec.validate().unwrap();
        let (a, b) = (spec.draw(1), spec.draw(2));
        assert_eq!(a, spec.draw(1), "deterministic per seed");
        assert_ne!(a, b, "robots differ");
        for w in [a, b] {
            assert!(w.gain.iter().all(|g| (0.95..=1.05).contains(g)), "{w:?}");
            assert!(w.deadband.iter().all(|d| *d <= 12), "{w:?}");
        }
        // over many robots the draws cover the range
        let draws: Vec<Wheels> = (0..200).map(|s| spec.draw(s)).collect();
        let gains = draws.iter().flat_map(|w| w.gain);
        let (lo, hi) = gains.fold((2.0f64, 0.0f64), |(l, h), g| (l.min(g), h.max(g)));
        assert!(lo < 0.96 && hi > 1.04, "{lo} {hi}");
        assert!(draws.iter().any(|w| w.deadband.contains(&12)));
        assert!(draws.iter().any(|w| w.deadband.contains(&0)));
    }

    #[test]
    fn explicit_values_win_and_ranges_are_checked() {
        let spec = WheelSpec {
            gain_spread: 0.1,
            gain: Some([1.06, 0.96]),
            deadband: Some([8, 0]),
            ..WheelSpec::IDEAL
        };
        spec.validate().unwrap();
        let w = spec.draw(3);
        assert_eq!((w.gain, w.deadband), ([1.06, 0.96], [8, 0]));
        assert_eq!(w.effective_target(0, 8), 0.0);
        assert_eq!(w.effective_target(0, -8), 0.0);
        assert_eq!(w.effective_target(0, 9), 9.0);
        assert_eq!(w.effective_target(1, 1), 1.0);
        let bad = |s: WheelSpec| s.validate().unwrap_err();
        assert_eq!(
            bad(WheelSpec {
                gain_spread: -0.1,
                ..WheelSpec::IDEAL
            }),
            WheelSpecError::Spread(-0.1)
        );
        assert_eq!(
            bad(WheelSpec {
                gain: Some([1.0, 2.0]),
                ..WheelSpec::IDEAL
            }),
            WheelSpecError::Gain(2.0)
        );
        assert_eq!(
            bad(WheelSpec {
                deadband: Some([0, 500]),
                ..WheelSpec::IDEAL
            }),
            WheelSpecError::Deadband(500)
        );
    }
}
