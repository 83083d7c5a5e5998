//! asebaros' content (ros-aseba-interface.md §2.3, §2.6): the node list of `aseba/nodes` and `aseba/get_nodes`,
//! a node's `description`, and where an event from Aseba goes — `<ns>/aseba/events/<name>` when the script loaded
//! on its node declares it with that payload size, `aseba/anonymous_events` otherwise. ROS → Aseba only when
//! `source == 0` (the front end's own publications carry the node id and are not echoed back).

use crate::geometry::Stamp;
use handoff::NodeId;
use nrt_engine::network::{NetworkManager, Node, NodeState};

/// `asebaros_msgs/Node`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeInfo {
    /// Node id.
    pub id: u16,
    /// Its name (`thymio-II`).
    pub name: String,
    /// Its ROS namespace.
    pub name_space: String,
    /// A script of ours runs on it.
    pub running: bool,
    /// The bridge ignores it.
    pub ignored: bool,
    /// It answers.
    pub connected: bool,
}

/// `asebaros_msgs/NodeDescription`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NodeDescription {
    /// Node id.
    pub id: u16,
    /// Its name.
    pub name: String,
    /// The constants of the loaded script.
    pub constants: Vec<(String, i16)>,
    /// The global events of the loaded script.
    pub events: Vec<String>,
    /// The node's variables (firmware's, then the script's).
    pub variables: Vec<String>,
}

/// One node as `asebaros_msgs/Node`.
pub fn node(n: &Node) -> NodeInfo {
    NodeInfo {
        id: n.id.0,
        name: n.name().to_owned(),
        name_space: n.namespace().to_owned(),
        running: n.script.is_some(),
        ignored: matches!(n.state, NodeState::Ignored(_)),
        connected: n.connected,
    }
}

/// The bridged nodes (what `aseba/nodes` carries), plus the ignored ones when `ignored` is set (as
/// `aseba/get_nodes` answers `ignored: true`). Nodes still being described are in neither.
pub fn node_list(net: &NetworkManager, ignored: bool) -> Vec<NodeInfo> {
    net.nodes()
        .filter(|n| n.is_bridged() || (ignored && matches!(n.state, NodeState::Ignored(_))))
        .map(node)
        .collect()
}

/// What `<ns>/aseba/description` carries: the node's variables, and the constants and events of the script we
/// loaded on it (none before).
pub fn description(n: &Node) -> NodeDescription {
    let script = n.script.as_ref();
    NodeDescription {
        id: n.id.0,
        name: n.name().to_owned(),
        constants: script.map(|s| s.constants.clone()).unwrap_or_default(),
        events: script
            .map(|s| s.events.iter().map(|(name, _)| name.clone()).collect())
            .unwrap_or_default(),
        variables: n.variable_names(),
    }
}

/// The global events (name, payload size) of the script loaded on node `id`, in the order of their ids (none
/// without a script).
pub fn script_events(net: &NetworkManager, id: NodeId) -> Vec<(String, u16)> {
    net.node(id)
        .and_then(|n| n.script.as_ref())
        .map(|s| s.events.clone())
        .unwrap_or_default()
}

/// The name of event `event` of the script loaded on node `id`, if declared with a payload of `len` words.
pub fn event_name(net: &NetworkManager, id: NodeId, event: u16, len: usize) -> Option<&str> {
    net.node(id)?
        .script
        .as_ref()?
        .events
        .get(usize::from(event))
        .filter(|(_, size)| usize::from(*size) == len)
        .map(|(name, _)| name.as_str())
}

/// `asebaros_msgs/Event` of `<ns>/aseba/events/<name>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// When the RT thread received it.
    pub stamp: Stamp,
    /// The node that emitted it (0 from ROS).
    pub source: u16,
    /// Payload.
    pub data: Vec<i16>,
}

/// `asebaros_msgs/AnonymousEvent` of `aseba/anonymous_events`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnonymousEvent {
    /// When the RT thread received it.
    pub stamp: Stamp,
    /// The node that emitted it (0 from ROS).
    pub source: u16,
    /// Event id.
    pub kind: u16,
    /// Payload.
    pub data: Vec<i16>,
}

/// Where an event from Aseba goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Routed<'a> {
    /// On `<ns>/aseba/events/<name>` of its node.
    Named(&'a str, Event),
    /// On `aseba/anonymous_events` (no script, undeclared, or a payload of another size than declared).
    Anonymous(AnonymousEvent),
}

/// Routes event `event` of node `source` with `args`, received at `stamp`.
pub fn route_event<'a>(
    net: &'a NetworkManager,
    source: NodeId,
    event: u16,
    args: &[i16],
    stamp: Stamp,
) -> Routed<'a> {
    match event_name(net, source, event, args.len()) {
        Some(name) => Routed::Named(
            name,
            Event {
                stamp,
                source: source.0,
                data: args.to_vec(),
            },
        ),
        None => Routed::Anonymous(AnonymousEvent {
            stamp,
            source: source.0,
            kind: event,
            data: args.to_vec(),
        }),
    }
}

/// Whether an event received from ROS with `source` goes to Aseba: only others' (source 0), not the echo of our
/// own publications.
pub fn from_ros(source: u16) -> bool {
    source == 0
}

/// The line reported when `get_variable` is refused at once (unknown node or variable): ROS 2 reports it (its
/// service has no error field), ROS 1 reports it and fails the call with it.
pub fn get_variable_refused(error: &dyn std::fmt::Display) -> String {
    format!("get_variable: {error}")
}

/// The line reported when the node did not give `variable` (no answer in time, an error): after the call was held.
pub fn get_variable_failed(variable: &str, node: NodeId, error: &dyn std::fmt::Display) -> String {
    format!("get_variable {variable} of node {node}: {error}")
}

/// The line reported when `set_variable` is refused (unknown node or variable, wrong size).
pub fn set_variable_refused(error: &dyn std::fmt::Display) -> String {
    format!("set_variable: {error}")
}

/// The line reported when loading a script on node `node` failed (when it appeared or came back).
pub fn script_failed(node: NodeId, error: &str) -> String {
    format!("node {node}: {error}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use handoff::LinkId;
    use msgs::description::NamedVariable;
    use msgs::wire::{Frame, Message};
    use nrt_engine::network::{LoadedScript, ManagerConfig, Via};
    use nrt_engine::params::{BridgeParams, NodeClass};
    use nrt_engine::policy::NodesPolicy;
    use nrt_engine::testutil::{description_frames, small_target};
    use std::time::Instant;

    /// A manager that heard nodes 3 (thymio-II, bridged in namespace `thymio_3`) and 4 (other type, ignored).
    fn network() -> NetworkManager {
        let mut params = BridgeParams::default();
        params.nodes.insert(
            "thymio".into(),
            NodeClass {
                name: "thymio-II".into(),
                id: -1,
                accept: Some(true),
                prefix: Some("thymio_".into()),
                ..Default::default()
            },
        );
        params.nodes.insert(
            "other".into(),
            NodeClass {
                id: -1,
                accept: Some(false),
                ..Default::default()
            },
        );
        let mut net =
            NetworkManager::new(ManagerConfig::default(), NodesPolicy::new(&params.nodes));
        let now = Instant::now();
        net.on_link_up(Via::Link(LinkId(0)), now);
        let mut other = small_target(9);
        other.name = "e-puck0".into();
        for (id, target) in [(3u16, small_target(9)), (4, other)] {
            let present = Message::NodePresent { version: 9 }.to_frame(id).unwrap();
            net.on_frame(
                Via::Link(LinkId(0)),
                &Frame::parse(&present).unwrap().0,
                0,
                now,
            );
            for f in description_frames(&target, id) {
                net.on_frame(Via::Link(LinkId(0)), &Frame::parse(&f).unwrap().0, 0, now);
            }
        }
        net
    }

    fn script() -> LoadedScript {
        LoadedScript {
            events: vec![("ping".into(), 3), ("pong".into(), 0)],
            variables: vec![NamedVariable {
                name: "counter".into(),
                address: 200,
                size: 1,
            }],
            constants: vec![("MY_CONSTANT".into(), 3)],
            bytecode: vec![0; 4],
            origin: "test".into(),
        }
    }

    #[test]
    fn node_list_holds_the_bridged_nodes_and_on_request_the_ignored() {
        let net = network();
        assert_eq!(
            node_list(&net, false),
            vec![NodeInfo {
                id: 3,
                name: "thymio-II".into(),
                name_space: "thymio_3".into(),
                running: false,
                ignored: false,
                connected: true,
            }]
        );
        let all = node_list(&net, true);
        assert_eq!(all.len(), 2);
        assert_eq!(all[1].id, 4);
        assert_eq!(all[1].name, "e-puck0");
        assert!(all[1].ignored);
        assert_eq!(all[1].name_space, "");
    }

    #[test]
    fn description_lists_firmware_then_script_variables_and_the_script_events() {
        let mut net = network();
        let before = description(net.node(NodeId(3)).unwrap());
        assert_eq!(before.variables[0], "_id");
        assert!(before.events.is_empty() && before.constants.is_empty());
        net.load_script(NodeId(3), script()).unwrap();
        let after = description(net.node(NodeId(3)).unwrap());
        assert_eq!(after.id, 3);
        assert_eq!(after.name, "thymio-II");
        assert_eq!(after.events, ["ping", "pong"]);
        assert_eq!(after.constants, vec![("MY_CONSTANT".to_owned(), 3)]);
        assert_eq!(after.variables.last().unwrap(), "counter");
        assert_eq!(after.variables.len(), before.variables.len() + 1);
        assert!(node(net.node(NodeId(3)).unwrap()).running);
    }

    #[test]
    fn events_go_to_their_named_topic_only_with_the_declared_size() {
        let mut net = network();
        let stamp = Stamp::from_secs(1);
        // no script: anonymous
        assert!(matches!(
            route_event(&net, NodeId(3), 0, &[1, 2, 3], stamp),
            Routed::Anonymous(AnonymousEvent {
                kind: 0,
                source: 3,
                ..
            })
        ));
        net.load_script(NodeId(3), script()).unwrap();
        assert_eq!(script_events(&net, NodeId(3)).len(), 2);
        assert_eq!(
            route_event(&net, NodeId(3), 0, &[1, 2, 3], stamp),
            Routed::Named(
                "ping",
                Event {
                    stamp,
                    source: 3,
                    data: vec![1, 2, 3]
                }
            )
        );
        assert!(matches!(
            route_event(&net, NodeId(3), 1, &[], stamp),
            Routed::Named("pong", _)
        ));
        // wrong size, undeclared id, unknown node: anonymous, with everything it carried
        assert_eq!(
            route_event(&net, NodeId(3), 0, &[1], stamp),
            Routed::Anonymous(AnonymousEvent {
                stamp,
                source: 3,
                kind: 0,
                data: vec![1]
            })
        );
        assert!(matches!(
            route_event(&net, NodeId(3), 7, &[], stamp),
            Routed::Anonymous(_)
        ));
        assert!(matches!(
            route_event(&net, NodeId(9), 0, &[1, 2, 3], stamp),
            Routed::Anonymous(_)
        ));
        assert!(from_ros(0) && !from_ros(3));
        assert_eq!(script_failed(NodeId(3), "too big"), "node 3: too big");
    }
}
