//! Closed-loop control from ROS 1, per driven robot (the behaviour and state are the layer's:
//! [`nrt_interface::owner_switch`], [`nrt_interface::controllers`]): the communication switch
//! `/<ns>/switch_controller` (`thymio_rt_msgs/SwitchController`) with the latched `/<ns>/controller_owner`
//! (`std_msgs/String`), the odometry reset `/<ns>/thymio_driver/set_odometry` ([`nrt_interface::set_odometry`]),
//! and the RT controllers' endpoints `/<ns>/thymio_driver/controllers/<controller>/<endpoint>`
//! ([`super::controllers`]). Their parameters are served by dynamic_reconfigure through the layer.
//!
//! Registered on the registrar thread when a robot becomes driven (dropped, hence unregistered, when it goes).
//! Service handlers (tokio's blocking pool) and subscription tasks hand what they got to the NRT loop through an
//! inbox of their own ([`ControlCall`]) and ring its bell; a handler then waits, bounded, for the layer's answer.

use super::controllers::{self, ControllerEndpoints};
use super::lifecycle::{self, LifecycleCall};
use super::Ros1Error;
use handoff::{NodeId, RobotId};
use nrt_engine::engine::{Engine, EngineEvent};
use nrt_interface::controllers::Endpoint;
use nrt_interface::owner_switch::SWITCH_TIMEOUT;
use nrt_interface::set_odometry::{set_odometry, SetOdometryRequest, SET_ODOMETRY};
use nrt_interface::Interface;
use nrt_ros1_client::graph::{global, Graph};
use nrt_ros1_client::net::{Publisher, ServiceServer};
use nrt_ros1_client::ros1_msgs::std_msgs;
use nrt_ros1_client::ros1_msgs::thymio_rt_msgs::{
    SetOdometry, SetOdometryResponse, SwitchController, SwitchControllerResponse,
};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::time::{Duration, Instant};

pub use crate::control_inbox::{ControlCall, ControlInbox, ANSWER_MARGIN};

/// What a robot's interface is made from.
struct Plan {
    id: NodeId,
    robot: RobotId,
    base: String,
    namespace: String,
    endpoints: Vec<Endpoint>,
    inbox: ControlInbox,
    /// A managed robot: its lifecycle endpoints too.
    managed: bool,
}

struct Robot {
    robot: RobotId,
    /// Every global name registered for it (forgotten when it goes).
    names: Vec<String>,
    owner: Publisher<std_msgs::String>,
    /// What `controller_owner` last said.
    published: Option<String>,
    _switch: ServiceServer,
    _set_odometry: ServiceServer,
    controllers: ControllerEndpoints,
    lifecycle: Option<lifecycle::Endpoints>,
}

/// Registers a robot's interface (on the registrar thread).
fn robot_interface(g: &Graph, p: Plan) -> Result<(NodeId, Robot), Ros1Error> {
    let t = |leaf: &str| global(&[&p.base, &p.namespace, leaf]);
    let (id, inbox) = (p.id, p.inbox.clone());
    let switch = g.serve::<SwitchController>(&t("switch_controller"), move |req| {
        let (success, message) = inbox.ask(SWITCH_TIMEOUT, |reply| ControlCall::Switch {
            node: id,
            owner: req.owner,
            reply,
        })?;
        Ok(SwitchControllerResponse { success, message })
    })?;
    let inbox = p.inbox.clone();
    let set_odometry = g.serve::<SetOdometry>(&t(SET_ODOMETRY), move |req| {
        let request = SetOdometryRequest {
            x: req.x,
            y: req.y,
            z: req.z,
            roll: req.roll,
            pitch: req.pitch,
            yaw: req.yaw,
        };
        let (success, message) = inbox.ask(Duration::ZERO, |reply| ControlCall::SetOdometry {
            node: id,
            request,
            reply,
        })?;
        Ok(SetOdometryResponse { success, message })
    })?;
    let owner = g.advertise(&t("controller_owner"), 1, true)?;
    let controllers = controllers::register(g, &t, id, &p.endpoints, &p.inbox)?;
    let mut names = vec![
        t("switch_controller"),
        t("controller_owner"),
        t(SET_ODOMETRY),
    ];
    names.extend(p.endpoints.iter().map(|e| t(&e.leaf())));
    let lifecycle = if p.managed {
        names.extend(lifecycle::names(&t));
        Some(lifecycle::register(g, &t, id, &p.inbox)?)
    } else {
        None
    };
    Ok((
        id,
        Robot {
            robot: p.robot,
            names,
            owner,
            published: None,
            _switch: switch,
            _set_odometry: set_odometry,
            controllers,
            lifecycle,
        },
    ))
}

/// The switches and controllers' endpoints of the driven robots.
pub struct ControlInterface {
    graph: Graph,
    base: String,
    inbox: ControlInbox,
    calls: Receiver<ControlCall>,
    robots: BTreeMap<NodeId, Robot>,
    /// Robots whose interface is being registered.
    building: BTreeSet<NodeId>,
    built: Receiver<(NodeId, Robot)>,
    built_tx: Sender<(NodeId, Robot)>,
}

impl ControlInterface {
    /// No robot yet; the robots' names will be under namespace `base`; calls ring `graph`'s bell.
    pub fn new(graph: &Graph, base: &str) -> ControlInterface {
        let (tx, calls) = channel();
        let (built_tx, built) = channel();
        ControlInterface {
            inbox: ControlInbox {
                tx,
                bell: graph.bell.clone(),
            },
            graph: graph.clone(),
            base: base.to_owned(),
            calls,
            robots: BTreeMap::new(),
            building: BTreeSet::new(),
            built,
            built_tx,
        }
    }

    /// Has a newly driven robot's interface registered (with the layer's endpoints), drops a robot's that went.
    pub fn on_engine_event(&mut self, engine: &Engine, iface: &Interface, event: &EngineEvent) {
        match event {
            EngineEvent::RobotReady { node, robot }
                if engine.driver_params().enabled && !self.robots.contains_key(node) =>
            {
                self.add(engine, iface, *node, *robot)
            }
            EngineEvent::RobotRemoved { node, .. } => {
                // dropping its publishers and services unregisters them
                if let Some(r) = self.robots.remove(node) {
                    self.forget(&r.names);
                }
            }
            _ => {}
        }
    }

    fn add(&mut self, engine: &Engine, iface: &Interface, id: NodeId, robot: RobotId) {
        if !self.building.insert(id) {
            return;
        }
        let plan = Plan {
            id,
            robot,
            base: self.base.clone(),
            namespace: nrt_interface::frames::robot_namespace(engine, id),
            endpoints: iface.controllers.endpoints(id),
            inbox: self.inbox.clone(),
            managed: iface.lifecycle.state(id).is_some(),
        };
        let tx = self.built_tx.clone();
        self.graph.submit(move |g| match robot_interface(g, plan) {
            Ok(built) => {
                let _ = tx.send(built);
                g.bell.ring();
            }
            Err(e) => tracing::error!(
                "ROS 1: Thymio node {id}: no switch_controller or controller endpoints: {e}"
            ),
        });
    }

    fn forget(&self, names: &[String]) {
        for n in names {
            self.graph.forget(n);
        }
    }

    /// Takes the interfaces the registrar thread made into use (if their robot is still there), and hands the
    /// calls and messages that came from ROS 1 to the layer (never waits).
    pub fn serve(&mut self, engine: &mut Engine, iface: &mut Interface, now: Instant) {
        while let Ok((id, r)) = self.built.try_recv() {
            self.building.remove(&id);
            if engine.robots().of_node(id).map(|s| s.robot) != Some(r.robot) {
                self.forget(&r.names);
                continue;
            }
            self.robots.insert(id, r);
        }
        let mut params = None;
        while let Ok(call) = self.calls.try_recv() {
            match call {
                ControlCall::Switch { node, owner, reply } => {
                    let params = params.get_or_insert_with(|| engine.live_params());
                    iface
                        .switch
                        .request(params, node, &owner, Box::new(reply), now);
                }
                ControlCall::SetOdometry {
                    node,
                    request,
                    reply,
                } => {
                    // a handler that gave up is not an error of the driver
                    let _ = reply.send(set_odometry(engine, node, &request, &iface.reporter));
                }
                ControlCall::Lifecycle { node, call, reply } => {
                    let success = match call {
                        LifecycleCall::Change(id, label) => {
                            iface
                                .lifecycle
                                .change_state(engine, node, id, &label, &iface.reporter)
                        }
                        LifecycleCall::State => true,
                    };
                    let now = iface
                        .lifecycle
                        .state(node)
                        .unwrap_or(nrt_interface::lifecycle::State::Unconfigured);
                    // a handler that gave up is not an error of the driver
                    let _ = reply.send((success, now));
                }
                ControlCall::Message {
                    node,
                    endpoint,
                    value,
                } => {
                    // not finite: dropped, as on ROS 2
                    let _ = iface.controllers.receive(node, endpoint, value);
                }
                ControlCall::Service {
                    node,
                    endpoint,
                    request,
                    reply,
                } => iface
                    .controllers
                    .call(node, endpoint, request, Box::new(reply), now),
                ControlCall::TypedMessage {
                    node,
                    endpoint,
                    msg,
                } => {
                    if let Err(e) = iface.controllers.receive_message(node, endpoint, &msg) {
                        iface
                            .reporter
                            .warn(&format!("node {node}: controller message dropped: {e}"));
                    }
                }
                ControlCall::TypedService {
                    node,
                    endpoint,
                    request,
                    reply,
                } => iface
                    .controllers
                    .call_message(node, endpoint, &request, Box::new(reply), now),
            }
        }
    }

    /// Publishes the owners that changed and what the controllers published in this iteration.
    pub fn publish(&mut self, iface: &Interface) {
        for (id, r) in self.robots.iter_mut() {
            let Some(data) = iface.switch.owner_name(*id) else {
                continue;
            };
            if r.published.as_ref() == Some(&data) {
                continue;
            }
            // said once per change, as it is published once
            if let Err(e) = self
                .graph
                .publish(&r.owner, &std_msgs::String { data: data.clone() })
            {
                tracing::warn!("ROS 1: node {id}: cannot publish controller_owner: {e}");
            }
            r.published = Some(data);
        }
        for e in iface.lifecycle.events() {
            if let Some(l) = self.robots.get(&e.node).and_then(|r| r.lifecycle.as_ref()) {
                l.publish(&self.graph, e);
            }
        }
        for out in iface.controllers.outputs() {
            if let Some(r) = self.robots.get(&out.node) {
                r.controllers.publish(&self.graph, out);
            }
        }
    }
}
