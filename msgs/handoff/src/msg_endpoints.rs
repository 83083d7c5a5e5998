//! ROS from RT for **any** message type: endpoints whose RT half carries a controller's own fixed-size `Copy`
//! value and whose NRT half converts it to and from a ROS message with a conversion function the controller
//! supplies (run on the NRT side only, where allocation is allowed).
//!
//! The message crosses the front ends as a [`MsgValue`]: a `serde_json::Value` in the JSON shape of ROS 2 messages
//! (fields by name, arrays as arrays, `builtin_interfaces/Time` as `{"sec", "nanosec"}`; a field left out takes its
//! default). The ROS 2 front end hands it to r2r's untyped publishers and subscriptions, the ROS 1 front end
//! serialises it from the type's ROS 1 definition (a `std_msgs/Header`'s `seq` is the transport's): one
//! conversion serves both. Types are named the ROS 2 way, `pkg/msg/Type` for topics and `pkg/srv/Type` for
//! services.
//!
//! # Example
//!
//! ```
//! use handoff::{ControllerInit, MsgCtx, MsgValue, NodeId, NrtEndpoint, NrtMessagePort, RobotId};
//!
//! #[derive(Clone, Copy, Default)]
//! struct Target { x: f64, y: f64, t_ns: u64 }
//!
//! fn to_point(t: &Target, ctx: &MsgCtx) -> MsgValue {
//!     serde_json::json!({
//!         "header": ctx.header(t.t_ns, "odom"),
//!         "point": {"x": t.x, "y": t.y},
//!     })
//! }
//!
//! let mut init = ControllerInit::new(RobotId(0), "my_controller");
//! let mut target = init
//!     .message_publisher("target", "geometry_msgs/msg/PointStamped", 4, to_point)
//!     .unwrap();
//! let (_params, mut nrt) = init.finish();
//!
//! // RT cycle: a plain value, no allocation.
//! assert!(target.rt_publish(Target { x: 1.0, y: 2.0, t_ns: 0 }));
//!
//! // NRT (front end): the messages to publish.
//! let NrtEndpoint::Message { port: NrtMessagePort::Publisher(p), .. } = &mut nrt.endpoints[0] else { panic!() };
//! let mut out = Vec::new();
//! p.nrt_drain(&MsgCtx::new(NodeId(1), RobotId(0)), &mut |m| out.push(m));
//! assert_eq!(out[0]["point"]["y"], 2.0);
//! ```

use super::endpoints::{ControllerInit, DeclareError, NrtEndpoint};
use crate::ros_value::{RosType, RosValue};

use super::ids::RobotId;
use super::intake::{intake, Intake, RtIntake};
use super::latest::NrtLatest;
use super::publisher::{publisher, NrtPublisher, RtPublisher};
use super::service::{service, NrtServiceClient, RequestId, RtServiceServer};
use super::values::{Pose2, Twist2};
use std::any::Any;
use std::marker::PhantomData;

pub use crate::msg_port::{
    FromMsg, MsgCallError, MsgCtx, MsgValue, NrtMessageCall, NrtMessageDrain, NrtMessagePort,
    NrtMessageStore, ToMsg,
};

/// Whether `ty` names a type of `kind` (`msg` or `srv`) the ROS 2 way: `pkg/kind/Type`.
pub(crate) fn valid_type(ty: &str, kind: &str) -> bool {
    let mut parts = ty.split('/');
    let (Some(pkg), Some(k), Some(name), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return false;
    };
    let pkg_ok = pkg.chars().next().is_some_and(|c| c.is_ascii_lowercase())
        && pkg
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    let name_ok = name.chars().next().is_some_and(|c| c.is_ascii_uppercase())
        && name.chars().all(|c| c.is_ascii_alphanumeric());
    pkg_ok && k == kind && name_ok
}

/// RT half of a message publisher: typed, never blocks or allocates (a full queue drops and counts).
#[derive(Debug)]
pub struct RtMessagePublisher<T> {
    pub(crate) inner: RtPublisher<T>,
}

impl<T: Copy + Send> RtMessagePublisher<T> {
    /// Queues `value` for publication; false (counted) if the queue is full.
    pub fn rt_publish(&mut self, value: T) -> bool {
        self.inner.rt_publish(value)
    }

    /// Values dropped because the NRT side was behind.
    pub fn rt_dropped(&self) -> u64 {
        self.inner.rt_dropped()
    }
}

/// RT half of a message subscriber: the latest value converted from ROS.
///
/// The flight recorder records each new value when `T` is one of the plain endpoint types (`bool`, `f64`,
/// [`Pose2`], [`Twist2`]: a `geometry_msgs/PoseStamped` goal converted to a `Pose2`), so that a replay puts it back;
/// a value of a type of the controller's own is marked as not recorded.
#[derive(Debug)]
pub struct RtMessageSubscriber<T: Copy + Send + 'static> {
    /// Named in its records by its index among its controller's endpoints.
    inner: RtIntake<MessageIn<T>>,
}

/// The kind of a message subscriber's values: [`RecInput::Topic`](crate::RecInput::Topic) of a plain type,
/// [`RecInput::Unrecorded`](crate::RecInput::Unrecorded) otherwise.
struct MessageIn<T>(PhantomData<T>);

impl<T: Copy + Send + 'static> Intake for MessageIn<T> {
    type Value = T;
    type Key = u8;
    fn rec_input(endpoint: u8, v: T, (robot, controller): (RobotId, u8)) -> crate::RecInput {
        match plain_value(&v) {
            Some(value) => crate::RecInput::Topic {
                robot,
                controller,
                endpoint,
                value,
            },
            None => crate::RecInput::Unrecorded { robot, controller },
        }
    }
}

impl<T: Copy + Send + 'static> RtMessageSubscriber<T> {
    /// The latest value, only if new since the previous read.
    pub fn rt_read_new(&mut self) -> Option<T> {
        self.inner.rt_read_new()
    }

    /// The latest value (the initial one until ROS sends one) and whether it is new.
    pub fn rt_read(&mut self) -> (T, bool) {
        self.inner.rt_read()
    }
}

/// `v` as a [`RosValue`] when `T` is one of the plain endpoint types (a type check, no allocation).
fn plain_value<T: 'static>(v: &T) -> Option<RosValue> {
    let any = v as &dyn Any;
    any.downcast_ref::<Pose2>()
        .map(|p| p.into_value())
        .or_else(|| any.downcast_ref::<Twist2>().map(|t| t.into_value()))
        .or_else(|| any.downcast_ref::<f64>().map(|f| f.into_value()))
        .or_else(|| any.downcast_ref::<bool>().map(|b| b.into_value()))
}

/// The `T` a [`RosValue`] holds, when it holds a `T` (the reverse of [`plain_value`]).
fn from_plain_value<T: Copy + 'static>(v: RosValue) -> Option<T> {
    fn cast<U: 'static, T: Copy + 'static>(u: U) -> Option<T> {
        (&u as &dyn Any).downcast_ref::<T>().copied()
    }
    match v {
        RosValue::Pose2D(p) => cast(p),
        RosValue::Twist(t) => cast(t),
        RosValue::Float64(f) => cast(f),
        RosValue::Bool(b) => cast(b),
        _ => None,
    }
}

/// RT half of a message service: requests converted to `Req`, answered with a `Resp`.
#[derive(Debug)]
pub struct RtMessageService<Req, Resp> {
    pub(crate) inner: RtServiceServer<Req, Resp>,
}

impl<Req: Copy + Send, Resp: Copy + Send> RtMessageService<Req, Resp> {
    /// Answers every pending request with `f`; returns how many were answered (a response that finds its queue
    /// full is lost and its caller times out: the NRT side stopped polling).
    pub fn rt_serve(&mut self, mut f: impl FnMut(Req) -> Resp) -> usize {
        self.inner.rt_serve(|req| {
            unrecorded();
            f(req)
        })
    }
}

/// The flight recorder: a value of the controller's own type was taken, which it cannot record.
fn unrecorded() {
    crate::record::rt_record_controller(|robot, controller| crate::RecInput::Unrecorded {
        robot,
        controller,
    });
}

struct Drain<T> {
    nrt: NrtPublisher<T>,
    to_msg: ToMsg<T>,
}

impl<T: Copy + Send> NrtMessageDrain for Drain<T> {
    fn nrt_drain(&mut self, ctx: &MsgCtx, f: &mut dyn FnMut(MsgValue)) -> usize {
        let to_msg = self.to_msg;
        self.nrt.nrt_drain(|v| f(to_msg(&v, ctx)))
    }
}

struct Store<T> {
    nrt: NrtLatest<T>,
    from_msg: FromMsg<T>,
}

impl<T: Copy + Send + 'static> NrtMessageStore for Store<T> {
    fn nrt_store(&mut self, msg: &MsgValue) -> Result<(), String> {
        let v = (self.from_msg)(msg)?;
        self.nrt.nrt_store(v);
        Ok(())
    }

    fn nrt_store_recorded(&mut self, value: RosValue) -> Result<(), String> {
        let v = from_plain_value::<T>(value).ok_or_else(|| {
            format!(
                "a recorded {:?} value does not fit this subscriber's type ({})",
                value.kind(),
                std::any::type_name::<T>()
            )
        })?;
        self.nrt.nrt_store(v);
        Ok(())
    }
}

struct Call<Req, Resp> {
    nrt: NrtServiceClient<Req, Resp>,
    from_request: FromMsg<Req>,
    to_response: ToMsg<Resp>,
}

impl<Req: Copy + Send, Resp: Copy + Send> NrtMessageCall for Call<Req, Resp> {
    fn nrt_call(&mut self, request: &MsgValue) -> Result<RequestId, MsgCallError> {
        let r = (self.from_request)(request).map_err(MsgCallError::Refused)?;
        Ok(self.nrt.nrt_call(r)?)
    }

    fn nrt_poll_response(&mut self, ctx: &MsgCtx) -> Option<(RequestId, MsgValue)> {
        let (id, r) = self.nrt.nrt_poll_response()?;
        Some((id, (self.to_response)(&r, ctx)))
    }
}

/// Both halves of a message publisher.
pub(crate) fn message_publisher<T: Copy + Send + 'static>(
    capacity: usize,
    to_msg: ToMsg<T>,
) -> (RtMessagePublisher<T>, NrtMessagePort) {
    let (rt, nrt) = publisher(capacity);
    (
        RtMessagePublisher { inner: rt },
        NrtMessagePort::Publisher(Box::new(Drain { nrt, to_msg })),
    )
}

/// Both halves of a message subscriber.
pub(crate) fn message_subscriber<T: Copy + Send + 'static>(
    initial: T,
    from_msg: FromMsg<T>,
    endpoint: u8,
) -> (RtMessageSubscriber<T>, NrtMessagePort) {
    let (rt, nrt) = intake(initial, endpoint);
    (
        RtMessageSubscriber { inner: rt },
        NrtMessagePort::Subscriber(Box::new(Store { nrt, from_msg })),
    )
}

/// Both halves of a message service.
pub(crate) fn message_service<Req: Copy + Send + 'static, Resp: Copy + Send + 'static>(
    from_request: FromMsg<Req>,
    to_response: ToMsg<Resp>,
) -> (RtMessageService<Req, Resp>, NrtMessagePort) {
    let (rt, nrt) = service(4);
    (
        RtMessageService { inner: rt },
        NrtMessagePort::Service(Box::new(Call {
            nrt,
            from_request,
            to_response,
        })),
    )
}

impl ControllerInit {
    fn check_type(
        &self,
        name: &'static str,
        ty: &'static str,
        expected: &'static str,
    ) -> Result<(), DeclareError> {
        self.claim(name)?;
        if valid_type(ty, expected) {
            Ok(())
        } else {
            Err(DeclareError::BadType {
                controller: self.controller(),
                name,
                ty,
                expected,
            })
        }
    }

    /// A topic of ROS type `ty` (`pkg/msg/Type`) published from RT: RT queues `T` values (`capacity` in flight),
    /// the front end publishes `to_msg` of each.
    pub fn message_publisher<T: Copy + Send + 'static>(
        &mut self,
        name: &'static str,
        ty: &'static str,
        capacity: usize,
        to_msg: ToMsg<T>,
    ) -> Result<RtMessagePublisher<T>, DeclareError> {
        self.check_type(name, ty, "msg")?;
        let (rt, port) = message_publisher(capacity, to_msg);
        self.endpoints.push(NrtEndpoint::Message { name, ty, port });
        Ok(rt)
    }

    /// A topic of ROS type `ty` (`pkg/msg/Type`) subscribed for RT: each message is converted by `from_msg`
    /// (a refusal is logged and nothing reaches RT), RT reads the latest value (`initial` until the first).
    pub fn message_subscriber<T: Copy + Send + 'static>(
        &mut self,
        name: &'static str,
        ty: &'static str,
        initial: T,
        from_msg: FromMsg<T>,
    ) -> Result<RtMessageSubscriber<T>, DeclareError> {
        self.check_type(name, ty, "msg")?;
        let endpoint = self.endpoints.len() as u8;
        let (rt, port) = message_subscriber(initial, from_msg, endpoint);
        self.endpoints.push(NrtEndpoint::Message { name, ty, port });
        Ok(rt)
    }

    /// A service of ROS type `ty` (`pkg/srv/Type`) served in RT: each request is converted by `from_request`
    /// (a refusal fails the call), RT answers a `Resp`, the caller gets `to_response` of it.
    pub fn message_service<Req: Copy + Send + 'static, Resp: Copy + Send + 'static>(
        &mut self,
        name: &'static str,
        ty: &'static str,
        from_request: FromMsg<Req>,
        to_response: ToMsg<Resp>,
    ) -> Result<RtMessageService<Req, Resp>, DeclareError> {
        self.check_type(name, ty, "srv")?;
        let (rt, port) = message_service(from_request, to_response);
        self.endpoints.push(NrtEndpoint::Message { name, ty, port });
        Ok(rt)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::{NodeId, RobotId};

    #[test]
    fn plain_values_go_both_ways_and_other_types_are_not_plain() {
        let p = Pose2 {
            x: 1.0,
            y: -2.0,
            theta: 0.5,
        };
        assert_eq!(plain_value(&p), Some(RosValue::Pose2D(p)));
        assert_eq!(from_plain_value::<Pose2>(RosValue::Pose2D(p)), Some(p));
        assert_eq!(plain_value(&true), Some(RosValue::Bool(true)));
        assert_eq!(from_plain_value::<f64>(RosValue::Float64(0.25)), Some(0.25));
        #[derive(Clone, Copy)]
        struct Own(#[allow(dead_code)] f64);
        assert_eq!(plain_value(&Own(1.0)), None);
        assert_eq!(plain_value(&3u8), None);
        assert!(from_plain_value::<Own>(RosValue::Float64(1.0)).is_none());
        assert!(from_plain_value::<f64>(RosValue::Pose2D(p)).is_none());
    }

    #[test]
    fn a_recorded_value_is_stored_back_only_into_its_type() {
        fn from(_: &MsgValue) -> Result<Pose2, String> {
            Ok(Pose2::default())
        }
        let mut i = ControllerInit::new(RobotId(0), "c");
        let mut rt = i
            .message_subscriber(
                "goal",
                "geometry_msgs/msg/PoseStamped",
                Pose2::default(),
                from,
            )
            .unwrap();
        let (_, mut nrt) = i.finish();
        let NrtEndpoint::Message {
            port: NrtMessagePort::Subscriber(store),
            ..
        } = &mut nrt.endpoints[0]
        else {
            panic!()
        };
        let p = Pose2 {
            x: 0.5,
            ..Pose2::default()
        };
        store.nrt_store_recorded(RosValue::Pose2D(p)).unwrap();
        assert_eq!(rt.rt_read_new(), Some(p));
        assert!(store.nrt_store_recorded(RosValue::Bool(true)).is_err());
        assert_eq!(rt.rt_read_new(), None);
    }

    #[test]
    fn type_names_are_checked_the_ros_2_way() {
        assert!(valid_type("geometry_msgs/msg/PointStamped", "msg"));
        assert!(valid_type("my_pkg2/srv/DoIt", "srv"));
        for bad in [
            "geometry_msgs/PointStamped",
            "geometry_msgs/srv/PointStamped",
            "Geometry/msg/Point",
            "geometry_msgs/msg/point",
            "a/msg/B/C",
            "",
        ] {
            assert!(!valid_type(bad, "msg"), "{bad}");
        }
    }

    #[test]
    fn declarations_check_names_and_types() {
        fn to(_: &u8, _: &MsgCtx) -> MsgValue {
            MsgValue::Null
        }
        fn from(_: &MsgValue) -> Result<u8, String> {
            Ok(0)
        }
        let mut i = ControllerInit::new(RobotId(0), "c");
        i.message_publisher("p", "sensor_msgs/msg/JointState", 2, to)
            .unwrap();
        assert!(matches!(
            i.message_subscriber("p", "std_msgs/msg/Int8", 0, from),
            Err(DeclareError::Duplicate { .. })
        ));
        assert!(matches!(
            i.message_subscriber("s", "std_msgs/Int8", 0, from),
            Err(DeclareError::BadType {
                expected: "msg",
                ..
            })
        ));
        assert!(matches!(
            i.message_service("v", "std_srvs/msg/SetBool", from, to),
            Err(DeclareError::BadType {
                expected: "srv",
                ..
            })
        ));
        i.message_service("v", "std_srvs/srv/SetBool", from, to)
            .unwrap();
        let (_, nrt) = i.finish();
        let tys: Vec<_> = nrt
            .endpoints
            .iter()
            .map(|e| match e {
                NrtEndpoint::Message { ty, .. } => *ty,
                _ => "",
            })
            .collect();
        assert_eq!(tys, ["sensor_msgs/msg/JointState", "std_srvs/srv/SetBool"]);
    }

    #[test]
    fn stamps_follow_the_system_clock() {
        let ctx = MsgCtx::new(NodeId(1), RobotId(0));
        let now = crate::params::monotonic_ns();
        let s = ctx.stamp(now);
        let sys = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs() as i64;
        assert!((s["sec"].as_i64().unwrap() - sys).abs() <= 1, "{s}");
        let earlier = ctx.stamp(now - 2_000_000_000);
        assert_eq!(
            s["sec"].as_i64().unwrap() - earlier["sec"].as_i64().unwrap(),
            2
        );
        assert_eq!(ctx.header(now, "odom")["frame_id"], "odom");
    }

    #[test]
    fn services_convert_both_ways_and_refuse_bad_requests() {
        fn req(m: &MsgValue) -> Result<i32, String> {
            m["a"].as_i64().map(|a| a as i32).ok_or("no a".into())
        }
        fn resp(r: &i64, _: &MsgCtx) -> MsgValue {
            serde_json::json!({"sum": r})
        }
        let (mut rt, port) = message_service(req, resp);
        let NrtMessagePort::Service(mut nrt) = port else {
            panic!()
        };
        assert_eq!(
            nrt.nrt_call(&serde_json::json!({})),
            Err(MsgCallError::Refused("no a".into()))
        );
        let id = nrt.nrt_call(&serde_json::json!({"a": 20})).unwrap();
        assert_eq!(rt.rt_serve(|a| i64::from(a) + 22), 1);
        let ctx = MsgCtx::new(NodeId(1), RobotId(0));
        assert_eq!(
            nrt.nrt_poll_response(&ctx),
            Some((id, serde_json::json!({"sum": 42})))
        );
    }

    #[test]
    fn subscribers_store_converted_values() {
        fn from(m: &MsgValue) -> Result<f64, String> {
            m["data"]
                .as_f64()
                .ok_or_else(|| format!("not a number: {m}"))
        }
        let (mut rt, port) = message_subscriber(0.5, from, 0);
        let NrtMessagePort::Subscriber(mut nrt) = port else {
            panic!()
        };
        assert!(nrt.nrt_store(&serde_json::json!({"data": "x"})).is_err());
        assert_eq!(rt.rt_read(), (0.5, false));
        nrt.nrt_store(&serde_json::json!({"data": 2.0})).unwrap();
        assert_eq!(rt.rt_read_new(), Some(2.0));
    }
}
