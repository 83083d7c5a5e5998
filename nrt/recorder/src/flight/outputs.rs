//! What the driver published, recorded as ROS 2 CDR messages with their schemas: from each odometry sample the RT
//! thread handed out, the robot's `odom`, its transforms on `/tf` and its wheels' `joint_states`, made by the
//! interface layer's functions ([`nrt_interface::odometry`]) as every front end makes them, with the robot's
//! frames and settings ([`RobotOutputs`]). Topics and frames are those of the ROS 2 front end in the front ends'
//! ROS namespace (`<ros namespace>/<robot namespace>/odom`, `.../joint_states`, `/tf`), as rclpy receives them.
//!
//! Every sample the RT thread handed out is recorded; with `odom_max_rate` set the front ends publish a subset.

use crate::ros2::{self, Ros2Type};
use crate::{ChannelKey, RecordError, Recording};
use handoff::{NodeId, OdomHandoff};
use nrt_engine::engine::Engine;
use nrt_interface::frames::{robot_namespace, Frames};
use nrt_interface::geometry::Stamp;
use nrt_interface::names::topic;
use nrt_interface::odometry::{self as odo, OdomSettings};
use std::collections::BTreeMap;
use std::time::Duration;

/// One driven robot's outputs: its node, topics, frames and odometry settings (from the engine, refreshed when
/// its live parameters change).
#[derive(Debug, Clone, PartialEq)]
pub struct RobotOutputs {
    /// Its Aseba node.
    pub node: NodeId,
    /// `/<ns>/odom`.
    pub odom_topic: String,
    /// `/<ns>/joint_states`.
    pub joints_topic: String,
    /// Its frames.
    pub frames: Frames,
    /// Covariances, `enable_odom_tf`, axis.
    pub settings: OdomSettings,
}

impl RobotOutputs {
    /// Robot `node`'s outputs now (`None`: not a driven robot), its front ends' nodes being in ROS namespace
    /// `ros_namespace` (`/` for none): the names the ROS 2 front end gives them (`nrt_ros2::thymio`).
    pub fn of(engine: &Engine, node: NodeId, ros_namespace: &str) -> Option<RobotOutputs> {
        let settings = OdomSettings::of(engine, node)?;
        let ns = robot_namespace(engine, node);
        let base = ros_namespace.trim_end_matches('/');
        let absolute = |leaf: &str| format!("{base}/{}", topic(&ns, leaf));
        Some(RobotOutputs {
            node,
            odom_topic: absolute("odom"),
            joints_topic: absolute("joint_states"),
            frames: Frames::of_robot(engine, node, ros_namespace),
            settings,
        })
    }
}

/// The outputs' channels (registered at a topic's first message) and the clock of their stamps.
#[derive(Debug)]
pub struct Outputs {
    channels: BTreeMap<String, ChannelKey>,
    /// CLOCK_REALTIME − CLOCK_MONOTONIC (ns) at the start.
    realtime_offset: i128,
    buf: Vec<u8>,
}

impl Outputs {
    /// No channel yet; stamps from RT times with `realtime_offset` (see [`super::rt_channels::realtime_offset_ns`]).
    pub fn new(realtime_offset: i128) -> Outputs {
        Outputs {
            channels: BTreeMap::new(),
            realtime_offset,
            buf: Vec::with_capacity(1024),
        }
    }

    /// The wall-clock stamp of an RT time (CLOCK_MONOTONIC ns), as the front ends stamp their messages.
    fn stamp(&self, t_ns: u64) -> Stamp {
        let ns = (t_ns as i128 + self.realtime_offset).clamp(0, u64::MAX as i128) as u64;
        Duration::from_nanos(ns)
    }

    fn channel(
        &mut self,
        rec: &mut Recording,
        topic: &str,
        t: &Ros2Type,
    ) -> Result<ChannelKey, RecordError> {
        if let Some(k) = self.channels.get(topic) {
            return Ok(*k);
        }
        let k = rec.channel(topic, &t.schema(), ros2::MESSAGE_ENCODING)?;
        self.channels.insert(topic.to_owned(), k);
        Ok(k)
    }

    /// Records what one odometry hand-off of robot `r` becomes: `odom`, `/tf`, `joint_states`, stamped with the
    /// sample's receive time (the front ends' stamp), logged at the hand-off.
    pub fn odometry(
        &mut self,
        rec: &mut Recording,
        r: &RobotOutputs,
        h: &OdomHandoff,
    ) -> Result<(), RecordError> {
        let s = &h.sample;
        let stamp = self.stamp(s.t_ns);
        let log = self.stamp(h.handed_ns).as_nanos() as u64;
        let publish = stamp.as_nanos() as u64;
        let k = self.channel(rec, &r.odom_topic, &ros2::ODOMETRY)?;
        self.buf.clear();
        ros2::odometry(
            &odo::odometry(s, stamp, &r.frames, &r.settings),
            &mut self.buf,
        );
        rec.write(k, log, publish, &self.buf)?;
        let k = self.channel(rec, "/tf", &ros2::TF_MESSAGE)?;
        self.buf.clear();
        ros2::tf_message(
            &odo::transforms(s, stamp, &r.frames, &r.settings),
            &mut self.buf,
        );
        rec.write(k, log, publish, &self.buf)?;
        let k = self.channel(rec, &r.joints_topic, &ros2::JOINT_STATE)?;
        self.buf.clear();
        ros2::joint_state(&odo::joint_states(s, stamp, &r.frames), &mut self.buf);
        rec.write(k, log, publish, &self.buf)
    }
}
