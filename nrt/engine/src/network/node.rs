//! What the network manager knows about one Aseba node.

use crate::policy::{NodeSettings, Rejection};
use handoff::{LinkId, NodeId};
use msgs::description::DescriptionAssembler;
use msgs::description::{NamedVariable, TargetDescription};
use std::time::Instant;

/// Where the network manager hears a node and reaches it: one of the RT thread's links, or the
/// switch (its TCP clients, whose frames NRT relays; nodes behind a client, such as an
/// asebaswitch that joined, are reached through it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Via {
    /// A link of the RT thread.
    Link(LinkId),
    /// The switch's clients.
    Switch,
}

impl std::fmt::Display for Via {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Via::Link(l) => write!(f, "link {l}"),
            Via::Switch => f.write_str("the switch"),
        }
    }
}

/// Where a node is in its life cycle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NodeState {
    /// Waiting for its description.
    Describing,
    /// Bridged with these settings.
    Bridged(NodeSettings),
    /// Not bridged.
    Ignored(IgnoreReason),
}

/// Why a node is not bridged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum IgnoreReason {
    /// Rejected by the acceptance policy.
    #[error("{0}")]
    Policy(Rejection),
    /// Its protocol version is outside what is accepted.
    #[error("protocol version {0} not accepted")]
    Protocol(u16),
}

/// A script loaded on a node by us.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LoadedScript {
    /// Global events `(name, size)`, index = event id.
    pub events: Vec<(String, u16)>,
    /// Variables the script defines.
    pub variables: Vec<NamedVariable>,
    /// Constants as compiled.
    pub constants: Vec<(String, i16)>,
    /// The bytecode image (kept to reload after a reconnection or a reboot).
    pub bytecode: Vec<u16>,
    /// Where the script came from (file path or a label).
    pub origin: String,
}

impl LoadedScript {
    /// Whether the program has a handler for global event `id`: an entry of the bytecode's event vector table
    /// (word 0: the table's length in words, then `(event id, address)` pairs, as the VM reads it).
    ///
    /// ```
    /// use nrt_engine::network::LoadedScript;
    /// // a table of 3 words (one handler: event 1 at address 3), then the code
    /// let s = LoadedScript { bytecode: vec![3, 1, 3, 0], ..LoadedScript::default() };
    /// assert!(s.handles_event(1));
    /// assert!(!s.handles_event(2));
    /// ```
    pub fn handles_event(&self, id: u16) -> bool {
        let Some((&len, rest)) = self.bytecode.split_first() else {
            return false;
        };
        let table = rest.get(..(len as usize).saturating_sub(1)).unwrap_or(rest);
        table.chunks_exact(2).any(|pair| pair[0] == id)
    }
}

/// One node of the network.
#[derive(Debug, Clone)]
pub struct Node {
    /// Aseba node id.
    pub id: NodeId,
    /// Link it was last heard on.
    pub link: Via,
    /// Protocol version it announced.
    pub protocol_version: u16,
    /// Its description, once complete.
    pub description: Option<TargetDescription>,
    /// Life-cycle state.
    pub state: NodeState,
    /// Heard from recently.
    pub connected: bool,
    /// Last frame from it.
    pub last_seen: Instant,
    /// The script we loaded on it, if any.
    pub script: Option<LoadedScript>,
    /// Last VM execution flags it reported.
    pub vm_flags: Option<u16>,
    /// Another client of the network sent it a program (bytecode we did not load) since we last loaded
    /// ours: what it runs is not known.
    pub foreign_program: bool,
    pub(crate) assembler: DescriptionAssembler,
    pub(crate) describe_sent: Option<Instant>,
}

impl Node {
    pub(crate) fn new(id: NodeId, link: Via, protocol_version: u16, now: Instant) -> Self {
        Node {
            id,
            link,
            protocol_version,
            description: None,
            state: NodeState::Describing,
            connected: true,
            last_seen: now,
            script: None,
            vm_flags: None,
            foreign_program: false,
            assembler: DescriptionAssembler::new(),
            describe_sent: None,
        }
    }

    /// Whether the node may run a handler for global event `id`: it does unless it runs a script we
    /// loaded (and nobody replaced since) that has none. A node whose program is not known may.
    pub fn may_handle_event(&self, id: u16) -> bool {
        match &self.script {
            Some(s) if !self.foreign_program => s.handles_event(id),
            _ => true,
        }
    }

    /// Node type name ("" until described).
    pub fn name(&self) -> &str {
        self.description.as_ref().map_or("", |d| d.name.as_str())
    }

    /// Whether the node is bridged.
    pub fn is_bridged(&self) -> bool {
        matches!(self.state, NodeState::Bridged(_))
    }

    /// Bridging settings, if bridged.
    pub fn settings(&self) -> Option<&NodeSettings> {
        match &self.state {
            NodeState::Bridged(s) => Some(s),
            _ => None,
        }
    }

    /// ROS namespace ("" when none or not bridged).
    pub fn namespace(&self) -> &str {
        self.settings().map_or("", |s| s.namespace.as_str())
    }

    /// Looks a variable up: the node's own, then the loaded script's.
    pub fn variable(&self, name: &str) -> Option<NamedVariable> {
        let own = self
            .description
            .as_ref()
            .and_then(|d| d.variable(name))
            .cloned();
        own.or_else(|| {
            self.script
                .as_ref()?
                .variables
                .iter()
                .find(|v| v.name == name)
                .cloned()
        })
    }

    /// Every variable name: the node's, then the script's.
    pub fn variable_names(&self) -> Vec<String> {
        let own = self.description.iter().flat_map(|d| d.variables.iter());
        let script = self.script.iter().flat_map(|s| s.variables.iter());
        own.chain(script).map(|v| v.name.clone()).collect()
    }
}
