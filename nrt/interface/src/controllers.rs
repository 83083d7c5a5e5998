//! ROS from RT, described once for every front end: the endpoints and parameters the RT controllers declared
//! ([`handoff::NrtControl`]), served for each driven robot under its driver node's name:
//! `/<ns>/thymio_driver/controllers/<controller>/<endpoint>` ([`Endpoint::leaf`]). Each front end maps the
//! endpoint's [`RosKind`] to its ROS type (the table of [`handoff::endpoints`]: `Bool` → `std_msgs/Bool`,
//! `Float64` → `std_msgs/Float64`, `Pose2D` → `geometry_msgs/Pose2D`, `Twist` → `geometry_msgs/Twist`; a service
//! of `Empty` is a `std_srvs/Trigger`, of `Bool` a `std_srvs/SetBool`, of `Pose2D` a `thymio_rt_msgs/SetPose2D`,
//! all answered with `(success, message)`). An endpoint of a ROS type of the controller's choosing
//! ([`RosKind::Message`], [`Endpoint::ty`]) crosses as a [`MsgValue`] converted by the controller's functions here
//! ([`Controllers::receive_message`], [`Controllers::call_message`], [`Payload::Message`]); each front end
//! publishes, subscribes and serves it by type name.
//!
//! The layer owns the ports (one process, one set of RT rings, whatever the number of front ends):
//! - what RT published is drained once per iteration ([`Controllers::serve`]) and kept until
//!   [`Controllers::end_step`] so that every front end publishes it ([`Controllers::outputs`]);
//! - a message a front end received goes to its cell ([`Controllers::receive`]; the RT thread is rung once per
//!   iteration);
//! - a service call is forwarded to the RT side and held ([`Controllers::call`]) until the RT side answers, or
//!   refused after [`SERVICE_TIMEOUT`];
//! - the parameters, `controllers.<controller>.<param>` of the robot's driver node, are listed
//!   ([`Controllers::params`]), checked ([`Controllers::check_param`]) and applied ([`Controllers::set_param`])
//!   here for every parameter front end (ROS 2's parameter services, ROS 1's dynamic_reconfigure).
//!
//! The ports belong to RT robot slots: a robot that goes gives its slot's ports back for the next robot in that
//! slot.

use crate::held_calls::{Answer, HeldCalls, HeldForNode, NO_LONGER_DRIVEN};
use crate::reply::Held;
use handoff::{
    Doorbell, MsgCallError, MsgCtx, MsgValue, NodeId, NrtControl, NrtControllerPorts, NrtEndpoint,
    NrtMessagePort, Outcome, ParamDecl, RequestId, RobotId, RosKind, RosValue,
};
use nrt_engine::engine::EngineEvent;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// Longest wait for an RT controller to answer a service call.
pub const SERVICE_TIMEOUT: Duration = Duration::from_secs(1);

/// An endpoint of a robot slot's controllers: the controller's rank and the endpoint's rank in its declarations
/// (the same on every slot).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct EndpointId {
    /// The controller's rank among the slot's.
    pub controller: usize,
    /// The endpoint's rank among the controller's.
    pub endpoint: usize,
}

/// Which way an endpoint goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// RT publishes: the front end publishes [`Controllers::outputs`] on a topic.
    Publisher,
    /// The front end subscribes to a topic and hands each message to [`Controllers::receive`].
    Subscriber,
    /// The front end serves a service and hands each call to [`Controllers::call`].
    Service,
}

/// One endpoint a front end makes for a driven robot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Endpoint {
    /// Where it is.
    pub id: EndpointId,
    /// The controller's name.
    pub controller: &'static str,
    /// The endpoint's name.
    pub name: &'static str,
    /// Which way it goes.
    pub role: Role,
    /// A topic's message kind, a service's request kind (its response is always `(success, message)`);
    /// [`RosKind::Message`] for an endpoint of any ROS type (see `ty`).
    pub kind: RosKind,
    /// The ROS type of a [`RosKind::Message`] endpoint, the ROS 2 way (`pkg/msg/Type`, a service's
    /// `pkg/srv/Type`); `None` for the other kinds.
    pub ty: Option<&'static str>,
}

impl Endpoint {
    /// Its name relative to the robot's namespace: `thymio_driver/controllers/<controller>/<name>`.
    pub fn leaf(&self) -> String {
        format!(
            "thymio_driver/controllers/{}/{}",
            self.controller, self.name
        )
    }
}

/// What a publisher endpoint publishes.
#[derive(Debug, Clone, PartialEq)]
pub enum Payload {
    /// A value of the endpoint's [`RosKind`].
    Value(RosValue),
    /// A message of the endpoint's ROS type ([`RosKind::Message`]), converted by the controller.
    Message(MsgValue),
}

/// A value an RT controller published in this iteration.
#[derive(Debug, Clone, PartialEq)]
pub struct Published {
    /// The driven robot (its node).
    pub node: NodeId,
    /// The publisher endpoint.
    pub endpoint: EndpointId,
    /// What to publish (of the endpoint's kind or type).
    pub value: Payload,
}

/// The answer of a call of a message service: the response, or why the call failed.
pub type MsgAnswer = Result<MsgValue, String>;

/// How a held service call is answered.
enum Caller {
    /// A service of a [`RosKind`] request: `(success, message)`.
    Outcome(Held<Answer>),
    /// A message service: the converted response.
    Message(Held<MsgAnswer>),
}

impl Caller {
    fn refuse(self, why: String) {
        match self {
            Caller::Outcome(c) => c.reply((false, why)),
            Caller::Message(c) => c.reply(Err(why)),
        }
    }
}

/// Why a received message was not handed to RT.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ReceiveError {
    /// The robot is not driven (any more).
    #[error("node {0} is not driven")]
    NotDriven(NodeId),
    /// No such subscriber endpoint.
    #[error("node {0}: no controller subscription {1:?}")]
    NoSuchEndpoint(NodeId, EndpointId),
    /// A value of another kind than the endpoint's.
    #[error("{0}: a {1:?} message where {2:?} is expected")]
    WrongKind(String, RosKind, RosKind),
    /// NaN or infinite.
    #[error("{0}: not finite: {1:?}")]
    NotFinite(String, RosValue),
    /// The controller's conversion refused the message.
    #[error("{0}: {1}")]
    Refused(String, String),
}

struct PendingCall {
    node: NodeId,
    robot: RobotId,
    endpoint: EndpointId,
    request: RequestId,
    call: Caller,
    until: Instant,
}

impl HeldForNode for PendingCall {
    fn node(&self) -> NodeId {
        self.node
    }
    fn into_call(self) -> Held<Answer> {
        match self.call {
            Caller::Outcome(c) => c,
            Caller::Message(c) => crate::reply::held(move |(_, why): Answer| c.reply(Err(why))),
        }
    }
}

/// Every controller port, and the driven robots (one per process, in [`crate::Interface`]).
pub struct Controllers {
    ports: BTreeMap<RobotId, Vec<NrtControllerPorts>>,
    /// The driven robots and the service calls forwarded to their controllers.
    pending: HeldCalls<PendingCall>,
    outputs: Vec<Published>,
    /// Something was stored for RT in this iteration: a message, parameters or a service call (the RT thread is
    /// rung once, in [`Self::serve`]).
    stored: bool,
    rt_bell: Doorbell,
}

impl Default for Controllers {
    /// No controller (the switch still serves `ros` and `joint`).
    fn default() -> Controllers {
        Controllers::new(NrtControl::default(), Doorbell::silent())
    }
}

impl Controllers {
    /// The ports of `control` (its owner names are the switch's); stored messages and parameters ring `rt_bell`
    /// (`Engine::rt_bell`).
    pub fn new(control: NrtControl, rt_bell: Doorbell) -> Controllers {
        let mut ports: BTreeMap<RobotId, Vec<NrtControllerPorts>> = BTreeMap::new();
        for p in control.ports {
            ports.entry(p.robot).or_default().push(p);
        }
        Controllers {
            ports,
            pending: HeldCalls::default(),
            outputs: Vec::new(),
            stored: false,
            rt_bell,
        }
    }

    /// Whether a service call to an RT controller waits for its answer (the loop wants the RT thread's bursts
    /// at once; a controller's published values wake it by themselves).
    pub fn awaits_answers(&self) -> bool {
        !self.pending.is_empty()
    }

    /// Every endpoint of a ROS type of its own ([`RosKind::Message`]), as `(controller/endpoint, type)`, once:
    /// a front end checks at start that it can serve them all.
    pub fn message_types(&self) -> Vec<(String, &'static str)> {
        let mut out = Vec::new();
        for c in self.ports.values().next().into_iter().flatten() {
            for e in &c.endpoints {
                if let NrtEndpoint::Message { name, ty, .. } = e {
                    out.push((format!("{}/{name}", c.controller), *ty));
                }
            }
        }
        out
    }

    /// The RT slot of driven robot `node`.
    pub fn robot(&self, node: NodeId) -> Option<RobotId> {
        self.pending.robot(node)
    }

    /// The endpoints a front end makes for driven robot `node` (none when it is not driven).
    pub fn endpoints(&self, node: NodeId) -> Vec<Endpoint> {
        let mut out = Vec::new();
        let slot = self.robot(node).and_then(|r| self.ports.get(&r));
        for (ci, c) in slot.into_iter().flatten().enumerate() {
            for (ei, e) in c.endpoints.iter().enumerate() {
                let (role, kind, ty) = match e {
                    NrtEndpoint::Publisher { kind, .. } => (Role::Publisher, *kind, None),
                    NrtEndpoint::Subscriber { kind, .. } => (Role::Subscriber, *kind, None),
                    NrtEndpoint::Service { request, .. } => (Role::Service, *request, None),
                    NrtEndpoint::Message { ty, port, .. } => {
                        let role = match port {
                            NrtMessagePort::Publisher(_) => Role::Publisher,
                            NrtMessagePort::Subscriber(_) => Role::Subscriber,
                            NrtMessagePort::Service(_) => Role::Service,
                        };
                        (role, RosKind::Message, Some(*ty))
                    }
                };
                out.push(Endpoint {
                    id: EndpointId {
                        controller: ci,
                        endpoint: ei,
                    },
                    controller: c.controller,
                    name: e.name(),
                    role,
                    kind,
                    ty,
                });
            }
        }
        out
    }

    fn port(&mut self, node: NodeId, id: EndpointId) -> Option<(&'static str, &mut NrtEndpoint)> {
        let robot = self.robot(node)?;
        let c = self.ports.get_mut(&robot)?.get_mut(id.controller)?;
        let controller = c.controller;
        Some((controller, c.endpoints.get_mut(id.endpoint)?))
    }

    /// A message a front end received on subscriber endpoint `id` of robot `node`: stored in its cell (the RT
    /// controller reads the latest); `Err` (nothing stored): why not (not driven, not a subscriber of that kind,
    /// not finite).
    pub fn receive(
        &mut self,
        node: NodeId,
        id: EndpointId,
        value: RosValue,
    ) -> Result<(), ReceiveError> {
        if self.robot(node).is_none() {
            return Err(ReceiveError::NotDriven(node));
        }
        let Some((controller, NrtEndpoint::Subscriber { name, kind, nrt })) = self.port(node, id)
        else {
            return Err(ReceiveError::NoSuchEndpoint(node, id));
        };
        let at = || format!("{controller}/{name}");
        if value.kind() != *kind {
            return Err(ReceiveError::WrongKind(at(), value.kind(), *kind));
        }
        if !finite(&value) {
            return Err(ReceiveError::NotFinite(at(), value));
        }
        nrt.nrt_store(value);
        self.stored = true;
        Ok(())
    }

    /// A call a front end received on service endpoint `id` of robot `node`, answered through `call`: at once when
    /// refused (not driven, a pose that is not finite, too many calls in flight), else when the RT controller
    /// answers, or refused [`SERVICE_TIMEOUT`] after `now`.
    pub fn call(
        &mut self,
        node: NodeId,
        id: EndpointId,
        request: RosValue,
        call: Held<Answer>,
        now: Instant,
    ) {
        let Some(robot) = self.robot(node) else {
            return call.reply((false, NO_LONGER_DRIVEN.into()));
        };
        let Some((
            controller,
            NrtEndpoint::Service {
                name,
                request: kind,
                nrt,
            },
        )) = self.port(node, id)
        else {
            return call.reply((false, format!("node {node}: no such controller service")));
        };
        if request.kind() != *kind {
            return call.reply((
                false,
                format!("{controller}/{name} takes a {kind:?} request"),
            ));
        }
        if !finite(&request) {
            return call.reply((false, "the pose must be finite".into()));
        }
        match nrt.nrt_call(request) {
            Ok(rid) => {
                // the RT thread serves it at its next cycle: wake it (a quiet RT loop sleeps past its period)
                self.stored = true;
                self.pending.hold(PendingCall {
                    node,
                    robot,
                    endpoint: id,
                    request: rid,
                    call: Caller::Outcome(call),
                    until: now + SERVICE_TIMEOUT,
                })
            }
            Err(e) => call.reply((false, format!("{controller}: {e}, try again"))),
        }
    }

    /// A message a front end received on message subscriber endpoint `id` of robot `node` (a
    /// [`RosKind::Message`] endpoint): converted by the controller's function and stored for RT; `Err` (nothing
    /// stored): not driven, no such endpoint, or the conversion's refusal.
    pub fn receive_message(
        &mut self,
        node: NodeId,
        id: EndpointId,
        msg: &MsgValue,
    ) -> Result<(), ReceiveError> {
        if self.robot(node).is_none() {
            return Err(ReceiveError::NotDriven(node));
        }
        let Some((
            controller,
            NrtEndpoint::Message {
                name,
                port: NrtMessagePort::Subscriber(store),
                ..
            },
        )) = self.port(node, id)
        else {
            return Err(ReceiveError::NoSuchEndpoint(node, id));
        };
        let at = format!("{controller}/{name}");
        store
            .nrt_store(msg)
            .map_err(|why| ReceiveError::Refused(at, why))?;
        self.stored = true;
        Ok(())
    }

    /// A call a front end received on message service endpoint `id` of robot `node`, answered through `call`:
    /// at once with `Err` when refused (not driven, the conversion refused the request, too many calls in
    /// flight), else with the RT controller's converted response, or `Err` [`SERVICE_TIMEOUT`] after `now`.
    pub fn call_message(
        &mut self,
        node: NodeId,
        id: EndpointId,
        request: &MsgValue,
        call: Held<MsgAnswer>,
        now: Instant,
    ) {
        let Some(robot) = self.robot(node) else {
            return call.reply(Err(NO_LONGER_DRIVEN.into()));
        };
        let Some((
            controller,
            NrtEndpoint::Message {
                name,
                port: NrtMessagePort::Service(client),
                ..
            },
        )) = self.port(node, id)
        else {
            return call.reply(Err(format!("node {node}: no such controller service")));
        };
        match client.nrt_call(request) {
            Ok(rid) => {
                self.pending.hold(PendingCall {
                    node,
                    robot,
                    endpoint: id,
                    request: rid,
                    call: Caller::Message(call),
                    until: now + SERVICE_TIMEOUT,
                });
                self.stored = true;
            }
            Err(e @ MsgCallError::Refused(_)) => {
                call.reply(Err(format!("{controller}/{name}: {e}")))
            }
            Err(e) => call.reply(Err(format!("{controller}: {e}, try again"))),
        }
    }

    /// Drains what the driven robots' controllers published (for [`Self::outputs`]), answers the calls they
    /// answered or that timed out, and rings the RT thread when a message was stored. Never waits.
    pub fn serve(&mut self, now: Instant) {
        let Controllers {
            ports,
            pending,
            outputs,
            ..
        } = self;
        let (robots, pending) = pending.parts_mut();
        for (&node, robot) in robots.iter() {
            let Some(slot) = ports.get_mut(robot) else {
                continue;
            };
            for (ci, c) in slot.iter_mut().enumerate() {
                for (ei, e) in c.endpoints.iter_mut().enumerate() {
                    let endpoint = EndpointId {
                        controller: ci,
                        endpoint: ei,
                    };
                    match e {
                        NrtEndpoint::Publisher { nrt, .. } => {
                            nrt.nrt_drain(|value| {
                                outputs.push(Published {
                                    node,
                                    endpoint,
                                    value: Payload::Value(value),
                                })
                            });
                        }
                        NrtEndpoint::Service { nrt, .. } => {
                            while let Some((rid, answer)) = nrt.nrt_poll_response() {
                                let Some(i) = pending.iter().position(|p| {
                                    p.robot == *robot && p.endpoint == endpoint && p.request == rid
                                }) else {
                                    continue; // answered late: the call timed out
                                };
                                let p = pending.remove(i);
                                let (success, message) = match answer {
                                    RosValue::Outcome(Outcome { success, message }) => {
                                        (success, message.to_owned())
                                    }
                                    other => (false, format!("unexpected answer {other:?}")),
                                };
                                match p.call {
                                    Caller::Outcome(c) => c.reply((success, message)),
                                    Caller::Message(c) => c.reply(Err(message)),
                                }
                            }
                        }
                        NrtEndpoint::Message {
                            port: NrtMessagePort::Publisher(drain),
                            ..
                        } => {
                            let ctx = MsgCtx::new(node, *robot);
                            drain.nrt_drain(&ctx, &mut |m| {
                                outputs.push(Published {
                                    node,
                                    endpoint,
                                    value: Payload::Message(m),
                                })
                            });
                        }
                        NrtEndpoint::Message {
                            port: NrtMessagePort::Service(client),
                            ..
                        } => {
                            let ctx = MsgCtx::new(node, *robot);
                            while let Some((rid, answer)) = client.nrt_poll_response(&ctx) {
                                let Some(i) = pending.iter().position(|p| {
                                    p.robot == *robot && p.endpoint == endpoint && p.request == rid
                                }) else {
                                    continue; // answered late: the call timed out
                                };
                                match pending.remove(i).call {
                                    Caller::Message(c) => c.reply(Ok(answer)),
                                    Caller::Outcome(c) => {
                                        c.reply((false, "unexpected message answer".into()))
                                    }
                                }
                            }
                        }
                        NrtEndpoint::Subscriber { .. } | NrtEndpoint::Message { .. } => {}
                    }
                }
            }
        }
        for p in self.pending.take(|p, _| p.until <= now) {
            let controller = self
                .ports
                .get(&p.robot)
                .and_then(|s| s.get(p.endpoint.controller))
                .map_or("?", |c| c.controller);
            p.call.refuse(format!(
                "{controller} did not answer within {} ms (is the RT thread running?)",
                SERVICE_TIMEOUT.as_millis()
            ));
        }
        if std::mem::take(&mut self.stored) {
            self.rt_bell.ring();
        }
    }

    /// What the controllers published in this iteration, for every front end to publish.
    pub fn outputs(&self) -> &[Published] {
        &self.outputs
    }

    /// Forgets this iteration's outputs (every front end published them).
    pub fn end_step(&mut self) {
        self.outputs.clear();
    }

    /// Follows the driven robots; the held calls of a robot that goes are refused.
    pub fn on_engine_event(&mut self, event: &EngineEvent) {
        self.pending.follow(event);
    }

    /// The controllers' parameters of robot slot `robot` (see [`Self::robot`] for a node's), as
    /// `(controllers.<controller>.<name>, value in effect, declaration)`: the declaration has the range
    /// (`min`..=`max`), the default and the description. All are doubles, applied live.
    pub fn params(&self, robot: RobotId) -> Vec<(String, f64, ParamDecl)> {
        let mut out = Vec::new();
        for c in self.ports.get(&robot).into_iter().flatten() {
            for d in c.params.decls() {
                let v = c.params.get(d.name).unwrap_or(d.default);
                out.push((format!("controllers.{}.{}", c.controller, d.name), v, *d));
            }
        }
        out
    }

    fn find(
        &mut self,
        robot: RobotId,
        name: &str,
    ) -> Result<(&mut NrtControllerPorts, String), String> {
        let rest = name
            .strip_prefix("controllers.")
            .ok_or_else(|| format!("{name} is not a controller parameter"))?;
        let (controller, param) = rest
            .split_once('.')
            .ok_or_else(|| format!("{name}: expected controllers.<controller>.<parameter>"))?;
        let c = self
            .ports
            .get_mut(&robot)
            .and_then(|p| p.iter_mut().find(|c| c.controller == controller))
            .ok_or_else(|| format!("{name}: no controller {controller} on this robot"))?;
        Ok((c, param.to_owned()))
    }

    /// Checks `value` for `controllers.<controller>.<param>` of robot slot `robot` without applying it (for a front
    /// end that applies several values all or none); `Err`: why it would be refused.
    pub fn check_param(&mut self, robot: RobotId, name: &str, value: f64) -> Result<(), String> {
        let (c, param) = self.find(robot, name)?;
        c.params
            .check(&param, value)
            .map(|_| ())
            .map_err(|e| e.to_string())
    }

    /// Sets `controllers.<controller>.<param>` of robot slot `robot` (applied at the controller's next cycle; the
    /// RT thread is rung); `Err`: why not (nothing changed): not a controller parameter, no such controller or
    /// parameter, not finite, out of its range.
    pub fn set_param(&mut self, robot: RobotId, name: &str, value: f64) -> Result<(), String> {
        let (c, param) = self.find(robot, name)?;
        c.params.nrt_set(&param, value).map_err(|e| e.to_string())?;
        self.rt_bell.ring();
        Ok(())
    }
}

/// Whether every number of `v` is finite.
fn finite(v: &RosValue) -> bool {
    match v {
        RosValue::Float64(x) => x.is_finite(),
        RosValue::Pose2D(p) => [p.x, p.y, p.theta].iter().all(|x| x.is_finite()),
        RosValue::Twist(t) => t.linear.is_finite() && t.angular.is_finite(),
        _ => true,
    }
}

#[cfg(test)]
#[path = "controllers_tests.rs"]
mod tests;
