//! The state machine of the network manager: links, frames in and out, ticks, events, commands and scripts;
//! discovery and variables in the modules below.

mod discovery;
mod variables;

use super::node::{LoadedScript, Node, Via};
use super::requests::{PendingGet, RequestId};
use super::types::{Command, Dest, ManagerConfig, NetError, NetworkEvent, Outgoing};
use super::HOST_PROTOCOL_VERSION;
use crate::params::BridgeParams;
use crate::policy::NodesPolicy;
use handoff::NodeId;
use msgs::wire::{Frame, Message, Words, BYTECODE_CHUNK_WORDS, HOST_SOURCE, MAX_PAYLOAD_WORDS};
use std::collections::{BTreeMap, VecDeque};
use std::time::Instant;

/// The network manager (see the module documentation).
#[derive(Debug)]
pub struct NetworkManager {
    config: ManagerConfig,
    policy: NodesPolicy,
    nodes: BTreeMap<NodeId, Node>,
    links: Vec<Via>,
    outgoing: VecDeque<Outgoing>,
    events: VecDeque<NetworkEvent>,
    pending: Vec<PendingGet>,
    next_request: RequestId,
    last_ping: Option<Instant>,
    /// Changes whenever what decides where a node's events may be handled changes: a node appears, is heard
    /// on another link, or its program changes ([`Self::generation`]).
    generation: u64,
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
            generation: 0,
        }
    }

    /// A manager configured from the bridge parameters.
    pub fn from_params(params: &BridgeParams) -> Self {
        let config = ManagerConfig {
            max_protocol_version: params.max_protocol_version(),
            ..ManagerConfig::default()
        };
        Self::new(config, NodesPolicy::from_params(params))
    }

    /// The timing in use.
    pub fn config(&self) -> &ManagerConfig {
        &self.config
    }

    /// A counter that changes whenever a node appears, is heard on another link than before, or its program
    /// changes (our script loaded or forgotten, another client's bytecode seen): what [`Node::link`] and
    /// [`Node::may_handle_event`] say of the nodes stays the same while it does.
    pub fn generation(&self) -> u64 {
        self.generation
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
        let lost: Vec<NodeId> = self
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
        let source = NodeId(frame.source);
        if let Message::SetBytecode { dest, .. } = msg {
            // another client of the network (a switch client, another client of the robot's server) programs
            // a node: what it runs is no longer the script we loaded
            if let Some(n) = self.nodes.get_mut(&NodeId(dest)) {
                if !n.foreign_program {
                    n.foreign_program = true;
                    self.generation += 1;
                }
            }
        }
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
                    stamp_ns,
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
        let silent: Vec<NodeId> = self
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
    pub fn node(&self, id: NodeId) -> Option<&Node> {
        self.nodes.get(&id)
    }

    /// Whether any link is up.
    pub fn has_links(&self) -> bool {
        !self.links.is_empty()
    }

    /// Whether it waits for an answer from the network: a variable read, or a node's description.
    pub fn awaits_answers(&self) -> bool {
        !self.pending.is_empty()
            || self
                .nodes
                .values()
                .any(|n| n.connected && n.state == super::node::NodeState::Describing)
    }

    // ---- operations ------------------------------------------------------------------------

    /// Broadcasts a user event from the host (source 0) to every link.
    pub fn emit(&mut self, event: u16, args: &[i16]) -> Result<(), NetError> {
        self.emit_to(Dest::All, event, args)
    }

    /// Sends a user event from the host (source 0) to `dest` only (the link of the node it is
    /// meant for: robots on other links never see it).
    pub fn emit_to(&mut self, dest: Dest, event: u16, args: &[i16]) -> Result<(), NetError> {
        if event >= 0x8000 {
            return Err(NetError::BadEventId(event));
        }
        if args.len() > MAX_PAYLOAD_WORDS {
            return Err(NetError::TooLarge(args.len()));
        }
        self.send(
            dest,
            &Message::UserEvent {
                id: event,
                args: Words::from_slice(args),
            },
        );
        Ok(())
    }

    /// Sends a VM command to a node.
    pub fn command(&mut self, id: NodeId, command: Command) -> Result<(), NetError> {
        let node = self.nodes.get(&id).ok_or(NetError::UnknownNode(id))?;
        let link = node.link;
        let dest = id.0;
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
    pub fn load_script(&mut self, id: NodeId, script: LoadedScript) -> Result<(), NetError> {
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
                dest: id.0,
                start,
                words: Words::from_slice(chunk),
            };
            self.send(Dest::Link(link), &m);
        }
        self.send(Dest::Link(link), &Message::Run { dest: id.0 });
        if let Some(n) = self.nodes.get_mut(&id) {
            n.script = Some(script);
            n.foreign_program = false;
            self.generation += 1;
        }
        Ok(())
    }

    /// Records `script` as node `id`'s program without sending it (tests of what depends on it).
    #[cfg(test)]
    pub(crate) fn set_script_for_tests(&mut self, id: NodeId, script: LoadedScript) {
        if let Some(n) = self.nodes.get_mut(&id) {
            n.script = Some(script);
            n.foreign_program = false;
            self.generation += 1;
        }
    }

    /// Forgets the script recorded for a node (e.g. after the node rebooted).
    pub fn clear_script(&mut self, id: NodeId) {
        if let Some(n) = self.nodes.get_mut(&id) {
            n.script = None;
            self.generation += 1;
        }
    }

    fn send(&mut self, dest: Dest, m: &Message<'_>) {
        match m.to_frame(HOST_SOURCE) {
            Ok(frame) => self.outgoing.push_back(Outgoing { dest, frame }),
            Err(e) => tracing::error!("cannot encode {:?}: {e}", m.kind()),
        }
    }

    fn heard(&mut self, link: Via, source: NodeId, now: Instant) {
        if let Some(n) = self.nodes.get_mut(&source) {
            n.last_seen = now;
            if n.link != link {
                n.link = link;
                self.generation += 1;
            }
            if !n.connected {
                n.connected = true;
                self.events.push_back(NetworkEvent::NodeBack { id: source });
            }
        }
    }
}
