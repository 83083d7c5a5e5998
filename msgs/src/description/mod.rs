//! Target descriptions: what a node says about itself (DESCRIPTION + items, aseba.md §2.3),
//! and the built-in descriptions of known targets.
//!
//! Descriptions are owned values built on the NRT side (assembled from frames by the network
//! manager, or taken from the built-in tables); the RT side never touches them.

use serde::{Deserialize, Serialize};

pub mod assembler;
mod messages;
mod playground;
mod std_natives;
mod thymio;

pub use assembler::DescriptionAssembler;
pub use playground::playground_thymio;
pub use std_natives::{push_standard_natives, STANDARD_NATIVES};
pub use thymio::thymio_ii_fw14;

/// One named variable of a target. Its address is the sum of the sizes of the variables before it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NamedVariable {
    /// Variable name, e.g. `motor.left.target`.
    pub name: String,
    /// Address in the VM's variable memory (words).
    pub address: u16,
    /// Size in words.
    pub size: u16,
}

/// One local event of a target; the i-th local event has event id `0xFFFE - i`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LocalEvent {
    /// Event name, e.g. `button.center`.
    pub name: String,
    /// Human-readable description as sent on the wire.
    pub description: String,
}

/// One parameter of a native function.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NativeParam {
    /// Parameter name.
    pub name: String,
    /// Size: > 0 fixed size, < 0 template id (same id ⇒ same size), 0 any size.
    pub size: i16,
}

/// One native function of a target; the i-th native has native id i.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NativeFunction {
    /// Function name, e.g. `math.copy`.
    pub name: String,
    /// Human-readable description as sent on the wire.
    pub description: String,
    /// Parameters in call order.
    pub params: Vec<NativeParam>,
}

/// Everything a node describes about itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TargetDescription {
    /// Node type name, e.g. `thymio-II`.
    pub name: String,
    /// Aseba protocol version announced by the node.
    pub protocol_version: u16,
    /// Bytecode memory size in words.
    pub bytecode_size: u16,
    /// Execution stack size in words.
    pub stack_size: u16,
    /// Variable memory size in words (named variables + free space).
    pub variables_size: u16,
    /// Named variables in memory order (addresses computed).
    pub variables: Vec<NamedVariable>,
    /// Local events in id order.
    pub local_events: Vec<LocalEvent>,
    /// Native functions in id order.
    pub natives: Vec<NativeFunction>,
}

impl TargetDescription {
    /// Creates an empty description with the given sizes.
    pub fn new(
        name: impl Into<String>,
        protocol_version: u16,
        bytecode_size: u16,
        stack_size: u16,
        variables_size: u16,
    ) -> Self {
        Self {
            name: name.into(),
            protocol_version,
            bytecode_size,
            stack_size,
            variables_size,
            variables: Vec::new(),
            local_events: Vec::new(),
            natives: Vec::new(),
        }
    }

    /// Appends a named variable, computing its address from the previous ones.
    pub fn push_variable(&mut self, name: impl Into<String>, size: u16) {
        let address = self.named_variables_size();
        self.variables.push(NamedVariable {
            name: name.into(),
            address,
            size,
        });
    }

    /// Appends a local event.
    pub fn push_local_event(&mut self, name: impl Into<String>, description: impl Into<String>) {
        self.local_events.push(LocalEvent {
            name: name.into(),
            description: description.into(),
        });
    }

    /// Appends a native function; `params` are `(name, size)` pairs.
    pub fn push_native(&mut self, name: &str, description: &str, params: &[(&str, i16)]) {
        self.natives.push(NativeFunction {
            name: name.to_owned(),
            description: description.to_owned(),
            params: params
                .iter()
                .map(|(n, s)| NativeParam {
                    name: (*n).to_owned(),
                    size: *s,
                })
                .collect(),
        });
    }

    /// Total size of the named variables (first free address for user variables).
    pub fn named_variables_size(&self) -> u16 {
        self.variables.last().map_or(0, |v| v.address + v.size)
    }

    /// Looks a named variable up by name.
    pub fn variable(&self, name: &str) -> Option<&NamedVariable> {
        self.variables.iter().find(|v| v.name == name)
    }

    /// Index of a local event by name (its event id is `0xFFFE - index`).
    pub fn local_event_index(&self, name: &str) -> Option<usize> {
        self.local_events.iter().position(|e| e.name == name)
    }

    /// Id of a native function by name.
    pub fn native_id(&self, name: &str) -> Option<u16> {
        self.natives
            .iter()
            .position(|n| n.name == name)
            .map(|i| i as u16)
    }

    /// Number of frames a full description takes on the wire (header + items).
    pub fn frame_count(&self) -> usize {
        1 + self.variables.len() + self.local_events.len() + self.natives.len()
    }
}

/// Event id of the i-th local event.
pub const fn local_event_id(index: usize) -> u16 {
    0xFFFE - index as u16
}

/// Event id of the init code (code before the first `onevent`).
pub const INIT_EVENT_ID: u16 = 0xFFFF;

#[cfg(test)]
mod tests;
