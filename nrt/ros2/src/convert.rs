//! Network state → asebaros_msgs messages, and RT receive stamps → ROS time.

use nrt_engine::network::{NetworkManager, Node, NodeState};
use r2r::asebaros_msgs::msg::{Constant, Node as NodeMsg, NodeDescription, NodeList};
use r2r::builtin_interfaces::msg::Time;
use std::time::Duration;

/// One node as `asebaros_msgs/Node`.
pub fn node(n: &Node) -> NodeMsg {
    NodeMsg {
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
pub fn node_list(net: &NetworkManager, ignored: bool) -> NodeList {
    NodeList {
        nodes: net
            .nodes()
            .filter(|n| n.is_bridged() || (ignored && matches!(n.state, NodeState::Ignored(_))))
            .map(node)
            .collect(),
    }
}

/// What `<ns>/aseba/description` carries: the node's variables, and the constants and events of the script we
/// loaded on it (none before).
pub fn description(n: &Node) -> NodeDescription {
    let script = n.script.as_ref();
    NodeDescription {
        id: n.id.0,
        name: n.name().to_owned(),
        constants: script
            .map(|s| {
                s.constants
                    .iter()
                    .map(|(name, value)| Constant {
                        name: name.clone(),
                        value: *value,
                    })
                    .collect()
            })
            .unwrap_or_default(),
        events: script
            .map(|s| s.events.iter().map(|(name, _)| name.clone()).collect())
            .unwrap_or_default(),
        variables: n.variable_names(),
    }
}

/// A duration since the epoch as `builtin_interfaces/Time` (saturating at the limits of the message).
pub fn time(since_epoch: Duration) -> Time {
    Time {
        sec: i32::try_from(since_epoch.as_secs()).unwrap_or(i32::MAX),
        nanosec: since_epoch.subsec_nanos(),
    }
}

/// The system time at which something happened at steady (CLOCK_MONOTONIC) time `stamp`, given both clocks read
/// now: `system_now − (steady_now − stamp)`. A stamp from the future (clock reading order) counts as now.
pub fn steady_to_system(stamp: Duration, steady_now: Duration, system_now: Duration) -> Duration {
    system_now.saturating_sub(steady_now.saturating_sub(stamp))
}

/// Reads the two clocks the stamps need (through rcl: its steady clock is CLOCK_MONOTONIC, the clock of the RT
/// thread's receive stamps).
pub struct Clocks {
    system: r2r::Clock,
    steady: r2r::Clock,
}

impl Clocks {
    /// Both clocks.
    pub fn new() -> Result<Clocks, r2r::Error> {
        Ok(Clocks {
            system: r2r::Clock::create(r2r::ClockType::SystemTime)?,
            steady: r2r::Clock::create(r2r::ClockType::SteadyTime)?,
        })
    }

    /// System time now.
    pub fn now(&mut self) -> Time {
        time(self.system.get_now().unwrap_or_default())
    }

    /// The system time of an RT receive stamp (CLOCK_MONOTONIC ns; 0 = unknown, taken as now).
    pub fn stamp(&mut self, stamp_ns: u64) -> Time {
        let system_now = self.system.get_now().unwrap_or_default();
        if stamp_ns == 0 {
            return time(system_now);
        }
        let steady_now = self.steady.get_now().unwrap_or_default();
        time(steady_to_system(
            Duration::from_nanos(stamp_ns),
            steady_now,
            system_now,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use msgs::description::NamedVariable;
    use msgs::handoff::LinkId;
    use msgs::handoff::NodeId;
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

    #[test]
    fn node_list_holds_the_bridged_nodes_and_on_request_the_ignored() {
        let net = network();
        let bridged = node_list(&net, false);
        assert_eq!(
            bridged.nodes,
            vec![NodeMsg {
                id: 3,
                name: "thymio-II".into(),
                name_space: "thymio_3".into(),
                running: false,
                ignored: false,
                connected: true,
            }]
        );
        let all = node_list(&net, true);
        assert_eq!(all.nodes.len(), 2);
        assert_eq!(all.nodes[1].id, 4);
        assert_eq!(all.nodes[1].name, "e-puck0");
        assert!(all.nodes[1].ignored);
        assert_eq!(all.nodes[1].name_space, "");
    }

    #[test]
    fn description_lists_firmware_then_script_variables_and_the_script_events() {
        let mut net = network();
        let before = description(net.node(NodeId(3)).unwrap());
        assert_eq!(before.variables[0], "_id");
        assert!(before.events.is_empty() && before.constants.is_empty());
        let script = LoadedScript {
            events: vec![("ping".into(), 3), ("pong".into(), 0)],
            variables: vec![NamedVariable {
                name: "counter".into(),
                address: 200,
                size: 1,
            }],
            constants: vec![("MY_CONSTANT".into(), 3)],
            bytecode: vec![0; 4],
            origin: "test".into(),
        };
        net.load_script(NodeId(3), script).unwrap();
        let after = description(net.node(NodeId(3)).unwrap());
        assert_eq!(after.id, 3);
        assert_eq!(after.name, "thymio-II");
        assert_eq!(after.events, ["ping", "pong"]);
        assert_eq!(
            after.constants,
            vec![Constant {
                name: "MY_CONSTANT".into(),
                value: 3
            }]
        );
        assert_eq!(after.variables.last().unwrap(), "counter");
        assert_eq!(after.variables.len(), before.variables.len() + 1);
        assert!(node(net.node(NodeId(3)).unwrap()).running);
    }

    #[test]
    fn steady_stamps_map_to_system_time() {
        let s = Duration::from_secs;
        assert_eq!(steady_to_system(s(90), s(100), s(1_000)), s(990));
        assert_eq!(steady_to_system(s(100), s(100), s(1_000)), s(1_000));
        // stamp read after the steady clock: not in the future
        assert_eq!(steady_to_system(s(101), s(100), s(1_000)), s(1_000));
        let t = time(Duration::new(1_700_000_000, 5));
        assert_eq!((t.sec, t.nanosec), (1_700_000_000, 5));
        assert_eq!(time(Duration::from_secs(u64::MAX)).sec, i32::MAX);
    }
}
