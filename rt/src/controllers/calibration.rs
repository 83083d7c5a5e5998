//! The `calibrate_motors` controller: the RT half of the motor calibration action. It owns the
//! wheels only while the action runs (the action server requests it as the robot's owner, then
//! gives the wheels back), takes [`WheelRun`]s through its private port and reports what it
//! measures as [`CalReport`]s (see `handoff::calibration`).
//!
//! A wheel run, as ROS-Thymio's calibration tool does it, with the other wheel stopped (the
//! robot pivots about it, over a straight dark line on a bright floor):
//! 1. **deadband** (optional): the target rises 1 unit every [`RAMP_STEP_NS`]; the wheel moves
//!    when the robot's own speed reading, averaged over the second half of a step (after the
//!    wheel's response settled), reaches half the target and at least [`MOVE_UNITS`] (above the
//!    reading's noise); the deadband is the target before (a driver script that zeroes small
//!    readings, as `thymio_ros.aesl` does up to `MOTOR_DEADBAND`, hides a smaller deadband);
//! 2. **sweep**: at each target, the ground sensors' line entries are timed
//!    ([`LineTimer`]); an entry and the next-but-one of the same sensor are one revolution
//!    apart, `2π·axis_length` of the driven wheel's travel, which gives its true speed whatever
//!    its speed reading says. Entries closer than [`SETTLE_NS`] after a target change are not
//!    used;
//! 3. **return**: after the last measurement the robot turns on until it faces where it faced
//!    at the start of the sweep (from the first entry's place in the revolution and the last
//!    period), so that the next wheel pivots near the line too, then stops.
//!
//! Everything here runs in the RT cycle: no allocation, no lock, no panic.

use super::calibration_timing::LineTimer;
use super::{Controller, RobotView};
use crate::mapping::si_to_units;
use handoff::{
    CalCommand, CalFailure, CalReport, ControllerInit, DeclareError, RtCalibrationPort, Wheel,
    WheelCommand, WheelRun,
};
use msgs::thymio::GROUND_COUNT;

/// The controller's registry name (its owner name, `~/controllers/calibrate_motors/`).
pub const NAME: &str = "calibrate_motors";
/// Duration of one deadband ramp step (ns).
pub const RAMP_STEP_NS: u64 = 300_000_000;
/// Speed reading (units) above which a wheel counts as moving, whatever the target.
pub const MOVE_UNITS: f64 = 4.0;
/// Time after a target change before entries are used (ns): the wheel's response (τ ≈ 50 ms
/// on a Thymio) has settled.
pub const SETTLE_NS: u64 = 500_000_000;

#[derive(Debug, Clone, Copy, PartialEq)]
enum Phase {
    Idle,
    /// Deadband ramp at `target` since `since`; speed readings of the judged half-step.
    Ramp {
        target: i16,
        since: u64,
        sum: f64,
        n: u32,
        last_odom: Option<u64>,
    },
    /// Sweep at `speeds[index]` since `since`.
    Sweep {
        index: usize,
        since: u64,
        samples: u16,
        period_sum: u64,
        progress_ns: u64,
    },
    /// Turning back to the sweep's start orientation (since `since`): waiting for the first
    /// entry's sensor to enter the line at the same place, then on until `stop_at`.
    Return {
        period: u64,
        since: u64,
        stop_at: Option<u64>,
    },
}

/// The `calibrate_motors` controller (one per robot slot).
#[derive(Debug)]
pub struct CalibrateMotors {
    port: RtCalibrationPort,
    run: Option<WheelRun>,
    pending: Option<WheelRun>,
    phase: Phase,
    /// One per ground sensor.
    timers: [LineTimer; GROUND_COUNT],
    last_ground: Option<u64>,
    /// Start of the sweep, the first entry (sensor, time) and its fraction of a revolution.
    sweep_start: u64,
    first: Option<(usize, u64)>,
    first_frac: Option<f64>,
}

impl CalibrateMotors {
    /// A controller talking through `port`.
    pub fn new(port: RtCalibrationPort) -> Self {
        CalibrateMotors {
            port,
            run: None,
            pending: None,
            phase: Phase::Idle,
            timers: [LineTimer::default(); GROUND_COUNT],
            last_ground: None,
            sweep_start: 0,
            first: None,
            first_frac: None,
        }
    }

    /// The registry factory: the NRT half of the port goes to the front end as the private
    /// port (a [`handoff::NrtCalibrationPort`]).
    pub fn factory(init: &mut ControllerInit) -> Result<Box<dyn Controller>, DeclareError> {
        let (rt, nrt) = handoff::calibration_port();
        init.private_port(Box::new(nrt));
        Ok(Box::new(CalibrateMotors::new(rt)))
    }

    /// Whether a wheel run is in progress.
    pub fn running(&self) -> bool {
        self.run.is_some()
    }

    fn wheel(&self) -> Wheel {
        self.run.map_or(Wheel::Left, |r| r.wheel)
    }

    fn fail(&mut self, reason: CalFailure) {
        let wheel = self.wheel();
        self.port.rt_report(CalReport::Failed { wheel, reason });
        self.idle();
    }

    fn idle(&mut self) {
        self.run = None;
        self.phase = Phase::Idle;
    }

    fn begin(&mut self, run: WheelRun, now: u64) {
        if run.speeds().is_empty() || run.samples == 0 || run.speeds().iter().any(|s| *s <= 0) {
            self.run = Some(run);
            self.fail(CalFailure::BadRun);
            return;
        }
        self.run = Some(run);
        self.port.rt_report(CalReport::Started { wheel: run.wheel });
        if run.deadband {
            self.phase = Phase::Ramp {
                target: 1,
                since: now,
                sum: 0.0,
                n: 0,
                last_odom: None,
            };
        } else {
            self.start_sweep(now);
        }
    }

    fn start_sweep(&mut self, now: u64) {
        for t in &mut self.timers {
            t.reset();
        }
        self.sweep_start = now;
        self.first = None;
        self.first_frac = None;
        self.phase = Phase::Sweep {
            index: 0,
            since: now,
            samples: 0,
            period_sum: 0,
            progress_ns: now,
        };
    }

    /// The target of the driven wheel now.
    fn target(&self) -> i16 {
        let Some(run) = self.run else { return 0 };
        match self.phase {
            Phase::Idle => 0,
            Phase::Ramp { target, .. } => target,
            Phase::Sweep { index, .. } => run.speeds().get(index).copied().unwrap_or(0),
            Phase::Return { .. } => run.speeds().last().copied().unwrap_or(0),
        }
    }

    fn ramp(&mut self, view: &RobotView, run: WheelRun) {
        let Phase::Ramp {
            target,
            since,
            mut sum,
            mut n,
            mut last_odom,
        } = self.phase
        else {
            return;
        };
        let w = run.wheel.index();
        let now = view.now_ns;
        if view.odom_t_ns != last_odom {
            last_odom = view.odom_t_ns;
            if now.saturating_sub(since) >= RAMP_STEP_NS / 2 {
                let q = if w == 0 {
                    view.calibration.left
                } else {
                    view.calibration.right
                };
                let v = view.wheel_vel[w] * view.calibration.wheel_radius;
                let units = si_to_units(v, q).abs();
                if units.is_finite() {
                    sum += units;
                    n += 1;
                }
            }
        }
        self.phase = Phase::Ramp {
            target,
            since,
            sum,
            n,
            last_odom,
        };
        if now.saturating_sub(since) < RAMP_STEP_NS {
            return;
        }
        let mean = if n > 0 { sum / n as f64 } else { 0.0 };
        let measured = view.wheel_vel[w].abs() * view.calibration.wheel_radius;
        self.port.rt_report(CalReport::Ramp {
            wheel: run.wheel,
            target,
            measured,
        });
        if n > 0 && mean >= (0.5 * target as f64).max(MOVE_UNITS) {
            self.port.rt_report(CalReport::Deadband {
                wheel: run.wheel,
                units: target - 1,
            });
            self.start_sweep(now);
        } else if target >= run.deadband_max {
            self.fail(CalFailure::NeverMoved { max: target });
        } else {
            self.phase = Phase::Ramp {
                target: target + 1,
                since: now,
                sum: 0.0,
                n: 0,
                last_odom,
            };
        }
    }

    /// New ground samples → entries; returns the entries of this cycle `(sensor, time)`.
    fn entries(&mut self, view: &RobotView) -> [Option<u64>; GROUND_COUNT] {
        let mut out = [None; GROUND_COUNT];
        if view.ground_t_ns.is_some() && view.ground_t_ns != self.last_ground {
            self.last_ground = view.ground_t_ns;
            let t = view.ground_t_ns.unwrap_or(0);
            for (s, timer) in self.timers.iter_mut().enumerate() {
                out[s] = timer.sample(view.ground[s], t);
            }
        }
        out
    }

    fn sweep(&mut self, view: &RobotView, run: WheelRun) {
        let now = view.now_ns;
        let entries = self.entries(view);
        for (s, entry) in entries.into_iter().enumerate() {
            let Some(t) = entry else { continue };
            if self.first.is_none() {
                self.first = Some((s, t));
            }
            self.on_entry(view, run, s, t);
            if self.run.is_none() {
                return;
            }
        }
        let Some(run) = self.run else { return };
        match self.phase {
            Phase::Sweep { progress_ns, .. }
                if now.saturating_sub(progress_ns) > run.timeout_ns =>
            {
                let reason = if self.timers.iter().any(|t| t.has_contrast()) {
                    CalFailure::Timeout {
                        target: self.target(),
                    }
                } else {
                    CalFailure::NoLine
                };
                self.fail(reason);
            }
            Phase::Return {
                stop_at: Some(at), ..
            } if now >= at => {
                self.port.rt_report(CalReport::Done { wheel: run.wheel });
                self.idle();
            }
            Phase::Return {
                period,
                since,
                stop_at: None,
            } if now.saturating_sub(since) > run.timeout_ns.max(period.saturating_mul(2)) => {
                self.fail(CalFailure::Timeout {
                    target: self.target(),
                });
            }
            _ => {}
        }
    }

    fn on_entry(&mut self, view: &RobotView, run: WheelRun, sensor: usize, t: u64) {
        let timer = self.timers[sensor];
        match self.phase {
            Phase::Sweep {
                index,
                since,
                samples,
                period_sum,
                progress_ns,
            } => {
                // one revolution: this entry and the next-but-one before it, both settled
                let period = match timer.revolution_start() {
                    Some(a) if a >= since + SETTLE_NS && t > a => t - a,
                    _ => return,
                };
                let speed =
                    std::f64::consts::TAU * view.calibration.axis_length / (period as f64 * 1e-9);
                let target = run.speeds().get(index).copied().unwrap_or(0);
                self.port.rt_report(CalReport::Sample {
                    wheel: run.wheel,
                    target,
                    period_ns: period,
                    speed,
                });
                if self.first_frac.is_none() {
                    if let Some((_, t0)) = self.first {
                        let frac = (t0.saturating_sub(self.sweep_start)) as f64 / period as f64;
                        self.first_frac = Some(frac.fract());
                    }
                }
                let (samples, period_sum) = (samples + 1, period_sum + period);
                self.phase = if samples < run.samples {
                    Phase::Sweep {
                        index,
                        since,
                        samples,
                        period_sum,
                        progress_ns: progress_ns.max(view.now_ns),
                    }
                } else if index + 1 < run.speeds().len() {
                    Phase::Sweep {
                        index: index + 1,
                        since: view.now_ns,
                        samples: 0,
                        period_sum: 0,
                        progress_ns: view.now_ns,
                    }
                } else {
                    Phase::Return {
                        period: period_sum / samples as u64,
                        since: view.now_ns,
                        stop_at: None,
                    }
                };
            }
            Phase::Return {
                period,
                since,
                stop_at: None,
            } => {
                let Some((s0, _)) = self.first else { return };
                // the first entry was this sensor's entry number 1: the same place on the
                // circle is every other entry from there
                if sensor != s0 || timer.entries() % 2 != 1 {
                    return;
                }
                let frac = self.first_frac.unwrap_or(0.0).clamp(0.0, 1.0);
                let rest = ((1.0 - frac) * period as f64) as u64;
                self.phase = Phase::Return {
                    period,
                    since,
                    stop_at: Some(t + rest),
                };
            }
            _ => {}
        }
    }
}

impl Controller for CalibrateMotors {
    fn stop(&mut self, _robot: &RobotView) {
        if self.running() {
            self.fail(CalFailure::OwnerLost);
        }
    }

    fn serve(&mut self, _robot: &RobotView, _owner: bool) {
        while let Some(cmd) = self.port.rt_next_command() {
            match cmd {
                CalCommand::Run(run) if self.running() => {
                    let wheel = run.wheel;
                    self.port.rt_report(CalReport::Failed {
                        wheel,
                        reason: CalFailure::BadRun,
                    });
                }
                CalCommand::Run(run) => self.pending = Some(run),
                CalCommand::Abort => {
                    self.pending = None;
                    self.idle();
                    self.port.rt_report(CalReport::Aborted);
                }
            }
        }
    }

    fn update(&mut self, view: &RobotView) -> WheelCommand {
        if let Some(run) = self.pending.take() {
            self.begin(run, view.now_ns);
        }
        let Some(run) = self.run else {
            return WheelCommand::Stop;
        };
        if !view.link_up || view.stale {
            self.fail(CalFailure::LinkLost);
            return WheelCommand::Stop;
        }
        match self.phase {
            Phase::Ramp { .. } => self.ramp(view, run),
            Phase::Sweep { .. } | Phase::Return { .. } => self.sweep(view, run),
            Phase::Idle => self.idle(),
        }
        let mut targets = [0i16; 2];
        if self.run.is_some() {
            targets[run.wheel.index()] = self.target();
        }
        WheelCommand::Targets(targets)
    }
}

#[cfg(test)]
#[path = "calibration_tests.rs"]
mod tests;
