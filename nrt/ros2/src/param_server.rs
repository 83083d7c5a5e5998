//! The ROS 2 parameter services of a node (`rcl_interfaces`: `set_parameters`,
//! `set_parameters_atomically`, `get_parameters`, `list_parameters`, `describe_parameters`,
//! `get_parameter_types`), served by the NRT loop against the engine.
//!
//! r2r 0.9.7's own handler (`Node::make_parameter_handler`) stores every set value and answers
//! `successful: true` before anyone looked at it; its only validation hook
//! (`make_derived_parameter_handler`, a `RosParams` struct behind a mutex) runs on the spinner
//! thread, away from the engine, which alone knows whether a value is usable (a calibration
//! that the robot's file entry overrides, a value the RT thread refuses). So the services are
//! served here instead, on the thread that owns the engine: a set is applied by the engine and
//! answered with its verdict (`successful: false` and the engine's reason when refused), start-only
//! parameters are `read_only` in their descriptors and refused, and `get` reads the values in
//! effect from the engine at the time of the call, never a stored copy.
//!
//! The tables, checks and verdicts are the layer's ([`nrt_interface::params`], shared with ROS 1's
//! dynamic_reconfigure); this module is their ROS 2 transport.

use super::{drain, Srv};
use nrt_interface::params::{self as layer, Param, Value};
use r2r::rcl_interfaces::msg::{
    FloatingPointRange, IntegerRange, ListParametersResult, ParameterDescriptor,
    ParameterValue as ValueMsg, SetParametersResult,
};
use r2r::rcl_interfaces::srv::{
    DescribeParameters, GetParameterTypes, GetParameters, ListParameters, SetParameters,
    SetParametersAtomically,
};
use r2r::{ParameterValue, QosProfile};

/// One parameter as the node shows it (the layer's).
pub type Shown = Param;

/// The parameter services of one node.
pub struct ParamServices {
    set: Srv<SetParameters::Service>,
    set_atomically: Srv<SetParametersAtomically::Service>,
    get: Srv<GetParameters::Service>,
    list: Srv<ListParameters::Service>,
    describe: Srv<DescribeParameters::Service>,
    types: Srv<GetParameterTypes::Service>,
}

impl ParamServices {
    /// Creates the services of `node` (`<node name>/set_parameters`, …).
    pub fn new(node: &mut r2r::Node) -> Result<ParamServices, r2r::Error> {
        let name = node.name()?;
        let n = |s: &str| format!("{name}/{s}");
        let q = QosProfile::default;
        Ok(ParamServices {
            set: Box::new(
                node.create_service::<SetParameters::Service>(&n("set_parameters"), q())?,
            ),
            set_atomically: Box::new(node.create_service::<SetParametersAtomically::Service>(
                &n("set_parameters_atomically"),
                q(),
            )?),
            get: Box::new(
                node.create_service::<GetParameters::Service>(&n("get_parameters"), q())?,
            ),
            list: Box::new(
                node.create_service::<ListParameters::Service>(&n("list_parameters"), q())?,
            ),
            describe: Box::new(
                node.create_service::<DescribeParameters::Service>(&n("describe_parameters"), q())?,
            ),
            types: Box::new(
                node.create_service::<GetParameterTypes::Service>(&n("get_parameter_types"), q())?,
            ),
        })
    }

    /// Answers every pending call: `shown` lists the parameters with their values now, `set`
    /// applies one (`Err`: why not; then nothing changed). A failure to send a reply (the
    /// client left) is not an error of the node: it is dropped.
    pub fn serve(
        &mut self,
        shown: &dyn Fn() -> Vec<Shown>,
        set: &mut dyn FnMut(&str, &Value) -> Result<(), String>,
    ) {
        let wanted = |ps: &[r2r::rcl_interfaces::msg::Parameter]| -> Vec<(String, Value)> {
            ps.iter()
                .map(|p| (p.name.clone(), to_layer(from_msg(p.value.clone()))))
                .collect()
        };
        for req in drain(&mut self.set).collect::<Vec<_>>() {
            let results = layer::set_each(shown, set, &wanted(&req.message.parameters))
                .into_iter()
                .map(|v| SetParametersResult {
                    successful: v.successful,
                    reason: v.reason,
                })
                .collect();
            let _ = req.respond(SetParameters::Response { results });
        }
        for req in drain(&mut self.set_atomically).collect::<Vec<_>>() {
            let r = layer::set_all(shown, set, &wanted(&req.message.parameters));
            let _ = req.respond(SetParametersAtomically::Response { result: result(r) });
        }
        for req in drain(&mut self.get).collect::<Vec<_>>() {
            let now = shown();
            let values = req
                .message
                .names
                .iter()
                .map(|n| {
                    to_msg(
                        layer::find(&now, n)
                            .map_or(ParameterValue::NotSet, |s| from_layer(&s.value)),
                    )
                })
                .collect();
            let _ = req.respond(GetParameters::Response { values });
        }
        for req in drain(&mut self.types).collect::<Vec<_>>() {
            let now = shown();
            let types = req
                .message
                .names
                .iter()
                .map(|n| layer::find(&now, n).map_or(0, |s| type_of(&from_layer(&s.value))))
                .collect();
            let _ = req.respond(GetParameterTypes::Response { types });
        }
        for req in drain(&mut self.describe).collect::<Vec<_>>() {
            let now = shown();
            let descriptors = req
                .message
                .names
                .iter()
                .map(|n| match layer::find(&now, n) {
                    Some(s) => ParameterDescriptor {
                        name: n.clone(),
                        type_: type_of(&from_layer(&s.value)),
                        description: s.description.clone(),
                        read_only: s.read_only,
                        floating_point_range: s
                            .range
                            .map(|(from_value, to_value)| FloatingPointRange {
                                from_value,
                                to_value,
                                step: 0.0,
                            })
                            .into_iter()
                            .collect(),
                        integer_range: s
                            .int_range
                            .map(|(from_value, to_value)| IntegerRange {
                                from_value,
                                to_value,
                                step: 0,
                            })
                            .into_iter()
                            .collect(),
                        ..Default::default()
                    },
                    None => ParameterDescriptor {
                        name: n.clone(),
                        ..Default::default()
                    },
                })
                .collect();
            let _ = req.respond(DescribeParameters::Response { descriptors });
        }
        for req in drain(&mut self.list).collect::<Vec<_>>() {
            let names: Vec<String> = shown().into_iter().map(|s| s.name).collect();
            let result = list(&names, &req.message.prefixes, req.message.depth);
            let _ = req.respond(ListParameters::Response { result });
        }
    }
}

fn result(r: Result<(), String>) -> SetParametersResult {
    match r {
        Ok(()) => SetParametersResult {
            successful: true,
            reason: String::new(),
        },
        Err(reason) => SetParametersResult {
            successful: false,
            reason,
        },
    }
}

/// `list_parameters` as rcl answers it: names under one of `prefixes` (all if none), at most
/// `depth` levels below it (0: any depth), and the prefixes of the names listed.
pub fn list(names: &[String], prefixes: &[String], depth: u64) -> ListParametersResult {
    let deep_enough = |rest: &str| depth == 0 || (rest.matches('.').count() as u64) < depth;
    let mut out = ListParametersResult::default();
    for name in names {
        let listed = if prefixes.is_empty() {
            deep_enough(name)
        } else {
            prefixes.iter().any(|p| {
                name == p
                    || name
                        .strip_prefix(p.as_str())
                        .and_then(|r| r.strip_prefix('.'))
                        .is_some_and(deep_enough)
            })
        };
        if !listed {
            continue;
        }
        out.names.push(name.clone());
        if let Some((prefix, _)) = name.rsplit_once('.') {
            if !out.prefixes.iter().any(|p| p == prefix) {
                out.prefixes.push(prefix.to_owned());
            }
        }
    }
    out
}

/// A `rcl_interfaces/ParameterValue` as a value.
pub fn from_msg(m: ValueMsg) -> ParameterValue {
    match m.type_ {
        1 => ParameterValue::Bool(m.bool_value),
        2 => ParameterValue::Integer(m.integer_value),
        3 => ParameterValue::Double(m.double_value),
        4 => ParameterValue::String(m.string_value),
        5 => ParameterValue::ByteArray(m.byte_array_value),
        6 => ParameterValue::BoolArray(m.bool_array_value),
        7 => ParameterValue::IntegerArray(m.integer_array_value),
        8 => ParameterValue::DoubleArray(m.double_array_value),
        9 => ParameterValue::StringArray(m.string_array_value),
        _ => ParameterValue::NotSet,
    }
}

/// A value as a `rcl_interfaces/ParameterValue`.
pub fn to_msg(v: ParameterValue) -> ValueMsg {
    let mut m = ValueMsg {
        type_: type_of(&v),
        ..Default::default()
    };
    match v {
        ParameterValue::NotSet => {}
        ParameterValue::Bool(b) => m.bool_value = b,
        ParameterValue::Integer(i) => m.integer_value = i,
        ParameterValue::Double(d) => m.double_value = d,
        ParameterValue::String(s) => m.string_value = s,
        ParameterValue::ByteArray(v) => m.byte_array_value = v,
        ParameterValue::BoolArray(v) => m.bool_array_value = v,
        ParameterValue::IntegerArray(v) => m.integer_array_value = v,
        ParameterValue::DoubleArray(v) => m.double_array_value = v,
        ParameterValue::StringArray(v) => m.string_array_value = v,
    }
    m
}

/// The `rcl_interfaces/ParameterType` of a value.
pub fn type_of(v: &ParameterValue) -> u8 {
    match v {
        ParameterValue::NotSet => 0,
        ParameterValue::Bool(_) => 1,
        ParameterValue::Integer(_) => 2,
        ParameterValue::Double(_) => 3,
        ParameterValue::String(_) => 4,
        ParameterValue::ByteArray(_) => 5,
        ParameterValue::BoolArray(_) => 6,
        ParameterValue::IntegerArray(_) => 7,
        ParameterValue::DoubleArray(_) => 8,
        ParameterValue::StringArray(_) => 9,
    }
}

/// A ROS 2 value as the layer's.
pub fn to_layer(v: ParameterValue) -> Value {
    match v {
        ParameterValue::NotSet => Value::NotSet,
        ParameterValue::Bool(b) => Value::Bool(b),
        ParameterValue::Integer(i) => Value::Integer(i),
        ParameterValue::Double(d) => Value::Double(d),
        ParameterValue::String(s) => Value::String(s),
        ParameterValue::ByteArray(v) => Value::ByteArray(v),
        ParameterValue::BoolArray(v) => Value::BoolArray(v),
        ParameterValue::IntegerArray(v) => Value::IntegerArray(v),
        ParameterValue::DoubleArray(v) => Value::DoubleArray(v),
        ParameterValue::StringArray(v) => Value::StringArray(v),
    }
}

/// The layer's value as ROS 2's.
pub fn from_layer(v: &Value) -> ParameterValue {
    match v.clone() {
        Value::NotSet => ParameterValue::NotSet,
        Value::Bool(b) => ParameterValue::Bool(b),
        Value::Integer(i) => ParameterValue::Integer(i),
        Value::Double(d) => ParameterValue::Double(d),
        Value::String(s) => ParameterValue::String(s),
        Value::ByteArray(v) => ParameterValue::ByteArray(v),
        Value::BoolArray(v) => ParameterValue::BoolArray(v),
        Value::IntegerArray(v) => ParameterValue::IntegerArray(v),
        Value::DoubleArray(v) => ParameterValue::DoubleArray(v),
        Value::StringArray(v) => ParameterValue::StringArray(v),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_follows_rcl_prefixes_and_depth() {
        let names: Vec<String> = [
            "axis_length",
            "motor.left.parameters",
            "motor.right.deadband",
        ]
        .map(String::from)
        .to_vec();
        let all = list(&names, &[], 0);
        assert_eq!(all.names, names);
        assert_eq!(all.prefixes, ["motor.left", "motor.right"]);
        assert_eq!(list(&names, &[], 1).names, ["axis_length"]);
        let motor = list(&names, &["motor".into()], 0);
        assert_eq!(motor.names, names[1..]);
        assert!(list(&names, &["motor".into()], 1).names.is_empty());
        assert_eq!(
            list(&names, &["motor.left".into()], 1).names,
            [names[1].clone()]
        );
    }

    #[test]
    fn values_round_trip_through_messages() {
        for v in [
            ParameterValue::NotSet,
            ParameterValue::Bool(true),
            ParameterValue::Integer(3),
            ParameterValue::Double(0.5),
            ParameterValue::String("x".into()),
            ParameterValue::ByteArray(vec![1]),
            ParameterValue::BoolArray(vec![false]),
            ParameterValue::IntegerArray(vec![1, 2]),
            ParameterValue::DoubleArray(vec![0.25]),
            ParameterValue::StringArray(vec!["a".into()]),
        ] {
            assert_eq!(from_msg(to_msg(v.clone())), v);
            assert_eq!(from_layer(&to_layer(v.clone())), v);
        }
    }
}
