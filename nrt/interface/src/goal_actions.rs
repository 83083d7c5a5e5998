//! The goal actions (`drive_distance`, `rotate_angle`, `navigate_to_position`; `thymio_rt_msgs/DriveDistance`,
//! `RotateAngle`, `NavigateToPosition`), described once for every front end: ONE state machine for "a goal
//! controller's action" (a field of [`crate::Interface`] beside [`crate::calibration`]). The front ends are
//! transports: each hands the goals it receives to [`GoalActions::check`] and [`GoalActions::start`], its cancels to
//! [`GoalActions::cancel`], and gets feedback and the result back through the goal's [`GoalActionHandle`]. Each
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

use crate::calibration::End;
use crate::report::Reporter;
use handoff::{
    Goal, GoalAbort, GoalCommand, GoalReport, NodeId, NrtControl, NrtGoalPort, OwnerId, Pose2,
    RobotId,
};
use nrt_engine::engine::{Engine, EngineEvent};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// The actions (and their RT controllers' names, their owner names), in this order.
pub const ACTIONS: [&str; 3] = ["drive_distance", "rotate_angle", "navigate_to_position"];
/// How long the controller may take to start a goal after it was accepted.
pub const START_TIMEOUT: Duration = Duration::from_secs(3);
/// How long a running goal may have nobody listening to its action's status or feedback before it is aborted as
/// `client_gone` (see the module documentation): long enough for a client's subscriptions to be seen after its
/// goal (discovery), short enough that a robot does not drive on for long after its client died.
pub const CLIENT_GONE_TIMEOUT: Duration = Duration::from_secs(2);

/// One of [`ACTIONS`] (its index).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ActionId(pub usize);

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

/// A goal of the layer (any front end's, any of the actions), told apart from every other goal of the process.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct GoalId(pub u64);

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

/// Where the feedback and the result of one accepted goal go (each front end gives its own).
pub trait GoalActionHandle: Send {
    /// Publishes `feedback` (never waits; a lost feedback is not an error of the interface).
    fn feedback(&mut self, feedback: &GoalFeedback);
    /// Ends the goal with `result`; why it could not be sent, if so.
    fn finish(self: Box<Self>, end: End, result: GoalResult) -> Result<(), String>;
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

/// One action's controller: its owner id and private ports.
#[derive(Default)]
struct Served {
    owner: Option<OwnerId>,
    ports: BTreeMap<RobotId, NrtGoalPort>,
}

struct Active {
    id: GoalId,
    action: ActionId,
    robot: RobotId,
    handle: Box<dyn GoalActionHandle>,
    /// The owner before the goal, given the wheels back at the end.
    restore: OwnerId,
    accepted: Instant,
    started: bool,
    pose: Pose2,
    /// When someone last listened to the action's status or feedback; `None` while the front end does not tell.
    listened: Option<Instant>,
}

/// Every driven robot's goals of the three actions (see the module documentation).
pub struct GoalActions {
    served: [Served; 3],
    /// At most one goal per robot, by node.
    active: BTreeMap<NodeId, Active>,
    owners: BTreeMap<RobotId, OwnerId>,
    next: u64,
    reporter: Reporter,
}

impl GoalActions {
    /// No controllers yet: every goal is refused until [`Self::take`].
    pub fn new(reporter: Reporter) -> GoalActions {
        GoalActions {
            served: Default::default(),
            active: BTreeMap::new(),
            owners: BTreeMap::new(),
            next: 0,
            reporter,
        }
    }

    /// Takes the goal controllers' private ports out of `control`; once per process, whatever the front ends.
    /// The actions whose controller is not in the registry are off (said).
    pub fn take(&mut self, control: &mut NrtControl) {
        for (k, name) in ACTIONS.iter().enumerate() {
            let Some(owner) = control.names.id(name) else {
                self.reporter
                    .warn(&format!("no {name} controller: the {name} action is off"));
                continue;
            };
            let mut ports = BTreeMap::new();
            for p in control.ports.iter_mut().filter(|p| p.controller == *name) {
                if let Some(Ok(port)) = p.private.take().map(|x| x.0.downcast::<NrtGoalPort>()) {
                    ports.insert(p.robot, *port);
                }
            }
            self.with_ports(ActionId(k), owner, ports);
        }
    }

    /// Serves `ports` (the controller's private ports by robot slot) for `action`, the controller being `owner`.
    pub fn with_ports(
        &mut self,
        action: ActionId,
        owner: OwnerId,
        ports: BTreeMap<RobotId, NrtGoalPort>,
    ) {
        if let Some(s) = self.served.get_mut(action.0) {
            *s = Served {
                owner: Some(owner),
                ports,
            };
        }
    }

    /// Whether `robot` has `action` (the front ends make its endpoint then).
    pub fn serves(&self, action: ActionId, robot: RobotId) -> bool {
        self.served
            .get(action.0)
            .is_some_and(|s| s.owner.is_some() && s.ports.contains_key(&robot))
    }

    /// Whether goal `id` is still running.
    pub fn is_active(&self, id: GoalId) -> bool {
        self.active.values().any(|a| a.id == id)
    }

    /// Checks `goal` for the robot on `node`, or why it is rejected (reported as the driver's warning).
    pub fn check<H: GoalHost + ?Sized>(
        &self,
        host: &H,
        node: NodeId,
        goal: &Goal,
    ) -> Result<(), String> {
        let action = ActionId::of(goal);
        let checked = if let Some(a) = self.active.get(&node) {
            Err(format!(
                "the robot already runs a goal ({})",
                a.action.name()
            ))
        } else {
            match host.robot(node) {
                None => Err("the robot is not driven".to_owned()),
                Some(robot) if !self.serves(action, robot) => {
                    Err(format!("the robot has no {} controller", action.name()))
                }
                Some(_) if host.held(node) => Err(HELD.to_owned()),
                Some(_) if host.emergency_stopped(node) => Err(EMERGENCY.to_owned()),
                Some(_) => goal.check().map_err(|e| e.to_string()),
            }
        };
        if let Err(why) = &checked {
            self.reporter.warn(&format!(
                "{} (node {node}): goal rejected: {why}",
                action.name()
            ));
        }
        checked
    }

    /// Starts `goal` (checked by [`Self::check`] in the same iteration) on the robot of `node`, its feedback and
    /// result going to `handle`: the controller takes the wheels. A goal that cannot start ends at once, aborted.
    pub fn start<H: GoalHost + ?Sized>(
        &mut self,
        host: &mut H,
        node: NodeId,
        goal: Goal,
        handle: Box<dyn GoalActionHandle>,
        now: Instant,
    ) -> GoalId {
        self.next += 1;
        let id = GoalId(self.next);
        let action = ActionId::of(&goal);
        let name = action.name();
        let robot = host.robot(node);
        let served = self.served.get_mut(action.0);
        let (Some(robot), Some(served)) = (robot, served) else {
            let r = GoalResult::failed("bad_goal", "the robot is not driven", Pose2::default());
            self.end(name, node, handle, End::Aborted, r);
            return id;
        };
        let (Some(owner), Some(port)) = (served.owner, served.ports.get_mut(&robot)) else {
            let why = format!("the robot has no {name} controller");
            let r = GoalResult::failed("bad_goal", &why, Pose2::default());
            self.end(name, node, handle, End::Aborted, r);
            return id;
        };
        // reports of an earlier goal are stale
        while port.nrt_next_report().is_some() {}
        let rt_id = rt_id(id);
        let requested = port
            .nrt_send(GoalCommand::Start { id: rt_id, goal })
            .map_err(|e| e.to_string())
            .and_then(|()| host.request_owner(robot, owner));
        if let Err(e) = requested {
            let _ = port.nrt_send(GoalCommand::Cancel { id: rt_id });
            let r = GoalResult::failed("bad_goal", &e, Pose2::default());
            self.end(name, node, handle, End::Aborted, r);
            return id;
        }
        self.reporter
            .info(&format!("{name} (node {node}): goal {goal:?}"));
        let restore = self.owners.get(&robot).copied().unwrap_or(OwnerId::ROS);
        let active = Active {
            id,
            action,
            robot,
            handle,
            restore,
            accepted: now,
            started: false,
            pose: Pose2::default(),
            listened: None,
        };
        self.active.insert(node, active);
        id
    }

    /// Cancels goal `id`: the robot stops at once and the previous owner gets the wheels back; false if the goal
    /// is not running (ended already, or unknown).
    pub fn cancel<H: GoalHost + ?Sized>(&mut self, host: &mut H, id: GoalId) -> bool {
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
        if let Some(port) = self.port(a.action, a.robot) {
            let _ = port.nrt_send(GoalCommand::Cancel { id: rt_id(id) });
        }
        let _ = host.request_owner(a.robot, a.restore);
        let r = GoalResult {
            message: "canceled".to_owned(),
            pose: a.pose,
            ..GoalResult::default()
        };
        self.end(a.action.name(), node, a.handle, End::Canceled, r);
        true
    }

    /// The front end's word on the robot of `node`'s `action`: whether anyone listens to its status or feedback now
    /// (see the module documentation); about the goal running there, if it is one of `action`.
    pub fn client_listening(
        &mut self,
        node: NodeId,
        action: ActionId,
        listening: bool,
        now: Instant,
    ) {
        let Some(a) = self.active.get_mut(&node).filter(|a| a.action == action) else {
            return;
        };
        // the first word counts from the goal's acceptance: its client may not be seen yet
        let since = a.listened.unwrap_or(a.accepted);
        a.listened = Some(if listening { now } else { since });
    }

    /// The nodes whose goal of `action` runs (the front ends tell [`Self::client_listening`] about these).
    pub fn running(&self, action: ActionId) -> impl Iterator<Item = NodeId> + '_ {
        let it = self.active.iter();
        it.filter_map(move |(n, a)| (a.action == action).then_some(*n))
    }

    /// Follows the owners; a robot that goes away ends its goal.
    pub fn on_engine_event(&mut self, event: &EngineEvent) {
        match event {
            EngineEvent::RobotRemoved { node, .. } => {
                if let Some(a) = self.active.remove(node) {
                    let r = GoalResult::failed("robot_removed", "the robot went away", a.pose);
                    self.end(a.action.name(), *node, a.handle, End::Aborted, r);
                }
            }
            EngineEvent::Owner { robot, owner, .. } => {
                self.owners.insert(*robot, *owner);
            }
            _ => {}
        }
    }

    /// Takes the controllers' reports (feedback, the end) and ends the goals that did not start in time (never
    /// waits).
    pub fn serve<H: GoalHost + ?Sized>(&mut self, host: &mut H, now: Instant) {
        let nodes: Vec<NodeId> = self.active.keys().copied().collect();
        for node in nodes {
            self.serve_one(host, node, now);
        }
    }

    fn port(&mut self, action: ActionId, robot: RobotId) -> Option<&mut NrtGoalPort> {
        self.served.get_mut(action.0)?.ports.get_mut(&robot)
    }

    fn serve_one<H: GoalHost + ?Sized>(&mut self, host: &mut H, node: NodeId, now: Instant) {
        let Some(a) = self.active.get_mut(&node) else {
            return;
        };
        let Some(port) = self
            .served
            .get_mut(a.action.0)
            .and_then(|s| s.ports.get_mut(&a.robot))
        else {
            return;
        };
        let want = rt_id(a.id);
        // (how it ended, its result, whether the previous owner gets the wheels back)
        let mut end: Option<(End, GoalResult, bool)> = None;
        while let Some(report) = port.nrt_next_report() {
            if report.id() != want {
                continue;
            }
            match report {
                GoalReport::Started { .. } => a.started = true,
                GoalReport::Feedback {
                    remaining, pose, ..
                } => {
                    a.pose = pose;
                    a.handle.feedback(&GoalFeedback { remaining, pose });
                }
                GoalReport::Succeeded { pose, .. } => {
                    let r = GoalResult {
                        success: true,
                        message: "goal reached".to_owned(),
                        reason: "",
                        pose,
                    };
                    end = Some((End::Succeeded, r, true));
                }
                GoalReport::Canceled { pose, .. } => {
                    let r = GoalResult::failed("", "canceled by the controller", pose);
                    end = Some((End::Canceled, r, true));
                }
                GoalReport::Aborted { reason, pose, .. } => {
                    let r = GoalResult::failed(abort_name(reason), reason.message(), pose);
                    end = Some((End::Aborted, r, reason != GoalAbort::OwnerLost));
                }
            }
            if end.is_some() {
                break;
            }
        }
        if end.is_none() && host.emergency_stopped(node) {
            let _ = port.nrt_send(GoalCommand::Cancel { id: want });
            end = Some((
                End::Aborted,
                GoalResult::failed("emergency_stop", EMERGENCY, a.pose),
                true,
            ));
        }
        if end.is_none() && host.picked_up(node) {
            let _ = port.nrt_send(GoalCommand::Cancel { id: want });
            end = Some((
                End::Aborted,
                GoalResult::failed("picked_up", PICKED_UP, a.pose),
                true,
            ));
        }
        if end.is_none() && host.held(node) {
            let _ = port.nrt_send(GoalCommand::Cancel { id: want });
            end = Some((
                End::Aborted,
                GoalResult::failed("inactive", HELD, a.pose),
                true,
            ));
        }
        let gone = a
            .listened
            .is_some_and(|t| now.saturating_duration_since(t) > CLIENT_GONE_TIMEOUT);
        if end.is_none() && gone {
            let _ = port.nrt_send(GoalCommand::Cancel { id: want });
            let why = format!(
                "nobody listened to the action's status or feedback for {} s: its client is gone",
                CLIENT_GONE_TIMEOUT.as_secs_f64()
            );
            end = Some((
                End::Aborted,
                GoalResult::failed("client_gone", &why, a.pose),
                true,
            ));
        }
        if end.is_none() && !a.started && now.duration_since(a.accepted) > START_TIMEOUT {
            let _ = port.nrt_send(GoalCommand::Cancel { id: want });
            let why =
                "the controller did not take the wheels (robot not driven, or its state stale)";
            end = Some((
                End::Aborted,
                GoalResult::failed("timeout", why, a.pose),
                true,
            ));
        }
        let Some((how, result, restore)) = end else {
            return;
        };
        let Some(a) = self.active.remove(&node) else {
            return;
        };
        if restore {
            let _ = host.request_owner(a.robot, a.restore);
        }
        let name = a.action.name();
        if how == End::Aborted {
            self.reporter.warn(&format!(
                "{name} (node {node}): aborted: {}",
                result.message
            ));
        }
        self.end(name, node, a.handle, how, result);
    }

    fn end(
        &self,
        name: &str,
        node: NodeId,
        handle: Box<dyn GoalActionHandle>,
        end: End,
        result: GoalResult,
    ) {
        if let Err(e) = handle.finish(end, result) {
            self.reporter.warn(&format!(
                "{name} (node {node}): cannot send the result: {e}"
            ));
        }
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
