//! One run of the motor calibration action, front-end independent: the goal checked and
//! planned ([`plan`]; every field at its default is the standard calibration), then a
//! [`Session`] that sends the RT controller one [`WheelRun`] per wheel, turns its reports into
//! feedback, and fits each wheel's model at the end ([`super::calibration_fit`]).
//!
//! The standard calibration: for each wheel (left, then right) the deadband ramp, then the
//! sweep [`STANDARD_SPEEDS`] with [`STANDARD_SAMPLES`] revolution periods each — about 100 s
//! per wheel on a Thymio (one revolution about the stopped wheel is 17 s at 100 units, 3.4 s
//! at 500), some 3½ minutes in all.

use super::calibration_fit::{fit_wheel, FitError, WheelFit};
use crate::schema::ranges;
use handoff::{CalCommand, CalFailure, CalReport, Wheel, WheelRun, MAX_SWEEP};

/// The standard sweep (motor units).
pub const STANDARD_SPEEDS: [i16; 6] = [100, 150, 200, 300, 400, 500];
/// Revolution periods measured per target by default.
pub const STANDARD_SAMPLES: u16 = 4;
/// Highest target of the deadband ramp.
pub const DEADBAND_MAX: i16 = 100;
/// Most samples per target a goal may ask.
pub const MAX_SAMPLES: u16 = 100;
/// Highest target a goal may ask (the firmware's nominal maximum).
pub const MAX_SPEED: i16 = msgs::thymio::NOMINAL_MAX_SPEED;

/// A goal's fields (the action's goal, front-end independent).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Goal {
    /// Targets to sweep (empty: standard).
    pub motor_speeds: Vec<i16>,
    /// `left` / `right` (empty: both).
    pub motors: Vec<String>,
    /// Periods per target (0: standard).
    pub samples: u16,
    /// Longest wait for one measurement (s; 0: standard).
    pub timeout: f64,
    /// Neither write nor apply.
    pub dry_run: bool,
}

/// Why a goal is refused (before anything moves).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum GoalError {
    /// A speed out of range.
    #[error("motor_speeds: {0} is outside 1..{MAX_SPEED} units")]
    Speed(i16),
    /// Too many speeds.
    #[error("motor_speeds: {0} speeds, at most {MAX_SWEEP}")]
    TooManySpeeds(usize),
    /// Fewer than two distinct speeds, or fewer than 3 measurements.
    #[error("motor_speeds × samples: the fit needs at least 2 distinct speeds and 3 measurements per wheel")]
    TooFew,
    /// Not `left` / `right`, or twice.
    #[error("motors: \"{0}\" is not a motor (left, right), or is named twice")]
    Motor(String),
    /// Too many samples.
    #[error("samples: {0} is more than {MAX_SAMPLES}")]
    Samples(u16),
    /// A timeout that is not 0 (the standard) nor in [`ranges::CALIBRATION_TIMEOUT`].
    #[error("timeout: {0} {rule}", rule = ranges::CALIBRATION_TIMEOUT.rule())]
    Timeout(f64),
}

/// A checked, planned goal.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// Wheels, in order.
    pub wheels: Vec<Wheel>,
    /// Targets.
    pub speeds: Vec<i16>,
    /// Periods per target.
    pub samples: u16,
    /// Longest wait for one measurement (ns).
    pub timeout_ns: u64,
    /// Neither write nor apply.
    pub dry_run: bool,
}

/// Checks `goal` and fills its defaults; `q0` and `axis_length` (the calibration in effect)
/// give the standard timeout: three revolutions at the slowest target plus 5 s.
pub fn plan(goal: &Goal, q0: f64, axis_length: f64) -> Result<Plan, GoalError> {
    let speeds = if goal.motor_speeds.is_empty() {
        STANDARD_SPEEDS.to_vec()
    } else {
        goal.motor_speeds.clone()
    };
    if let Some(s) = speeds.iter().find(|s| !(1..=MAX_SPEED).contains(*s)) {
        return Err(GoalError::Speed(*s));
    }
    if speeds.len() > MAX_SWEEP {
        return Err(GoalError::TooManySpeeds(speeds.len()));
    }
    let samples = match goal.samples {
        0 => STANDARD_SAMPLES,
        s if s > MAX_SAMPLES => return Err(GoalError::Samples(s)),
        s => s,
    };
    let mut distinct = speeds.clone();
    distinct.sort_unstable();
    distinct.dedup();
    if distinct.len() < 2 || speeds.len() * (samples as usize) < 3 {
        return Err(GoalError::TooFew);
    }
    let mut wheels = Vec::new();
    for m in &goal.motors {
        match Wheel::from_name(m) {
            Some(w) if !wheels.contains(&w) => wheels.push(w),
            _ => return Err(GoalError::Motor(m.clone())),
        }
    }
    if wheels.is_empty() {
        wheels = vec![Wheel::Left, Wheel::Right];
    }
    let timeout = if goal.timeout == 0.0 {
        let slowest = distinct[0] as f64;
        3.0 * std::f64::consts::TAU * axis_length / (q0 * slowest) + 5.0
    } else if ranges::CALIBRATION_TIMEOUT.contains(goal.timeout) {
        goal.timeout
    } else {
        return Err(GoalError::Timeout(goal.timeout));
    };
    Ok(Plan {
        wheels,
        speeds,
        samples,
        timeout_ns: (timeout.min(3600.0) * 1e9) as u64,
        dry_run: goal.dry_run,
    })
}

impl Plan {
    /// The RT controller's run for `wheel`.
    pub fn run(&self, wheel: Wheel) -> WheelRun {
        let mut speeds = [0; MAX_SWEEP];
        for (s, v) in speeds.iter_mut().zip(&self.speeds) {
            *s = *v;
        }
        WheelRun {
            wheel,
            deadband: true,
            deadband_max: DEADBAND_MAX,
            speeds,
            speeds_len: self.speeds.len().min(MAX_SWEEP) as u8,
            samples: self.samples,
            timeout_ns: self.timeout_ns,
        }
    }
}

/// Feedback, as the action's.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Feedback {
    /// `deadband`, `sweep`, `fit`, `writing`.
    pub phase: &'static str,
    /// `left`, `right` or "".
    pub motor: &'static str,
    /// Target measured (units).
    pub motor_speed: i16,
    /// Last measured wheel speed (m/s).
    pub measured_speed: f64,
    /// Measurements of this wheel so far.
    pub samples: u32,
    /// 0..1.
    pub progress: f32,
}

/// One wheel's result.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WheelResult {
    /// Wheel.
    pub wheel: Wheel,
    /// The fitted model.
    pub fit: WheelFit,
    /// Largest target that did not move it.
    pub deadband: i16,
}

/// What a report leads to.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Nothing to do (a report of no interest).
    Nothing,
    /// Publish this feedback.
    Feedback(Feedback),
    /// Send this command to the RT controller (the next wheel), with feedback.
    Next(CalCommand, Feedback),
    /// Every wheel measured and fitted.
    Fitted(Vec<WheelResult>),
    /// The run failed (the robot is stopped).
    Failed(String),
}

/// One wheel's measurements: its (target, speed) points and deadband.
type Measured = (Wheel, Vec<(f64, f64)>, i16);

/// A calibration in progress (see the module documentation).
#[derive(Debug)]
pub struct Session {
    plan: Plan,
    index: usize,
    points: Vec<(f64, f64)>,
    deadband: Option<i16>,
    fits: Vec<Measured>,
}

impl Session {
    /// A session for `plan` and the command that starts it.
    pub fn start(plan: Plan) -> (Session, CalCommand) {
        let first = CalCommand::Run(plan.run(plan.wheels[0]));
        let s = Session {
            plan,
            index: 0,
            points: Vec::new(),
            deadband: None,
            fits: Vec::new(),
        };
        (s, first)
    }

    /// The plan.
    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    fn wheel(&self) -> Wheel {
        self.plan.wheels[self.index.min(self.plan.wheels.len() - 1)]
    }

    fn progress(&self) -> f32 {
        let per_wheel = 1 + self.plan.speeds.len() * self.plan.samples as usize;
        let here = self.deadband.is_some() as usize + self.points.len().min(per_wheel - 1);
        let total = per_wheel * self.plan.wheels.len();
        ((self.index * per_wheel + here) as f32 / total as f32).min(1.0)
    }

    fn feedback(&self, phase: &'static str, target: i16, speed: f64) -> Feedback {
        Feedback {
            phase,
            motor: self.wheel().name(),
            motor_speed: target,
            measured_speed: speed,
            samples: self.points.len() as u32,
            progress: self.progress(),
        }
    }

    /// Takes one report of the RT controller.
    pub fn on_report(&mut self, report: CalReport) -> Step {
        match report {
            CalReport::Ramp {
                target, measured, ..
            } => Step::Feedback(self.feedback("deadband", target, measured)),
            CalReport::Deadband { units, .. } => {
                self.deadband = Some(units);
                Step::Feedback(self.feedback("deadband", units, 0.0))
            }
            CalReport::Sample { target, speed, .. } => {
                self.points.push((target as f64, speed));
                Step::Feedback(self.feedback("sweep", target, speed))
            }
            CalReport::Done { .. } => {
                let points = std::mem::take(&mut self.points);
                let deadband = self.deadband.take().unwrap_or(0);
                self.fits.push((self.wheel(), points, deadband));
                self.index += 1;
                if self.index < self.plan.wheels.len() {
                    let cmd = CalCommand::Run(self.plan.run(self.wheel()));
                    Step::Next(cmd, self.feedback("deadband", 0, 0.0))
                } else {
                    self.fit()
                }
            }
            CalReport::Failed { wheel, reason } => Step::Failed(failure(wheel, reason)),
            CalReport::Started { .. } | CalReport::Aborted => Step::Nothing,
        }
    }

    fn fit(&mut self) -> Step {
        let mut out = Vec::new();
        for (wheel, points, deadband) in &self.fits {
            match fit_wheel(wheel.name(), points) {
                Ok(fit) => out.push(WheelResult {
                    wheel: *wheel,
                    fit,
                    deadband: *deadband,
                }),
                Err(e) => return Step::Failed(fit_failure(&e)),
            }
        }
        Step::Fitted(out)
    }

    /// The feedback of the fit phase.
    pub fn fit_feedback(&self) -> Feedback {
        Feedback {
            phase: "fit",
            motor: "",
            progress: 1.0,
            ..Feedback::default()
        }
    }
}

fn failure(wheel: Wheel, reason: CalFailure) -> String {
    match reason {
        CalFailure::Timeout { target } => {
            format!(
                "{} wheel at {target} units: {}",
                wheel.name(),
                reason.message()
            )
        }
        CalFailure::NeverMoved { max } => {
            format!("{} wheel: {} ({max} units)", wheel.name(), reason.message())
        }
        _ => format!("{} wheel: {}", wheel.name(), reason.message()),
    }
}

fn fit_failure(e: &FitError) -> String {
    format!("fit refused: {e}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use msgs::thymio::{AXIS_LENGTH, NOMINAL_Q0 as Q0, SIMULATION_Q0};

    #[test]
    fn the_default_goal_is_the_standard_calibration() {
        let p = plan(&Goal::default(), Q0, AXIS_LENGTH).unwrap();
        assert_eq!(p.speeds, STANDARD_SPEEDS);
        assert_eq!(p.wheels, [Wheel::Left, Wheel::Right]);
        assert_eq!(p.samples, STANDARD_SAMPLES);
        // three revolutions at 100 units (17.2 s each) and 5 s
        assert!(
            (p.timeout_ns as f64 / 1e9 - 56.6).abs() < 0.5,
            "{}",
            p.timeout_ns
        );
        let r = p.run(Wheel::Right);
        assert_eq!((r.speeds(), r.deadband), (&STANDARD_SPEEDS[..], true));
    }

    #[test]
    fn bad_goals_are_refused_with_the_field() {
        let bad = |g: Goal| plan(&g, Q0, AXIS_LENGTH).unwrap_err().to_string();
        let speeds = |v: Vec<i16>| Goal {
            motor_speeds: v,
            ..Goal::default()
        };
        assert!(bad(speeds(vec![0, 100])).contains("motor_speeds: 0"));
        assert!(bad(speeds(vec![100, 600])).contains("600"));
        assert!(bad(speeds(vec![200, 200, 200])).contains("2 distinct"));
        assert!(bad(speeds(vec![100; 17])).contains("at most 16"));
        let motors = Goal {
            motors: vec!["left".into(), "middle".into()],
            ..Goal::default()
        };
        assert!(bad(motors).contains("\"middle\""));
        let twice = Goal {
            motors: vec!["left".into(), "left".into()],
            ..Goal::default()
        };
        assert!(bad(twice).contains("motors"));
        for t in [-1.0, 1e300, 1e-300, f64::NAN, 0.5, 3601.0] {
            let why = bad(Goal {
                timeout: t,
                ..Goal::default()
            });
            assert!(
                why.contains("timeout") && why.contains("[1, 3600] s"),
                "{t}: {why}"
            );
        }
        let p = plan(
            &Goal {
                timeout: 3600.0,
                ..Goal::default()
            },
            SIMULATION_Q0,
            AXIS_LENGTH,
        )
        .unwrap();
        assert_eq!(p.timeout_ns, 3_600_000_000_000);
        assert!(bad(Goal {
            motor_speeds: vec![100, 200],
            samples: 1,
            ..Goal::default()
        })
        .contains("3 measurements"));
    }

    #[test]
    fn a_session_runs_each_wheel_and_fits() {
        let goal = Goal {
            motor_speeds: vec![200, 400],
            motors: vec!["right".into(), "left".into()],
            samples: 2,
            ..Goal::default()
        };
        let (mut s, first) = Session::start(plan(&goal, Q0, AXIS_LENGTH).unwrap());
        assert!(matches!(first, CalCommand::Run(r) if r.wheel == Wheel::Right));
        let gains = [1.06, 0.96];
        let mut next = None;
        for (i, wheel) in [Wheel::Right, Wheel::Left].into_iter().enumerate() {
            assert_eq!(s.on_report(CalReport::Started { wheel }), Step::Nothing);
            s.on_report(CalReport::Deadband { wheel, units: 6 });
            for target in [200, 400] {
                for _ in 0..2 {
                    let speed = gains[wheel.index()] * Q0 * target as f64;
                    let Step::Feedback(f) = s.on_report(CalReport::Sample {
                        wheel,
                        target,
                        period_ns: 1,
                        speed,
                    }) else {
                        panic!("no feedback")
                    };
                    assert_eq!(
                        (f.phase, f.motor, f.motor_speed),
                        ("sweep", wheel.name(), target)
                    );
                    assert!(f.progress > 0.0 && f.progress <= 1.0);
                }
            }
            next = Some(s.on_report(CalReport::Done { wheel }));
            if i == 0 {
                assert!(matches!(
                    next,
                    Some(Step::Next(CalCommand::Run(r), _)) if r.wheel == Wheel::Left
                ));
            }
        }
        let Some(Step::Fitted(results)) = next else {
            panic!("not fitted: {next:?}")
        };
        assert_eq!(results.len(), 2);
        for r in results {
            let want = gains[r.wheel.index()] * Q0;
            assert!((r.fit.q0 / want - 1.0).abs() < 1e-6, "{r:?}");
            assert_eq!(r.deadband, 6);
        }
    }

    #[test]
    fn a_failure_says_which_wheel_and_why() {
        let (mut s, _) = Session::start(plan(&Goal::default(), Q0, AXIS_LENGTH).unwrap());
        let step = s.on_report(CalReport::Failed {
            wheel: Wheel::Left,
            reason: CalFailure::Timeout { target: 100 },
        });
        let Step::Failed(m) = step else {
            panic!("{step:?}")
        };
        assert!(
            m.contains("left wheel at 100 units") && m.contains("line"),
            "{m}"
        );
    }
}
