//! ROS from RT: the endpoints an RT controller declares at init (NRT side) and uses in the RT
//! cycle — publishers, subscribers (latest value), service servers and live parameters — typed
//! on the RT side, type-erased on the NRT side so that a ROS front end (ROS 2 or ROS 1) serves
//! them under `~/controllers/<controller>/<endpoint>` without knowing the controller.
//!
//! Values cross as [`RosValue`] (`Copy`, fixed size): the RT half never allocates. The front end
//! maps each [`RosKind`] to a ROS type:
//!
//! | kind | topic type | as a service request | as a service response |
//! |---|---|---|---|
//! | `Empty` | — | `std_srvs/Trigger` | — |
//! | `Bool` | `std_msgs/Bool` | `std_srvs/SetBool` | — |
//! | `Float64` | `std_msgs/Float64` | — | — |
//! | `Pose2D` | `geometry_msgs/Pose2D` | `thymio_rt_msgs/SetPose2D` | — |
//! | `Twist` | `geometry_msgs/Twist` | — | — |
//! | `Outcome` | — | — | `success` + `message` of the three services |
//!
//! A service's request kind picks its type; its response is always `Outcome`.
//!
//! Any other ROS type: [`ControllerInit::message_publisher`], [`ControllerInit::message_subscriber`] and
//! [`ControllerInit::message_service`] ([`crate::msg_endpoints`]) carry a controller's own `Copy` value on the RT
//! side and convert it with the controller's functions on the NRT side (kind [`RosKind::Message`]).
//!
//! # Example
//!
//! ```
//! use handoff::{ControllerInit, NrtEndpoint, Pose2, RobotId};
//!
//! let mut init = ControllerInit::new(RobotId(0), "go_to_pose");
//! let mut goal = init.subscriber::<Pose2>("goal", Pose2::default()).unwrap();
//! let mut reached = init.publisher::<bool>("reached", 4).unwrap();
//! let speed = init.parameter("speed", 0.1, 0.0, 0.2, "cruise speed (m/s)").unwrap();
//! let (mut params, mut nrt) = init.finish();
//!
//! // NRT (front end): a ROS message arrived on ~/controllers/go_to_pose/goal.
//! let NrtEndpoint::Subscriber { nrt: cell, .. } = &mut nrt.endpoints[0] else { panic!() };
//! cell.nrt_store(handoff::RosValue::Pose2D(Pose2 { x: 1.0, y: 0.0, theta: 0.0 }));
//! nrt.params.nrt_set("speed", 0.15).unwrap();
//!
//! // RT cycle.
//! assert_eq!(goal.rt_read_new().map(|p| p.x), Some(1.0));
//! params.rt_refresh();
//! assert_eq!(params.get(speed), 0.15);
//! assert!(reached.rt_publish(true));
//! ```

use super::ids::RobotId;
use super::intake::{intake, intake_kinds, RtIntake};
use super::latest::NrtLatest;
use super::publisher::{publisher, NrtPublisher, RtPublisher};
use super::record::{rt_record_controller, RecInput};
use super::service::{service, NrtServiceClient, RequestId, RtServiceServer};
use crate::controller_params::{NrtParams, ParamDecl, ParamId, RtParams};
use crate::ros_value::{Outcome, ParamBlock, RosKind, RosType, RosValue, MAX_PARAMS};
use std::marker::PhantomData;

/// Why a declaration was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DeclareError {
    /// An endpoint or parameter of that name exists.
    #[error("controller {controller}: `{name}` is declared twice")]
    Duplicate {
        /// Controller.
        controller: &'static str,
        /// Name.
        name: &'static str,
    },
    /// Not a valid ROS name part (`[a-z][a-z0-9_]*`).
    #[error("controller {controller}: `{name}` is not a valid name ([a-z][a-z0-9_]*)")]
    BadName {
        /// Controller.
        controller: &'static str,
        /// Name.
        name: &'static str,
    },
    /// No ROS type for this kind in this role (see the module table).
    #[error("controller {controller}: `{name}` cannot be a {role} of {kind:?}")]
    Unsupported {
        /// Controller.
        controller: &'static str,
        /// Name.
        name: &'static str,
        /// Publisher, subscriber, service.
        role: &'static str,
        /// Kind.
        kind: RosKind,
    },
    /// A parameter declared after [`ControllerInit::rt_params`].
    #[error("controller {controller}: parameter `{name}` declared after rt_params()")]
    ParamsSealed {
        /// Controller.
        controller: &'static str,
        /// Name.
        name: &'static str,
    },
    /// More than [`MAX_PARAMS`] parameters.
    #[error("controller {controller}: more than {MAX_PARAMS} parameters")]
    TooManyParams {
        /// Controller.
        controller: &'static str,
    },
    /// A message or service type not named `pkg/msg/Type` (topics) or `pkg/srv/Type` (services).
    #[error("controller {controller}: `{name}`: `{ty}` is not a {expected} type name (pkg/{expected}/Type)")]
    BadType {
        /// Controller.
        controller: &'static str,
        /// Endpoint.
        name: &'static str,
        /// The type as given.
        ty: &'static str,
        /// `msg` or `srv`.
        expected: &'static str,
    },
    /// A parameter's default is outside its range or not finite.
    #[error("controller {controller}: parameter `{name}` default {default} not in [{min}, {max}]")]
    BadDefault {
        /// Controller.
        controller: &'static str,
        /// Name.
        name: &'static str,
        /// Default.
        default: f64,
        /// Minimum.
        min: f64,
        /// Maximum.
        max: f64,
    },
}

/// RT half of a publisher endpoint: typed, never blocks or allocates (a full queue drops and
/// counts).
#[derive(Debug)]
pub struct RtTopicPublisher<T: RosType> {
    inner: RtPublisher<RosValue>,
    _t: PhantomData<T>,
}

impl<T: RosType> RtTopicPublisher<T> {
    /// Queues `value` for publication; false (counted) if the queue is full.
    pub fn rt_publish(&mut self, value: T) -> bool {
        self.inner.rt_publish(value.into_value())
    }

    /// Values dropped because the NRT side was behind.
    pub fn rt_dropped(&self) -> u64 {
        self.inner.rt_dropped()
    }
}

/// RT half of a subscriber endpoint: the latest value received from ROS.
#[derive(Debug)]
pub struct RtTopicSubscriber<T: RosType> {
    /// Named in its records by its index among its controller's endpoints.
    inner: RtIntake<TopicIn>,
    _t: PhantomData<T>,
}

intake_kinds! {
    TopicIn(endpoint: u8, value: RosValue, (robot, controller)) =>
        RecInput::Topic { robot, controller, endpoint, value };
}

impl<T: RosType> RtTopicSubscriber<T> {
    /// The latest value, only if new since the previous read.
    pub fn rt_read_new(&mut self) -> Option<T> {
        T::from_value(self.inner.rt_read_new()?)
    }

    /// The latest value (the initial one until ROS sends one) and whether it is new.
    pub fn rt_read(&mut self) -> (Option<T>, bool) {
        let (v, new) = self.inner.rt_read();
        (T::from_value(v), new)
    }
}

/// RT half of a service endpoint: requests of type `Req`, answered with an [`Outcome`].
#[derive(Debug)]
pub struct RtServiceEndpoint<Req: RosType> {
    inner: RtServiceServer<RosValue, RosValue>,
    /// Its index among its controller's endpoints.
    endpoint: u8,
    _t: PhantomData<Req>,
}

impl<Req: RosType> RtServiceEndpoint<Req> {
    /// Answers every pending request with `f` (a request of a wrong kind is refused); returns
    /// how many were answered.
    pub fn rt_serve(&mut self, mut f: impl FnMut(Req) -> Outcome) -> usize {
        let mut n = 0;
        while let Some((id, req)) = self.inner.rt_next_request() {
            let endpoint = self.endpoint;
            rt_record_controller(|robot, controller| RecInput::ServiceRequest {
                robot,
                controller,
                endpoint,
                request: req,
            });
            let out = match Req::from_value(req) {
                Some(r) => f(r),
                None => Outcome::refused("request of the wrong type"),
            };
            self.respond(id, out);
            n += 1;
        }
        n
    }

    fn respond(&mut self, id: RequestId, out: Outcome) {
        // A full response queue means the NRT side stopped polling: the answer is lost and
        // its caller times out.
        let _ = self.inner.rt_respond(id, RosValue::Outcome(out));
    }
}

/// NRT half of one endpoint, with what the front end needs to serve it.
#[derive(Debug)]
pub enum NrtEndpoint {
    /// RT publishes; the front end drains and publishes on ROS.
    Publisher {
        /// Name under `~/controllers/<controller>/`.
        name: &'static str,
        /// Kind.
        kind: RosKind,
        /// Queue.
        nrt: NrtPublisher<RosValue>,
    },
    /// The front end subscribes and stores each message; RT reads the latest.
    Subscriber {
        /// Name.
        name: &'static str,
        /// Kind.
        kind: RosKind,
        /// Cell.
        nrt: NrtLatest<RosValue>,
    },
    /// The front end serves a ROS service by forwarding the request and polling the answer.
    Service {
        /// Name.
        name: &'static str,
        /// Request kind (picks the ROS service type); the response is an [`Outcome`].
        request: RosKind,
        /// Request / response rings.
        nrt: NrtServiceClient<RosValue, RosValue>,
    },
    /// An endpoint of any ROS type (publisher, subscriber or service by its port), whose values the controller's
    /// functions convert on the NRT side ([`crate::msg_endpoints`]).
    Message {
        /// Name.
        name: &'static str,
        /// The ROS type, `pkg/msg/Type` (topics) or `pkg/srv/Type` (services).
        ty: &'static str,
        /// The type-erased NRT half.
        port: super::msg_endpoints::NrtMessagePort,
    },
}

impl NrtEndpoint {
    /// The endpoint's name.
    pub fn name(&self) -> &'static str {
        match self {
            NrtEndpoint::Publisher { name, .. }
            | NrtEndpoint::Subscriber { name, .. }
            | NrtEndpoint::Service { name, .. }
            | NrtEndpoint::Message { name, .. } => name,
        }
    }
}

/// Everything the NRT side serves for one controller on one robot.
#[derive(Debug)]
pub struct NrtControllerPorts {
    /// Robot slot.
    pub robot: RobotId,
    /// Controller name (registry name; also its owner name).
    pub controller: &'static str,
    /// Endpoints, in declaration order.
    pub endpoints: Vec<NrtEndpoint>,
    /// Parameters.
    pub params: NrtParams,
    /// A controller's own NRT half beyond ROS endpoints (e.g. the calibration action's rings),
    /// for the front-end code that knows its type ([`ControllerInit::private_port`]).
    pub private: Option<PrivatePort>,
}

/// A controller-specific NRT half, downcast by the code that knows it.
pub struct PrivatePort(pub Box<dyn std::any::Any + Send>);

impl std::fmt::Debug for PrivatePort {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PrivatePort(..)")
    }
}

/// What the NRT side gets from a controller registry: the owner names and every controller's
/// ports on every robot slot.
#[derive(Debug, Default)]
pub struct NrtControl {
    /// `ros`, `joint` and the controllers, by owner id.
    pub names: super::control::OwnerNames,
    /// Ports of every (robot slot, controller).
    pub ports: Vec<NrtControllerPorts>,
}

/// Collects one controller's declarations for one robot (NRT side, at init).
#[derive(Debug)]
pub struct ControllerInit {
    robot: RobotId,
    controller: &'static str,
    pub(crate) endpoints: Vec<NrtEndpoint>,
    decls: Vec<ParamDecl>,
    private: Option<PrivatePort>,
    /// NRT half of the parameter cell, once the RT half was taken.
    sealed: Option<NrtLatest<ParamBlock>>,
}

fn valid_name(name: &str) -> bool {
    let mut c = name.chars();
    c.next().is_some_and(|f| f.is_ascii_lowercase())
        && c.all(|x| x.is_ascii_lowercase() || x.is_ascii_digit() || x == '_')
}

impl ControllerInit {
    /// Declarations of `controller` for `robot`.
    pub fn new(robot: RobotId, controller: &'static str) -> Self {
        ControllerInit {
            robot,
            controller,
            endpoints: Vec::new(),
            decls: Vec::new(),
            private: None,
            sealed: None,
        }
    }

    /// Hands the NRT side a controller-specific half (replaces an earlier one).
    pub fn private_port(&mut self, port: Box<dyn std::any::Any + Send>) {
        self.private = Some(PrivatePort(port));
    }

    /// The robot the controller instance serves.
    pub fn robot(&self) -> RobotId {
        self.robot
    }

    /// The controller's name.
    pub fn controller(&self) -> &'static str {
        self.controller
    }

    pub(crate) fn claim(&self, name: &'static str) -> Result<(), DeclareError> {
        let c = self.controller;
        if !valid_name(name) {
            return Err(DeclareError::BadName {
                controller: c,
                name,
            });
        }
        if self.endpoints.iter().any(|e| e.name() == name)
            || self.decls.iter().any(|d| d.name == name)
        {
            return Err(DeclareError::Duplicate {
                controller: c,
                name,
            });
        }
        Ok(())
    }

    fn unsupported(&self, name: &'static str, role: &'static str, kind: RosKind) -> DeclareError {
        DeclareError::Unsupported {
            controller: self.controller,
            name,
            role,
            kind,
        }
    }

    /// A topic published from RT (`capacity` values in flight).
    pub fn publisher<T: RosType>(
        &mut self,
        name: &'static str,
        capacity: usize,
    ) -> Result<RtTopicPublisher<T>, DeclareError> {
        self.claim(name)?;
        if matches!(T::KIND, RosKind::Empty | RosKind::Outcome) {
            return Err(self.unsupported(name, "publisher", T::KIND));
        }
        let (rt, nrt) = publisher(capacity);
        self.endpoints.push(NrtEndpoint::Publisher {
            name,
            kind: T::KIND,
            nrt,
        });
        Ok(RtTopicPublisher {
            inner: rt,
            _t: PhantomData,
        })
    }

    /// A topic subscribed for RT (latest value; `initial` until the first message).
    pub fn subscriber<T: RosType>(
        &mut self,
        name: &'static str,
        initial: T,
    ) -> Result<RtTopicSubscriber<T>, DeclareError> {
        self.claim(name)?;
        if matches!(T::KIND, RosKind::Empty | RosKind::Outcome) {
            return Err(self.unsupported(name, "subscriber", T::KIND));
        }
        let (rt, nrt) = intake(initial.into_value(), self.endpoints.len() as u8);
        self.endpoints.push(NrtEndpoint::Subscriber {
            name,
            kind: T::KIND,
            nrt,
        });
        Ok(RtTopicSubscriber {
            inner: rt,
            _t: PhantomData,
        })
    }

    /// A service served in RT: requests of type `Req` (`()`, `bool` or [`Pose2`]).
    pub fn service<Req: RosType>(
        &mut self,
        name: &'static str,
    ) -> Result<RtServiceEndpoint<Req>, DeclareError> {
        self.claim(name)?;
        if !matches!(Req::KIND, RosKind::Empty | RosKind::Bool | RosKind::Pose2D) {
            return Err(self.unsupported(name, "service", Req::KIND));
        }
        let (rt, nrt) = service(4);
        let endpoint = self.endpoints.len() as u8;
        self.endpoints.push(NrtEndpoint::Service {
            name,
            request: Req::KIND,
            nrt,
        });
        Ok(RtServiceEndpoint {
            inner: rt,
            endpoint,
            _t: PhantomData,
        })
    }

    /// A live parameter in `[min, max]`.
    pub fn parameter(
        &mut self,
        name: &'static str,
        default: f64,
        min: f64,
        max: f64,
        description: &'static str,
    ) -> Result<ParamId, DeclareError> {
        self.claim(name)?;
        if self.sealed.is_some() {
            return Err(DeclareError::ParamsSealed {
                controller: self.controller,
                name,
            });
        }
        if self.decls.len() >= MAX_PARAMS {
            return Err(DeclareError::TooManyParams {
                controller: self.controller,
            });
        }
        if !(default.is_finite() && min <= default && default <= max) {
            return Err(DeclareError::BadDefault {
                controller: self.controller,
                name,
                default,
                min,
                max,
            });
        }
        self.decls.push(ParamDecl {
            name,
            default,
            min,
            max,
            description,
        });
        Ok(ParamId((self.decls.len() - 1) as u8))
    }

    fn param_cell(&self) -> (RtParams, NrtLatest<ParamBlock>) {
        let mut block = [0.0; MAX_PARAMS];
        for (i, d) in self.decls.iter().enumerate() {
            block[i] = d.default;
        }
        let (rt, nrt) = intake(block, ());
        (
            RtParams {
                cell: rt,
                values: block,
            },
            nrt,
        )
    }

    /// The RT half of the parameters declared so far (their defaults until NRT writes); no
    /// parameter can be declared after. Call it once, after the last [`ControllerInit::parameter`].
    pub fn rt_params(&mut self) -> RtParams {
        let (rt, nrt) = self.param_cell();
        self.sealed = Some(nrt);
        rt
    }

    /// Ends the declarations: the NRT ports (for the front end).
    pub fn finish_ports(mut self) -> NrtControllerPorts {
        // Without an RT half taken, the parameters are served but nobody reads them.
        let cell = match self.sealed.take() {
            Some(c) => c,
            None => self.param_cell().1,
        };
        NrtControllerPorts {
            robot: self.robot,
            controller: self.controller,
            endpoints: self.endpoints,
            params: NrtParams {
                decls: self.decls,
                cell,
            },
            private: self.private,
        }
    }

    /// Ends the declarations: the RT parameter half (for the controller) and the NRT ports
    /// (for the front end).
    pub fn finish(mut self) -> (RtParams, NrtControllerPorts) {
        let rt = self.rt_params();
        (rt, self.finish_ports())
    }
}

#[cfg(test)]
#[path = "endpoints_tests.rs"]
mod tests;
