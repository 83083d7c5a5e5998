//! The lifecycle endpoints of each managed robot's driver node on ROS 2 (`managed: true`):
//! `/<ns>/thymio_driver/{change_state, get_state, get_available_states, get_available_transitions,
//! get_transition_graph}` (`lifecycle_msgs` services) and `/<ns>/thymio_driver/transition_event`. The state machine
//! and what it does to the wheels are the layer's ([`nrt_interface::lifecycle`]); calls are answered in the NRT
//! loop's iteration that sees them, the iteration's events published at its end.

use super::thymio_endpoints::topic;
use super::{drain, Srv};
use handoff::NodeId;
use nrt_engine::engine::Engine;
use nrt_interface::lifecycle::{
    self as layer, Lifecycles, State as LState, TransitionDescription as LDescription,
};
use nrt_interface::report::Reporter;
use r2r::lifecycle_msgs::msg::{State, Transition, TransitionDescription, TransitionEvent};
use r2r::lifecycle_msgs::srv::{
    ChangeState, GetAvailableStates, GetAvailableTransitions, GetState,
};
use r2r::{Publisher, QosProfile};
use std::collections::BTreeMap;

struct Robot {
    change: Srv<ChangeState::Service>,
    get: Srv<GetState::Service>,
    states: Srv<GetAvailableStates::Service>,
    transitions: Srv<GetAvailableTransitions::Service>,
    graph: Srv<GetAvailableTransitions::Service>,
    events: Publisher<TransitionEvent>,
}

/// The managed robots' lifecycle endpoints.
#[derive(Default)]
pub struct LifecycleEndpoints {
    robots: BTreeMap<NodeId, Robot>,
}

fn state(s: LState) -> State {
    State {
        id: s.id(),
        label: s.label().to_string(),
    }
}

fn transition(t: layer::Transition) -> Transition {
    Transition {
        id: t.id,
        label: t.label.to_string(),
    }
}

fn description(d: &LDescription) -> TransitionDescription {
    TransitionDescription {
        transition: transition(d.transition),
        start_state: state(d.start),
        goal_state: state(d.goal),
    }
}

impl LifecycleEndpoints {
    /// Creates managed robot `id`'s endpoints under `ns` (relative to `node`'s namespace).
    pub fn add(&mut self, node: &mut r2r::Node, id: NodeId, ns: &str) -> Result<(), r2r::Error> {
        let qos = QosProfile::default;
        let robot =
            Robot {
                change: Box::new(node.create_service::<ChangeState::Service>(
                    &topic(ns, layer::CHANGE_STATE),
                    qos(),
                )?),
                get: Box::new(
                    node.create_service::<GetState::Service>(&topic(ns, layer::GET_STATE), qos())?,
                ),
                states: Box::new(node.create_service::<GetAvailableStates::Service>(
                    &topic(ns, layer::GET_AVAILABLE_STATES),
                    qos(),
                )?),
                transitions: Box::new(node.create_service::<GetAvailableTransitions::Service>(
                    &topic(ns, layer::GET_AVAILABLE_TRANSITIONS),
                    qos(),
                )?),
                graph: Box::new(node.create_service::<GetAvailableTransitions::Service>(
                    &topic(ns, layer::GET_TRANSITION_GRAPH),
                    qos(),
                )?),
                events: node.create_publisher(&topic(ns, layer::TRANSITION_EVENT), qos())?,
            };
        self.robots.insert(id, robot);
        Ok(())
    }

    /// Destroys robot `id`'s endpoints.
    pub fn remove(&mut self, node: &mut r2r::Node, id: NodeId) {
        if let Some(r) = self.robots.remove(&id) {
            node.destroy_publisher(r.events);
        }
    }

    /// Answers the calls that came (never waits).
    pub fn serve(&mut self, engine: &mut Engine, lifecycle: &mut Lifecycles, reporter: &Reporter) {
        for (id, r) in self.robots.iter_mut() {
            for call in drain(&mut r.change).collect::<Vec<_>>() {
                let t = &call.message.transition;
                let success = lifecycle.change_state(engine, *id, t.id, &t.label, reporter);
                // a client that left is not an error of the driver
                let _ = call.respond(ChangeState::Response { success });
            }
            let current = lifecycle.state(*id).unwrap_or(LState::Unconfigured);
            for call in drain(&mut r.get).collect::<Vec<_>>() {
                let _ = call.respond(GetState::Response {
                    current_state: state(current),
                });
            }
            for call in drain(&mut r.states).collect::<Vec<_>>() {
                let _ = call.respond(GetAvailableStates::Response {
                    available_states: LState::ALL.iter().map(|s| state(*s)).collect(),
                });
            }
            for call in drain(&mut r.transitions).collect::<Vec<_>>() {
                let _ = call.respond(GetAvailableTransitions::Response {
                    available_transitions: layer::available(current)
                        .iter()
                        .map(description)
                        .collect(),
                });
            }
            for call in drain(&mut r.graph).collect::<Vec<_>>() {
                let _ = call.respond(GetAvailableTransitions::Response {
                    available_transitions: layer::GRAPH.iter().map(description).collect(),
                });
            }
        }
    }

    /// Publishes the iteration's transition events on their robots' `transition_event`.
    pub fn publish(&self, lifecycle: &Lifecycles) {
        for e in lifecycle.events() {
            if let Some(r) = self.robots.get(&e.node) {
                let msg = TransitionEvent {
                    timestamp: e.timestamp_ns,
                    transition: transition(e.transition),
                    start_state: state(e.start),
                    goal_state: state(e.goal),
                };
                // a publisher without subscribers is not an error
                let _ = r.events.publish(&msg);
            }
        }
    }
}
