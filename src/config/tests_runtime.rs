//! Configuration tests of what reaches the running driver: simulated wheels and robots, the default owner, the
//! controller budget, the publishers' CPU, the YAML guard, motion-limit rates.

use super::*;

#[test]
fn simulated_wheels_are_ideal_by_default_and_checked() {
    let c = Config::default();
    assert_eq!(c.sim.wheels.spec().unwrap(), sim::thymio::WheelSpec::IDEAL);
    let c = Config::from_yaml("sim: {wheels: {gain: [1.06, 0.96], deadband_max: 12}}").unwrap();
    let spec = c.sim.wheels.spec().unwrap();
    assert_eq!((spec.gain, spec.deadband_max), (Some([1.06, 0.96]), 12));
    for (yaml, key) in [
        ("sim: {wheels: {gain: [1.06]}}", "sim.wheels.gain"),
        ("sim: {wheels: {gain: [1.06, 3.0]}}", "sim.wheels.gain"),
        (
            "sim: {wheels: {gain_spread: 0.9}}",
            "sim.wheels.gain_spread",
        ),
        (
            "sim: {wheels: {deadband_max: 900}}",
            "sim.wheels.deadband_max",
        ),
        ("sim: {wheels: {deadband: [1, 900]}}", "sim.wheels.deadband"),
    ] {
        let e = Config::from_yaml(yaml).unwrap_err();
        assert!(
            matches!(&e, ConfigError::Schema(SchemaError::Invalid(i)) if i.key == key),
            "{yaml}: {e:?}"
        );
    }
    assert!(Config::from_yaml("sim: {wheels: {radius: 1}}").is_err());
}

#[test]
fn the_default_owner_is_an_owner_name() {
    assert_eq!(Config::default().control.default_owner, "ros");
    let c = Config::from_yaml("control: {default_owner: go_to_pose}\n").unwrap();
    assert_eq!(c.control.default_owner, "go_to_pose");
    // the names are the registry's: checked when the controllers are loaded
    let c = Config::from_yaml("control: {default_owner: autopilot}\n").unwrap();
    let e = c
        .control
        .load(&mut rt::controllers::Registry::shipped())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("control.default_owner")
            && e.contains("autopilot")
            && e.contains("ros, joint, line_follower, go_to_pose"),
        "{e}"
    );
    assert!(Config::from_yaml("control: {owner: ros}\n").is_err());
    let e = Config::from_yaml("control: {default_owner: calibrate_motors}\n")
        .unwrap_err()
        .to_string();
    assert!(e.contains("through its action"), "{e}");
    let e = Config::from_yaml("control: {default_owner: drive_distance}\n")
        .unwrap_err()
        .to_string();
    assert!(e.contains("send a drive_distance goal"), "{e}");
    assert!(!Config::is_live("control.default_owner"));
}

#[test]
fn the_controller_budget_reaches_the_rt_thread_and_bad_values_name_their_key() {
    let d = Config::default();
    assert_eq!(
        (
            d.control.controller_budget_us,
            d.control.controller_overruns
        ),
        (1000, 5)
    );
    let rt = crate::runtime::rt_config(&d);
    assert_eq!(
        (rt.controller_budget, rt.controller_overruns),
        (std::time::Duration::from_millis(1), 5)
    );
    let c =
        Config::from_yaml("control: {controller_budget_us: 0, controller_overruns: 2}\n").unwrap();
    let rt = crate::runtime::rt_config(&c);
    assert_eq!(
        (rt.controller_budget, rt.controller_overruns),
        (std::time::Duration::ZERO, 2)
    );
    for (yaml, key, value) in [
        (
            "control: {controller_overruns: 0}",
            "control.controller_overruns",
            "0",
        ),
        (
            "control: {controller_budget_us: 2000000}",
            "control.controller_budget_us",
            "2000000",
        ),
    ] {
        let e = Config::from_yaml(yaml).unwrap_err();
        assert!(
            matches!(&e, ConfigError::Schema(SchemaError::Invalid(i)) if i.key == key && i.value == value),
            "{yaml}: {e:?}"
        );
    }
    assert!(Config::from_yaml("control: {controller_budget_us: -1}").is_err());
}

#[test]
fn the_publishers_share_the_rt_cpu_below_its_priority() {
    use crate::runtime::{companion_placement, rt_config};
    // the default: on the RT thread's CPU at SCHED_FIFO 1
    let c = Config::from_yaml("rt: {cpu: 0}").unwrap();
    let p = companion_placement(&c, &rt_config(&c));
    assert_eq!(
        p,
        handoff::CompanionPlacement {
            cpu: Some(0),
            priority: 1
        }
    );
    // an RT thread left SCHED_OTHER, or publishers asked SCHED_OTHER: any CPU, SCHED_OTHER
    for yaml in [
        "rt: {priority: 0, publisher_priority: 5}",
        "rt: {publisher_priority: 0}",
    ] {
        let c = Config::from_yaml(yaml).unwrap();
        assert_eq!(
            companion_placement(&c, &rt_config(&c)),
            handoff::CompanionPlacement::default(),
            "{yaml}"
        );
    }
    // at or above the RT thread's priority: refused, naming the key and the rule
    for (yaml, value) in [
        ("rt: {publisher_priority: 50}", "50"),
        ("rt: {priority: 10, publisher_priority: 20}", "20"),
    ] {
        let e = Config::from_yaml(yaml).unwrap_err();
        assert!(
            matches!(&e, ConfigError::Schema(SchemaError::Invalid(i))
                if i.key == "rt.publisher_priority" && i.value == value && i.rule.contains("below")),
            "{yaml}: {e}"
        );
    }
    assert!(Config::from_yaml("rt: {priority: 100}").is_err());
}

#[test]
fn a_hostile_configuration_is_refused_by_the_guard_before_the_parser() {
    use msgs::yaml_guard::YamlGuardError;
    // 400 KB of nesting: the YAML parser takes >30 s to refuse it, the guard milliseconds
    let text = format!("targets:\n  - {}\n", "[".repeat(400_000));
    let e = Config::from_yaml(&text).unwrap_err();
    assert!(
        matches!(
            &e,
            ConfigError::Bounds {
                source: YamlGuardError::TooDeep { line: 2, .. },
                ..
            }
        ),
        "{e:?}"
    );
    assert!(e.to_string().contains("nested deeper than"), "{e}");
    let dir = std::env::temp_dir().join(format!("thymio-rt-guard-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("big.yaml");
    std::fs::write(&path, format!("a: '{}'\n", "x".repeat(2 << 20))).unwrap();
    let e = Config::from_file(&path).unwrap_err();
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(
        matches!(
            &e,
            ConfigError::Bounds {
                source: YamlGuardError::TooLarge { .. },
                ..
            }
        ),
        "{e:?}"
    );
}

/// Issue 42: a configuration file's motion-limit rates below their physical minimum (a
/// deceleration of 0 or 1e-9 let a robot coast on, an acceleration of 5e-324 kept it still)
/// are a start error naming the key, the value and the range; `.nan` (off) stays accepted.
#[test]
fn motion_limit_rates_below_their_minimum_are_start_errors_with_the_range() {
    for (yaml, key, value, range) in [
        (
            "linear: {x: {max_deceleration: 0}}",
            "linear.x.max_deceleration",
            "0",
            "[0.05, 1000] m/s²",
        ),
        (
            "linear: {x: {max_deceleration: 1e-9}}",
            "linear.x.max_deceleration",
            "0.000000001",
            "[0.05, 1000] m/s²",
        ),
        (
            "linear: {x: {max_acceleration: 5e-324}}",
            "linear.x.max_acceleration",
            "0.000",
            "[0.05, 1000] m/s²",
        ),
        (
            "angular: {z: {max_deceleration: 0.01}}",
            "angular.z.max_deceleration",
            "0.01",
            "[1, 20000] rad/s²",
        ),
        (
            "angular: {z: {max_jerk: 0}}",
            "angular.z.max_jerk",
            "0",
            "[2, 20000000] rad/s³",
        ),
    ] {
        let e = Config::from_yaml(yaml).unwrap_err();
        assert!(
            matches!(&e, ConfigError::Schema(SchemaError::Invalid(i)) if i.key == key && i.value.starts_with(value)),
            "{yaml}: {e:?}"
        );
        let text = e.to_string();
        assert!(text.contains(key) && text.contains(range), "{text}");
    }
    let c = Config::from_yaml(
        "linear: {x: {max_deceleration: 0.05, max_acceleration: .nan}}\nangular: {z: {max_deceleration: 1}}",
    )
    .unwrap();
    let limits = c.driver.motion_limits();
    assert_eq!(limits.linear.max_deceleration, 0.05);
    assert!(limits.linear.max_acceleration.is_nan());
    assert_eq!(limits.angular.max_deceleration, 1.0);
}

#[test]
fn simulated_robots_are_bounded_as_the_sim_target() {
    assert_eq!(
        Config::from_yaml("sim: {robots: 64}").unwrap().sim.robots,
        64
    );
    let e = Config::from_yaml("sim: {robots: 65}")
        .unwrap_err()
        .to_string();
    assert!(e.contains("sim.robots") && e.contains("at most 64"), "{e}");
    let e = Config::from_yaml("targets: ['sim:robots=100000']")
        .unwrap_err()
        .to_string();
    assert!(e.contains("robots must be 1 to 64"), "{e}");
}
