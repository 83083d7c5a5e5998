//! The simulator's ground truth on ROS 1 ([`nrt_interface::ground_truth`] describes it): each driven robot's
//! `/<ns>/sim/ground_truth` (`nav_msgs/Odometry`, frame `world`, child frame the robot's base frame), the sink the
//! layer's ground-truth thread publishes to ([`GroundTruthSink`]). Made only when the process runs a simulator
//! ([`Ros1GroundTruth`] exists then); the publishers are advertised on the registrar thread.

use super::conv;
use handoff::NodeId;
use nrt_engine::engine::{Engine, EngineEvent};
use nrt_interface::frames::{self, Frames};
use nrt_interface::ground_truth::{GroundTruth, GroundTruthSink, TOPIC, WORLD_FRAME};
use nrt_ros1_client::graph::{global, Graph};
use nrt_ros1_client::net::Publisher;
use nrt_ros1_client::ros1_msgs::{geometry_msgs as gm, nav_msgs};
use roslibrust::codegen::integral_types::Time;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{SystemTime, UNIX_EPOCH};

struct Target {
    publisher: Publisher<nav_msgs::Odometry>,
    child_frame: String,
    namespace: String,
    seq: u32,
}

/// The message of one robot's ground truth.
pub fn odometry(m: &GroundTruth, stamp: Time, child_frame: &str, seq: u32) -> nav_msgs::Odometry {
    let mut header = conv::header(stamp, WORLD_FRAME.to_owned());
    header.seq = seq;
    let [x, y, z] = m.position;
    let [qx, qy, qz, qw] = m.orientation;
    let [vx, vy, wz] = m.twist;
    nav_msgs::Odometry {
        header,
        child_frame_id: child_frame.to_owned(),
        pose: gm::PoseWithCovariance {
            pose: gm::Pose {
                position: gm::Point { x, y, z },
                orientation: gm::Quaternion {
                    x: qx,
                    y: qy,
                    z: qz,
                    w: qw,
                },
            },
            covariance: [0.0; 36],
        },
        twist: gm::TwistWithCovariance {
            twist: gm::Twist {
                linear: gm::Vector3 {
                    x: vx,
                    y: vy,
                    z: 0.0,
                },
                angular: gm::Vector3 {
                    x: 0.0,
                    y: 0.0,
                    z: wz,
                },
            },
            covariance: [0.0; 36],
        },
    }
}

/// The robots' `sim/ground_truth` publishers (see the module documentation).
#[derive(Clone)]
pub struct Ros1GroundTruth {
    graph: Graph,
    base: String,
    table: Arc<Mutex<BTreeMap<NodeId, Target>>>,
}

impl Ros1GroundTruth {
    /// No robot yet; the robots' names are under `base` (the node's namespace).
    pub fn new(graph: &Graph, base: &str) -> Ros1GroundTruth {
        Ros1GroundTruth {
            graph: graph.clone(),
            base: base.to_owned(),
            table: Arc::default(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, BTreeMap<NodeId, Target>> {
        self.table.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Advertises a newly driven robot's topic (on the registrar thread), removes a robot's.
    pub fn on_engine_event(&self, engine: &Engine, event: &EngineEvent) {
        match event {
            EngineEvent::RobotReady { node, .. } if engine.driver_params().enabled => {
                let namespace = frames::robot_namespace(engine, *node);
                let frames = Frames::of_robot(engine, *node, &self.base);
                let topic = global(&[&self.base, &namespace, TOPIC]);
                let (id, me) = (*node, self.clone());
                self.graph
                    .submit(move |g| match g.advertise(&topic, 1, false) {
                        Ok(publisher) => {
                            me.lock().insert(
                                id,
                                Target {
                                    publisher,
                                    child_frame: frames.base,
                                    namespace,
                                    seq: 0,
                                },
                            );
                        }
                        Err(e) => tracing::warn!(
                            "ROS 1: node {id}: no {TOPIC}: {}",
                            nrt_ros1_client::net::clip(&e.to_string())
                        ),
                    });
            }
            EngineEvent::RobotRemoved { node, .. } => {
                // on the registrar thread too: after a pending advertisement of the same robot
                let (id, me) = (*node, self.clone());
                self.graph.submit(move |g| {
                    if let Some(t) = me.lock().remove(&id) {
                        g.forget(&global(&[&me.base, &t.namespace, TOPIC]));
                    }
                });
            }
            _ => {}
        }
    }
}

impl GroundTruthSink for Ros1GroundTruth {
    fn name(&self) -> &'static str {
        "ROS 1"
    }

    fn heard(&self, out: &mut Vec<NodeId>) {
        out.extend(
            self.lock()
                .iter()
                .filter(|(_, t)| t.publisher.subscriber_count() > 0)
                .map(|(n, _)| *n),
        );
    }

    fn publish(&self, node: NodeId, m: &GroundTruth, stamp: SystemTime) -> Result<(), String> {
        let mut table = self.lock();
        let Some(t) = table.get_mut(&node) else {
            return Ok(());
        };
        let stamp = conv::time(stamp.duration_since(UNIX_EPOCH).unwrap_or_default());
        let msg = odometry(m, stamp, &t.child_frame, t.seq);
        t.seq = t.seq.wrapping_add(1);
        t.publisher.publish(&msg).map_err(|e| e.to_string())
    }
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
            conv::now(),
            "thymio_1/base_link",
            3,
        );
        assert_eq!((m.header.frame_id.as_str(), m.header.seq), ("world", 3));
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
