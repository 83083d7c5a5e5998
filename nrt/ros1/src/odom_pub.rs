//! The ROS 1 side of the odometry publisher thread ([`nrt_interface::odom_thread`], written once for both front
//! ends: the ring, the burst order, the subscriber demand, `odom_max_rate`, the hop timers and the targets are the
//! layer's). This is its sink: the ROS 1 messages of `odom`, `/tf` (odom → base_link and the two wheels),
//! `joint_states` and `thymio_driver/cmd_vel_out` (with their header sequence numbers), serialised and queued for
//! their socket tasks, so publishing never waits for a subscriber; the extended joint states of the same ring go to
//! `thymio_driver/joint_states` ([`super::joints`]).

use super::conv;
use super::joints::JointTargets;
use handoff::{
    CompanionPlacement, JointStateSample, NodeId, NrtOdomOut, OdomHandoff, OdomSample, RobotId,
};
use nrt_interface::hop_times::NrtHopTimers;
use nrt_interface::odom_thread::{self, OdomSink, OdomThread, Topic};
use nrt_interface::{geometry, odometry};
use nrt_ros1_client::graph::{Graph, GraphError};
use nrt_ros1_client::net::Publisher;
use nrt_ros1_client::ros1_msgs::{
    geometry_msgs::TwistStamped, nav_msgs::Odometry, sensor_msgs::JointState, tf2_msgs::TFMessage,
};
use std::sync::Arc;

/// The publishers of one robot.
pub struct Ros1Out {
    /// `odom`.
    pub odom: Publisher<Odometry>,
    /// `joint_states`.
    pub joints: Publisher<JointState>,
    /// `~/cmd_vel_out` (the limited twist of every hand-off, whatever `odom_max_rate`).
    pub cmd_vel_out: Publisher<TwistStamped>,
    /// Sequence number of the next `odom` header (ROS 1 publishers count their messages).
    pub seq: u32,
    /// Sequence number of the next `~/cmd_vel_out` header.
    pub cmd_vel_out_seq: u32,
}

/// What the thread needs of one robot.
pub type OdomRobot = odom_thread::OdomRobot<Ros1Out>;

/// The robots whose odometry is published, shared by the NRT loop and the thread (with `/tf`).
#[derive(Clone)]
pub struct OdomTargets {
    robots: odom_thread::OdomTargets<Ros1Out>,
    tf: Arc<Publisher<TFMessage>>,
}

impl OdomTargets {
    /// No robot yet; `/tf` goes to `tf`.
    pub fn new(tf: Publisher<TFMessage>) -> OdomTargets {
        OdomTargets {
            robots: odom_thread::OdomTargets::default(),
            tf: Arc::new(tf),
        }
    }
}

impl std::ops::Deref for OdomTargets {
    type Target = odom_thread::OdomTargets<Ros1Out>;

    fn deref(&self) -> &Self::Target {
        &self.robots
    }
}

/// Starts the threads, one on each ring of `outs` (a group of robots each): odometry of `targets`, joint states of
/// `joints`, hops timed in `timers`; the threads run at `placement` ([`nrt_interface::companion`]).
pub fn start(
    outs: Vec<NrtOdomOut>,
    targets: OdomTargets,
    joints: JointTargets,
    graph: Graph,
    timers: NrtHopTimers,
    placement: CompanionPlacement,
) -> std::io::Result<OdomThread> {
    let sink = Sink {
        tf: targets.tf.clone(),
        graph,
        joints,
    };
    OdomThread::start(
        "nrt-ros1-odom",
        outs,
        targets.robots,
        timers,
        placement,
        move |_group| {
            let sink = sink.clone();
            Ok(move || sink)
        },
    )
}

#[derive(Clone)]
struct Sink {
    tf: Arc<Publisher<TFMessage>>,
    graph: Graph,
    joints: JointTargets,
}

/// What is left to publish of a sample whose `odom` went out.
struct Rest {
    tf: TFMessage,
    joints: JointState,
}

impl OdomSink for Sink {
    type Out = Ros1Out;
    type Rest = Rest;
    type Error = GraphError;

    fn count_tf(&self) -> Option<usize> {
        Some(self.tf.subscriber_count())
    }

    fn count(&self, out: &Ros1Out, topic: Topic) -> Option<usize> {
        Some(match topic {
            Topic::Odom => out.odom.subscriber_count(),
            Topic::JointStates => out.joints.subscriber_count(),
            Topic::CmdVelOut => out.cmd_vel_out.subscriber_count(),
        })
    }

    fn publish_cmd_vel_out(
        &mut self,
        _: RobotId,
        r: &mut OdomRobot,
        h: &OdomHandoff,
    ) -> Result<(), GraphError> {
        let stamp = geometry::stamp(h.handed_ns);
        let mut m = conv::twist_stamped(&odometry::cmd_vel_out(&h.commanded, stamp, &r.frames));
        m.header.seq = r.out.cmd_vel_out_seq;
        r.out.cmd_vel_out_seq = r.out.cmd_vel_out_seq.wrapping_add(1);
        self.graph.publish(&r.out.cmd_vel_out, &m)
    }

    fn publish_odom(
        &mut self,
        _: RobotId,
        r: &mut OdomRobot,
        s: &OdomSample,
    ) -> Result<(), GraphError> {
        let stamp = geometry::stamp(s.t_ns);
        let mut odom = conv::odometry(&odometry::odometry(s, stamp, &r.frames, &r.settings));
        odom.header.seq = r.out.seq;
        r.out.seq = r.out.seq.wrapping_add(1);
        self.graph.publish(&r.out.odom, &odom)
    }

    fn rest(&mut self, _: RobotId, r: &OdomRobot, s: &OdomSample) -> Rest {
        let stamp = geometry::stamp(s.t_ns);
        let mut transforms = odometry::transforms(s, stamp, &r.frames, &r.settings);
        if !r.wheel_tf {
            transforms.retain(|t| !r.frames.wheels.contains(&t.child_frame_id));
        }
        Rest {
            tf: TFMessage {
                transforms: transforms.iter().map(conv::transform).collect(),
            },
            joints: conv::joint_states(&odometry::joint_states(s, stamp, &r.frames)),
        }
    }

    fn publish_tf(&mut self, _: RobotId, rest: &mut Rest) -> Result<(), GraphError> {
        self.graph.publish(&self.tf, &rest.tf)
    }

    fn publish_joint_states(
        &mut self,
        _: RobotId,
        r: &mut OdomRobot,
        rest: &mut Rest,
    ) -> Result<(), GraphError> {
        self.graph.publish(&r.out.joints, &rest.joints)
    }

    fn publish_joint(&mut self, s: &JointStateSample) {
        self.joints.publish(s);
    }

    fn warn(&self, node: NodeId, what: &str, e: &GraphError) {
        tracing::warn!("ROS 1: node {node}: cannot publish {what}: {e}");
    }
}
