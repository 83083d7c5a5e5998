//! The decision table of [`super::decide`] and the profile file's writing (the boundary itself is proven from a
//! second host by the root package's `tests/ros2/hosts.rs`).

use super::*;
use std::collections::HashMap;

fn decide_with(vars: &[(&str, &str)], cwd_files: &[&str]) -> Decision {
    let env: HashMap<String, String> = vars
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    decide(&|name| env.get(name).cloned(), &|file| {
        cwd_files.contains(&file)
    })
}

fn confined(d: &Decision) -> bool {
    matches!(d, Decision::Confine { .. })
}

#[test]
fn ros_defaults_and_wider_ranges_are_left_alone() {
    for vars in [
        &[][..],
        &[("ROS_AUTOMATIC_DISCOVERY_RANGE", "")],
        &[("ROS_AUTOMATIC_DISCOVERY_RANGE", "SUBNET")],
        &[("ROS_AUTOMATIC_DISCOVERY_RANGE", "OFF")],
        &[("ROS_AUTOMATIC_DISCOVERY_RANGE", "SYSTEM_DEFAULT")],
        &[("ROS_LOCALHOST_ONLY", "0")],
    ] {
        let d = decide_with(vars, &[]);
        assert!(matches!(d, Decision::Leave(_)), "{vars:?}: {d:?}");
    }
    let Decision::Leave(range) = decide_with(&[], &[]) else {
        unreachable!()
    };
    assert!(range.starts_with("SUBNET"), "{range}");
}

#[test]
fn one_host_is_confined_however_it_is_asked_for() {
    for (vars, named) in [
        (
            &[("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")][..],
            "ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST",
        ),
        // rcl's precedence: the deprecated variable wins over the range
        (
            &[
                ("ROS_LOCALHOST_ONLY", "1"),
                ("ROS_AUTOMATIC_DISCOVERY_RANGE", "SUBNET"),
            ],
            "ROS_LOCALHOST_ONLY=1",
        ),
        // rcl takes a value it does not know as LOCALHOST
        (
            &[("ROS_AUTOMATIC_DISCOVERY_RANGE", "localhost")],
            "ROS_AUTOMATIC_DISCOVERY_RANGE=localhost",
        ),
        (
            &[
                ("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST"),
                ("RMW_IMPLEMENTATION", "rmw_fastrtps_dynamic_cpp"),
                ("ROS_STATIC_PEERS", "127.0.0.1;localhost;::1"),
            ],
            "ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST",
        ),
    ] {
        match decide_with(vars, &[]) {
            Decision::Confine { asked_by } => assert!(asked_by.starts_with(named), "{asked_by}"),
            d => panic!("{vars:?}: {d:?}"),
        }
    }
}

#[test]
fn the_users_own_configuration_is_not_overridden_and_is_named() {
    let local = ("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST");
    for (vars, cwd, named) in [
        (
            vec![local, ("RMW_IMPLEMENTATION", "rmw_cyclonedds_cpp")],
            &[][..],
            "CYCLONEDDS_URI to a configuration",
        ),
        (
            vec![
                local,
                ("RMW_IMPLEMENTATION", "rmw_cyclonedds_cpp"),
                ("CYCLONEDDS_URI", "file:///etc/cyclone.xml"),
            ],
            &[],
            "CYCLONEDDS_URI=file:///etc/cyclone.xml is in effect",
        ),
        (
            vec![local, ("RMW_IMPLEMENTATION", "rmw_zenoh_cpp")],
            &[],
            "RMW_IMPLEMENTATION=rmw_zenoh_cpp",
        ),
        (
            vec![local, (FASTRTPS_PROFILES_VAR, "/home/u/dds.xml")],
            &[],
            "FASTRTPS_DEFAULT_PROFILES_FILE=/home/u/dds.xml",
        ),
        (
            vec![local, (FASTDDS_PROFILES_VAR, "/home/u/dds3.xml")],
            &[],
            "FASTDDS_DEFAULT_PROFILES_FILE=/home/u/dds3.xml",
        ),
        (
            vec![local],
            &["DEFAULT_FASTRTPS_PROFILES.xml"],
            "DEFAULT_FASTRTPS_PROFILES.xml in the working directory",
        ),
        (
            vec![local, ("ROS_DISCOVERY_SERVER", "10.0.0.5:11811")],
            &[],
            "ROS_DISCOVERY_SERVER=10.0.0.5:11811",
        ),
        (
            vec![local, ("ROS_STATIC_PEERS", "127.0.0.1;192.168.1.20")],
            &[],
            "other hosts (192.168.1.20)",
        ),
    ] {
        match decide_with(&vars, cwd) {
            Decision::NotEnforced(why) => {
                assert!(why.contains(named), "{why}");
                assert!(why.contains("does not restrict"), "{why}");
            }
            d => panic!("{vars:?}: {d:?}"),
        }
    }
}

#[test]
fn profiles_fast_dds_would_skip_and_peers_rcl_ignores_do_not_count() {
    let d = decide_with(
        &[
            ("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST"),
            ("SKIP_DEFAULT_XML_FILE", "1"),
            (FASTRTPS_PROFILES_VAR, ""),
        ],
        &["DEFAULT_FASTRTPS_PROFILES.xml"],
    );
    assert!(confined(&d), "{d:?}");
    // ROS_LOCALHOST_ONLY=1 makes rcl drop the static peers: one host it is
    let d = decide_with(
        &[
            ("ROS_LOCALHOST_ONLY", "1"),
            ("ROS_STATIC_PEERS", "192.168.1.20"),
        ],
        &[],
    );
    assert!(confined(&d), "{d:?}");
}

#[test]
fn the_profile_names_no_address_but_loopback_and_no_builtin_transport() {
    let addresses: Vec<&str> = LOOPBACK_PROFILE
        .split("<address>")
        .skip(1)
        .map(|rest| rest.split("</address>").next().unwrap())
        .collect();
    assert_eq!(addresses, ["127.0.0.1"; 3]);
    assert!(LOOPBACK_PROFILE.contains("<useBuiltinTransports>false</useBuiltinTransports>"));
    assert!(LOOPBACK_PROFILE.contains("is_default_profile=\"true\""));
    // each transport the participant uses is described
    for id in ["thymio_rt_loopback_udp", "thymio_rt_shm"] {
        assert_eq!(LOOPBACK_PROFILE.matches(id).count(), 2, "{id}");
    }
}

#[test]
fn the_profile_goes_to_the_users_runtime_directory() {
    let dir = std::env::temp_dir();
    assert_eq!(
        profile_path(Some(dir.clone().into_os_string()), 42, 0xbeef),
        dir.join("thymio-rt-42-0000beef-dds-loopback.xml")
    );
    // a relative or missing directory is not used
    for bad in ["run/user", "/nonexistent/thymio-rt-test"] {
        assert_eq!(
            profile_path(Some(bad.into()), 7, 1),
            std::env::temp_dir().join("thymio-rt-7-00000001-dds-loopback.xml")
        );
    }
}

#[test]
fn a_planted_link_is_replaced_not_written_through() {
    use std::os::unix::fs::PermissionsExt;
    let dir = std::env::temp_dir().join(format!("thymio-rt-dds-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let victim = dir.join("victim");
    std::fs::write(&victim, "keep").unwrap();
    let path = dir.join("profile.xml");
    let _ = std::fs::remove_file(&path);
    std::os::unix::fs::symlink(&victim, &path).unwrap();
    write_new(&path, "profile").unwrap();
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "profile");
    let meta = std::fs::symlink_metadata(&path).unwrap();
    assert!(meta.is_file());
    assert_eq!(meta.permissions().mode() & 0o777, 0o600);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_line_says_which_boundary_is_in_force() {
    let b = DdsBoundary {
        decision: Decision::Confine {
            asked_by: "ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST".into(),
        },
        // never written: dropping the boundary removes nothing
        profile: Some(std::env::temp_dir().join("thymio-rt-never-written.xml")),
    };
    assert!(b.describe().contains("this host only"));
    assert!(b.describe().contains("thymio-rt-never-written.xml"));
    assert!(!b.is_warning());
    let b = DdsBoundary {
        decision: decide_with(&[], &[]),
        profile: None,
    };
    assert!(b.describe().contains("SUBNET"), "{}", b.describe());
    let b = DdsBoundary {
        decision: Decision::NotEnforced("why".into()),
        profile: None,
    };
    assert!(b.is_warning());
    assert!(b.describe().contains("NOT enforced: why"));
}
