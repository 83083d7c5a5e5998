//! Parameters from the ROS 1 parameter server, read once at start (ROS 1 has no parameter events; restart to
//! apply a change): asebaros' private tree (`/asebaros/…`: `targets`, `port`, `nodes/thymio/prefix`,
//! `script/constants/MOTOR_PERIOD`, and the driver's names the configuration shares) then ROS-Thymio's driver
//! node's (`/thymio_driver/…`, or `/<ns>/thymio_driver/…` when the bridge runs in a namespace: `axis_length`,
//! `odom_frame`, `motor/left/parameters`, `ground/threshold`…). ROS 1 nests with `/`, the configuration with
//! `.`: `~nodes/thymio/prefix` is the configuration key `nodes.thymio.prefix`.

use serde_xmlrpc::Value as Xml;
use yaml_serde::{Number, Value};

/// Errors of a parameter tree.
#[derive(Debug, thiserror::Error)]
pub enum ParamError {
    /// A value the configuration cannot hold (date, binary, nil).
    #[error("parameter {name}: {kind} values are not supported")]
    Unsupported {
        /// The dotted name.
        name: String,
        /// What it was.
        kind: &'static str,
    },
}

/// The leaves of a parameter tree rooted at `prefix` (dotted, "" at the top) as `(dotted name, YAML value)`,
/// sorted by name. A struct is a subtree; lists stay values.
pub fn flatten(prefix: &str, value: &Xml) -> Result<Vec<(String, Value)>, ParamError> {
    let mut out = Vec::new();
    walk(prefix, value, &mut out)?;
    out.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(out)
}

fn walk(name: &str, value: &Xml, out: &mut Vec<(String, Value)>) -> Result<(), ParamError> {
    if let Xml::Struct(map) = value {
        for (k, v) in map {
            let child = if name.is_empty() {
                k.clone()
            } else {
                format!("{name}.{k}")
            };
            walk(&child, v, out)?;
        }
        return Ok(());
    }
    out.push((name.to_owned(), to_yaml(name, value)?));
    Ok(())
}

/// One XML-RPC value as YAML (structs inside lists become maps).
pub fn to_yaml(name: &str, value: &Xml) -> Result<Value, ParamError> {
    let unsupported = |kind| ParamError::Unsupported {
        name: name.to_owned(),
        kind,
    };
    Ok(match value {
        Xml::Int(i) => Value::Number(Number::from(*i)),
        Xml::Int64(i) => Value::Number(Number::from(*i)),
        Xml::Bool(b) => Value::Bool(*b),
        Xml::String(s) => Value::String(s.clone()),
        Xml::Double(d) => Value::Number(Number::from(*d)),
        Xml::Array(items) => Value::Sequence(
            items
                .iter()
                .map(|i| to_yaml(name, i))
                .collect::<Result<_, _>>()?,
        ),
        Xml::Struct(map) => Value::Mapping(
            map.iter()
                .map(|(k, v)| Ok((Value::String(k.clone()), to_yaml(name, v)?)))
                .collect::<Result<_, ParamError>>()?,
        ),
        Xml::DateTime(_) => return Err(unsupported("date")),
        Xml::Base64(_) => return Err(unsupported("binary")),
        Xml::Nil => return Err(unsupported("nil")),
    })
}

/// A YAML configuration value as XML-RPC (to show the effective configuration on the parameter server); `None`
/// for what a ROS parameter cannot hold (null).
pub fn from_yaml(value: &Value) -> Option<Xml> {
    Some(match value {
        Value::Bool(b) => Xml::Bool(*b),
        Value::Number(n) => match n.as_i64().and_then(|i| i32::try_from(i).ok()) {
            Some(i) => Xml::Int(i),
            None => Xml::Double(n.as_f64()?),
        },
        Value::String(s) => Xml::String(s.clone()),
        Value::Sequence(items) => Xml::Array(items.iter().filter_map(from_yaml).collect()),
        Value::Mapping(map) => Xml::Struct(
            map.iter()
                .filter_map(|(k, v)| Some((k.as_str()?.to_owned(), from_yaml(v)?)))
                .collect(),
        ),
        Value::Null | Value::Tagged(_) => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn tree(entries: &[(&str, Xml)]) -> Xml {
        Xml::Struct(
            entries
                .iter()
                .map(|(k, v)| ((*k).to_owned(), v.clone()))
                .collect::<BTreeMap<_, _>>(),
        )
    }

    #[test]
    fn nested_ros1_names_become_dotted_configuration_keys() {
        let t = tree(&[
            ("port", Xml::Int(44444)),
            (
                "nodes",
                tree(&[("thymio", tree(&[("prefix", Xml::String("thymio_".into()))]))]),
            ),
            (
                "targets",
                Xml::Array(vec![Xml::String("tcp:host=a;port=1".into())]),
            ),
            ("axis_length", Xml::Double(0.0935)),
        ]);
        let flat = flatten("", &t).unwrap();
        let names: Vec<&str> = flat.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            ["axis_length", "nodes.thymio.prefix", "port", "targets"]
        );
        assert_eq!(flat[2].1, Value::Number(44444.into()));
        assert!(matches!(&flat[3].1, Value::Sequence(s) if s.len() == 1));
    }

    #[test]
    fn values_a_configuration_cannot_hold_are_errors_naming_the_parameter() {
        let t = tree(&[("blob", Xml::Base64(vec![1, 2]))]);
        let e = flatten("", &t).unwrap_err();
        assert!(e.to_string().contains("blob"), "{e}");
    }

    #[test]
    fn yaml_round_trips_through_xmlrpc() {
        let v: Value = yaml_serde::from_str("{a: 1, b: [x, y], c: {d: 0.5, e: true}}").unwrap();
        let x = from_yaml(&v).unwrap();
        assert_eq!(to_yaml("", &x).unwrap(), v);
    }
}
