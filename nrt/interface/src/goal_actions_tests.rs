//! The goal actions' state machine against hand-driven RT halves of the controllers' goal ports and a host that
//! records what the engine was asked.

use super::*;
use crate::report::{LogSink, Reporter, Severity};
use handoff::{goal_port, RtGoalPort};
use nrt_engine::engine::EngineEvent;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

const NODE: NodeId = NodeId(7);
const ROBOT: RobotId = RobotId(0);
/// The controllers' owner ids (drive_distance, rotate_angle, navigate_to_position).
const OWNERS: [OwnerId; 3] = [OwnerId(4), OwnerId(5), OwnerId(6)];
const AT: Pose2 = Pose2 {
    x: 0.5,
    y: -0.25,
    theta: 1.0,
};

#[derive(Default)]
struct Host {
    driven: bool,
    /// The wheels held (a managed node not active).
    held: bool,
    /// The emergency stop holds the wheels.
    estop: bool,
    /// The pick-up stop holds the wheels.
    lifted: bool,
    owners: Vec<(RobotId, OwnerId)>,
}

impl GoalHost for Host {
    fn robot(&self, node: NodeId) -> Option<RobotId> {
        (self.driven && node == NODE).then_some(ROBOT)
    }
    fn request_owner(&mut self, robot: RobotId, owner: OwnerId) -> Result<(), String> {
        self.owners.push((robot, owner));
        Ok(())
    }
    fn held(&self, node: NodeId) -> bool {
        self.held && node == NODE
    }
    fn emergency_stopped(&self, node: NodeId) -> bool {
        self.estop && node == NODE
    }
    fn picked_up(&self, node: NodeId) -> bool {
        self.lifted && node == NODE
    }
}

/// What a front end got: feedback, then the end.
#[derive(Default)]
struct Seen {
    feedback: Vec<GoalFeedback>,
    end: Option<(End, GoalResult)>,
}

struct Handle(Arc<Mutex<Seen>>);

impl ActionHandle<GoalFeedback, GoalResult> for Handle {
    fn feedback(&mut self, f: &GoalFeedback) {
        self.0.lock().unwrap().feedback.push(*f);
    }
    fn finish(self: Box<Self>, end: End, result: GoalResult) -> Result<(), String> {
        self.0.lock().unwrap().end = Some((end, result));
        Ok(())
    }
}

#[derive(Default)]
struct Lines(Mutex<Vec<(Severity, String)>>);

impl LogSink for Lines {
    fn log(&self, severity: Severity, _: &str, text: &str, _: SystemTime) {
        self.0.lock().unwrap().push((severity, text.into()));
    }
}

struct Rig {
    goals: GoalActions,
    /// The RT halves, by action.
    rt: Vec<RtGoalPort>,
    host: Host,
    lines: Arc<Lines>,
}

fn rig() -> Rig {
    let reporter = Reporter::new("thymio_driver");
    let lines = Arc::new(Lines::default());
    reporter.add_sink(lines.clone());
    let mut goals = GoalActions::new(reporter);
    let mut rt = Vec::new();
    for (k, owner) in OWNERS.iter().enumerate() {
        let (r, n) = goal_port();
        goals.with_ports(ActionId(k), *owner, BTreeMap::from([(ROBOT, n)]));
        rt.push(r);
    }
    // the robot's owner before any goal: cmd_vel
    goals.on_engine_event(&EngineEvent::Owner {
        robot: ROBOT,
        owner: OwnerId::ROS,
        dropped: 0,
    });
    let host = Host {
        driven: true,
        ..Host::default()
    };
    Rig {
        goals,
        rt,
        host,
        lines,
    }
}

fn drive(distance: f64) -> Goal {
    Goal::DriveDistance {
        distance,
        max_translation_speed: 0.0,
    }
}

fn rotate(angle: f64) -> Goal {
    Goal::RotateAngle {
        angle,
        max_rotation_speed: 0.5,
    }
}

fn navigate(x: f64) -> Goal {
    Goal::NavigateToPosition {
        pose: Pose2 {
            x,
            ..Pose2::default()
        },
        achieve_goal_heading: true,
        max_translation_speed: 0.0,
        max_rotation_speed: 0.0,
    }
}

impl Rig {
    fn goal(&mut self, goal: Goal) -> (Result<GoalId, String>, Arc<Mutex<Seen>>) {
        let seen = Arc::new(Mutex::new(Seen::default()));
        let id = self.goals.check(&self.host, NODE, &goal).map(|goal| {
            let h = Box::new(Handle(seen.clone()));
            self.goals
                .start(&mut self.host, NODE, goal, h, Instant::now())
        });
        (id, seen)
    }

    fn warned(&self, text: &str) -> bool {
        let lines = self.lines.0.lock().unwrap();
        lines
            .iter()
            .any(|(s, l)| *s == Severity::Warn && l.contains(text))
    }

    /// The goal the RT half of `action` was given (its RT id).
    fn started(&mut self, action: usize, goal: Goal) -> handoff::GoalId {
        match self.rt[action].rt_next_command() {
            Some(GoalCommand::Start { id, goal: g }) if g == goal => id,
            other => panic!("{other:?}"),
        }
    }

    fn report(&mut self, action: usize, r: GoalReport) {
        assert!(self.rt[action].rt_report(r));
    }

    fn serve(&mut self) {
        self.goals.serve(&mut self.host, Instant::now());
    }
}

#[test]
fn each_action_takes_the_wheels_feeds_back_and_succeeds_giving_the_wheels_back() {
    for (k, goal) in [drive(0.3), rotate(-2.0), navigate(0.4)]
        .into_iter()
        .enumerate()
    {
        let mut r = rig();
        let (id, seen) = r.goal(goal);
        let id = id.unwrap();
        assert!(r.goals.is_active(id));
        let rt = r.started(k, goal);
        assert_eq!(
            r.host.owners,
            [(ROBOT, OWNERS[k])],
            "the controller takes the wheels"
        );
        r.report(k, GoalReport::Started { id: rt });
        r.report(
            k,
            GoalReport::Feedback {
                id: rt,
                remaining: 0.2,
                pose: AT,
            },
        );
        // a report of another goal (stale) is not this goal's
        r.report(
            k,
            GoalReport::Succeeded {
                id: handoff::GoalId(rt.0 + 1),
                pose: AT,
            },
        );
        r.serve();
        assert!(r.goals.is_active(id));
        r.report(k, GoalReport::Succeeded { id: rt, pose: AT });
        r.serve();
        assert!(!r.goals.is_active(id));
        let s = seen.lock().unwrap();
        assert_eq!(
            s.feedback,
            [GoalFeedback {
                remaining: 0.2,
                pose: AT
            }]
        );
        let (end, result) = s.end.clone().unwrap();
        assert_eq!(end, End::Succeeded);
        assert!(
            result.success && result.pose == AT && result.reason.is_empty(),
            "{result:?}"
        );
        assert_eq!(
            r.host.owners,
            [(ROBOT, OWNERS[k]), (ROBOT, OwnerId::ROS)],
            "back to cmd_vel"
        );
    }
}

#[test]
fn a_cliff_abort_ends_the_goal_aborted_with_its_reason_and_gives_the_wheels_back() {
    for (reason, name) in [
        (GoalAbort::Cliff, "cliff"),
        (GoalAbort::Obstacle, "obstacle"),
        (GoalAbort::Stall, "stall"),
    ] {
        let mut r = rig();
        let (id, seen) = r.goal(drive(1.0));
        id.unwrap();
        let rt = r.started(0, drive(1.0));
        r.report(0, GoalReport::Started { id: rt });
        r.report(
            0,
            GoalReport::Aborted {
                id: rt,
                reason,
                pose: AT,
            },
        );
        r.serve();
        let (end, result) = seen.lock().unwrap().end.clone().unwrap();
        assert_eq!(end, End::Aborted);
        assert_eq!(
            (result.success, result.reason, result.pose),
            (false, name, AT)
        );
        assert_eq!(result.message, reason.message());
        assert!(r.warned(&format!(
            "drive_distance (node 7): aborted: {}",
            reason.message()
        )));
        assert_eq!(r.host.owners.last(), Some(&(ROBOT, OwnerId::ROS)));
    }
}

#[test]
fn another_owner_taking_the_wheels_aborts_and_leaves_them_to_it() {
    let mut r = rig();
    let (_, seen) = r.goal(rotate(1.0));
    let rt = r.started(1, rotate(1.0));
    r.report(1, GoalReport::Started { id: rt });
    r.report(
        1,
        GoalReport::Aborted {
            id: rt,
            reason: GoalAbort::OwnerLost,
            pose: AT,
        },
    );
    r.serve();
    assert_eq!(
        seen.lock().unwrap().end.clone().unwrap().1.reason,
        "owner_lost"
    );
    assert_eq!(r.host.owners, [(ROBOT, OWNERS[1])], "no owner given back");
}

#[test]
fn a_cancel_stops_the_controller_and_gives_the_wheels_back_once() {
    let mut r = rig();
    let (id, seen) = r.goal(navigate(1.0));
    let id = id.unwrap();
    let rt = r.started(2, navigate(1.0));
    r.report(2, GoalReport::Started { id: rt });
    r.report(
        2,
        GoalReport::Feedback {
            id: rt,
            remaining: 0.7,
            pose: AT,
        },
    );
    r.serve();
    assert!(r.goals.cancel(&mut r.host, id));
    assert!(!r.goals.cancel(&mut r.host, id), "ended already");
    assert_eq!(
        r.rt[2].rt_next_command(),
        Some(GoalCommand::Cancel { id: rt })
    );
    let (end, result) = seen.lock().unwrap().end.clone().unwrap();
    assert_eq!((end, result.pose), (End::Canceled, AT));
    assert_eq!(r.host.owners, [(ROBOT, OWNERS[2]), (ROBOT, OwnerId::ROS)]);
    // the controller's late answer is stale for the next goal
    r.report(2, GoalReport::Canceled { id: rt, pose: AT });
    let (next, seen2) = r.goal(navigate(2.0));
    next.unwrap();
    r.serve();
    assert!(seen2.lock().unwrap().end.is_none());
}

#[test]
fn bad_goals_and_busy_or_undriven_robots_are_rejected_with_their_reason() {
    let mut r = rig();
    let (id, _) = r.goal(drive(f64::NAN));
    assert!(id.unwrap_err().starts_with("the goal must be finite"));
    assert!(r.warned("drive_distance (node 7): goal rejected: the goal must be finite"));
    r.host.driven = false;
    assert_eq!(
        r.goal(rotate(1.0)).0.unwrap_err(),
        "the robot is not driven"
    );
    r.host.driven = true;
    assert!(r.host.owners.is_empty(), "nobody took the wheels");
    assert!(r.goal(rotate(1.0)).0.is_ok());
    let busy = r.goal(navigate(1.0)).0.unwrap_err();
    assert_eq!(busy, "the robot already runs a goal (rotate_angle)");
    assert!(r.warned("navigate_to_position (node 7): goal rejected: the robot already runs a goal"));
    // a registry without navigate_to_position
    let mut r = rig();
    r.goals.served[2] = crate::action::Served::default();
    assert!(!r.goals.serves(ActionId(2), ROBOT) && r.goals.serves(ActionId(0), ROBOT));
    assert_eq!(
        r.goal(navigate(1.0)).0.unwrap_err(),
        "the robot has no navigate_to_position controller"
    );
}

#[test]
fn a_goal_the_controller_never_starts_times_out_and_a_removed_robot_aborts() {
    let mut r = rig();
    let (id, seen) = r.goal(drive(0.1));
    id.unwrap();
    let rt = r.started(0, drive(0.1));
    r.goals.serve(
        &mut r.host,
        Instant::now() + START_TIMEOUT + Duration::from_millis(1),
    );
    assert_eq!(
        seen.lock().unwrap().end.clone().unwrap().1.reason,
        "timeout"
    );
    assert_eq!(
        r.rt[0].rt_next_command(),
        Some(GoalCommand::Cancel { id: rt })
    );
    assert_eq!(r.host.owners.last(), Some(&(ROBOT, OwnerId::ROS)));
    let (id, seen) = r.goal(drive(0.1));
    id.unwrap();
    r.goals.on_engine_event(&EngineEvent::RobotRemoved {
        node: NODE,
        robot: ROBOT,
    });
    let (end, result) = seen.lock().unwrap().end.clone().unwrap();
    assert_eq!((end, result.reason), (End::Aborted, "robot_removed"));
}

#[test]
fn action_names_and_goal_kinds_match() {
    for (k, g) in [drive(1.0), rotate(1.0), navigate(1.0)].iter().enumerate() {
        assert_eq!(ActionId::of(g), ActionId(k));
        assert_eq!(ActionId::from_name(ACTIONS[k]), Some(ActionId(k)));
        assert_eq!(ActionId(k).name(), ACTIONS[k]);
    }
    assert_eq!(ActionId::from_name("go_to_pose"), None);
}

#[test]
fn huge_targets_and_speed_limits_that_are_not_finite_and_positive_are_rejected_with_the_reason() {
    let mut r = rig();
    let speed = |v: f64| Goal::DriveDistance {
        distance: 0.05,
        max_translation_speed: v,
    };
    let turn = |w: f64| Goal::RotateAngle {
        angle: 1.0,
        max_rotation_speed: w,
    };
    let far = Goal::NavigateToPosition {
        pose: Pose2 {
            x: 0.0,
            y: 1e17,
            theta: 0.0,
        },
        achieve_goal_heading: false,
        max_translation_speed: 0.0,
        max_rotation_speed: 0.0,
    };
    for (goal, why) in [
        (
            speed(f64::NAN),
            "the goal must be finite: max_translation_speed = NaN",
        ),
        (
            speed(f64::INFINITY),
            "the goal must be finite: max_translation_speed = inf",
        ),
        (
            speed(-0.1),
            "max_translation_speed = -0.1 m/s: a speed limit must be 0",
        ),
        (
            turn(-1.0),
            "max_rotation_speed = -1 rad/s: a speed limit must be 0",
        ),
        (turn(1e-9), "max_rotation_speed = 0.000000001 rad/s"),
        (
            drive(1e17),
            "distance = 100000000000000000 m is out of range: |distance| must be at most 10000 m",
        ),
        (
            rotate(1e17),
            "angle = 100000000000000000 rad is out of range",
        ),
        (
            far,
            "y = 100000000000000000 m is out of range: |y| must be at most 10000 m",
        ),
    ] {
        let got = r.goal(goal).0.unwrap_err();
        assert!(got.starts_with(why), "{goal:?}: {got}");
        assert!(r.warned(&format!("goal rejected: {why}")), "{why}");
    }
    assert!(r.host.owners.is_empty(), "nobody took the wheels");
    assert!(r.rt[0].rt_next_command().is_none());
    // 0: the controller's parameter
    assert!(r.goal(speed(0.0)).0.is_ok());
}

#[test]
fn a_goal_for_an_inactive_managed_node_is_rejected_and_a_deactivation_aborts_the_running_one() {
    let mut r = rig();
    r.host.held = true;
    let why = r.goal(drive(0.05)).0.unwrap_err();
    assert!(why.contains("its managed node is not active"), "{why}");
    assert!(r.warned("drive_distance (node 7): goal rejected: the robot's wheels are held"));
    assert!(r.host.owners.is_empty() && r.rt[0].rt_next_command().is_none());
    r.host.held = false;
    let (id, seen) = r.goal(drive(0.05));
    id.unwrap();
    let rt = r.started(0, drive(0.05));
    r.report(0, GoalReport::Started { id: rt });
    r.serve();
    assert!(seen.lock().unwrap().end.is_none());
    // deactivated while it runs
    r.host.held = true;
    r.serve();
    let (end, result) = seen.lock().unwrap().end.clone().unwrap();
    assert_eq!((end, result.reason), (End::Aborted, "inactive"));
    assert_eq!(
        r.rt[0].rt_next_command(),
        Some(GoalCommand::Cancel { id: rt })
    );
    assert_eq!(r.host.owners.last(), Some(&(ROBOT, OwnerId::ROS)));
}

#[test]
fn an_emergency_stop_aborts_the_running_goal_and_refuses_new_ones_until_released() {
    let mut r = rig();
    let (id, seen) = r.goal(drive(0.05));
    id.unwrap();
    let rt = r.started(0, drive(0.05));
    r.report(0, GoalReport::Started { id: rt });
    r.serve();
    assert!(seen.lock().unwrap().end.is_none());
    r.host.estop = true;
    r.serve();
    let (end, result) = seen.lock().unwrap().end.clone().unwrap();
    assert_eq!((end, result.reason), (End::Aborted, "emergency_stop"));
    assert!(
        result.message.contains("emergency stop"),
        "{}",
        result.message
    );
    assert_eq!(
        r.rt[0].rt_next_command(),
        Some(GoalCommand::Cancel { id: rt })
    );
    assert_eq!(r.host.owners.last(), Some(&(ROBOT, OwnerId::ROS)));
    let why = r.goal(drive(0.05)).0.unwrap_err();
    assert!(why.contains("emergency stop"), "{why}");
    r.host.estop = false;
    r.goal(drive(0.05)).0.unwrap();
}

#[test]
fn a_robot_picked_up_during_a_goal_aborts_it() {
    let mut r = rig();
    let (id, seen) = r.goal(drive(0.05));
    id.unwrap();
    let rt = r.started(0, drive(0.05));
    r.report(0, GoalReport::Started { id: rt });
    r.serve();
    r.host.lifted = true;
    r.serve();
    let (end, result) = seen.lock().unwrap().end.clone().unwrap();
    assert_eq!((end, result.reason), (End::Aborted, "picked_up"));
    assert_eq!(
        r.rt[0].rt_next_command(),
        Some(GoalCommand::Cancel { id: rt })
    );
}

#[test]
fn a_goal_nobody_listens_to_is_aborted_after_the_timeout_and_one_listened_to_runs_on() {
    let mut r = rig();
    let t0 = Instant::now();
    let (id, seen) = r.goal(rotate(3.0));
    let id = id.unwrap();
    let rt = r.started(1, rotate(3.0));
    r.report(1, GoalReport::Started { id: rt });
    let at = |ms: u64| t0 + Duration::from_millis(ms);
    assert_eq!(r.goals.running(ActionId(1)).collect::<Vec<_>>(), [NODE]);
    assert_eq!(r.goals.running(ActionId(0)).count(), 0);
    // listened to: runs on long past the timeout
    for ms in (0..=6000).step_by(100) {
        r.goals.client_listening(NODE, ActionId(1), true, at(ms));
        // another action's word is not this goal's
        r.goals.client_listening(NODE, ActionId(0), false, at(ms));
        r.goals.serve(&mut r.host, at(ms));
    }
    assert!(r.goals.is_active(id));
    // the client died at 6 s: aborted once nobody listened for CLIENT_GONE_TIMEOUT, not before
    let gone = 6000 + CLIENT_GONE_TIMEOUT.as_millis() as u64;
    for ms in (6100..gone).step_by(100) {
        r.goals.client_listening(NODE, ActionId(1), false, at(ms));
        r.goals.serve(&mut r.host, at(ms));
    }
    assert!(r.goals.is_active(id), "aborted before the timeout");
    r.goals
        .client_listening(NODE, ActionId(1), false, at(gone + 100));
    r.goals.serve(&mut r.host, at(gone + 100));
    let (end, result) = seen.lock().unwrap().end.clone().unwrap();
    assert_eq!((end, result.reason), (End::Aborted, "client_gone"));
    assert_eq!(
        r.rt[1].rt_next_command(),
        Some(GoalCommand::Cancel { id: rt })
    );
    assert_eq!(r.host.owners.last(), Some(&(ROBOT, OwnerId::ROS)));
    assert!(r.warned("rotate_angle (node 7): aborted: nobody listened"));
    // a client never seen counts from the goal's acceptance
    let (id, seen) = r.goal(drive(0.5));
    id.unwrap();
    r.goals
        .client_listening(NODE, ActionId(0), false, Instant::now());
    r.serve();
    assert!(seen.lock().unwrap().end.is_none());
    let late = Instant::now() + CLIENT_GONE_TIMEOUT + Duration::from_millis(10);
    r.goals.client_listening(NODE, ActionId(0), false, late);
    r.goals.serve(&mut r.host, late);
    assert_eq!(
        seen.lock().unwrap().end.clone().unwrap().1.reason,
        "client_gone"
    );
}
