use super::*;

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
    assert_eq!(d.dflt.groups[0].name, rc::GROUP);
    let c = config(&table);
    assert_eq!(c.bools[0].name, "obstacle_stop.enabled");
    assert!(c.strs.is_empty(), "read-only odom_frame is not offered");
    let back = wanted(&c);
    assert_eq!(back.len(), 3);
    assert!(back.contains(&("ground.threshold".into(), Value::Integer(200))));
}
