//! The example configurations of asebaros_examples (ros-aseba-interface.md §2.7).
use super::*;
use crate::params::BridgeParams;

fn policy(yaml: &str) -> NodesPolicy {
    let p: BridgeParams = yaml_serde::from_str(yaml).unwrap();
    NodesPolicy::new(&p.nodes)
}

const THYMIO: &str = "thymio-II";
const EPUCK: &str = "e-puck0";

fn decide(
    p: &NodesPolicy,
    name: &str,
    id: u16,
    bridged: &[(u16, &str)],
) -> Result<NodeSettings, Rejection> {
    let bridged = bridged.iter().map(|&(i, n)| (NodeId(i), n));
    p.decide(name, NodeId(id), bridged)
}

#[test]
fn default_accepts_everything_without_namespace() {
    let p = NodesPolicy::default();
    let s = decide(&p, THYMIO, 1, &[]).unwrap();
    assert_eq!(
        s,
        NodeSettings {
            accept: true,
            namespace: String::new(),
            id_variable: String::new(),
            include_id_in_events: false
        }
    );
    assert_eq!(
        decide(&p, THYMIO, 1, &[(1, THYMIO)]),
        Err(Rejection::Duplicate)
    );
}

#[test]
fn all_nodes() {
    let p = policy("nodes: {any: {accept: true, prefix: node_}}");
    assert_eq!(decide(&p, THYMIO, 5, &[]).unwrap().namespace, "node_5");
    assert_eq!(
        decide(&p, EPUCK, 7, &[(5, THYMIO)]).unwrap().namespace,
        "node_7"
    );
}

#[test]
fn single_node() {
    let p = policy(
        "nodes: {others: {accept: false}, thymio: {name: thymio-II, id_variable: _id, accept: true, include_id_in_events: false, maximal_number: 1}}",
    );
    let s = decide(&p, THYMIO, 1, &[]).unwrap();
    assert_eq!(
        (
            s.namespace.as_str(),
            s.id_variable.as_str(),
            s.include_id_in_events
        ),
        ("", "_id", false)
    );
    assert_eq!(
        decide(&p, THYMIO, 2, &[(1, THYMIO)]),
        Err(Rejection::MaximalNumber)
    );
    assert_eq!(decide(&p, EPUCK, 3, &[]), Err(Rejection::NotAccepted));
}

#[test]
fn twin_nodes() {
    let p = policy(
        "nodes: {any: {prefix: node_, accept: true, include_id_in_events: true}, thymio: {name: thymio-II, id_variable: _id}, epuck: {name: e-puck0, id_variable: id}}",
    );
    let t = decide(&p, THYMIO, 3, &[]).unwrap();
    assert_eq!(
        (
            t.namespace.as_str(),
            t.id_variable.as_str(),
            t.include_id_in_events
        ),
        ("node_3", "_id", true)
    );
    let e = decide(&p, EPUCK, 4, &[(3, THYMIO)]).unwrap();
    assert_eq!(
        (
            e.namespace.as_str(),
            e.id_variable.as_str(),
            e.include_id_in_events
        ),
        ("node_4", "id", true)
    );
    assert!(decide(&p, THYMIO, 9, &[(3, THYMIO), (4, EPUCK)]).is_ok());
}

#[test]
fn two_nodes() {
    let p = policy(
        "nodes: {thymio: {name: thymio-II, namespace: thymio, maximal_number: 1}, epuck: {name: e-puck0, namespace: epuck, maximal_number: 1}}",
    );
    assert_eq!(decide(&p, THYMIO, 1, &[]).unwrap().namespace, "thymio");
    assert_eq!(
        decide(&p, EPUCK, 2, &[(1, THYMIO)]).unwrap().namespace,
        "epuck"
    );
    assert_eq!(
        decide(&p, THYMIO, 3, &[(1, THYMIO), (2, EPUCK)]),
        Err(Rejection::MaximalNumber)
    );
    assert_eq!(
        decide(&p, EPUCK, 4, &[(1, THYMIO), (2, EPUCK)]),
        Err(Rejection::MaximalNumber)
    );
}

#[test]
fn single_thymio() {
    let p = policy("nodes: {thymio: {name: thymio-II, namespace: thymio, maximal_number: 1}}");
    assert_eq!(decide(&p, THYMIO, 1, &[]).unwrap().namespace, "thymio");
    assert_eq!(
        decide(&p, THYMIO, 2, &[(1, THYMIO)]),
        Err(Rejection::MaximalNumber)
    );
}

#[test]
fn twin_thymios() {
    let p =
        policy("nodes: {thymio: {name: thymio-II, prefix: thymio_, include_id_in_events: true}}");
    let s = decide(&p, THYMIO, 12, &[(11, THYMIO)]).unwrap();
    assert_eq!(
        (s.namespace.as_str(), s.include_id_in_events),
        ("thymio_12", true)
    );
}

#[test]
fn two_thymios_by_id() {
    let p = policy(
        "nodes: {red: {name: thymio-II, id: 21181, namespace: red, accept: true}, green: {name: thymio-II, id: 14031, namespace: green, accept: true}, others: {name: thymio-II, accept: false}}",
    );
    assert_eq!(decide(&p, THYMIO, 21181, &[]).unwrap().namespace, "red");
    assert_eq!(
        decide(&p, THYMIO, 14031, &[(21181, THYMIO)])
            .unwrap()
            .namespace,
        "green"
    );
    assert_eq!(decide(&p, THYMIO, 77, &[]), Err(Rejection::NotAccepted));
}

#[test]
fn type_classes_do_not_fall_back_to_any_type() {
    // A class for the type that sets the attribute only for another id: asebaros falls back
    // to that type's any-id entry, then to the built-in default, never to the "" class.
    let p = policy("nodes: {a: {name: thymio-II, id: 5, prefix: five_}, b: {prefix: any_}}");
    assert_eq!(decide(&p, THYMIO, 5, &[]).unwrap().namespace, "five_5");
    assert_eq!(decide(&p, THYMIO, 6, &[]).unwrap().namespace, "");
    assert_eq!(decide(&p, EPUCK, 6, &[]).unwrap().namespace, "any_6");
}

#[test]
fn maximal_number_of_any_type_counts_every_type() {
    let p = policy("nodes: {any: {maximal_number: 2}}");
    assert!(decide(&p, THYMIO, 1, &[(2, EPUCK)]).is_ok());
    assert_eq!(
        decide(&p, THYMIO, 1, &[(2, EPUCK), (3, THYMIO)]),
        Err(Rejection::MaximalNumber)
    );
}

/// An older asebaros' top-level `include_id_in_events` and `maximal_number_of_nodes`: what no class decides.
#[test]
fn top_level_settings_are_what_no_class_decides() {
    let p: BridgeParams = yaml_serde::from_str(
        "include_id_in_events: true\nmaximal_number_of_nodes: 2\nnodes: {e: {name: e-puck0, include_id_in_events: false}}",
    )
    .unwrap();
    let p = NodesPolicy::from_params(&p);
    assert!(decide(&p, THYMIO, 1, &[]).unwrap().include_id_in_events);
    assert!(!decide(&p, EPUCK, 2, &[]).unwrap().include_id_in_events);
    assert!(decide(&p, THYMIO, 3, &[(1, THYMIO)]).is_ok());
    assert_eq!(
        decide(&p, EPUCK, 3, &[(1, THYMIO), (2, THYMIO)]),
        Err(Rejection::MaximalNumber)
    );
    // without them: unbounded, no id
    let p = NodesPolicy::from_params(&BridgeParams::default());
    assert!(decide(&p, THYMIO, 9, &[(1, THYMIO), (2, EPUCK), (3, THYMIO)]).is_ok());
}
