//! Assembles a [`TargetDescription`] from DESCRIPTION + item frames (aseba.md §2.3), in order
//! or by fragment index (protocol ≥ 8), ignoring items beyond the announced counts.

use super::{LocalEvent, NamedVariable, NativeFunction, NativeParam, TargetDescription};
use crate::wire::Message;

/// Progress of one node's description.
///
/// Items of a full description carry no index: they fill their list in order. If some were
/// lost, the ones after the loss sit in the wrong slots, so an incomplete list is discarded
/// whole ([`restart_incomplete`](Self::restart_incomplete)) and fetched again — by fragments
/// (protocol ≥ 8), one request in flight at a time so that every reply fills a known slot.
#[derive(Debug, Clone, Default)]
pub struct DescriptionAssembler {
    header: Option<TargetDescription>,
    counts: [usize; 3],
    variables: Vec<Option<(String, u16)>>,
    events: Vec<Option<LocalEvent>>,
    natives: Vec<Option<NativeFunction>>,
    /// Next slot of each list for items that arrive in order (full description).
    next: [usize; 3],
    /// The fragment requested and not answered yet: (list, slot).
    requested: Option<(usize, usize)>,
    /// Fetching by fragments: items that were not requested are ignored.
    by_fragments: bool,
}

impl DescriptionAssembler {
    /// Nothing received yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether the header has arrived.
    pub fn has_header(&self) -> bool {
        self.header.is_some()
    }

    /// Feeds one message; returns true if it was a description message.
    pub fn feed(&mut self, msg: &Message<'_>) -> bool {
        match *msg {
            Message::Description {
                name,
                protocol_version,
                bytecode_size,
                stack_size,
                variables_size,
                named_variables,
                local_events,
                native_functions,
            } => {
                *self = Self::new();
                self.header = Some(TargetDescription::new(
                    name.to_string_lossy(),
                    protocol_version,
                    bytecode_size,
                    stack_size,
                    variables_size,
                ));
                self.counts = [
                    named_variables as usize,
                    local_events as usize,
                    native_functions as usize,
                ];
                self.variables = vec![None; self.counts[0]];
                self.events = vec![None; self.counts[1]];
                self.natives = vec![None; self.counts[2]];
            }
            Message::NamedVariableDescription { size, name } => {
                if let Some(slot) = self.slot(0).and_then(|i| self.variables.get_mut(i)) {
                    *slot = Some((name.to_string_lossy(), size));
                }
            }
            Message::LocalEventDescription { name, description } => {
                if let Some(slot) = self.slot(1).and_then(|i| self.events.get_mut(i)) {
                    *slot = Some(LocalEvent {
                        name: name.to_string_lossy(),
                        description: description.to_string_lossy(),
                    });
                }
            }
            Message::NativeFunctionDescription {
                name,
                description,
                params,
            } => {
                if let Some(slot) = self.slot(2).and_then(|i| self.natives.get_mut(i)) {
                    *slot = Some(NativeFunction {
                        name: name.to_string_lossy(),
                        description: description.to_string_lossy(),
                        params: params
                            .iter()
                            .map(|(size, n)| NativeParam {
                                name: n.to_string_lossy(),
                                size,
                            })
                            .collect(),
                    });
                }
            }
            _ => return false,
        }
        true
    }

    /// Slot for the next item of list `l`, if it should be stored.
    fn slot(&mut self, l: usize) -> Option<usize> {
        if self.by_fragments {
            match self.requested {
                Some((list, slot)) if list == l => {
                    self.requested = None;
                    Some(slot)
                }
                _ => None,
            }
        } else {
            self.next[l] += 1;
            Some(self.next[l] - 1)
        }
    }

    /// Discards every list that misses items (their slots are unreliable) and switches to
    /// fetching by fragments. Returns false if there is no header (fetch everything again).
    pub fn restart_incomplete(&mut self) -> bool {
        if self.header.is_none() {
            return false;
        }
        if self.variables.iter().any(Option::is_none) {
            self.variables.iter_mut().for_each(|v| *v = None);
        }
        if self.events.iter().any(Option::is_none) {
            self.events.iter_mut().for_each(|v| *v = None);
        }
        if self.natives.iter().any(Option::is_none) {
            self.natives.iter_mut().for_each(|v| *v = None);
        }
        self.by_fragments = true;
        self.requested = None;
        true
    }

    /// Whether items are being fetched one fragment at a time.
    pub fn by_fragments(&self) -> bool {
        self.by_fragments
    }

    /// The fragment requested and not yet answered (flat index).
    pub fn requested(&self) -> Option<usize> {
        self.requested
            .map(|(l, s)| self.counts[..l].iter().sum::<usize>() + s)
    }

    /// Records that fragment `k` (flat index over variables, events, natives) was requested.
    pub fn request(&mut self, k: usize) {
        let [v, e, _] = self.counts;
        self.requested = Some(if k < v {
            (0, k)
        } else if k < v + e {
            (1, k - v)
        } else {
            (2, k - v - e)
        });
    }

    /// Flat indices of the items still missing (empty when complete).
    pub fn missing(&self) -> Vec<usize> {
        let v = self.variables.iter().map(Option::is_none);
        let e = self.events.iter().map(Option::is_none);
        let n = self.natives.iter().map(Option::is_none);
        v.chain(e)
            .chain(n)
            .enumerate()
            .filter(|(_, m)| *m)
            .map(|(i, _)| i)
            .collect()
    }

    /// Whether everything announced has been received.
    pub fn is_complete(&self) -> bool {
        self.header.is_some() && self.missing().is_empty()
    }

    /// The description, once complete (variable addresses computed from the sizes).
    pub fn finish(&self) -> Option<TargetDescription> {
        if !self.is_complete() {
            return None;
        }
        let mut d = self.header.clone()?;
        let mut address = 0u16;
        for (name, size) in self.variables.iter().flatten() {
            d.variables.push(NamedVariable {
                name: name.clone(),
                address,
                size: *size,
            });
            address = address.wrapping_add(*size);
        }
        d.local_events = self.events.iter().flatten().cloned().collect();
        d.natives = self.natives.iter().flatten().cloned().collect();
        Some(d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::description::thymio_ii_fw14;

    /// What a node sends (header then items, in order) assembles to the description it sent.
    #[test]
    fn a_full_description_round_trips() {
        let d = thymio_ii_fw14();
        let mut a = DescriptionAssembler::new();
        for m in d.messages() {
            assert!(!a.is_complete());
            assert!(a.feed(&m));
        }
        assert_eq!(a.finish(), Some(d));
    }

    /// After a loss, the lists that miss items are fetched again one fragment at a time.
    #[test]
    fn lost_items_are_fetched_by_fragment() {
        let d = thymio_ii_fw14();
        let mut a = DescriptionAssembler::new();
        let lost = d.variables.len() + 3; // the 4th local event
        for (k, m) in d.messages().enumerate() {
            if k != lost + 1 {
                a.feed(&m);
            }
        }
        assert!(!a.is_complete());
        assert!(a.restart_incomplete());
        let missing = a.missing();
        assert_eq!(missing.len(), d.local_events.len());
        for k in missing {
            a.request(k);
            assert_eq!(a.requested(), Some(k));
            a.feed(&d.item_message(k).unwrap());
        }
        assert_eq!(a.finish(), Some(d));
    }
}
