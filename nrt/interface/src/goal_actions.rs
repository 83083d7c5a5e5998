//! The goal actions (`drive_distance`, `rotate_angle`, `navigate_to_position`; `thymio_rt_msgs/DriveDistance`,
//! `RotateAngle`, `NavigateToPosition`), described once for every front end: a kind ([`GoalKind`]) of the layer's one
//! action state machine, [`crate::action`] (a field of [`crate::Interface`] beside [`crate::calibration`]). The front ends are
//! transports: each hands the goals it receives to [`GoalActions::check`] and [`GoalActions::start`], its cancels to
//! [`GoalActions::cancel`], and gets feedback and the result back through the goal's [`ActionHandle`]. Each
//! action drives the RT controller of the same name (`rt::controllers::goal`, through its private goal port).
//!
//! A goal is checked first: a robot that is not driven, has no such controller, already runs a goal (of any of
//! the three actions) or whose wheels are held (a managed node that is not active), or a goal out of range
//! ([`handoff::Goal::check`]: numbers finite, targets within the odometry frame's ±10 km, speed limits 0 — the
//! controller's parameter — or from the slowest that moves the robot), is **rejected**, the reason reported
//! (`drive_distance (node N): goal rejected: …`). An accepted goal makes the controller the robot's owner (the
//! previous owner is kept), the controller reports feedback (what is left, the pose) and the end; then the previous
//! owner gets the wheels back. A cancel stops the robot at once and gives the wheels back. The controller aborts a
//! goal when the cliff reflex or the obstacle stop holds the robot, on a stall, or when the link goes down (the
//! previous owner gets the wheels back); a `switch_controller` to another owner during the goal aborts it and
//! leaves the wheels to that owner; a robot that goes away aborts it; a controller that does not take the wheels
//! within [`START_TIMEOUT`] aborts it; a managed node deactivated during the goal aborts it (`inactive`), an emergency stop aborts it
//! (`emergency_stop`) and refuses new goals until it is released; the pick-up stop holding the robot aborts it
//! (`picked_up`).
//!
//! **A goal whose client is gone is aborted** (`client_gone`): a front end that can tell reports, for each of its
//! action servers with a goal running, whether anyone listens to the action's status or feedback
//! ([`GoalActions::client_listening`]: ROS 2, a subscriber in the DDS graph; ROS 1, a connected subscriber of
//! actionlib's `status`/`feedback` topics). Every action client listens to them while its goal runs, so when nobody
//! has for [`CLIENT_GONE_TIMEOUT`] the goal's client died or left: the robot stops and the previous owner gets the
//! wheels back. A front end that never reports (none of the built-in ones) leaves its goals to run to their end.

pub use crate::action::ActionHandle;
pub use crate::action::{ActionId, End, GoalId, CLIENT_GONE_TIMEOUT, START_TIMEOUT};
use crate::action::{ActionKind, Actions, ActiveGoal, OnEngine};
use handoff::{
    Goal, GoalAbort, GoalCommand, GoalReport, NodeId, NrtGoalPort, OwnerId, Pose2, RobotId,
};
use nrt_engine::engine::Engine;

/// The actions (and their RT controllers' names, their owner names), in this order.
pub const ACTIONS: [&str; 3] = ["drive_distance", "rotate_angle", "navigate_to_position"];

impl ActionId {
    /// The action's name.
    pub fn name(self) -> &'static str {
        ACTIONS.get(self.0).copied().unwrap_or("?")
    }

    /// By name.
    pub fn from_name(name: &str) -> Option<ActionId> {
        ACTIONS.iter().position(|a| *a == name).map(ActionId)
    }

    /// The action of `goal`.
    pub fn of(goal: &Goal) -> ActionId {
        ActionId(match goal {
            Goal::DriveDistance { .. } => 0,
            Goal::RotateAngle { .. } => 1,
            Goal::NavigateToPosition { .. } => 2,
        })
    }
}

/// An action's feedback, as the messages': what is left (m, or rad for `rotate_angle`) and the odometry pose.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct GoalFeedback {
    /// Distance (m) or angle (rad) left.
    pub remaining: f64,
    /// Odometry pose.
    pub pose: Pose2,
}

/// An action's result, as the messages'.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GoalResult {
    /// Reached.
    pub success: bool,
    /// What happened (the abort's reason).
    pub message: String,
    /// Why it was aborted: `cliff`, `obstacle`, `stall`, `owner_lost`, `link_lost`, `bad_goal`, `timeout`,
    /// `robot_removed`, `inactive`, `emergency_stop`, `picked_up`, `client_gone`; "" otherwise.
    pub reason: &'static str,
    /// Final odometry pose (the last known).
    pub pose: Pose2,
}

impl GoalResult {
    fn failed(reason: &'static str, message: &str, pose: Pose2) -> GoalResult {
        GoalResult {
            success: false,
            message: message.to_owned(),
            reason,
            pose,
        }
    }
}

/// The short name of an abort's reason (the result's `reason` field).
pub fn abort_name(reason: GoalAbort) -> &'static str {
    match reason {
        GoalAbort::Cliff => "cliff",
        GoalAbort::Obstacle => "obstacle",
        GoalAbort::Stall => "stall",
        GoalAbort::OwnerLost => "owner_lost",
        GoalAbort::LinkLost => "link_lost",
        GoalAbort::BadGoal => "bad_goal",
    }
}

/// What the goal actions need of the engine ([`Engine`] is it; the unit tests give their own).
pub trait GoalHost {
    /// The robot driven on `node`; `None` if not driven.
    fn robot(&self, node: NodeId) -> Option<RobotId>;
    /// Asks the RT thread to give `robot`'s wheels to `owner`.
    fn request_owner(&mut self, robot: RobotId, owner: OwnerId) -> Result<(), String>;
    /// Whether the RT loop holds the wheels of the robot on `node` at zero (a managed node that is not active).
    fn held(&self, node: NodeId) -> bool;
    /// Whether the emergency stop holds the wheels of the robot on `node` (none by default).
    fn emergency_stopped(&self, _node: NodeId) -> bool {
        false
    }
    /// Whether the RT pick-up reflex holds the wheels of the robot on `node` (none by default).
    fn picked_up(&self, _node: NodeId) -> bool {
        false
    }
}

impl GoalHost for Engine {
    fn robot(&self, node: NodeId) -> Option<RobotId> {
        self.robots().of_node(node).map(|s| s.robot)
    }

    fn request_owner(&mut self, robot: RobotId, owner: OwnerId) -> Result<(), String> {
        self.live_params()
            .nrt_request_owner(robot, owner)
            .map_err(|e| e.to_string())
    }

    fn held(&self, node: NodeId) -> bool {
        self.wheels_held(node)
    }

    fn emergency_stopped(&self, node: NodeId) -> bool {
        self.emergency_stop_holds(node)
    }

    fn picked_up(&self, node: NodeId) -> bool {
        self.picked_up_holds(node)
    }
}

/// The goal actions' kind of [`Actions`]: the state machine's own parts for a goal controller.
pub struct GoalKind;

/// Every driven robot's goals of the three actions (see the module documentation).
pub type GoalActions = Actions<GoalKind>;

impl ActionKind for GoalKind {
    type Host = dyn GoalHost;
    type Port = NrtGoalPort;
    type Request = Goal;
    type Accepted = Goal;
    type Feedback = GoalFeedback;
    type Result = GoalResult;
    /// The last known pose.
    type State = Pose2;
    /// How it ended, its result.
    type Ending = (End, GoalResult);
    const NAMES: &'static [&'static str] = &ACTIONS;
    const CANCELED: &'static str = "canceled";
    const NOT_STARTED: &'static str =
        "the controller did not take the wheels (robot not driven, or its state stale)";

    fn robot(host: &Self::Host, node: NodeId) -> Option<RobotId> {
        host.robot(node)
    }

    fn request_owner(host: &mut Self::Host, robot: RobotId, owner: OwnerId) -> Result<(), String> {
        host.request_owner(robot, owner)
    }

    fn action(request: &Goal) -> ActionId {
        ActionId::of(request)
    }

    fn accepted_action(accepted: &Goal) -> ActionId {
        ActionId::of(accepted)
    }

    fn busy(running: &ActiveGoal<Self>) -> String {
        format!("the robot already runs a goal ({})", running.action.name())
    }

    fn check(host: &Self::Host, node: NodeId, goal: &Goal) -> Result<Goal, String> {
        if host.held(node) {
            return Err(HELD.to_owned());
        }
        if host.emergency_stopped(node) {
            return Err(EMERGENCY.to_owned());
        }
        goal.check().map_err(|e| e.to_string())?;
        Ok(*goal)
    }

    fn launch(
        port: &mut NrtGoalPort,
        id: GoalId,
        goal: Goal,
        request: &mut dyn FnMut() -> Result<(), String>,
    ) -> Result<(Pose2, String), String> {
        // reports of an earlier goal are stale
        while port.nrt_next_report().is_some() {}
        let rt_id = rt_id(id);
        let requested = port
            .nrt_send(GoalCommand::Start { id: rt_id, goal })
            .map_err(|e| e.to_string())
            .and_then(|()| request());
        if let Err(e) = requested {
            let _ = port.nrt_send(GoalCommand::Cancel { id: rt_id });
            return Err(e);
        }
        Ok((Pose2::default(), format!("goal {goal:?}")))
    }

    fn stop(port: &mut NrtGoalPort, id: GoalId) {
        let _ = port.nrt_send(GoalCommand::Cancel { id: rt_id(id) });
    }

    fn failed(pose: Option<&Pose2>, reason: &'static str, why: &str) -> GoalResult {
        GoalResult::failed(reason, why, pose.copied().unwrap_or_default())
    }

    fn aborted(goal: &ActiveGoal<Self>, reason: &'static str, why: &str) -> (End, GoalResult) {
        (End::Aborted, GoalResult::failed(reason, why, goal.state))
    }

    fn poll(
        host: &Self::Host,
        node: NodeId,
        port: &mut NrtGoalPort,
        a: &mut ActiveGoal<Self>,
    ) -> Option<((End, GoalResult), bool)> {
        let want = rt_id(a.id);
        while let Some(report) = port.nrt_next_report() {
            if report.id() != want {
                continue;
            }
            match report {
                GoalReport::Started { .. } => a.started = true,
                GoalReport::Feedback {
                    remaining, pose, ..
                } => {
                    a.state = pose;
                    a.handle.feedback(&GoalFeedback { remaining, pose });
                }
                GoalReport::Succeeded { pose, .. } => {
                    let r = GoalResult {
                        success: true,
                        message: "goal reached".to_owned(),
                        reason: "",
                        pose,
                    };
                    return Some(((End::Succeeded, r), true));
                }
                GoalReport::Canceled { pose, .. } => {
                    let r = GoalResult::failed("", "canceled by the controller", pose);
                    return Some(((End::Canceled, r), true));
                }
                GoalReport::Aborted { reason, pose, .. } => {
                    let r = GoalResult::failed(abort_name(reason), reason.message(), pose);
                    return Some(((End::Aborted, r), reason != GoalAbort::OwnerLost));
                }
            }
        }
        let held = wheel_hold(host, node)?;
        let _ = port.nrt_send(GoalCommand::Cancel { id: want });
        Some((Self::aborted(a, held.0, held.1), true))
    }

    fn conclude(
        core: &GoalActions,
        _: &mut Self::Host,
        node: NodeId,
        a: ActiveGoal<Self>,
        (how, result): (End, GoalResult),
    ) {
        if how == End::Aborted {
            core.reporter().warn(&format!(
                "{} (node {node}): aborted: {}",
                a.action.name(),
                result.message
            ));
        }
        core.end(a.action, node, a.handle, how, result);
    }

    fn message(result: &GoalResult) -> &str {
        &result.message
    }
}

impl OnEngine for GoalKind {
    fn host(engine: &mut Engine) -> &mut Self::Host {
        engine
    }

    fn host_ref(engine: &Engine) -> &Self::Host {
        engine
    }
}

/// What holds the wheels of the robot on `node` at zero whatever its owner commands, if anything: the abort reason's
/// name and why (the emergency stop first, then the pick-up stop, then a managed node that is not active). Goals and
/// calibration runs end on it: the RT loop holds the wheels, so a goal cannot progress and a calibration would fit
/// wheels that were not allowed to turn.
pub(crate) fn wheel_hold(
    host: &dyn GoalHost,
    node: NodeId,
) -> Option<(&'static str, &'static str)> {
    if host.emergency_stopped(node) {
        Some(("emergency_stop", EMERGENCY))
    } else if host.picked_up(node) {
        Some(("picked_up", PICKED_UP))
    } else if host.held(node) {
        Some(("inactive", HELD))
    } else {
        None
    }
}

/// The RT controller's id of the layer's goal `id` (the layer's ids are unique; the RT ones wrap after 2³²).
fn rt_id(id: GoalId) -> handoff::GoalId {
    handoff::GoalId(id.0 as u32)
}

/// Why a goal ends when the robot is picked up.
const PICKED_UP: &str = "the robot left the floor: the pick-up stop holds its wheels";

/// Why a goal is refused, or ended, while the emergency stop holds the robot's wheels.
const EMERGENCY: &str =
    "the robot's wheels are held by its emergency stop (call emergency_stop with false to release them)";

/// Why a goal is refused, or ended, while the robot's wheels are held.
const HELD: &str =
    "the robot's wheels are held: its managed node is not active (lifecycle: configure and activate it first)";

#[cfg(test)]
#[path = "goal_actions_tests.rs"]
mod tests;
