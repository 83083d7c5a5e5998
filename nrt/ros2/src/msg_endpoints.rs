//! RT controllers' endpoints of **any** ROS 2 type ([`handoff::msg_endpoints`]): topics through r2r's untyped
//! publishers and subscriptions (every type r2r generated bindings for: the packages of `IDL_PACKAGE_FILTER` when
//! the driver was built), services through typed r2r services chosen by type name from a table: std_srvs' and
//! thymio_rt_msgs' services, and any the program adds with [`register_service_type`] before the bridge starts
//! (r2r has no untyped service server).
//!
//! A call the layer refuses (bad request, timeout, robot gone) is answered with the response type's defaults and,
//! where the type has them, `success: false` and the reason in `message` (a ROS 2 service has no failure reply).

use super::drain;
use futures::Stream;
use handoff::MsgValue;
use nrt_interface::controllers::MsgAnswer;
use r2r::{QosProfile, WrappedNativeMsgUntyped, WrappedServiceTypeSupport};
use std::sync::Mutex;

/// An untyped subscription's stream.
pub type MsgSub = Box<dyn Stream<Item = r2r::Result<MsgValue>> + Unpin>;

/// A call taken from a service, with the way to answer it.
pub type TakenCall = (MsgValue, Box<dyn FnOnce(MsgAnswer) + Send>);

/// A service server of some ROS 2 type whose requests and responses cross as [`MsgValue`]s.
pub trait JsonService {
    /// The calls pending now (never waits).
    fn take(&mut self) -> Vec<TakenCall>;
}

struct Typed<T: WrappedServiceTypeSupport>(super::Srv<T>);

impl<T: WrappedServiceTypeSupport + 'static> JsonService for Typed<T> {
    fn take(&mut self) -> Vec<TakenCall> {
        drain(&mut self.0)
            .map(|call| {
                let req = serde_json::to_value(&call.message).unwrap_or(MsgValue::Null);
                let answer = move |a: MsgAnswer| {
                    let resp = match a {
                        Ok(v) => serde_json::from_value::<T::Response>(v).unwrap_or_else(|e| {
                            refusal::<T::Response>(&format!(
                                "the controller's response does not fit the type: {e}"
                            ))
                        }),
                        Err(why) => refusal::<T::Response>(&why),
                    };
                    // a client that left is not an error of the controller
                    let _ = call.respond(resp);
                };
                (req, Box::new(answer) as Box<dyn FnOnce(MsgAnswer) + Send>)
            })
            .collect()
    }
}

/// The defaults of `R`, with `success: false` and `message: why` where `R` has such fields.
fn refusal<R: r2r::WrappedTypesupport>(why: &str) -> R {
    serde_json::from_value(serde_json::json!({"success": false, "message": why}))
        .unwrap_or_default()
}

/// Makes a service server of one type.
type Maker = fn(&mut r2r::Node, &str) -> r2r::Result<Box<dyn JsonService>>;

fn maker<T: WrappedServiceTypeSupport + 'static>(
    node: &mut r2r::Node,
    name: &str,
) -> r2r::Result<Box<dyn JsonService>> {
    let s = node.create_service::<T>(name, QosProfile::default())?;
    Ok(Box::new(Typed::<T>(Box::new(s))))
}

/// Service types added by the program ([`register_service_type`]).
static EXTRA: Mutex<Vec<(&'static str, Maker)>> = Mutex::new(Vec::new());

/// Lets RT controllers serve services of type `ty` (`pkg/srv/Type`, r2r's `S`) on ROS 2: call it before the
/// bridge starts, e.g. in a controller crate's `main` for a service type of its own package.
pub fn register_service_type<S: WrappedServiceTypeSupport + 'static>(ty: &'static str) {
    let mut extra = EXTRA.lock().unwrap_or_else(|e| e.into_inner());
    extra.retain(|(t, _)| *t != ty);
    extra.push((ty, maker::<S>));
}

fn service_maker(ty: &str) -> Option<Maker> {
    use r2r::{std_srvs::srv as std, thymio_rt_msgs::srv as own};
    Some(match ty {
        "std_srvs/srv/Empty" => maker::<std::Empty::Service>,
        "std_srvs/srv/SetBool" => maker::<std::SetBool::Service>,
        "std_srvs/srv/Trigger" => maker::<std::Trigger::Service>,
        "thymio_rt_msgs/srv/SetPose2D" => maker::<own::SetPose2D::Service>,
        "thymio_rt_msgs/srv/SwitchController" => maker::<own::SwitchController::Service>,
        _ => {
            let extra = EXTRA.lock().unwrap_or_else(|e| e.into_inner());
            return extra.iter().find(|(t, _)| *t == ty).map(|(_, m)| *m);
        }
    })
}

/// Why an endpoint type cannot be served on ROS 2.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TypeError {
    /// r2r has no bindings for this message type.
    #[error(
        "{0}: no ROS 2 bindings for this message type in this build (r2r generates the packages of \
         IDL_PACKAGE_FILTER found on AMENT_PREFIX_PATH when the driver is built)"
    )]
    Message(String),
    /// No service server for this type.
    #[error(
        "{0}: no ROS 2 service server for this type (known: std_srvs Empty/SetBool/Trigger, thymio_rt_msgs; \
         a program adds its own with nrt_ros2::msg_endpoints::register_service_type)"
    )]
    Service(String),
}

/// Checks that an endpoint of ROS type `ty` (`pkg/msg/Type` or `pkg/srv/Type`) can be served.
pub fn check_type(ty: &str) -> Result<(), TypeError> {
    if ty.contains("/srv/") {
        service_maker(ty)
            .map(|_| ())
            .ok_or_else(|| TypeError::Service(ty.into()))
    } else {
        WrappedNativeMsgUntyped::new_from(ty)
            .map(|_| ())
            .map_err(|_| TypeError::Message(ty.into()))
    }
}

/// A publisher of type `ty` on `name`.
pub fn publisher(
    node: &mut r2r::Node,
    name: &str,
    ty: &str,
    qos: QosProfile,
) -> r2r::Result<r2r::PublisherUntyped> {
    node.create_publisher_untyped(name, ty, qos)
}

/// A subscription of type `ty` on `name`.
pub fn subscription(
    node: &mut r2r::Node,
    name: &str,
    ty: &str,
    qos: QosProfile,
) -> r2r::Result<MsgSub> {
    Ok(Box::new(node.subscribe_untyped(name, ty, qos)?))
}

/// A service server of type `ty` on `name`.
pub fn service(
    node: &mut r2r::Node,
    name: &str,
    ty: &str,
) -> Result<Box<dyn JsonService>, r2r::Error> {
    let make = service_maker(ty).ok_or_else(|| r2r::Error::InvalidMessageType {
        msgtype: ty.to_owned(),
    })?;
    make(node, name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_are_checked_against_the_bindings_and_the_service_table() {
        assert_eq!(check_type("geometry_msgs/msg/PointStamped"), Ok(()));
        assert_eq!(check_type("sensor_msgs/msg/JointState"), Ok(()));
        assert_eq!(check_type("std_srvs/srv/SetBool"), Ok(()));
        assert!(matches!(
            check_type("no_such_msgs/msg/Thing"),
            Err(TypeError::Message(_))
        ));
        // a service r2r has bindings for, but not in the table until registered
        assert!(matches!(
            check_type("rcl_interfaces/srv/GetParameters"),
            Err(TypeError::Service(_))
        ));
        register_service_type::<r2r::rcl_interfaces::srv::GetParameters::Service>(
            "rcl_interfaces/srv/GetParameters",
        );
        assert_eq!(check_type("rcl_interfaces/srv/GetParameters"), Ok(()));
    }

    #[test]
    fn refusals_fill_success_and_message_where_the_type_has_them() {
        let r: r2r::std_srvs::srv::SetBool::Response = refusal("busy");
        assert_eq!((r.success, r.message.as_str()), (false, "busy"));
        let e: r2r::std_srvs::srv::Empty::Response = refusal("busy");
        assert_eq!(e, Default::default());
    }
}
