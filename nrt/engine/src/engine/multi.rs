//! Several Thymio-II on one Aseba network (an RF dongle with several robots, `sim.robots` > 1,
//! robots joined by an asebaswitch): every robot of the network receives every user event, so
//! the single-robot script would make each `set_speed` and actuator event move or light every
//! robot on it. When a link carries more than one accepted Thymio-II, each of them gets the
//! id-addressed variant of the default script instead (as ROS-Thymio's multi-robot driver
//! does): its incoming events start with the target node id and the script ignores the events
//! meant for another id. The engine then prepends the id to that robot's events and the RT
//! thread to its `set_speed`. A robot that already runs the single-robot script when a second
//! one appears on its link is reloaded with the variant (and says so in the log).
//!
//! The variant of a shipped script is its `_multi` sibling (`thymio_ros.aesl` →
//! `thymio_ros_multi.aesl`, `thymio_ros_playground.aesl` → `thymio_ros_multi_playground.aesl`,
//! built in or in the same directory); a script of another name has none, and robots sharing
//! a network then need `nodes.<type>.include_id_in_events` and an id-addressed script of
//! their own.

use super::{Engine, ScriptSource};
use crate::network::{Node, Via};
use handoff::NodeId;
use std::time::Instant;

/// The Aseba node type whose driver script has an id-addressed variant.
const THYMIO_TYPE: &str = "thymio-II";

/// The single-robot scripts and their id-addressed variants (file names).
const VARIANTS: [(&str, &str); 2] = [
    ("thymio_ros.aesl", "thymio_ros_multi.aesl"),
    (
        "thymio_ros_playground.aesl",
        "thymio_ros_multi_playground.aesl",
    ),
];

/// The path of the id-addressed variant of the script at `path` (`None`: it has none).
pub fn multi_variant_path(path: &str) -> Option<String> {
    let (dir, name) = match path.rfind('/') {
        Some(i) => path.split_at(i + 1),
        None => path.split_at(path.find(':').map_or(0, |i| i + 1)),
    };
    VARIANTS
        .iter()
        .find(|(single, _)| *single == name)
        .map(|(_, multi)| format!("{dir}{multi}"))
}

/// Whether `a` and `b` are two accepted Thymio-II on the same link.
fn share_link(a: &Node, b: &Node) -> bool {
    a.id != b.id
        && matches!(a.link, Via::Link(_))
        && a.link == b.link
        && b.connected
        && b.is_bridged()
        && b.name() == THYMIO_TYPE
}

impl Engine {
    /// Whether the events meant for node `id` carry its id first: its settings say so
    /// (`include_id_in_events`) or the engine gave it the id-addressed variant.
    pub(super) fn with_id(&self, id: NodeId) -> bool {
        self.id_addressed.contains(&id)
            || self
                .net
                .node(id)
                .and_then(|n| n.settings())
                .is_some_and(|s| s.include_id_in_events)
    }

    /// The script to load on node `id` when it is accepted: the default one, or its
    /// id-addressed variant when another accepted Thymio-II shares the node's link (those of
    /// them that run the single-robot default script are reloaded with the variant).
    pub(super) fn script_for_new(&mut self, id: NodeId, now: Instant) -> Option<ScriptSource> {
        let default = self.default_script.clone()?;
        let Some(node) = self.net.node(id) else {
            return Some(default);
        };
        let own_setting = node.settings().is_some_and(|s| s.include_id_in_events);
        if node.name() != THYMIO_TYPE || own_setting {
            return Some(default);
        }
        let peers: Vec<NodeId> = self
            .net
            .nodes()
            .filter(|p| share_link(node, p))
            .map(|p| p.id)
            .collect();
        if peers.is_empty() {
            return Some(default);
        }
        let link = node.link;
        let Some(multi) = self.multi_script.clone() else {
            tracing::warn!(
                "node {id}: shares {link} with node(s) {peers:?}, and the script {} has no \
                 id-addressed variant: each of them obeys the others' commands (set \
                 nodes.<type>.include_id_in_events and load an id-addressed script)",
                default.origin
            );
            return Some(default);
        };
        self.address_by_id(id);
        for peer in peers {
            let single = self.net.node(peer).is_some_and(|p| {
                p.script
                    .as_ref()
                    .is_some_and(|s| s.origin == default.origin)
            }) && !self.with_id(peer);
            if !single {
                continue;
            }
            tracing::warn!(
                "node {peer}: node {id} joined it on {link}: several Thymio-II on one Aseba \
                 network, every one of them would obey the other's commands: reloading node \
                 {peer} with the id-addressed script {} (and loading it on node {id})",
                multi.origin
            );
            self.address_by_id(peer);
            if let Err(e) = self.load_on(&multi, peer, now) {
                tracing::error!("node {peer}: {e}");
            }
        }
        tracing::info!(
            "node {id}: shares {link} with another Thymio-II: loading the id-addressed script {}",
            multi.origin
        );
        Some(multi)
    }

    /// Marks node `id` as running the id-addressed variant and makes sure its id variable
    /// holds its id (the variant compares the events' first word with it).
    fn address_by_id(&mut self, id: NodeId) {
        self.id_addressed.insert(id);
        if self.params.set_id_variable {
            return; // written on acceptance already
        }
        let var = self
            .net
            .node(id)
            .and_then(|n| n.settings())
            .map(|s| s.id_variable.clone())
            .unwrap_or_default();
        if var.is_empty() {
            return;
        }
        if let Err(e) = self.net.set_variable(id, &var, &[id.0 as i16]) {
            tracing::warn!("node {id}: cannot set its id variable: {e}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::engine;
    use super::*;
    use crate::testutil::{description_frames, small_target};
    use handoff::{LinkId, LinkKind, RtCommand, RtEnds, RtEvent, SpeedOutput};
    use msgs::wire::{Frame, Message, MAX_FRAME};
    use std::time::Duration;

    const SINGLE: &str =
        "<!DOCTYPE aesl-source>\n<network>\n<event size=\"2\" name=\"set_speed\"/>\n\
        <event size=\"2\" name=\"odometry\"/>\n<node nodeId=\"1\" name=\"thymio-II\">var x\n\
        onevent set_speed\nx = event.args[0]\n</node>\n</network>\n";
    const MULTI: &str = "<!DOCTYPE aesl-source>\n<network>\n<event size=\"3\" name=\"set_speed\"/>\n\
        <event size=\"2\" name=\"odometry\"/>\n<node nodeId=\"1\" name=\"thymio-II\">var x\n\
        onevent set_speed\nif event.args[0] == _id then\nx = event.args[1]\nend\n</node>\n</network>\n";

    fn source(origin: &str, text: &str) -> ScriptSource {
        ScriptSource {
            origin: origin.into(),
            text: text.into(),
            constants: Default::default(),
        }
    }

    /// Node `id` appears on link 0 and is accepted and configured.
    fn appear(e: &mut Engine, rt: &mut RtEnds, id: u16, t: &mut Instant) {
        rt.rt_push_frame(
            LinkId(0),
            1,
            &Message::NodePresent { version: 9 }.to_frame(id).unwrap(),
        );
        for f in description_frames(&small_target(9), id) {
            rt.rt_push_frame(LinkId(0), 2, &f);
        }
        e.poll(*t);
        *t += Duration::from_secs(1);
        e.poll(*t);
    }

    /// The RT configurations pushed since the last call: (node, id prefixed to set_speed).
    fn configured(rt: &mut RtEnds) -> Vec<(u16, bool)> {
        std::iter::from_fn(|| rt.rt_pop_command())
            .filter_map(|c| match c {
                RtCommand::ConfigureRobot { config, .. } => match config.speed {
                    SpeedOutput::Event { node_prefix, .. } => Some((config.node.0, node_prefix)),
                    _ => None,
                },
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_second_robot_on_the_link_switches_both_to_the_id_addressed_script() {
        let (mut e, mut rt) = engine(0);
        e.default_script = Some(source("single", SINGLE));
        e.multi_script = Some(source("multi", MULTI));
        assert!(rt.rt_push_event(RtEvent::LinkUp {
            link: LinkId(0),
            target: 0,
            kind: LinkKind::Pipe
        }));
        let mut t = Instant::now();
        e.poll(t);
        appear(&mut e, &mut rt, 3, &mut t);
        let origin = |e: &Engine, id: u16| {
            e.net
                .node(NodeId(id))
                .unwrap()
                .script
                .clone()
                .unwrap()
                .origin
        };
        assert_eq!(origin(&e, 3), "single");
        assert_eq!(configured(&mut rt), vec![(3, false)]);
        appear(&mut e, &mut rt, 4, &mut t);
        assert_eq!(
            (origin(&e, 3), origin(&e, 4)),
            ("multi".into(), "multi".into())
        );
        let mut c = configured(&mut rt);
        c.sort();
        assert_eq!(c, vec![(3, true), (4, true)]);
        // the NRT events carry the target id too (set_speed of a driven robot is its set-point:
        // the id-addressed odometry event, without a handler, stands in for an actuator event)
        let mut buf = [0u8; MAX_FRAME];
        while rt.rt_pop_frame(&mut buf).is_some() {}
        e.emit_script_event(NodeId(4), "odometry", &[7]).unwrap();
        let (_, n) = rt.rt_pop_frame(&mut buf).unwrap().unwrap();
        let (f, _) = Frame::parse(&buf[..n]).unwrap();
        assert_eq!(f.payload, &[4, 0, 7, 0]);
    }

    #[test]
    fn shipped_scripts_have_their_multi_variant() {
        assert_eq!(
            multi_variant_path("builtin:aseba/thymio_ros.aesl").as_deref(),
            Some("builtin:aseba/thymio_ros_multi.aesl")
        );
        assert_eq!(
            multi_variant_path("/x/config/aseba/thymio_ros_playground.aesl").as_deref(),
            Some("/x/config/aseba/thymio_ros_multi_playground.aesl")
        );
        assert_eq!(
            multi_variant_path("thymio_ros.aesl").as_deref(),
            Some("thymio_ros_multi.aesl")
        );
        assert_eq!(
            multi_variant_path("builtin:aseba/thymio_ros_multi.aesl"),
            None
        );
        assert_eq!(multi_variant_path("/x/mine.aesl"), None);
        for (single, multi) in VARIANTS {
            let path = format!("builtin:aseba/{single}");
            let variant = multi_variant_path(&path).unwrap();
            assert_eq!(variant, format!("builtin:aseba/{multi}"));
            assert!(
                super::super::builtin_script(&variant).is_some(),
                "{variant}"
            );
        }
    }
}
