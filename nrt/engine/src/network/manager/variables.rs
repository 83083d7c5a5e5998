//! Variables of nodes: read by chunks (the request answered when complete, or expired) and written, by name or
//! address, checked against the node's description.

use super::NetworkManager;
use crate::network::node::Node;
use crate::network::requests::{PendingGet, RequestId};
use crate::network::types::{Dest, NetError, NetworkEvent};
use handoff::NodeId;
use msgs::wire::{Message, Words, MAX_PAYLOAD_WORDS};
use std::time::Instant;

impl NetworkManager {
    /// Asks a node for a variable by name; the answer comes as [`NetworkEvent::Variables`].
    pub fn get_variable(
        &mut self,
        id: NodeId,
        name: &str,
        now: Instant,
    ) -> Result<RequestId, NetError> {
        let var = self.lookup(id, name)?;
        self.get_variables(id, var.address, var.size, now)
    }

    /// Asks a node for `length` words from address `start`.
    pub fn get_variables(
        &mut self,
        id: NodeId,
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
                    dest: id.0,
                    start,
                    length,
                },
            );
        }
        Ok(request)
    }

    /// Writes a variable by name; the number of values must be its size.
    pub fn set_variable(&mut self, id: NodeId, name: &str, values: &[i16]) -> Result<(), NetError> {
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
    pub fn set_variables(
        &mut self,
        id: NodeId,
        start: u16,
        values: &[i16],
    ) -> Result<(), NetError> {
        let node = self.ready_node(id)?;
        check_range(node, start as usize, values.len())?;
        if values.len() + 2 > MAX_PAYLOAD_WORDS {
            return Err(NetError::TooLarge(values.len() + 2));
        }
        let link = node.link;
        let m = Message::SetVariables {
            dest: id.0,
            start,
            values: Words::from_slice(values),
        };
        self.send(Dest::Link(link), &m);
        Ok(())
    }

    pub(super) fn on_variables(&mut self, source: NodeId, start: u16, values: Words<'_>) {
        for p in self.pending.iter_mut().filter(|p| p.node == source) {
            p.absorb(start, values.iter());
        }
        self.complete_ready_requests(source);
    }

    pub(super) fn complete_ready_requests(&mut self, node: NodeId) {
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

    pub(super) fn expire_requests(&mut self, now: Instant) {
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

    pub(super) fn lookup(
        &self,
        id: NodeId,
        name: &str,
    ) -> Result<msgs::description::NamedVariable, NetError> {
        let node = self.ready_node(id)?;
        node.variable(name)
            .ok_or_else(|| NetError::UnknownVariable {
                node: id,
                name: name.to_owned(),
            })
    }

    pub(super) fn ready_node(&self, id: NodeId) -> Result<&Node, NetError> {
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
