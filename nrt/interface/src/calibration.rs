//! The motor calibration action (`calibrate_motors`, `thymio_rt_msgs/CalibrateMotors`), described once: a kind
//! ([`CalKind`]) of the layer's one action state machine, [`crate::action`], beside the goal actions; every driven
//! Thymio's goals, shared by every front end (a field of [`crate::Interface`]). The front ends
//! are transports: ROS 2 an r2r action server, ROS 1 an actionlib server; each hands the goals it receives to
//! [`Calibration::check`] and [`Calibration::start`], its cancels to [`Calibration::cancel`], and gets feedback and
//! the result back through the goal's [`ActionHandle`]. It drives `rt::controllers::calibration` (the RT controller that
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
//! the wheels to that owner; a robot that goes away aborts it (`the robot went away`). While the RT loop holds the
//! wheels at zero (the emergency stop, the pick-up stop, a managed node that is not active) a goal is rejected and a
//! run under way aborted with that hold's reason (the goal actions' texts): what it measured would be the hold.

pub use crate::action::ActionHandle;
use crate::action::{ActionId, ActionKind, Actions, ActiveGoal, OnEngine};
pub use crate::action::{End, GoalId, START_TIMEOUT};
use handoff::{
    CalCommand, CalFailure, CalReport, NodeId, NrtCalibrationPort, OwnerId, RobotId, Wheel,
};
use nrt_engine::engine::Engine;
use nrt_engine::thymio::calibration_file::{self, MotorResult};
use nrt_engine::thymio::calibration_run::{self, Plan, Session, Step, WheelResult};

pub use nrt_engine::thymio::calibration_run::{Feedback, Goal};

/// The action's name under the robot's namespace (and the RT controller's name, its owner name).
pub const ACTION: &str = "calibrate_motors";
/// The action, the only one of its kind.
pub const CALIBRATE: ActionId = ActionId(0);

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
    /// Why the RT loop holds the wheels of the robot on `node` at zero whatever its owner commands (the emergency
    /// stop, the pick-up stop, a managed node that is not active), if it does: no run starts, and a run under way
    /// ends, since the wheels it measures may not turn (none by default).
    fn wheel_hold(&self, _node: NodeId) -> Option<&'static str> {
        None
    }
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

    fn wheel_hold(&self, node: NodeId) -> Option<&'static str> {
        crate::goal_actions::wheel_hold(self, node).map(|(_, why)| why)
    }
}

/// The calibration's kind of [`Actions`]: the state machine's own parts for the calibration controller.
pub struct CalKind;

/// Every driven robot's calibration goals (see the module documentation).
pub type Calibration = Actions<CalKind>;

impl ActionKind for CalKind {
    type Host = dyn CalibrationHost;
    type Port = NrtCalibrationPort;
    type Request = Goal;
    type Accepted = Plan;
    type Feedback = Feedback;
    type Result = CalResult;
    type State = Session;
    /// The fitted wheels, or why it failed.
    type Ending = Result<Vec<WheelResult>, String>;
    const NAMES: &'static [&'static str] = &[ACTION];
    const CANCELED: &'static str = "cancelled";
    const NOT_STARTED: &'static str =
        "the calibrate_motors controller did not take the wheels (robot not \
                                       driven, or its state stale)";

    fn robot(host: &Self::Host, node: NodeId) -> Option<RobotId> {
        host.robot(node).map(|(r, _, _)| r)
    }

    fn request_owner(host: &mut Self::Host, robot: RobotId, owner: OwnerId) -> Result<(), String> {
        host.request_owner(robot, owner)
    }

    fn action(_: &Goal) -> ActionId {
        CALIBRATE
    }

    fn accepted_action(_: &Plan) -> ActionId {
        CALIBRATE
    }

    fn busy(_: &ActiveGoal<Self>) -> String {
        "the robot is already calibrating".to_owned()
    }

    fn check(host: &Self::Host, node: NodeId, goal: &Goal) -> Result<Plan, String> {
        let (_, q0, axis) = host.robot(node).ok_or("the robot is not driven")?;
        if let Some(why) = host.wheel_hold(node) {
            return Err(why.to_owned());
        }
        calibration_run::plan(goal, q0, axis).map_err(|e| e.to_string())
    }

    fn launch(
        port: &mut NrtCalibrationPort,
        _: GoalId,
        plan: Plan,
        request: &mut dyn FnMut() -> Result<(), String>,
    ) -> Result<(Session, String), String> {
        // reports of an earlier run are stale
        while port.nrt_next_report().is_some() {}
        let (session, first) = Session::start(plan);
        request()?;
        port.nrt_send(first).map_err(|e| e.to_string())?;
        let plan = session.plan();
        let what = format!("calibrating {:?} at {:?} units", plan.wheels, plan.speeds);
        Ok((session, what))
    }

    fn stop(port: &mut NrtCalibrationPort, _: GoalId) {
        let _ = port.nrt_send(CalCommand::Abort);
    }

    fn failed(_: Option<&Session>, _: &'static str, why: &str) -> CalResult {
        CalResult::failed(why)
    }

    fn aborted(
        _: &ActiveGoal<Self>,
        _: &'static str,
        why: &str,
    ) -> Result<Vec<WheelResult>, String> {
        Err(why.to_owned())
    }

    fn poll(
        host: &Self::Host,
        node: NodeId,
        port: &mut NrtCalibrationPort,
        a: &mut ActiveGoal<Self>,
    ) -> Option<(Result<Vec<WheelResult>, String>, bool)> {
        while let Some(report) = port.nrt_next_report() {
            if matches!(report, CalReport::Started { .. }) {
                a.started = true;
            }
            let lost = matches!(
                report,
                CalReport::Failed {
                    reason: CalFailure::OwnerLost,
                    ..
                }
            );
            match a.state.on_report(report) {
                Step::Nothing => {}
                Step::Feedback(f) => a.handle.feedback(&f),
                Step::Next(cmd, f) => {
                    a.handle.feedback(&f);
                    if let Err(e) = port.nrt_send(cmd) {
                        return Some((Err(e.to_string()), true));
                    }
                }
                Step::Fitted(results) => {
                    let fit = a.state.fit_feedback();
                    a.handle.feedback(&fit);
                    return Some((Ok(results), true));
                }
                // the previous owner gets the wheels back unless another took them
                Step::Failed(why) => return Some((Err(why), !lost)),
            }
        }
        // held at zero: what it would measure now is the hold, not the wheels
        let why = host.wheel_hold(node)?;
        let _ = port.nrt_send(CalCommand::Abort);
        Some((Err(why.to_owned()), true))
    }

    fn conclude(
        core: &Calibration,
        host: &mut Self::Host,
        node: NodeId,
        a: ActiveGoal<Self>,
        ending: Result<Vec<WheelResult>, String>,
    ) {
        match ending {
            Ok(results) => finish(core, host, node, a, &results),
            Err(why) => {
                core.reporter()
                    .warn(&format!("{ACTION} (node {node}): failed: {why}"));
                core.end(
                    CALIBRATE,
                    node,
                    a.handle,
                    End::Aborted,
                    CalResult::failed(&why),
                );
            }
        }
    }

    fn message(result: &CalResult) -> &str {
        &result.message
    }
}

impl OnEngine for CalKind {
    fn host(engine: &mut Engine) -> &mut Self::Host {
        engine
    }

    fn host_ref(engine: &Engine) -> &Self::Host {
        engine
    }
}

/// Writes and applies the fitted calibration (unless a dry run) and sends the result.
fn finish(
    core: &Calibration,
    host: &mut dyn CalibrationHost,
    node: NodeId,
    mut a: ActiveGoal<CalKind>,
    results: &[WheelResult],
) {
    if a.state.plan().dry_run {
        let msg = "dry run: measured and fitted, nothing written";
        let r = CalResult::new(true, msg, results, "");
        return core.end(CALIBRATE, node, a.handle, End::Succeeded, r);
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
            core.reporter().info(&format!("{ACTION}: {msg}"));
            let r = CalResult::new(true, &msg, results, &path);
            core.end(CALIBRATE, node, a.handle, End::Succeeded, r);
        }
        Err(why) => {
            core.reporter()
                .warn(&format!("{ACTION} (node {node}): {why}"));
            let r = CalResult::new(false, &why, results, "");
            core.end(CALIBRATE, node, a.handle, End::Aborted, r);
        }
    }
}

#[cfg(test)]
#[path = "calibration_tests.rs"]
mod tests;
