//! Pending GET_VARIABLES requests, completed from one or several VARIABLES replies (the
//! Thymio answers in chunks of at most 47 words, each with its own start).

use handoff::NodeId;
use std::time::Instant;

/// Identifies a request of the network manager.
pub type RequestId = u64;

#[derive(Debug)]
pub(crate) struct PendingGet {
    pub id: RequestId,
    pub node: NodeId,
    pub start: u16,
    pub values: Vec<Option<i16>>,
    pub deadline: Instant,
}

impl PendingGet {
    /// Copies the part of a reply that falls in this request; true when complete.
    pub fn absorb(&mut self, start: u16, values: impl Iterator<Item = i16>) -> bool {
        for (i, v) in values.enumerate() {
            let addr = start as usize + i;
            if let Some(off) = addr.checked_sub(self.start as usize) {
                if let Some(slot) = self.values.get_mut(off) {
                    *slot = Some(v);
                }
            }
        }
        self.values.iter().all(Option::is_some)
    }

    pub fn result(&self) -> Vec<i16> {
        self.values.iter().map(|v| v.unwrap_or_default()).collect()
    }
}
