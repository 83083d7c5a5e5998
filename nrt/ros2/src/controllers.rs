//! ROS from RT on ROS 2: the RT controllers' endpoints (the behaviour is the layer's,
//! [`nrt_interface::controllers`]) made for each driven robot under its driver node's name,
//! `/<ns>/thymio_driver/controllers/<controller>/<endpoint>`, with the ROS 2 types of the table in
//! [`handoff::endpoints`] (`Bool` → `std_msgs/Bool`, `Float64` → `std_msgs/Float64`,
//! `Pose2D` → `geometry_msgs/Pose2D`, `Twist` → `geometry_msgs/Twist`; a service of `Empty` is a
//! `std_srvs/Trigger`, of `Bool` a `std_srvs/SetBool`, of `Pose2D` a
//! `thymio_rt_msgs/SetPose2D`). Their parameters are `controllers.<controller>.<param>` on the
//! robot's `thymio_driver` node ([`super::driver_node`]).
//!
//! An endpoint of any ROS type ([`RosKind::Message`]) goes through [`super::msg_endpoints`].
//!
//! The entities are on the bridge node; the NRT loop serves them without waiting: messages and
//! calls are handed to the layer ([`Controllers::serve`], calls held: r2r answers a request
//! whenever it is given back), and what RT published in this iteration is published
//! ([`Controllers::publish`]).

use super::msg_endpoints::{self as msg, JsonService, MsgSub};
use super::report::Reporter;
use super::thymio_endpoints::{reliable, topic};
use super::{drain, Srv, Sub};
use handoff::{NodeId, Pose2, RosKind, RosValue, Twist2};
use nrt_interface::controllers::{Controllers as Layer, Endpoint, EndpointId, Payload, Role};
use nrt_interface::reply::held;
use r2r::geometry_msgs::msg::{Pose2D, Twist};
use r2r::std_msgs::msg::{Bool, Float64};
use r2r::std_srvs::srv::{SetBool, Trigger};
use r2r::thymio_rt_msgs::srv::SetPose2D;
use r2r::{Publisher, QosProfile};
use std::collections::BTreeMap;
use std::time::Instant;

/// Depth of the controllers' topics.
const DEPTH: usize = 10;

enum RosPub {
    Bool(Publisher<Bool>),
    Float64(Publisher<Float64>),
    Pose2D(Publisher<Pose2D>),
    Twist(Publisher<Twist>),
    Message(r2r::PublisherUntyped),
}

enum RosSub {
    Bool(Sub<Bool>),
    Float64(Sub<Float64>),
    Pose2D(Sub<Pose2D>),
    Twist(Sub<Twist>),
    Message(MsgSub),
}

enum RosSrv {
    Trigger(Srv<Trigger::Service>),
    SetBool(Srv<SetBool::Service>),
    Pose(Srv<SetPose2D::Service>),
    Message(Box<dyn JsonService>),
}

/// The ROS side of one endpoint.
enum Served {
    Publisher(RosPub),
    Subscriber(RosSub),
    Service(RosSrv),
}

/// The ROS 2 entities of the driven robots' controller endpoints.
pub struct Controllers {
    robots: BTreeMap<NodeId, Vec<(Endpoint, Served)>>,
    reporter: Reporter,
}

impl Controllers {
    /// No robot yet.
    pub fn new(reporter: Reporter) -> Controllers {
        Controllers {
            robots: BTreeMap::new(),
            reporter,
        }
    }

    /// Creates robot `id`'s `endpoints` (the layer's) under `ns` (relative to `node`'s
    /// namespace).
    pub fn add(
        &mut self,
        node: &mut r2r::Node,
        id: NodeId,
        ns: &str,
        endpoints: &[Endpoint],
    ) -> Result<(), r2r::Error> {
        let mut served = Vec::new();
        for e in endpoints {
            served.push((*e, create(node, &topic(ns, &e.leaf()), e)?));
        }
        self.robots.insert(id, served);
        Ok(())
    }

    /// Destroys robot `id`'s endpoints (the layer refused its held calls).
    pub fn remove(&mut self, node: &mut r2r::Node, id: NodeId) {
        let Some(served) = self.robots.remove(&id) else {
            return;
        };
        for (_, s) in served {
            if let Served::Publisher(p) = s {
                match p {
                    RosPub::Bool(p) => node.destroy_publisher(p),
                    RosPub::Float64(p) => node.destroy_publisher(p),
                    RosPub::Pose2D(p) => node.destroy_publisher(p),
                    RosPub::Twist(p) => node.destroy_publisher(p),
                    RosPub::Message(p) => node.destroy_publisher_untyped(p),
                }
            }
        }
    }

    /// Hands what ROS sent (messages, calls) to the layer. Never waits.
    pub fn serve(&mut self, layer: &mut Layer, now: Instant) {
        for (id, served) in self.robots.iter_mut() {
            for (e, s) in served.iter_mut() {
                match s {
                    Served::Subscriber(RosSub::Message(sub)) => {
                        for m in drain(sub) {
                            let r = m.map_err(|e| e.to_string()).and_then(|m| {
                                layer
                                    .receive_message(*id, e.id, &m)
                                    .map_err(|e| e.to_string())
                            });
                            if let Err(err) = r {
                                self.reporter.warn(&format!(
                                    "node {id}: controllers/{}/{}: message dropped: {err}",
                                    e.controller, e.name
                                ));
                            }
                        }
                    }
                    Served::Subscriber(sub) => {
                        for v in received(sub) {
                            // not finite: dropped, as ROS 2 always did
                            let _ = layer.receive(*id, e.id, v);
                        }
                    }
                    Served::Service(srv) => forward_calls(layer, srv, *id, e.id, now),
                    Served::Publisher(_) => {}
                }
            }
        }
    }

    /// Publishes what the controllers published in this iteration.
    pub fn publish(&self, layer: &Layer) {
        for out in layer.outputs() {
            let Some(served) = self.robots.get(&out.node) else {
                continue;
            };
            let Some((e, Served::Publisher(p))) = served.iter().find(|(e, _)| e.id == out.endpoint)
            else {
                continue;
            };
            let r = match (&out.value, p) {
                (Payload::Message(m), RosPub::Message(p)) => p.publish(m.clone()),
                (Payload::Value(v), p) => match (*v, p) {
                    (RosValue::Bool(b), RosPub::Bool(p)) => p.publish(&Bool { data: b }),
                    (RosValue::Float64(x), RosPub::Float64(p)) => p.publish(&Float64 { data: x }),
                    (RosValue::Pose2D(q), RosPub::Pose2D(p)) => p.publish(&pose_msg(q)),
                    (RosValue::Twist(t), RosPub::Twist(p)) => p.publish(&twist(t)),
                    _ => Ok(()),
                },
                _ => Ok(()),
            };
            if let Err(err) = r {
                self.reporter.warn(&format!(
                    "node {}: cannot publish controllers/{}/{}: {err}",
                    out.node, e.controller, e.name
                ));
            }
        }
    }
}

fn create(node: &mut r2r::Node, name: &str, e: &Endpoint) -> Result<Served, r2r::Error> {
    let q = || reliable(DEPTH);
    if let (RosKind::Message, Some(ty)) = (e.kind, e.ty) {
        return Ok(match e.role {
            Role::Publisher => {
                Served::Publisher(RosPub::Message(msg::publisher(node, name, ty, q())?))
            }
            Role::Subscriber => {
                Served::Subscriber(RosSub::Message(msg::subscription(node, name, ty, q())?))
            }
            Role::Service => Served::Service(RosSrv::Message(msg::service(node, name, ty)?)),
        });
    }
    Ok(match e.role {
        Role::Publisher => Served::Publisher(match e.kind {
            RosKind::Bool => RosPub::Bool(node.create_publisher(name, q())?),
            RosKind::Float64 => RosPub::Float64(node.create_publisher(name, q())?),
            RosKind::Pose2D => RosPub::Pose2D(node.create_publisher(name, q())?),
            // the declarations refuse Empty and Outcome topics
            _ => RosPub::Twist(node.create_publisher(name, q())?),
        }),
        Role::Subscriber => Served::Subscriber(match e.kind {
            RosKind::Bool => RosSub::Bool(Box::new(node.subscribe(name, q())?)),
            RosKind::Float64 => RosSub::Float64(Box::new(node.subscribe(name, q())?)),
            RosKind::Pose2D => RosSub::Pose2D(Box::new(node.subscribe(name, q())?)),
            _ => RosSub::Twist(Box::new(node.subscribe(name, q())?)),
        }),
        Role::Service => {
            let d = QosProfile::default;
            Served::Service(match e.kind {
                RosKind::Bool => RosSrv::SetBool(Box::new(
                    node.create_service::<SetBool::Service>(name, d())?,
                )),
                RosKind::Pose2D => RosSrv::Pose(Box::new(
                    node.create_service::<SetPose2D::Service>(name, d())?,
                )),
                // the declarations allow Empty, Bool and Pose2D requests only
                _ => RosSrv::Trigger(Box::new(
                    node.create_service::<Trigger::Service>(name, d())?,
                )),
            })
        }
    })
}

/// The messages pending on `sub`, as values.
fn received(sub: &mut RosSub) -> Vec<RosValue> {
    match sub {
        RosSub::Bool(s) => drain(s).map(|m| RosValue::Bool(m.data)).collect(),
        RosSub::Float64(s) => drain(s).map(|m| RosValue::Float64(m.data)).collect(),
        RosSub::Pose2D(s) => drain(s).map(|p| pose(&p)).collect(),
        RosSub::Twist(s) => drain(s)
            .map(|t| {
                RosValue::Twist(Twist2 {
                    linear: t.linear.x,
                    angular: t.angular.z,
                })
            })
            .collect(),
        // served by the caller (converted by the layer)
        RosSub::Message(_) => Vec::new(),
    }
}

/// Hands the calls pending on `srv` to the layer, each answered when the layer says.
fn forward_calls(layer: &mut Layer, srv: &mut RosSrv, id: NodeId, e: EndpointId, now: Instant) {
    // a client that left is not an error of the controller
    match srv {
        RosSrv::Trigger(s) => {
            for c in drain(s).collect::<Vec<_>>() {
                let reply = held(move |(success, message)| {
                    let _ = c.respond(Trigger::Response { success, message });
                });
                layer.call(id, e, RosValue::Empty, reply, now);
            }
        }
        RosSrv::SetBool(s) => {
            for c in drain(s).collect::<Vec<_>>() {
                let v = RosValue::Bool(c.message.data);
                let reply = held(move |(success, message)| {
                    let _ = c.respond(SetBool::Response { success, message });
                });
                layer.call(id, e, v, reply, now);
            }
        }
        RosSrv::Pose(s) => {
            for c in drain(s).collect::<Vec<_>>() {
                let v = pose(&c.message.pose);
                let reply = held(move |(success, message)| {
                    let _ = c.respond(SetPose2D::Response { success, message });
                });
                layer.call(id, e, v, reply, now);
            }
        }
        RosSrv::Message(s) => {
            for (request, answer) in s.take() {
                layer.call_message(id, e, &request, held(answer), now);
            }
        }
    }
}

fn pose(p: &Pose2D) -> RosValue {
    RosValue::Pose2D(Pose2 {
        x: p.x,
        y: p.y,
        theta: p.theta,
    })
}

fn pose_msg(q: Pose2) -> Pose2D {
    Pose2D {
        x: q.x,
        y: q.y,
        theta: q.theta,
    }
}

fn twist(t: Twist2) -> Twist {
    let mut m = Twist::default();
    m.linear.x = t.linear;
    m.angular.z = t.angular;
    m
}
