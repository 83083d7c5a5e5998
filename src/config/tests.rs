use super::*;

#[test]
fn empty_is_default() {
    assert_eq!(Config::from_yaml("").unwrap(), Config::default());
    assert_eq!(Config::from_yaml("# nothing\n").unwrap(), Config::default());
}

#[test]
fn keys_reach_their_sections() {
    let c = Config::from_yaml(
        "targets: ['tcp:host=127.0.0.1;port=33333']\nport: 0\nnodes: {t: {name: thymio-II, prefix: thymio_}}\naxis_length: 0.094\nmotor: {left: {deadband: 4}}\ncmd_vel_timeout: 0.25\nrt: {period_us: 500, priority: 0}\nsim: {robots: 3}\n",
    )
    .unwrap();
    assert_eq!(c.bridge.targets.len(), 1);
    assert_eq!(c.bridge.port, 0);
    assert_eq!(c.bridge.nodes["t"].prefix.as_deref(), Some("thymio_"));
    assert_eq!(c.driver.axis_length, 0.094);
    assert_eq!(c.driver.motor["left"].deadband, Some(4.0));
    assert_eq!(c.driver.cmd_vel_timeout, 0.25);
    assert_eq!((c.rt.period_us, c.rt.priority, c.rt.cpu), (500, 0, -1));
    assert_eq!(c.sim.robots, 3);
}

#[test]
fn dotted_names_are_the_same_scheme() {
    let from_yaml = Config::from_yaml("nodes: {t: {prefix: thymio_, accept: true}}\nscript: {constants: {MOTOR_PERIOD: 5}}\nrt: {cpu: 1}").unwrap();
    let from_params = Config::from_dotted(&[
        ("nodes.t.prefix".into(), Value::from("thymio_")),
        ("nodes.t.accept".into(), Value::from(true)),
        ("script.constants.MOTOR_PERIOD".into(), Value::from(5)),
        ("rt.cpu".into(), Value::from(1)),
    ])
    .unwrap();
    assert_eq!(from_yaml, from_params);
}

#[test]
fn errors_name_the_field() {
    let e = Config::from_yaml("portt: 1").unwrap_err().to_string();
    assert_eq!(e, "unknown configuration key `portt`");
    let e = Config::from_yaml("port: lots").unwrap_err().to_string();
    assert!(e.contains("port"), "{e}");
    let e = Config::from_yaml("rt: {period: 3}")
        .unwrap_err()
        .to_string();
    assert!(e.contains("rt") && e.contains("period"), "{e}");
    let e = Config::from_yaml("nodes: {a: {acccept: true}}")
        .unwrap_err()
        .to_string();
    assert!(e.contains("acccept"), "{e}");
    let e = Config::from_yaml("- 1\n- 2").unwrap_err().to_string();
    assert!(e.contains("map"), "{e}");
    let e = Config::from_yaml("axis_length: [1")
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("configuration"), "{e}");
    let e = Config::from_yaml("rt: {nrt_poll_us: 0}")
        .unwrap_err()
        .to_string();
    assert!(e.contains("rt.nrt_poll_us"), "{e}");
    let c = Config::from_yaml("rt: {nrt_poll_us: 200}\nlost_robot_timeout: 3.5").unwrap();
    assert_eq!((c.rt.nrt_poll_us, c.driver.lost_robot_timeout), (200, 3.5));
}

#[test]
fn bad_target_is_an_error() {
    let e = Config::from_yaml("targets: ['tcp:host=a;port=99999']")
        .unwrap_err()
        .to_string();
    assert!(e.contains("targets") && e.contains("99999"), "{e}");
}

#[test]
fn paths_in_a_file_are_relative_to_it() {
    let c = Config::from_file(Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/config/thymio-rt.yaml"
    )))
    .unwrap();
    assert!(
        Path::new(&c.bridge.script.path).exists(),
        "{}",
        c.bridge.script.path
    );
}

#[test]
fn the_builtin_configuration_is_the_shipped_file() {
    // `thymio-rt run` without --config: the shipped file, its scripts built in
    let builtin = Config::builtin().unwrap();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("config");
    let shipped = Config::from_file(&dir.join("thymio-rt.yaml")).unwrap();
    assert_eq!(builtin.bridge.script.path, "builtin:aseba/thymio_ros.aesl");
    let script = nrt_engine::engine::read_script_file(&builtin.bridge.script.path).unwrap();
    assert_eq!(
        script,
        std::fs::read_to_string(&shipped.bridge.script.path).unwrap()
    );
    // the same configuration but for where the script is read from
    let mut same = builtin.clone();
    same.bridge.script.path = dir.join("aseba/thymio_ros.aesl").display().to_string();
    assert_eq!(same, shipped);
    // and it is the full driver: a Thymio class, the driver script, the driver on
    assert!(builtin.driver.enabled);
    assert!(builtin.bridge.nodes["thymio"].accept == Some(true));
    assert!(builtin
        .bridge
        .script
        .constants
        .contains_key("SPEED_TIMEOUT"));
    assert_ne!(builtin, Config::default());
}

#[test]
fn relative_script_paths_of_a_user_file_resolve_against_it() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("mine.yaml");
    std::fs::write(
        &file,
        "script: {path: scripts/mine.aesl}\ncalibration_file: cal.yaml\n",
    )
    .unwrap();
    let c = Config::from_file(&file).unwrap();
    assert_eq!(
        Path::new(&c.bridge.script.path),
        dir.path().join("scripts/mine.aesl")
    );
    assert_eq!(
        Path::new(&c.driver.calibration_file),
        dir.path().join("cal.yaml")
    );
    // built-in scripts are named, not resolved
    std::fs::write(
        &file,
        "script: {path: 'builtin:aseba/thymio_ros_playground.aesl'}\n",
    )
    .unwrap();
    let c = Config::from_file(&file).unwrap();
    assert_eq!(
        c.bridge.script.path,
        "builtin:aseba/thymio_ros_playground.aesl"
    );
}

#[test]
fn shipped_configs_parse() {
    for entry in std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/config")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "yaml") {
            Config::from_file(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        }
    }
}

#[test]
fn mapping_roundtrip_and_overrides() {
    let c = Config::from_yaml("port: 44444\nnodes: {t: {prefix: x_}}\nrt: {cpu: 0}").unwrap();
    let back = Config::from_mapping(c.to_mapping()).unwrap();
    assert_eq!(back, c);
    let o = c
        .with_overrides(&[
            ("port".into(), Value::from(5)),
            ("nodes.t.accept".into(), Value::from(false)),
        ])
        .unwrap();
    assert_eq!(o.bridge.port, 5);
    assert_eq!(o.bridge.nodes["t"].accept, Some(false));
    assert_eq!(o.bridge.nodes["t"].prefix.as_deref(), Some("x_"));
    assert!(c
        .with_overrides(&[("nope".into(), Value::from(1))])
        .is_err());
}

#[test]
fn obstacle_stop_is_off_by_default_and_checked() {
    let c = Config::default();
    assert!(!c.driver.obstacle_stop.enabled);
    let c = Config::from_dotted(&[
        ("obstacle_stop.enabled".into(), Value::from(true)),
        ("obstacle_stop.threshold".into(), Value::from(1500)),
    ])
    .unwrap();
    assert!(c.driver.obstacle_stop.enabled);
    assert_eq!(c.driver.obstacle_stop.threshold, 1500);
    assert_eq!(c.driver.obstacle_stop.max_age, 0.5);
    let e = Config::from_yaml("obstacle_stop: {threshold: 0}")
        .unwrap_err()
        .to_string();
    assert!(e.contains("obstacle_stop.threshold"), "{e}");
    let e = Config::from_yaml("obstacle_stop: {max_age: -1}")
        .unwrap_err()
        .to_string();
    assert!(e.contains("obstacle_stop.max_age"), "{e}");
    let e = Config::from_yaml("obstacle_stop: {treshold: 10}")
        .unwrap_err()
        .to_string();
    assert!(e.contains("treshold"), "{e}");
}

#[test]
fn the_speed_refresh_must_feed_the_on_robot_watchdog() {
    let c = Config::from_yaml("restart_stopped_vm: false").unwrap();
    assert_eq!(
        (c.rt.speed_refresh_ms, c.driver.restart_stopped_vm),
        (100, false)
    );
    assert!(Config::default().driver.restart_stopped_vm);
    let e =
        Config::from_yaml("rt: {speed_refresh_ms: 300}\nscript: {constants: {SPEED_TIMEOUT: 300}}")
            .unwrap_err()
            .to_string();
    assert!(
        e.contains("rt.speed_refresh_ms") && e.contains("SPEED_TIMEOUT"),
        "{e}"
    );
    let e = Config::from_yaml("rt: {speed_refresh_ms: 0}")
        .unwrap_err()
        .to_string();
    assert!(e.contains("rt.speed_refresh_ms"), "{e}");
    let e = Config::from_yaml("script: {constants: {SPEED_TIMEOUT: -5}}")
        .unwrap_err()
        .to_string();
    assert!(e.contains("SPEED_TIMEOUT"), "{e}");
    // the watchdog off: any refresh
    let c =
        Config::from_yaml("rt: {speed_refresh_ms: 1000}\nscript: {constants: {SPEED_TIMEOUT: 0}}")
            .unwrap();
    assert_eq!(c.rt.speed_refresh_ms, 1000);
    // the shipped configuration is consistent
    let shipped = Config::from_file(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("config/thymio-rt.yaml"),
    )
    .unwrap();
    assert_eq!(shipped.bridge.script.constants["SPEED_TIMEOUT"], 300);
}

#[test]
fn switch_limits_default_to_the_protocol_and_are_checked() {
    let c = Config::default();
    assert_eq!(c.bridge.switch.max_payload, 516);
    assert_eq!(c.bridge.switch.tcp_budget, 100_000);
    let c = Config::from_dotted(&[("switch.tcp_budget".into(), Value::from(20_000))]).unwrap();
    assert_eq!(c.bridge.switch.tcp_budget, 20_000);
    for (yaml, key) in [
        ("switch: {max_payload: 517}", "switch.max_payload"),
        ("switch: {max_payload: 0}", "switch.max_payload"),
        ("switch: {client_queue: 100}", "switch.client_queue"),
        ("switch: {tcp_budget: 10}", "switch.tcp_budget"),
        ("switch: {budget: 10}", "budget"),
    ] {
        let e = Config::from_yaml(yaml).unwrap_err().to_string();
        assert!(e.contains(key), "{yaml}: {e}");
    }
}

/// The shipped file, as written (not parsed into the schema).
fn shipped_tree() -> Mapping {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("config/thymio-rt.yaml");
    yaml_serde::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn the_ros_parameters_are_the_yaml_keys() {
    // every parameter the schema has is documented in the shipped file, under the same
    // dotted name as the ROS parameter
    let shipped = shipped_tree();
    let written: Vec<String> = schema::leaves(&shipped)
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    let schema_names: Vec<String> = Config::default()
        .parameters()
        .into_iter()
        .map(|p| p.name)
        .collect();
    let undocumented: Vec<&String> = schema_names
        .iter()
        .filter(|n| !written.contains(n))
        .collect();
    assert!(
        undocumented.is_empty(),
        "not in config/thymio-rt.yaml: {undocumented:?}"
    );
    // and the configuration read from that file declares exactly the file's keys, plus the
    // defaults of the node classes' unset attributes
    let c = Config::from_mapping(shipped.clone()).unwrap();
    let declared: Vec<String> = c.parameters().into_iter().map(|p| p.name).collect();
    for name in &written {
        assert!(declared.contains(name), "{name} is not a parameter");
    }
    for name in &declared {
        assert!(
            written.contains(name) || name.starts_with("nodes."),
            "{name} is a parameter the file does not document"
        );
    }
    // a dotted override of each is the same as the file's nesting
    let dotted: Vec<(String, Value)> = schema::leaves(&shipped)
        .into_iter()
        .map(|(n, v)| (n, v.clone()))
        .collect();
    assert_eq!(Config::from_dotted(&dotted).unwrap(), c);
}

#[test]
fn live_flags_come_from_the_schema() {
    let params = Config::default().parameters();
    let live: Vec<&str> = params
        .iter()
        .filter(|p| p.live)
        .map(|p| p.name.as_str())
        .collect();
    assert_eq!(
        live,
        [
            "axis_length",
            "joint_state_rate",
            "ground.threshold",
            "obstacle_stop.enabled",
            "obstacle_stop.threshold",
            "obstacle_stop.max_age",
            "cliff_stop.enabled",
            "cliff_stop.threshold",
            "cliff_stop.max_age",
            "pickup_stop.enabled",
            "linear.x.max_velocity",
            "linear.x.min_velocity",
            "linear.x.max_acceleration",
            "linear.x.max_deceleration",
            "linear.x.max_acceleration_reverse",
            "linear.x.max_deceleration_reverse",
            "linear.x.max_jerk",
            "angular.z.max_velocity",
            "angular.z.min_velocity",
            "angular.z.max_acceleration",
            "angular.z.max_deceleration",
            "angular.z.max_acceleration_reverse",
            "angular.z.max_deceleration_reverse",
            "angular.z.max_jerk",
            "publish_limited_velocity",
            "pose_covariance_diagonal",
            "twist_covariance_diagonal",
            "enable_odom_tf"
        ]
    );
    for name in [
        "motor.left.parameters",
        "proximity.center.parameters",
        "axis_length",
    ] {
        assert!(Config::is_live(name), "{name}");
    }
    for name in [
        "port",
        "rt.period_us",
        "sim.robots",
        "nodes.thymio.prefix",
        "cmd_vel_timeout",
        "control.controllers.go_to_pose.max_linear",
        "control.controller_budget_us",
        "control.controller_overruns",
    ] {
        assert!(!Config::is_live(name), "{name}");
    }
}

#[test]
fn a_refused_value_keeps_its_cause() {
    use std::error::Error as _;
    let e = Config::from_yaml("rt: {period_us: soon}").unwrap_err();
    assert!(e.to_string().contains("rt.period_us"), "{e}");
    let cause = e.source().expect("a cause");
    assert!(cause.is::<yaml_serde::Error>(), "{cause:?}");
    let e = Config::from_yaml("targets: ['tcp:host=a;port=99999']").unwrap_err();
    assert!(
        e.source()
            .is_some_and(|c| c.is::<msgs::target::TargetError>()),
        "{e:?}"
    );
    let e = Config::from_yaml("axis_length: [1").unwrap_err();
    assert!(
        e.source().is_some_and(|c| c.is::<yaml_serde::Error>()),
        "{e:?}"
    );
    let e = Config::from_yaml("switch: {client_queue: 3}").unwrap_err();
    assert!(
        matches!(&e, ConfigError::Schema(SchemaError::Invalid(i)) if i.key == "switch.client_queue" && i.value == "3"),
        "{e:?}"
    );
}

#[test]
fn a_bad_motion_limit_is_a_start_error_naming_its_key() {
    let c = Config::from_yaml(
        "linear: {x: {max_acceleration: 0.2, max_velocity: .nan}}\nangular: {z: {max_jerk: 4}}\npublish_limited_velocity: true",
    )
    .unwrap();
    let limits = c.driver.motion_limits();
    assert_eq!(limits.linear.max_acceleration, 0.2);
    assert_eq!(limits.angular.max_jerk, 4.0);
    assert!(limits.linear.max_velocity.is_nan() && limits.angular.max_velocity.is_nan());
    assert!(c.driver.publish_limited_velocity);
    for (yaml, key, value) in [
        (
            "linear: {x: {max_acceleration: -0.5}}",
            "linear.x.max_acceleration",
            "-0.5",
        ),
        (
            "linear: {x: {min_velocity: 0.1}}",
            "linear.x.min_velocity",
            "0.1",
        ),
        (
            "angular: {z: {max_deceleration_reverse: -1}}",
            "angular.z.max_deceleration_reverse",
            "-1",
        ),
    ] {
        let e = Config::from_yaml(yaml).unwrap_err();
        assert!(
            matches!(&e, ConfigError::Schema(SchemaError::Invalid(i)) if i.key == key && i.value == value),
            "{yaml}: {e:?}"
        );
        assert!(e.to_string().contains(key), "{e}");
    }
    let e = Config::from_yaml("linear: {x: {max_accel: 1.0}}").unwrap_err();
    assert!(e.to_string().contains("max_accel"), "{e}");
}

#[path = "tests_runtime.rs"]
mod runtime;
