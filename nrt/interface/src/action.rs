//! One action state machine for every action of the layer whose goal an RT controller runs on a robot's wheels
//! (the goal actions, [`crate::goal_actions`], and the motor calibration, [`crate::calibration`]): the bookkeeping
//! they share, written once and generic over an [`ActionKind`] that gives the goal, feedback and result types and
//! the operations on its controller's private port.
//!
//! What is shared: the controllers' owner ids and private ports (taken out of the registry's ports once per
//! process), one goal id space, at most one goal per robot (of any action of the kind), the checks before a goal
//! is accepted (the robot busy, not driven, without the controller) and the report of a rejection
//! (`NAME (node N): goal rejected: …`), the controller taking the wheels and the previous owner getting them back
//! at the end, a cancel, a robot that goes away, a controller that does not take the wheels within
//! [`START_TIMEOUT`], a goal whose client is gone (after [`CLIENT_GONE_TIMEOUT`] without anyone listening, as the
//! front end tells [`Actions::client_listening`]) and sending the result (`cannot send the result: …` when the
//! front end cannot). The kind adds its own checks, how a goal starts on the port, how the controller's reports
//! feed back and end it, and what happens at the end.

use crate::report::Reporter;
use handoff::{NodeId, NrtControl, OwnerId, RobotId};
use nrt_engine::engine::{Engine, EngineEvent};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// How long the controller may take to start a goal after it was accepted.
pub const START_TIMEOUT: Duration = Duration::from_secs(3);
/// How long a running goal may have nobody listening to its action's status or feedback before it is aborted as
/// `client_gone` (see [`crate::goal_actions`]): long enough for a client's subscriptions to be seen after its goal
/// (discovery), short enough that a robot does not drive on for long after its client died.
pub const CLIENT_GONE_TIMEOUT: Duration = Duration::from_secs(2);

/// A goal of the layer (any front end's, any action's), told apart from every other goal of the process.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct GoalId(pub u64);

/// One action of a kind: its index in [`ActionKind::NAMES`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ActionId(pub usize);

/// How a goal ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// Done (ROS 2 SUCCEEDED, actionlib SUCCEEDED).
    Succeeded,
    /// Failed (ROS 2 ABORTED, actionlib ABORTED).
    Aborted,
    /// Cancelled by its client (ROS 2 CANCELED, actionlib PREEMPTED).
    Canceled,
}

/// Where the feedback (`F`) and the result (`R`) of one accepted goal go (each front end gives its own).
pub trait ActionHandle<F, R>: Send {
    /// Publishes `feedback` (never waits; a lost feedback is not an error of the interface).
    fn feedback(&mut self, feedback: &F);
    /// Ends the goal with `result`; why it could not be sent, if so.
    fn finish(self: Box<Self>, end: End, result: R) -> Result<(), String>;
}

/// Where the feedback and the result of a goal of kind `K` go.
pub type HandleOf<K> = dyn ActionHandle<<K as ActionKind>::Feedback, <K as ActionKind>::Result>;

/// A kind of action: its types and what is its own in the state machine of [`Actions`].
pub trait ActionKind: Sized {
    /// What the actions need of the engine (a trait object; [`nrt_engine::engine::Engine`] is one).
    type Host: ?Sized;
    /// The NRT half of a controller's private port.
    type Port: Send + 'static;
    /// A goal as a front end hands it.
    type Request;
    /// A goal once checked, to start.
    type Accepted;
    /// The action's feedback.
    type Feedback;
    /// The action's result.
    type Result;
    /// What a running goal keeps besides the shared bookkeeping.
    type State;
    /// How the controller ended a goal, as [`Self::conclude`] takes it.
    type Ending;
    /// The actions of the kind (their RT controllers' names, their owner names), by [`ActionId`].
    const NAMES: &'static [&'static str];
    /// The result's message of a cancelled goal.
    const CANCELED: &'static str;
    /// Why a goal ends whose controller did not take the wheels within [`START_TIMEOUT`].
    const NOT_STARTED: &'static str;

    /// The robot driven on `node`; `None` if not driven.
    fn robot(host: &Self::Host, node: NodeId) -> Option<RobotId>;
    /// Asks the RT thread to give `robot`'s wheels to `owner`.
    fn request_owner(host: &mut Self::Host, robot: RobotId, owner: OwnerId) -> Result<(), String>;
    /// The action a goal asks for.
    fn action(request: &Self::Request) -> ActionId;
    /// The action of a checked goal.
    fn accepted_action(accepted: &Self::Accepted) -> ActionId;
    /// Why a goal is rejected while the robot runs `running`.
    fn busy(running: &ActiveGoal<Self>) -> String;
    /// The kind's own checks of a goal for the robot on `node` (driven, with the controller, not busy).
    fn check(
        host: &Self::Host,
        node: NodeId,
        request: &Self::Request,
    ) -> Result<Self::Accepted, String>;
    /// Starts `goal` on `port` (the reports of an earlier goal are stale), `request` giving the wheels to its
    /// controller: the running goal's state and the line that says what it does, or why it did not start.
    fn launch(
        port: &mut Self::Port,
        id: GoalId,
        goal: Self::Accepted,
        request: &mut dyn FnMut() -> Result<(), String>,
    ) -> Result<(Self::State, String), String>;
    /// Stops the controller's goal `id` at once.
    fn stop(port: &mut Self::Port, id: GoalId);
    /// A failed goal's result (`reason` its short name, `why` its message), with what is known of it.
    fn failed(state: Option<&Self::State>, reason: &'static str, why: &str) -> Self::Result;
    /// An ending that aborts `goal` (`reason` its short name, `why` its message).
    fn aborted(goal: &ActiveGoal<Self>, reason: &'static str, why: &str) -> Self::Ending;
    /// Takes the controller's reports of `goal` on `port` (never waits), the kind's reasons to end it: how it
    /// ends and whether the previous owner gets the wheels back, if it does.
    fn poll(
        host: &Self::Host,
        node: NodeId,
        port: &mut Self::Port,
        goal: &mut ActiveGoal<Self>,
    ) -> Option<(Self::Ending, bool)>;
    /// Ends `goal` (no longer running, its wheels given back) as `ending` says, through [`Actions::end`].
    fn conclude(
        core: &Actions<Self>,
        host: &mut Self::Host,
        node: NodeId,
        goal: ActiveGoal<Self>,
        ending: Self::Ending,
    );
    /// What `result` says (ROS 1's status text).
    fn message(result: &Self::Result) -> &str;
}

/// A kind whose host is the engine (those the front ends serve).
pub trait OnEngine: ActionKind {
    /// The engine as the kind's host.
    fn host(engine: &mut Engine) -> &mut Self::Host;
    /// The engine as the kind's host, to read.
    fn host_ref(engine: &Engine) -> &Self::Host;
}

/// A running goal.
pub struct ActiveGoal<K: ActionKind> {
    /// Its id.
    pub id: GoalId,
    /// Its action.
    pub action: ActionId,
    /// The robot it drives.
    pub robot: RobotId,
    /// Where its feedback and result go.
    pub handle: Box<HandleOf<K>>,
    /// The owner before the goal, given the wheels back at the end.
    pub restore: OwnerId,
    /// When it was accepted.
    pub accepted: Instant,
    /// Whether the controller started it.
    pub started: bool,
    /// When someone last listened to the action's status or feedback; `None` while the front end does not tell.
    pub listened: Option<Instant>,
    /// The kind's own.
    pub state: K::State,
}

/// One action's controller: its owner id and private ports.
pub(crate) struct Served<P> {
    owner: Option<OwnerId>,
    ports: BTreeMap<RobotId, P>,
}

impl<P> Default for Served<P> {
    fn default() -> Self {
        Served {
            owner: None,
            ports: BTreeMap::new(),
        }
    }
}

/// Every driven robot's goals of the actions of kind `K` (see the module documentation).
pub struct Actions<K: ActionKind> {
    pub(crate) served: Vec<Served<K::Port>>,
    /// At most one goal per robot, by node.
    active: BTreeMap<NodeId, ActiveGoal<K>>,
    owners: BTreeMap<RobotId, OwnerId>,
    next: u64,
    reporter: Reporter,
}

impl<K: ActionKind> Actions<K> {
    /// No controllers yet: every goal is refused until [`Self::take`].
    pub fn new(reporter: Reporter) -> Actions<K> {
        Actions {
            served: K::NAMES.iter().map(|_| Served::default()).collect(),
            active: BTreeMap::new(),
            owners: BTreeMap::new(),
            next: 0,
            reporter,
        }
    }

    /// Takes the controllers' private ports out of `control` (the rest stays for the code that serves the other
    /// controllers); once per process, whatever the front ends. The actions whose controller is not in the
    /// registry are off (said); false if one is.
    pub fn take(&mut self, control: &mut NrtControl) -> bool {
        let mut all = true;
        for (k, name) in K::NAMES.iter().enumerate() {
            let Some(owner) = control.names.id(name) else {
                self.reporter
                    .warn(&format!("no {name} controller: the {name} action is off"));
                all = false;
                continue;
            };
            let mut ports = BTreeMap::new();
            for p in control.ports.iter_mut().filter(|p| p.controller == *name) {
                if let Some(Ok(port)) = p.private.take().map(|x| x.0.downcast::<K::Port>()) {
                    ports.insert(p.robot, *port);
                }
            }
            self.with_ports(ActionId(k), owner, ports);
        }
        all
    }

    /// Serves `ports` (the controller's private ports by robot slot) for `action`, the controller being `owner`.
    pub fn with_ports(
        &mut self,
        action: ActionId,
        owner: OwnerId,
        ports: BTreeMap<RobotId, K::Port>,
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

    /// Checks `request` for the robot on `node`: the goal to start, or why it is rejected (reported as the
    /// driver's warning).
    pub fn check(
        &self,
        host: &K::Host,
        node: NodeId,
        request: &K::Request,
    ) -> Result<K::Accepted, String> {
        let action = K::action(request);
        let name = name::<K>(action);
        let checked = if let Some(a) = self.active.get(&node) {
            Err(K::busy(a))
        } else {
            match K::robot(host, node) {
                None => Err("the robot is not driven".to_owned()),
                Some(robot) if !self.serves(action, robot) => {
                    Err(format!("the robot has no {name} controller"))
                }
                Some(_) => K::check(host, node, request),
            }
        };
        if let Err(why) = &checked {
            self.reporter
                .warn(&format!("{name} (node {node}): goal rejected: {why}"));
        }
        checked
    }

    /// Starts `goal` (checked by [`Self::check`] in the same iteration) on the robot of `node`, its feedback and
    /// result going to `handle`: the controller takes the wheels. A goal that cannot start ends at once, aborted.
    pub fn start(
        &mut self,
        host: &mut K::Host,
        node: NodeId,
        goal: K::Accepted,
        handle: Box<HandleOf<K>>,
        now: Instant,
    ) -> GoalId {
        self.next += 1;
        let id = GoalId(self.next);
        let action = K::accepted_action(&goal);
        let name = name::<K>(action);
        let robot = K::robot(host, node);
        let served = self.served.get_mut(action.0);
        let (Some(robot), Some(served)) = (robot, served) else {
            let r = K::failed(None, "bad_goal", "the robot is not driven");
            self.end(action, node, handle, End::Aborted, r);
            return id;
        };
        let (Some(owner), Some(port)) = (served.owner, served.ports.get_mut(&robot)) else {
            let r = K::failed(
                None,
                "bad_goal",
                &format!("the robot has no {name} controller"),
            );
            self.end(action, node, handle, End::Aborted, r);
            return id;
        };
        let mut request = || K::request_owner(host, robot, owner);
        let state = match K::launch(port, id, goal, &mut request) {
            Ok((state, what)) => {
                self.reporter.info(&format!("{name} (node {node}): {what}"));
                state
            }
            Err(e) => {
                let r = K::failed(None, "bad_goal", &e);
                self.end(action, node, handle, End::Aborted, r);
                return id;
            }
        };
        let restore = self.owners.get(&robot).copied().unwrap_or(OwnerId::ROS);
        let active = ActiveGoal {
            id,
            action,
            robot,
            handle,
            restore,
            accepted: now,
            started: false,
            listened: None,
            state,
        };
        self.active.insert(node, active);
        id
    }

    /// Cancels goal `id`: the robot stops at once and the previous owner gets the wheels back; false if the goal
    /// is not running (ended already, or unknown).
    pub fn cancel(&mut self, host: &mut K::Host, id: GoalId) -> bool {
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
            K::stop(port, id);
        }
        self.give_back(host, a.robot, a.restore);
        let r = K::failed(Some(&a.state), "", K::CANCELED);
        self.end(a.action, node, a.handle, End::Canceled, r);
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

    /// Whether any goal runs (its feedback and end come from the RT thread at its bursts).
    pub fn any_active(&self) -> bool {
        !self.active.is_empty()
    }

    /// The nodes whose goal of `action` runs (the front ends tell [`Self::client_listening`] about these).
    pub fn running(&self, action: ActionId) -> impl Iterator<Item = NodeId> + '_ {
        let it = self.active.iter();
        it.filter_map(move |(n, a)| (a.action == action).then_some(*n))
    }

    /// Asks the RT thread to give `robot`'s wheels back to `owner` at a goal's end, and takes `owner` as the owner
    /// until the RT thread reports one: a goal started before that report restores `owner` at its own end, not the
    /// ended goal's controller (a goal sent at once after the previous one's result, then cancelled, left the
    /// wheels to the stopped controller).
    fn give_back(&mut self, host: &mut K::Host, robot: RobotId, owner: OwnerId) {
        let _ = K::request_owner(host, robot, owner);
        self.owners.insert(robot, owner);
    }

    /// Follows the owners; a robot that goes away ends its goal.
    pub fn on_engine_event(&mut self, event: &EngineEvent) {
        match event {
            EngineEvent::RobotRemoved { node, .. } => {
                if let Some(a) = self.active.remove(node) {
                    let r = K::failed(Some(&a.state), "robot_removed", "the robot went away");
                    self.end(a.action, *node, a.handle, End::Aborted, r);
                }
            }
            EngineEvent::Owner { robot, owner, .. } => {
                self.owners.insert(*robot, *owner);
            }
            _ => {}
        }
    }

    /// Takes the controllers' reports (feedback, the end) and ends the goals that did not start in time or whose
    /// client is gone (never waits).
    pub fn serve(&mut self, host: &mut K::Host, now: Instant) {
        let nodes: Vec<NodeId> = self.active.keys().copied().collect();
        for node in nodes {
            self.serve_one(host, node, now);
        }
    }

    /// The reporter of the actions' lines.
    pub fn reporter(&self) -> &Reporter {
        &self.reporter
    }

    /// Hands `result` to `handle`; reports why it could not be sent, if so.
    pub fn end(
        &self,
        action: ActionId,
        node: NodeId,
        handle: Box<HandleOf<K>>,
        end: End,
        result: K::Result,
    ) {
        if let Err(e) = handle.finish(end, result) {
            self.reporter.warn(&format!(
                "{} (node {node}): cannot send the result: {e}",
                name::<K>(action)
            ));
        }
    }

    fn port(&mut self, action: ActionId, robot: RobotId) -> Option<&mut K::Port> {
        self.served.get_mut(action.0)?.ports.get_mut(&robot)
    }

    fn serve_one(&mut self, host: &mut K::Host, node: NodeId, now: Instant) {
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
        // (how it ends, whether the previous owner gets the wheels back)
        let mut end = K::poll(host, node, port, a);
        let gone = a
            .listened
            .is_some_and(|t| now.saturating_duration_since(t) > CLIENT_GONE_TIMEOUT);
        if end.is_none() && gone {
            K::stop(port, a.id);
            let why = format!(
                "nobody listened to the action's status or feedback for {} s: its client is gone",
                CLIENT_GONE_TIMEOUT.as_secs_f64()
            );
            end = Some((K::aborted(a, "client_gone", &why), true));
        }
        if end.is_none() && !a.started && now.duration_since(a.accepted) > START_TIMEOUT {
            K::stop(port, a.id);
            end = Some((K::aborted(a, "timeout", K::NOT_STARTED), true));
        }
        let Some((ending, restore)) = end else {
            return;
        };
        let Some(a) = self.active.remove(&node) else {
            return;
        };
        if restore {
            self.give_back(host, a.robot, a.restore);
        }
        K::conclude(self, host, node, a, ending);
    }
}

/// The action of kind `K` named `name`.
pub fn action_named<K: ActionKind>(name: &str) -> Option<ActionId> {
    K::NAMES.iter().position(|a| *a == name).map(ActionId)
}

/// The name of `action` of kind `K`.
pub fn name<K: ActionKind>(action: ActionId) -> &'static str {
    K::NAMES.get(action.0).copied().unwrap_or("?")
}

#[cfg(test)]
#[path = "action_tests.rs"]
mod tests;
