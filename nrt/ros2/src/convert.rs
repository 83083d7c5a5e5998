//! The layer's asebaros content (`nrt_interface::aseba`) → asebaros_msgs messages (one conversion per message
//! type), and RT receive stamps → ROS time.

use nrt_interface::aseba::{
    AnonymousEvent as Anonymous, Event as AsebaEvent, NodeDescription as Description, NodeInfo,
};
use nrt_interface::geometry::steady_to_system;
use nrt_interface::load_script::LoadScriptRequest;
use r2r::asebaros_msgs::msg::{
    AnonymousEvent, Constant, Event, Node as NodeMsg, NodeDescription, NodeList,
};
use r2r::asebaros_msgs::srv::LoadScript;
use r2r::builtin_interfaces::msg::Time;
use std::time::Duration;

/// `asebaros_msgs/Node`.
pub fn node(n: &NodeInfo) -> NodeMsg {
    NodeMsg {
        id: n.id,
        name: n.name.clone(),
        name_space: n.name_space.clone(),
        running: n.running,
        ignored: n.ignored,
        connected: n.connected,
    }
}

/// `asebaros_msgs/NodeList`.
pub fn node_list(nodes: &[NodeInfo]) -> NodeList {
    NodeList {
        nodes: nodes.iter().map(node).collect(),
    }
}

/// `asebaros_msgs/NodeDescription`.
pub fn description(d: &Description) -> NodeDescription {
    NodeDescription {
        id: d.id,
        name: d.name.clone(),
        constants: d
            .constants
            .iter()
            .map(|(name, value)| Constant {
                name: name.clone(),
                value: *value,
            })
            .collect(),
        events: d.events.clone(),
        variables: d.variables.clone(),
    }
}

/// `asebaros_msgs/Event`.
pub fn event(e: AsebaEvent) -> Event {
    Event {
        stamp: time(e.stamp),
        source: e.source,
        data: e.data,
    }
}

/// `asebaros_msgs/AnonymousEvent`.
pub fn anonymous(e: Anonymous) -> AnonymousEvent {
    AnonymousEvent {
        stamp: time(e.stamp),
        source: e.source,
        type_: e.kind,
        data: e.data,
    }
}

/// A `load_script` request, neutral.
pub fn load_script_request(r: &LoadScript::Request) -> LoadScriptRequest {
    LoadScriptRequest {
        file_name: r.file_name.clone(),
        constants: r
            .constants
            .iter()
            .map(|c| (c.name.clone(), c.value))
            .collect(),
        node_ids: r.node_ids.clone(),
        set_as_default: r.set_as_default,
    }
}

/// A duration since the epoch as `builtin_interfaces/Time` (saturating at the limits of the message).
pub fn time(since_epoch: Duration) -> Time {
    Time {
        sec: i32::try_from(since_epoch.as_secs()).unwrap_or(i32::MAX),
        nanosec: since_epoch.subsec_nanos(),
    }
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

    #[test]
    fn neutral_content_carries_over_whole() {
        let t = time(Duration::new(1_700_000_000, 5));
        assert_eq!((t.sec, t.nanosec), (1_700_000_000, 5));
        assert_eq!(time(Duration::from_secs(u64::MAX)).sec, i32::MAX);
        let d = description(&Description {
            id: 3,
            name: "thymio-II".into(),
            constants: vec![("MY_CONSTANT".into(), 3)],
            events: vec!["ping".into()],
            variables: vec!["_id".into()],
        });
        assert_eq!(
            d.constants,
            vec![Constant {
                name: "MY_CONSTANT".into(),
                value: 3
            }]
        );
        let a = anonymous(Anonymous {
            stamp: Duration::from_secs(2),
            source: 3,
            kind: 7,
            data: vec![1],
        });
        assert_eq!((a.stamp.sec, a.source, a.type_, a.data), (2, 3, 7, vec![1]));
    }
}
