//! The recorder's front end: which robots are driven (their topics, frames, odometry settings) and what the
//! driver publishes besides odometry, made as every front end makes it — the sensor topics and the stop flags
//! through the interface layer's routing ([`driver_events`], [`sensor_topics`]), `/diagnostics` from the engine's
//! and the layer's statuses — and queued for the recorder thread, which encodes and writes them.
//!
//! Every message is recorded, heard or not (the ROS front ends skip the sensor topics nobody subscribes to). The
//! queue is bounded: when the recorder thread falls behind, the newest messages are dropped and counted.

use super::outputs::RobotOutputs;
use super::Shared;
use crate::ros2::{self, DiagnosticStatus, Ros2Type};
use handoff::{NodeId, ProximitySample, RobotId};
use nrt_engine::engine::{Engine, EngineEvent};
use nrt_engine::thymio::events::RobotEvent;
use nrt_interface::driver_events::{self, DriverEvents};
use nrt_interface::frames::Frames;
use nrt_interface::front_end::{FrontEnd, Interface};
use nrt_interface::geometry::{self, Header, Stamp};
use nrt_interface::sensor_topics::{self, SensorMessage, SensorTopic};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How often the front end looks for changed odometry settings (live parameters).
const SETTINGS_PERIOD: Duration = Duration::from_millis(200);
/// How often `/diagnostics` is recorded (the ROS 2 bridge's default period).
const DIAGNOSTICS_PERIOD: Duration = Duration::from_secs(1);
/// How many messages wait for the recorder thread at most (it takes them every 10 ms).
pub(super) const PUBLISHED_MAX: usize = 16_384;
/// The topic of the diagnostics.
pub const DIAGNOSTICS: &str = "/diagnostics";

/// What a message carries, in the layer's neutral types.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Payload {
    /// A sensor topic's message (boxed: the others are small).
    Sensor(Box<SensorMessage>),
    /// `obstacle_stop` / `cliff_stop` / `emergency_stop`.
    Flag(bool),
    /// `/diagnostics`.
    Diagnostics(Vec<DiagnosticStatus>),
}

/// A message the driver published, for the recorder thread.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Published {
    /// Its absolute topic.
    pub topic: String,
    /// What it carries.
    pub payload: Payload,
    /// When it was made (CLOCK_MONOTONIC ns): the MCAP log time.
    pub log_ns: u64,
    /// Its stamp (header stamp, or the time made for types without one): the MCAP publish time.
    pub stamp: Stamp,
}

impl Published {
    /// Its ROS 2 type.
    pub fn ros2_type(&self) -> Ros2Type {
        match &self.payload {
            Payload::Sensor(m) => ros2::sensor_type(m.kind()),
            Payload::Flag(_) => ros2::BOOL,
            Payload::Diagnostics(_) => ros2::DIAGNOSTIC_ARRAY,
        }
    }

    /// Appends it as CDR to `out`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        match &self.payload {
            Payload::Sensor(m) => ros2::sensor(m, out),
            Payload::Flag(b) => ros2::boolean(*b, out),
            Payload::Diagnostics(s) => ros2::diagnostic_array(&Header::new(self.stamp, ""), s, out),
        }
    }
}

/// The recorder's view of the run (see the module documentation).
pub(super) struct RecorderFront {
    pub shared: Arc<Shared>,
    pub next_settings: Instant,
    pub next_diagnostics: Instant,
    /// The front ends' ROS namespace.
    pub ros_namespace: String,
    /// The prefix of the diagnostics' names (the ROS node's name).
    pub diagnostics_prefix: String,
}

impl RecorderFront {
    /// Queues messages for the recorder thread (dropped and counted beyond [`PUBLISHED_MAX`]).
    fn queue(&self, messages: impl IntoIterator<Item = Published>) {
        let mut q = self.shared.published();
        for m in messages {
            if q.len() >= PUBLISHED_MAX {
                self.shared
                    .published_dropped
                    .fetch_add(1, Ordering::Relaxed);
            } else {
                q.push_back(m);
            }
        }
    }

    /// What `make` gives for robot `id`'s outputs, if it is known.
    fn with_robot<T>(&self, id: NodeId, make: impl FnOnce(&RobotOutputs) -> T) -> Option<T> {
        let robots = self.shared.robots();
        robots.values().find(|r| r.node == id).map(make)
    }

    /// Queues the sensor messages `make` gives (with robot `id`'s frames) on its topics, stamped `stamp`.
    fn sensors(
        &self,
        id: NodeId,
        stamp: Stamp,
        make: impl FnOnce(&Frames, &mut dyn FnMut(SensorTopic, SensorMessage)),
    ) {
        let log_ns = handoff::monotonic_ns();
        let messages = self.with_robot(id, |r| {
            let mut out = Vec::new();
            make(&r.frames, &mut |t, m| {
                out.push(Published {
                    topic: r.topic(&t.leaf()),
                    payload: Payload::Sensor(Box::new(m)),
                    log_ns,
                    stamp,
                })
            });
            out
        });
        self.queue(messages.unwrap_or_default());
    }

    fn flag(&self, id: NodeId, leaf: &str, engaged: bool) {
        let Some(topic) = self.with_robot(id, |r| r.topic(leaf)) else {
            return;
        };
        self.queue([Published {
            topic,
            payload: Payload::Flag(engaged),
            log_ns: handoff::monotonic_ns(),
            stamp: geometry::now(),
        }]);
    }

    /// The statuses the layer and the engine give (the ROS transports add their own counters: ROS-side drops, hop
    /// times, rival drivers — not recorded).
    fn diagnostics(&self, engine: &Engine, iface: &Interface) -> Vec<DiagnosticStatus> {
        let robot_values = |id: NodeId| {
            let mut values = Vec::new();
            if let Some(slot) = engine.robots().of_node(id) {
                values.extend(iface.switch.diagnostics(slot.robot));
            }
            values.extend(iface.lifecycle.diagnostics(id));
            values
        };
        let prefix = &self.diagnostics_prefix;
        let mut status = nrt_engine::diagnostics::array_with(prefix, engine, &robot_values);
        status.extend(nrt_interface::controller_budget::statuses(
            prefix,
            &iface.switch,
            engine.rt_stats(),
        ));
        status
    }
}

impl DriverEvents for RecorderFront {
    fn has_robot(&self, id: NodeId) -> bool {
        self.with_robot(id, |_| ()).is_some()
    }

    fn add_robot(&mut self, engine: &Engine, id: NodeId, robot: RobotId) {
        if let Some(r) = RobotOutputs::of(engine, id, &self.ros_namespace) {
            self.shared.robots().insert(robot, r);
            self.shared.changed.store(true, Ordering::Relaxed);
        }
    }

    fn remove_robot(&mut self, id: NodeId) {
        self.shared.robots().retain(|_, r| r.node != id);
    }

    fn obstacle_stop(&mut self, id: NodeId, engaged: bool) {
        self.flag(id, "obstacle_stop", engaged)
    }

    fn cliff_stop(&mut self, id: NodeId, engaged: bool) {
        self.flag(id, "cliff_stop", engaged)
    }

    fn emergency_stop(&mut self, id: NodeId, engaged: bool) {
        self.flag(id, "emergency_stop", engaged)
    }

    fn picked_up(&mut self, id: NodeId, engaged: bool) {
        self.flag(id, "picked_up", engaged)
    }

    /// `battery_state` is not recorded.
    fn battery(
        &mut self,
        _engine: &Engine,
        _id: NodeId,
        _state: &nrt_interface::battery::BatteryState,
    ) {
    }

    fn proximity(&mut self, engine: &Engine, id: NodeId, sample: &ProximitySample) {
        let Some(slot) = engine.robots().of_node(id) else {
            return;
        };
        let stamp = geometry::stamp(sample.t_ns);
        let ranges = engine.robot_params(id).ranges;
        self.sensors(id, stamp, |frames, out| {
            sensor_topics::proximity_messages(
                &sample.values,
                &slot.calibration,
                ranges,
                stamp,
                frames,
                |_| true,
                out,
            )
        });
    }

    fn robot_event(
        &mut self,
        engine: &Engine,
        id: NodeId,
        _event: u16,
        decoded: RobotEvent,
        stamp: Stamp,
    ) {
        let params = engine.robot_params(id);
        let (threshold, ranges) = (params.ground.threshold, params.ranges);
        self.sensors(id, stamp, |frames, out| {
            sensor_topics::event_messages(decoded, threshold, ranges, stamp, frames, |_| true, out)
        });
    }
}

impl FrontEnd for RecorderFront {
    fn name(&self) -> &'static str {
        "flight recorder"
    }

    fn serve(&mut self, _: &mut Engine, _: &mut Interface, _: Instant) {}

    fn on_engine_event(&mut self, engine: &mut Engine, _: &mut Interface, event: &EngineEvent) {
        driver_events::on_engine_event(self, engine, event);
    }

    fn publish(&mut self, engine: &Engine, iface: &Interface, now: Instant) {
        if now >= self.next_diagnostics {
            self.next_diagnostics = now + DIAGNOSTICS_PERIOD;
            let status = self.diagnostics(engine, iface);
            self.queue([Published {
                topic: DIAGNOSTICS.to_owned(),
                payload: Payload::Diagnostics(status),
                log_ns: handoff::monotonic_ns(),
                stamp: geometry::now(),
            }]);
        }
        if now < self.next_settings {
            return;
        }
        self.next_settings = now + SETTINGS_PERIOD;
        let nodes: Vec<(RobotId, NodeId)> = self
            .shared
            .robots()
            .iter()
            .map(|(r, o)| (*r, o.node))
            .collect();
        for (robot, node) in nodes {
            if let Some(fresh) = RobotOutputs::of(engine, node, &self.ros_namespace) {
                let mut robots = self.shared.robots();
                if robots.get(&robot).is_some_and(|o| *o != fresh) {
                    robots.insert(robot, fresh);
                    self.shared.changed.store(true, Ordering::Relaxed);
                }
            }
        }
    }

    fn alive(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn front() -> RecorderFront {
        let now = Instant::now();
        RecorderFront {
            shared: Arc::new(Shared::default()),
            next_settings: now,
            next_diagnostics: now,
            ros_namespace: "/".into(),
            diagnostics_prefix: "asebaros".into(),
        }
    }

    fn flag(i: u64) -> Published {
        Published {
            topic: "/thymio/obstacle_stop".into(),
            payload: Payload::Flag(i.is_multiple_of(2)),
            log_ns: i,
            stamp: Duration::from_nanos(i),
        }
    }

    #[test]
    fn a_full_queue_drops_the_newest_and_counts_them() {
        let f = front();
        f.queue((0..PUBLISHED_MAX as u64 + 3).map(flag));
        assert_eq!(f.shared.published().len(), PUBLISHED_MAX);
        assert_eq!(f.shared.published_dropped.load(Ordering::Relaxed), 3);
        assert_eq!(
            f.shared.published().back(),
            Some(&flag(PUBLISHED_MAX as u64 - 1))
        );
    }

    #[test]
    fn each_payload_has_its_type_and_encoding() {
        let mut out = Vec::new();
        let p = flag(0);
        assert_eq!(p.ros2_type(), ros2::BOOL);
        p.encode(&mut out);
        assert_eq!(out, [0, 1, 0, 0, 1]);
        let d = Published {
            payload: Payload::Diagnostics(Vec::new()),
            ..flag(1)
        };
        assert_eq!(d.ros2_type(), ros2::DIAGNOSTIC_ARRAY);
        let s = Published {
            payload: Payload::Sensor(Box::new(SensorMessage::Int8(-2))),
            ..flag(1)
        };
        assert_eq!(s.ros2_type(), ros2::INT8);
        out.clear();
        s.encode(&mut out);
        assert_eq!(out, [0, 1, 0, 0, 0xfe]);
    }
}
