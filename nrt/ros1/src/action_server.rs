//! One action-server shape on ROS 1 for every action of the layer's action state machine
//! ([`nrt_interface::action`]: the goal actions and the motor calibration): an actionlib server
//! ([`nrt_ros1_client::actionlib`]) `<ns>/<action>` for each driven Thymio that has the controller, a transport of the
//! layer (checks, goal, feedback, result and their texts are there). Each action only says how its messages map to
//! the layer's types ([`Ros1Action`]). Unlike ROS 2, actionlib carries a rejection's reason: it is the goal's status
//! text. For the actions that ask for it ([`Ros1Action::WATCH_CLIENTS`]), the layer is told while a goal runs whether
//! anyone subscribes to the action's `status` or `feedback` (a goal whose client is gone is aborted:
//! [`nrt_interface::action::CLIENT_GONE_TIMEOUT`]).

use handoff::NodeId;
use nrt_engine::engine::{Engine, EngineEvent};
use nrt_interface::action::{
    action_named, ActionHandle, ActionKind, Actions, End, GoalId, HandleOf, OnEngine,
};
use nrt_interface::report::Reporter;
use nrt_ros1_client::actionlib::{self, ActionServer, ActionTypes, ServerGoal};
use nrt_ros1_client::actionlib_state::{Asked, Terminal};
use nrt_ros1_client::graph::{global, Graph};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::time::Instant;

/// The layer's feedback of action `A`.
type FeedbackOf<A> = <<A as Ros1Action>::Kind as ActionKind>::Feedback;
/// The layer's result of action `A`.
type ResultOf<A> = <<A as Ros1Action>::Kind as ActionKind>::Result;

/// How one action's actionlib messages map to the layer's goal, feedback and result.
pub trait Ros1Action: ActionTypes + Sized + 'static {
    /// The layer's kind of the action.
    type Kind: OnEngine;
    /// The action's name (one of the kind's [`ActionKind::NAMES`]).
    const NAME: &'static str;
    /// Whether the layer is told if anyone listens to the action (see the module documentation).
    const WATCH_CLIENTS: bool;
    /// The layer's goal of a goal message.
    fn goal(g: Self::Goal) -> <Self::Kind as ActionKind>::Request;
    /// The feedback message.
    fn feedback_msg(f: &FeedbackOf<Self>) -> Self::Feedback;
    /// The result message.
    fn result_msg(r: ResultOf<Self>) -> Self::Result;
}

/// An accepted goal of an actionlib server.
struct Ros1Goal<A: Ros1Action>(ServerGoal<A>);

impl<A: Ros1Action> ActionHandle<FeedbackOf<A>, ResultOf<A>> for Ros1Goal<A>
where
    ServerGoal<A>: Send,
{
    fn feedback(&mut self, f: &FeedbackOf<A>) {
        let _ = self.0.feedback(A::feedback_msg(f));
    }

    fn finish(self: Box<Self>, end: End, r: ResultOf<A>) -> Result<(), String> {
        let how = match end {
            End::Succeeded => Terminal::Succeeded,
            End::Aborted => Terminal::Aborted,
            End::Canceled => Terminal::Canceled,
        };
        let text = A::Kind::message(&r).to_owned();
        // a goal the protocol ended already (none today) has nothing to send
        self.0.finish(how, &text, A::result_msg(r));
        Ok(())
    }
}

struct Server<A: Ros1Action> {
    name: String,
    action: ActionServer<A>,
    /// Its goals running in the layer, by actionlib id.
    running: BTreeMap<String, GoalId>,
}

type Built<A> = (NodeId, String, ActionServer<A>);

/// Every driven robot's actionlib server of the action `A`.
pub struct ActionServers<A: Ros1Action> {
    graph: Graph,
    base: String,
    servers: BTreeMap<NodeId, Server<A>>,
    building: BTreeSet<NodeId>,
    built: Receiver<Built<A>>,
    built_tx: Sender<Built<A>>,
    reporter: Reporter,
}

impl<A: Ros1Action> ActionServers<A>
where
    ActionServer<A>: Send,
    ServerGoal<A>: Send,
{
    /// No server yet; the robots' go under the namespace `base`.
    pub fn new(graph: &Graph, base: &str, reporter: Reporter) -> Self {
        let (built_tx, built) = channel();
        ActionServers {
            graph: graph.clone(),
            base: base.to_owned(),
            servers: BTreeMap::new(),
            building: BTreeSet::new(),
            built,
            built_tx,
            reporter,
        }
    }

    /// Has the registrar thread make the server of each robot the layer serves as it comes; drops a robot's as it
    /// goes (the layer ended its goal).
    pub fn on_engine_event(
        &mut self,
        engine: &Engine,
        actions: &Actions<A::Kind>,
        event: &EngineEvent,
    ) {
        let Some(action) = action_named::<A::Kind>(A::NAME) else {
            return;
        };
        match event {
            EngineEvent::RobotReady { node, robot } => {
                if !actions.serves(action, *robot)
                    || self.servers.contains_key(node)
                    || !self.building.insert(*node)
                {
                    return;
                }
                let ns = nrt_interface::frames::robot_namespace(engine, *node);
                let name = global(&[&self.base, &ns, A::NAME]);
                let (tx, id, reporter) = (self.built_tx.clone(), *node, self.reporter.clone());
                self.graph
                    .submit(move |g| match ActionServer::<A>::new(g, &name) {
                        Ok(server) => {
                            let _ = tx.send((id, name, server));
                            g.bell.ring();
                        }
                        Err(e) => reporter.error(&format!("node {id}: no {} action: {e}", A::NAME)),
                    });
            }
            EngineEvent::RobotRemoved { node, .. } => {
                self.building.remove(node);
                if let Some(s) = self.servers.remove(node) {
                    self.forget(&s.name);
                }
            }
            _ => {}
        }
    }

    fn forget(&self, name: &str) {
        for t in actionlib::topics(name) {
            self.graph.forget(&t);
        }
    }

    /// Takes the servers made into use, and hands the goals and cancels that came to the layer (never waits).
    pub fn serve(&mut self, engine: &mut Engine, actions: &mut Actions<A::Kind>, now: Instant) {
        while let Ok((node, name, action)) = self.built.try_recv() {
            if !self.building.remove(&node) {
                // the robot went while its server was made
                drop(action);
                self.forget(&name);
                continue;
            }
            let server = Server {
                name,
                action,
                running: BTreeMap::new(),
            };
            self.servers.insert(node, server);
        }
        let watched = action_named::<A::Kind>(A::NAME).filter(|_| A::WATCH_CLIENTS);
        for (node, s) in self.servers.iter_mut() {
            s.running.retain(|_, id| actions.is_active(*id));
            // a goal whose client is gone (nrt_interface::action): anyone on status or feedback?
            if let Some(action) = watched.filter(|a| actions.running(*a).any(|n| n == *node)) {
                actions.client_listening(*node, action, s.action.listened(), now);
            }
            while let Some(asked) = s.action.next(now) {
                match asked {
                    Asked::Goal(id, g) => {
                        match actions.check(A::Kind::host_ref(engine), *node, &A::goal(g)) {
                            Err(why) => s.action.reject(&id, &why),
                            Ok(checked) => {
                                let Some(handle) = s.action.accept(&id) else {
                                    continue;
                                };
                                let handle: Box<HandleOf<A::Kind>> = Box::new(Ros1Goal(handle));
                                let host = A::Kind::host(engine);
                                let started = actions.start(host, *node, checked, handle, now);
                                s.running.insert(id, started);
                            }
                        }
                    }
                    Asked::Cancel(id) => {
                        if let Some(started) = s.running.remove(&id) {
                            actions.cancel(A::Kind::host(engine), started);
                        }
                    }
                }
            }
        }
    }

    /// Publishes every server's status when it changed or is due.
    pub fn publish(&mut self, now: Instant) {
        for s in self.servers.values_mut() {
            s.action.publish_status(now);
        }
    }
}
