//! The lifecycle state machine against a hand-driven double of the engine's wheels.

use super::*;
use handoff::RobotId;
use std::collections::BTreeSet;

/// The engine's side: which robots are on the network, which are held.
#[derive(Default)]
struct Double {
    up: BTreeSet<NodeId>,
    held: BTreeMap<NodeId, bool>,
}

impl Wheels for Double {
    fn link_up(&self, node: NodeId) -> bool {
        self.up.contains(&node)
    }
    fn hold(&mut self, node: NodeId, held: bool) -> Result<(), String> {
        self.held.insert(node, held);
        Ok(())
    }
}

const N: NodeId = NodeId(7);

fn ready(l: &mut Lifecycles, d: &mut Double, managed: bool) {
    let r = Reporter::new("test");
    l.on_engine_event(
        managed,
        d,
        &EngineEvent::RobotReady {
            node: N,
            robot: RobotId(0),
        },
        &r,
    );
}

/// The (transition id, start id, goal id) of the events since the last call.
fn events(l: &mut Lifecycles) -> Vec<(u8, u8, u8)> {
    let e = l
        .events()
        .iter()
        .map(|e| (e.transition.id, e.start.id(), e.goal.id()))
        .collect();
    l.end_step();
    e
}

#[test]
fn unmanaged_robots_are_not_registered() {
    let (mut l, mut d) = (Lifecycles::default(), Double::default());
    ready(&mut l, &mut d, false);
    assert_eq!(l.state(N), None);
    assert!(d.held.is_empty());
    assert!(!l.change_state(&mut d, N, 1, "", &Reporter::new("t")));
}

#[test]
fn the_standard_cycle_holds_the_wheels_except_when_active() {
    let r = Reporter::new("test");
    let (mut l, mut d) = (Lifecycles::default(), Double::default());
    d.up.insert(N);
    ready(&mut l, &mut d, true);
    assert_eq!(l.state(N), Some(State::Unconfigured));
    assert!(d.held[&N]);
    // not available: refused, nothing happens
    assert!(!l.change_state(&mut d, N, 3, "", &r));
    assert!(!l.change_state(&mut d, N, 0, "deactivate", &r));
    assert_eq!(events(&mut l), []);
    // by id
    assert!(l.change_state(&mut d, N, 1, "", &r));
    assert_eq!(l.state(N), Some(State::Inactive));
    assert_eq!(events(&mut l), [(1, 1, 10), (10, 10, 2)]);
    assert!(d.held[&N]);
    // by label (the label wins over the id)
    assert!(l.change_state(&mut d, N, 2, "activate", &r));
    assert_eq!(events(&mut l), [(3, 2, 13), (30, 13, 3)]);
    assert!(!d.held[&N]);
    let ids: Vec<u8> = available(State::Active)
        .iter()
        .map(|t| t.transition.id)
        .collect();
    assert_eq!(ids, [4, 7]);
    assert!(l.change_state(&mut d, N, 4, "", &r));
    assert_eq!(events(&mut l), [(4, 3, 14), (40, 14, 2)]);
    assert!(d.held[&N]);
    assert!(l.change_state(&mut d, N, 2, "", &r));
    assert_eq!(events(&mut l), [(2, 2, 11), (20, 11, 1)]);
    // "shutdown" resolves to the shutdown of the current state
    assert!(l.change_state(&mut d, N, 0, "shutdown", &r));
    assert_eq!(events(&mut l), [(5, 1, 12), (50, 12, 4)]);
    assert_eq!(l.state(N), Some(State::Finalized));
    assert!(available(State::Finalized).is_empty());
    assert!(!l.change_state(&mut d, N, 1, "", &r));
    assert!(d.held[&N]);
}

#[test]
fn configure_and_activate_fail_without_the_link() {
    let r = Reporter::new("test");
    let (mut l, mut d) = (Lifecycles::default(), Double::default());
    ready(&mut l, &mut d, true);
    assert!(!l.change_state(&mut d, N, 1, "", &r));
    assert_eq!(events(&mut l), [(1, 1, 10), (11, 10, 1)]);
    assert_eq!(l.state(N), Some(State::Unconfigured));
    d.up.insert(N);
    assert!(l.change_state(&mut d, N, 1, "", &r));
    d.up.clear();
    assert!(!l.change_state(&mut d, N, 3, "", &r));
    assert_eq!(
        events(&mut l),
        [(1, 1, 10), (10, 10, 2), (3, 2, 13), (31, 13, 2)]
    );
    assert_eq!((l.state(N), d.held[&N]), (Some(State::Inactive), true));
}

#[test]
fn a_link_loss_while_active_takes_the_error_path_to_unconfigured() {
    let r = Reporter::new("test");
    let (mut l, mut d) = (Lifecycles::default(), Double::default());
    d.up.insert(N);
    ready(&mut l, &mut d, true);
    assert!(l.change_state(&mut d, N, 1, "", &r) && l.change_state(&mut d, N, 3, "", &r));
    events(&mut l);
    assert!(!d.held[&N]);
    l.on_engine_event(true, &mut d, &EngineEvent::RobotStale { node: N }, &r);
    assert_eq!(events(&mut l), [(99, 3, 15), (60, 15, 1)]);
    assert_eq!((l.state(N), d.held[&N]), (Some(State::Unconfigured), true));
    // unconfigured: a second loss changes nothing
    l.on_engine_event(true, &mut d, &EngineEvent::RobotStale { node: N }, &r);
    assert_eq!(events(&mut l), []);
    // removed while inactive: the error path, then forgotten
    assert!(l.change_state(&mut d, N, 1, "", &r));
    events(&mut l);
    l.on_engine_event(
        true,
        &mut d,
        &EngineEvent::RobotRemoved {
            node: N,
            robot: RobotId(0),
        },
        &r,
    );
    assert_eq!(events(&mut l), [(99, 2, 15), (60, 15, 1)]);
    assert_eq!(l.state(N), None);
    // driven anew while active (another script): the error path too; finalized stays finalized
    ready(&mut l, &mut d, true);
    assert!(l.change_state(&mut d, N, 1, "", &r) && l.change_state(&mut d, N, 3, "", &r));
    events(&mut l);
    ready(&mut l, &mut d, true);
    assert_eq!(events(&mut l), [(99, 3, 15), (60, 15, 1)]);
    assert_eq!((l.state(N), d.held[&N]), (Some(State::Unconfigured), true));
    assert!(l.change_state(&mut d, N, 5, "", &r));
    ready(&mut l, &mut d, true);
    assert_eq!(l.state(N), Some(State::Finalized));
}

#[test]
fn the_graph_matches_lifecycle_msgs() {
    assert_eq!(
        State::ALL.map(State::id),
        [1, 2, 3, 4, 10, 11, 12, 13, 14, 15]
    );
    // every transition state has its success, failure and error edges, in that order
    for s in &State::ALL[4..] {
        let out: Vec<&str> = GRAPH
            .iter()
            .filter(|g| g.start == *s)
            .map(|g| g.transition.label)
            .collect();
        assert_eq!(out, [SUCCESS, FAILURE, ERROR], "{s:?}");
    }
    let ids: Vec<u8> = available(State::Unconfigured)
        .iter()
        .map(|t| t.transition.id)
        .collect();
    assert_eq!(ids, [1, 5]);
}
