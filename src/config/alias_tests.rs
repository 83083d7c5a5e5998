//! asebaros' and ROS-Thymio's parameter names (ros-aseba-interface.md §2.2, §3.2, §4.2–4.3, §6.2 #11) start the
//! driver with the meaning they give them, from the YAML file and as ROS parameters (ROS 2 `-p`, parameter files,
//! ROS 1's parameter server: all dotted names); every other unknown name stays an error naming it.

use super::*;

/// ROS-Thymio's `asebaros.launch` parameters of asebaros (§4.3), as its ROS 2 launch gives them.
const ASEBAROS_LAUNCH: &str = r#"
set_id_variable: false
reset_on_closing: true
targets: ["tcp:host=localhost;port=33333"]
port: 44444
shutdown_on_unconnect: false
reload_script_on_reconnect: true
highest_acceptable_protocol_version: 100
nodes:
  thymio: {name: thymio-II, prefix: '', namespace: '', accept: true, id_variable: _id, maximal_number: 1, include_id_in_events: false}
  other: {accept: false}
script:
  path: /tmp/thymio_ros.aesl
  constants: {MOTOR_PERIOD: 5, MOTOR_DEADBAND: 10, ACC_PERIOD: 2, BUTTONS_PERIOD: 5, EMIT_GROUND_RAW: 0, EMIT_BUTTONS: 1, EMIT_ACC: 1, EMIT_PROXIMITY: 1, EMIT_MOTOR: 1, ENABLE_PROX_COMM: 1}
"#;

/// ROS-Thymio's `main.launch` driver parameters (§4.2) and the rest of §3.2.
const DRIVER_LAUNCH: &str = r#"
axis_length: 0.0935
odom_max_rate: -1.0
calibration_file: /tmp/thymio_calibration.yaml
tf_prefix: robot
launch_model: thymio_description model.launch.py
simulation: true
script: ''
odom_frame: odom
robot_frame: base_link
left_wheel_joint: left_wheel_joint
right_wheel_joint: right_wheel_joint
ground: {threshold: 200}
motor: {left: {parameters: [0.000332, 0.0], kind: quadratic, deadband: 0}}
proximity: {center: {parameters: [4505.0, 0.0003, 0.0073], kind: power, range_min: 0.0215, range_max: 0.14, fov: 0.3}}
"#;

#[test]
fn ros_thymio_launch_files_start_the_driver_with_their_meaning() {
    let c = Config::from_yaml(ASEBAROS_LAUNCH).unwrap();
    assert!(
        c.bridge.script.reload_on_reconnect,
        "reload_script_on_reconnect is script.reload_on_reconnect"
    );
    assert!(c.bridge.reset_on_closing);
    assert_eq!(c.bridge.port, 44444);
    assert_eq!(c.bridge.nodes["thymio"].maximal_number, Some(1));
    let d = Config::from_yaml(DRIVER_LAUNCH).unwrap();
    assert_eq!(d.driver.axis_length, 0.0935);
    assert_eq!(d.driver.tf_prefix, "robot");
    assert!(d.driver.simulation);
    // ignored, not stored anywhere: nothing else changed
    let without = DRIVER_LAUNCH
        .lines()
        .filter(|l| !l.starts_with("launch_model") && !l.starts_with("script"))
        .collect::<Vec<_>>()
        .join("\n");
    assert_eq!(d, Config::from_yaml(&without).unwrap());
}

#[test]
fn the_same_names_as_ros_parameters() {
    // ROS 2 `-p name:=value` and parameter files, ROS 1's parameter server (`~a/b` read as `a.b`)
    let from_params = Config::from_dotted(&[
        ("reload_script_on_reconnect".into(), Value::from(true)),
        (
            "launch_model".into(),
            Value::from("thymio_description model.launch"),
        ),
        ("script".into(), Value::from("")),
        ("nodes.thymio.type".into(), Value::from("thymio-II")),
        ("nodes.thymio.name".into(), Value::from("robot")),
        ("include_id_in_events".into(), Value::from(true)),
        ("maximal_number_of_nodes".into(), Value::from(2)),
    ])
    .unwrap();
    assert!(from_params.bridge.script.reload_on_reconnect);
    let class = &from_params.bridge.nodes["thymio"];
    assert_eq!(class.name, "thymio-II");
    assert_eq!(class.namespace.as_deref(), Some("robot"));
    assert!(from_params.bridge.include_id_in_events);
    assert_eq!(from_params.bridge.maximal_number_of_nodes, 2);
    // a later override of an alias still wins over the value in effect
    let back = from_params
        .with_overrides(&[("reload_script_on_reconnect".into(), Value::from(false))])
        .unwrap();
    assert!(!back.bridge.script.reload_on_reconnect);
}

#[test]
fn asebaros_older_node_class_scheme_type_and_name() {
    // `type` is the node type and `name` the namespace (an older asebaros ROS 2 version, doc examples)
    let c = Config::from_yaml("nodes: {t: {type: thymio-II, name: red, id: 21181}}").unwrap();
    let t = &c.bridge.nodes["t"];
    assert_eq!(
        (t.name.as_str(), t.namespace.as_deref(), t.id),
        ("thymio-II", Some("red"), 21181)
    );
    // today's scheme is unchanged
    let c = Config::from_yaml("nodes: {t: {name: thymio-II, namespace: red}}").unwrap();
    assert_eq!(c.bridge.nodes["t"].name, "thymio-II");
}

#[test]
fn older_top_level_node_settings_are_every_nodes_default() {
    let c = Config::from_yaml("include_id_in_events: true\nmaximal_number_of_nodes: 3").unwrap();
    assert!(c.bridge.include_id_in_events);
    assert_eq!(c.bridge.maximal_number_of_nodes, 3);
}

#[test]
fn other_unknown_names_stay_errors_naming_them() {
    for (yaml, key) in [
        (
            "reload_script_on_reconect: true",
            "reload_script_on_reconect",
        ),
        ("launch_modell: x", "launch_modell"),
        ("nodes: {t: {typ: thymio-II}}", "typ"),
        // a foreign name is a leaf: a map under it is not what it means
        ("launch_model: {a: 1}", "launch_model"),
    ] {
        let e = Config::from_yaml(yaml).unwrap_err().to_string();
        assert!(e.contains(key), "{yaml}: {e}");
    }
    let e = Config::from_dotted(&[("reload_on_reconnect".into(), Value::from(true))])
        .unwrap_err()
        .to_string();
    assert!(e.contains("reload_on_reconnect"), "{e}");
}
