//! The network tools and the switch against real Aseba peers: official-VM nodes of PyPI
//! `pyaseba`, Aseba Playground of the Debian `aseba` package (simulated Thymios over TCP),
//! and the official clients (`pyaseba` Client, `asebamassloader`) through our switch.

use crate::common;

use common::*;
use handoff::NodeId;
use nrt_engine::engine::EngineEvent;
use nrt_engine::network::NetworkEvent;
use std::process::Command;
use std::time::Duration;
use thymio_rt::config::Config;
use thymio_rt::runtime::Runtime;

fn run_tool(args: &[&str]) -> (bool, String, String) {
    let out = thymio_rt().args(args).output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn tools_against_pyaseba_official_vm_nodes() {
    let port = free_port();
    let Some(_nodes) = pyaseba_nodes(port, 2) else {
        return; // peer missing, run opted out: skip recorded
    };
    let target = format!("tcp:host=127.0.0.1;port={port}");

    let (ok, out, err) = run_tool(&["nodes", "--target", &target, "--json"]);
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let nodes = v.as_array().unwrap();
    assert_eq!(nodes.len(), 2, "{out}");
    for (i, n) in nodes.iter().enumerate() {
        assert_eq!(n["id"], i + 1);
        assert_eq!(n["name"], "pyaseba-test");
        assert_eq!(n["protocol_version"], 9);
        let vars: Vec<&str> = n["variables"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v["name"].as_str().unwrap())
            .collect();
        assert!(
            vars.contains(&"counter") && vars.contains(&"values"),
            "{vars:?}"
        );
        let values = n["variables"]
            .as_array()
            .unwrap()
            .iter()
            .find(|v| v["name"] == "values")
            .unwrap();
        assert_eq!(values["size"], 4);
        assert!(n["natives"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["name"] == "math.copy"
                && f["params"][0] == serde_json::json!({"name": "dest", "size": -1})));
        assert_eq!(n["local_events"], serde_json::json!(["tick"]));
    }

    // the node's counter runs: two reads differ
    let (ok, a, err) = run_tool(&["vars", "get", "--target", &target, "--node", "1", "counter"]);
    assert!(ok, "{err}");
    let (_, b, _) = run_tool(&["vars", "get", "--target", &target, "--node", "1", "counter"]);
    assert_ne!(
        a.trim().parse::<i32>().unwrap(),
        b.trim().parse::<i32>().unwrap()
    );

    let (ok, _, err) = run_tool(&[
        "vars", "set", "--target", &target, "--node", "2", "values", "7", "-8", "9", "10",
    ]);
    assert!(ok, "{err}");
    let (ok, out, _) = run_tool(&["vars", "get", "--target", &target, "--node", "2", "values"]);
    assert!(ok);
    assert_eq!(out.trim(), "7 -8 9 10");

    // errors: one clear line, non-zero exit
    let (ok, _, err) = run_tool(&["vars", "get", "--target", &target, "--node", "1", "nope"]);
    assert!(!ok);
    assert_eq!(err.trim(), "thymio-rt: node 1 has no variable \"nope\"");
    let (ok, _, err) = run_tool(&[
        "vars", "set", "--target", &target, "--node", "1", "values", "1",
    ]);
    assert!(!ok);
    assert_eq!(
        err.trim(),
        "thymio-rt: variable \"values\" has size 4, got 1 values"
    );
    let (ok, _, err) = run_tool(&["vars", "get", "--target", &target, "--node", "9", "counter"]);
    assert!(!ok);
    assert_eq!(err.trim(), "thymio-rt: no node with id 9");
}

#[test]
fn tool_errors_are_one_line() {
    let (ok, _, err) = run_tool(&["nodes", "--target", "tcp:host=127.0.0.1;port=99999"]);
    assert!(!ok);
    assert_eq!(
        err.trim(),
        "thymio-rt: invalid port \"99999\" in \"tcp:host=127.0.0.1;port=99999\""
    );
    let closed = free_port();
    let target = format!("tcp:host=127.0.0.1;port={closed}");
    let (ok, _, err) = run_tool(&["nodes", "--target", &target, "--timeout", "1.5"]);
    assert!(!ok);
    assert_eq!(
        err.trim(),
        format!("thymio-rt: cannot connect to {target} within 1.5 s")
    );
    let (ok, _, err) = run_tool(&["emit", "--target", &target, "40000"]);
    assert!(!ok);
    assert!(err.contains("40000"), "{err}");
}

#[test]
fn pyaseba_client_sees_the_node_through_our_switch() {
    let port = free_port();
    let Some(_nodes) = pyaseba_nodes(port, 1) else {
        return; // peer missing, run opted out: skip recorded
    };
    let switch = free_port();
    // the generic bridge: an empty configuration (asebaros' defaults bridge every node), not the built-in one,
    // which is the Thymio driver's and ignores other nodes
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("bridge.yaml");
    std::fs::write(&config, "").unwrap();
    let mut driver = thymio_rt();
    driver.args([
        "run",
        "--no-ros",
        "--config",
        config.to_str().unwrap(),
        "--target",
        &format!("tcp:host=127.0.0.1;port={port}"),
    ]);
    driver.args(["--switch-port", &switch.to_string(), "--duration", "60"]);
    let mut driver = Proc::spawn("thymio-rt run", driver);
    driver.wait_line(Duration::from_secs(10), |l| {
        l.contains("node 1 (pyaseba-test) accepted")
    });
    let out = Command::new(pyaseba_python().unwrap())
        .arg(root().join("tests/py/pyaseba_client.py"))
        .arg(format!("tcp:host=127.0.0.1;port={switch}"))
        .arg("counter")
        .env("LANG", "en_US.UTF-8")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    assert_eq!(v["nodes"]["1"], "pyaseba-test");
    assert!(v["value"][0].as_i64().unwrap() > 0);
    driver.signal(nix::sys::signal::Signal::SIGINT);
    assert!(driver.wait_exit(Duration::from_secs(5)).success());
}

#[test]
fn playground_thymio_variables_and_events_through_the_switch() {
    let dir = tempfile::tempdir().unwrap();
    let base = free_port();
    let Some(_pg) = playground(dir.path(), base, 1) else {
        return; // peer missing, run opted out: skip recorded
    };
    let target = format!("tcp:host=127.0.0.1;port={base}");

    let (ok, out, err) = run_tool(&["nodes", "--target", &target, "--json"]);
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v[0]["name"], "thymio-II");
    assert_eq!(v[0]["protocol_version"], 5);
    assert_eq!(v[0]["variables"].as_array().unwrap().len(), 30);
    let (ok, out, err) = run_tool(&[
        "vars",
        "get",
        "--target",
        &target,
        "--node",
        "1",
        "prox.horizontal",
    ]);
    assert!(ok, "{err}");
    assert_eq!(out.split_whitespace().count(), 7);
    let (ok, _, err) = run_tool(&[
        "vars",
        "set",
        "--target",
        &target,
        "--node",
        "1",
        "motor.left.target",
        "123",
    ]);
    assert!(ok, "{err}");
    let (_, out, _) = run_tool(&[
        "vars",
        "get",
        "--target",
        &target,
        "--node",
        "1",
        "motor.left.target",
    ]);
    assert_eq!(out.trim(), "123");
    run_tool(&[
        "vars",
        "set",
        "--target",
        &target,
        "--node",
        "1",
        "motor.left.target",
        "0",
    ]);

    // Our runtime holds the robot; asebamassloader (official community compiler) loads a script
    // through our switch; the events it emits reach our runtime.
    let mut config = Config::default();
    config.bridge.targets = vec![target];
    config.bridge.port = free_port();
    config.driver.enabled = false;
    config.rt.priority = 0;
    let switch = config.bridge.port;
    let mut rt = Runtime::start(&config).unwrap();
    rt.poll_until(Duration::from_secs(10), |e, _| {
        e.network()
            .node(NodeId(1))
            .filter(|n| n.is_bridged())
            .map(|_| ())
    })
    .expect("playground node accepted");
    let mut loader = Proc::spawn("asebamassloader", {
        let mut c = Command::new("asebamassloader");
        c.arg(root().join("tests/data/ticker.aesl"))
            .arg(format!("tcp:127.0.0.1;{switch}"))
            .env("LANG", "en_US.UTF-8");
        c
    });
    let mut ticks = Vec::new();
    rt.poll_until(Duration::from_secs(15), |_, events| {
        loader.drain();
        for e in events {
            if let EngineEvent::Network(NetworkEvent::UserEvent {
                source: NodeId(1),
                id: 0,
                args,
                ..
            }) = e
            {
                ticks.push(args[0]);
            }
        }
        (ticks.len() >= 5).then_some(())
    })
    .unwrap_or_else(|| panic!("no tick events; massloader said {:?}", loader.seen));
    assert!(ticks.windows(2).all(|w| w[1] == w[0] + 1), "{ticks:?}");
    rt.stop();
}

/// `thymio-rt doctor` against Aseba Playground's robot (issue 44 item 4): with the built-in configuration the driver's
/// firmware-14 script does not compile for the Playground's Thymio, and the doctor names it (exit 1) with the fix;
/// with the Playground script configured the robot is healthy (exit 0). The Playground has no battery to read.
#[test]
fn doctor_checks_the_playground_robot() {
    let dir = tempfile::tempdir().unwrap();
    let base = free_port();
    let Some(_pg) = playground(dir.path(), base, 1) else {
        return; // peer missing, run opted out: skip recorded
    };
    let target = format!("tcp:host=127.0.0.1;port={base}");
    let doctor = |extra: &[&str]| {
        let out = thymio_rt()
            .args(["doctor", "--json", "--samples", "3", "--target", &target])
            .args(extra)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let v: serde_json::Value = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("{e}: {text}\n{}", String::from_utf8_lossy(&out.stderr)));
        (out.status.code(), v)
    };
    let status = |v: &serde_json::Value, name: &str| {
        v["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["check"] == name)
            .unwrap_or_else(|| panic!("no {name}: {v:#}"))
            .clone()
    };
    let (code, v) = doctor(&[]);
    assert_eq!(code, Some(1), "{v:#}");
    let failed: Vec<&str> = v["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["status"] == "fail")
        .map(|c| c["check"].as_str().unwrap())
        .collect();
    assert_eq!(failed, ["script"], "{v:#}");
    let script = status(&v, "script");
    assert!(
        script["message"]
            .as_str()
            .unwrap()
            .contains("prox.comm.rx._payloads is not a defined variable"),
        "{script}"
    );
    assert!(
        script["fix"]
            .as_str()
            .unwrap()
            .contains("builtin:aseba/thymio_ros_playground.aesl"),
        "{script}"
    );
    assert_eq!(status(&v, "protocol")["data"]["protocol_version"], 5);
    assert_eq!(status(&v, "battery")["status"], "skip", "{v:#}");

    let config = dir.path().join("playground.yaml");
    std::fs::write(
        &config,
        "script: {path: 'builtin:aseba/thymio_ros_playground.aesl'}\n",
    )
    .unwrap();
    let (code, v) = doctor(&["--config", config.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{v:#}");
    assert_eq!(v["healthy"], true);
    for name in ["connect", "protocol", "script", "proximity", "ground"] {
        assert_eq!(status(&v, name)["status"], "ok", "{name}: {v:#}");
    }
}
