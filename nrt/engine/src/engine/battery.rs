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

#[cfg(test)]
mod tests {
    use super::super::tests::{engine, up, written};
    use super::*;
    use crate::network::LoadedScript;
    use crate::testutil::{description_frames, small_target};
    use handoff::LinkId;
    use msgs::wire::{kind, Frame, Message, Words};

    #[test]
    fn the_battery_is_read_every_period_and_answered_as_an_event_of_its_own() {
        let (mut e, mut rt) = engine(0);
        up(&mut e, &mut rt);
        // a Thymio-like node with the firmware's _vbat
        let mut target = small_target(9);
        target.push_variable("_vbat", 2);
        rt.rt_push_frame(
            LinkId(0),
            1,
            &Message::NodePresent { version: 9 }.to_frame(3).unwrap(),
        );
        for f in description_frames(&target, 3) {
            rt.rt_push_frame(LinkId(0), 2, &f);
        }
        e.poll(Instant::now());
        let script = LoadedScript {
            events: vec![("odometry".into(), 3), ("set_speed".into(), 2)],
            bytecode: vec![1],
            ..Default::default()
        };
        let node = NodeId(3);
        e.network_mut().load_script(node, script.clone()).unwrap();
        e.configure_robot(node, &script).unwrap();
        let vbat = e.network().node(node).unwrap().variable("_vbat").unwrap();
        let _ = written(&mut rt);
        while e.next_event().is_some() {}
        let t = Instant::now() + 2 * BATTERY_PERIOD;
        e.poll(t);
        let reads: Vec<(u16, u16, u16)> = written(&mut rt)
            .into_iter()
            .filter(|(_, k, _)| *k == kind::GET_VARIABLES)
            .map(|(_, _, f)| {
                let (frame, _) = Frame::parse(&f).unwrap();
                match Message::decode(frame.kind, frame.payload).unwrap() {
                    Message::GetVariables {
                        dest,
                        start,
                        length,
                    } => (dest, start, length),
                    other => panic!("{other:?}"),
                }
            })
            .collect();
        assert_eq!(reads, [(3, vbat.address, 1)]);
        // not again before the period is over
        e.poll(t + BATTERY_PERIOD / 2);
        assert!(!written(&mut rt)
            .iter()
            .any(|(_, k, _)| *k == kind::GET_VARIABLES));
        let answer = Message::Variables {
            start: vbat.address,
            values: Words::from_slice(&[794]),
        };
        rt.rt_push_frame(LinkId(0), 5, &answer.to_frame(3).unwrap());
        e.poll(t + BATTERY_PERIOD / 2);
        let events: Vec<EngineEvent> = std::iter::from_fn(|| e.next_event()).collect();
        assert!(
            events.contains(&EngineEvent::Battery { node, vbat: 794 }),
            "{events:?}"
        );
        assert!(
            !events
                .iter()
                .any(|ev| matches!(ev, EngineEvent::Network(NetworkEvent::Variables { .. }))),
            "the engine's own read reached the front ends: {events:?}"
        );
    }
}
