//! What NRT asks the motor calibration's RT controller to do ([`CalCommand`]: one [`WheelRun`] of a [`Wheel`], or
//! abort): plain `Copy` data shared by the calibration port ([`crate::calibration_port`]) and the recorder's payload
//! ([`crate::RecInput`]); a leaf module.

/// Most targets of one sweep.
pub const MAX_SWEEP: usize = 16;

/// A wheel: 0 left, 1 right.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub enum Wheel {
    /// Left wheel.
    #[default]
    Left,
    /// Right wheel.
    Right,
}

impl Wheel {
    /// Index in `[left, right]` pairs.
    pub const fn index(self) -> usize {
        match self {
            Wheel::Left => 0,
            Wheel::Right => 1,
        }
    }

    /// `left` / `right` (ROS-Thymio's motor names).
    pub const fn name(self) -> &'static str {
        match self {
            Wheel::Left => "left",
            Wheel::Right => "right",
        }
    }

    /// By name.
    pub fn from_name(name: &str) -> Option<Wheel> {
        match name {
            "left" => Some(Wheel::Left),
            "right" => Some(Wheel::Right),
            _ => None,
        }
    }
}

/// What the RT controller is asked to do for one wheel.
#[derive(Debug, Clone, Copy, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct WheelRun {
    /// The wheel driven (the other one stays stopped: the pivot).
    pub wheel: Wheel,
    /// Measure the deadband first (targets ramped up from 1).
    pub deadband: bool,
    /// Highest target of the deadband ramp (units): no motion up to it is a failure.
    pub deadband_max: i16,
    /// Targets of the sweep (units, positive), the first `speeds_len`.
    pub speeds: [i16; MAX_SWEEP],
    /// Used entries of `speeds`.
    pub speeds_len: u8,
    /// Revolution periods to measure per target.
    pub samples: u16,
    /// Longest wait (ns) for one period measurement before the run fails.
    pub timeout_ns: u64,
}

impl WheelRun {
    /// The targets of the sweep.
    pub fn speeds(&self) -> &[i16] {
        &self.speeds[..(self.speeds_len as usize).min(MAX_SWEEP)]
    }
}

/// NRT → RT.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum CalCommand {
    /// Run one wheel (applies once the controller owns the robot).
    Run(WheelRun),
    /// Stop at once and forget the run (cancel).
    Abort,
}
