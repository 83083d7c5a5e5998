//! The RT controllers' endpoints of one driven robot on ROS 1 (the behaviour is the layer's,
//! [`nrt_interface::controllers`]): `/<ns>/thymio_driver/controllers/<controller>/<endpoint>` with the ROS 1 types
//! of the table in [`handoff::endpoints`] (`Bool` → `std_msgs/Bool`, `Float64` → `std_msgs/Float64`,
//! `Pose2D` → `geometry_msgs/Pose2D`, `Twist` → `geometry_msgs/Twist`; a service of `Empty` is a
//! `std_srvs/Trigger`, of `Bool` a `std_srvs/SetBool`, of `Pose2D` a `thymio_rt_msgs/SetPose2D`), and the one
//! conversion of each between ROS 1 and the layer's values. An endpoint of a ROS type of the controller's choosing
//! ([`RosKind::Message`]) is published, subscribed and served from its ROS 1 definition at run time
//! ([`nrt_ros1_client::dynamic`]): the layer's JSON messages are encoded and decoded here.

use super::Ros1Error;
use crate::control_inbox::{ControlCall, ControlInbox};
use handoff::{NodeId, Pose2, RosKind, RosValue, Twist2};
use nrt_interface::controllers::{Endpoint, EndpointId, Payload, Published, Role, SERVICE_TIMEOUT};
use nrt_ros1_client::dynamic::{MessageType, Ros1Types, TypeError};
use nrt_ros1_client::graph::{Graph, Task};
use nrt_ros1_client::net::RawMessage;
use nrt_ros1_client::net::{Publisher, ServiceServer};
use nrt_ros1_client::ros1_msgs::geometry_msgs::{Pose2D, Twist, Vector3};
use nrt_ros1_client::ros1_msgs::std_msgs::{Bool, Float64};
use nrt_ros1_client::ros1_msgs::std_srvs::{SetBool, SetBoolResponse, Trigger, TriggerResponse};
use nrt_ros1_client::ros1_msgs::thymio_rt_msgs::{SetPose2D, SetPose2DResponse};
use roslibrust::RosMessageType;

/// Depth of the controllers' topics (as on ROS 2).
const DEPTH: usize = 10;

/// A controller's publisher, of its kind.
enum RosPub {
    Bool(Publisher<Bool>),
    Float64(Publisher<Float64>),
    Pose2D(Publisher<Pose2D>),
    Twist(Publisher<Twist>),
}

/// The ROS 1 types of the process, resolved once each (built-in definitions, then the package paths).
fn types() -> &'static Ros1Types {
    static TYPES: std::sync::OnceLock<Ros1Types> = std::sync::OnceLock::new();
    TYPES.get_or_init(Ros1Types::from_env)
}

/// Checks that an endpoint of ROS type `ty` (`pkg/msg/Type` or `pkg/srv/Type`) can be served on ROS 1.
pub fn check_type(ty: &str) -> Result<(), TypeError> {
    if ty.contains("/srv/") {
        types().service(ty).map(|_| ())
    } else {
        types().message(ty).map(|_| ())
    }
}

/// One robot's controller endpoints (dropped: unregistered).
pub struct ControllerEndpoints {
    publishers: Vec<(Endpoint, RosPub)>,
    /// Publishers of a ROS type of the controller's choosing.
    messages: Vec<(Endpoint, std::sync::Arc<MessageType>, Publisher<RawMessage>)>,
    _subscriptions: Vec<Task>,
    _services: Vec<ServiceServer>,
}

impl ControllerEndpoints {
    /// Publishes `out` if it is one of these publishers' (a failure is logged).
    pub fn publish(&self, g: &Graph, out: &Published) {
        // a message of the controller's own type is one of `messages`, not of `publishers`
        let value = match &out.value {
            Payload::Value(v) => v,
            Payload::Message(m) => return self.publish_message(out, m),
        };
        let Some((e, p)) = self.publishers.iter().find(|(e, _)| e.id == out.endpoint) else {
            return;
        };
        let r = match (*value, p) {
            (RosValue::Bool(data), RosPub::Bool(p)) => g.publish(p, &Bool { data }),
            (RosValue::Float64(data), RosPub::Float64(p)) => g.publish(p, &Float64 { data }),
            (RosValue::Pose2D(q), RosPub::Pose2D(p)) => g.publish(p, &pose_msg(q)),
            (RosValue::Twist(t), RosPub::Twist(p)) => g.publish(p, &twist_msg(t)),
            _ => Ok(()),
        };
        if let Err(err) = r {
            tracing::warn!(
                "ROS 1: node {}: cannot publish controllers/{}/{}: {err}",
                out.node,
                e.controller,
                e.name
            );
        }
    }
}

impl ControllerEndpoints {
    fn publish_message(&self, out: &Published, m: &handoff::MsgValue) {
        let Some((e, ty, p)) = self.messages.iter().find(|(e, ..)| e.id == out.endpoint) else {
            return;
        };
        let r = ty
            .encode(m)
            .map_err(|e| e.to_string())
            .and_then(|body| p.publish_bytes(&body).map_err(|e| e.to_string()));
        if let Err(err) = r {
            tracing::warn!(
                "ROS 1: node {}: cannot publish controllers/{}/{}: {err}",
                out.node,
                e.controller,
                e.name
            );
        }
    }
}

/// Registers robot `id`'s `endpoints` (global names made by `t` from their leaves); messages and calls go to
/// `inbox`.
pub fn register(
    g: &Graph,
    t: &dyn Fn(&str) -> String,
    id: NodeId,
    endpoints: &[Endpoint],
    inbox: &ControlInbox,
) -> Result<ControllerEndpoints, Ros1Error> {
    let mut out = ControllerEndpoints {
        publishers: Vec::new(),
        messages: Vec::new(),
        _subscriptions: Vec::new(),
        _services: Vec::new(),
    };
    for e in endpoints {
        let name = t(&e.leaf());
        if let (RosKind::Message, Some(ty)) = (e.kind, e.ty) {
            register_message(g, &name, id, e, ty, inbox, &mut out)?;
            continue;
        }
        match e.role {
            Role::Publisher => {
                let p = match e.kind {
                    RosKind::Bool => RosPub::Bool(g.advertise(&name, DEPTH, false)?),
                    RosKind::Float64 => RosPub::Float64(g.advertise(&name, DEPTH, false)?),
                    RosKind::Pose2D => RosPub::Pose2D(g.advertise(&name, DEPTH, false)?),
                    // the declarations refuse Empty and Outcome topics
                    _ => RosPub::Twist(g.advertise(&name, DEPTH, false)?),
                };
                out.publishers.push((*e, p));
            }
            Role::Subscriber => {
                let task = match e.kind {
                    RosKind::Bool => {
                        forward::<Bool>(g, &name, id, e.id, inbox, |m| RosValue::Bool(m.data))?
                    }
                    RosKind::Float64 => forward::<Float64>(g, &name, id, e.id, inbox, |m| {
                        RosValue::Float64(m.data)
                    })?,
                    RosKind::Pose2D => forward::<Pose2D>(g, &name, id, e.id, inbox, pose)?,
                    _ => forward::<Twist>(g, &name, id, e.id, inbox, twist)?,
                };
                out._subscriptions.push(task);
            }
            Role::Service => out._services.push(serve(g, &name, id, e, inbox)?),
        }
    }
    Ok(out)
}

fn unknown(name: &str, e: TypeError) -> Ros1Error {
    Ros1Error::Register(name.to_owned(), anyhow::anyhow!("{e}"))
}

/// Registers endpoint `e` of ROS type `ty` under `name`: a publisher, a subscription handing each decoded
/// message to the NRT loop, or a service whose decoded calls the layer answers.
fn register_message(
    g: &Graph,
    name: &str,
    id: NodeId,
    e: &Endpoint,
    ty: &str,
    inbox: &ControlInbox,
    out: &mut ControllerEndpoints,
) -> Result<(), Ros1Error> {
    match e.role {
        Role::Publisher => {
            let t = types().message(ty).map_err(|err| unknown(name, err))?;
            let p = g.advertise_raw(name, &t.descriptor(), DEPTH, false)?;
            out.messages.push((*e, t, p));
        }
        Role::Subscriber => {
            let t = types().message(ty).map_err(|err| unknown(name, err))?;
            let mut sub = g.subscribe_raw(name, &t.descriptor(), DEPTH)?;
            let (inbox, endpoint, topic) = (inbox.clone(), e.id, name.to_owned());
            out._subscriptions.push(g.spawn(async move {
                while let Some(bytes) = sub.next_bytes().await {
                    match t.decode(&bytes) {
                        Ok(msg) => {
                            let call = ControlCall::TypedMessage {
                                node: id,
                                endpoint,
                                msg,
                            };
                            if !inbox.send(call) {
                                return;
                            }
                        }
                        Err(err) => tracing::warn!(
                            "ROS 1: {topic}: message dropped: {}",
                            nrt_ros1_client::net::clip(&err.to_string())
                        ),
                    }
                }
            }));
        }
        Role::Service => {
            let st = types().service(ty).map_err(|err| unknown(name, err))?;
            let (inbox, endpoint, d) = (inbox.clone(), e.id, st.descriptor());
            let server = g.serve_raw(name, &d, move |bytes| {
                let request = st.request.decode(&bytes).map_err(|e| e.to_string())?;
                let answer = inbox
                    .ask(SERVICE_TIMEOUT, |reply| ControlCall::TypedService {
                        node: id,
                        endpoint,
                        request,
                        reply,
                    })
                    .map_err(|e| e.to_string())?;
                st.response.encode(&answer?).map_err(|e| e.to_string())
            })?;
            out._services.push(server);
        }
    }
    Ok(())
}

/// Subscribes `name` and hands each message, as a value, to the NRT loop.
fn forward<T: RosMessageType>(
    g: &Graph,
    name: &str,
    node: NodeId,
    endpoint: EndpointId,
    inbox: &ControlInbox,
    value: fn(T) -> RosValue,
) -> Result<Task, Ros1Error> {
    let mut sub = g.subscribe::<T>(name, DEPTH)?;
    let (inbox, name) = (inbox.clone(), name.to_owned());
    Ok(g.spawn(async move {
        while let Some(m) = sub.next().await {
            match m {
                Ok(m) => {
                    let call = ControlCall::Message {
                        node,
                        endpoint,
                        value: value(m),
                    };
                    if !inbox.send(call) {
                        return;
                    }
                }
                Err(e) => tracing::warn!(
                    "ROS 1: {name}: {}",
                    nrt_ros1_client::net::clip(&e.to_string())
                ),
            }
        }
    }))
}

/// Serves the service `name` of endpoint `e`: each call is handed to the NRT loop and answered with the layer's
/// `(success, message)`.
fn serve(
    g: &Graph,
    name: &str,
    node: NodeId,
    e: &Endpoint,
    inbox: &ControlInbox,
) -> Result<ServiceServer, Ros1Error> {
    let (endpoint, inbox) = (e.id, inbox.clone());
    let ask = move |request: RosValue| {
        inbox.ask(SERVICE_TIMEOUT, |reply| ControlCall::Service {
            node,
            endpoint,
            request,
            reply,
        })
    };
    Ok(match e.kind {
        RosKind::Bool => g.serve::<SetBool>(name, move |req| {
            let (success, message) = ask(RosValue::Bool(req.data))?;
            Ok(SetBoolResponse { success, message })
        }),
        RosKind::Pose2D => g.serve::<SetPose2D>(name, move |req| {
            let (success, message) = ask(pose(req.pose))?;
            Ok(SetPose2DResponse { success, message })
        }),
        // the declarations allow Empty, Bool and Pose2D requests only
        _ => g.serve::<Trigger>(name, move |_| {
            let (success, message) = ask(RosValue::Empty)?;
            Ok(TriggerResponse { success, message })
        }),
    }?)
}

fn pose(p: Pose2D) -> RosValue {
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

fn twist(t: Twist) -> RosValue {
    RosValue::Twist(Twist2 {
        linear: t.linear.x,
        angular: t.angular.z,
    })
}

fn twist_msg(t: Twist2) -> Twist {
    Twist {
        linear: Vector3 {
            x: t.linear,
            ..Vector3::default()
        },
        angular: Vector3 {
            z: t.angular,
            ..Vector3::default()
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_cross_both_ways_unchanged() {
        let p = Pose2 {
            x: 1.0,
            y: -2.0,
            theta: 0.5,
        };
        assert_eq!(pose(pose_msg(p)), RosValue::Pose2D(p));
        let t = Twist2 {
            linear: 0.1,
            angular: -0.3,
        };
        let m = twist_msg(t);
        assert_eq!((m.linear.y, m.linear.z, m.angular.x), (0.0, 0.0, 0.0));
        assert_eq!(twist(m), RosValue::Twist(t));
    }
}
