//! `control.controllers`: which registered controllers are loaded, with which start parameters.

use super::*;
use rt::controllers::{Registry, SHIPPED};

fn load(yaml: &str) -> Result<(Vec<&'static str>, LoadedControllers), String> {
    let c = Config::from_yaml(yaml).map_err(|e| e.to_string())?;
    let mut r = Registry::shipped();
    let loaded = c.control.load(&mut r).map_err(|e| e.to_string())?;
    Ok((r.names(), loaded))
}

#[test]
fn without_the_key_every_registered_controller_is_loaded_with_its_defaults() {
    let (names, loaded) = load("control: {default_owner: ros}\n").unwrap();
    assert_eq!(names, SHIPPED);
    assert!(loaded.params.is_empty());
    // and the key stays out of the parameters (no null ROS parameter)
    assert!(!Config::default()
        .parameters()
        .iter()
        .any(|p| p.name.starts_with("control.controllers")));
}

#[test]
fn the_listed_controllers_are_loaded_in_registry_order_with_their_values() {
    let (names, loaded) = load(
        "control:\n  default_owner: go_to_pose\n  controllers:\n    navigate_to_position:\n    go_to_pose: {max_linear: 0.05}\n    line_follower: {}\n",
    )
    .unwrap();
    assert_eq!(
        names,
        ["line_follower", "go_to_pose", "navigate_to_position"]
    );
    assert_eq!(loaded.params, [("go_to_pose", vec![("max_linear", 0.05)])]);
    // the values reach every robot's ports before the RT thread starts
    let mut r = Registry::shipped();
    r.retain(|n| names.contains(&n));
    let (_, mut control) = r.instantiate(2).unwrap();
    loaded.apply(&mut control).unwrap();
    let gtp: Vec<_> = control
        .ports
        .iter()
        .filter(|p| p.controller == "go_to_pose")
        .map(|p| p.params.get("max_linear"))
        .collect();
    assert_eq!(gtp, [Some(0.05), Some(0.05)]);
    assert_eq!(control.names.id("calibrate_motors"), None);
    // a set value is a start parameter too (ROS parameter override)
    let c =
        Config::from_yaml("control: {controllers: {go_to_pose: {max_linear: 0.05}}}\n").unwrap();
    let c = c
        .with_overrides(&[(
            "control.controllers.go_to_pose.max_linear".into(),
            yaml_serde::Value::from(0.07),
        )])
        .unwrap();
    assert_eq!(
        c.control.controllers.unwrap()["go_to_pose"]["max_linear"],
        0.07
    );
}

#[test]
fn bad_names_and_values_are_refused_naming_the_key() {
    for (yaml, wanted) in [
        (
            "control: {controllers: {autopilot: {}}}",
            vec![
                "control.controllers.autopilot",
                "registered: line_follower, go_to_pose",
            ],
        ),
        (
            "control: {controllers: {go_to_pose: {top_speed: 1}}}",
            vec!["control.controllers.go_to_pose.top_speed", "max_linear"],
        ),
        (
            "control: {controllers: {go_to_pose: {max_linear: 99}}}",
            vec!["control.controllers.go_to_pose.max_linear", "99", "in ["],
        ),
        (
            "control: {controllers: {go_to_pose: {max_linear: .nan}}}",
            vec!["control.controllers.go_to_pose.max_linear", "finite"],
        ),
        (
            "control: {controllers: {go_to_pose: {max_linear: fast}}}",
            vec!["control.controllers.go_to_pose.max_linear"],
        ),
        (
            "control: {default_owner: line_follower, controllers: {go_to_pose: {}}}",
            vec![
                "control.default_owner",
                "line_follower",
                "ros, joint, go_to_pose",
            ],
        ),
    ] {
        let e = load(yaml).unwrap_err();
        assert!(wanted.iter().all(|w| e.contains(w)), "{yaml}: {e}");
    }
}
