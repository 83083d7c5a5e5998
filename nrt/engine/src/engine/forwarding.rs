//! Several targets form one Aseba network, as in asebaros' hub: what is said on one link is sent on the others
//! where something can use it. A link where no node is known (a host may be there) gets every frame; on a link
//! whose nodes are all known:
//! - a user event goes only where a node may run a handler for it ([`crate::network::Node::may_handle_event`]:
//!   a node whose program we do not know may; one running the script we loaded, with no handler for that event,
//!   does not);
//! - a command of a host behind another link (Studio behind an asebaswitch target) goes as before;
//! - what nodes say to hosts (descriptions, variables, execution states, their answers to our `LIST_NODES`)
//!   does not: no node uses it.
//!
//! With `switch.forward_unhandled_events`, every frame goes to every other link, as asebaros does.
//!
//! Robots on separate links (one cable or port each) each run the single-robot script, which handles none of
//! the events the others emit: their odometry and sensor events and their answers to the driver's periodic
//! requests no longer cross to every other link, which made the links' traffic and the driver's cost grow with
//! the square of the robots. An event the robots of a swarm script send each other still goes where a handler
//! for it runs.
//!
//! The links of each kind of frame are computed once and kept until a node appears, moves to another link or
//! changes program ([`crate::network::NetworkManager::generation`]) or a link comes or goes: a frame costs a
//! look-up.

use crate::network::{NetworkManager, Via};
use handoff::LinkId;
use std::collections::HashMap;

/// Where frames read from one link go among the others (see the module documentation).
#[derive(Debug, Default)]
pub(super) struct Forwarding {
    /// The network's generation and the links' the cache was computed for.
    key: Option<(u64, u64)>,
    /// Bumped when a link comes or goes.
    links_generation: u64,
    /// Every link up.
    links: Vec<LinkId>,
    /// Per user event id: the links where it may be handled.
    by_event: HashMap<u16, Vec<LinkId>>,
    /// The links where no node is known (what nodes say to hosts goes there).
    unknown: Option<Vec<LinkId>>,
}

impl Forwarding {
    /// A link came up or went down.
    pub(super) fn links_changed(&mut self) {
        self.links_generation = self.links_generation.wrapping_add(1);
    }

    /// Calls `to` with every link other than `from` that a frame of `kind` read on `from` goes to (`all`:
    /// every frame to every other link). `links`: the links up.
    pub(super) fn each_target(
        &mut self,
        net: &NetworkManager,
        links: impl Iterator<Item = LinkId>,
        from: LinkId,
        kind: u16,
        all: bool,
        mut to: impl FnMut(LinkId),
    ) {
        let key = (net.generation(), self.links_generation);
        if self.key != Some(key) {
            self.key = Some(key);
            self.links.clear();
            self.links.extend(links);
            self.by_event.clear();
            self.unknown = None;
        }
        let links = &self.links;
        let targets = if all || kind >= 0xA000 {
            // every frame, or a host's command
            links
        } else if msgs::wire::kind::is_user_event(kind) {
            self.by_event
                .entry(kind)
                .or_insert_with(|| handling_links(net, links, Some(kind)))
        } else {
            // a node speaking to hosts
            self.unknown
                .get_or_insert_with(|| handling_links(net, links, None))
        };
        for l in targets.iter().filter(|l| **l != from) {
            to(*l);
        }
    }
}

/// The links among `links` where no node is known, or (`event`) where a node may handle that user event.
fn handling_links(net: &NetworkManager, links: &[LinkId], event: Option<u16>) -> Vec<LinkId> {
    links
        .iter()
        .copied()
        .filter(|l| {
            let mut nodes = net.nodes().filter(|n| n.link == Via::Link(*l)).peekable();
            nodes.peek().is_none() || event.is_some_and(|e| nodes.any(|n| n.may_handle_event(e)))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::network::{LoadedScript, ManagerConfig};
    use crate::policy::NodesPolicy;
    use msgs::wire::{Frame, Message, Words, HOST_SOURCE};
    use std::time::Instant;

    /// A program handling the events `handled` (the event vector table, then one word of code).
    fn script(handled: &[u16]) -> LoadedScript {
        let mut bytecode = vec![1 + 2 * handled.len() as u16];
        for id in handled {
            bytecode.extend([*id, bytecode[0]]);
        }
        bytecode.push(0);
        LoadedScript {
            bytecode,
            ..LoadedScript::default()
        }
    }

    fn frame(net: &mut NetworkManager, link: u8, source: u16, m: &Message<'_>) {
        let bytes = m.to_frame(source).expect("encodes");
        let (f, _) = Frame::parse(&bytes).expect("parses");
        net.on_frame(Via::Link(LinkId(link)), &f, 0, Instant::now());
    }

    /// Node `id` announced on `link`, described as a Thymio-II, running `handled`'s script.
    fn node(net: &mut NetworkManager, link: u8, id: u16) {
        frame(net, link, id, &Message::NodePresent { version: 9 });
        assert!(net.node(handoff::NodeId(id)).is_some());
    }

    fn targets(
        f: &mut Forwarding,
        net: &NetworkManager,
        links: &[u8],
        from: u8,
        kind: u16,
        all: bool,
    ) -> Vec<u8> {
        let mut out = Vec::new();
        f.each_target(
            net,
            links.iter().map(|l| LinkId(*l)),
            LinkId(from),
            kind,
            all,
            |l| out.push(l.0),
        );
        out
    }

    #[test]
    fn events_go_only_where_a_handler_may_run() {
        let mut net = NetworkManager::new(ManagerConfig::default(), NodesPolicy::default());
        let mut f = Forwarding::default();
        for (link, id) in [(0, 1), (1, 2), (2, 3)] {
            node(&mut net, link, id);
        }
        // nothing loaded yet: every program is unknown, every event goes everywhere
        assert_eq!(targets(&mut f, &net, &[0, 1, 2, 3], 0, 2, false), [1, 2, 3]);
        // our script everywhere, handling event 1 only: event 2 (odometry) goes to the link without a node
        for id in [1, 2, 3] {
            // a load needs a described node; the script is what matters here
            net.set_script_for_tests(handoff::NodeId(id), script(&[1]));
        }
        assert_eq!(targets(&mut f, &net, &[0, 1, 2, 3], 0, 2, false), [3]);
        assert_eq!(targets(&mut f, &net, &[0, 1, 2, 3], 0, 1, false), [1, 2, 3]);
        // what nodes say to hosts goes where a host may be; a host's command and `all` everywhere else
        assert_eq!(targets(&mut f, &net, &[0, 1, 2, 3], 1, 0x9000, false), [3]);
        assert_eq!(
            targets(&mut f, &net, &[0, 1, 2, 3], 1, 0xA001, false),
            [0, 2, 3]
        );
        assert_eq!(targets(&mut f, &net, &[0, 1, 2, 3], 0, 2, true), [1, 2, 3]);
        assert_eq!(
            targets(&mut f, &net, &[0, 1, 2, 3], 0, 0x9000, true),
            [1, 2, 3]
        );
        // another client programs node 3: its handlers are no longer known
        let words = [0u16; 4];
        let words: Vec<i16> = words.iter().map(|w| *w as i16).collect();
        frame(
            &mut net,
            2,
            HOST_SOURCE,
            &Message::SetBytecode {
                dest: 3,
                start: 0,
                words: Words::from_slice(&words),
            },
        );
        assert_eq!(targets(&mut f, &net, &[0, 1, 2, 3], 0, 2, false), [2, 3]);
        // a node heard on another link moves its events' way with it
        frame(&mut net, 3, 2, &Message::NodePresent { version: 9 });
        net.set_script_for_tests(handoff::NodeId(2), script(&[2]));
        // (link 1 has no node left: a host may be there)
        assert_eq!(targets(&mut f, &net, &[0, 1, 2, 3], 0, 2, false), [1, 2, 3]);
        assert_eq!(targets(&mut f, &net, &[0, 1, 2, 3], 3, 2, false), [1, 2]);
    }

    #[test]
    fn a_link_coming_or_going_is_seen() {
        let mut net = NetworkManager::new(ManagerConfig::default(), NodesPolicy::default());
        let mut f = Forwarding::default();
        node(&mut net, 0, 1);
        net.set_script_for_tests(handoff::NodeId(1), script(&[]));
        assert_eq!(targets(&mut f, &net, &[0], 0, 2, false), Vec::<u8>::new());
        f.links_changed();
        assert_eq!(targets(&mut f, &net, &[0, 1], 0, 2, false), [1]);
    }

    #[test]
    fn a_table_is_read_as_the_vm_reads_it() {
        assert!(!LoadedScript::default().handles_event(0));
        assert!(script(&[4, 7]).handles_event(7));
        assert!(!script(&[4, 7]).handles_event(5));
        // a table longer than the image: what there is
        let s = LoadedScript {
            bytecode: vec![9, 5, 3],
            ..LoadedScript::default()
        };
        assert!(s.handles_event(5));
    }
}
