//! The values that cross between a controller's RT side and a ROS front end ([`RosValue`], one per [`RosKind`]),
//! the Rust types that cross as them ([`RosType`]) and a controller's parameter block ([`ParamBlock`]): plain `Copy`
//! data that the endpoints, the recorder's payload ([`crate::RecInput`]) and the front ends share (a leaf module).

use crate::values::{Pose2, Twist2};

/// Most parameters one controller declares.
pub const MAX_PARAMS: usize = 16;

/// The ROS type family of a value (see the module table).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RosKind {
    /// No data.
    Empty,
    /// A boolean.
    Bool,
    /// A float.
    Float64,
    /// A planar pose.
    Pose2D,
    /// A planar twist.
    Twist,
    /// A service outcome.
    Outcome,
    /// A message of any ROS type, converted by the controller's own functions (a
    /// [`NrtEndpoint::Message`]; see [`crate::msg_endpoints`]). Never the kind of a [`RosValue`].
    Message,
}

/// A value crossing between the RT and NRT halves of an endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub enum RosValue {
    /// No data.
    #[default]
    Empty,
    /// A boolean.
    Bool(bool),
    /// A float.
    Float64(f64),
    /// A planar pose.
    Pose2D(Pose2),
    /// A planar twist.
    Twist(Twist2),
    /// A service outcome (the message is static: the RT side never formats text). Never recorded (an output).
    #[serde(skip)]
    Outcome(Outcome),
}

impl RosValue {
    /// The value's kind.
    pub fn kind(&self) -> RosKind {
        match self {
            RosValue::Empty => RosKind::Empty,
            RosValue::Bool(_) => RosKind::Bool,
            RosValue::Float64(_) => RosKind::Float64,
            RosValue::Pose2D(_) => RosKind::Pose2D,
            RosValue::Twist(_) => RosKind::Twist,
            RosValue::Outcome(_) => RosKind::Outcome,
        }
    }
}

/// A service's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Outcome {
    /// Whether the request was accepted / succeeded.
    pub success: bool,
    /// Why (static text).
    pub message: &'static str,
}

impl Outcome {
    /// Success with a message.
    pub const fn ok(message: &'static str) -> Outcome {
        Outcome {
            success: true,
            message,
        }
    }

    /// Refusal with its reason.
    pub const fn refused(message: &'static str) -> Outcome {
        Outcome {
            success: false,
            message,
        }
    }
}

/// A Rust type that crosses as a [`RosValue`] of one kind.
pub trait RosType: Copy + Send + 'static {
    /// Its kind.
    const KIND: RosKind;
    /// Into the erased value.
    fn into_value(self) -> RosValue;
    /// From the erased value (`None` if of another kind).
    fn from_value(v: RosValue) -> Option<Self>;
}

macro_rules! ros_type {
    ($t:ty, $kind:ident, $v:ident => $into:expr, $pat:pat => $from:expr) => {
        impl RosType for $t {
            const KIND: RosKind = RosKind::$kind;
            fn into_value(self) -> RosValue {
                let $v = self;
                $into
            }
            fn from_value(v: RosValue) -> Option<Self> {
                match v {
                    $pat => Some($from),
                    _ => None,
                }
            }
        }
    };
}

ros_type!((), Empty, _v => RosValue::Empty, RosValue::Empty => ());
ros_type!(bool, Bool, v => RosValue::Bool(v), RosValue::Bool(b) => b);
ros_type!(f64, Float64, v => RosValue::Float64(v), RosValue::Float64(x) => x);
ros_type!(Pose2, Pose2D, v => RosValue::Pose2D(v), RosValue::Pose2D(p) => p);
ros_type!(Twist2, Twist, v => RosValue::Twist(v), RosValue::Twist(t) => t);
ros_type!(Outcome, Outcome, v => RosValue::Outcome(v), RosValue::Outcome(o) => o);

/// The values of one controller's parameters.
pub type ParamBlock = [f64; MAX_PARAMS];
