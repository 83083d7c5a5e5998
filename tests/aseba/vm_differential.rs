//! Differential tests of thymio-rt's VM against the official (Mobsya) VM: the same scenarios
//! (tests/vm/scenarios.json: programs, event sequences, watched variables) are played by the
//! official client on a pyaseba node (official VM) and on a bare node of thymio-rt's simulator
//! with the very same description; variables, emitted events and error messages must be
//! identical after every step.

use crate::common;

use common::{free_port, pyaseba_python, root, thymio_rt, Proc};
use msgs::description::TargetDescription;
use serde_json::Value;
use std::process::Command;
use std::time::Duration;

fn run_scenarios(python: &std::path::Path, target: &str) -> Value {
    let out = Command::new("timeout")
        .arg("300")
        .arg(python)
        .arg(root().join("tests/py/vm_scenarios.py"))
        .arg(target)
        .arg(root().join("tests/vm/scenarios.json"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{target}: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(stdout.lines().last().unwrap()).unwrap()
}

#[test]
fn vm_matches_the_official_vm() {
    let Some(python) = pyaseba_python() else {
        return; // peer missing, run opted out: skip recorded
    };
    let port = free_port();
    let mut c = Command::new(&python);
    c.arg(root().join("tests/py/official_vm_node.py")).args([
        "--port",
        &port.to_string(),
        "--duration",
        "400",
    ]);
    let mut official = Proc::spawn("official VM node", c);
    official.wait_line(Duration::from_secs(20), |l| l.starts_with("READY"));
    let official_target = format!("tcp:127.0.0.1;{port}");

    // the same description, served by our VM
    let out = thymio_rt()
        .args(["nodes", "--target", &official_target, "--json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let nodes: Value = serde_json::from_slice(&out.stdout).unwrap();
    let description: TargetDescription =
        serde_json::from_value(nodes[0]["description"].clone()).unwrap();
    // pyaseba's nodes run at most 1000 instructions per event (then kill it), as dummynode
    let ours =
        sim::generic::serve_node(description, 1, "127.0.0.1:0".parse().unwrap(), 1000).unwrap();
    let our_target = ours.endpoint.clone();

    let p2 = python.clone();
    let theirs = std::thread::spawn(move || run_scenarios(&p2, &official_target));
    let mine = run_scenarios(&python, &our_target);
    let theirs = theirs.join().unwrap();

    let (a, b) = (theirs.as_array().unwrap(), mine.as_array().unwrap());
    assert_eq!(a.len(), b.len());
    assert!(a.len() >= 50, "at least 50 scenarios");
    let mut diffs = Vec::new();
    let mut errors_seen = std::collections::BTreeSet::new();
    for (t, m) in a.iter().zip(b) {
        if t.get("compile_error").is_some() {
            diffs.push(format!(
                "{}: does not compile: {}",
                t["name"], t["compile_error"]
            ));
            continue;
        }
        for snap in t["snapshots"].as_array().unwrap() {
            for e in snap["errors"].as_array().unwrap() {
                errors_seen.insert(e[0].as_str().unwrap().to_owned());
            }
        }
        if t != m {
            diffs.push(format!(
                "{}:\n  official: {}\n  ours:     {}",
                t["name"], t["snapshots"], m["snapshots"]
            ));
        }
    }
    assert!(
        diffs.is_empty(),
        "{} of {} scenarios differ:\n{}",
        diffs.len(),
        a.len(),
        diffs.join("\n")
    );
    // the scenarios go through the error paths
    for kind in ["out_of_bounds", "division_by_zero", "node_error", "killed"] {
        assert!(
            errors_seen.contains(kind),
            "no scenario raised {kind}: {errors_seen:?}"
        );
    }
}
