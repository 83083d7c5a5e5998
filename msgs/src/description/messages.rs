//! A description as the messages a node sends for it (aseba.md §2.3): the DESCRIPTION header, then
//! one item message per named variable, local event and native function, in that order. The
//! inverse of [`DescriptionAssembler`](super::DescriptionAssembler).

use super::TargetDescription;
use crate::wire::{AsebaStr, Message, NativeParams};

impl TargetDescription {
    /// The DESCRIPTION header announcing `protocol_version` and the item counts.
    pub fn header_message(&self, protocol_version: u16) -> Message<'_> {
        Message::Description {
            name: AsebaStr::from_str(&self.name),
            protocol_version,
            bytecode_size: self.bytecode_size,
            stack_size: self.stack_size,
            variables_size: self.variables_size,
            named_variables: self.variables.len() as u16,
            local_events: self.local_events.len() as u16,
            native_functions: self.natives.len() as u16,
        }
    }

    /// Item `k` (fragment `k`, flat over variables, local events, natives), or `None` past the last.
    pub fn item_message(&self, k: usize) -> Option<Message<'_>> {
        let (nv, ne) = (self.variables.len(), self.local_events.len());
        if let Some(v) = self.variables.get(k) {
            Some(Message::NamedVariableDescription {
                size: v.size,
                name: AsebaStr::from_str(&v.name),
            })
        } else if let Some(e) = k.checked_sub(nv).and_then(|i| self.local_events.get(i)) {
            Some(Message::LocalEventDescription {
                name: AsebaStr::from_str(&e.name),
                description: AsebaStr::from_str(&e.description),
            })
        } else {
            let f = self.natives.get(k.checked_sub(nv + ne)?)?;
            Some(Message::NativeFunctionDescription {
                name: AsebaStr::from_str(&f.name),
                description: AsebaStr::from_str(&f.description),
                params: NativeParams::from_params(&f.params),
            })
        }
    }

    /// The header (announcing the description's own protocol version) then every item, in order.
    pub fn messages(&self) -> impl Iterator<Item = Message<'_>> {
        let items = (0..).map_while(|k| self.item_message(k));
        std::iter::once(self.header_message(self.protocol_version)).chain(items)
    }
}
