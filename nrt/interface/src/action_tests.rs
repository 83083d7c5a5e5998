//! The generic action state machine against a kind of its own: two actions whose port records what it was sent
//! and hands the reports the test gives, a host that records the owners asked.

use super::*;
use crate::report::{LogSink, Severity};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

const NODE: NodeId = NodeId(7);
const ROBOT: RobotId = RobotId(0);
const OWNER: OwnerId = OwnerId(4);

#[derive(Default)]
struct Host {
    driven: bool,
    owners: Vec<(RobotId, OwnerId)>,
}

/// What the port was sent, and the reports it hands.
#[derive(Default)]
struct Wire {
    sent: Vec<String>,
    reports: VecDeque<&'static str>,
}

struct Port(Arc<Mutex<Wire>>);

/// Where the result went.
struct Seen(Arc<Mutex<Option<(End, String)>>>);

impl ActionHandle<(), String> for Seen {
    fn feedback(&mut self, _: &()) {}
    fn finish(self: Box<Self>, end: End, result: String) -> Result<(), String> {
        *self.0.lock().unwrap() = Some((end, result));
        Ok(())
    }
}

struct Toy;

impl ActionKind for Toy {
    type Host = Host;
    type Port = Port;
    /// (the action, whether the goal is good)
    type Request = (usize, bool);
    type Accepted = usize;
    type Feedback = ();
    type Result = String;
    /// The reports seen.
    type State = u32;
    type Ending = (End, String);
    const NAMES: &'static [&'static str] = &["toy_a", "toy_b"];
    const CANCELED: &'static str = "canceled";
    const NOT_STARTED: &'static str = "never started";

    fn robot(host: &Host, node: NodeId) -> Option<RobotId> {
        (host.driven && node == NODE).then_some(ROBOT)
    }
    fn request_owner(host: &mut Host, robot: RobotId, owner: OwnerId) -> Result<(), String> {
        host.owners.push((robot, owner));
        Ok(())
    }
    fn action(request: &(usize, bool)) -> ActionId {
        ActionId(request.0)
    }
    fn accepted_action(accepted: &usize) -> ActionId {
        ActionId(*accepted)
    }
    fn busy(running: &ActiveGoal<Self>) -> String {
        format!("busy with {}", name::<Toy>(running.action))
    }
    fn check(_: &Host, _: NodeId, request: &(usize, bool)) -> Result<usize, String> {
        request
            .1
            .then_some(request.0)
            .ok_or_else(|| "bad".to_owned())
    }
    fn launch(
        port: &mut Port,
        id: GoalId,
        goal: usize,
        request: &mut dyn FnMut() -> Result<(), String>,
    ) -> Result<(u32, String), String> {
        request()?;
        port.0.lock().unwrap().sent.push(format!("start {}", id.0));
        Ok((0, format!("goal {goal}")))
    }
    fn stop(port: &mut Port, id: GoalId) {
        port.0.lock().unwrap().sent.push(format!("stop {}", id.0));
    }
    fn failed(state: Option<&u32>, reason: &'static str, why: &str) -> String {
        format!("{reason}/{why}/{}", state.copied().unwrap_or(99))
    }
    fn aborted(goal: &ActiveGoal<Self>, reason: &'static str, why: &str) -> (End, String) {
        (End::Aborted, Self::failed(Some(&goal.state), reason, why))
    }
    fn poll(
        _: &Host,
        _: NodeId,
        port: &mut Port,
        goal: &mut ActiveGoal<Self>,
    ) -> Option<((End, String), bool)> {
        while let Some(r) = port.0.lock().unwrap().reports.pop_front() {
            goal.state += 1;
            match r {
                "started" => goal.started = true,
                "lost" => return Some(((End::Aborted, "lost".to_owned()), false)),
                _ => return Some(((End::Succeeded, r.to_owned()), true)),
            }
        }
        None
    }
    fn conclude(
        core: &Actions<Self>,
        _: &mut Host,
        node: NodeId,
        a: ActiveGoal<Self>,
        e: (End, String),
    ) {
        core.end(a.action, node, a.handle, e.0, e.1);
    }
    fn message(result: &String) -> &str {
        result
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
    actions: Actions<Toy>,
    wire: Arc<Mutex<Wire>>,
    host: Host,
    lines: Arc<Lines>,
    t0: Instant,
}

/// `toy_a` served on the robot, `toy_b` not; the robot's owner cmd_vel.
fn rig() -> Rig {
    let reporter = Reporter::new("thymio_driver");
    let lines = Arc::new(Lines::default());
    reporter.add_sink(lines.clone());
    let mut actions = Actions::<Toy>::new(reporter);
    let wire = Arc::new(Mutex::new(Wire::default()));
    let port = Port(wire.clone());
    actions.with_ports(ActionId(0), OWNER, BTreeMap::from([(ROBOT, port)]));
    actions.on_engine_event(&EngineEvent::Owner {
        robot: ROBOT,
        owner: OwnerId::ROS,
        dropped: 0,
    });
    let host = Host {
        driven: true,
        ..Host::default()
    };
    Rig {
        actions,
        wire,
        host,
        lines,
        t0: Instant::now(),
    }
}

type Result1 = Arc<Mutex<Option<(End, String)>>>;

impl Rig {
    fn goal(&mut self, request: (usize, bool)) -> (Result<GoalId, String>, Result1) {
        let seen = Arc::new(Mutex::new(None));
        let id = self.actions.check(&self.host, NODE, &request).map(|g| {
            let h = Box::new(Seen(seen.clone()));
            self.actions.start(&mut self.host, NODE, g, h, self.t0)
        });
        (id, seen)
    }

    fn said(&self, severity: Severity, text: &str) -> bool {
        let lines = self.lines.0.lock().unwrap();
        lines.iter().any(|(s, l)| *s == severity && l == text)
    }

    fn serve_at(&mut self, after: Duration) {
        self.actions.serve(&mut self.host, self.t0 + after);
    }

    fn report(&self, r: &'static str) {
        self.wire.lock().unwrap().reports.push_back(r);
    }
}

#[test]
fn goals_are_checked_shared_then_by_the_kind_and_rejections_reported() {
    let mut r = rig();
    assert!(r.actions.serves(ActionId(0), ROBOT) && !r.actions.serves(ActionId(1), ROBOT));
    let no = r.goal((1, true)).0.unwrap_err();
    assert_eq!(no, "the robot has no toy_b controller");
    assert!(r.said(
        Severity::Warn,
        &format!("toy_b (node 7): goal rejected: {no}")
    ));
    assert_eq!(r.goal((0, false)).0.unwrap_err(), "bad");
    r.host.driven = false;
    assert_eq!(r.goal((0, true)).0.unwrap_err(), "the robot is not driven");
    r.host.driven = true;
    assert!(r.host.owners.is_empty(), "nobody took the wheels");
    let id = r.goal((0, true)).0.unwrap();
    assert!(r.said(Severity::Info, "toy_a (node 7): goal 0"));
    assert_eq!(r.goal((1, true)).0.unwrap_err(), "busy with toy_a");
    assert!(r.actions.is_active(id));
    assert_eq!(r.actions.running(ActionId(0)).collect::<Vec<_>>(), [NODE]);
    assert_eq!(r.actions.running(ActionId(1)).count(), 0);
}

#[test]
fn a_goal_takes_the_wheels_and_gives_them_back_at_its_end_unless_the_kind_says_not() {
    let mut r = rig();
    let (id, seen) = r.goal((0, true));
    let id = id.unwrap();
    assert_eq!(r.host.owners, [(ROBOT, OWNER)]);
    assert_eq!(r.wire.lock().unwrap().sent, [format!("start {}", id.0)]);
    r.report("started");
    r.report("done");
    r.serve_at(Duration::ZERO);
    assert_eq!(*seen.lock().unwrap(), Some((End::Succeeded, "done".into())));
    assert_eq!(r.host.owners, [(ROBOT, OWNER), (ROBOT, OwnerId::ROS)]);
    assert!(!r.actions.is_active(id));
    // another owner took the wheels: they stay with it
    let (id, seen) = r.goal((0, true));
    r.report("lost");
    r.serve_at(Duration::ZERO);
    assert_eq!(*seen.lock().unwrap(), Some((End::Aborted, "lost".into())));
    assert_eq!(r.host.owners.len(), 3);
    assert!(!r.actions.is_active(id.unwrap()));
}

#[test]
fn a_cancel_stops_the_controller_and_gives_the_wheels_back_once() {
    let mut r = rig();
    let (id, seen) = r.goal((0, true));
    let id = id.unwrap();
    r.report("started");
    r.serve_at(Duration::ZERO);
    assert!(r.actions.cancel(&mut r.host, id));
    let end = Some((End::Canceled, "/canceled/1".to_owned()));
    assert_eq!(*seen.lock().unwrap(), end);
    assert_eq!(
        r.wire.lock().unwrap().sent.last(),
        Some(&format!("stop {}", id.0))
    );
    assert_eq!(r.host.owners, [(ROBOT, OWNER), (ROBOT, OwnerId::ROS)]);
    assert!(!r.actions.cancel(&mut r.host, id), "once");
    assert!(!r.actions.cancel(&mut r.host, GoalId(1000)), "unknown");
}

/// A goal sent at once after the previous one's result, before the RT thread reported the wheels given back: at
/// its end the wheels go back to the owner before both goals, not to the controller last reported.
#[test]
fn a_goal_started_before_the_wheels_are_reported_back_gives_them_to_the_owner_before() {
    let mut r = rig();
    let (id, _) = r.goal((0, true));
    r.actions.on_engine_event(&EngineEvent::Owner {
        robot: ROBOT,
        owner: OWNER,
        dropped: 0,
    });
    r.report("started");
    r.report("done");
    r.serve_at(Duration::ZERO);
    assert!(!r.actions.is_active(id.unwrap()));
    // no report of the wheels back to ROS yet
    let (id, _) = r.goal((0, true));
    let id = id.unwrap();
    r.report("started");
    r.serve_at(Duration::ZERO);
    assert!(r.actions.cancel(&mut r.host, id));
    assert_eq!(r.host.owners.last(), Some(&(ROBOT, OwnerId::ROS)));
    // the RT thread's reports, when they come, are the owner again
    r.actions.on_engine_event(&EngineEvent::Owner {
        robot: ROBOT,
        owner: OWNER,
        dropped: 0,
    });
    let (id, _) = r.goal((0, true));
    r.report("started");
    r.serve_at(Duration::ZERO);
    assert!(r.actions.cancel(&mut r.host, id.unwrap()));
    assert_eq!(r.host.owners.last(), Some(&(ROBOT, OWNER)));
}

#[test]
fn a_goal_never_started_times_out_and_a_removed_robot_ends_its_goal() {
    let mut r = rig();
    let (_, seen) = r.goal((0, true));
    r.serve_at(START_TIMEOUT);
    assert!(seen.lock().unwrap().is_none(), "not yet");
    r.serve_at(START_TIMEOUT + Duration::from_millis(1));
    let end = Some((End::Aborted, "timeout/never started/0".to_owned()));
    assert_eq!(*seen.lock().unwrap(), end);
    assert!(r
        .wire
        .lock()
        .unwrap()
        .sent
        .last()
        .unwrap()
        .starts_with("stop"));
    assert_eq!(r.host.owners.last(), Some(&(ROBOT, OwnerId::ROS)));
    let (_, seen) = r.goal((0, true));
    r.actions.on_engine_event(&EngineEvent::RobotRemoved {
        node: NODE,
        robot: ROBOT,
    });
    let end = Some((
        End::Aborted,
        "robot_removed/the robot went away/0".to_owned(),
    ));
    assert_eq!(*seen.lock().unwrap(), end);
}

#[test]
fn a_goal_nobody_listens_to_is_aborted_after_the_timeout_and_one_listened_to_runs_on() {
    let mut r = rig();
    let (id, seen) = r.goal((0, true));
    let id = id.unwrap();
    r.report("started");
    let late = CLIENT_GONE_TIMEOUT + Duration::from_millis(1);
    // without a word from the front end the goal runs on
    r.serve_at(late * 3);
    assert!(r.actions.is_active(id));
    // listened to, then not: counted from the last time someone listened (a word about another action is not
    // about this goal)
    let at = late * 3;
    r.actions
        .client_listening(NODE, ActionId(0), true, r.t0 + at);
    r.actions
        .client_listening(NODE, ActionId(1), true, r.t0 + at + late);
    r.actions
        .client_listening(NODE, ActionId(0), false, r.t0 + at + CLIENT_GONE_TIMEOUT);
    r.serve_at(at + CLIENT_GONE_TIMEOUT);
    assert!(
        seen.lock().unwrap().is_none(),
        "listened to just the timeout ago"
    );
    r.serve_at(at + late);
    let (end, message) = seen.lock().unwrap().clone().unwrap();
    assert_eq!(end, End::Aborted);
    assert!(
        message.starts_with("client_gone/nobody listened"),
        "{message}"
    );
    assert_eq!(r.host.owners.last(), Some(&(ROBOT, OwnerId::ROS)));
}

#[test]
fn without_the_controllers_every_action_is_off() {
    let mut r = rig();
    let mut control = NrtControl::default();
    assert!(!r.actions.take(&mut control));
    assert!(r.said(
        Severity::Warn,
        "no toy_b controller: the toy_b action is off"
    ));
    let actions = Actions::<Toy>::new(Reporter::new("thymio_driver"));
    assert!(!actions.serves(ActionId(0), ROBOT));
}
