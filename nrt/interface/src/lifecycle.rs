//! Managed (lifecycle) driver nodes (`managed: true`): each driven robot's `thymio_driver` node follows ROS 2's
//! node lifecycle (the `lifecycle_msgs` state machine: primary states unconfigured, inactive, active, finalized and
//! the transition states between them), so that a bring-up manager (Nav2's `lifecycle_manager`) decides when its
//! wheels may move. Described once here; both front ends serve it with `lifecycle_msgs`' services and topic
//! (ROS 1: vendored definitions with the same fields) and publish the [`TransitionEvent`]s of each iteration.
//!
//! - A managed robot starts **unconfigured**; `configure` succeeds only while it is driven and its node is on the
//!   network (else the transition fails, it stays unconfigured and the reason is reported).
//! - Unconfigured, inactive and finalized: its topics are published (state, odometry) but the RT loop holds its
//!   wheels at zero whatever the owner commands ([`Engine::set_wheels_held`]); **active**: it drives as today.
//! - `deactivate`, `cleanup` and `shutdown` hold the wheels at once (a stop the motion limits never slow).
//! - The goal actions follow the hold ([`crate::goal_actions`]): a goal for a robot whose wheels are held is
//!   rejected at once with that reason, and a goal running when they become held is aborted (`inactive`).
//! - A link loss (its state stale, its node lost or removed) while inactive or active takes the error path:
//!   errorprocessing, then unconfigured (`on_error` succeeds), with its events; the wheels stay held.
//! - A transition is asked for by id or by label (a label, when given, wins, as rcl does); one that is not
//!   available in the current state is refused (`success: false`) and reported.
//!
//! Unmanaged (the default): no robot is registered here and nothing changes.

use crate::report::Reporter;
use handoff::NodeId;
use nrt_engine::diagnostics::{kv, KeyValue};
use nrt_engine::engine::{Engine, EngineEvent};
use nrt_engine::network::NetworkEvent;
use std::collections::BTreeMap;

/// `lifecycle_msgs/srv/ChangeState` under the robot's namespace.
pub const CHANGE_STATE: &str = "thymio_driver/change_state";
/// `lifecycle_msgs/srv/GetState`.
pub const GET_STATE: &str = "thymio_driver/get_state";
/// `lifecycle_msgs/srv/GetAvailableStates`.
pub const GET_AVAILABLE_STATES: &str = "thymio_driver/get_available_states";
/// `lifecycle_msgs/srv/GetAvailableTransitions`.
pub const GET_AVAILABLE_TRANSITIONS: &str = "thymio_driver/get_available_transitions";
/// `lifecycle_msgs/srv/GetAvailableTransitions` (the whole graph).
pub const GET_TRANSITION_GRAPH: &str = "thymio_driver/get_transition_graph";
/// `lifecycle_msgs/msg/TransitionEvent`.
pub const TRANSITION_EVENT: &str = "thymio_driver/transition_event";
/// `/diagnostics` key of a managed robot's row: its lifecycle state.
pub const LIFECYCLE_STATE: &str = "Lifecycle state";

/// A state of the lifecycle (`lifecycle_msgs/msg/State`: id and label).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// Primary state 1: configured nothing yet (wheels held).
    Unconfigured,
    /// Primary state 2: configured, not driving (wheels held, state published).
    Inactive,
    /// Primary state 3: driving.
    Active,
    /// Primary state 4: shut down (wheels held).
    Finalized,
    /// Transition state 10.
    Configuring,
    /// Transition state 11.
    CleaningUp,
    /// Transition state 12.
    ShuttingDown,
    /// Transition state 13.
    Activating,
    /// Transition state 14.
    Deactivating,
    /// Transition state 15.
    ErrorProcessing,
}

impl State {
    /// Every state, in `lifecycle_msgs`' numbering order (what `get_available_states` answers).
    pub const ALL: [State; 10] = [
        State::Unconfigured,
        State::Inactive,
        State::Active,
        State::Finalized,
        State::Configuring,
        State::CleaningUp,
        State::ShuttingDown,
        State::Activating,
        State::Deactivating,
        State::ErrorProcessing,
    ];

    /// Its id (`State.PRIMARY_STATE_*`, `State.TRANSITION_STATE_*`).
    pub fn id(self) -> u8 {
        match self {
            State::Unconfigured => 1,
            State::Inactive => 2,
            State::Active => 3,
            State::Finalized => 4,
            State::Configuring => 10,
            State::CleaningUp => 11,
            State::ShuttingDown => 12,
            State::Activating => 13,
            State::Deactivating => 14,
            State::ErrorProcessing => 15,
        }
    }

    /// Its label, as rcl names it.
    pub fn label(self) -> &'static str {
        match self {
            State::Unconfigured => "unconfigured",
            State::Inactive => "inactive",
            State::Active => "active",
            State::Finalized => "finalized",
            State::Configuring => "configuring",
            State::CleaningUp => "cleaningup",
            State::ShuttingDown => "shuttingdown",
            State::Activating => "activating",
            State::Deactivating => "deactivating",
            State::ErrorProcessing => "errorprocessing",
        }
    }

    /// Whether the RT loop lets the owner's command through (only active).
    pub fn drives(self) -> bool {
        self == State::Active
    }
}

/// A transition (`lifecycle_msgs/msg/Transition`: id and label).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Transition {
    /// `Transition.TRANSITION_*`.
    pub id: u8,
    /// Its label.
    pub label: &'static str,
}

/// A transition of the graph (`lifecycle_msgs/msg/TransitionDescription`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TransitionDescription {
    /// The transition.
    pub transition: Transition,
    /// Where it starts.
    pub start: State,
    /// Where it goes.
    pub goal: State,
}

/// A transition that happened (`lifecycle_msgs/msg/TransitionEvent`), for robot `node`'s `transition_event`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TransitionEvent {
    /// The robot.
    pub node: NodeId,
    /// When (system time, ns since the epoch: rcl's `timestamp`).
    pub timestamp_ns: u64,
    /// The transition.
    pub transition: Transition,
    /// From.
    pub start: State,
    /// To.
    pub goal: State,
}

const fn t(id: u8, label: &'static str, start: State, goal: State) -> TransitionDescription {
    TransitionDescription {
        transition: Transition { id, label },
        start,
        goal,
    }
}

const SUCCESS: &str = "transition_success";
const FAILURE: &str = "transition_failure";
const ERROR: &str = "transition_error";

/// The standard lifecycle graph (`lifecycle_msgs/msg/Transition`'s ids, rcl's labels): what
/// `get_transition_graph` answers.
pub const GRAPH: [TransitionDescription; 25] = {
    use State::*;
    [
        t(1, "configure", Unconfigured, Configuring),
        t(10, SUCCESS, Configuring, Inactive),
        t(11, FAILURE, Configuring, Unconfigured),
        t(12, ERROR, Configuring, ErrorProcessing),
        t(2, "cleanup", Inactive, CleaningUp),
        t(20, SUCCESS, CleaningUp, Unconfigured),
        t(21, FAILURE, CleaningUp, Inactive),
        t(22, ERROR, CleaningUp, ErrorProcessing),
        t(3, "activate", Inactive, Activating),
        t(30, SUCCESS, Activating, Active),
        t(31, FAILURE, Activating, Inactive),
        t(32, ERROR, Activating, ErrorProcessing),
        t(4, "deactivate", Active, Deactivating),
        t(40, SUCCESS, Deactivating, Inactive),
        t(41, FAILURE, Deactivating, Active),
        t(42, ERROR, Deactivating, ErrorProcessing),
        t(5, "shutdown", Unconfigured, ShuttingDown),
        t(6, "shutdown", Inactive, ShuttingDown),
        t(7, "shutdown", Active, ShuttingDown),
        t(50, SUCCESS, ShuttingDown, Finalized),
        t(51, FAILURE, ShuttingDown, Finalized),
        t(52, ERROR, ShuttingDown, ErrorProcessing),
        t(60, SUCCESS, ErrorProcessing, Unconfigured),
        t(61, FAILURE, ErrorProcessing, Finalized),
        t(62, ERROR, ErrorProcessing, Finalized),
    ]
};

/// The transition into errorprocessing from a primary state on a link loss (`TRANSITION_CALLBACK_ERROR`: the graph
/// has no such edge, the driver raises it itself).
const LINK_ERROR: Transition = Transition {
    id: 99,
    label: ERROR,
};

/// The transitions available in `state` (what `get_available_transitions` answers): the primary transitions that
/// start there (none in a transition state or finalized).
pub fn available(state: State) -> Vec<TransitionDescription> {
    GRAPH
        .iter()
        .filter(|d| d.start == state && d.transition.id < 10)
        .copied()
        .collect()
}

/// What a lifecycle does to a robot: the engine ([`Engine`]'s hold and link), or a test's hand-driven double.
pub trait Wheels {
    /// Whether driven robot `node` is on the network.
    fn link_up(&self, node: NodeId) -> bool;
    /// Holds robot `node`'s wheels at zero in the RT loop (`true`) or lets its owner's command through.
    fn hold(&mut self, node: NodeId, held: bool) -> Result<(), String>;
}

impl Wheels for Engine {
    fn link_up(&self, node: NodeId) -> bool {
        self.robot_link_up(node)
    }

    fn hold(&mut self, node: NodeId, held: bool) -> Result<(), String> {
        self.set_wheels_held(node, held).map_err(|e| e.to_string())
    }
}

/// The managed robots' lifecycles (empty unless `managed`), and the transition events of the current iteration.
#[derive(Debug, Default)]
pub struct Lifecycles {
    robots: BTreeMap<NodeId, State>,
    events: Vec<TransitionEvent>,
}

impl Lifecycles {
    /// Robot `node`'s state; `None` if it is not a managed robot.
    pub fn state(&self, node: NodeId) -> Option<State> {
        self.robots.get(&node).copied()
    }

    /// The transition events of this iteration (every front end publishes them; forgotten at
    /// [`Lifecycles::end_step`]).
    pub fn events(&self) -> &[TransitionEvent] {
        &self.events
    }

    /// Forgets the events the front ends published.
    pub fn end_step(&mut self) {
        self.events.clear();
    }

    /// `/diagnostics`' row of a managed robot: its lifecycle state.
    pub fn diagnostics(&self, node: NodeId) -> Option<KeyValue> {
        self.state(node).map(|s| kv(LIFECYCLE_STATE, s.label()))
    }

    /// Follows the engine's `event`: a robot made driven while `managed` (the driver parameter) starts unconfigured
    /// (its wheels held by the engine from the start); a link loss while inactive or active takes the error path;
    /// a robot removed is forgotten.
    pub fn on_engine_event(
        &mut self,
        managed: bool,
        engine: &mut impl Wheels,
        event: &EngineEvent,
        reporter: &Reporter,
    ) {
        match event {
            EngineEvent::RobotReady { node, .. } if managed => {
                // driven anew (back after a loss, another script): the engine held its wheels again; a node that
                // was configured takes the error path, one unconfigured or finalized stays so
                self.lost(engine, *node, "driven anew", reporter);
                self.robots.entry(*node).or_insert(State::Unconfigured);
                if let Err(e) = engine.hold(*node, true) {
                    reporter.error(&format!("node {node}: wheels not held: {e}"));
                }
            }
            EngineEvent::RobotStale { node }
            | EngineEvent::Network(NetworkEvent::NodeLost { id: node }) => {
                self.lost(engine, *node, "link lost", reporter)
            }
            EngineEvent::RobotRemoved { node, .. } => {
                self.lost(engine, *node, "robot removed", reporter);
                self.robots.remove(node);
            }
            _ => {}
        }
    }

    /// The error path of robot `node` on a link loss (`why`), if it is inactive or active.
    fn lost(&mut self, engine: &mut impl Wheels, node: NodeId, why: &str, reporter: &Reporter) {
        let Some(state) = self.state(node) else {
            return;
        };
        if !matches!(state, State::Inactive | State::Active) {
            return;
        }
        // a robot no longer driven has no wheels to hold (its slot is free)
        let _ = engine.hold(node, true);
        self.emit(node, LINK_ERROR, state, State::ErrorProcessing);
        let done = GRAPH[22];
        self.emit(node, done.transition, State::ErrorProcessing, done.goal);
        self.robots.insert(node, done.goal);
        reporter.warn(&format!(
            "node {node}: {why} while {}: lifecycle error path, now unconfigured (wheels held)",
            state.label()
        ));
    }

    fn emit(&mut self, node: NodeId, transition: Transition, start: State, goal: State) {
        self.events.push(TransitionEvent {
            node,
            timestamp_ns: system_ns(),
            transition,
            start,
            goal,
        });
    }

    /// `change_state` of robot `node`: the transition `label` (when not empty) or `id` from its current state.
    /// Returns whether it succeeded; a refusal or a failure is reported with its reason.
    pub fn change_state(
        &mut self,
        engine: &mut impl Wheels,
        node: NodeId,
        id: u8,
        label: &str,
        reporter: &Reporter,
    ) -> bool {
        let Some(state) = self.state(node) else {
            reporter.warn(&format!("node {node}: change_state: not a managed robot"));
            return false;
        };
        let choices = available(state);
        let chosen = choices.iter().find(|d| {
            if label.is_empty() {
                d.transition.id == id
            } else {
                d.transition.label == label
            }
        });
        let Some(d) = chosen.copied() else {
            let asked = if label.is_empty() {
                format!("id {id}")
            } else {
                format!("'{label}'")
            };
            let names: Vec<String> = choices
                .iter()
                .map(|d| format!("{} ({})", d.transition.label, d.transition.id))
                .collect();
            reporter.warn(&format!(
                "node {node}: lifecycle transition {asked} is not available in state {} (available: {})",
                state.label(),
                if names.is_empty() {
                    "none".to_string()
                } else {
                    names.join(", ")
                }
            ));
            return false;
        };
        self.emit(node, d.transition, state, d.goal);
        let outcome = self.run(engine, node, d.goal);
        // the callback's result: rcl's on_*_success / on_*_failure edge out of the transition state
        let (edge, ok) = match &outcome {
            Ok(()) => (0, true),
            Err(_) => (1, false),
        };
        let out = GRAPH
            .iter()
            .filter(|g| g.start == d.goal)
            .nth(edge)
            .copied()
            .expect("every transition state has a success and a failure edge");
        self.emit(node, out.transition, d.goal, out.goal);
        self.robots.insert(node, out.goal);
        match outcome {
            Ok(()) => reporter.info(&format!(
                "node {node}: lifecycle {} -> {}",
                state.label(),
                out.goal.label()
            )),
            Err(why) => reporter.warn(&format!(
                "node {node}: lifecycle transition '{}' failed: {why}; still {}",
                d.transition.label,
                out.goal.label()
            )),
        }
        ok
    }

    /// What transition state `doing` does to the robot: Err(why) when it cannot.
    fn run(&mut self, engine: &mut impl Wheels, node: NodeId, doing: State) -> Result<(), String> {
        let link = || {
            if engine.link_up(node) {
                Ok(())
            } else {
                Err(format!("node {node} is not on the network (link down)"))
            }
        };
        match doing {
            State::Configuring | State::Activating => link()?,
            _ => {}
        }
        let held = doing != State::Activating;
        engine.hold(node, held)
    }
}

/// Now, system time in ns since the epoch.
fn system_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

#[cfg(test)]
#[path = "lifecycle_tests.rs"]
mod tests;
