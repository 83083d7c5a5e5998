use super::*;
use roslibrust::{RosMessageType, RosServiceType};

/// The `_md5sum`s of Debian's generated Python classes in `file` (python3-dynamic-reconfigure), in order (a
/// service's file: its request's, its response's, then the service's).
fn debian_md5s(file: &str) -> Vec<String> {
    let path = format!("/usr/lib/python3/dist-packages/dynamic_reconfigure/{file}");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!("{path}: {e}: install python3-dynamic-reconfigure (scripts/setup-ros1.sh)")
    });
    let sums: Vec<String> = text
        .lines()
        .filter(|l| l.trim_start().starts_with("_md5sum = "))
        .filter_map(|l| l.split(['"', '\'']).nth(1).map(str::to_owned))
        .collect();
    assert!(!sums.is_empty(), "no _md5sum in {path}");
    sums
}

#[test]
fn the_vendored_definitions_have_debians_md5_sums() {
    let md5 = |d: roslibrust::MessageDescriptor| d.md5sum;
    let pairs = [
        (md5(dr::BoolParameter::DESCRIPTION), "msg/_BoolParameter.py"),
        (md5(dr::IntParameter::DESCRIPTION), "msg/_IntParameter.py"),
        (md5(dr::StrParameter::DESCRIPTION), "msg/_StrParameter.py"),
        (
            md5(dr::DoubleParameter::DESCRIPTION),
            "msg/_DoubleParameter.py",
        ),
        (md5(dr::GroupState::DESCRIPTION), "msg/_GroupState.py"),
        (md5(dr::Config::DESCRIPTION), "msg/_Config.py"),
        (
            md5(dr::ParamDescription::DESCRIPTION),
            "msg/_ParamDescription.py",
        ),
        (md5(dr::Group::DESCRIPTION), "msg/_Group.py"),
        (
            md5(dr::ConfigDescription::DESCRIPTION),
            "msg/_ConfigDescription.py",
        ),
    ];
    for (ours, file) in pairs {
        assert_eq!(ours, debian_md5s(file)[0], "{file}");
    }
    let srv = debian_md5s("srv/_Reconfigure.py");
    assert_eq!(
        [
            md5(dr::ReconfigureRequest::DESCRIPTION),
            md5(dr::ReconfigureResponse::DESCRIPTION),
            dr::Reconfigure::MD5SUM
        ],
        srv[..],
        "srv/_Reconfigure.py"
    );
}

fn param(name: &str, value: Value, read_only: bool) -> Param {
    Param {
        name: name.into(),
        value,
        description: "d".into(),
        read_only,
        range: None,
        int_range: None,
    }
}

#[test]
fn only_live_scalar_parameters_are_offered_with_their_ranges() {
    let mut axis = param("axis_length", Value::Double(0.0935), false);
    axis.range = Some((0.05, 0.15));
    let mut threshold = param("ground.threshold", Value::Integer(200), false);
    threshold.int_range = Some((0, 1023));
    let table = [
        axis,
        threshold,
        param("obstacle_stop.enabled", Value::Bool(true), false),
        param("odom_frame", Value::String("odom".into()), true),
        param(
            "motor.left.parameters",
            Value::DoubleArray(vec![1.0, 0.0]),
            false,
        ),
    ];
    let d = description(&table);
    let names: Vec<&str> = d.groups[0]
        .parameters
        .iter()
        .map(|p| p.name.as_str())
        .collect();
    assert_eq!(
        names,
        ["axis_length", "ground.threshold", "obstacle_stop.enabled"]
    );
    let types: Vec<&str> = d.groups[0]
        .parameters
        .iter()
        .map(|p| p.r#type.as_str())
        .collect();
    assert_eq!(types, ["double", "int", "bool"]);
    assert_eq!(
        (d.min.doubles[0].value, d.max.doubles[0].value),
        (0.05, 0.15)
    );
    assert_eq!((d.min.ints[0].value, d.max.ints[0].value), (0, 1023));
    assert_eq!(d.dflt.doubles[0].value, 0.0935);
    assert_eq!(d.dflt.groups[0].name, GROUP);
    let c = config(&table);
    assert_eq!(c.bools[0].name, "obstacle_stop.enabled");
    assert!(c.strs.is_empty(), "read-only odom_frame is not offered");
    let back = wanted(&c);
    assert_eq!(back.len(), 3);
    assert!(back.contains(&("ground.threshold".into(), Value::Integer(200))));
}
