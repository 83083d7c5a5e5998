//! ROS parameters ⇄ configuration values, with the one naming scheme of the project: a configuration key is a
//! ROS parameter name with dots for nesting (`nodes.thymio.prefix` ⇄ YAML `nodes: {thymio: {prefix: ...}}`).
//!
//! [`overrides`] reads what was given to the node (`--ros-args -p name:=value` or `--params-file`) as
//! `(dotted name, YAML value)` pairs for the configuration loader; [`flatten`] turns the effective configuration
//! back into ROS parameters so that the node declares it (`get_parameters` shows what is in use).

use nrt_engine::schema;
use r2r::ParameterValue;
use yaml_serde::{Mapping, Number, Value};

/// Description of a parameter applied at run time (`ros2 param describe`).
pub const LIVE: &str = "applied at run time";
/// Description of a parameter read at start only.
pub const AT_START: &str = "read at start: restart to apply a change";

/// The description of a parameter, live or not.
pub fn description(live: bool) -> &'static str {
    if live {
        LIVE
    } else {
        AT_START
    }
}

/// Standard ROS parameters that are not part of the configuration.
const ROS_OWN: &[&str] = &["use_sim_time"];

/// The parameters given to `node` at its creation, as dotted configuration entries (sorted by name).
pub fn overrides(node: &r2r::Node) -> Vec<(String, Value)> {
    let params = node.params.lock().expect("r2r parameter map");
    let mut out: Vec<(String, Value)> = params
        .iter()
        .filter(|(name, _)| !ROS_OWN.contains(&name.as_str()))
        .filter_map(|(name, p)| Some((name.clone(), to_yaml(&p.value)?)))
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// A ROS parameter value as a YAML value (`None` for an unset parameter).
pub fn to_yaml(value: &ParameterValue) -> Option<Value> {
    let seq = |v: Vec<Value>| Some(Value::Sequence(v));
    match value {
        ParameterValue::NotSet => None,
        ParameterValue::Bool(b) => Some(Value::Bool(*b)),
        ParameterValue::Integer(i) => Some(Value::Number(Number::from(*i))),
        ParameterValue::Double(d) => Some(Value::Number(Number::from(*d))),
        ParameterValue::String(s) => Some(Value::String(s.clone())),
        ParameterValue::BoolArray(v) => seq(v.iter().map(|b| Value::Bool(*b)).collect()),
        ParameterValue::ByteArray(v) => seq(v.iter().map(|b| Value::Number((*b).into())).collect()),
        ParameterValue::IntegerArray(v) => {
            seq(v.iter().map(|i| Value::Number((*i).into())).collect())
        }
        ParameterValue::DoubleArray(v) => {
            seq(v.iter().map(|d| Value::Number((*d).into())).collect())
        }
        ParameterValue::StringArray(v) => seq(v.iter().map(|s| Value::String(s.clone())).collect()),
    }
}

/// A configuration (nested YAML maps) as ROS parameters with dotted names, in key order. Values a ROS parameter
/// cannot hold (null, a list of maps, a list mixing strings and numbers) are left out; an empty list becomes an
/// empty string array.
pub fn flatten(config: &Mapping) -> Vec<(String, ParameterValue)> {
    schema::leaves(config)
        .into_iter()
        .filter_map(|(name, value)| Some((name, from_yaml(value)?)))
        .collect()
}

/// A YAML scalar or list as a ROS parameter value (the layer's reading, [`nrt_interface::params::from_yaml`], in
/// r2r's type).
pub fn from_yaml(value: &Value) -> Option<ParameterValue> {
    nrt_interface::params::from_yaml(value).map(|v| super::param_server::from_layer(&v))
}

#[cfg(test)]
mod tests {
    use super::*;
    use nrt_engine::params::BridgeParams;

    fn yaml(text: &str) -> Mapping {
        yaml_serde::from_str(text).unwrap()
    }

    #[test]
    fn nested_maps_become_dotted_names() {
        let flat = flatten(&yaml(
            "port: 44444\nloop: true\ntargets: ['tcp:host=127.0.0.1;port=33333']\n\
             nodes: {thymio: {name: thymio-II, id: -1, prefix: thymio_}}\n\
             script: {constants: {MOTOR_PERIOD: 5}, path: ''}\n\
             motor: {left: {parameters: [4505, 0.0003]}}\nempty: []\nnothing: ~",
        ));
        let names: Vec<&str> = flat.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            [
                "port",
                "loop",
                "targets",
                "nodes.thymio.name",
                "nodes.thymio.id",
                "nodes.thymio.prefix",
                "script.constants.MOTOR_PERIOD",
                "script.path",
                "motor.left.parameters",
                "empty"
            ]
        );
        assert_eq!(flat[0].1, ParameterValue::Integer(44444));
        assert_eq!(flat[1].1, ParameterValue::Bool(true));
        assert_eq!(
            flat[2].1,
            ParameterValue::StringArray(vec!["tcp:host=127.0.0.1;port=33333".into()])
        );
        assert_eq!(flat[4].1, ParameterValue::Integer(-1));
        assert_eq!(flat[8].1, ParameterValue::DoubleArray(vec![4505.0, 0.0003]));
        assert_eq!(flat[9].1, ParameterValue::StringArray(vec![]));
    }

    #[test]
    fn values_a_parameter_cannot_hold_are_left_out() {
        let flat = flatten(&yaml("a: [{x: 1}]\nb: [1, two]\nc: ~\nd: 1.5"));
        assert_eq!(flat, vec![("d".to_owned(), ParameterValue::Double(1.5))]);
    }

    #[test]
    fn parameter_values_round_trip_through_yaml() {
        for v in [
            ParameterValue::Bool(false),
            ParameterValue::Integer(-7),
            ParameterValue::Double(0.25),
            ParameterValue::String("ser:name=Thymio".into()),
            ParameterValue::BoolArray(vec![true, false]),
            ParameterValue::IntegerArray(vec![1, -2]),
            ParameterValue::DoubleArray(vec![0.5, 1.5]),
            ParameterValue::StringArray(vec!["a".into(), "b".into()]),
        ] {
            assert_eq!(from_yaml(&to_yaml(&v).unwrap()).unwrap(), v);
        }
        assert_eq!(to_yaml(&ParameterValue::NotSet), None);
        assert_eq!(
            to_yaml(&ParameterValue::ByteArray(vec![1, 2])).unwrap(),
            yaml_value("[1, 2]")
        );
    }

    fn yaml_value(text: &str) -> Value {
        yaml_serde::from_str(text).unwrap()
    }

    #[test]
    fn the_bridge_defaults_flatten_to_the_asebaros_names() {
        let Value::Mapping(m) = yaml_serde::to_value(BridgeParams::default()).unwrap() else {
            panic!("not a map");
        };
        let flat = flatten(&m);
        let get = |name: &str| flat.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone());
        assert_eq!(get("port"), Some(ParameterValue::Integer(33333)));
        assert_eq!(get("loop"), Some(ParameterValue::Bool(false)));
        assert_eq!(get("targets"), Some(ParameterValue::StringArray(vec![])));
        assert_eq!(
            get("highest_acceptable_protocol_version"),
            Some(ParameterValue::Integer(100))
        );
        assert_eq!(
            get("script.reload_on_reconnect"),
            Some(ParameterValue::Bool(false))
        );
        assert_eq!(
            get("shutdown_on_unconnect"),
            Some(ParameterValue::Bool(false))
        );
    }
}
