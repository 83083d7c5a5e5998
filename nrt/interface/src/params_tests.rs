use super::*;
use handoff::{channels, ChannelConfig, RtEnds};
use nrt_engine::engine::EngineConfig;
use nrt_engine::params::BridgeParams;
use std::cell::RefCell;

fn engine() -> (Engine, RtEnds) {
    let (rt, nrt) = channels(&ChannelConfig::default());
    let config = EngineConfig {
        bridge: BridgeParams {
            port: 0,
            ..Default::default()
        },
        driver: DriverParams::default(),
    };
    (Engine::new(config, nrt).unwrap(), rt)
}

fn bridge_config() -> Mapping {
    yaml_serde::from_str("port: 33333\ntargets: []\n").unwrap()
}

fn live(name: &str) -> bool {
    schema::is_live::<DriverParams>(name)
}

#[test]
fn the_bridge_table_shows_start_only_values_read_only_and_live_ones_with_their_range() {
    let (e, _rt) = engine();
    let table = bridge_table(&e, &bridge_config(), live);
    let port = find(&table, "port").unwrap();
    assert!(port.read_only);
    assert_eq!(port.value, Value::Integer(33333));
    assert_eq!(port.description, AT_START);
    let axis = find(&table, "axis_length").unwrap();
    assert!(!axis.read_only);
    assert_eq!(axis.description, LIVE);
    assert_eq!(axis.range, Some((0.05, 0.15)));
    let threshold = find(&table, "ground.threshold").unwrap();
    assert_eq!(threshold.int_range, Some((0, 1023)));
    assert!(find(&table, "obstacle_stop.enabled").is_some_and(|p| !p.read_only));
}

#[test]
fn a_bridge_set_gets_the_engines_verdict_with_the_range_and_changes_nothing_when_refused() {
    let (mut e, _rt) = engine();
    let config = bridge_config();
    let e = RefCell::new(&mut e);
    let table = || bridge_table(&e.borrow(), &config, live);
    let mut set = |n: &str, v: &Value| set_bridge(&mut e.borrow_mut(), n, v).map(drop);
    let before = find(&table(), "axis_length").unwrap().value.clone();
    let verdicts = set_each(
        &table,
        &mut set,
        &[
            ("axis_length".into(), Value::Double(1e9)),
            ("port".into(), Value::Integer(4)),
            ("no_such".into(), Value::Integer(4)),
            ("launch_model".into(), Value::String("x".into())),
        ],
    );
    assert!(!verdicts[0].successful);
    assert!(
        verdicts[0].reason.contains("axis_length") && verdicts[0].reason.contains("[0.05, 0.15] m"),
        "{verdicts:?}"
    );
    assert_eq!(find(&table(), "axis_length").unwrap().value, before);
    assert!(!verdicts[1].successful && verdicts[1].reason.contains("read-only"));
    assert!(!verdicts[2].successful && verdicts[2].reason.contains("not declared"));
    assert!(verdicts[3].successful && verdicts[3].reason.contains("ignored"));
    let ok = set_each(
        &table,
        &mut set,
        &[("axis_length".into(), Value::Double(0.094))],
    );
    assert_eq!(ok, [Verdict::from(Ok(()))]);
    assert_eq!(
        find(&table(), "axis_length").unwrap().value,
        Value::Double(0.094)
    );
    let line = set_bridge(&mut e.borrow_mut(), "axis_length", &Value::Double(0.095)).unwrap();
    assert_eq!(line, "axis_length applied live to robots []");
}

#[test]
fn a_driver_table_holds_the_robots_own_values_and_ros_thymios_unused_ones() {
    let (mut e, _rt) = engine();
    let id = NodeId(3);
    let given = [("script".to_owned(), Value::String("a.aesl".into()))];
    let table = driver_table(&e, id, &given, None);
    assert!(find(&table, "odom_frame").is_some_and(|p| p.read_only));
    assert!(find(&table, "cmd_vel_timeout").is_none(), "process-wide");
    let script = find(&table, "script").unwrap();
    assert!(script.read_only && script.description == UNUSED);
    assert_eq!(script.value, Value::String("a.aesl".into()));
    assert!(find(&table, "launch_model").is_some_and(|p| p.read_only));
    // the robot's own value, not the process's
    set_driver(&mut e, None, id, "axis_length", &Value::Double(0.1)).unwrap();
    let table = driver_table(&e, id, &[], None);
    assert_eq!(
        find(&table, "axis_length").unwrap().value,
        Value::Double(0.1)
    );
    assert_eq!(
        find(&bridge_table(&e, &Mapping::new(), live), "axis_length")
            .unwrap()
            .value,
        Value::Double(0.0935)
    );
    let e1 = set_driver(&mut e, None, id, "cmd_vel_timeout", &Value::Double(1.0)).unwrap_err();
    assert!(e1.contains("asebaros"), "{e1}");
}

#[test]
fn an_atomic_set_rolls_back_what_it_set_before_a_refusal() {
    let (mut e, _rt) = engine();
    let id = NodeId(3);
    let e = RefCell::new(&mut e);
    let table = || driver_table(&e.borrow(), id, &[], None);
    let mut set = |n: &str, v: &Value| set_driver(&mut e.borrow_mut(), None, id, n, v);
    let err = set_all(
        &table,
        &mut set,
        &[
            ("axis_length".into(), Value::Double(0.1)),
            (
                "motor.left.parameters".into(),
                Value::DoubleArray(vec![1.0, 0.0]),
            ),
        ],
    )
    .unwrap_err();
    assert!(err.contains("none of the parameters was set"), "{err}");
    assert_eq!(
        find(&table(), "axis_length").unwrap().value,
        Value::Double(0.0935)
    );
    let err = set_all(
        &table,
        &mut set,
        &[("odom_frame".into(), Value::String("x".into()))],
    )
    .unwrap_err();
    assert!(err.contains("read-only"), "{err}");
    assert!(check(&table(), "axis_length", &Value::NotSet).is_err());
}

#[test]
fn values_round_trip_through_yaml() {
    for v in [
        Value::Bool(false),
        Value::Integer(-7),
        Value::Double(0.25),
        Value::String("ser:name=Thymio".into()),
        Value::BoolArray(vec![true, false]),
        Value::IntegerArray(vec![1, -2]),
        Value::DoubleArray(vec![0.5, 1.5]),
        Value::StringArray(vec!["a".into(), "b".into()]),
    ] {
        assert_eq!(from_yaml(&to_yaml(&v).unwrap()).unwrap(), v);
    }
    assert_eq!(to_yaml(&Value::NotSet), None);
    assert_eq!(Value::Integer(2).number(), Some(2.0));
    assert_eq!(Value::Bool(true).number(), None);
}

/// Issue 42: the motion limits' rates show their range in the driver table (what the ROS 2
/// descriptors and ROS 1 dynamic_reconfigure's min/max are made of), and a rate below it is
/// refused with the range and changes nothing: a deceleration of 0 or 1e-9 let a robot coast
/// on, an acceleration of 5e-324 kept it still. NaN (off) and the minimum are accepted.
#[test]
fn motion_limit_rates_show_their_range_and_too_small_ones_are_refused_with_it() {
    let (mut e, _rt) = engine();
    let id = NodeId(3);
    let e = RefCell::new(&mut e);
    let table = || driver_table(&e.borrow(), id, &[], None);
    let mut set = |n: &str, v: &Value| set_driver(&mut e.borrow_mut(), None, id, n, v);
    for (name, range) in [
        ("linear.x.max_deceleration", (0.05, 1000.0)),
        ("linear.x.max_acceleration", (0.05, 1000.0)),
        ("angular.z.max_deceleration_reverse", (1.0, 20_000.0)),
        ("linear.x.max_jerk", (0.1, 1e6)),
    ] {
        let t = table();
        let p = find(&t, name).unwrap();
        assert_eq!(p.range, Some(range), "{name}");
        assert!(!p.read_only, "{name}");
    }
    let bad = [
        ("linear.x.max_deceleration", 0.0, "[0.05, 1000] m/s²"),
        ("linear.x.max_deceleration", 1e-9, "[0.05, 1000] m/s²"),
        ("linear.x.max_acceleration", 5e-324, "[0.05, 1000] m/s²"),
        ("angular.z.max_deceleration", 0.5, "[1, 20000] rad/s²"),
        ("linear.x.max_jerk", 0.01, "[0.1, 1000000] m/s³"),
    ];
    for (name, v, range) in bad {
        let verdicts = set_each(&table, &mut set, &[(name.into(), Value::Double(v))]);
        assert!(!verdicts[0].successful, "{name} {v}: {verdicts:?}");
        let why = &verdicts[0].reason;
        assert!(why.contains(name) && why.contains(range), "{why}");
        assert!(
            matches!(find(&table(), name).unwrap().value, Value::Double(x) if x.is_nan()),
            "{name} changed"
        );
    }
    let ok = set_each(
        &table,
        &mut set,
        &[
            ("linear.x.max_deceleration".into(), Value::Double(0.05)),
            ("angular.z.max_acceleration".into(), Value::Double(1.0)),
        ],
    );
    assert_eq!(ok, [Verdict::from(Ok(())), Verdict::from(Ok(()))]);
    assert_eq!(
        find(&table(), "linear.x.max_deceleration").unwrap().value,
        Value::Double(0.05)
    );
    let off = set_each(
        &table,
        &mut set,
        &[("linear.x.max_deceleration".into(), Value::Double(f64::NAN))],
    );
    assert_eq!(off, [Verdict::from(Ok(()))]);
}
