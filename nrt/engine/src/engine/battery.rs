//! The battery of driven robots: every [`BATTERY_PERIOD`] the engine reads each driven robot's `_vbat` (a
//! GET_VARIABLES of the firmware's battery ADC word, answered like any read) and reports it as an
//! [`EngineEvent::Battery`] (each front end's `battery_state`, `nrt_interface::battery`). The engine's own reads
//! never reach the front ends as [`NetworkEvent::Variables`]. A node without `_vbat` (Aseba Playground's reduced
//! Thymio) or not on the network is not read; a read that fails or expires is dropped, the next period reads again.

use super::{Engine, EngineEvent};
use crate::network::{NetworkEvent, RequestId};
use handoff::NodeId;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// How often each driven robot's battery is read (the Create 3 publishes `battery_state` at 1 Hz too).
pub const BATTERY_PERIOD: Duration = Duration::from_secs(1);

/// The battery reads in flight and when the next ones are due.
#[derive(Debug, Default)]
pub(super) struct BatteryReads {
    next: Option<Instant>,
    pending: BTreeMap<RequestId, NodeId>,
}

impl Engine {
    /// Reads every driven robot's `_vbat` when the period is due.
    pub(super) fn poll_battery(&mut self, now: Instant) {
        if self.battery.next.is_some_and(|t| now < t) {
            return;
        }
        self.battery.next = Some(now + BATTERY_PERIOD);
        // a read still unanswered after a period is gone (the network layer expired it)
        self.battery.pending.clear();
        let nodes: Vec<NodeId> = self.robots.iter().map(|s| s.node).collect();
        for node in nodes {
            if self.lost_since.contains_key(&node) {
                continue;
            }
            let Some(vbat) = self.net.node(node).and_then(|n| n.variable("_vbat")) else {
                continue;
            };
            // its first word (the second is the firmware's own)
            if let Ok(request) = self.net.get_variables(node, vbat.address, 1, now) {
                self.battery.pending.insert(request, node);
            }
        }
    }

    /// Takes the answer of one of the engine's battery reads out of the network's events: whether `ev` was one
    /// (reported as an [`EngineEvent::Battery`] when it has a value).
    pub(super) fn take_battery_reading(&mut self, ev: &NetworkEvent) -> bool {
        let NetworkEvent::Variables { request, result } = ev else {
            return false;
        };
        let Some(node) = self.battery.pending.remove(request) else {
            return false;
        };
        if let Ok(values) = result {
            if let Some(&vbat) = values.first() {
                self.events.push_back(EngineEvent::Battery { node, vbat });
            }
        }
        true
    }
}
