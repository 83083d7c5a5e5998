//! The motor calibration action, `/<ns>/calibrate_motors` (`thymio_rt_msgs/action/CalibrateMotors`,
//! r2r's action server on the bridge node), one per driven Thymio: the ROS side of
//! `rt::controllers::calibration` (the RT controller that drives the wheels and times the line
//! crossings) and `nrt_engine::thymio::calibration_run` (the plan, the session and the fit).
//!
//! A goal is checked first: a bad one (a speed outside 1..500, fewer than two distinct speeds, an
//! unknown motor, a bad timeout) or a goal while the robot already calibrates is **rejected**
//! (ROS 2's goal response carries no reason: the reason is logged, `/rosout` warning
//! `calibrate_motors: goal rejected: …`). An accepted goal makes `calibrate_motors` the robot's
//! owner (the previous owner is kept), runs each wheel and publishes feedback; at the end the
//! previous owner gets the wheels back and, unless `dry_run`, the robot's entry is merged into its
//! calibration file (`calibration_file`, or ROS-Thymio's default location when empty) and
//! applied live ([`Engine::reload_robot_calibration`]). A cancel stops the robot at once (the
//! controller's next cycle commands zero) and gives the wheels back. A `switch_controller` to
//! another owner during the run aborts the goal (`another owner took the wheels`) and leaves the
//! wheels to that owner.

use super::report::Reporter;
use super::thymio_endpoints::topic;
use futures::{FutureExt, Stream, StreamExt};
use msgs::handoff::{
    CalCommand, CalReport, NodeId, NrtCalibrationPort, NrtControl, OwnerId, RobotId,
};
use nrt_engine::engine::{Engine, EngineEvent};
use nrt_engine::thymio::calibration_file::{self, MotorResult};
use nrt_engine::thymio::calibration_run::{self, Feedback, Goal, Session, Step, WheelResult};
use r2r::thymio_rt_msgs::action::CalibrateMotors;
use r2r::{ActionServerCancelRequest, ActionServerGoal, ActionServerGoalRequest};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// The action's name under the robot's namespace.
pub const ACTION: &str = "calibrate_motors";
/// How long the controller may take to start a run after the goal was accepted.
const START_TIMEOUT: Duration = Duration::from_secs(3);

type Goals = Box<dyn Stream<Item = ActionServerGoalRequest<CalibrateMotors::Action>> + Unpin>;
type Cancels = Box<dyn Stream<Item = ActionServerCancelRequest> + Unpin>;

struct Active {
    goal: ActionServerGoal<CalibrateMotors::Action>,
    cancels: Cancels,
    session: Session,
    /// The owner before the run, given the wheels back at the end.
    restore: OwnerId,
    accepted: Instant,
    started: bool,
}

struct Server {
    robot: RobotId,
    goals: Goals,
    active: Option<Active>,
}

/// Every driven robot's `calibrate_motors` action server.
pub struct CalibrationActions {
    owner: OwnerId,
    ports: BTreeMap<RobotId, NrtCalibrationPort>,
    servers: BTreeMap<NodeId, Server>,
    owners: BTreeMap<RobotId, OwnerId>,
    reporter: Reporter,
}

impl CalibrationActions {
    /// Takes the calibration controller's private ports out of `control` (the rest stays for
    /// the code that serves the other controllers); `None` if the registry has no
    /// `calibrate_motors`.
    pub fn take(control: &mut NrtControl, reporter: Reporter) -> Option<CalibrationActions> {
        let owner = control.names.id(rt_name())?;
        let mut ports = BTreeMap::new();
        for p in control
            .ports
            .iter_mut()
            .filter(|p| p.controller == rt_name())
        {
            let Some(private) = p.private.take() else {
                continue;
            };
            if let Ok(port) = private.0.downcast::<NrtCalibrationPort>() {
                ports.insert(p.robot, *port);
            }
        }
        Some(CalibrationActions {
            owner,
            ports,
            servers: BTreeMap::new(),
            owners: BTreeMap::new(),
            reporter,
        })
    }

    /// Creates and removes the action servers as robots come and go; follows the owners.
    pub fn on_engine_event(&mut self, ros: &mut r2r::Node, engine: &Engine, event: &EngineEvent) {
        match event {
            EngineEvent::RobotReady { node, robot } if self.ports.contains_key(robot) => {
                if self.servers.contains_key(node) {
                    return;
                }
                let ns = engine
                    .network()
                    .node(*node)
                    .map(|n| n.namespace().trim_matches('/').to_owned())
                    .unwrap_or_default();
                match ros.create_action_server::<CalibrateMotors::Action>(&topic(&ns, ACTION)) {
                    Ok(goals) => {
                        self.servers.insert(
                            *node,
                            Server {
                                robot: *robot,
                                goals: Box::new(goals),
                                active: None,
                            },
                        );
                    }
                    Err(e) => self
                        .reporter
                        .error(&format!("node {node}: no {ACTION} action: {e}")),
                }
            }
            EngineEvent::RobotRemoved { node, .. } => {
                // r2r cannot remove an action server: it stays, refusing goals for a robot that
                // is gone, and is reused if the robot comes back.
                if let Some(s) = self.servers.get_mut(node) {
                    if let Some(mut a) = s.active.take() {
                        let _ = a.goal.abort(result(false, "the robot went away", None, ""));
                    }
                }
            }
            EngineEvent::Owner { robot, owner, .. } => {
                self.owners.insert(*robot, *owner);
            }
            _ => {}
        }
    }

    /// Serves goals, cancels and the controllers' reports (never blocks).
    pub fn poll(&mut self, engine: &mut Engine) {
        let nodes: Vec<NodeId> = self.servers.keys().copied().collect();
        for node in nodes {
            self.poll_goals(engine, node);
            self.poll_active(engine, node);
        }
    }

    fn poll_goals(&mut self, engine: &mut Engine, node: NodeId) {
        let Some(server) = self.servers.get_mut(&node) else {
            return;
        };
        while let Some(Some(req)) = server.goals.next().now_or_never() {
            let goal = Goal {
                motor_speeds: req.goal.motor_speeds.clone(),
                motors: req.goal.motors.clone(),
                samples: req.goal.samples,
                timeout: req.goal.timeout,
                dry_run: req.goal.dry_run,
            };
            let driven = engine.robots().of_node(node).map(|s| s.calibration.clone());
            let checked = match (&server.active, driven) {
                (Some(_), _) => Err("the robot is already calibrating".to_owned()),
                (None, None) => Err("the robot is not driven".to_owned()),
                (None, Some(c)) => {
                    let q0 = c.left.parameters[0].min(c.right.parameters[0]);
                    calibration_run::plan(&goal, q0, c.axis_length).map_err(|e| e.to_string())
                }
            };
            let plan = match checked {
                Ok(p) => p,
                Err(why) => {
                    self.reporter
                        .warn(&format!("{ACTION} (node {node}): goal rejected: {why}"));
                    let _ = req.reject();
                    continue;
                }
            };
            let (goal, cancels) = match req.accept() {
                Ok(g) => g,
                Err(e) => {
                    self.reporter.warn(&format!(
                        "{ACTION} (node {node}): cannot accept a goal: {e}"
                    ));
                    continue;
                }
            };
            let robot = server.robot;
            let Some(port) = self.ports.get_mut(&robot) else {
                continue;
            };
            // reports of an earlier run are stale
            while port.nrt_next_report().is_some() {}
            let (session, first) = Session::start(plan);
            let restore = self.owners.get(&robot).copied().unwrap_or(OwnerId::ROS);
            let mut active = Active {
                goal,
                cancels: Box::new(cancels),
                session,
                restore,
                accepted: Instant::now(),
                started: false,
            };
            let requested = engine
                .live_params()
                .nrt_request_owner(robot, self.owner)
                .map_err(|e| e.to_string())
                .and_then(|()| port.nrt_send(first).map_err(|e| e.to_string()));
            if let Err(e) = requested {
                let _ = active.goal.abort(result(false, &e, None, ""));
                continue;
            }
            self.reporter.info(&format!(
                "{ACTION} (node {node}): calibrating {:?} at {:?} units",
                active.session.plan().wheels,
                active.session.plan().speeds
            ));
            server.active = Some(active);
        }
    }

    fn poll_active(&mut self, engine: &mut Engine, node: NodeId) {
        let Some(server) = self.servers.get_mut(&node) else {
            return;
        };
        let robot = server.robot;
        let (Some(active), Some(port)) = (server.active.as_mut(), self.ports.get_mut(&robot))
        else {
            return;
        };
        // a cancel: stop at once, give the wheels back
        if let Some(Some(cancel)) = active.cancels.next().now_or_never() {
            cancel.accept();
            let _ = port.nrt_send(CalCommand::Abort);
            let _ = engine
                .live_params()
                .nrt_request_owner(robot, active.restore);
            let _ = active.goal.cancel(result(false, "cancelled", None, ""));
            server.active = None;
            return;
        }
        let mut end: Option<(bool, String, Option<Vec<WheelResult>>, bool)> = None;
        while let Some(report) = port.nrt_next_report() {
            if matches!(report, CalReport::Started { .. }) {
                active.started = true;
            }
            let lost = matches!(
                report,
                CalReport::Failed {
                    reason: msgs::handoff::CalFailure::OwnerLost,
                    ..
                }
            );
            match active.session.on_report(report) {
                Step::Nothing => {}
                Step::Feedback(f) => publish(&active.goal, f),
                Step::Next(cmd, f) => {
                    publish(&active.goal, f);
                    if let Err(e) = port.nrt_send(cmd) {
                        end = Some((false, e.to_string(), None, true));
                        break;
                    }
                }
                Step::Fitted(results) => {
                    publish(&active.goal, active.session.fit_feedback());
                    end = Some((true, String::new(), Some(results), true));
                    break;
                }
                Step::Failed(why) => {
                    end = Some((false, why, None, !lost));
                    break;
                }
            }
        }
        if end.is_none() && !active.started && active.accepted.elapsed() > START_TIMEOUT {
            let _ = port.nrt_send(CalCommand::Abort);
            let why = "the calibrate_motors controller did not take the wheels (robot not driven, or its state stale)";
            end = Some((false, why.to_owned(), None, true));
        }
        let Some((ok, why, results, restore)) = end else {
            return;
        };
        let Some(mut active) = server.active.take() else {
            return;
        };
        if restore {
            let _ = engine
                .live_params()
                .nrt_request_owner(robot, active.restore);
        }
        let msg = match (ok, results) {
            (true, Some(results)) => finish(engine, node, &mut active, &results, &self.reporter),
            _ => {
                self.reporter
                    .warn(&format!("{ACTION} (node {node}): failed: {why}"));
                active.goal.abort(result(false, &why, None, ""))
            }
        };
        if let Err(e) = msg {
            self.reporter.warn(&format!(
                "{ACTION} (node {node}): cannot send the result: {e}"
            ));
        }
    }
}

fn rt_name() -> &'static str {
    ACTION
}

/// Writes and applies the fitted calibration (unless a dry run) and sends the result.
fn finish(
    engine: &mut Engine,
    node: NodeId,
    active: &mut Active,
    results: &[WheelResult],
    reporter: &Reporter,
) -> r2r::Result<()> {
    let motors: Vec<MotorResult> = results
        .iter()
        .map(|r| MotorResult {
            side: r.wheel.name(),
            parameters: [r.fit.q0, r.fit.q1],
            deadband: r.deadband as f64,
        })
        .collect();
    if active.session.plan().dry_run {
        return active.goal.succeed(result(
            true,
            "dry run: measured and fitted, nothing written",
            Some(results),
            "",
        ));
    }
    publish(
        &active.goal,
        Feedback {
            phase: "writing",
            progress: 1.0,
            ..Feedback::default()
        },
    );
    let configured = engine.robot_params(node).calibration_file.clone();
    let path = if configured.is_empty() {
        calibration_file::default_path().display().to_string()
    } else {
        configured
    };
    let applied = calibration_file::write_motors(path.as_ref(), node.0, &motors)
        .map_err(|e| e.to_string())
        .and_then(|()| {
            engine
                .reload_robot_calibration(node, &path)
                .map_err(|e| format!("written to {path} but not applied: {e}"))
        });
    match applied {
        Ok(()) => {
            let msg = format!("calibration of node {node} written to {path} and applied");
            reporter.info(&format!("{ACTION}: {msg}"));
            active
                .goal
                .succeed(result(true, &msg, Some(results), &path))
        }
        Err(why) => {
            reporter.warn(&format!("{ACTION} (node {node}): {why}"));
            active.goal.abort(result(false, &why, Some(results), ""))
        }
    }
}

fn publish(goal: &ActionServerGoal<CalibrateMotors::Action>, f: Feedback) {
    let _ = goal.publish_feedback(CalibrateMotors::Feedback {
        phase: f.phase.to_owned(),
        motor: f.motor.to_owned(),
        motor_speed: f.motor_speed,
        measured_speed: f.measured_speed,
        samples: f.samples,
        progress: f.progress,
    });
}

fn result(
    success: bool,
    message: &str,
    results: Option<&[WheelResult]>,
    file: &str,
) -> CalibrateMotors::Result {
    let mut r = CalibrateMotors::Result {
        success,
        message: message.to_owned(),
        calibration_file: file.to_owned(),
        ..CalibrateMotors::Result::default()
    };
    for w in results.unwrap_or_default() {
        let (q0, q1, d) = (w.fit.q0, w.fit.q1, w.deadband);
        match w.wheel {
            msgs::handoff::Wheel::Left => (r.left_q0, r.left_q1, r.left_deadband) = (q0, q1, d),
            msgs::handoff::Wheel::Right => (r.right_q0, r.right_q1, r.right_deadband) = (q0, q1, d),
        }
    }
    r
}
