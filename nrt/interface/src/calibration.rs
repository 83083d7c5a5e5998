//! The motor calibration action (`calibrate_motors`, `thymio_rt_msgs/CalibrateMotors`), described once: the goal
//! state machine of every driven Thymio, shared by every front end (a field of [`crate::Interface`]). The front ends
//! are transports: ROS 2 an r2r action server, ROS 1 an actionlib server; each hands the goals it receives to
//! [`Calibration::check`] and [`Calibration::start`], its cancels to [`Calibration::cancel`], and gets feedback and
//! the result back through the goal's [`GoalHandle`]. It drives `rt::controllers::calibration` (the RT controller that
//! runs the wheels and times the line crossings, through its private port) with
//! `nrt_engine::thymio::calibration_run` (the plan, the session and the fit).
//!
//! A goal is checked first: a bad one (a speed outside 1..500, fewer than two distinct speeds, an unknown motor, a
//! bad timeout) or a goal while the robot already calibrates is **rejected**, the reason reported
//! (`calibrate_motors (node N): goal rejected: …`) and given to the front end (ROS 1's status text). An accepted
//! goal makes `calibrate_motors` the robot's owner (the previous owner is kept), runs each wheel and publishes
//! feedback; at the end the previous owner gets the wheels back and, unless `dry_run`, the robot's entry is merged
//! into its calibration file (`calibration_file`, or ROS-Thymio's default location when empty) and applied live.
//! A cancel stops the robot at once (the controller's next cycle commands zero) and gives the wheels back. A
//! `switch_controller` to another owner during the run aborts the goal (`another owner took the wheels`) and leaves
//! the wheels to that owner; a robot that goes away aborts it (`the robot went away`).

use crate::report::Reporter;
use handoff::{
    CalCommand, CalFailure, CalReport, NodeId, NrtCalibrationPort, NrtControl, OwnerId, RobotId,
    Wheel,
};
use nrt_engine::engine::{Engine, EngineEvent};
use nrt_engine::thymio::calibration_file::{self, MotorResult};
use nrt_engine::thymio::calibration_run::{self, Plan, Session, Step, WheelResult};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

pub use crate::action::End;
pub use nrt_engine::thymio::calibration_run::{Feedback, Goal};

/// The action's name under the robot's namespace (and the RT controller's name, its owner name).
pub const ACTION: &str = "calibrate_motors";
/// How long the controller may take to start a run after the goal was accepted.
pub const START_TIMEOUT: Duration = Duration::from_secs(3);

/// A goal of the layer (any front end's), told apart from every other goal of the process.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct GoalId(pub u64);

/// The action's result, as the message's.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CalResult {
    /// Measured, fitted (and written and applied, unless a dry run).
    pub success: bool,
    /// What happened, or why it failed.
    pub message: String,
    /// Left wheel's q0 (m/s per unit).
    pub left_q0: f64,
    /// Left wheel's q1.
    pub left_q1: f64,
    /// Right wheel's q0.
    pub right_q0: f64,
    /// Right wheel's q1.
    pub right_q1: f64,
    /// Left wheel's deadband (units).
    pub left_deadband: i16,
    /// Right wheel's deadband (units).
    pub right_deadband: i16,
    /// The calibration file written ("" if none).
    pub calibration_file: String,
}

impl CalResult {
    /// A result of `success` saying `message`, with the fitted wheels of `results` and the file written.
    pub fn new(success: bool, message: &str, results: &[WheelResult], file: &str) -> CalResult {
        let mut r = CalResult {
            success,
            message: message.to_owned(),
            calibration_file: file.to_owned(),
            ..CalResult::default()
        };
        for w in results {
            let (q0, q1, d) = (w.fit.q0, w.fit.q1, w.deadband);
            match w.wheel {
                Wheel::Left => (r.left_q0, r.left_q1, r.left_deadband) = (q0, q1, d),
                Wheel::Right => (r.right_q0, r.right_q1, r.right_deadband) = (q0, q1, d),
            }
        }
        r
    }

    fn failed(why: &str) -> CalResult {
        CalResult::new(false, why, &[], "")
    }
}

/// Where the feedback and the result of one accepted goal go (each front end gives its own).
pub trait GoalHandle: Send {
    /// Publishes `feedback` (never waits; a lost feedback is not an error of the interface).
    fn feedback(&mut self, feedback: &Feedback);
    /// Ends the goal with `result`; why it could not be sent, if so.
    fn finish(self: Box<Self>, end: End, result: CalResult) -> Result<(), String>;
}

/// What the calibration needs of the engine ([`Engine`] is it; the unit tests give their own).
pub trait CalibrationHost {
    /// The robot driven on `node`, the smallest q0 of its wheels and its axis length; `None` if not driven.
    fn robot(&self, node: NodeId) -> Option<(RobotId, f64, f64)>;
    /// Asks the RT thread to give `robot`'s wheels to `owner`.
    fn request_owner(&mut self, robot: RobotId, owner: OwnerId) -> Result<(), String>;
    /// The robot's `calibration_file` parameter ("" for ROS-Thymio's default location).
    fn calibration_file(&self, node: NodeId) -> String;
    /// Merges `motors` into the robot's entry of the file `path` and applies it live.
    fn write_and_apply(
        &mut self,
        node: NodeId,
        path: &str,
        motors: &[MotorResult],
    ) -> Result<(), String>;
}

impl CalibrationHost for Engine {
    fn robot(&self, node: NodeId) -> Option<(RobotId, f64, f64)> {
        self.robots().of_node(node).map(|s| {
            let c = &s.calibration;
            let q0 = c.left.parameters[0].min(c.right.parameters[0]);
            (s.robot, q0, c.axis_length)
        })
    }

    fn request_owner(&mut self, robot: RobotId, owner: OwnerId) -> Result<(), String> {
        self.live_params()
            .nrt_request_owner(robot, owner)
            .map_err(|e| e.to_string())
    }

    fn calibration_file(&self, node: NodeId) -> String {
        self.robot_params(node).calibration_file.clone()
    }

    fn write_and_apply(
        &mut self,
        node: NodeId,
        path: &str,
        motors: &[MotorResult],
    ) -> Result<(), String> {
        calibration_file::write_motors(path.as_ref(), node.0, motors).map_err(|e| e.to_string())?;
        self.reload_robot_calibration(node, path)
            .map_err(|e| format!("written to {path} but not applied: {e}"))
    }
}

struct Active {
    id: GoalId,
    robot: RobotId,
    handle: Box<dyn GoalHandle>,
    session: Session,
    /// The owner before the run, given the wheels back at the end.
    restore: OwnerId,
    accepted: Instant,
    started: bool,
}

/// Every driven robot's calibration goals (see the module documentation).
pub struct Calibration {
    /// `calibrate_motors`' owner id; `None` without the controller.
    owner: Option<OwnerId>,
    ports: BTreeMap<RobotId, NrtCalibrationPort>,
    active: BTreeMap<NodeId, Active>,
    owners: BTreeMap<RobotId, OwnerId>,
    next: u64,
    reporter: Reporter,
}

impl Calibration {
    /// No controller yet: every goal is refused until [`Self::take`].
    pub fn new(reporter: Reporter) -> Calibration {
        Calibration {
            owner: None,
            ports: BTreeMap::new(),
            active: BTreeMap::new(),
            owners: BTreeMap::new(),
            next: 0,
            reporter,
        }
    }

    /// Takes the calibration controller's private ports out of `control` (the rest stays for the code that serves
    /// the other controllers); once per process, whatever the front ends. False (said) if the registry has no
    /// `calibrate_motors`.
    pub fn take(&mut self, control: &mut NrtControl) -> bool {
        let Some(owner) = control.names.id(ACTION) else {
            self.reporter
                .warn("no calibrate_motors controller: the calibrate_motors action is off");
            return false;
        };
        for p in control.ports.iter_mut().filter(|p| p.controller == ACTION) {
            let Some(private) = p.private.take() else {
                continue;
            };
            if let Ok(port) = private.0.downcast::<NrtCalibrationPort>() {
                self.ports.insert(p.robot, *port);
            }
        }
        self.owner = Some(owner);
        true
    }

    /// Serves `ports` (the controller's private ports by robot slot), the controller being the owner `owner`.
    pub fn with_ports(&mut self, owner: OwnerId, ports: BTreeMap<RobotId, NrtCalibrationPort>) {
        self.owner = Some(owner);
        self.ports = ports;
    }

    /// Whether `robot` has the action (the front ends make its endpoint then).
    pub fn serves(&self, robot: RobotId) -> bool {
        self.owner.is_some() && self.ports.contains_key(&robot)
    }

    /// Whether goal `id` is still running.
    pub fn is_active(&self, id: GoalId) -> bool {
        self.active.values().any(|a| a.id == id)
    }

    /// Checks a goal for the robot on `node`: its plan, or why it is rejected (reported as the driver's warning).
    pub fn check<H: CalibrationHost + ?Sized>(
        &self,
        host: &H,
        node: NodeId,
        goal: &Goal,
    ) -> Result<Plan, String> {
        let checked = if self.active.contains_key(&node) {
            Err("the robot is already calibrating".to_owned())
        } else {
            match host.robot(node) {
                None => Err("the robot is not driven".to_owned()),
                Some((robot, _, _)) if !self.serves(robot) => {
                    Err("the robot has no calibrate_motors controller".to_owned())
                }
                Some((_, q0, axis)) => {
                    calibration_run::plan(goal, q0, axis).map_err(|e| e.to_string())
                }
            }
        };
        if let Err(why) = &checked {
            self.reporter
                .warn(&format!("{ACTION} (node {node}): goal rejected: {why}"));
        }
        checked
    }

    /// Starts `plan` (checked by [`Self::check`] in the same iteration) on the robot of `node`, its feedback and
    /// result going to `handle`: the controller takes the wheels. A goal that cannot start ends at once, aborted.
    pub fn start<H: CalibrationHost + ?Sized>(
        &mut self,
        host: &mut H,
        node: NodeId,
        plan: Plan,
        handle: Box<dyn GoalHandle>,
        now: Instant,
    ) -> GoalId {
        self.next += 1;
        let id = GoalId(self.next);
        let robot = host.robot(node).map(|(r, _, _)| r);
        let (Some(owner), Some(robot)) = (self.owner, robot) else {
            self.end(
                node,
                handle,
                End::Aborted,
                CalResult::failed("the robot is not driven"),
            );
            return id;
        };
        let Some(port) = self.ports.get_mut(&robot) else {
            let why = "the robot has no calibrate_motors controller";
            self.end(node, handle, End::Aborted, CalResult::failed(why));
            return id;
        };
        // reports of an earlier run are stale
        while port.nrt_next_report().is_some() {}
        let (session, first) = Session::start(plan);
        let requested = host
            .request_owner(robot, owner)
            .and_then(|()| port.nrt_send(first).map_err(|e| e.to_string()));
        if let Err(e) = requested {
            self.end(node, handle, End::Aborted, CalResult::failed(&e));
            return id;
        }
        self.reporter.info(&format!(
            "{ACTION} (node {node}): calibrating {:?} at {:?} units",
            session.plan().wheels,
            session.plan().speeds
        ));
        let restore = self.owners.get(&robot).copied().unwrap_or(OwnerId::ROS);
        let active = Active {
            id,
            robot,
            handle,
            session,
            restore,
            accepted: now,
            started: false,
        };
        self.active.insert(node, active);
        id
    }

    /// Cancels goal `id`: the robot stops at once and the previous owner gets the wheels back; false if the goal
    /// is not running (ended already, or unknown).
    pub fn cancel<H: CalibrationHost + ?Sized>(&mut self, host: &mut H, id: GoalId) -> bool {
        let Some(node) = self
            .active
            .iter()
            .find_map(|(n, a)| (a.id == id).then_some(*n))
        else {
            return false;
        };
        let Some(a) = self.active.remove(&node) else {
            return false;
        };
        if let Some(port) = self.ports.get_mut(&a.robot) {
            let _ = port.nrt_send(CalCommand::Abort);
        }
        let _ = host.request_owner(a.robot, a.restore);
        self.end(
            node,
            a.handle,
            End::Canceled,
            CalResult::failed("cancelled"),
        );
        true
    }

    /// Follows the owners; a robot that goes away ends its goal.
    pub fn on_engine_event(&mut self, event: &EngineEvent) {
        match event {
            EngineEvent::RobotRemoved { node, .. } => {
                if let Some(a) = self.active.remove(node) {
                    let why = CalResult::failed("the robot went away");
                    self.end(*node, a.handle, End::Aborted, why);
                }
            }
            EngineEvent::Owner { robot, owner, .. } => {
                self.owners.insert(*robot, *owner);
            }
            _ => {}
        }
    }

    /// Takes the controllers' reports (feedback, the next wheel, the end) and ends the runs that did not start in
    /// time (never waits).
    pub fn serve<H: CalibrationHost + ?Sized>(&mut self, host: &mut H, now: Instant) {
        let nodes: Vec<NodeId> = self.active.keys().copied().collect();
        for node in nodes {
            self.serve_one(host, node, now);
        }
    }

    fn serve_one<H: CalibrationHost + ?Sized>(&mut self, host: &mut H, node: NodeId, now: Instant) {
        let Some(active) = self.active.get_mut(&node) else {
            return;
        };
        let Some(port) = self.ports.get_mut(&active.robot) else {
            return;
        };
        // (why it failed, the fitted wheels when it did not, whether the previous owner gets the wheels back)
        let mut end: Option<(String, Option<Vec<WheelResult>>, bool)> = None;
        while let Some(report) = port.nrt_next_report() {
            if matches!(report, CalReport::Started { .. }) {
                active.started = true;
            }
            let lost = matches!(
                report,
                CalReport::Failed {
                    reason: CalFailure::OwnerLost,
                    ..
                }
            );
            match active.session.on_report(report) {
                Step::Nothing => {}
                Step::Feedback(f) => active.handle.feedback(&f),
                Step::Next(cmd, f) => {
                    active.handle.feedback(&f);
                    if let Err(e) = port.nrt_send(cmd) {
                        end = Some((e.to_string(), None, true));
                        break;
                    }
                }
                Step::Fitted(results) => {
                    let fit = active.session.fit_feedback();
                    active.handle.feedback(&fit);
                    end = Some((String::new(), Some(results), true));
                    break;
                }
                Step::Failed(why) => {
                    end = Some((why, None, !lost));
                    break;
                }
            }
        }
        if end.is_none() && !active.started && now.duration_since(active.accepted) > START_TIMEOUT {
            let _ = port.nrt_send(CalCommand::Abort);
            let why = "the calibrate_motors controller did not take the wheels (robot not driven, or its state \
                       stale)";
            end = Some((why.to_owned(), None, true));
        }
        let Some((why, results, restore)) = end else {
            return;
        };
        let Some(a) = self.active.remove(&node) else {
            return;
        };
        if restore {
            let _ = host.request_owner(a.robot, a.restore);
        }
        match results {
            Some(results) => self.finish(host, node, a, &results),
            None => {
                self.reporter
                    .warn(&format!("{ACTION} (node {node}): failed: {why}"));
                self.end(node, a.handle, End::Aborted, CalResult::failed(&why));
            }
        }
    }

    /// Writes and applies the fitted calibration (unless a dry run) and sends the result.
    fn finish<H: CalibrationHost + ?Sized>(
        &mut self,
        host: &mut H,
        node: NodeId,
        mut a: Active,
        results: &[WheelResult],
    ) {
        if a.session.plan().dry_run {
            let msg = "dry run: measured and fitted, nothing written";
            let r = CalResult::new(true, msg, results, "");
            return self.end(node, a.handle, End::Succeeded, r);
        }
        a.handle.feedback(&Feedback {
            phase: "writing",
            progress: 1.0,
            ..Feedback::default()
        });
        let configured = host.calibration_file(node);
        let path = if configured.is_empty() {
            calibration_file::default_path().display().to_string()
        } else {
            configured
        };
        let motors: Vec<MotorResult> = results
            .iter()
            .map(|r| MotorResult {
                side: r.wheel.name(),
                parameters: [r.fit.q0, r.fit.q1],
                deadband: r.deadband as f64,
            })
            .collect();
        match host.write_and_apply(node, &path, &motors) {
            Ok(()) => {
                let msg = format!("calibration of node {node} written to {path} and applied");
                self.reporter.info(&format!("{ACTION}: {msg}"));
                let r = CalResult::new(true, &msg, results, &path);
                self.end(node, a.handle, End::Succeeded, r);
            }
            Err(why) => {
                self.reporter
                    .warn(&format!("{ACTION} (node {node}): {why}"));
                let r = CalResult::new(false, &why, results, "");
                self.end(node, a.handle, End::Aborted, r);
            }
        }
    }

    fn end(&self, node: NodeId, handle: Box<dyn GoalHandle>, end: End, result: CalResult) {
        if let Err(e) = handle.finish(end, result) {
            self.reporter.warn(&format!(
                "{ACTION} (node {node}): cannot send the result: {e}"
            ));
        }
    }
}

#[cfg(test)]
#[path = "calibration_tests.rs"]
mod tests;
