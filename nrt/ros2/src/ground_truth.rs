//! The simulator's ground truth on ROS 2 (described in [`nrt_interface::ground_truth`]): the robots'
//! `sim/ground_truth` publishers (`nav_msgs/Odometry`), the sink the layer's ground-truth thread publishes to.

use super::thymio_endpoints::{reliable, topic};
use handoff::NodeId;
use nrt_interface::ground_truth::{GroundTruth, GroundTruthSink, TOPIC, WORLD_FRAME};
use r2r::nav_msgs::msg::Odometry;
use r2r::Publisher;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{SystemTime, UNIX_EPOCH};

struct Target {
    publisher: Publisher<Odometry>,
    child_frame: String,
}

/// The robots whose ground truth is published (made by the NRT loop as robots come and go).
#[derive(Clone, Default)]
pub struct GroundTruthTargets {
    table: Arc<Mutex<BTreeMap<NodeId, Target>>>,
}

impl GroundTruthTargets {
    fn lock(&self) -> MutexGuard<'_, BTreeMap<NodeId, Target>> {
        self.table.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Creates robot `node`'s `sim/ground_truth` publisher under `ns` (relative to `ros`'s
    /// namespace), child frame `child_frame`.
    pub fn add(
        &self,
        ros: &mut r2r::Node,
        node: NodeId,
        ns: &str,
        child_frame: &str,
    ) -> Result<(), r2r::Error> {
        let publisher = ros.create_publisher(&topic(ns, TOPIC), reliable(1))?;
        self.lock().insert(
            node,
            Target {
                publisher,
                child_frame: child_frame.to_owned(),
            },
        );
        Ok(())
    }

    /// Stops publishing robot `node`'s ground truth and destroys its publisher.
    pub fn remove(&self, ros: &mut r2r::Node, node: NodeId) {
        if let Some(t) = self.lock().remove(&node) {
            ros.destroy_publisher(t.publisher);
        }
    }
}

impl GroundTruthSink for GroundTruthTargets {
    fn name(&self) -> &'static str {
        "ROS 2"
    }

    fn heard(&self, out: &mut Vec<NodeId>) {
        out.extend(
            self.lock()
                .iter()
                .filter(|(_, t)| {
                    t.publisher
                        .get_inter_process_subscription_count()
                        .is_ok_and(|n| n > 0)
                })
                .map(|(n, _)| *n),
        );
    }

    fn publish(&self, node: NodeId, m: &GroundTruth, stamp: SystemTime) -> Result<(), String> {
        let table = self.lock();
        let Some(t) = table.get(&node) else {
            return Ok(());
        };
        let stamp = super::convert::time(stamp.duration_since(UNIX_EPOCH).unwrap_or_default());
        t.publisher
            .publish(&odometry(m, &stamp, &t.child_frame))
            .map_err(|e| e.to_string())
    }
}

/// The message of one robot's ground truth.
pub fn odometry(
    m: &GroundTruth,
    stamp: &r2r::builtin_interfaces::msg::Time,
    child_frame: &str,
) -> Odometry {
    let mut o = Odometry::default();
    o.header.stamp = stamp.clone();
    o.header.frame_id = WORLD_FRAME.to_owned();
    o.child_frame_id = child_frame.to_owned();
    let p = &mut o.pose.pose;
    [p.position.x, p.position.y, p.position.z] = m.position;
    let q = &mut p.orientation;
    [q.x, q.y, q.z, q.w] = m.orientation;
    let t = &mut o.twist.twist;
    [t.linear.x, t.linear.y, t.angular.z] = m.twist;
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use nrt_interface::ground_truth::{ground_truth, TruePose};

    #[test]
    fn the_message_carries_the_true_pose_in_the_world_frame() {
        let p = TruePose {
            node: NodeId(1),
            x: 0.5,
            y: -0.25,
            theta: std::f64::consts::PI,
        };
        let m = odometry(
            &ground_truth(&p, [0.1, 0.0, 0.2]),
            &Default::default(),
            "thymio_1/base_link",
        );
        assert_eq!(m.header.frame_id, "world");
        assert_eq!(m.child_frame_id, "thymio_1/base_link");
        assert_eq!(
            (m.pose.pose.position.x, m.pose.pose.position.y),
            (0.5, -0.25)
        );
        assert!((m.pose.pose.orientation.z - 1.0).abs() < 1e-12);
        assert_eq!(
            (m.twist.twist.linear.x, m.twist.twist.angular.z),
            (0.1, 0.2)
        );
    }
}
