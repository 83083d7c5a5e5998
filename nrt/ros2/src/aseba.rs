//! The generic Aseba bridge (asebaros' ROS interface, ros-aseba-interface.md §2.3, §2.6), driven by the engine.
//!
//! - `aseba/nodes` (NodeList, transient_local): the bridged nodes, republished when it changes;
//!   `aseba/get_nodes` (with the ignored nodes on request); `aseba/load_script` (compiled by our compiler);
//!   `aseba/anonymous_events` both ways.
//! - For each bridged node, under its namespace `<ns>`: `<ns>/aseba/description` (transient_local, republished
//!   after each script load), `get_description`, `get_variable`, `set_variable`, and one publisher and one
//!   subscription `<ns>/aseba/events/<name>` per global event of the loaded script, created when it is loaded
//!   (not on the first event, so early subscribers miss nothing) and kept across reloads when the name stays.
//!
//! Rules: ROS → Aseba only when `source == 0` (our own publications carry the node id and are not echoed back; an
//! event is not published at all while no one but that subscription of ours would receive it);
//! payload sizes are checked against the script's declaration both ways (a mismatching event from Aseba goes to
//! `anonymous_events`); bad requests (unknown variable or event, wrong size, compile errors with line:col) are
//! answered and reported on the ROS log (`/rosout`), never swallowed — the services of the asebaros interface have
//! no field for an error. `load_script` reads its file on a worker thread (`engine::ScriptReader`: regular files
//! of at most 1 MiB, opened without blocking) and answers when the script is loaded or refused, with the reason
//! (not found, permission denied, not a regular file, too large) on the log: a path never blocks the loop.

use super::convert;
use super::names::{self, NameError};
use super::report::Reporter;
use super::spinner::NodeAccess;
use super::{drain, Srv, Sub};
use handoff::NodeId;
use nrt_engine::engine::{Engine, EngineEvent, ReadTicket, ScriptReader};
use nrt_engine::network::{NetworkEvent, RequestId};
use nrt_interface::aseba::{self as layer, Routed};
use nrt_interface::load_script::{self, LoadScriptOutcome};
use r2r::asebaros_msgs::msg::{AnonymousEvent, Event, NodeDescription, NodeList};
use r2r::asebaros_msgs::srv::{GetDescription, GetNodeList, GetVariable, LoadScript, SetVariable};
use r2r::{ParameterValue, Publisher, QosProfile, ServiceRequest};
use std::collections::BTreeMap;
use std::time::Instant;

/// Depth of the event topics (asebaros: 100).
const EVENT_DEPTH: usize = 100;

fn latched() -> QosProfile {
    QosProfile::default()
        .keep_last(1)
        .reliable()
        .transient_local()
}

fn events_qos() -> QosProfile {
    QosProfile::default().keep_last(EVENT_DEPTH).reliable()
}

/// Whether a publication on an event topic (`<ns>/aseba/events/<name>`, `aseba/anonymous_events`) would reach
/// anyone but this node's own subscription to the same topic (the ROS → Aseba direction), which drops it
/// (`source != 0`). The topics are volatile: a subscriber not matched yet would not receive it either. Skipping
/// unheard publications saves the DDS write, its delivery to our own subscription and the spinner's and NRT
/// loop's wake-ups for that echo (most of the bridge's CPU while nobody listens). Publishes if the count fails.
fn heard_by_others<T: r2r::WrappedTypesupport + 'static>(publisher: &Publisher<T>) -> bool {
    publisher
        .get_inter_process_subscription_count()
        .map_or(true, |n| n > 1)
}

/// One global event of a node's script on ROS.
struct EventTopic {
    name: String,
    size: usize,
    publisher: Publisher<Event>,
    subscription: Sub<Event>,
}

/// The ROS interface of one bridged node.
struct NodeInterface {
    namespace: String,
    description: Publisher<NodeDescription>,
    get_description: Srv<GetDescription::Service>,
    get_variable: Srv<GetVariable::Service>,
    set_variable: Srv<SetVariable::Service>,
    /// Index = Aseba event id; `None` for an event whose name cannot be a ROS name.
    events: Vec<Option<EventTopic>>,
}

/// A `get_variable` call waiting for the node's answer.
struct PendingGet {
    request: RequestId,
    node: NodeId,
    variable: String,
    call: ServiceRequest<GetVariable::Service>,
}

/// A `load_script` call waiting for its file (read off the loop's thread).
struct PendingLoad {
    ticket: ReadTicket,
    call: ServiceRequest<LoadScript::Service>,
}

/// The asebaros interface of the bridge node.
pub struct AsebaInterface {
    reporter: Reporter,
    nodes: Publisher<NodeList>,
    anonymous: Publisher<AnonymousEvent>,
    anonymous_in: Sub<AnonymousEvent>,
    get_nodes: Srv<GetNodeList::Service>,
    load_script: Srv<LoadScript::Service>,
    /// Reads the files of `load_script` calls off the loop's thread.
    reader: ScriptReader,
    loads: Vec<PendingLoad>,
    per_node: BTreeMap<NodeId, NodeInterface>,
    /// Namespace → the node that owns it.
    namespaces: BTreeMap<String, NodeId>,
    pending: Vec<PendingGet>,
    last_nodes: Option<NodeList>,
    /// Something that may change `aseba/nodes` happened since it was last published.
    nodes_dirty: bool,
}

impl AsebaInterface {
    /// Creates the network-wide topics and services on `node`; `reader` reads the files of
    /// `load_script` calls.
    pub fn new(
        node: &mut r2r::Node,
        reporter: Reporter,
        reader: ScriptReader,
    ) -> Result<AsebaInterface, r2r::Error> {
        Ok(AsebaInterface {
            reporter,
            nodes: node.create_publisher(names::NODES, latched())?,
            anonymous: node.create_publisher(names::ANONYMOUS_EVENTS, events_qos())?,
            anonymous_in: Box::new(node.subscribe(names::ANONYMOUS_EVENTS, events_qos())?),
            get_nodes: Box::new(
                node.create_service::<GetNodeList::Service>(
                    names::GET_NODES,
                    QosProfile::default(),
                )?,
            ),
            load_script: Box::new(node.create_service::<LoadScript::Service>(
                names::LOAD_SCRIPT,
                QosProfile::default(),
            )?),
            reader,
            loads: Vec::new(),
            per_node: BTreeMap::new(),
            namespaces: BTreeMap::new(),
            pending: Vec::new(),
            last_nodes: None,
            nodes_dirty: true,
        })
    }

    /// Serves what ROS asked since the last call (services, events to Aseba) when `ros_work`
    /// (the spinner waited since: [`super::spinner::SharedNode::take_work`]), and the script
    /// files read since.
    pub fn poll_ros(&mut self, node: &mut NodeAccess, engine: &mut Engine, ros_work: bool) {
        while let Some(done) = self.reader.try_done() {
            let Some(i) = self.loads.iter().position(|l| l.ticket == done.ticket) else {
                continue;
            };
            let load = self.loads.swap_remove(i);
            self.serve_load_script(node, engine, &load.call.message, done.result);
            self.respond(load.call, LoadScript::Response {});
        }
        if !ros_work {
            return;
        }
        let calls: Vec<_> = drain(&mut self.get_nodes).collect();
        for call in calls {
            let nodes = layer::node_list(engine.network(), call.message.ignored);
            let nodes = convert::node_list(&nodes).nodes;
            self.respond(call, GetNodeList::Response { nodes });
        }
        let calls: Vec<_> = drain(&mut self.load_script).collect();
        for call in calls {
            match self.reader.submit(&call.message.file_name) {
                Ok(ticket) => self.loads.push(PendingLoad { ticket, call }),
                Err(e) => {
                    let outcome = LoadScriptOutcome::unreadable(&call.message.file_name, e);
                    self.reporter.error(&outcome.text());
                    self.respond(call, LoadScript::Response {});
                }
            }
        }
        for ev in drain(&mut self.anonymous_in).collect::<Vec<_>>() {
            if !layer::from_ros(ev.source) {
                continue;
            }
            if let Err(e) = engine.emit_anonymous(ev.type_, &ev.data) {
                self.reporter
                    .error(&format!("anonymous event {}: {e}", ev.type_));
            }
        }
        let ids: Vec<NodeId> = self.per_node.keys().copied().collect();
        for id in ids {
            self.poll_node(id, engine);
        }
    }

    fn poll_node(&mut self, id: NodeId, engine: &mut Engine) {
        let Some(ni) = self.per_node.get_mut(&id) else {
            return;
        };
        let describe: Vec<_> = drain(&mut ni.get_description).collect();
        let gets: Vec<_> = drain(&mut ni.get_variable).collect();
        let sets: Vec<_> = drain(&mut ni.set_variable).collect();
        let mut to_aseba = Vec::new();
        for topic in ni.events.iter_mut().flatten() {
            for ev in drain(&mut topic.subscription) {
                if layer::from_ros(ev.source) {
                    to_aseba.push((topic.name.clone(), ev.data));
                }
            }
        }
        for call in describe {
            let description = engine
                .network()
                .node(id)
                .map(|n| convert::description(&layer::description(n)))
                .unwrap_or_default();
            self.respond(call, GetDescription::Response { description });
        }
        for call in gets {
            let variable = call.message.variable.clone();
            match engine
                .network_mut()
                .get_variable(id, &variable, Instant::now())
            {
                Ok(request) => self.pending.push(PendingGet {
                    request,
                    node: id,
                    variable,
                    call,
                }),
                Err(e) => {
                    self.reporter.error(&layer::get_variable_refused(&e));
                    self.respond(call, GetVariable::Response { data: Vec::new() });
                }
            }
        }
        for call in sets {
            let m = &call.message;
            if let Err(e) = engine.set_variable(id, &m.variable, &m.data) {
                self.reporter.error(&layer::set_variable_refused(&e));
            }
            self.respond(call, SetVariable::Response {});
        }
        for (name, data) in to_aseba {
            if let Err(e) = engine.emit_script_event(id, &name, &data) {
                self.reporter.error(&format!("event to node {id}: {e}"));
            }
        }
    }

    fn serve_load_script(
        &mut self,
        node: &mut NodeAccess,
        engine: &mut Engine,
        req: &LoadScript::Request,
        text: Result<String, nrt_engine::engine::ScriptFileError>,
    ) {
        let request = convert::load_script_request(req);
        let outcome = load_script::load_script(engine, &request, text);
        self.reporter.report(outcome.severity(), &outcome.text());
        if outcome.is_refused() {
            return;
        }
        let constants = request.constants();
        if req.set_as_default {
            let mut params = node.get().params.lock().expect("r2r parameter map");
            params.retain(|name, _| !name.starts_with("script.constants."));
            params.insert(
                "script.path".into(),
                r2r::Parameter::new(ParameterValue::String(req.file_name.clone())),
            );
            for (name, value) in &constants {
                params.insert(
                    format!("script.constants.{name}"),
                    r2r::Parameter::new(ParameterValue::Integer(i64::from(*value))),
                );
            }
        }
    }

    fn respond<T: r2r::WrappedServiceTypeSupport + 'static>(
        &self,
        call: ServiceRequest<T>,
        response: T::Response,
    ) {
        if let Err(e) = call.respond(response) {
            self.reporter
                .warn(&format!("cannot answer a service call: {e}"));
        }
    }

    /// Reacts to what happened in the engine.
    pub fn on_engine_event(&mut self, node: &mut NodeAccess, engine: &Engine, event: &EngineEvent) {
        if matches!(
            event,
            EngineEvent::Network(
                NetworkEvent::NodeAccepted { .. }
                    | NetworkEvent::NodeIgnored { .. }
                    | NetworkEvent::NodeLost { .. }
                    | NetworkEvent::NodeBack { .. }
            ) | EngineEvent::ScriptLoaded { .. }
                | EngineEvent::LinkUp { .. }
                | EngineEvent::LinkDown { .. }
        ) {
            self.nodes_dirty = true;
        }
        match event {
            EngineEvent::Network(NetworkEvent::NodeAccepted { id }) => {
                self.add_node(node.get(), engine, *id);
            }
            EngineEvent::Network(NetworkEvent::UserEvent {
                source,
                id,
                args,
                stamp_ns,
            }) => self.event_from_aseba(engine, *source, *id, args, *stamp_ns),
            EngineEvent::Network(NetworkEvent::Variables { request, result }) => {
                self.answer_get(*request, result);
            }
            EngineEvent::ScriptLoaded { node: id } => {
                self.refresh_events(node.get(), engine, *id);
                self.publish_description(engine, *id);
            }
            _ => {}
        }
    }

    /// Whether anyone but this node listens to an Aseba event topic (`aseba/anonymous_events`, a node's
    /// `<ns>/aseba/events/<name>`): the frames are then wanted at once ([`nrt_interface::front_end::FrontEnd::wants_frames`]).
    pub fn events_heard(&self) -> bool {
        heard_by_others(&self.anonymous)
            || self
                .per_node
                .values()
                .flat_map(|n| n.events.iter().flatten())
                .any(|e| heard_by_others(&e.publisher))
    }

    /// Publishes `aseba/nodes` if the list changed.
    pub fn publish_nodes(&mut self, engine: &Engine) {
        if !std::mem::take(&mut self.nodes_dirty) {
            return;
        }
        let list = convert::node_list(&layer::node_list(engine.network(), false));
        if self.last_nodes.as_ref() == Some(&list) {
            return;
        }
        if let Err(e) = self.nodes.publish(&list) {
            self.reporter
                .warn(&format!("cannot publish aseba/nodes: {e}"));
            self.nodes_dirty = true;
            return;
        }
        self.last_nodes = Some(list);
    }

    fn add_node(&mut self, node: &mut r2r::Node, engine: &Engine, id: NodeId) {
        let Some(n) = engine.network().node(id) else {
            return;
        };
        if self.per_node.contains_key(&id) {
            return self.publish_description(engine, id);
        }
        let namespace = n.namespace().to_owned();
        if let Some(owner) = self.namespaces.get(&namespace) {
            let shown = if namespace.is_empty() {
                "(none)"
            } else {
                &namespace
            };
            return self.reporter.error(&format!(
                "nodes {owner} and {id} share the ROS namespace {shown}: node {id} gets no \
                     per-node interface (give the node classes a prefix or distinct namespaces)"
            ));
        }
        match NodeInterface::new(node, &namespace) {
            Ok(ni) => {
                self.namespaces.insert(namespace, id);
                self.per_node.insert(id, ni);
                self.refresh_events(node, engine, id);
                self.publish_description(engine, id);
            }
            Err(e) => self
                .reporter
                .error(&format!("node {id}: no per-node interface: {e}")),
        }
    }

    fn publish_description(&self, engine: &Engine, id: NodeId) {
        let (Some(ni), Some(n)) = (self.per_node.get(&id), engine.network().node(id)) else {
            return;
        };
        if let Err(e) = ni
            .description
            .publish(&convert::description(&layer::description(n)))
        {
            self.reporter
                .warn(&format!("cannot publish the description of node {id}: {e}"));
        }
    }

    /// Makes the event topics of node `id` those of its current script, keeping the topics whose name stays.
    fn refresh_events(&mut self, node: &mut r2r::Node, engine: &Engine, id: NodeId) {
        let Some(ni) = self.per_node.get_mut(&id) else {
            return;
        };
        let declared: Vec<(String, u16)> = engine
            .network()
            .node(id)
            .and_then(|n| n.script.as_ref())
            .map(|s| s.events.clone())
            .unwrap_or_default();
        let mut old: BTreeMap<String, EventTopic> = ni
            .events
            .drain(..)
            .flatten()
            .map(|t| (t.name.clone(), t))
            .collect();
        let mut problems = Vec::new();
        for (name, size) in declared {
            let topic = match old.remove(&name) {
                Some(mut t) => {
                    t.size = usize::from(size);
                    Some(t)
                }
                None => match EventTopic::new(node, &ni.namespace, &name, size) {
                    Ok(t) => Some(t),
                    Err(e) => {
                        problems.push(format!("event {name} of node {id} is not on ROS: {e}"));
                        None
                    }
                },
            };
            ni.events.push(topic);
        }
        for (_, stale) in old {
            // The subscription is destroyed by r2r once its stream is dropped.
            node.destroy_publisher(stale.publisher);
        }
        for p in problems {
            self.reporter.warn(&p);
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
        // the layer's route; a declared event whose name cannot be a ROS name has no topic: anonymous
        let topic = self
            .per_node
            .get(&source)
            .and_then(|ni| ni.events.get(usize::from(id)))
            .and_then(Option::as_ref);
        let anonymous = match (
            layer::route_event(engine.network(), source, id, args, stamp),
            topic,
        ) {
            (Routed::Named(_, ev), Some(t)) => {
                if !heard_by_others(&t.publisher) {
                    return;
                }
                if let Err(e) = t.publisher.publish(&convert::event(ev)) {
                    self.reporter
                        .warn(&format!("cannot publish event {}: {e}", t.name));
                }
                return;
            }
            (Routed::Named(_, ev), None) => layer::AnonymousEvent {
                stamp: ev.stamp,
                source: ev.source,
                kind: id,
                data: ev.data,
            },
            (Routed::Anonymous(ev), _) => ev,
        };
        if !heard_by_others(&self.anonymous) {
            return;
        }
        if let Err(e) = self.anonymous.publish(&convert::anonymous(anonymous)) {
            self.reporter
                .warn(&format!("cannot publish an anonymous event: {e}"));
        }
    }

    fn answer_get(
        &mut self,
        request: RequestId,
        result: &Result<Vec<i16>, nrt_engine::network::NetError>,
    ) {
        let Some(i) = self.pending.iter().position(|p| p.request == request) else {
            return;
        };
        let p = self.pending.swap_remove(i);
        let data = match result {
            Ok(values) => values.clone(),
            Err(e) => {
                self.reporter
                    .error(&layer::get_variable_failed(&p.variable, p.node, &e));
                Vec::new()
            }
        };
        self.respond(p.call, GetVariable::Response { data });
    }
}

impl NodeInterface {
    fn new(node: &mut r2r::Node, namespace: &str) -> Result<NodeInterface, InterfaceError> {
        let name = |leaf: &str| names::node_scoped(namespace, leaf);
        Ok(NodeInterface {
            namespace: namespace.to_owned(),
            description: node.create_publisher(&name("description")?, latched())?,
            get_description: Box::new(node.create_service::<GetDescription::Service>(
                &name("get_description")?,
                QosProfile::default(),
            )?),
            get_variable: Box::new(node.create_service::<GetVariable::Service>(
                &name("get_variable")?,
                QosProfile::default(),
            )?),
            set_variable: Box::new(node.create_service::<SetVariable::Service>(
                &name("set_variable")?,
                QosProfile::default(),
            )?),
            events: Vec::new(),
        })
    }
}

impl EventTopic {
    fn new(
        node: &mut r2r::Node,
        namespace: &str,
        name: &str,
        size: u16,
    ) -> Result<EventTopic, InterfaceError> {
        let topic = names::event_topic(namespace, name)?;
        Ok(EventTopic {
            name: name.to_owned(),
            size: usize::from(size),
            publisher: node.create_publisher(&topic, events_qos())?,
            subscription: Box::new(node.subscribe(&topic, events_qos())?),
        })
    }
}

/// Why a per-node interface or an event topic could not be made.
#[derive(Debug, thiserror::Error)]
pub enum InterfaceError {
    /// A namespace or event name that cannot be a ROS name.
    #[error(transparent)]
    Name(#[from] NameError),
    /// rcl refused the entity.
    #[error("rcl: {0}")]
    Rcl(#[from] r2r::Error),
}
