//! ROS from RT: the endpoints and parameters the RT controllers declared
//! ([`msgs::handoff::NrtControl`]), served for each driven robot under its driver node's name:
//! `/<ns>/thymio_driver/controllers/<controller>/<endpoint>`, with the ROS types of the table in
//! [`msgs::handoff::endpoints`] (`Bool` → `std_msgs/Bool`, `Float64` → `std_msgs/Float64`,
//! `Pose2D` → `geometry_msgs/Pose2D`, `Twist` → `geometry_msgs/Twist`; a service of `Empty` is a
//! `std_srvs/Trigger`, of `Bool` a `std_srvs/SetBool`, of `Pose2D` a
//! `thymio_rt_msgs/SetPose2D`), and the parameters as `controllers.<controller>.<param>` on the
//! robot's `thymio_driver` node ([`super::driver_node`]), with their ranges and descriptions.
//!
//! The entities are on the bridge node; the NRT loop serves them without waiting
//! ([`Controllers::serve`]): what RT published is drained and published; each message received
//! is stored in its cell and rings the RT thread; a service call is forwarded to the RT side
//! and held (r2r answers a request whenever it is given back) until the RT side answers, or
//! refused after [`SERVICE_TIMEOUT`]. The ports belong to RT robot slots: a robot that goes
//! gives its slot's ports back for the next robot in that slot.

use super::report::Reporter;
use super::thymio_endpoints::{reliable, topic};
use super::{drain, Srv, Sub};
use msgs::handoff::{
    Doorbell, NodeId, NrtControl, NrtControllerPorts, NrtEndpoint, Outcome, ParamDecl, Pose2,
    RequestId, RobotId, RosKind, RosValue, Twist2,
};
use r2r::geometry_msgs::msg::{Pose2D, Twist};
use r2r::std_msgs::msg::{Bool, Float64};
use r2r::std_srvs::srv::{SetBool, Trigger};
use r2r::thymio_rt_msgs::srv::SetPose2D;
use r2r::{Publisher, QosProfile, ServiceRequest};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// Longest wait for an RT controller to answer a service call.
pub const SERVICE_TIMEOUT: Duration = Duration::from_secs(1);

/// Depth of the controllers' topics.
const DEPTH: usize = 10;

enum RosPub {
    Bool(Publisher<Bool>),
    Float64(Publisher<Float64>),
    Pose2D(Publisher<Pose2D>),
    Twist(Publisher<Twist>),
}

enum RosSub {
    Bool(Sub<Bool>),
    Float64(Sub<Float64>),
    Pose2D(Sub<Pose2D>),
    Twist(Sub<Twist>),
}

enum RosSrv {
    Trigger(Srv<Trigger::Service>),
    SetBool(Srv<SetBool::Service>),
    Pose(Srv<SetPose2D::Service>),
}

/// A held call of one of the three service types.
enum Call {
    Trigger(ServiceRequest<Trigger::Service>),
    SetBool(ServiceRequest<SetBool::Service>),
    Pose(ServiceRequest<SetPose2D::Service>),
}

impl Call {
    fn answer(self, success: bool, message: String) {
        // A client that left is not an error of the controller.
        let _ = match self {
            Call::Trigger(c) => c.respond(Trigger::Response { success, message }),
            Call::SetBool(c) => c.respond(SetBool::Response { success, message }),
            Call::Pose(c) => c.respond(SetPose2D::Response { success, message }),
        };
    }
}

/// The ROS side of one endpoint (same index as in its ports).
enum Served {
    Publisher(RosPub),
    Subscriber(RosSub),
    Service {
        srv: RosSrv,
        pending: Vec<(RequestId, Call, Instant)>,
    },
}

/// One robot's served controllers.
struct RobotControllers {
    robot: RobotId,
    /// Per controller (index in `ports[robot]`), per endpoint.
    served: Vec<Vec<Served>>,
}

/// Every controller port, and the ROS entities of the robots being driven.
pub struct Controllers {
    ports: BTreeMap<RobotId, Vec<NrtControllerPorts>>,
    robots: BTreeMap<NodeId, RobotControllers>,
    rt_bell: Doorbell,
    reporter: Reporter,
}

impl Controllers {
    /// The ports of `control` (the owner names go to the switch); subscriber cells and
    /// parameters ring `rt_bell`.
    pub fn new(control: NrtControl, rt_bell: Doorbell, reporter: Reporter) -> Controllers {
        let mut ports: BTreeMap<RobotId, Vec<NrtControllerPorts>> = BTreeMap::new();
        for p in control.ports {
            ports.entry(p.robot).or_default().push(p);
        }
        Controllers {
            ports,
            robots: BTreeMap::new(),
            rt_bell,
            reporter,
        }
    }

    /// Creates robot `id`'s (RT slot `robot`) controller endpoints under `ns` (relative to
    /// `node`'s namespace).
    pub fn add(
        &mut self,
        node: &mut r2r::Node,
        id: NodeId,
        robot: RobotId,
        ns: &str,
    ) -> Result<(), r2r::Error> {
        let mut served = Vec::new();
        for c in self.ports.get(&robot).into_iter().flatten() {
            let mut mine = Vec::new();
            for e in &c.endpoints {
                let name = topic(
                    ns,
                    &format!("thymio_driver/controllers/{}/{}", c.controller, e.name()),
                );
                mine.push(create(node, &name, e)?);
            }
            served.push(mine);
        }
        self.robots.insert(id, RobotControllers { robot, served });
        Ok(())
    }

    /// Destroys robot `id`'s endpoints (held calls are refused); its slot keeps the ports.
    pub fn remove(&mut self, node: &mut r2r::Node, id: NodeId) {
        let Some(r) = self.robots.remove(&id) else {
            return;
        };
        for s in r.served.into_iter().flatten() {
            match s {
                Served::Publisher(p) => match p {
                    RosPub::Bool(p) => node.destroy_publisher(p),
                    RosPub::Float64(p) => node.destroy_publisher(p),
                    RosPub::Pose2D(p) => node.destroy_publisher(p),
                    RosPub::Twist(p) => node.destroy_publisher(p),
                },
                Served::Service { pending, .. } => {
                    for (_, call, _) in pending {
                        call.answer(false, "the robot is no longer driven".into());
                    }
                }
                Served::Subscriber(_) => {}
            }
        }
    }

    /// Publishes what the controllers published, hands ROS messages and calls to them and
    /// answers the calls they answered (or that timed out). Never waits.
    pub fn serve(&mut self, now: Instant) {
        let mut rang = false;
        for (id, r) in self.robots.iter_mut() {
            let Some(ports) = self.ports.get_mut(&r.robot) else {
                continue;
            };
            for (c, served) in ports.iter_mut().zip(r.served.iter_mut()) {
                for (e, s) in c.endpoints.iter_mut().zip(served.iter_mut()) {
                    rang |= serve_one(e, s, now, &self.reporter, *id, c.controller);
                }
            }
        }
        if rang {
            self.rt_bell.ring();
        }
    }

    /// The parameters of robot slot `robot`, as `(controllers.<controller>.<name>, value,
    /// declaration)`.
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

    /// Sets `controllers.<controller>.<param>` of robot slot `robot` (applied at the
    /// controller's next cycle; the RT thread is rung); `Err`: why not (nothing changed).
    pub fn set_param(&mut self, robot: RobotId, name: &str, value: f64) -> Result<(), String> {
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
        c.params.nrt_set(param, value).map_err(|e| e.to_string())?;
        self.rt_bell.ring();
        Ok(())
    }
}

fn create(node: &mut r2r::Node, name: &str, e: &NrtEndpoint) -> Result<Served, r2r::Error> {
    let q = || reliable(DEPTH);
    Ok(match e {
        NrtEndpoint::Publisher { kind, .. } => Served::Publisher(match kind {
            RosKind::Bool => RosPub::Bool(node.create_publisher(name, q())?),
            RosKind::Float64 => RosPub::Float64(node.create_publisher(name, q())?),
            RosKind::Pose2D => RosPub::Pose2D(node.create_publisher(name, q())?),
            // the declarations refuse Empty and Outcome topics
            _ => RosPub::Twist(node.create_publisher(name, q())?),
        }),
        NrtEndpoint::Subscriber { kind, .. } => Served::Subscriber(match kind {
            RosKind::Bool => RosSub::Bool(Box::new(node.subscribe(name, q())?)),
            RosKind::Float64 => RosSub::Float64(Box::new(node.subscribe(name, q())?)),
            RosKind::Pose2D => RosSub::Pose2D(Box::new(node.subscribe(name, q())?)),
            _ => RosSub::Twist(Box::new(node.subscribe(name, q())?)),
        }),
        NrtEndpoint::Service { request, .. } => {
            let d = QosProfile::default;
            let srv = match request {
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
            };
            Served::Service {
                srv,
                pending: Vec::new(),
            }
        }
    })
}

fn pose(p: &Pose2D) -> RosValue {
    RosValue::Pose2D(Pose2 {
        x: p.x,
        y: p.y,
        theta: p.theta,
    })
}

/// Serves one endpoint; whether a value was stored for RT (then the RT thread is rung).
fn serve_one(
    e: &mut NrtEndpoint,
    s: &mut Served,
    now: Instant,
    reporter: &Reporter,
    id: NodeId,
    controller: &str,
) -> bool {
    match (e, s) {
        (NrtEndpoint::Publisher { nrt, name, .. }, Served::Publisher(p)) => {
            let mut failed = None;
            nrt.nrt_drain(|v| {
                let r = match (v, &*p) {
                    (RosValue::Bool(b), RosPub::Bool(p)) => p.publish(&Bool { data: b }),
                    (RosValue::Float64(x), RosPub::Float64(p)) => p.publish(&Float64 { data: x }),
                    (RosValue::Pose2D(q), RosPub::Pose2D(p)) => p.publish(&Pose2D {
                        x: q.x,
                        y: q.y,
                        theta: q.theta,
                    }),
                    (RosValue::Twist(t), RosPub::Twist(p)) => p.publish(&twist(t)),
                    _ => Ok(()),
                };
                if let Err(e) = r {
                    failed = Some(e);
                }
            });
            if let Some(e) = failed {
                reporter.warn(&format!(
                    "node {id}: cannot publish controllers/{controller}/{name}: {e}"
                ));
            }
            false
        }
        (NrtEndpoint::Subscriber { nrt, .. }, Served::Subscriber(sub)) => {
            let last = match sub {
                RosSub::Bool(s) => drain(s).last().map(|m| RosValue::Bool(m.data)),
                RosSub::Float64(s) => drain(s)
                    .filter(|m| m.data.is_finite())
                    .last()
                    .map(|m| RosValue::Float64(m.data)),
                RosSub::Pose2D(s) => drain(s)
                    .filter(|p| [p.x, p.y, p.theta].iter().all(|v| v.is_finite()))
                    .last()
                    .map(|p| pose(&p)),
                RosSub::Twist(s) => drain(s)
                    .filter(|t| t.linear.x.is_finite() && t.angular.z.is_finite())
                    .last()
                    .map(|t| {
                        RosValue::Twist(Twist2 {
                            linear: t.linear.x,
                            angular: t.angular.z,
                        })
                    }),
            };
            match last {
                Some(v) => {
                    nrt.nrt_store(v);
                    true
                }
                None => false,
            }
        }
        (NrtEndpoint::Service { nrt, .. }, Served::Service { srv, pending }) => {
            let calls: Vec<(RosValue, Call)> = match srv {
                RosSrv::Trigger(s) => drain(s)
                    .map(|c| (RosValue::Empty, Call::Trigger(c)))
                    .collect(),
                RosSrv::SetBool(s) => drain(s)
                    .map(|c| (RosValue::Bool(c.message.data), Call::SetBool(c)))
                    .collect(),
                RosSrv::Pose(s) => drain(s)
                    .map(|c| (pose(&c.message.pose), Call::Pose(c)))
                    .collect(),
            };
            let mut rang = false;
            for (v, call) in calls {
                if let RosValue::Pose2D(p) = v {
                    if ![p.x, p.y, p.theta].iter().all(|x| x.is_finite()) {
                        call.answer(false, "the pose must be finite".into());
                        continue;
                    }
                }
                match nrt.nrt_call(v) {
                    Ok(rid) => {
                        pending.push((rid, call, now + SERVICE_TIMEOUT));
                        rang = true;
                    }
                    Err(e) => call.answer(false, format!("{controller}: {e}, try again")),
                }
            }
            while let Some((rid, answer)) = nrt.nrt_poll_response() {
                if let Some(i) = pending.iter().position(|(r, _, _)| *r == rid) {
                    let (_, call, _) = pending.remove(i);
                    match answer {
                        RosValue::Outcome(Outcome { success, message }) => {
                            call.answer(success, message.to_owned())
                        }
                        other => call.answer(false, format!("unexpected answer {other:?}")),
                    }
                }
            }
            let (late, waiting): (Vec<_>, Vec<_>) =
                pending.drain(..).partition(|(_, _, until)| *until <= now);
            *pending = waiting;
            for (_, call, _) in late {
                call.answer(
                    false,
                    format!(
                        "{controller} did not answer within {} ms (is the RT thread running?)",
                        SERVICE_TIMEOUT.as_millis()
                    ),
                );
            }
            rang
        }
        _ => false,
    }
}

fn twist(t: Twist2) -> Twist {
    let mut m = Twist::default();
    m.linear.x = t.linear;
    m.angular.z = t.angular;
    m
}

#[cfg(test)]
mod tests {
    use super::*;
    use msgs::handoff::{ControllerInit, OwnerNames};

    fn controllers(bell: Doorbell) -> (Controllers, msgs::handoff::RtParams) {
        let mut init = ControllerInit::new(RobotId(1), "go_to_pose");
        let speed = init.parameter("max_linear", 0.1, 0.0, 0.3, "top speed (m/s)");
        assert!(speed.is_ok());
        let (rt, ports) = init.finish();
        let control = NrtControl {
            names: OwnerNames::new(vec!["go_to_pose"]),
            ports: vec![ports],
        };
        let mut node = r2r::Node::create(crate::smoke_tests::context(), "ctl_test", "").unwrap();
        let reporter = crate::report::node_reporter(&mut node).unwrap();
        (Controllers::new(control, bell, reporter), rt)
    }

    #[test]
    fn controller_parameters_are_validated_applied_and_ring_the_rt_thread() {
        let bell = Doorbell::new();
        let (mut c, mut rt) = controllers(bell.clone());
        let listed = c.params(RobotId(1));
        assert_eq!(listed.len(), 1);
        let (name, value, decl) = &listed[0];
        assert_eq!(
            (name.as_str(), *value),
            ("controllers.go_to_pose.max_linear", 0.1)
        );
        assert_eq!((decl.min, decl.max), (0.0, 0.3));
        assert!(
            c.params(RobotId(0)).is_empty(),
            "ports belong to their slot"
        );
        let err = c.set_param(RobotId(1), name, 0.5).unwrap_err();
        assert!(err.contains("outside [0, 0.3]"), "{err}");
        assert!(c.set_param(RobotId(1), name, f64::NAN).is_err());
        let err = c
            .set_param(RobotId(1), "controllers.line_follower.kp", 1.0)
            .unwrap_err();
        assert!(err.contains("no controller line_follower"), "{err}");
        assert!(c
            .set_param(RobotId(1), "controllers.go_to_pose", 1.0)
            .is_err());
        assert!(!bell.drain(), "refusals change nothing");
        c.set_param(RobotId(1), name, 0.05).unwrap();
        assert!(bell.drain(), "the RT thread is woken");
        assert!(rt.rt_refresh());
        assert_eq!(c.params(RobotId(1))[0].1, 0.05);
    }
}
