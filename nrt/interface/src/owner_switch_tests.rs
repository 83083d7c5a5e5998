use super::*;
use crate::reply::held;
use handoff::{live_params, RtLiveParams};
use std::sync::mpsc::{channel, Receiver};

const NODE: NodeId = NodeId(1);
const ROBOT: RobotId = RobotId(0);

fn switch() -> (Switch, RtLiveParams, NrtLiveParams) {
    let (rt, nrt) = live_params(1);
    let mut s = Switch::new(OwnerNames::new(vec![
        "line_follower",
        "go_to_pose",
        "calibrate_motors",
        "rotate_angle",
    ]));
    s.on_engine_event(&EngineEvent::RobotReady {
        node: NODE,
        robot: ROBOT,
    });
    (s, rt, nrt)
}

/// A held call whose answer lands in the receiver.
fn call() -> (Held<Answer>, Receiver<Answer>) {
    let (tx, rx) = channel();
    (held(move |a| tx.send(a).unwrap()), rx)
}

fn owner(owner: OwnerId) -> EngineEvent {
    EngineEvent::Owner {
        robot: ROBOT,
        owner,
        dropped: 3,
    }
}

#[test]
fn unknown_owners_are_refused_with_the_valid_names_and_calibration_through_its_action_only() {
    let (mut s, mut rt, params) = switch();
    let now = Instant::now();
    let (c, rx) = call();
    s.request(&params, NODE, "wheels_please", c, now);
    let (ok, why) = rx.try_recv().expect("answered at once");
    assert!(!ok);
    assert_eq!(
        why,
        "unknown owner \"wheels_please\": the owners are ros, joint, line_follower, go_to_pose, calibrate_motors, \
         rotate_angle"
    );
    // a controller that is not loaded (control.controllers), action or not, is an unknown owner
    let (c, rx) = call();
    s.request(&params, NODE, "drive_distance", c, now);
    let (ok, why) = rx.try_recv().expect("answered at once");
    assert!(!ok);
    assert!(
        why.starts_with("unknown owner \"drive_distance\": the owners are ros, joint, "),
        "{why}"
    );
    let (c, rx) = call();
    s.request(&params, NODE, "calibrate_motors", c, now);
    assert_eq!(
        rx.try_recv().unwrap(),
        (
            false,
            "calibrate_motors takes the wheels through its action (calibrate_motors) only".into()
        )
    );
    // the goal controllers too, each through its own action
    let (c, rx) = call();
    s.request(&params, NODE, "rotate_angle", c, now);
    assert_eq!(
        rx.try_recv().unwrap(),
        (
            false,
            "rotate_angle takes the wheels through its action (rotate_angle) only".into()
        )
    );
    let (c, rx) = call();
    s.request(&params, NodeId(9), "ros", c, now);
    assert_eq!(rx.try_recv().unwrap(), (false, NO_LONGER_DRIVEN.into()));
    assert_eq!(rt.rt_owner_request(ROBOT), None, "nothing asked of RT");
}

#[test]
fn a_call_is_answered_once_the_rt_thread_confirms_after_the_owner_is_published() {
    let (mut s, mut rt, params) = switch();
    assert_eq!(s.owner_name(NODE).as_deref(), Some("ros"));
    assert_eq!(s.owner_name(NodeId(9)), None);
    let (c, rx) = call();
    s.request(&params, NODE, "go_to_pose", c, Instant::now());
    let wanted = rt.rt_owner_request(ROBOT).expect("handed to the RT thread");
    assert_eq!(s.names().name(wanted), Some("go_to_pose"));
    // another owner reported: not the one asked for
    s.on_engine_event(&owner(OwnerId::JOINT));
    s.end_step();
    assert!(rx.try_recv().is_err(), "still held");
    s.on_engine_event(&owner(wanted));
    assert_eq!(s.owner_name(NODE).as_deref(), Some("go_to_pose"));
    assert_eq!(
        s.report(ROBOT),
        OwnerReport {
            owner: wanted,
            dropped: 3
        }
    );
    assert!(rx.try_recv().is_err(), "answered at the end of the step");
    s.end_step();
    assert_eq!(
        rx.try_recv().unwrap(),
        (true, "go_to_pose owns the wheels".into())
    );
}

#[test]
fn an_unconfirmed_call_times_out_naming_the_owner_kept_and_a_removed_robot_refuses_its_calls() {
    let (mut s, _rt, params) = switch();
    let t0 = Instant::now();
    s.on_engine_event(&owner(OwnerId::JOINT));
    let (c, rx) = call();
    s.request(&params, NODE, "line_follower", c, t0);
    s.serve(t0 + SWITCH_TIMEOUT / 2);
    assert!(rx.try_recv().is_err(), "not yet");
    s.serve(t0 + SWITCH_TIMEOUT);
    assert_eq!(
        rx.try_recv().unwrap(),
        (
            false,
            "the RT thread did not switch to line_follower within 1000 ms: joint still owns the wheels".into()
        )
    );
    let (c, rx) = call();
    s.request(&params, NODE, "ros", c, t0);
    s.on_engine_event(&EngineEvent::RobotRemoved {
        node: NODE,
        robot: ROBOT,
    });
    assert_eq!(rx.try_recv().unwrap(), (false, NO_LONGER_DRIVEN.into()));
    assert_eq!(s.owner_name(NODE), None);
}
