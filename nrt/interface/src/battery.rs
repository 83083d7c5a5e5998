//! A robot's `battery_state` (sensor_msgs/BatteryState, as the iRobot Create 3 publishes it), described once for
//! every front end: the engine reads the Thymio's `_vbat` every [`nrt_engine::engine::BATTERY_PERIOD`]
//! (`EngineEvent::Battery`) and each front end publishes [`battery_state`]'s content.
//!
//! - **voltage**: `_vbat` is the firmware's battery ADC reading, 655 ≈ 3.3 V (aseba.md, the firmware saves its
//!   settings only above 655): volts = `_vbat` × 3.3 / 655 ([`volts`]).
//! - **percentage** (0…1): the Thymio-II has one Li-Po cell (3.7 V nominal, 4.2 V full). The charge left is read
//!   off a single cell's discharge curve, piecewise linear between the breakpoints of [`DISCHARGE_CURVE`]
//!   ([`percentage`]), clamped to 0 and 1 outside it.
//! - **power_supply_status**: UNKNOWN. The firmware's variables (aseba.md, firmware 14's table) carry no charging
//!   flag — `_vbat` and `_imot` only — so whether the USB cable charges the robot cannot be told from the host.
//! - **power_supply_technology** LIPO, **present** true; temperature, current, charge and the capacities are not
//!   measured (NaN, the message's convention), no cells are listed.

/// A battery reading's content, as both front ends publish it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BatteryState {
    /// Volts.
    pub voltage: f32,
    /// Charge left, 0 (empty) … 1 (full), from [`DISCHARGE_CURVE`].
    pub percentage: f32,
    /// sensor_msgs/BatteryState's `power_supply_status` ([`STATUS_UNKNOWN`]: the firmware has no charging flag).
    pub power_supply_status: u8,
    /// `power_supply_technology` ([`TECHNOLOGY_LIPO`]).
    pub power_supply_technology: u8,
    /// `present`.
    pub present: bool,
}

/// sensor_msgs/BatteryState's POWER_SUPPLY_STATUS_UNKNOWN.
pub const STATUS_UNKNOWN: u8 = 0;
/// sensor_msgs/BatteryState's POWER_SUPPLY_TECHNOLOGY_LIPO.
pub const TECHNOLOGY_LIPO: u8 = 3;

/// The firmware's ADC scale: this `_vbat` reading is 3.3 V.
const ADC_AT_3V3: f64 = 655.0;

/// A single Li-Po cell's charge against its resting voltage, `(volts, fraction)`, increasing. The usual published
/// table for one Li-Po cell (4.20 V full, 3.84 V half, 3.69 V 10 %, 3.61 V 5 %), with its empty end at 3.30 V, where
/// the Thymio's firmware treats the battery as empty (it no longer saves settings below it). Under load (the
/// motors) the voltage sags below its resting value: the percentage reads lower while driving.
pub const DISCHARGE_CURVE: [(f64, f64); 12] = [
    (3.30, 0.00),
    (3.61, 0.05),
    (3.69, 0.10),
    (3.73, 0.20),
    (3.77, 0.30),
    (3.80, 0.40),
    (3.84, 0.50),
    (3.87, 0.60),
    (3.95, 0.70),
    (4.02, 0.80),
    (4.11, 0.90),
    (4.20, 1.00),
];

/// Volts of a `_vbat` reading.
pub fn volts(vbat: i16) -> f64 {
    f64::from(vbat) * 3.3 / ADC_AT_3V3
}

/// The charge left (0…1) at `volts`, linear between the breakpoints of [`DISCHARGE_CURVE`]; 0 below it, 1 above.
pub fn percentage(volts: f64) -> f64 {
    let (first, last) = (
        DISCHARGE_CURVE[0],
        DISCHARGE_CURVE[DISCHARGE_CURVE.len() - 1],
    );
    if volts.is_nan() || volts <= first.0 {
        return 0.0;
    }
    if volts >= last.0 {
        return 1.0;
    }
    for w in DISCHARGE_CURVE.windows(2) {
        let ((v0, p0), (v1, p1)) = (w[0], w[1]);
        if volts <= v1 {
            return p0 + (volts - v0) / (v1 - v0) * (p1 - p0);
        }
    }
    1.0
}

/// The `battery_state` of a `_vbat` reading.
pub fn battery_state(vbat: i16) -> BatteryState {
    let v = volts(vbat);
    BatteryState {
        voltage: v as f32,
        percentage: percentage(v) as f32,
        power_supply_status: STATUS_UNKNOWN,
        power_supply_technology: TECHNOLOGY_LIPO,
        present: true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_curve_is_linear_between_its_breakpoints_and_clamped_outside() {
        for (v, p) in DISCHARGE_CURVE {
            assert!((percentage(v) - p).abs() < 1e-9, "{v} V");
        }
        // halfway between 3.95 V (70 %) and 4.02 V (80 %)
        assert!((percentage(3.985) - 0.75).abs() < 1e-9);
        assert_eq!(percentage(3.0), 0.0);
        assert_eq!(percentage(4.35), 1.0);
        assert_eq!(percentage(f64::NAN), 0.0);
        let mut last = -1.0;
        for mv in 3000..4400 {
            let p = percentage(f64::from(mv) / 1000.0);
            assert!(p >= last && (0.0..=1.0).contains(&p), "{mv} mV: {p}");
            last = p;
        }
    }

    #[test]
    fn a_vbat_reading_on_the_firmware_scale() {
        // 655 is the firmware's 3.3 V: empty
        let empty = battery_state(655);
        assert!((empty.voltage - 3.3).abs() < 1e-6 && empty.percentage == 0.0);
        // the simulator's charged battery: 794 ≈ 4.0 V, ≈ 77 %
        let s = battery_state(794);
        assert!((s.voltage - 4.0003).abs() < 1e-3, "{}", s.voltage);
        assert!((s.percentage - 0.7719).abs() < 1e-3, "{}", s.percentage);
        assert_eq!(
            (s.power_supply_status, s.power_supply_technology, s.present),
            (STATUS_UNKNOWN, TECHNOLOGY_LIPO, true)
        );
        assert_eq!(battery_state(i16::MIN).percentage, 0.0);
        assert_eq!(battery_state(i16::MAX).percentage, 1.0);
    }
}
