//! `scripts/ros2-env.sh` (sourced by `scripts/run.sh`, the README's run command) leaves the user's ROS networking
//! settings as they are: the driver must be reachable as the user's ROS setup says (issue 25), and only the tests
//! confine themselves to loopback (they set it on what they start).

use std::path::Path;
use std::process::Command;

#[path = "common/missing.rs"]
mod missing;

/// The README's and docs/' links and anchors resolve (no test binary of its own: the team keeps their number down).
mod doc_links;

/// Whether the ROS 2 venv the script sets up is there (scripts/setup-ros2.sh). A default-feature test that needs it:
/// missing, the test fails naming it and its install step (`false` only when the run opted out, e.g. on a machine
/// without ROS with `scripts/test.sh --no-ros`: the skip is recorded, end the test).
fn need_ros2_venv() -> bool {
    let python = Path::new(env!("CARGO_MANIFEST_DIR")).join(".venv-ros/bin/python");
    if python.exists() {
        return true;
    }
    missing::peer_missing(
        &format!("the ROS 2 venv ({})", python.display()),
        missing::ROS2_SETUP,
    );
    false
}

/// The ROS networking variables the script must not touch.
const NETWORKING: &[&str] = &[
    "ROS_DOMAIN_ID",
    "ROS_AUTOMATIC_DISCOVERY_RANGE",
    "ROS_STATIC_PEERS",
    "ROS_LOCALHOST_ONLY",
    "ROS_MASTER_URI",
    "ROS_IP",
    "ROS_HOSTNAME",
];

/// Sources the script in bash with `set` given (others unset) and returns each networking variable afterwards
/// (`None`: unset).
fn after_sourcing(set: &[(&str, &str)]) -> Vec<(String, Option<String>)> {
    let mut script = String::from("source scripts/ros2-env.sh || exit 3\n");
    // the script did its work: a variable it always sets
    script.push_str("[ \"$ROS_DISTRO\" = jazzy ] || exit 4\n");
    for name in NETWORKING {
        script.push_str(&format!(
            "if [ -n \"${{{name}+x}}\" ]; then echo \"{name}=${name}\"; else echo \"{name} unset\"; fi\n"
        ));
    }
    let mut c = Command::new("bash");
    c.arg("-c")
        .arg(&script)
        .current_dir(env!("CARGO_MANIFEST_DIR"));
    for name in NETWORKING {
        c.env_remove(name);
    }
    for (name, value) in set {
        c.env(name, value);
    }
    let out = c.output().expect("bash runs");
    assert!(
        out.status.success(),
        "sourcing scripts/ros2-env.sh failed (status {:?}; run scripts/setup-ros2.sh if .venv-ros is missing): {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| match l.split_once('=') {
            Some((n, v)) => (n.to_owned(), Some(v.to_owned())),
            None => (l.trim_end_matches(" unset").to_owned(), None),
        })
        .collect()
}

#[test]
fn ros2_env_leaves_unset_networking_variables_unset() {
    if !need_ros2_venv() {
        return; // peer missing, run opted out: skip recorded
    }
    for (name, value) in after_sourcing(&[]) {
        assert_eq!(value, None, "scripts/ros2-env.sh set {name}");
    }
}

#[test]
fn ros2_env_keeps_the_users_networking_variables() {
    if !need_ros2_venv() {
        return; // peer missing, run opted out: skip recorded
    }
    let given = [
        ("ROS_DOMAIN_ID", "42"),
        ("ROS_AUTOMATIC_DISCOVERY_RANGE", "SUBNET"),
        ("ROS_STATIC_PEERS", "192.168.1.20;robot.local"),
        ("ROS_LOCALHOST_ONLY", "0"),
        ("ROS_MASTER_URI", "http://robot.local:11311"),
        ("ROS_IP", "192.168.1.10"),
        ("ROS_HOSTNAME", "laptop.local"),
    ];
    let after = after_sourcing(&given);
    assert_eq!(after.len(), given.len());
    for (name, value) in given {
        let got = after
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone());
        assert_eq!(
            got,
            Some(Some(value.to_owned())),
            "scripts/ros2-env.sh changed {name}"
        );
    }
}
