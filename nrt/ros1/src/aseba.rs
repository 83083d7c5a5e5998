//! asebaros' ROS 1 interface (ros-aseba-interface.md §2.3, §2.6), driven by the engine from the NRT loop:
//!
//! - `aseba/nodes` (NodeList, latched as asebaros' ROS 1 publisher), republished when it changes;
//!   `aseba/get_nodes`; `aseba/load_script` (compiled by our compiler); `aseba/anonymous_events` both ways
//!   (ROS → Aseba only when `source == 0`).
//! - For each bridged node, under its namespace `<ns>`: `<ns>/aseba/description` (latched, republished after each
//!   script load), `get_description`, `get_variable`, `set_variable`, and one publisher and one subscription
//!   `<ns>/aseba/events/<name>` per global event of the loaded script (ROS → Aseba only when `source == 0`).
//!
//! Unlike ROS 2, a ROS 1 service can fail: a bad request (unknown node or variable, wrong size, no answer from
//! the node in time) is answered with an error that the caller sees (rospy raises `ServiceException` with our
//! message), and so is a `load_script` that cannot read, compile or load its file. What the requests do, and the
//! lines reported, are the layer's ([`nrt_interface::aseba`], [`nrt_interface::load_script`]), as on ROS 2.

use super::conv;
use super::Ros1Error;
use handoff::NodeId;
use nrt_engine::engine::{read_script_file, Engine, EngineEvent, ScriptFileError};
use nrt_engine::network::{NetworkEvent, RequestId};
use nrt_interface::actuators::RobotCommand;
use nrt_interface::aseba::{self as layer, Routed};
use nrt_interface::load_script::{self, LoadScriptRequest};
use nrt_interface::report::Reporter;
use nrt_ros1_client::graph::{global, Graph, Task};
use nrt_ros1_client::net::{Publisher, ServiceServer};
use nrt_ros1_client::ros1_msgs::asebaros_msgs as am;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::mpsc::{channel, sync_channel, Receiver, Sender, SyncSender};
use std::time::{Duration, Instant};

/// Requests that need the engine, handed from the service callbacks and subscription tasks to the NRT loop.
pub type Inbox = Sender<Call>;

/// Longest wait of a service call for the NRT loop (and the node, for `get_variable`).
pub const SERVICE_TIMEOUT: Duration = Duration::from_secs(2);
/// Depth of the event topics (asebaros: 100).
const EVENT_DEPTH: usize = 100;

/// A request from ROS that needs the engine (made by service callbacks and subscription tasks, served by the NRT
/// loop in [`AsebaInterface::serve`]).
#[derive(Debug)]
pub enum Call {
    /// `aseba/get_nodes`.
    GetNodes {
        /// Include the ignored nodes.
        ignored: bool,
        /// Where the answer goes.
        reply: SyncSender<am::NodeList>,
    },
    /// `<ns>/aseba/get_description`.
    GetDescription {
        /// The node.
        node: NodeId,
        /// Where the answer goes.
        reply: SyncSender<Result<am::NodeDescription, String>>,
    },
    /// `<ns>/aseba/get_variable`.
    GetVariable {
        /// The node.
        node: NodeId,
        /// Variable name.
        variable: String,
        /// Where the answer goes (once the node answered).
        reply: SyncSender<Result<Vec<i16>, String>>,
    },
    /// `<ns>/aseba/set_variable`.
    SetVariable {
        /// The node.
        node: NodeId,
        /// Variable name.
        variable: String,
        /// Values.
        data: Vec<i16>,
        /// Where the answer goes.
        reply: SyncSender<Result<(), String>>,
    },
    /// `aseba/load_script`, its file read by the service callback.
    LoadScript {
        /// The request.
        request: LoadScriptRequest,
        /// The file's text, or why it could not be read.
        text: Result<String, ScriptFileError>,
        /// Where the answer goes.
        reply: SyncSender<Result<(), String>>,
    },
    /// An event published on `aseba/anonymous_events` by someone else (source 0).
    Anonymous {
        /// Event id (its rank in the script).
        event: u16,
        /// Payload.
        data: Vec<i16>,
    },
    /// A message on an actuator topic of a driven robot (served by the Thymio interface,
    /// [`super::thymio::ThymioInterface::serve_command`]).
    Robot {
        /// The robot's node.
        node: NodeId,
        /// The topic's leaf.
        topic: &'static str,
        /// What it asks.
        command: RobotCommand,
    },
    /// An event published on `<ns>/aseba/events/<name>` by someone else (source 0).
    Event {
        /// The node.
        node: NodeId,
        /// Event name.
        name: String,
        /// Payload.
        data: Vec<i16>,
    },
}

/// Hands a request to the NRT loop and waits for its answer (on tokio's blocking pool, never on the RT thread).
pub fn ask<R>(
    inbox: &Inbox,
    bell: &nrt_ros1_client::Bell,
    make: impl FnOnce(SyncSender<R>) -> Call,
) -> Result<R, anyhow::Error> {
    let (tx, rx): (SyncSender<R>, Receiver<R>) = sync_channel(1);
    inbox
        .send(make(tx))
        .map_err(|_| anyhow::anyhow!("the driver is stopping"))?;
    bell.ring();
    rx.recv_timeout(SERVICE_TIMEOUT)
        .map_err(|_| anyhow::anyhow!("no answer within {} s", SERVICE_TIMEOUT.as_secs_f64()))
}

/// The interface of one bridged node.
struct NodeInterface {
    description: Publisher<am::NodeDescription>,
    _services: Vec<ServiceServer>,
    /// Aseba → ROS publishers and ROS → Aseba subscription tasks, per global event of its script.
    events: BTreeMap<String, (Publisher<am::Event>, Task)>,
    /// Event topics being registered.
    requested: BTreeSet<String>,
    namespace: String,
}

/// What the registrar thread made.
enum Built {
    Node(NodeId, NodeInterface),
    Event(NodeId, String, Publisher<am::Event>, Task),
}

struct PendingGet {
    request: RequestId,
    node: NodeId,
    variable: String,
    reply: SyncSender<Result<Vec<i16>, String>>,
}

/// asebaros' interface.
pub struct AsebaInterface {
    /// The lines for ROS users.
    reporter: Reporter,
    graph: Graph,
    inbox: Inbox,
    base: String,
    nodes: Publisher<am::NodeList>,
    anonymous: Publisher<am::AnonymousEvent>,
    /// `aseba/anonymous_events` ROS → Aseba.
    _anonymous_in: Task,
    _get_nodes: ServiceServer,
    _load_script: ServiceServer,
    per_node: BTreeMap<NodeId, NodeInterface>,
    /// Nodes whose interface is being registered.
    building: BTreeSet<NodeId>,
    built: Receiver<Built>,
    built_tx: Sender<Built>,
    pending: Vec<PendingGet>,
    last_nodes: Option<am::NodeList>,
}

impl AsebaInterface {
    /// Whether a subscriber other than this node's own (the ROS → Aseba direction subscribes to the same topic)
    /// is connected to an Aseba event topic (`aseba/anonymous_events`, a node's `aseba/events/<name>`): the
    /// frames are then wanted at once.
    pub fn events_heard(&self) -> bool {
        self.anonymous.subscriber_count() > 1
            || self
                .per_node
                .values()
                .flat_map(|n| n.events.values())
                .any(|(p, _)| p.subscriber_count() > 1)
    }

    /// Creates the network-wide part under namespace `base`; requests go to `inbox`; what users should read goes to
    /// `reporter`.
    pub fn new(
        graph: &Graph,
        base: &str,
        inbox: Inbox,
        reporter: Reporter,
    ) -> Result<AsebaInterface, Ros1Error> {
        let (i, bell) = (inbox.clone(), graph.bell.clone());
        let get_nodes = graph.serve::<am::GetNodeList>(
            &global(&[base, "aseba/get_nodes"]),
            move |req: am::GetNodeListRequest| {
                let nodes = ask(&i, &bell, |reply| Call::GetNodes {
                    ignored: req.ignored,
                    reply,
                })?;
                Ok(am::GetNodeListResponse { nodes: nodes.nodes })
            },
        )?;
        let (i, bell) = (inbox.clone(), graph.bell.clone());
        let load_script = graph.serve::<am::LoadScript>(
            &global(&[base, "aseba/load_script"]),
            move |request: am::LoadScriptRequest| {
                // on tokio's blocking pool: the file is read here, not in the NRT loop
                let text = read_script_file(&request.file_name);
                let request = conv::load_script_request(request);
                ask(&i, &bell, |reply| Call::LoadScript {
                    request,
                    text,
                    reply,
                })?
                .map_err(anyhow::Error::msg)?;
                Ok(am::LoadScriptResponse {})
            },
        )?;
        let anonymous_topic = global(&[base, "aseba/anonymous_events"]);
        let anonymous = graph.advertise(&anonymous_topic, EVENT_DEPTH, false)?;
        // our own publications carry the node id: not echoed back
        let anonymous_in = graph.forward(
            &anonymous_topic,
            EVENT_DEPTH,
            inbox.clone(),
            |ev: am::AnonymousEvent| {
                layer::from_ros(ev.source).then_some(Call::Anonymous {
                    event: ev.r#type,
                    data: ev.data,
                })
            },
        )?;
        let (built_tx, built) = channel();
        Ok(AsebaInterface {
            reporter,
            nodes: graph.advertise(&global(&[base, "aseba/nodes"]), 1, true)?,
            anonymous,
            _anonymous_in: anonymous_in,
            _get_nodes: get_nodes,
            _load_script: load_script,
            graph: graph.clone(),
            inbox,
            base: base.to_owned(),
            per_node: BTreeMap::new(),
            building: BTreeSet::new(),
            built,
            built_tx,
            pending: Vec::new(),
            last_nodes: None,
        })
    }

    /// Serves one request (from the inbox).
    pub fn serve(&mut self, engine: &mut Engine, call: Call) {
        match call {
            Call::GetNodes { ignored, reply } => {
                let _ = reply.try_send(conv::node_list(&layer::node_list(
                    engine.network(),
                    ignored,
                )));
            }
            Call::GetDescription { node, reply } => {
                let d = engine
                    .network()
                    .node(node)
                    .map(|n| conv::description(&layer::description(n)))
                    .ok_or_else(|| format!("node {node} is not known"));
                let _ = reply.try_send(d);
            }
            Call::GetVariable {
                node,
                variable,
                reply,
            } => match engine
                .network_mut()
                .get_variable(node, &variable, Instant::now())
            {
                Ok(request) => self.pending.push(PendingGet {
                    request,
                    node,
                    variable,
                    reply,
                }),
                Err(e) => {
                    let text = layer::get_variable_refused(&e);
                    self.reporter.error(&text);
                    let _ = reply.try_send(Err(text));
                }
            },
            Call::SetVariable {
                node,
                variable,
                data,
                reply,
            } => {
                let r = engine.set_variable(node, &variable, &data).map_err(|e| {
                    let text = layer::set_variable_refused(&e);
                    self.reporter.error(&text);
                    text
                });
                let _ = reply.try_send(r);
            }
            Call::Event { node, name, data } => {
                if let Err(e) = engine.emit_script_event(node, &name, &data) {
                    self.reporter.error(&format!(
                        "event {} to node {node}: {}",
                        nrt_ros1_client::net::clip(&name),
                        nrt_ros1_client::net::clip(&e.to_string())
                    ));
                }
            }
            Call::Anonymous { event, data } => {
                if let Err(e) = engine.emit_anonymous(event, &data) {
                    self.reporter
                        .error(&format!("anonymous event {event}: {e}"));
                }
            }
            Call::LoadScript {
                request,
                text,
                reply,
            } => {
                // the ROS 2 behaviour: reported on the log; and a refused script fails the call
                let outcome = load_script::load_script(engine, &request, text);
                let text = outcome.text();
                self.reporter.report(outcome.severity(), &text);
                let _ = reply.try_send(if outcome.is_refused() {
                    Err(text)
                } else {
                    Ok(())
                });
            }
            // the bridge hands these to the Thymio interface
            Call::Robot { .. } => {}
        }
    }

    /// Takes what the registrar thread made (a node's interface, an event topic) into use.
    pub fn poll_built(&mut self, engine: &Engine) {
        while let Ok(b) = self.built.try_recv() {
            match b {
                Built::Node(id, iface) => {
                    self.building.remove(&id);
                    self.per_node.insert(id, iface);
                    self.request_events(engine, id);
                    self.publish_description(engine, id);
                }
                Built::Event(id, name, publisher, task) => {
                    let wanted = script_events(engine, id).contains(&name);
                    let Some(ni) = self.per_node.get_mut(&id) else {
                        continue;
                    };
                    let requested = ni.requested.remove(&name);
                    if wanted && requested {
                        ni.events.insert(name, (publisher, task));
                    } else {
                        let topic = global(&[&self.base, &ni.namespace, "aseba/events", &name]);
                        self.graph.forget(&topic);
                    }
                }
            }
        }
    }

    /// Reacts to what happened in the engine.
    pub fn on_engine_event(&mut self, engine: &Engine, event: &EngineEvent) {
        match event {
            EngineEvent::Network(NetworkEvent::NodeAccepted { id }) => self.add_node(engine, *id),
            EngineEvent::Network(NetworkEvent::UserEvent {
                source,
                id,
                args,
                stamp_ns,
            }) => self.event_from_aseba(engine, *source, *id, args, *stamp_ns),
            EngineEvent::Network(NetworkEvent::Variables { request, result }) => {
                if let Some(i) = self.pending.iter().position(|p| p.request == *request) {
                    let p = self.pending.swap_remove(i);
                    let r = result.clone().map_err(|e| {
                        let text = layer::get_variable_failed(&p.variable, p.node, &e);
                        self.reporter.error(&text);
                        text
                    });
                    let _ = p.reply.try_send(r);
                }
            }
            EngineEvent::ScriptLoaded { node } => {
                self.request_events(engine, *node);
                self.publish_description(engine, *node);
            }
            _ => {}
        }
    }

    /// Publishes `aseba/nodes` if the list changed.
    pub fn publish_nodes(&mut self, engine: &Engine) {
        let list = conv::node_list(&layer::node_list(engine.network(), false));
        if self.last_nodes.as_ref() == Some(&list) {
            return;
        }
        if let Err(e) = self.graph.publish(&self.nodes, &list) {
            self.reporter
                .warn(&format!("ROS 1: cannot publish aseba/nodes: {e}"));
        }
        self.last_nodes = Some(list);
    }

    /// Has the registrar thread make the interface of node `id` (services, latched description).
    fn add_node(&mut self, engine: &Engine, id: NodeId) {
        if self.per_node.contains_key(&id) || !self.building.insert(id) {
            return;
        }
        let namespace = engine
            .network()
            .node(id)
            .map(|n| n.namespace().to_owned())
            .unwrap_or_default();
        let (base, inbox, tx) = (self.base.clone(), self.inbox.clone(), self.built_tx.clone());
        let reporter = self.reporter.clone();
        self.graph.submit(
            move |g| match node_interface(g, &base, namespace, id, &inbox) {
                Ok(iface) => {
                    let _ = tx.send(Built::Node(id, iface));
                    g.bell.ring();
                }
                Err(e) => reporter.error(&format!("ROS 1: node {id}: no asebaros interface: {e}")),
            },
        );
    }

    /// One publisher and one subscription per global event of the node's script (kept when the name stays),
    /// made by the registrar thread.
    fn request_events(&mut self, engine: &Engine, id: NodeId) {
        let Some(ni) = self.per_node.get_mut(&id) else {
            return;
        };
        let wanted = script_events(engine, id);
        let gone: Vec<String> = ni
            .events
            .keys()
            .filter(|name| !wanted.contains(name))
            .cloned()
            .collect();
        for name in gone {
            ni.events.remove(&name);
            self.graph
                .forget(&global(&[&self.base, &ni.namespace, "aseba/events", &name]));
        }
        for name in wanted {
            if ni.events.contains_key(&name) || !ni.requested.insert(name.clone()) {
                continue;
            }
            let topic = global(&[&self.base, &ni.namespace, "aseba/events", &name]);
            let (inbox, tx) = (self.inbox.clone(), self.built_tx.clone());
            let reporter = self.reporter.clone();
            self.graph
                .submit(move |g| match event_topic(g, &topic, id, &name, inbox) {
                    Ok((publisher, task)) => {
                        let _ = tx.send(Built::Event(id, name, publisher, task));
                        g.bell.ring();
                    }
                    Err(e) => {
                        reporter.error(&format!("ROS 1: node {id}: event topic {topic}: {e}"))
                    }
                });
        }
    }

    fn publish_description(&self, engine: &Engine, id: NodeId) {
        let (Some(ni), Some(n)) = (self.per_node.get(&id), engine.network().node(id)) else {
            return;
        };
        let description = conv::description(&layer::description(n));
        if let Err(e) = self.graph.publish(&ni.description, &description) {
            self.reporter
                .warn(&format!("node {id}: cannot publish its description: {e}"));
        }
    }

    fn event_from_aseba(
        &self,
        engine: &Engine,
        source: NodeId,
        id: u16,
        args: &[i16],
        stamp_ns: u64,
    ) {
        let stamp = nrt_interface::geometry::stamp(stamp_ns);
        let result = match layer::route_event(engine.network(), source, id, args, stamp) {
            Routed::Named(name, event) => {
                match self
                    .per_node
                    .get(&source)
                    .and_then(|ni| ni.events.get(name))
                {
                    Some((publisher, _)) => self.graph.publish(publisher, &conv::event(event)),
                    // its topic is being registered: nobody can have subscribed to it yet
                    None => return,
                }
            }
            Routed::Anonymous(event) => {
                self.graph.publish(&self.anonymous, &conv::anonymous(event))
            }
        };
        if let Err(e) = result {
            self.reporter.warn(&format!(
                "ROS 1: cannot publish event {id} of node {source}: {e}"
            ));
        }
    }
}

/// The global event names of the script loaded on node `id` (none without a script).
fn script_events(engine: &Engine, id: NodeId) -> Vec<String> {
    layer::script_events(engine.network(), id)
        .into_iter()
        .map(|(name, _)| name)
        .collect()
}

/// Registers the interface of node `id` in `namespace` (on the registrar thread).
fn node_interface(
    g: &Graph,
    base: &str,
    namespace: String,
    id: NodeId,
    inbox: &Inbox,
) -> Result<NodeInterface, Ros1Error> {
    let name = |leaf: &str| global(&[base, &namespace, "aseba", leaf]);
    let bell = &g.bell;
    let mut services = Vec::new();
    let (i, b) = (inbox.clone(), bell.clone());
    services.push(g.serve::<am::GetVariable>(
        &name("get_variable"),
        move |req: am::GetVariableRequest| {
            let data = ask(&i, &b, |reply| Call::GetVariable {
                node: id,
                variable: req.variable,
                reply,
            })?
            .map_err(anyhow::Error::msg)?;
            Ok(am::GetVariableResponse { data })
        },
    )?);
    let (i, b) = (inbox.clone(), bell.clone());
    services.push(g.serve::<am::SetVariable>(
        &name("set_variable"),
        move |req: am::SetVariableRequest| {
            ask(&i, &b, |reply| Call::SetVariable {
                node: id,
                variable: req.variable,
                data: req.data,
                reply,
            })?
            .map_err(anyhow::Error::msg)?;
            Ok(am::SetVariableResponse {})
        },
    )?);
    let (i, b) = (inbox.clone(), bell.clone());
    services.push(g.serve::<am::GetDescription>(
        &name("get_description"),
        move |_: am::GetDescriptionRequest| {
            let description = ask(&i, &b, |reply| Call::GetDescription { node: id, reply })?
                .map_err(anyhow::Error::msg)?;
            Ok(am::GetDescriptionResponse { description })
        },
    )?);
    Ok(NodeInterface {
        description: g.advertise(&name("description"), 1, true)?,
        _services: services,
        events: BTreeMap::new(),
        requested: BTreeSet::new(),
        namespace,
    })
}

/// Registers `<ns>/aseba/events/<name>` both ways (on the registrar thread): the publisher, and a task that hands
/// what others publish (source 0) to the NRT loop.
fn event_topic(
    g: &Graph,
    topic: &str,
    id: NodeId,
    name: &str,
    inbox: Inbox,
) -> Result<(Publisher<am::Event>, Task), Ros1Error> {
    let publisher = g.advertise(topic, EVENT_DEPTH, false)?;
    let event = name.to_owned();
    // our own publications carry the node id: not echoed back
    let task = g.forward(topic, EVENT_DEPTH, inbox, move |ev: am::Event| {
        layer::from_ros(ev.source).then(|| Call::Event {
            node: id,
            name: event.clone(),
            data: ev.data,
        })
    })?;
    Ok((publisher, task))
}
