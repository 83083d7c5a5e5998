//! End to end, the generic Aseba bridge (asebaros interface) against real peers: `thymio-rt run` (built with the
//! feature `ros2`, started without LD_LIBRARY_PATH) on official-VM nodes of PyPI pyaseba and on Aseba Playground,
//! and rclpy in another process; every check goes through ROS.
//!
//! Each test gives its driver its own namespace (`--ros-args -r __ns:=/<ns>`), on this process's DDS domain.
#![cfg(feature = "ros2")]

use crate::common;
use crate::rclpy_peer;
use crate::ros_driver;
#[path = "../ros/switch_client.rs"]
mod switch_client;

use common::Proc;
use msgs::wire::{Message, Words};
use rclpy_peer::RclpyPeer;
use ros_driver::{expect_log, get_variable, ros_driver, rosout_peer, stop, LOG_ERROR};
use serde_json::{json, Value};
use std::path::Path;
use std::time::{Duration, Instant};
use switch_client::SwitchClient;

/// Bound of one whole test.
const TEST_TIMEOUT: Duration = Duration::from_secs(120);

/// `thymio-rt run` on `targets`, namespace `/<ns>`, with the switch on `switch_port` (0: none) and the ROS
/// parameters `params` (`name:=value`); the RT thread runs unprivileged (these are functional tests).
fn driver(dir: &Path, ns: &str, targets: &[String], switch_port: u16, params: &[&str]) -> Proc {
    let switch_port = switch_port.to_string();
    let mut args = Vec::new();
    for t in targets {
        args.extend(["-t", t.as_str()]);
    }
    args.extend(["--switch-port", switch_port.as_str()]);
    let yaml = "rt: {priority: 0, lock_memory: false}\n";
    ros_driver(dir, ns, yaml, &args, params)
}

/// `/<ns>/aseba/<leaf>`.
fn name(ns: &str, leaf: &str) -> String {
    format!("/{ns}/aseba/{leaf}")
}

/// Starts the rclpy peer with `/rosout` and the bridge's `aseba/nodes` subscribed, and waits until the node list
/// holds `count` connected nodes; returns the peer and the list.
fn peer_with_nodes(ns: &str, count: usize, deadline: Instant) -> (RclpyPeer, Value) {
    let mut peer = rosout_peer(deadline);
    let nodes_topic = name(ns, "nodes");
    peer.subscribe(
        &nodes_topic,
        "asebaros_msgs/msg/NodeList",
        "transient_local",
        deadline,
    )
    .unwrap();
    let list = peer
        .message(&nodes_topic, deadline, |m| {
            m["nodes"]
                .as_array()
                .is_some_and(|n| n.len() == count && n.iter().all(|n| n["connected"] == true))
        })
        .unwrap();
    (peer, list["nodes"].clone())
}

/// Waits for an error on `/rosout` from the bridge of namespace `ns` whose text holds `needle`.
fn expect_error(peer: &mut RclpyPeer, ns: &str, needle: &str, deadline: Instant) {
    expect_log(peer, ns, LOG_ERROR, needle, deadline);
}

fn set_variable(peer: &mut RclpyPeer, ns: &str, var: &str, data: Value, deadline: Instant) {
    peer.call(
        &name(ns, "set_variable"),
        "asebaros_msgs/srv/SetVariable",
        json!({ "variable": var, "data": data }),
        deadline,
    )
    .unwrap();
}

#[test]
fn pyaseba_node_through_the_bridge() {
    let deadline = Instant::now() + TEST_TIMEOUT;
    let ns = "pyaseba";
    let aseba_port = common::free_port();
    let Some(_vm) = common::pyaseba_nodes(aseba_port, 1) else {
        return; // peer missing, run opted out: skip recorded
    };
    let dir = tempfile::tempdir().unwrap();
    let switch_port = common::free_port();
    let target = format!("tcp:host=127.0.0.1;port={aseba_port}");
    let driver = driver(
        dir.path(),
        ns,
        std::slice::from_ref(&target),
        switch_port,
        &["highest_acceptable_protocol_version:=20"],
    );
    let (mut peer, nodes) = peer_with_nodes(ns, 1, deadline);

    // aseba/nodes and aseba/get_nodes
    let expected = json!([{"id": 1, "name": "pyaseba-test", "name_space": "", "running": false,
                           "ignored": false, "connected": true}]);
    assert_eq!(nodes, expected);
    for ignored in [false, true] {
        let got = peer
            .call(
                &name(ns, "get_nodes"),
                "asebaros_msgs/srv/GetNodeList",
                json!({ "ignored": ignored }),
                deadline,
            )
            .unwrap();
        assert_eq!(got["nodes"], expected);
    }

    // the effective configuration (file, command line, ROS parameters) is declared as the node's parameters
    let params = peer
        .call(
            &format!("/{ns}/asebaros/get_parameters"),
            "rcl_interfaces/srv/GetParameters",
            json!({ "names": ["port", "targets", "loop", "highest_acceptable_protocol_version"] }),
            deadline,
        )
        .unwrap();
    let values = params["values"].as_array().unwrap();
    assert_eq!(values[0]["integer_value"], switch_port);
    assert_eq!(values[1]["string_array_value"], json!([target]));
    assert_eq!(
        (
            values[2]["type"].as_u64(),
            values[2]["bool_value"].as_bool()
        ),
        (Some(1), Some(false))
    );
    assert_eq!(values[3]["integer_value"], 20);
    // each says whether it applies at run time, as the configuration schema says
    let described = peer
        .call(
            &format!("/{ns}/asebaros/describe_parameters"),
            "rcl_interfaces/srv/DescribeParameters",
            json!({ "names": ["port", "obstacle_stop.enabled", "rt.period_us", "axis_length"] }),
            deadline,
        )
        .unwrap();
    let descriptions: Vec<&str> = described["descriptors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["description"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(
        descriptions,
        [
            "read at start: restart to apply a change",
            "applied at run time",
            "read at start: restart to apply a change",
            "applied at run time"
        ],
        "{described}"
    );

    // description, by service and on the latched topic
    let description = peer
        .call(
            &name(ns, "get_description"),
            "asebaros_msgs/srv/GetDescription",
            json!({}),
            deadline,
        )
        .unwrap()["description"]
        .clone();
    assert_eq!(description["id"], 1);
    assert_eq!(description["name"], "pyaseba-test");
    assert_eq!(description["events"], json!([]));
    let variables: Vec<&str> = description["variables"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    for v in ["counter", "value", "values"] {
        assert!(variables.contains(&v), "{v} not in {variables:?}");
    }
    let topic = name(ns, "description");
    peer.subscribe(
        &topic,
        "asebaros_msgs/msg/NodeDescription",
        "transient_local",
        deadline,
    )
    .unwrap();
    assert_eq!(
        peer.message(&topic, deadline, |_| true).unwrap(),
        description
    );

    // variables round-trip, live values
    set_variable(&mut peer, ns, "values", json!([1, -2, 3, -32768]), deadline);
    assert_eq!(
        get_variable(&mut peer, ns, "values", deadline),
        json!([1, -2, 3, -32768])
    );
    let first = get_variable(&mut peer, ns, "counter", deadline)[0]
        .as_i64()
        .unwrap();
    while get_variable(&mut peer, ns, "counter", deadline)[0]
        .as_i64()
        .unwrap()
        == first
    {
        assert!(Instant::now() < deadline, "counter does not advance");
    }

    // bad requests are answered and reported, and change nothing
    set_variable(&mut peer, ns, "nope", json!([1]), deadline);
    expect_error(&mut peer, ns, "no variable \"nope\"", deadline);
    assert_eq!(get_variable(&mut peer, ns, "nope", deadline), json!([]));
    set_variable(&mut peer, ns, "values", json!([5, 6]), deadline);
    expect_error(&mut peer, ns, "has size 4, got 2", deadline);
    assert_eq!(
        get_variable(&mut peer, ns, "values", deadline),
        json!([1, -2, 3, -32768])
    );

    // anonymous events, ROS -> Aseba: only source 0 goes out
    let mut client = SwitchClient::connect(switch_port, deadline);
    let anonymous = name(ns, "anonymous_events");
    let event = |source: u16, kind: u16, data: Value| json!({"stamp": {"sec": 0, "nanosec": 0}, "source": source, "type": kind, "data": data});
    let anon_type = "asebaros_msgs/msg/AnonymousEvent";
    peer.publish(&anonymous, anon_type, event(5, 6, json!([9])), 1, deadline)
        .unwrap();
    peer.publish_until_heard(
        &anonymous,
        anon_type,
        event(0, 5, json!([7, 8])),
        1,
        deadline,
        |_, try_end| {
            while Instant::now() < try_end && !client.events.iter().any(|e| e.1 == 5) {
                client.read();
            }
            client.events.iter().any(|e| e.1 == 5)
        },
    )
    .expect("the anonymous event did not reach Aseba");
    assert!(
        client.events.iter().all(|e| *e == (0, 5, vec![7, 8])),
        "only source 0 goes out: {:?}",
        client.events
    );

    // anonymous events, Aseba -> ROS (from a host the bridge does not bridge)
    peer.subscribe(&anonymous, anon_type, "volatile", deadline)
        .unwrap();
    let from_aseba = Message::UserEvent {
        id: 3,
        args: Words::from_slice(&[1, -2]),
    };
    let got = loop {
        client.send(77, &from_aseba);
        let seen = peer
            .poll_map(Instant::now() + Duration::from_millis(200), |r| {
                (r["event"] == "message" && r["topic"] == anonymous && r["data"]["source"] == 77)
                    .then(|| Ok(r["data"].clone()))
            })
            .unwrap();
        if let Some(m) = seen {
            break m;
        }
        assert!(
            Instant::now() < deadline,
            "no anonymous event reached rclpy"
        );
    };
    assert_eq!(got["type"], 3);
    assert_eq!(got["data"], json!([1, -2]));
    assert!(got["stamp"]["sec"].as_i64().unwrap() > 1_600_000_000);

    // diagnostics: the network, the node, the RT thread and the switch
    peer.subscribe(
        "/diagnostics",
        "diagnostic_msgs/msg/DiagnosticArray",
        "volatile",
        deadline,
    )
    .unwrap();
    let array = peer
        .message("/diagnostics", deadline, |a| {
            let status = a["status"].as_array().unwrap();
            let find = |n: &str| status.iter().find(|s| s["name"] == n);
            find("asebaros: Aseba Network").is_some_and(|s| s["hardware_id"] == target.as_str())
                && find("asebaros: RT thread").is_some_and(|s| s["message"] != "No statistics yet")
        })
        .unwrap();
    let status = array["status"].as_array().unwrap();
    let find = |n: &str| status.iter().find(|s| s["name"] == n).unwrap();
    let value = |s: &Value, k: &str| {
        s["values"]
            .as_array()
            .unwrap()
            .iter()
            .find(|kv| kv["key"] == k)
            .unwrap()["value"]
            .clone()
    };
    let network = find("asebaros: Aseba Network");
    assert_eq!(
        (network["level"].as_u64(), network["message"].as_str()),
        (Some(0), Some("Connected"))
    );
    assert_eq!(value(network, "Connected nodes"), "1");
    let node = find("asebaros: Aseba Node pyaseba-test 1");
    assert_eq!(node["message"], "Connected");
    let rt = find("asebaros: RT thread");
    assert!(
        value(rt, "Cycles")
            .as_str()
            .unwrap()
            .parse::<u64>()
            .unwrap()
            > 0
    );
    assert!(
        value(rt, "Frames received")
            .as_str()
            .unwrap()
            .parse::<u64>()
            .unwrap()
            > 0
    );
    // the switch's status: limits and counters (issue 14), nothing refused here
    let switch = find("asebaros: Aseba switch");
    assert_eq!(
        (switch["level"].as_u64(), switch["message"].as_str()),
        (Some(0), Some("OK"))
    );
    assert_eq!(value(switch, "Largest payload [bytes]"), "516");
    assert_eq!(value(switch, "Oversize frames refused"), "0");

    drop(peer);
    stop(driver);
}

#[test]
fn playground_thymio_through_the_bridge() {
    let deadline = Instant::now() + TEST_TIMEOUT;
    let ns = "playground";
    let dir = tempfile::tempdir().unwrap();
    let aseba_port = common::free_port();
    let Some(_playground) = common::playground(dir.path(), aseba_port, 1) else {
        return; // peer missing, run opted out: skip recorded
    };
    let target = format!("tcp:host=127.0.0.1;port={aseba_port}");
    let driver = driver(dir.path(), ns, &[target], 0, &[]);
    let (mut peer, nodes) = peer_with_nodes(ns, 1, deadline);
    let node = &nodes[0];
    assert_eq!(node["name"], "thymio-II");
    assert_eq!(node["connected"], true);
    assert_eq!(node["running"], false);

    let description = peer
        .call(
            &name(ns, "get_description"),
            "asebaros_msgs/srv/GetDescription",
            json!({}),
            deadline,
        )
        .unwrap()["description"]
        .clone();
    assert_eq!(description["id"], node["id"]);
    let variables = description["variables"].as_array().unwrap();
    for v in ["motor.left.target", "timer.period", "prox.horizontal"] {
        assert!(variables.iter().any(|x| x == v), "{v} not in {variables:?}");
    }
    assert_eq!(
        get_variable(&mut peer, ns, "prox.horizontal", deadline)
            .as_array()
            .unwrap()
            .len(),
        7
    );
    set_variable(&mut peer, ns, "timer.period", json!([250, 500]), deadline);
    assert_eq!(
        get_variable(&mut peer, ns, "timer.period", deadline),
        json!([250, 500])
    );
    set_variable(&mut peer, ns, "timer.period", json!([1]), deadline);
    expect_error(&mut peer, ns, "has size 2, got 1", deadline);
    assert_eq!(
        get_variable(&mut peer, ns, "timer.period", deadline),
        json!([250, 500])
    );

    drop(peer);
    stop(driver);
}

#[test]
fn two_pyaseba_nodes_get_a_namespace_each() {
    let deadline = Instant::now() + TEST_TIMEOUT;
    let ns = "twins";
    let aseba_port = common::free_port();
    let Some(_vm) = common::pyaseba_nodes(aseba_port, 2) else {
        return; // peer missing, run opted out: skip recorded
    };
    let dir = tempfile::tempdir().unwrap();
    let target = format!("tcp:host=127.0.0.1;port={aseba_port}");
    let driver = driver(dir.path(), ns, &[target], 0, &["nodes.all.prefix:=node_"]);
    let (mut peer, nodes) = peer_with_nodes(ns, 2, deadline);
    let spaces: Vec<&str> = nodes
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["name_space"].as_str().unwrap())
        .collect();
    assert_eq!(spaces, ["node_1", "node_2"]);
    let scoped = |node: &str, leaf: &str| format!("/{ns}/{node}/aseba/{leaf}");
    peer.call(
        &scoped("node_2", "set_variable"),
        "asebaros_msgs/srv/SetVariable",
        json!({"variable": "value", "data": [42]}),
        deadline,
    )
    .unwrap();
    let value = |peer: &mut RclpyPeer, node: &str| {
        peer.call(
            &scoped(node, "get_variable"),
            "asebaros_msgs/srv/GetVariable",
            json!({"variable": "value"}),
            deadline,
        )
        .unwrap()["data"]
            .clone()
    };
    assert_eq!(value(&mut peer, "node_2"), json!([42]));
    assert_eq!(value(&mut peer, "node_1"), json!([0]));
    let description = peer
        .call(
            &scoped("node_1", "get_description"),
            "asebaros_msgs/srv/GetDescription",
            json!({}),
            deadline,
        )
        .unwrap();
    assert_eq!(description["description"]["id"], 1);
    drop(peer);
    stop(driver);
}

#[test]
fn nodes_sharing_a_namespace_are_reported() {
    let deadline = Instant::now() + TEST_TIMEOUT;
    let ns = "crowd";
    let aseba_port = common::free_port();
    let Some(_vm) = common::pyaseba_nodes(aseba_port, 2) else {
        return; // peer missing, run opted out: skip recorded
    };
    let dir = tempfile::tempdir().unwrap();
    let target = format!("tcp:host=127.0.0.1;port={aseba_port}");
    let driver = driver(dir.path(), ns, &[target], 0, &[]);
    let (mut peer, nodes) = peer_with_nodes(ns, 2, deadline);
    assert!(nodes
        .as_array()
        .unwrap()
        .iter()
        .all(|n| n["name_space"] == "" && n["connected"] == true));
    // The first node described owns the empty namespace; the other is reported (whichever it is).
    expect_error(&mut peer, ns, "share the ROS namespace (none)", deadline);
    let owner = peer
        .call(
            &name(ns, "get_description"),
            "asebaros_msgs/srv/GetDescription",
            json!({}),
            deadline,
        )
        .unwrap()["description"]["id"]
        .as_u64()
        .unwrap();
    assert!(owner == 1 || owner == 2, "{owner}");
    drop(peer);
    stop(driver);
}

#[test]
fn load_script_and_typed_events_through_the_bridge() {
    let deadline = Instant::now() + TEST_TIMEOUT;
    let ns = "scripted";
    let aseba_port = common::free_port();
    let Some(_vm) = common::pyaseba_nodes(aseba_port, 1) else {
        return; // peer missing, run opted out: skip recorded
    };
    let dir = tempfile::tempdir().unwrap();
    let target = format!("tcp:host=127.0.0.1;port={aseba_port}");
    let driver = driver(
        dir.path(),
        ns,
        &[target],
        0,
        &["highest_acceptable_protocol_version:=20"],
    );
    let (mut peer, _) = peer_with_nodes(ns, 1, deadline);

    // a script compiled by thymio-rt's compiler and loaded through aseba/load_script
    let script = dir.path().join("echo.aesl");
    std::fs::write(
        &script,
        "<!DOCTYPE aesl-source>\n<network>\n<event size=\"1\" name=\"ping\"/>\n<event size=\"2\" name=\"pong\"/>\n\
         <constant value=\"2\" name=\"GAIN\"/>\n<node nodeId=\"1\" name=\"pyaseba-test\">var n = 0\n\
         onevent ping\nn++\nemit pong [args[0] * GAIN, n]</node>\n</network>\n",
    )
    .unwrap();
    let pong = format!("/{ns}/aseba/events/pong");
    let ping = format!("/{ns}/aseba/events/ping");
    peer.call(
        &name(ns, "load_script"),
        "asebaros_msgs/srv/LoadScript",
        json!({"file_name": script.to_str().unwrap(), "constants": [{"name": "GAIN", "value": 3}]}),
        deadline,
    )
    .unwrap();
    peer.subscribe(&pong, "asebaros_msgs/msg/Event", "volatile", deadline)
        .unwrap();
    let description = peer
        .call(
            &name(ns, "get_description"),
            "asebaros_msgs/srv/GetDescription",
            json!({}),
            deadline,
        )
        .unwrap()["description"]
        .clone();
    assert_eq!(description["events"], json!(["ping", "pong"]));
    assert!(description["variables"]
        .as_array()
        .unwrap()
        .iter()
        .any(|v| v == "n"));
    // ping → the node → pong, with the constant overridden at load time
    let got = loop {
        peer.publish(
            &ping,
            "asebaros_msgs/msg/Event",
            json!({"source": 0, "data": [7]}),
            1,
            deadline,
        )
        .unwrap();
        if let Ok(m) = peer.message(&pong, Instant::now() + Duration::from_secs(1), |_| true) {
            break m;
        }
        assert!(Instant::now() < deadline, "no pong");
    };
    assert_eq!(got["data"][0], 21);
    assert_eq!(got["source"], 1);
    assert!(
        get_variable(&mut peer, ns, "n", deadline)[0]
            .as_i64()
            .unwrap()
            >= 1
    );
    // a wrong size is refused with an error, not forwarded
    peer.publish(
        &ping,
        "asebaros_msgs/msg/Event",
        json!({"source": 0, "data": [1, 2]}),
        1,
        deadline,
    )
    .unwrap();
    expect_error(&mut peer, ns, "size", deadline);
    // a script that does not compile is reported with its line and column
    let broken = dir.path().join("broken.aesl");
    std::fs::write(
        &broken,
        "<!DOCTYPE aesl-source>\n<network>\n<node nodeId=\"1\" name=\"pyaseba-test\">var a\nb = 1</node>\n</network>\n",
    )
    .unwrap();
    peer.call(
        &name(ns, "load_script"),
        "asebaros_msgs/srv/LoadScript",
        json!({"file_name": broken.to_str().unwrap()}),
        deadline,
    )
    .unwrap();
    expect_error(&mut peer, ns, "2:1: b is not a defined variable", deadline);
    drop(peer);
    stop(driver);
}
