//! The state machine of the network manager.

use super::node::{IgnoreReason, LoadedScript, Node, NodeState, Via};
use super::requests::{PendingGet, RequestId};
use super::{HOST_PROTOCOL_VERSION, MIN_TARGET_PROTOCOL_VERSION};
use crate::params::BridgeParams;
use crate::policy::NodesPolicy;
use msgs::wire::{Frame, Message, Words, BYTECODE_CHUNK_WORDS, HOST_SOURCE, MAX_PAYLOAD_WORDS};
use std::collections::{BTreeMap, VecDeque};
use std::time::{Duration, Instant};

/// Timing of the manager.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ManagerConfig {
    /// Period of LIST_NODES (asebaros: 1 s).
    pub ping_period: Duration,
    /// Silence after which a node is considered gone (asebaros: 3 s).
    pub node_timeout: Duration,
    /// Delay before asking again for an incomplete description.
    pub describe_retry: Duration,
    /// Deadline of a GET_VARIABLES request.
    pub request_timeout: Duration,
    /// Highest protocol version accepted.
    pub max_protocol_version: u16,
}

impl Default for ManagerConfig {
    fn default() -> Self {
        Self {
            ping_period: Duration::from_secs(1),
            node_timeout: Duration::from_secs(3),
            describe_retry: Duration::from_secs(1),
            request_timeout: Duration::from_millis(1000),
            max_protocol_version: 100,
        }
    }
}

/// Where a frame goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dest {
    /// One route: a link of the RT thread or the switch.
    Link(Via),
    /// Every link.
    All,
}

/// A frame to send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outgoing {
    /// Destination link(s).
    pub dest: Dest,
    /// The whole frame.
    pub frame: Vec<u8>,
}

/// What happened on the network.
#[derive(Debug, Clone, PartialEq)]
pub enum NetworkEvent {
    /// A node answered for the first time; its description is being read.
    NodeDiscovered {
        /// Node id.
        id: u16,
        /// Protocol version it announced.
        protocol_version: u16,
    },
    /// A node is described and bridged.
    NodeAccepted {
        /// Node id.
        id: u16,
    },
    /// A node is described but not bridged.
    NodeIgnored {
        /// Node id.
        id: u16,
        /// Why.
        reason: IgnoreReason,
    },
    /// A node went silent (or its link was lost).
    NodeLost {
        /// Node id.
        id: u16,
    },
    /// A lost node answered again.
    NodeBack {
        /// Node id.
        id: u16,
    },
    /// A user event from a node.
    UserEvent {
        /// Sender node id.
        source: u16,
        /// Event id (message type).
        id: u16,
        /// Arguments.
        args: Vec<i16>,
        /// RT receive time, CLOCK_MONOTONIC nanoseconds (0 if unknown).
        stamp_ns: u64,
    },
    /// A node reported its VM state.
    ExecutionState {
        /// Node id.
        id: u16,
        /// Program counter.
        pc: u16,
        /// Execution flags.
        flags: u16,
    },
    /// A node reported a VM error (it stopped) or a node-specific message.
    VmError {
        /// Node id.
        id: u16,
        /// Human-readable text.
        message: String,
    },
    /// A GET_VARIABLES request completed or failed.
    Variables {
        /// The request.
        request: RequestId,
        /// Values, or why not.
        result: Result<Vec<i16>, NetError>,
    },
}

/// Errors of network operations.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NetError {
    /// No such node.
    #[error("no node with id {0}")]
    UnknownNode(u16),
    /// The node is not described yet.
    #[error("node {0} is not described yet")]
    NotDescribed(u16),
    /// The node is not connected.
    #[error("node {0} is not connected")]
    Disconnected(u16),
    /// No such variable on the node.
    #[error("node {node} has no variable \"{name}\"")]
    UnknownVariable {
        /// Node id.
        node: u16,
        /// Variable name.
        name: String,
    },
    /// Wrong number of values for a variable.
    #[error("variable \"{name}\" has size {expected}, got {got} values")]
    WrongSize {
        /// Variable name.
        name: String,
        /// Its size.
        expected: usize,
        /// Values given.
        got: usize,
    },
    /// A raw access outside the node's variable memory.
    #[error("variables {start}..{end} outside the memory of node {node} ({size} words)")]
    OutOfRange {
        /// Node id.
        node: u16,
        /// First address.
        start: usize,
        /// One past the last address.
        end: usize,
        /// Memory size.
        size: usize,
    },
    /// Too many arguments for one message.
    #[error("{0} words exceed the {MAX_PAYLOAD_WORDS}-word limit of one message")]
    TooLarge(usize),
    /// Bytecode larger than the node's bytecode memory.
    #[error("bytecode of {got} words exceeds the node's {size}")]
    BytecodeTooLarge {
        /// Image size.
        got: usize,
        /// Node capacity.
        size: usize,
    },
    /// A user event id outside 0..0x8000.
    #[error("event id {0} is not a user event id (< 0x8000)")]
    BadEventId(u16),
    /// No reply in time.
    #[error("node {node} did not answer within {ms} ms")]
    Timeout {
        /// Node id.
        node: u16,
        /// Deadline.
        ms: u64,
    },
    /// The node was lost while waiting.
    #[error("node {0} was lost while waiting for its reply")]
    Lost(u16),
}

/// VM commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Command {
    /// RESET.
    Reset,
    /// RUN.
    Run,
    /// PAUSE.
    Pause,
    /// STEP.
    Step,
    /// STOP.
    Stop,
    /// GET_EXECUTION_STATE.
    GetExecutionState,
    /// WRITE_BYTECODE (persist the program).
    WriteBytecode,
    /// REBOOT.
    Reboot,
}

/// The network manager (see the module documentation).
#[derive(Debug)]
pub struct NetworkManager {
    config: ManagerConfig,
    policy: NodesPolicy,
    nodes: BTreeMap<u16, Node>,
    links: Vec<Via>,
    outgoing: VecDeque<Outgoing>,
    events: VecDeque<NetworkEvent>,
    pending: Vec<PendingGet>,
    next_request: RequestId,
    last_ping: Option<Instant>,
}

impl NetworkManager {
    /// A manager with the given timing and acceptance policy.
    pub fn new(config: ManagerConfig, policy: NodesPolicy) -> Self {
        Self {
            config,
            policy,
            nodes: BTreeMap::new(),
            links: Vec::new(),
            outgoing: VecDeque::new(),
            events: VecDeque::new(),
            pending: Vec::new(),
            next_request: 1,
            last_ping: None,
        }
    }

    /// A manager configured from the bridge parameters.
    pub fn from_params(params: &BridgeParams) -> Self {
        let config = ManagerConfig {
            max_protocol_version: params.max_protocol_version(),
            ..ManagerConfig::default()
        };
        Self::new(config, NodesPolicy::new(&params.nodes))
    }

    /// The timing in use.
    pub fn config(&self) -> &ManagerConfig {
        &self.config
    }

    // ---- inputs ----------------------------------------------------------------------------

    /// A link came up: discover at once.
    pub fn on_link_up(&mut self, link: Via, now: Instant) {
        if !self.links.contains(&link) {
            self.links.push(link);
        }
        self.send(
            Dest::Link(link),
            &Message::ListNodes {
                version: HOST_PROTOCOL_VERSION,
            },
        );
        self.last_ping = Some(now);
    }

    /// A link was lost: its nodes are disconnected.
    pub fn on_link_down(&mut self, link: Via, _now: Instant) {
        self.links.retain(|l| *l != link);
        let lost: Vec<u16> = self
            .nodes
            .values()
            .filter(|n| n.link == link && n.connected)
            .map(|n| n.id)
            .collect();
        for id in lost {
            self.mark_lost(id);
        }
    }

    /// A frame arrived from `link` at `now` (RT receive time `stamp_ns`).
    pub fn on_frame(&mut self, link: Via, frame: &Frame<'_>, stamp_ns: u64, now: Instant) {
        let Ok(msg) = frame.message() else { return };
        let source = frame.source;
        // Host→node commands (from other hosts on the network, e.g. switch clients) and
        // bootloader traffic say nothing about nodes.
        if frame.kind >= 0xA000 || (0x8000..0x9000).contains(&frame.kind) {
            return;
        }
        self.heard(link, source, now);
        match msg {
            Message::NodePresent { version } => self.on_node_present(link, source, version, now),
            Message::Description {
                protocol_version, ..
            } => {
                let node = self.ensure_node(link, source, protocol_version, now);
                node.protocol_version = protocol_version;
                node.assembler.feed(&msg);
                self.check_description(source);
            }
            Message::NamedVariableDescription { .. }
            | Message::LocalEventDescription { .. }
            | Message::NativeFunctionDescription { .. } => {
                if let Some(node) = self.nodes.get_mut(&source) {
                    if node.description.is_none() {
                        node.assembler.feed(&msg);
                        self.check_description(source);
                        self.next_fragment(source, now);
                    }
                }
            }
            Message::Variables { start, values } => self.on_variables(source, start, values),
            Message::UserEvent { id, args } => self.events.push_back(NetworkEvent::UserEvent {
                source,
                id,
                args: args.to_vec(),
                stamp_ns,
            }),
            Message::ExecutionStateChanged { pc, flags } => {
                if let Some(n) = self.nodes.get_mut(&source) {
                    n.vm_flags = Some(flags);
                }
                self.events.push_back(NetworkEvent::ExecutionState {
                    id: source,
                    pc,
                    flags,
                });
            }
            Message::ArrayAccessOutOfBounds { pc, size_index } => {
                let message = match size_index {
                    Some((size, index)) => {
                        format!("array access out of bounds at pc {pc}: index {index}, size {size}")
                    }
                    None => format!("array access out of bounds at pc {pc}"),
                };
                self.events.push_back(NetworkEvent::VmError {
                    id: source,
                    message,
                });
            }
            Message::DivisionByZero { pc } => self.events.push_back(NetworkEvent::VmError {
                id: source,
                message: format!("division by zero at pc {pc}"),
            }),
            Message::EventExecutionKilled { pc } => self.events.push_back(NetworkEvent::VmError {
                id: source,
                message: format!("event execution killed at pc {pc}"),
            }),
            Message::NodeSpecificError { pc, message } => {
                self.events.push_back(NetworkEvent::VmError {
                    id: source,
                    message: format!("{} (pc {pc})", message.to_string_lossy()),
                })
            }
            Message::Disconnected => self.mark_lost(source),
            _ => {}
        }
    }

    /// Periodic work: LIST_NODES, node time-outs, description retries, request deadlines.
    pub fn tick(&mut self, now: Instant) {
        let due = self
            .last_ping
            .is_none_or(|t| now.duration_since(t) >= self.config.ping_period);
        if due && !self.links.is_empty() {
            self.last_ping = Some(now);
            self.send(
                Dest::All,
                &Message::ListNodes {
                    version: HOST_PROTOCOL_VERSION,
                },
            );
            if !self.nodes.values().any(|n| n.connected) {
                // protocol-4 targets only answer this broadcast
                self.send(
                    Dest::All,
                    &Message::GetDescription {
                        version: HOST_PROTOCOL_VERSION,
                    },
                );
            }
        }
        let timeout = self.config.node_timeout;
        let silent: Vec<u16> = self
            .nodes
            .values()
            .filter(|n| n.connected && n.protocol_version >= 5)
            .filter(|n| now.duration_since(n.last_seen) > timeout)
            .map(|n| n.id)
            .collect();
        for id in silent {
            self.mark_lost(id);
        }
        self.retry_descriptions(now);
        self.expire_requests(now);
    }

    // ---- outputs ---------------------------------------------------------------------------

    /// Next frame to send.
    pub fn pop_outgoing(&mut self) -> Option<Outgoing> {
        self.outgoing.pop_front()
    }

    /// Next event.
    pub fn poll_event(&mut self) -> Option<NetworkEvent> {
        self.events.pop_front()
    }

    // ---- queries ---------------------------------------------------------------------------

    /// Every known node, by id.
    pub fn nodes(&self) -> impl Iterator<Item = &Node> {
        self.nodes.values()
    }

    /// One node.
    pub fn node(&self, id: u16) -> Option<&Node> {
        self.nodes.get(&id)
    }

    /// Whether any link is up.
    pub fn has_links(&self) -> bool {
        !self.links.is_empty()
    }

    // ---- operations ------------------------------------------------------------------------

    /// Asks a node for a variable by name; the answer comes as [`NetworkEvent::Variables`].
    pub fn get_variable(
        &mut self,
        id: u16,
        name: &str,
        now: Instant,
    ) -> Result<RequestId, NetError> {
        let var = self.lookup(id, name)?;
        self.get_variables(id, var.address, var.size, now)
    }

    /// Asks a node for `length` words from address `start`.
    pub fn get_variables(
        &mut self,
        id: u16,
        start: u16,
        length: u16,
        now: Instant,
    ) -> Result<RequestId, NetError> {
        let node = self.ready_node(id)?;
        check_range(node, start as usize, length as usize)?;
        let link = node.link;
        let request = self.next_request;
        self.next_request += 1;
        self.pending.push(PendingGet {
            id: request,
            node: id,
            start,
            values: vec![None; length as usize],
            deadline: now + self.config.request_timeout,
        });
        if length == 0 {
            self.complete_ready_requests(id);
        } else {
            self.send(
                Dest::Link(link),
                &Message::GetVariables {
                    dest: id,
                    start,
                    length,
                },
            );
        }
        Ok(request)
    }

    /// Writes a variable by name; the number of values must be its size.
    pub fn set_variable(&mut self, id: u16, name: &str, values: &[i16]) -> Result<(), NetError> {
        let var = self.lookup(id, name)?;
        if values.len() != var.size as usize {
            return Err(NetError::WrongSize {
                name: name.to_owned(),
                expected: var.size as usize,
                got: values.len(),
            });
        }
        self.set_variables(id, var.address, values)
    }

    /// Writes `values` from address `start` (in one message: both wheels start together).
    pub fn set_variables(&mut self, id: u16, start: u16, values: &[i16]) -> Result<(), NetError> {
        let node = self.ready_node(id)?;
        check_range(node, start as usize, values.len())?;
        if values.len() + 2 > MAX_PAYLOAD_WORDS {
            return Err(NetError::TooLarge(values.len() + 2));
        }
        let link = node.link;
        let m = Message::SetVariables {
            dest: id,
            start,
            values: Words::from_slice(values),
        };
        self.send(Dest::Link(link), &m);
        Ok(())
    }

    /// Broadcasts a user event from the host (source 0) to every link.
    pub fn emit(&mut self, event: u16, args: &[i16]) -> Result<(), NetError> {
        if event >= 0x8000 {
            return Err(NetError::BadEventId(event));
        }
        if args.len() > MAX_PAYLOAD_WORDS {
            return Err(NetError::TooLarge(args.len()));
        }
        self.send(
            Dest::All,
            &Message::UserEvent {
                id: event,
                args: Words::from_slice(args),
            },
        );
        Ok(())
    }

    /// Sends a VM command to a node.
    pub fn command(&mut self, id: u16, command: Command) -> Result<(), NetError> {
        let node = self.nodes.get(&id).ok_or(NetError::UnknownNode(id))?;
        let link = node.link;
        let dest = id;
        let m = match command {
            Command::Reset => Message::Reset { dest },
            Command::Run => Message::Run { dest },
            Command::Pause => Message::Pause { dest },
            Command::Step => Message::Step { dest },
            Command::Stop => Message::Stop { dest },
            Command::GetExecutionState => Message::GetExecutionState { dest },
            Command::WriteBytecode => Message::WriteBytecode { dest },
            Command::Reboot => Message::Reboot { dest },
        };
        self.send(Dest::Link(link), &m);
        Ok(())
    }

    /// Uploads a compiled script (SET_BYTECODE chunks of 256 words, then RUN) and records it,
    /// so that its variables become readable by name and its events known.
    pub fn load_script(&mut self, id: u16, script: LoadedScript) -> Result<(), NetError> {
        let node = self.ready_node(id)?;
        let size = node
            .description
            .as_ref()
            .map_or(0, |d| d.bytecode_size as usize);
        if script.bytecode.len() > size {
            return Err(NetError::BytecodeTooLarge {
                got: script.bytecode.len(),
                size,
            });
        }
        let link = node.link;
        let words: Vec<i16> = script.bytecode.iter().map(|w| *w as i16).collect();
        for (i, chunk) in words.chunks(BYTECODE_CHUNK_WORDS).enumerate() {
            let start = (i * BYTECODE_CHUNK_WORDS) as u16;
            let m = Message::SetBytecode {
                dest: id,
                start,
                words: Words::from_slice(chunk),
            };
            self.send(Dest::Link(link), &m);
        }
        self.send(Dest::Link(link), &Message::Run { dest: id });
        if let Some(n) = self.nodes.get_mut(&id) {
            n.script = Some(script);
        }
        Ok(())
    }

    /// Forgets the script recorded for a node (e.g. after the node rebooted).
    pub fn clear_script(&mut self, id: u16) {
        if let Some(n) = self.nodes.get_mut(&id) {
            n.script = None;
        }
    }

    // ---- internals -------------------------------------------------------------------------

    fn send(&mut self, dest: Dest, m: &Message<'_>) {
        match m.to_frame(HOST_SOURCE) {
            Ok(frame) => self.outgoing.push_back(Outgoing { dest, frame }),
            Err(e) => tracing::error!("cannot encode {:?}: {e}", m.kind()),
        }
    }

    fn heard(&mut self, link: Via, source: u16, now: Instant) {
        if let Some(n) = self.nodes.get_mut(&source) {
            n.last_seen = now;
            n.link = link;
            if !n.connected {
                n.connected = true;
                self.events.push_back(NetworkEvent::NodeBack { id: source });
            }
        }
    }

    fn ensure_node(&mut self, link: Via, id: u16, version: u16, now: Instant) -> &mut Node {
        if !self.nodes.contains_key(&id) {
            self.events.push_back(NetworkEvent::NodeDiscovered {
                id,
                protocol_version: version,
            });
        }
        self.nodes
            .entry(id)
            .or_insert_with(|| Node::new(id, link, version, now))
    }

    fn on_node_present(&mut self, link: Via, id: u16, version: u16, now: Instant) {
        let max = self.config.max_protocol_version;
        if !self.nodes.contains_key(&id) && !(MIN_TARGET_PROTOCOL_VERSION..=max).contains(&version)
        {
            tracing::warn!("node {id} speaks protocol {version}, outside {MIN_TARGET_PROTOCOL_VERSION}..={max}: it will not be bridged");
        }
        let node = self.ensure_node(link, id, version, now);
        node.protocol_version = version;
        let need = node.description.is_none() && node.describe_sent.is_none();
        if need {
            node.describe_sent = Some(now);
            self.send(
                Dest::Link(link),
                &Message::GetNodeDescription {
                    dest: id,
                    version: HOST_PROTOCOL_VERSION,
                },
            );
        }
    }

    fn retry_descriptions(&mut self, now: Instant) {
        let retry = self.config.describe_retry;
        let fragment_retry = self.config.describe_retry / 4;
        let mut frames = Vec::new();
        for node in self.nodes.values_mut() {
            if node.description.is_some() || !node.connected {
                continue;
            }
            let Some(sent) = node.describe_sent else {
                continue;
            };
            let waited = now.duration_since(sent);
            let (id, link) = (node.id, node.link);
            let a = &mut node.assembler;
            if a.by_fragments() {
                if waited >= fragment_retry {
                    if let Some(k) = a.requested() {
                        node.describe_sent = Some(now);
                        frames.push((link, fragment_request(id, k)));
                    }
                }
                continue;
            }
            if waited < retry {
                continue;
            }
            node.describe_sent = Some(now);
            if node.protocol_version >= 8 && a.restart_incomplete() {
                if let Some(&k) = a.missing().first() {
                    a.request(k);
                    frames.push((link, fragment_request(id, k)));
                }
            } else {
                *a = Default::default();
                frames.push((
                    link,
                    Message::GetNodeDescription {
                        dest: id,
                        version: HOST_PROTOCOL_VERSION,
                    },
                ));
            }
        }
        for (link, m) in frames {
            self.send(Dest::Link(link), &m);
        }
    }

    /// After an item arrived while fetching by fragments: ask for the next missing one.
    fn next_fragment(&mut self, id: u16, now: Instant) {
        let Some(node) = self.nodes.get_mut(&id) else {
            return;
        };
        let a = &mut node.assembler;
        if node.description.is_some() || !a.by_fragments() || a.requested().is_some() {
            return;
        }
        if let Some(&k) = a.missing().first() {
            a.request(k);
            node.describe_sent = Some(now);
            let link = node.link;
            self.send(Dest::Link(link), &fragment_request(id, k));
        }
    }

    fn check_description(&mut self, id: u16) {
        let Some(node) = self.nodes.get_mut(&id) else {
            return;
        };
        let Some(desc) = node.assembler.finish() else {
            return;
        };
        node.description = Some(desc);
        let version = node.protocol_version;
        let name = node.name().to_owned();
        let state = if !(MIN_TARGET_PROTOCOL_VERSION..=self.config.max_protocol_version)
            .contains(&version)
        {
            NodeState::Ignored(IgnoreReason::Protocol(version))
        } else {
            let bridged = self
                .nodes
                .values()
                .filter(|n| n.is_bridged())
                .map(|n| (n.id, n.name()))
                .collect::<Vec<_>>();
            match self.policy.decide(&name, id, bridged.iter().copied()) {
                Ok(settings) => NodeState::Bridged(settings),
                Err(r) => NodeState::Ignored(IgnoreReason::Policy(r)),
            }
        };
        let event = match &state {
            NodeState::Bridged(_) => NetworkEvent::NodeAccepted { id },
            NodeState::Ignored(reason) => NetworkEvent::NodeIgnored {
                id,
                reason: *reason,
            },
            NodeState::Describing => return,
        };
        if let Some(node) = self.nodes.get_mut(&id) {
            node.state = state;
        }
        self.events.push_back(event);
    }

    fn mark_lost(&mut self, id: u16) {
        let Some(n) = self.nodes.get_mut(&id) else {
            return;
        };
        if !n.connected {
            return;
        }
        n.connected = false;
        // an incomplete description is asked for again when the node comes back
        if n.description.is_none() {
            n.describe_sent = None;
            n.assembler = Default::default();
        }
        self.events.push_back(NetworkEvent::NodeLost { id });
        let (failed, kept): (Vec<_>, Vec<_>) = self.pending.drain(..).partition(|p| p.node == id);
        self.pending = kept;
        for p in failed {
            self.events.push_back(NetworkEvent::Variables {
                request: p.id,
                result: Err(NetError::Lost(id)),
            });
        }
    }

    fn on_variables(&mut self, source: u16, start: u16, values: Words<'_>) {
        for p in self.pending.iter_mut().filter(|p| p.node == source) {
            p.absorb(start, values.iter());
        }
        self.complete_ready_requests(source);
    }

    fn complete_ready_requests(&mut self, node: u16) {
        let mut i = 0;
        while i < self.pending.len() {
            let p = &self.pending[i];
            if p.node == node && p.values.iter().all(Option::is_some) {
                let p = self.pending.remove(i);
                self.events.push_back(NetworkEvent::Variables {
                    request: p.id,
                    result: Ok(p.result()),
                });
            } else {
                i += 1;
            }
        }
    }

    fn expire_requests(&mut self, now: Instant) {
        let ms = self.config.request_timeout.as_millis() as u64;
        let (expired, kept): (Vec<_>, Vec<_>) =
            self.pending.drain(..).partition(|p| now >= p.deadline);
        self.pending = kept;
        for p in expired {
            self.events.push_back(NetworkEvent::Variables {
                request: p.id,
                result: Err(NetError::Timeout { node: p.node, ms }),
            });
        }
    }

    fn lookup(&self, id: u16, name: &str) -> Result<msgs::description::NamedVariable, NetError> {
        let node = self.ready_node(id)?;
        node.variable(name)
            .ok_or_else(|| NetError::UnknownVariable {
                node: id,
                name: name.to_owned(),
            })
    }

    fn ready_node(&self, id: u16) -> Result<&Node, NetError> {
        let node = self.nodes.get(&id).ok_or(NetError::UnknownNode(id))?;
        if node.description.is_none() {
            return Err(NetError::NotDescribed(id));
        }
        if !node.connected {
            return Err(NetError::Disconnected(id));
        }
        Ok(node)
    }
}

fn fragment_request(dest: u16, k: usize) -> Message<'static> {
    Message::GetNodeDescriptionFragment {
        dest,
        version: HOST_PROTOCOL_VERSION,
        fragment: k as i16,
    }
}

fn check_range(node: &Node, start: usize, len: usize) -> Result<(), NetError> {
    let size = node
        .description
        .as_ref()
        .map_or(0, |d| d.variables_size as usize);
    if start + len > size {
        return Err(NetError::OutOfRange {
            node: node.id,
            start,
            end: start + len,
            size,
        });
    }
    Ok(())
}
