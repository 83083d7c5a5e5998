//! The motor calibration action on ROS 2, `/<ns>/calibrate_motors` (`thymio_rt_msgs/action/CalibrateMotors`,
//! r2r's action server on the bridge node), one per driven Thymio that has the controller: a transport of the
//! layer's goal state machine ([`nrt_interface::calibration`], where the checks, the run, the result and their texts
//! are). ROS 2's goal response carries no reason: a rejected goal's reason is on `/rosout` (warning
//! `calibrate_motors (node N): goal rejected: …`).

use super::action_cancels::ActionCancels;
use super::report::Reporter;
use super::spinner::NodeAccess;
use super::thymio_endpoints::topic;
use futures::{FutureExt, Stream, StreamExt};
use handoff::NodeId;
use nrt_engine::engine::{Engine, EngineEvent};
use nrt_interface::calibration::{
    CalResult, Calibration, End, Feedback, Goal, GoalHandle, GoalId, ACTION, CALIBRATE,
};
use r2r::thymio_rt_msgs::action::CalibrateMotors;
use r2r::{ActionServerGoal, ActionServerGoalRequest};
use std::collections::BTreeMap;
use std::time::Instant;

type Goals = Box<dyn Stream<Item = ActionServerGoalRequest<CalibrateMotors::Action>> + Unpin>;

/// Every driven robot's `calibrate_motors` action server.
pub struct CalibrationActions {
    servers: BTreeMap<NodeId, Goals>,
    /// The cancel requests of the goals running.
    cancels: ActionCancels<GoalId>,
    reporter: Reporter,
}

impl CalibrationActions {
    /// No action server yet.
    pub fn new(reporter: Reporter) -> CalibrationActions {
        CalibrationActions {
            servers: BTreeMap::new(),
            cancels: ActionCancels::new(),
            reporter,
        }
    }

    /// Creates an action server for each robot the layer serves as it comes (r2r cannot remove one: it stays,
    /// its goals rejected while the robot is gone, and is reused if the robot comes back).
    pub fn on_engine_event(
        &mut self,
        ros: &mut NodeAccess,
        engine: &Engine,
        cal: &Calibration,
        event: &EngineEvent,
    ) {
        let EngineEvent::RobotReady { node, robot } = event else {
            return;
        };
        if !cal.serves(CALIBRATE, *robot) || self.servers.contains_key(node) {
            return;
        }
        let ns = nrt_interface::frames::robot_namespace(engine, *node);
        match ros
            .get()
            .create_action_server::<CalibrateMotors::Action>(&topic(&ns, ACTION))
        {
            Ok(goals) => {
                self.servers.insert(*node, Box::new(goals));
            }
            Err(e) => self
                .reporter
                .error(&format!("node {node}: no {ACTION} action: {e}")),
        }
    }

    /// Hands the goals and cancels that came to the layer (never blocks); whether it accepted a cancel (r2r sends
    /// the answer at its spinner's next wait: wake it).
    pub fn serve(&mut self, engine: &mut Engine, cal: &mut Calibration, now: Instant) -> bool {
        for (node, goals) in self.servers.iter_mut() {
            while let Some(Some(req)) = goals.next().now_or_never() {
                let g = &req.goal;
                let goal = Goal {
                    motor_speeds: g.motor_speeds.clone(),
                    motors: g.motors.clone(),
                    samples: g.samples,
                    timeout: g.timeout,
                    dry_run: g.dry_run,
                };
                let Ok(plan) = cal.check(engine, *node, &goal) else {
                    let _ = req.reject();
                    continue;
                };
                match req.accept() {
                    Ok((goal, cancels)) => {
                        let id = cal.start(engine, *node, plan, Box::new(Ros2Goal(goal)), now);
                        self.cancels.insert(id, cancels);
                    }
                    Err(e) => self.reporter.warn(&format!(
                        "{ACTION} (node {node}): cannot accept a goal: {e}"
                    )),
                }
            }
        }
        let cancelled = self.cancels.accept_all(|id| cal.is_active(id));
        for &id in &cancelled {
            cal.cancel(engine, id);
        }
        !cancelled.is_empty()
    }
}

/// An accepted goal of r2r's action server.
struct Ros2Goal(ActionServerGoal<CalibrateMotors::Action>);

impl GoalHandle for Ros2Goal {
    fn feedback(&mut self, f: &Feedback) {
        let _ = self.0.publish_feedback(CalibrateMotors::Feedback {
            phase: f.phase.to_owned(),
            motor: f.motor.to_owned(),
            motor_speed: f.motor_speed,
            measured_speed: f.measured_speed,
            samples: f.samples,
            progress: f.progress,
        });
    }

    fn finish(mut self: Box<Self>, end: End, r: CalResult) -> Result<(), String> {
        let result = CalibrateMotors::Result {
            success: r.success,
            message: r.message,
            left_q0: r.left_q0,
            left_q1: r.left_q1,
            right_q0: r.right_q0,
            right_q1: r.right_q1,
            left_deadband: r.left_deadband,
            right_deadband: r.right_deadband,
            calibration_file: r.calibration_file,
        };
        match end {
            End::Succeeded => self.0.succeed(result),
            End::Aborted => self.0.abort(result),
            End::Canceled => self.0.cancel(result),
        }
        .map_err(|e| e.to_string())
    }
}
