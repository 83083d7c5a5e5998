//! The goal state machine against a hand-driven RT half of the controller's port and a host that records what the
//! engine was asked.

use super::*;
use crate::report::{LogSink, Reporter, Severity};
use handoff::NrtControl;
use handoff::{calibration_port, RtCalibrationPort};
use msgs::thymio::AXIS_LENGTH;
use nrt_engine::engine::EngineEvent;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

const NODE: NodeId = NodeId(7);
const ROBOT: RobotId = RobotId(0);
const OWNER: OwnerId = OwnerId(3);
/// The simulated wheels' q0: speed = Q0 × units.
const Q0: f64 = 0.0003;

#[derive(Default)]
struct Host {
    driven: bool,
    owners: Vec<(RobotId, OwnerId)>,
    written: Vec<(String, Vec<MotorResult>)>,
    refuse_write: bool,
    /// What holds the wheels (`wheel_hold`), if anything.
    hold: Option<&'static str>,
}

impl CalibrationHost for Host {
    fn robot(&self, node: NodeId) -> Option<(RobotId, f64, f64)> {
        (self.driven && node == NODE).then_some((ROBOT, Q0, AXIS_LENGTH))
    }
    fn request_owner(&mut self, robot: RobotId, owner: OwnerId) -> Result<(), String> {
        self.owners.push((robot, owner));
        Ok(())
    }
    fn calibration_file(&self, _: NodeId) -> String {
        "/tmp/cal.yaml".into()
    }
    fn write_and_apply(&mut self, _: NodeId, path: &str, m: &[MotorResult]) -> Result<(), String> {
        if self.refuse_write {
            return Err(format!("{path}: read-only"));
        }
        self.written.push((path.into(), m.to_vec()));
        Ok(())
    }
    fn wheel_hold(&self, _: NodeId) -> Option<&'static str> {
        self.hold
    }
}

/// What a front end got: feedback, then the end.
#[derive(Default)]
struct Seen {
    feedback: Vec<Feedback>,
    end: Option<(End, CalResult)>,
}

struct Handle(Arc<Mutex<Seen>>);

impl ActionHandle<Feedback, CalResult> for Handle {
    fn feedback(&mut self, f: &Feedback) {
        self.0.lock().unwrap().feedback.push(*f);
    }
    fn finish(self: Box<Self>, end: End, result: CalResult) -> Result<(), String> {
        self.0.lock().unwrap().end = Some((end, result));
        Ok(())
    }
}

#[derive(Default)]
struct Lines(Mutex<Vec<(Severity, String)>>);

impl LogSink for Lines {
    fn log(&self, severity: Severity, _: &str, text: &str, _: SystemTime) {
        self.0.lock().unwrap().push((severity, text.into()));
    }
}

struct Rig {
    cal: Calibration,
    rt: RtCalibrationPort,
    host: Host,
    lines: Arc<Lines>,
}

fn rig() -> Rig {
    let reporter = Reporter::new("asebaros");
    let lines = Arc::new(Lines::default());
    reporter.add_sink(lines.clone());
    let mut cal = Calibration::new(reporter);
    let (rt, nrt) = calibration_port();
    cal.with_ports(CALIBRATE, OWNER, BTreeMap::from([(ROBOT, nrt)]));
    let host = Host {
        driven: true,
        ..Host::default()
    };
    Rig {
        cal,
        rt,
        host,
        lines,
    }
}

impl Rig {
    fn goal(&mut self, goal: &Goal) -> (Result<GoalId, String>, Arc<Mutex<Seen>>) {
        let seen = Arc::new(Mutex::new(Seen::default()));
        let id = self.cal.check(&self.host, NODE, goal).map(|plan| {
            let h = Box::new(Handle(seen.clone()));
            self.cal
                .start(&mut self.host, NODE, plan, h, Instant::now())
        });
        (id, seen)
    }

    fn warned(&self, text: &str) -> bool {
        self.lines
            .0
            .lock()
            .unwrap()
            .iter()
            .any(|(s, l)| *s == Severity::Warn && l.contains(text))
    }

    /// The RT controller runs `wheel` over `speeds` (two samples each) as a wheel of q0 `q0` does.
    fn run_wheel(&mut self, wheel: Wheel, speeds: &[i16], q0: f64) {
        for r in [
            CalReport::Started { wheel },
            CalReport::Ramp {
                wheel,
                target: 10,
                measured: 0.0,
            },
            CalReport::Deadband { wheel, units: 12 },
        ] {
            assert!(self.rt.rt_report(r));
        }
        for &target in speeds {
            for _ in 0..2 {
                let speed = q0 * target as f64;
                assert!(self.rt.rt_report(CalReport::Sample {
                    wheel,
                    target,
                    period_ns: 1,
                    speed
                }));
            }
        }
        assert!(self.rt.rt_report(CalReport::Done { wheel }));
        self.cal.serve(&mut self.host, Instant::now());
    }
}

fn two_speeds() -> Goal {
    Goal {
        motor_speeds: vec![200, 400],
        samples: 2,
        ..Goal::default()
    }
}

#[test]
fn bad_goals_are_rejected_with_their_reason_reported() {
    let mut r = rig();
    for (goal, why) in [
        (vec![0, 100], "motor_speeds: 0 is outside"),
        (vec![100, 600], "motor_speeds: 600 is outside"),
    ] {
        let g = Goal {
            motor_speeds: goal,
            ..Goal::default()
        };
        let (id, _) = r.goal(&g);
        assert!(id.unwrap_err().contains(why));
        assert!(r.warned(&format!("calibrate_motors (node 7): goal rejected: {why}")));
    }
    let g = Goal {
        motors: vec!["middle".into()],
        ..Goal::default()
    };
    assert!(r.goal(&g).0.unwrap_err().contains("\"middle\""));
    for (timeout, why) in [(1e300, "timeout: "), (1e-300, "timeout: 0.000000")] {
        let g = Goal {
            timeout,
            ..Goal::default()
        };
        assert!(r.goal(&g).0.unwrap_err().starts_with(why));
    }
    // nothing moved, nobody took the wheels
    assert!(r.host.owners.is_empty());
    assert_eq!(r.rt.rt_next_command(), None);
    // a robot that is not driven, and a second goal while one runs
    r.host.driven = false;
    assert_eq!(
        r.goal(&two_speeds()).0.unwrap_err(),
        "the robot is not driven"
    );
    r.host.driven = true;
    assert!(r.goal(&two_speeds()).0.is_ok());
    assert_eq!(
        r.goal(&two_speeds()).0.unwrap_err(),
        "the robot is already calibrating"
    );
    assert!(r.warned("goal rejected: the robot is already calibrating"));
}

#[test]
fn a_run_measures_both_wheels_writes_applies_and_gives_the_wheels_back() {
    let mut r = rig();
    let owner = handoff::OwnerId::JOINT;
    r.cal.on_engine_event(&EngineEvent::Owner {
        robot: ROBOT,
        owner,
        dropped: 0,
    });
    let (id, seen) = r.goal(&two_speeds());
    let id = id.unwrap();
    assert!(r.cal.is_active(id));
    assert_eq!(r.host.owners, [(ROBOT, OWNER)]);
    let first = r.rt.rt_next_command();
    assert!(matches!(first, Some(CalCommand::Run(w)) if w.wheel == Wheel::Left));
    r.run_wheel(Wheel::Left, &[200, 400], Q0 * 1.06);
    // the right wheel next
    assert!(matches!(r.rt.rt_next_command(), Some(CalCommand::Run(w)) if w.wheel == Wheel::Right));
    assert!(seen.lock().unwrap().end.is_none());
    r.run_wheel(Wheel::Right, &[200, 400], Q0 * 0.96);
    assert!(!r.cal.is_active(id));
    let s = seen.lock().unwrap();
    let (end, result) = s.end.clone().unwrap();
    assert_eq!(end, End::Succeeded, "{result:?}");
    assert!(result.success);
    assert_eq!(
        result.message,
        "calibration of node 7 written to /tmp/cal.yaml and applied"
    );
    assert_eq!(result.calibration_file, "/tmp/cal.yaml");
    assert!(
        (result.left_q0 / (Q0 * 1.06) - 1.0).abs() < 1e-6,
        "{result:?}"
    );
    assert!(
        (result.right_q0 / (Q0 * 0.96) - 1.0).abs() < 1e-6,
        "{result:?}"
    );
    assert_eq!((result.left_deadband, result.right_deadband), (12, 12));
    // the file holds what the result says, and the previous owner has the wheels again
    let (path, motors) = &r.host.written[0];
    assert_eq!(path, "/tmp/cal.yaml");
    assert_eq!(motors[0].parameters[0], result.left_q0);
    assert_eq!(r.host.owners.last(), Some(&(ROBOT, owner)));
    // feedback through every phase of both wheels
    let phases: Vec<_> = s.feedback.iter().map(|f| (f.phase, f.motor)).collect();
    for p in [
        ("deadband", "left"),
        ("sweep", "left"),
        ("deadband", "right"),
        ("sweep", "right"),
        ("fit", ""),
        ("writing", ""),
    ] {
        assert!(phases.contains(&p), "{p:?} in {phases:?}");
    }
}

#[test]
fn a_dry_run_writes_nothing_and_a_refused_write_aborts() {
    let mut r = rig();
    let g = Goal {
        dry_run: true,
        motors: vec!["right".into()],
        ..two_speeds()
    };
    let (_, seen) = r.goal(&g);
    r.run_wheel(Wheel::Right, &[200, 400], Q0);
    let (end, result) = seen.lock().unwrap().end.clone().unwrap();
    assert_eq!(end, End::Succeeded);
    assert_eq!(
        result.message,
        "dry run: measured and fitted, nothing written"
    );
    assert_eq!(result.calibration_file, "");
    assert!(result.right_q0 > 0.0 && result.left_q0 == 0.0);
    assert!(r.host.written.is_empty());

    r.host.refuse_write = true;
    let (_, seen) = r.goal(&Goal {
        motors: vec!["left".into()],
        ..two_speeds()
    });
    r.run_wheel(Wheel::Left, &[200, 400], Q0);
    let (end, result) = seen.lock().unwrap().end.clone().unwrap();
    assert_eq!(end, End::Aborted);
    assert_eq!(result.message, "/tmp/cal.yaml: read-only");
    assert!(r.warned("calibrate_motors (node 7): /tmp/cal.yaml: read-only"));
}

#[test]
fn a_cancel_stops_the_robot_at_once_and_gives_the_wheels_back() {
    let mut r = rig();
    let (id, seen) = r.goal(&two_speeds());
    let id = id.unwrap();
    let _ = r.rt.rt_next_command();
    assert!(r.cal.cancel(&mut r.host, id));
    assert_eq!(r.rt.rt_next_command(), Some(CalCommand::Abort));
    assert_eq!(r.host.owners, [(ROBOT, OWNER), (ROBOT, OwnerId::ROS)]);
    let (end, result) = seen.lock().unwrap().end.clone().unwrap();
    assert_eq!(
        (end, result.success, result.message.as_str()),
        (End::Canceled, false, "cancelled")
    );
    // once only; the robot is free for the next goal
    assert!(!r.cal.cancel(&mut r.host, id));
    assert!(r.goal(&two_speeds()).0.is_ok());
}

#[test]
fn a_hold_on_the_wheels_rejects_goals_and_aborts_a_run_under_way() {
    const WHY: &str = "held by the emergency stop";
    let mut r = rig();
    r.host.hold = Some(WHY);
    let (id, _) = r.goal(&two_speeds());
    assert_eq!(id, Err(WHY.to_owned()));
    assert_eq!(r.rt.rt_next_command(), None);
    r.host.hold = None;
    let (_, seen) = r.goal(&two_speeds());
    assert!(matches!(r.rt.rt_next_command(), Some(CalCommand::Run(_))));
    assert!(r.rt.rt_report(CalReport::Started { wheel: Wheel::Left }));
    r.cal.serve(&mut r.host, Instant::now());
    assert!(seen.lock().unwrap().end.is_none(), "ended without a hold");
    r.host.hold = Some(WHY);
    r.cal.serve(&mut r.host, Instant::now());
    assert_eq!(r.rt.rt_next_command(), Some(CalCommand::Abort));
    let (end, result) = seen.lock().unwrap().end.clone().unwrap();
    assert_eq!((end, result.success), (End::Aborted, false));
    assert_eq!(result.message, WHY);
    assert!(r.warned(&format!("calibrate_motors (node 7): failed: {WHY}")));
    // the wheels back to the owner before the run; nothing written
    assert_eq!(r.host.owners, [(ROBOT, OWNER), (ROBOT, OwnerId::ROS)]);
    assert!(r.host.written.is_empty());
}

#[test]
fn another_owner_aborts_the_run_and_keeps_the_wheels() {
    let mut r = rig();
    let (_, seen) = r.goal(&two_speeds());
    assert!(r.rt.rt_report(CalReport::Started { wheel: Wheel::Left }));
    assert!(r.rt.rt_report(CalReport::Failed {
        wheel: Wheel::Left,
        reason: CalFailure::OwnerLost
    }));
    r.cal.serve(&mut r.host, Instant::now());
    let (end, result) = seen.lock().unwrap().end.clone().unwrap();
    assert_eq!(end, End::Aborted);
    assert!(
        result.message.contains("another owner took the wheels"),
        "{result:?}"
    );
    // not given back to the owner before the run: the new owner keeps them
    assert_eq!(r.host.owners, [(ROBOT, OWNER)]);
}

#[test]
fn a_robot_that_goes_away_or_a_controller_that_never_starts_ends_the_goal() {
    let mut r = rig();
    let (_, seen) = r.goal(&two_speeds());
    let _ = r.rt.rt_next_command();
    r.cal.on_engine_event(&EngineEvent::RobotRemoved {
        node: NODE,
        robot: ROBOT,
    });
    let (end, result) = seen.lock().unwrap().end.clone().unwrap();
    assert_eq!(
        (end, result.message.as_str()),
        (End::Aborted, "the robot went away")
    );

    let (_, seen) = r.goal(&two_speeds());
    let _ = r.rt.rt_next_command();
    r.cal
        .serve(&mut r.host, Instant::now() + Duration::from_secs(1));
    assert!(seen.lock().unwrap().end.is_none());
    r.cal.serve(&mut r.host, Instant::now() + START_TIMEOUT * 2);
    let (end, result) = seen.lock().unwrap().end.clone().unwrap();
    assert_eq!(end, End::Aborted);
    assert!(
        result.message.contains("did not take the wheels"),
        "{result:?}"
    );
    assert_eq!(r.rt.rt_next_command(), Some(CalCommand::Abort));
}

#[test]
fn without_the_controller_no_robot_is_served_and_goals_are_rejected() {
    let reporter = Reporter::new("asebaros");
    let lines = Arc::new(Lines::default());
    reporter.add_sink(lines.clone());
    let mut cal = Calibration::new(reporter);
    let host = Host {
        driven: true,
        ..Host::default()
    };
    assert!(!cal.serves(CALIBRATE, ROBOT));
    assert!(cal.check(&host, NODE, &two_speeds()).is_err());
    let mut control = NrtControl::default();
    assert!(!cal.take(&mut control));
    assert!(lines
        .0
        .lock()
        .unwrap()
        .iter()
        .any(|(_, l)| l.contains("action is off")));
}
