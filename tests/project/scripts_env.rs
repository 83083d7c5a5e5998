//! `scripts/ros2-env.sh` (sourced by `scripts/run.sh`, the README's run command) leaves the user's ROS networking
//! settings as they are: the driver must be reachable as the user's ROS setup says (issue 25), and only the tests
//! confine themselves to loopback (they set it on what they start).

use std::path::Path;
use std::process::Command;

use crate::common::missing;

/// The README's and docs/' links and anchors resolve (no test binary of its own: the team keeps their number down).
#[path = "../doc_links/mod.rs"]
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

/// Bounding box `[min, max]` of a binary STL, checking its size says its triangle count.
fn stl_bounds(bytes: &[u8]) -> [[f32; 3]; 2] {
    assert!(bytes.len() >= 84, "not a binary STL");
    let count = u32::from_le_bytes(bytes[80..84].try_into().unwrap()) as usize;
    assert_eq!(bytes.len(), 84 + 50 * count, "size vs triangle count");
    let mut b = [[f32::INFINITY; 3], [f32::NEG_INFINITY; 3]];
    for t in bytes[84..].chunks(50) {
        // normal, then three vertices
        for v in 1..4 {
            for (axis, c) in t[v * 12..v * 12 + 12].chunks(4).enumerate() {
                let x = f32::from_le_bytes(c.try_into().unwrap());
                b[0][axis] = b[0][axis].min(x);
                b[1][axis] = b[1][axis].max(x);
            }
        }
    }
    b
}

/// The robot model's meshes (meshes/, used by robot_description) are what scripts/gen-meshes.py makes, byte for byte,
/// and of the model's size: the body is the URDF's collision box (110 × 112 × 53 mm from x = −0.03, z = 0.005), the
/// wheel its radius (22 mm) and width (15 mm, a bar 1 mm proud of each face).
#[test]
fn the_committed_meshes_are_what_the_generator_writes() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = tempfile::tempdir().unwrap();
    let run = Command::new("python3")
        .arg(root.join("scripts/gen-meshes.py"))
        .arg("--out")
        .arg(out.path())
        .output()
        .expect("python3 runs");
    assert!(
        run.status.success(),
        "scripts/gen-meshes.py failed: {}",
        String::from_utf8_lossy(&run.stderr)
    );
    let mut names: Vec<_> = std::fs::read_dir(out.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["thymio_body.stl", "thymio_wheel.stl"]);
    for name in &names {
        let fresh = std::fs::read(out.path().join(name)).unwrap();
        let committed = std::fs::read(root.join("meshes").join(name))
            .unwrap_or_else(|e| panic!("meshes/{name}: {e} (run scripts/gen-meshes.py)"));
        assert!(
            fresh == committed,
            "meshes/{name} is not what scripts/gen-meshes.py writes: run it and commit the result"
        );
    }
    let close = |got: [[f32; 3]; 2], want: [[f32; 3]; 2]| {
        got.iter()
            .flatten()
            .zip(want.iter().flatten())
            .all(|(g, w)| (g - w).abs() < 1e-6)
    };
    let body = stl_bounds(&std::fs::read(root.join("meshes/thymio_body.stl")).unwrap());
    assert!(
        close(body, [[-0.03, -0.056, 0.005], [0.08, 0.056, 0.058]]),
        "{body:?}"
    );
    let wheel = stl_bounds(&std::fs::read(root.join("meshes/thymio_wheel.stl")).unwrap());
    assert!(
        close(wheel, [[-0.022, -0.0085, -0.022], [0.022, 0.0085, 0.022]]),
        "{wheel:?}"
    );
}

/// No import circle anywhere in the house and no Rust file over 650 lines outside the compiler's parser (issue 43):
/// `scripts/import-circles.py`, whose resolver is first checked on small crates it writes (`--self-test`).
#[test]
fn no_import_circle_and_no_rust_file_over_650_lines() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let run = |args: &[&str]| {
        let out = Command::new("python3")
            .arg(root.join("scripts/import-circles.py"))
            .args(args)
            .current_dir(root)
            .output()
            .expect("python3 runs");
        let text = String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr);
        (out.status.success(), text)
    };
    let (ok, out) = run(&["--self-test"]);
    assert!(ok, "the checker's self-test failed:\n{out}");
    let (ok, out) = run(&["--max-lines", "650"]);
    assert!(
        ok,
        "move the shared items into a leaf module, split the big file by concern:\n{out}"
    );
}
