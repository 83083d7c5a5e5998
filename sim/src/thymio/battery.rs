//! The simulated Thymio's battery: its `_vbat` reading (the firmware's ADC scale, 655 ≈ 3.3 V) starts charged
//! ([`CHARGED`] ≈ 4.0 V) and discharges slowly while the motors run ([`DRAIN_PER_S`] at full speed on both wheels,
//! in proportion to the wheels' speeds). The firmware writes `_vbat` once a second; a test sets the level by
//! writing `_vbat` itself (asebaros' `set_variable`, the Aseba SET_VARIABLES): a value the simulator did not write
//! is taken as the new level (0 excepted: a VM reset clears the memory), and the discharge goes on from it.

/// A charged battery's reading (≈ 4.0 V).
pub const CHARGED: f64 = 794.0;
/// The discharge with both wheels at full speed (motor units 500 each), in ADC units per second: about 0.1 V an
/// hour (a Thymio drives for a few hours on a charge). The robot at rest keeps its level.
pub const DRAIN_PER_S: f64 = 0.006;
/// The full speed of a wheel (motor units) that [`DRAIN_PER_S`] refers to: the robot profile's nominal top speed.
const FULL_SPEED: f64 = msgs::thymio::NOMINAL_MAX_SPEED as f64;
/// The reading's floor (0 V) and ceiling (the ADC's 10 bits).
const RANGE: (f64, f64) = (0.0, 1023.0);

/// The battery's level and what the firmware last wrote.
#[derive(Debug, Clone, PartialEq)]
pub struct Battery {
    /// Level (ADC units, fractional while it drains).
    pub level: f64,
    /// The value last written into `_vbat` (`None`: not yet).
    written: Option<i16>,
}

impl Default for Battery {
    fn default() -> Self {
        Battery {
            level: CHARGED,
            written: None,
        }
    }
}

impl Battery {
    /// Drains the battery for `dt` seconds with the wheels at `wheels` (motor units).
    pub fn drain(&mut self, wheels: [f64; 2], dt: f64) {
        let load = (wheels[0].abs() + wheels[1].abs()) / (2.0 * FULL_SPEED);
        self.level = (self.level - DRAIN_PER_S * load * dt).clamp(RANGE.0, RANGE.1);
    }

    /// The reading to write into `_vbat` now, given what `_vbat` holds (`current`: a value the simulator did not
    /// write is the new level, but for 0: a VM reset clears it) and the measurement noise (ADC units).
    pub fn sample(&mut self, current: i16, noise: f64) -> i16 {
        // 0: the VM's memory was cleared (a reset), not a level
        if current != 0 && self.written.is_some_and(|w| w != current) {
            self.level = f64::from(current).clamp(RANGE.0, RANGE.1);
        }
        let reading = (self.level + noise).round().clamp(RANGE.0, RANGE.1) as i16;
        self.written = Some(reading);
        reading
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drains_while_the_wheels_turn_only() {
        let mut b = Battery::default();
        b.drain([0.0, 0.0], 3600.0);
        assert_eq!(b.level, CHARGED);
        b.drain([500.0, -500.0], 3600.0);
        let drop_v = (CHARGED - b.level) * 3.3 / 655.0;
        assert!((0.05..0.2).contains(&drop_v), "{drop_v} V in an hour");
        let before = b.level;
        b.drain([250.0, 250.0], 10.0);
        assert!((before - b.level - DRAIN_PER_S * 5.0).abs() < 1e-9);
    }

    #[test]
    fn a_value_written_by_someone_else_is_the_new_level() {
        let mut b = Battery::default();
        let first = b.sample(0, 0.0);
        assert_eq!(first, 794);
        // what the firmware wrote stays its own
        assert_eq!(b.sample(first, 0.4), 794);
        // a test writes 700: the next readings follow it, and drain from it
        assert_eq!(b.sample(700, 0.0), 700);
        b.drain([500.0, 500.0], 1000.0);
        assert_eq!(b.sample(700, 0.0), 694);
        assert_eq!(b.sample(0, 0.0), 694, "a reset's 0 is no level");
        assert_eq!(b.sample(-5, 0.0), 0, "clamped");
    }
}
