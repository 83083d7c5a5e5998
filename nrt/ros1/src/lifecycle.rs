//! The lifecycle endpoints of each managed robot's driver node on ROS 1 (`managed: true`), with ROS 2's names and
//! fields: `/<ns>/thymio_driver/{change_state, get_state, get_available_states, get_available_transitions,
//! get_transition_graph}` and `/<ns>/thymio_driver/transition_event` (`lifecycle_msgs/*`, vendored in `msg/`: ROS 1
//! has no such package). The state machine is the layer's ([`nrt_interface::lifecycle`]); `change_state` and the
//! calls that read the current state go through the NRT loop's inbox, the graph and the states are answered by the
//! handler itself.

use super::Ros1Error;
use crate::control_inbox::{ControlCall, ControlInbox};
use handoff::NodeId;
use nrt_interface::lifecycle::{self as layer, State as LState};
use nrt_ros1_client::graph::Graph;
use nrt_ros1_client::net::{Publisher, ServiceServer};
use nrt_ros1_client::ros1_msgs::lifecycle_msgs as lm;
use std::sync::mpsc::{sync_channel, SyncSender};
use std::time::Duration;

pub use crate::control_inbox::{LifecycleAnswer, LifecycleCall};

/// How long a handler waits for the NRT loop.
const WAIT: Duration = Duration::from_secs(5);

fn ask(
    inbox: &ControlInbox,
    node: NodeId,
    call: LifecycleCall,
) -> Result<LifecycleAnswer, anyhow::Error> {
    let (tx, rx): (SyncSender<LifecycleAnswer>, _) = sync_channel(1);
    if !inbox.send(ControlCall::Lifecycle {
        node,
        call,
        reply: tx,
    }) {
        return Err(anyhow::anyhow!("the driver is stopping"));
    }
    rx.recv_timeout(WAIT)
        .map_err(|_| anyhow::anyhow!("no answer from the driver within {} s", WAIT.as_secs_f64()))
}

/// `s` as a message.
pub fn state(s: LState) -> lm::State {
    lm::State {
        id: s.id(),
        label: s.label().to_string(),
    }
}

fn transition(t: layer::Transition) -> lm::Transition {
    lm::Transition {
        id: t.id,
        label: t.label.to_string(),
    }
}

fn description(d: &layer::TransitionDescription) -> lm::TransitionDescription {
    lm::TransitionDescription {
        transition: transition(d.transition),
        start_state: state(d.start),
        goal_state: state(d.goal),
    }
}

/// A managed robot's lifecycle endpoints (dropping them unregisters them).
pub struct Endpoints {
    _services: Vec<ServiceServer>,
    events: Publisher<lm::TransitionEvent>,
}

/// The global names [`register`] registers (forgotten when the robot goes), from `t` (leaf → global name).
pub fn names(t: &impl Fn(&str) -> String) -> Vec<String> {
    [
        layer::CHANGE_STATE,
        layer::GET_STATE,
        layer::GET_AVAILABLE_STATES,
        layer::GET_AVAILABLE_TRANSITIONS,
        layer::GET_TRANSITION_GRAPH,
        layer::TRANSITION_EVENT,
    ]
    .iter()
    .map(|l| t(l))
    .collect()
}

/// Registers robot `id`'s lifecycle endpoints (on the registrar thread); `t` makes a leaf's global name.
pub fn register(
    g: &Graph,
    t: &impl Fn(&str) -> String,
    id: NodeId,
    inbox: &ControlInbox,
) -> Result<Endpoints, Ros1Error> {
    let i = inbox.clone();
    let change = g.serve::<lm::ChangeState>(&t(layer::CHANGE_STATE), move |req| {
        let call = LifecycleCall::Change(req.transition.id, req.transition.label);
        let (success, _) = ask(&i, id, call)?;
        Ok(lm::ChangeStateResponse { success })
    })?;
    let i = inbox.clone();
    let get = g.serve::<lm::GetState>(&t(layer::GET_STATE), move |_| {
        let (_, now) = ask(&i, id, LifecycleCall::State)?;
        Ok(lm::GetStateResponse {
            current_state: state(now),
        })
    })?;
    let states = g.serve::<lm::GetAvailableStates>(&t(layer::GET_AVAILABLE_STATES), |_| {
        Ok(lm::GetAvailableStatesResponse {
            available_states: LState::ALL.iter().map(|s| state(*s)).collect(),
        })
    })?;
    let i = inbox.clone();
    let transitions =
        g.serve::<lm::GetAvailableTransitions>(&t(layer::GET_AVAILABLE_TRANSITIONS), move |_| {
            let (_, now) = ask(&i, id, LifecycleCall::State)?;
            Ok(lm::GetAvailableTransitionsResponse {
                available_transitions: layer::available(now).iter().map(description).collect(),
            })
        })?;
    let graph = g.serve::<lm::GetAvailableTransitions>(&t(layer::GET_TRANSITION_GRAPH), |_| {
        Ok(lm::GetAvailableTransitionsResponse {
            available_transitions: layer::GRAPH.iter().map(description).collect(),
        })
    })?;
    let events = g.advertise(&t(layer::TRANSITION_EVENT), 10, false)?;
    Ok(Endpoints {
        _services: vec![change, get, states, transitions, graph],
        events,
    })
}

impl Endpoints {
    /// Publishes one transition event.
    pub fn publish(&self, g: &Graph, e: &layer::TransitionEvent) {
        let msg = lm::TransitionEvent {
            timestamp: e.timestamp_ns,
            transition: transition(e.transition),
            start_state: state(e.start),
            goal_state: state(e.goal),
        };
        if let Err(err) = g.publish(&self.events, &msg) {
            tracing::warn!(
                "ROS 1: node {}: cannot publish transition_event: {err}",
                e.node
            );
        }
    }
}
