//! Closed-loop control from ROS (issue 17), per driven robot: the communication switch
//! ([`super::owner_switch`]), the odometry reset ([`super::set_odometry`]), the RT controllers' endpoints
//! ([`super::controllers`]) — their
//! behaviour and state are the layer's ([`nrt_interface::owner_switch`], [`nrt_interface::controllers`],
//! in the [`Interface`]) — and the joint-space interface ([`super::joints`]). Made when a robot
//! becomes driven (after its Thymio interface, whose frames it uses), removed with it; served by
//! the NRT loop without waiting; the owner and the dropped counts go to `/diagnostics`.

use super::controllers::Controllers;
use super::diagnostics::{kv, KeyValue};
use super::joints::{self, JointTarget};
use super::lifecycle::LifecycleEndpoints;
use super::odom_pub::OdomTargets;
use super::owner_switch::Switches;
use super::report::Reporter;
use super::set_odometry::OdometryResets;
use super::spinner::{NodeAccess, SharedNode, TaskId};
use super::thymio_conv::Frames;
use super::thymio_endpoints::{reliable, topic, DEPTH};
use handoff::{NodeId, NrtLiveParams, RobotId};
use nrt_engine::engine::{Engine, EngineEvent};
use nrt_interface::joints::{
    JointCommandInput, JointRates, BAD_JOINT, JOINT_COMMAND, JOINT_STATES,
};
use nrt_interface::owner_switch::Switch;
use nrt_interface::Interface;
use r2r::thymio_rt_msgs::msg::JointState;
use r2r::Publisher;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

struct JointRobot {
    robot: RobotId,
    /// For the subscriber count (the odometry publisher thread publishes on a clone).
    publisher: Publisher<JointState>,
    command: TaskId,
    bad: Arc<AtomicU64>,
}

/// The control interface of every driven robot.
pub struct Control {
    /// The switches' endpoints.
    pub switches: Switches,
    /// The RT controllers' endpoints.
    pub controllers: Controllers,
    /// The odometry resets (`~/set_odometry`).
    pub resets: OdometryResets,
    /// The managed robots' lifecycle endpoints (`managed: true`).
    pub lifecycle: LifecycleEndpoints,
    joints: BTreeMap<NodeId, JointRobot>,
    hot: Arc<SharedNode>,
    odom: OdomTargets,
    params: NrtLiveParams,
    reporter: Reporter,
}

impl Control {
    /// Serves the robots to come; `joint_command` subscriptions go on `hot`, joint states to
    /// the odometry publisher thread through `odom`.
    pub fn new(
        engine: &Engine,
        hot: Arc<SharedNode>,
        odom: OdomTargets,
        reporter: Reporter,
    ) -> Control {
        let params = engine.live_params();
        Control {
            switches: Switches::new(reporter.clone()),
            controllers: Controllers::new(reporter.clone()),
            resets: OdometryResets::new(reporter.clone()),
            lifecycle: LifecycleEndpoints::default(),
            joints: BTreeMap::new(),
            hot,
            odom,
            params,
            reporter,
        }
    }

    /// Adds a newly driven robot's interface (given its `frames`, with the layer's endpoints of
    /// `iface`) and removes a robot's.
    pub fn on_engine_event(
        &mut self,
        node: &mut NodeAccess,
        engine: &Engine,
        iface: &Interface,
        event: &EngineEvent,
        frames: Option<&Frames>,
    ) {
        match event {
            EngineEvent::RobotReady { node: id, robot } => {
                let Some(frames) = frames else {
                    return;
                };
                if let Err(e) = self.add(node.get(), engine, iface, *id, *robot, frames) {
                    self.reporter.error(&format!(
                        "Thymio node {id}: no switch_controller, controller endpoints or joint \
                         space: {e}"
                    ));
                }
            }
            EngineEvent::RobotRemoved { node: id, .. } => self.remove(node.get(), *id),
            _ => {}
        }
    }

    fn add(
        &mut self,
        node: &mut r2r::Node,
        engine: &Engine,
        iface: &Interface,
        id: NodeId,
        robot: RobotId,
        frames: &Frames,
    ) -> Result<(), r2r::Error> {
        let ns = nrt_interface::frames::robot_namespace(engine, id);
        self.switches.add(node, id, &ns)?;
        self.resets.add(node, id, &ns)?;
        if iface.lifecycle.state(id).is_some() {
            self.lifecycle.add(node, id, &ns)?;
        }
        self.controllers
            .add(node, id, &ns, &iface.controllers.endpoints(id))?;
        let params = engine.robot_params(id);
        let publisher: Publisher<JointState> =
            node.create_publisher(&topic(&ns, JOINT_STATES), reliable(DEPTH))?;
        self.odom.insert_joints(
            robot,
            JointTarget {
                node: id,
                publisher: publisher.clone(),
                names: frames.joints.clone(),
                owners: iface.switch.names().clone(),
            },
        );
        let bad = Arc::new(AtomicU64::new(0));
        let sub = {
            let mut hot = self.hot.access();
            joints::subscribe(hot.get(), &topic(&ns, JOINT_COMMAND))?
        };
        let task = joints::joint_command_task(
            sub,
            JointCommandInput::new(
                self.params.clone(),
                robot,
                id,
                [
                    [params.left_wheel_joint.clone(), frames.joints[0].clone()],
                    [params.right_wheel_joint.clone(), frames.joints[1].clone()],
                ],
                bad.clone(),
            ),
            self.reporter.clone(),
        );
        let command = self.hot.add_task(task);
        self.joints.insert(
            id,
            JointRobot {
                robot,
                publisher,
                command,
                bad,
            },
        );
        Ok(())
    }

    fn remove(&mut self, node: &mut r2r::Node, id: NodeId) {
        self.switches.remove(node, id);
        self.resets.remove(id);
        self.lifecycle.remove(node, id);
        self.controllers.remove(node, id);
        if let Some(j) = self.joints.remove(&id) {
            self.hot.remove_task(j.command);
            if let Some(t) = self.odom.remove_joints(j.robot) {
                node.destroy_publisher(t.publisher);
            }
            node.destroy_publisher(j.publisher);
        }
    }

    /// Hands the switch calls, the odometry resets and the controllers' messages and calls to the layer (never
    /// waits). Only drains the bridge node's streams: worth calling only after a wait of its spinner.
    pub fn serve(&mut self, engine: &mut Engine, iface: &mut Interface, now: Instant) {
        self.switches.serve(engine, &mut iface.switch, now);
        self.resets.serve(engine);
        self.lifecycle
            .serve(engine, &mut iface.lifecycle, &iface.reporter);
        self.controllers.serve(&mut iface.controllers, now);
    }

    /// Publishes the owners that changed and what the controllers published.
    pub fn publish(&mut self, iface: &Interface) {
        self.switches.publish(&iface.switch);
        self.controllers.publish(&iface.controllers);
        self.lifecycle.publish(&iface.lifecycle);
    }

    /// Reports the subscribers of each robot's joint states to the layer's rate rule.
    pub fn report_subscribers(&self, front_end: &'static str, rates: &mut JointRates) {
        for (id, j) in &self.joints {
            let n = j
                .publisher
                .get_inter_process_subscription_count()
                .unwrap_or(0);
            rates.report(front_end, *id, n);
        }
    }

    /// What `/diagnostics` shows of robot `id`: owner (the layer's `switch`), commands dropped.
    pub fn diagnostics(
        &self,
        switch: &Switch,
        id: NodeId,
        robot: Option<RobotId>,
    ) -> Vec<KeyValue> {
        let mut out = Vec::new();
        if let Some(robot) = robot {
            out.extend(switch.diagnostics(robot));
        }
        if let Some(j) = self.joints.get(&id) {
            out.push(kv(BAD_JOINT, j.bad.load(Ordering::Relaxed)));
        }
        out
    }
}
