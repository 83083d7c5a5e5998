//! The motor calibration's private port between its NRT side (the `calibrate_motors` action
//! server, which plans the run, fits and writes the result) and its RT controller (which drives
//! the wheels and times the line crossings): fixed-size `Copy` records on two SPSC rings, so that
//! the RT half never allocates or blocks.
//!
//! One [`WheelRun`] measures one wheel: optionally its deadband (a ramp of the target from 0
//! until the robot's own speed reading shows motion), then its speed at each target of the
//! sweep by pivoting on the other, stopped wheel over a line on the floor and timing the ground
//! sensors' line crossings (ROS-Thymio's calibration tool: one revolution of the robot about the
//! stopped wheel is `2π·axis_length` of the moving wheel's travel). The RT side reports each
//! measurement as a [`CalReport`].

use crate::cal_command::{CalCommand, Wheel};
use rtrb::{Consumer, Producer, RingBuffer};

/// Why a wheel run failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CalFailure {
    /// No period measured within the timeout at this target.
    Timeout {
        /// Target (units).
        target: i16,
    },
    /// The ground sensors never saw a bright floor and a dark line (no contrast).
    NoLine,
    /// The wheel did not move up to the highest deadband target.
    NeverMoved {
        /// Highest target tried.
        max: i16,
    },
    /// Another owner took the wheels.
    OwnerLost,
    /// The robot's link went down.
    LinkLost,
    /// A run with nothing to do, or a wheel run while another runs.
    BadRun,
}

impl CalFailure {
    /// What happened, for the action's result.
    pub fn message(self) -> &'static str {
        match self {
            CalFailure::Timeout { .. } => {
                "no revolution measured within the timeout: is the robot over the calibration line (see README)?"
            }
            CalFailure::NoLine => {
                "the ground sensors saw no line: place the robot over a dark line on a bright floor"
            }
            CalFailure::NeverMoved { .. } => {
                "the wheel did not move up to the highest deadband target"
            }
            CalFailure::OwnerLost => "another owner took the wheels (switch_controller)",
            CalFailure::LinkLost => "the robot's link went down",
            CalFailure::BadRun => "invalid wheel run",
        }
    }
}

/// RT → NRT.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum CalReport {
    /// The run started (the controller owns the wheels).
    Started {
        /// Wheel.
        wheel: Wheel,
    },
    /// The deadband ramp is at `target` (sent at each step).
    Ramp {
        /// Wheel.
        wheel: Wheel,
        /// Target (units).
        target: i16,
        /// Measured wheel surface speed (m/s, the robot's own reading).
        measured: f64,
    },
    /// The largest target that did not move the wheel.
    Deadband {
        /// Wheel.
        wheel: Wheel,
        /// Units.
        units: i16,
    },
    /// One revolution period measured at `target`.
    Sample {
        /// Wheel.
        wheel: Wheel,
        /// Target (units).
        target: i16,
        /// Revolution period (ns).
        period_ns: u64,
        /// Wheel surface speed (m/s): `2π·axis_length / period`.
        speed: f64,
    },
    /// The wheel's run is over (the robot is back at its orientation of the start of the
    /// sweep, stopped).
    Done {
        /// Wheel.
        wheel: Wheel,
    },
    /// The run failed; the robot is stopped.
    Failed {
        /// Wheel.
        wheel: Wheel,
        /// Why.
        reason: CalFailure,
    },
    /// The controller stopped after an abort.
    Aborted,
}

/// Records in flight each way.
pub const CAL_RING: usize = 256;

/// RT half: commands in, reports out.
#[derive(Debug)]
pub struct RtCalibrationPort {
    commands: Consumer<CalCommand>,
    reports: Producer<CalReport>,
    dropped: u64,
}

impl RtCalibrationPort {
    /// The next command, if any.
    pub fn rt_next_command(&mut self) -> Option<CalCommand> {
        let command = self.commands.pop().ok()?;
        crate::record::rt_record_controller(|robot, controller| crate::RecInput::CalibrationRun {
            robot,
            controller,
            command,
        });
        Some(command)
    }

    /// Sends `report`; false (counted) if the NRT side is behind.
    pub fn rt_report(&mut self, report: CalReport) -> bool {
        let ok = self.reports.push(report).is_ok();
        if !ok {
            self.dropped += 1;
        }
        ok
    }

    /// Reports lost because the ring was full.
    pub fn rt_dropped(&self) -> u64 {
        self.dropped
    }
}

/// NRT half: commands out, reports in.
#[derive(Debug)]
pub struct NrtCalibrationPort {
    commands: Producer<CalCommand>,
    reports: Consumer<CalReport>,
}

/// The command ring is full (the RT side stopped reading).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the calibration controller does not take commands (its ring is full)")]
pub struct CalPortFull;

impl NrtCalibrationPort {
    /// Sends `cmd` to the RT controller.
    pub fn nrt_send(&mut self, cmd: CalCommand) -> Result<(), CalPortFull> {
        self.commands.push(cmd).map_err(|_| CalPortFull)
    }

    /// The next report, if any.
    pub fn nrt_next_report(&mut self) -> Option<CalReport> {
        self.reports.pop().ok()
    }
}

/// A calibration port (allocates its two rings once).
///
/// # Example
///
/// ```
/// use handoff::{calibration_port, CalCommand, CalReport, Wheel};
///
/// let (mut rt, mut nrt) = calibration_port();
/// nrt.nrt_send(CalCommand::Abort).unwrap();
/// assert_eq!(rt.rt_next_command(), Some(CalCommand::Abort));
/// assert!(rt.rt_report(CalReport::Done { wheel: Wheel::Left }));
/// assert_eq!(nrt.nrt_next_report(), Some(CalReport::Done { wheel: Wheel::Left }));
/// ```
pub fn calibration_port() -> (RtCalibrationPort, NrtCalibrationPort) {
    let (mut cp, mut cc) = RingBuffer::new(CAL_RING);
    let (mut rp, mut rc) = RingBuffer::new(CAL_RING);
    super::prefault_ring(&mut cp, &mut cc, CalCommand::Abort);
    super::prefault_ring(&mut rp, &mut rc, CalReport::Aborted);
    (
        RtCalibrationPort {
            commands: cc,
            reports: rp,
            dropped: 0,
        },
        NrtCalibrationPort {
            commands: cp,
            reports: rc,
        },
    )
}
