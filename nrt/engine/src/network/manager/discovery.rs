//! Discovery and descriptions: a node announced, its description fetched (whole, then by fragments after a loss),
//! checked against the host's protocol and the sharing policy, and marked lost.

use super::NetworkManager;
use crate::network::node::{IgnoreReason, Node, NodeState, Via};
use crate::network::types::{Dest, NetError, NetworkEvent};
use crate::network::{HOST_PROTOCOL_VERSION, MIN_TARGET_PROTOCOL_VERSION};
use handoff::NodeId;
use msgs::wire::Message;
use std::time::Instant;

impl NetworkManager {
    pub(super) fn ensure_node(
        &mut self,
        link: Via,
        id: NodeId,
        version: u16,
        now: Instant,
    ) -> &mut Node {
        if !self.nodes.contains_key(&id) {
            self.generation += 1;
            self.events.push_back(NetworkEvent::NodeDiscovered {
                id,
                protocol_version: version,
            });
        }
        self.nodes
            .entry(id)
            .or_insert_with(|| Node::new(id, link, version, now))
    }

    pub(super) fn on_node_present(&mut self, link: Via, id: NodeId, version: u16, now: Instant) {
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
                    dest: id.0,
                    version: HOST_PROTOCOL_VERSION,
                },
            );
        }
    }

    pub(super) fn retry_descriptions(&mut self, now: Instant) {
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
                        dest: id.0,
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
    pub(super) fn next_fragment(&mut self, id: NodeId, now: Instant) {
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

    pub(super) fn check_description(&mut self, id: NodeId) {
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

    pub(super) fn mark_lost(&mut self, id: NodeId) {
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
}

fn fragment_request(dest: NodeId, k: usize) -> Message<'static> {
    Message::GetNodeDescriptionFragment {
        dest: dest.0,
        version: HOST_PROTOCOL_VERSION,
        fragment: k as i16,
    }
}
