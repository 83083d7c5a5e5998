use super::*;
use crate::params::BridgeParams;
use crate::thymio::params::DriverParams;
use std::error::Error as _;

fn yaml(text: &str) -> Value {
    yaml_serde::from_str(text).unwrap()
}

#[test]
fn keys_are_the_fields_of_the_defaults() {
    let keys = keys::<DriverParams>();
    for k in [
        "axis_length",
        "motor",
        "proximity",
        "obstacle_stop",
        "enabled",
    ] {
        assert!(keys.iter().any(|x| x == k), "{k} in {keys:?}");
    }
    // `loop` is the serde name, not the Rust one
    let keys = super::keys::<BridgeParams>();
    assert!(keys.iter().any(|k| k == "loop") && !keys.iter().any(|k| k == "loop_back"));
}

#[test]
fn leaves_are_the_dotted_names() {
    let m = tree(&DriverParams::default()).unwrap();
    let names: Vec<String> = leaves(&m).into_iter().map(|(n, _)| n).collect();
    assert!(
        names.contains(&"obstacle_stop.threshold".to_owned()),
        "{names:?}"
    );
    assert!(names.contains(&"ground.threshold".to_owned()), "{names:?}");
    // empty maps have no leaf
    assert!(!names.iter().any(|n| n.starts_with("motor")), "{names:?}");
}

#[test]
fn live_covers_the_keys_below() {
    assert!(is_live::<DriverParams>("obstacle_stop.enabled"));
    assert!(is_live::<DriverParams>("motor.left.parameters"));
    assert!(is_live::<DriverParams>("axis_length"));
    assert!(!is_live::<DriverParams>("axis_length_x"));
    assert!(!is_live::<DriverParams>("cmd_vel_timeout"));
    assert!(!is_live::<BridgeParams>("port"));
    // every live name is a key of the section: a typo would make a parameter start-only
    let keys = keys::<DriverParams>();
    for live in DriverParams::LIVE {
        let first = live.split('.').next().unwrap();
        assert!(keys.iter().any(|k| k == first), "{live} is not a key");
    }
}

#[test]
fn a_dotted_override_goes_through_the_types() {
    let d = set(&DriverParams::default(), "motor.left.deadband", yaml("4")).unwrap();
    assert_eq!(d.motor["left"].deadband, Some(4.0));
    let d = set(&d, "obstacle_stop.enabled", yaml("true")).unwrap();
    assert!(d.obstacle_stop.enabled && d.motor["left"].deadband == Some(4.0));
    assert!(matches!(
        set(&d, "motor..x", yaml("1")),
        Err(SchemaError::UnknownKey(k)) if k == "motor..x"
    ));
    let e = set(&d, "obstacle_stop.treshold", yaml("1")).unwrap_err();
    assert!(e.to_string().contains("treshold"), "{e}");
}

#[test]
fn a_refused_value_keeps_its_cause_and_names_its_key() {
    let e = parse::<DriverParams>("", yaml("obstacle_stop: {threshold: lots}")).unwrap_err();
    let SchemaError::Value { key, source } = &e else {
        panic!("{e:?}");
    };
    assert_eq!(key, "obstacle_stop.threshold");
    assert!(source.to_string().contains("invalid type"), "{source}");
    assert!(e.source().is_some(), "the serde error is the source");
    let e = parse::<DriverParams>("", yaml("motor: {left: {deadband: x}}")).unwrap_err();
    assert!(
        matches!(&e, SchemaError::Value { key, .. } if key == "motor.left.deadband"),
        "{e:?}"
    );
    // under a prefix
    let e = parse::<BridgeParams>("", yaml("switch: {max_payload: 0}")).unwrap_err();
    let SchemaError::Invalid(invalid) = &e else {
        panic!("{e:?}");
    };
    assert_eq!(
        (invalid.key.as_str(), invalid.value.as_str()),
        ("switch.max_payload", "0")
    );
    let e = parse::<BridgeParams>("x", yaml("port: many")).unwrap_err();
    assert!(
        matches!(&e, SchemaError::Value { key, .. } if key == "x.port"),
        "{e:?}"
    );
}

#[test]
fn null_is_the_defaults() {
    assert_eq!(
        parse::<DriverParams>("", Value::Null).unwrap(),
        DriverParams::default()
    );
}
