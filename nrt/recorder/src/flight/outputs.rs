//! What the driver published, recorded as ROS 2 CDR messages with their schemas: from each odometry sample the RT
//! thread handed out, the robot's `odom`, its transforms on `/tf` and its wheels' `joint_states`, made by the
//! interface layer's functions ([`nrt_interface::odometry`]) as every front end makes them, with the robot's
//! frames and settings ([`RobotOutputs`]). Topics and frames are those of the ROS 2 front end in the front ends'
//! ROS namespace (`<ros namespace>/<robot namespace>/odom`, `.../joint_states`, `/tf`), as rclpy receives them.
//!
//! Every sample the RT thread handed out is recorded; with `odom_max_rate` set the front ends publish a subset.

use crate::ros2::{self, Ros2Type};
use crate::{ChannelKey, RecordError, Recording};
use handoff::{NodeId, OdomHandoff, RobotId};
use nrt_engine::engine::Engine;
use nrt_engine::thymio::calibration::Calibration;
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
    /// `/<ns>/`: the start of its other topics (sensors, flags; see [`Self::topic`]).
    pub topic_prefix: String,
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
            topic_prefix: absolute(""),
            frames: Frames::of_robot(engine, node, ros_namespace),
            settings,
        })
    }

    /// The absolute name of its topic `leaf` (`proximity/left`, `obstacle_stop`).
    pub fn topic(&self, leaf: &str) -> String {
        format!("{}{leaf}", self.topic_prefix)
    }
}

/// A driven robot's outputs as the recording describes them (`/thymio_rt/robots`, CBOR; written when a robot starts
/// being driven and when its settings change): what a replay needs to publish what the front ends published.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RobotDescription {
    /// RT robot slot.
    pub robot: u8,
    /// Aseba node.
    pub node: u16,
    /// `/<ns>/odom`.
    pub odom_topic: String,
    /// `/<ns>/joint_states`.
    pub joints_topic: String,
    /// Frame prefix.
    pub prefix: String,
    /// `odom`, prefixed.
    pub odom_frame: String,
    /// `base_link`, prefixed.
    pub base_frame: String,
    /// Wheel joints, prefixed.
    pub joints: [String; 2],
    /// Wheel links, prefixed.
    pub wheels: [String; 2],
    /// `odom`'s pose covariance (36, row-major).
    pub pose_covariance: Vec<f64>,
    /// `odom`'s twist covariance.
    pub twist_covariance: Vec<f64>,
    /// `odom → base_link` on `/tf`.
    pub odom_tf: bool,
    /// Axis length [m].
    pub axis_length: f64,
}

impl RobotDescription {
    /// Of robot slot `robot`'s outputs.
    pub fn of(robot: RobotId, r: &RobotOutputs) -> RobotDescription {
        RobotDescription {
            robot: robot.0,
            node: r.node.0,
            odom_topic: r.odom_topic.clone(),
            joints_topic: r.joints_topic.clone(),
            prefix: r.frames.prefix.clone(),
            odom_frame: r.frames.odom.clone(),
            base_frame: r.frames.base.clone(),
            joints: r.frames.joints.clone(),
            wheels: r.frames.wheels.clone(),
            pose_covariance: r.settings.pose_covariance.to_vec(),
            twist_covariance: r.settings.twist_covariance.to_vec(),
            odom_tf: r.settings.odom_tf,
            axis_length: r.settings.calibration.axis_length,
        }
    }

    /// The frames and settings the front ends made this robot's messages with.
    pub fn frames_and_settings(&self) -> (Frames, OdomSettings) {
        let frames = Frames {
            prefix: self.prefix.clone(),
            odom: self.odom_frame.clone(),
            base: self.base_frame.clone(),
            joints: self.joints.clone(),
            wheels: self.wheels.clone(),
        };
        let cov = |v: &[f64]| {
            let mut c = [0.0; 36];
            for (a, b) in c.iter_mut().zip(v) {
                *a = *b;
            }
            c
        };
        let settings = OdomSettings {
            calibration: Calibration {
                axis_length: self.axis_length,
                ..Calibration::real()
            },
            pose_covariance: cov(&self.pose_covariance),
            twist_covariance: cov(&self.twist_covariance),
            odom_tf: self.odom_tf,
        };
        (frames, settings)
    }
}

/// The topic of the robots' descriptions.
pub const ROBOTS: &str = "/thymio_rt/robots";

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

    /// Records one message of type `t` on `topic`, logged at `log_ns` (CLOCK_MONOTONIC) and stamped `publish`,
    /// that `encode` appends (CDR) to the buffer it is given.
    pub fn message(
        &mut self,
        rec: &mut Recording,
        topic: &str,
        t: &Ros2Type,
        log_ns: u64,
        publish: Stamp,
        encode: impl FnOnce(&mut Vec<u8>),
    ) -> Result<(), RecordError> {
        let k = self.channel(rec, topic, t)?;
        self.buf.clear();
        encode(&mut self.buf);
        let log = self.stamp(log_ns).as_nanos() as u64;
        rec.write(k, log, publish.as_nanos() as u64, &self.buf)
    }

    /// Records the description of a robot's outputs (at `t_ns`, CLOCK_MONOTONIC).
    pub fn describe(
        &mut self,
        rec: &mut Recording,
        d: &RobotDescription,
        t_ns: u64,
    ) -> Result<(), RecordError> {
        let k = match self.channels.get(ROBOTS) {
            Some(k) => *k,
            None => {
                let schema = crate::SchemaDef {
                    name: "thymio_rt/RobotDescription".into(),
                    encoding: String::new(),
                    data: Vec::new(),
                };
                let k = rec.channel(ROBOTS, &schema, super::rt_channels::ENCODING)?;
                self.channels.insert(ROBOTS.to_owned(), k);
                k
            }
        };
        self.buf.clear();
        let _ = ciborium::into_writer(d, &mut self.buf);
        let t = self.stamp(t_ns).as_nanos() as u64;
        rec.write(k, t, t, &self.buf)
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
