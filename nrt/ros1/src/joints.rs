//! The joint space of each driven robot on ROS 1 ([`nrt_interface::joints`] describes it), on its driver node's
//! names as on ROS 2:
//! - `/<ns>/thymio_driver/joint_states` (`thymio_rt_msgs/JointState`), published by the odometry publisher thread
//!   ([`super::odom_pub`]) as it pops the RT thread's samples ([`JointTargets::publish`]); the subscribers are
//!   reported to the layer's rate rule ([`Ros1Joints::report_subscribers`]);
//! - `/<ns>/thymio_driver/joint_command` (`sensor_msgs/JointState`), taken on the socket task that received it
//!   straight to the RT set-point through the layer's [`JointCommandInput`] (validation, refusal texts, the bad
//!   commands' count shown in `/diagnostics`).
//!
//! A robot's endpoints are registered on the registrar thread ([`Graph::submit`]) and taken into use by
//! [`Ros1Joints::poll_built`].

use super::conv;
use super::Ros1Error;
use handoff::{monotonic_ns, JointStateSample, NodeId, OwnerNames, RobotId};
use nrt_engine::engine::{Engine, EngineEvent};
use nrt_interface::frames::{self, Frames};
use nrt_interface::joints::{
    joint_state, JointCommandInput, JointRates, JointStateOut, JOINT_COMMAND, JOINT_STATES,
};
use nrt_ros1_client::graph::{global, Graph, Task};
use nrt_ros1_client::net::Publisher;
use nrt_ros1_client::ros1_msgs::{sensor_msgs, thymio_rt_msgs};
use roslibrust::codegen::integral_types::Time;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex, MutexGuard};

/// Queue of `joint_states` toward each subscriber's socket (as `odom`'s).
const QUEUE: usize = 100;
/// Queue of the `joint_command` subscription (as `cmd_vel`'s).
const COMMAND_QUEUE: usize = 1;

/// The extended joint state message of `m`, stamped `stamp`, number `seq`.
pub fn message(m: JointStateOut, stamp: Time, seq: u32) -> thymio_rt_msgs::JointState {
    let mut header = conv::header(stamp, String::new());
    header.seq = seq;
    thymio_rt_msgs::JointState {
        header,
        name: m.name,
        position: m.position,
        velocity: m.velocity,
        velocity_reference: m.velocity_reference,
        target: m.target,
        pwm: m.pwm,
        fault: m.fault,
        owner: m.owner,
    }
}

/// What the odometry publisher thread needs to publish one robot's joint states.
pub struct JointTarget {
    /// Its Aseba node (a sample of another node in the same RT slot is not published).
    pub node: NodeId,
    /// `~/joint_states`.
    pub publisher: Publisher<thymio_rt_msgs::JointState>,
    /// The wheel joints' names (prefixed), left then right.
    pub names: [String; 2],
    /// The owner names (for `owner`).
    pub owners: OwnerNames,
    /// Sequence number of the next header.
    pub seq: u32,
}

/// The robots whose joint states are published, shared by the NRT loop and the odometry publisher thread.
#[derive(Clone, Default)]
pub struct JointTargets(Arc<Mutex<BTreeMap<RobotId, JointTarget>>>);

impl JointTargets {
    fn lock(&self) -> MutexGuard<'_, BTreeMap<RobotId, JointTarget>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Publishes sample `s` if its robot is a target (from the odometry publisher thread).
    pub fn publish(&self, s: &JointStateSample) {
        let mut table = self.lock();
        let Some(t) = table.get_mut(&s.robot).filter(|t| t.node == s.node) else {
            return;
        };
        let m = message(
            joint_state(s, &t.names, &t.owners),
            conv::stamp(s.t_ns),
            t.seq,
        );
        t.seq = t.seq.wrapping_add(1);
        if let Err(e) = t.publisher.publish(&m) {
            tracing::warn!("ROS 1: node {}: cannot publish joint_states: {e}", s.node);
        }
    }
}

/// A robot's joint-space endpoints, made by the registrar thread.
struct Built {
    id: NodeId,
    robot: RobotId,
    namespace: String,
    target: JointTarget,
    command: Task,
    bad: Arc<AtomicU64>,
}

struct Robot {
    robot: RobotId,
    namespace: String,
    /// Aborted on drop: no more joint commands from ROS 1.
    _command: Task,
    bad: Arc<AtomicU64>,
}

/// The joint space of every driven robot on ROS 1.
pub struct Ros1Joints {
    graph: Graph,
    base: String,
    targets: JointTargets,
    robots: BTreeMap<NodeId, Robot>,
    building: BTreeSet<NodeId>,
    built: Receiver<Built>,
    built_tx: Sender<Built>,
    owners: OwnerNames,
}

impl Ros1Joints {
    /// No robot yet; the robots' names are under `base` (the node's namespace).
    pub fn new(graph: &Graph, base: &str) -> Ros1Joints {
        let (built_tx, built) = channel();
        Ros1Joints {
            graph: graph.clone(),
            base: base.to_owned(),
            targets: JointTargets::default(),
            robots: BTreeMap::new(),
            building: BTreeSet::new(),
            built,
            built_tx,
            owners: OwnerNames::default(),
        }
    }

    /// The robots whose joint states the odometry publisher thread publishes.
    pub fn targets(&self) -> JointTargets {
        self.targets.clone()
    }

    /// The owner names of the switch (`ros`, `joint`, the RT controllers), for the robots to come.
    pub fn set_owner_names(&mut self, owners: OwnerNames) {
        self.owners = owners;
    }

    /// Makes a newly driven robot's endpoints, removes a robot's.
    pub fn on_engine_event(&mut self, engine: &Engine, event: &EngineEvent) {
        match event {
            EngineEvent::RobotReady { node, robot }
                if engine.driver_params().enabled && !self.robots.contains_key(node) =>
            {
                self.add(engine, *node, *robot)
            }
            EngineEvent::RobotRemoved { node, .. } => {
                if let Some(r) = self.robots.remove(node) {
                    self.targets.lock().remove(&r.robot);
                    self.forget(&r.namespace);
                }
            }
            _ => {}
        }
    }

    fn add(&mut self, engine: &Engine, id: NodeId, robot: RobotId) {
        if !self.building.insert(id) {
            return;
        }
        let params = engine.robot_params(id);
        let namespace = frames::robot_namespace(engine, id);
        let frames = Frames::of_robot(engine, id, &self.base);
        let mut input = JointCommandInput::new(
            engine.live_params(),
            robot,
            id,
            [
                [params.left_wheel_joint.clone(), frames.joints[0].clone()],
                [params.right_wheel_joint.clone(), frames.joints[1].clone()],
            ],
            Arc::new(AtomicU64::new(0)),
        );
        let base = self.base.clone();
        let owners = self.owners.clone();
        let tx = self.built_tx.clone();
        self.graph.submit(move |g| {
            let t = |leaf: &str| global(&[&base, &namespace, leaf]);
            let made = (|| -> Result<Built, Ros1Error> {
                let publisher = g.advertise(&t(JOINT_STATES), QUEUE, false)?;
                let mut sub =
                    g.subscribe::<sensor_msgs::JointState>(&t(JOINT_COMMAND), COMMAND_QUEUE)?;
                let bad = input.dropped.clone();
                let command = g.spawn(async move {
                    while let Some(m) = sub.next().await {
                        let taken = monotonic_ns();
                        match m {
                            Ok(m) => {
                                if let Some(line) = input.take(&m.name, &m.velocity, taken) {
                                    tracing::warn!("ROS 1: {}", nrt_ros1_client::net::clip(&line));
                                }
                            }
                            Err(e) => tracing::warn!(
                                "ROS 1: node {id}: joint_command: {}",
                                nrt_ros1_client::net::clip(&e.to_string())
                            ),
                        }
                    }
                });
                Ok(Built {
                    id,
                    robot,
                    namespace: namespace.clone(),
                    target: JointTarget {
                        node: id,
                        publisher,
                        names: frames.joints.clone(),
                        owners,
                        seq: 0,
                    },
                    command,
                    bad,
                })
            })();
            match made {
                Ok(b) => {
                    let _ = tx.send(b);
                    g.bell.ring();
                }
                Err(e) => tracing::error!("ROS 1: Thymio node {id}: no joint space: {e}"),
            }
        });
    }

    /// Takes the endpoints the registrar thread made into use (if their robot is still there).
    pub fn poll_built(&mut self, engine: &Engine) {
        while let Ok(b) = self.built.try_recv() {
            self.building.remove(&b.id);
            if engine.robots().of_node(b.id).map(|s| s.robot) != Some(b.robot) {
                self.forget(&b.namespace);
                continue;
            }
            self.targets.lock().insert(b.robot, b.target);
            self.robots.insert(
                b.id,
                Robot {
                    robot: b.robot,
                    namespace: b.namespace,
                    _command: b.command,
                    bad: b.bad,
                },
            );
        }
    }

    /// Reports the subscribers of each robot's joint states to the layer's rate rule, as `front_end`.
    pub fn report_subscribers(&self, front_end: &'static str, rates: &mut JointRates) {
        let table = self.targets.lock();
        for (id, r) in &self.robots {
            let n = table
                .get(&r.robot)
                .map_or(0, |t| t.publisher.subscriber_count());
            rates.report(front_end, *id, n);
        }
    }

    /// Bad joint commands of robot `id` dropped so far (`None`: not a robot of this interface).
    pub fn bad_commands(&self, id: NodeId) -> Option<u64> {
        self.robots.get(&id).map(|r| r.bad.load(Ordering::Relaxed))
    }

    /// Forgets the registrations of a robot in `namespace` (its endpoints were dropped).
    fn forget(&self, namespace: &str) {
        for leaf in [JOINT_STATES, JOINT_COMMAND] {
            self.graph.forget(&global(&[&self.base, namespace, leaf]));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use roslibrust::RosMessageType;

    /// sensor_msgs/JointState as Debian's ROS 1 package has it (`_md5sum` of
    /// /usr/lib/python3/dist-packages/sensor_msgs/msg/_JointState.py): what rospy's joint commands carry.
    #[test]
    fn joint_command_is_ros1s_sensor_msgs_joint_state() {
        assert_eq!(
            sensor_msgs::JointState::DESCRIPTION.md5sum,
            "3066dcd76a6cfaef579bd0f34173e9fd"
        );
    }

    #[test]
    fn the_message_carries_the_layers_content() {
        let s = JointStateSample {
            position: [1.0, 2.0],
            velocity: [0.5, 0.25],
            velocity_reference: [0.5, 0.3],
            target: [100, 120],
            pwm: Some([7, -7]),
            owner: handoff::OwnerId::JOINT,
            fault: JointStateSample::FAULT_REFLEX,
            ..Default::default()
        };
        let names = ["t1/l".to_owned(), "t1/r".to_owned()];
        let out = joint_state(&s, &names, &OwnerNames::default());
        let m = message(out, conv::now(), 9);
        assert_eq!(m.header.seq, 9);
        assert_eq!(m.name, names);
        assert_eq!((m.position, m.velocity), (vec![1.0, 2.0], vec![0.5, 0.25]));
        assert_eq!(m.velocity_reference, vec![0.5, 0.3]);
        assert_eq!((m.target, m.pwm), (vec![100, 120], vec![7, -7]));
        assert_eq!(m.fault, vec![2, 2]);
        assert_eq!(m.owner, "joint");
    }
}
