//! `thymio-rt replay --ros`: publishes what a replay of a flight recording hands out — each robot's `odom`, its
//! `/tf` transforms and its wheels' `joint_states`, on the topics and with the frames and covariances the recorded
//! run's front ends used (the recording describes them) — so that RViz, Foxglove or a controller under test see the
//! recorded run again. Messages are made by the interface layer's functions and this front end's conversions, as the
//! driver's odometry publisher makes them; stamped with the time they are published.

use super::thymio_conv as conv;
use handoff::OdomSample;
use nrt_interface::frames::Frames;
use nrt_interface::geometry::Stamp;
use nrt_interface::odometry::{self as odo, OdomSettings};
use r2r::nav_msgs::msg::Odometry;
use r2r::sensor_msgs::msg::JointState;
use r2r::tf2_msgs::msg::TFMessage;
use r2r::{Publisher, QosProfile};
use std::collections::BTreeMap;

/// The node's name.
pub const NODE_NAME: &str = "thymio_rt_replay";

/// One robot's publishers and what its messages are made with.
struct RobotPubs {
    odom_topic: String,
    joints_topic: String,
    odom: Publisher<Odometry>,
    joints: Publisher<JointState>,
    frames: Frames,
    settings: OdomSettings,
}

/// The replay's ROS 2 node and publishers.
pub struct ReplayPublisher {
    node: r2r::Node,
    tf: Publisher<TFMessage>,
    robots: BTreeMap<u8, RobotPubs>,
}

impl std::fmt::Debug for ReplayPublisher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReplayPublisher").finish_non_exhaustive()
    }
}

fn reliable() -> QosProfile {
    QosProfile::default().keep_last(100).reliable()
}

impl ReplayPublisher {
    /// The node `thymio_rt_replay` in the root namespace, with `/tf`.
    pub fn new() -> Result<ReplayPublisher, r2r::Error> {
        let ctx = r2r::Context::create()?;
        let mut node = r2r::Node::create(ctx, NODE_NAME, "/")?;
        let tf = node.create_publisher("/tf", reliable())?;
        Ok(ReplayPublisher {
            node,
            tf,
            robots: BTreeMap::new(),
        })
    }

    /// Robot slot `robot` publishes on `odom_topic` and `joints_topic` with `frames` and `settings` from now on
    /// (its publishers are made once per topic).
    pub fn describe(
        &mut self,
        robot: u8,
        odom_topic: &str,
        joints_topic: &str,
        frames: Frames,
        settings: OdomSettings,
    ) -> Result<(), r2r::Error> {
        if let Some(r) = self
            .robots
            .get_mut(&robot)
            .filter(|r| r.odom_topic == odom_topic && r.joints_topic == joints_topic)
        {
            r.frames = frames;
            r.settings = settings;
            return Ok(());
        }
        let odom = self.node.create_publisher(odom_topic, reliable())?;
        let joints = self.node.create_publisher(joints_topic, reliable())?;
        self.robots.insert(
            robot,
            RobotPubs {
                odom_topic: odom_topic.to_owned(),
                joints_topic: joints_topic.to_owned(),
                odom,
                joints,
                frames,
                settings,
            },
        );
        Ok(())
    }

    /// Whether something subscribes to a robot's `odom` (a viewer or a client is there), and, for `all`, to every
    /// topic the replay publishes (each robot's `odom` and `joint_states`, and `/tf`): a reliable publisher keeps
    /// what it sent for every subscription it has matched, so none of theirs misses a message.
    pub fn heard(&self, all: bool) -> bool {
        let has = |n: Result<usize, r2r::Error>| n.is_ok_and(|n| n > 0);
        if all {
            has(self.tf.get_inter_process_subscription_count())
                && self.robots.values().all(|r| {
                    has(r.odom.get_inter_process_subscription_count())
                        && has(r.joints.get_inter_process_subscription_count())
                })
        } else {
            self.robots
                .values()
                .any(|r| has(r.odom.get_inter_process_subscription_count()))
        }
    }

    /// Publishes what one odometry sample of robot slot `robot` became, stamped `stamp`; `Ok(false)` if the
    /// robot was not described.
    pub fn publish(&mut self, robot: u8, s: &OdomSample, stamp: Stamp) -> Result<bool, r2r::Error> {
        let Some(r) = self.robots.get(&robot) else {
            return Ok(false);
        };
        r.odom.publish(&conv::odometry(&odo::odometry(
            s,
            stamp,
            &r.frames,
            &r.settings,
        )))?;
        let transforms = odo::transforms(s, stamp, &r.frames, &r.settings)
            .iter()
            .map(conv::transform)
            .collect();
        self.tf.publish(&TFMessage { transforms })?;
        r.joints
            .publish(&conv::joint_states(&odo::joint_states(s, stamp, &r.frames)))?;
        Ok(true)
    }

    /// Serves the node's graph (discovery) for up to `timeout`.
    pub fn spin_once(&mut self, timeout: std::time::Duration) {
        self.node.spin_once(timeout);
    }
}
