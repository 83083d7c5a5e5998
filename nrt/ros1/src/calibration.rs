//! The motor calibration action on ROS 1: an actionlib server ([`nrt_ros1_client::actionlib`]) `<ns>/calibrate_motors`
//! (`thymio_rt_msgs/CalibrateMotorsAction`, the name ROS 2's action has) for each driven Thymio that has the
//! controller, a transport of the layer's goal state machine ([`nrt_interface::calibration`]: the checks, the run,
//! the result and their texts). Unlike ROS 2, actionlib carries a rejection's reason: it is the goal's status text.

use handoff::NodeId;
use nrt_engine::engine::{Engine, EngineEvent};
use nrt_interface::calibration::{
    CalResult, Calibration, End, Feedback, Goal, GoalHandle, GoalId, ACTION, CALIBRATE,
};
use nrt_interface::report::Reporter;
use nrt_ros1_client::actionlib::{self, ActionServer, ActionTypes, ServerGoal};
use nrt_ros1_client::actionlib_state::{Asked, Terminal};
use nrt_ros1_client::graph::{global, Graph};
use nrt_ros1_client::ros1_msgs::actionlib_msgs::{GoalID, GoalStatus};
use nrt_ros1_client::ros1_msgs::std_msgs::Header;
use nrt_ros1_client::ros1_msgs::thymio_rt_msgs as tm;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::time::Instant;

/// `thymio_rt_msgs/CalibrateMotors` as an actionlib action.
pub struct CalibrateMotors;

impl ActionTypes for CalibrateMotors {
    type Goal = tm::CalibrateMotorsGoal;
    type Feedback = tm::CalibrateMotorsFeedback;
    type Result = tm::CalibrateMotorsResult;
    type ActionGoal = tm::CalibrateMotorsActionGoal;
    type ActionFeedback = tm::CalibrateMotorsActionFeedback;
    type ActionResult = tm::CalibrateMotorsActionResult;

    fn split(goal: Self::ActionGoal) -> (GoalID, Self::Goal) {
        (goal.goal_id, goal.goal)
    }

    fn feedback(
        header: Header,
        status: GoalStatus,
        feedback: Self::Feedback,
    ) -> Self::ActionFeedback {
        tm::CalibrateMotorsActionFeedback {
            header,
            status,
            feedback,
        }
    }

    fn result(header: Header, status: GoalStatus, result: Self::Result) -> Self::ActionResult {
        tm::CalibrateMotorsActionResult {
            header,
            status,
            result,
        }
    }
}

/// The layer's goal of an actionlib goal.
fn goal(g: tm::CalibrateMotorsGoal) -> Goal {
    Goal {
        motor_speeds: g.motor_speeds,
        motors: g.motors,
        samples: g.samples,
        timeout: g.timeout,
        dry_run: g.dry_run,
    }
}

/// An accepted goal of an actionlib server.
struct Ros1Goal(ServerGoal<CalibrateMotors>);

impl GoalHandle for Ros1Goal {
    fn feedback(&mut self, f: &Feedback) {
        let _ = self.0.feedback(tm::CalibrateMotorsFeedback {
            phase: f.phase.to_owned(),
            motor: f.motor.to_owned(),
            motor_speed: f.motor_speed,
            measured_speed: f.measured_speed,
            samples: f.samples,
            progress: f.progress,
        });
    }

    fn finish(self: Box<Self>, end: End, r: CalResult) -> Result<(), String> {
        let how = match end {
            End::Succeeded => Terminal::Succeeded,
            End::Aborted => Terminal::Aborted,
            End::Canceled => Terminal::Canceled,
        };
        let text = r.message.clone();
        let result = tm::CalibrateMotorsResult {
            success: r.success,
            message: r.message,
            left_q0: r.left_q0,
            left_q1: r.left_q1,
            right_q0: r.right_q0,
            right_q1: r.right_q1,
            left_deadband: r.left_deadband,
            right_deadband: r.right_deadband,
            calibration_file: r.calibration_file,
        };
        // a goal the protocol ended already (none today) has nothing to send
        self.0.finish(how, &text, result);
        Ok(())
    }
}

struct Server {
    name: String,
    action: ActionServer<CalibrateMotors>,
    /// Its goals running in the layer, by actionlib id.
    running: BTreeMap<String, GoalId>,
}

/// Every driven robot's `calibrate_motors` actionlib server.
pub struct CalibrationActions {
    graph: Graph,
    base: String,
    servers: BTreeMap<NodeId, Server>,
    building: BTreeSet<NodeId>,
    built: Receiver<(NodeId, String, ActionServer<CalibrateMotors>)>,
    built_tx: Sender<(NodeId, String, ActionServer<CalibrateMotors>)>,
    reporter: Reporter,
}

impl CalibrationActions {
    /// No server yet; the robots' go under the namespace `base`.
    pub fn new(graph: &Graph, base: &str, reporter: Reporter) -> CalibrationActions {
        let (built_tx, built) = channel();
        CalibrationActions {
            graph: graph.clone(),
            base: base.to_owned(),
            servers: BTreeMap::new(),
            building: BTreeSet::new(),
            built,
            built_tx,
            reporter,
        }
    }

    /// Has the registrar thread make the server of each robot the layer serves as it comes; drops a robot's as it
    /// goes (the layer ended its goal).
    pub fn on_engine_event(&mut self, engine: &Engine, cal: &Calibration, event: &EngineEvent) {
        match event {
            EngineEvent::RobotReady { node, robot } => {
                if !cal.serves(CALIBRATE, *robot) || self.servers.contains_key(node) {
                    return;
                }
                if !self.building.insert(*node) {
                    return;
                }
                let ns = nrt_interface::frames::robot_namespace(engine, *node);
                let name = global(&[&self.base, &ns, ACTION]);
                let (tx, id, reporter) = (self.built_tx.clone(), *node, self.reporter.clone());
                self.graph.submit(
                    move |g| match ActionServer::<CalibrateMotors>::new(g, &name) {
                        Ok(server) => {
                            let _ = tx.send((id, name, server));
                            g.bell.ring();
                        }
                        Err(e) => reporter.error(&format!("node {id}: no {ACTION} action: {e}")),
                    },
                );
            }
            EngineEvent::RobotRemoved { node, .. } => {
                self.building.remove(node);
                if let Some(s) = self.servers.remove(node) {
                    self.forget(&s.name);
                }
            }
            _ => {}
        }
    }

    fn forget(&self, name: &str) {
        for t in actionlib::topics(name) {
            self.graph.forget(&t);
        }
    }

    /// Takes the servers made into use, and hands the goals and cancels that came to the layer (never waits).
    pub fn serve(&mut self, engine: &mut Engine, cal: &mut Calibration, now: Instant) {
        while let Ok((node, name, action)) = self.built.try_recv() {
            if !self.building.remove(&node) {
                // the robot went while its server was made
                drop(action);
                self.forget(&name);
                continue;
            }
            let server = Server {
                name,
                action,
                running: BTreeMap::new(),
            };
            self.servers.insert(node, server);
        }
        for (node, s) in self.servers.iter_mut() {
            s.running.retain(|_, id| cal.is_active(*id));
            while let Some(asked) = s.action.next(now) {
                match asked {
                    Asked::Goal(id, g) => match cal.check(engine, *node, &goal(g)) {
                        Err(why) => s.action.reject(&id, &why),
                        Ok(plan) => {
                            let Some(handle) = s.action.accept(&id) else {
                                continue;
                            };
                            let handle = Box::new(Ros1Goal(handle));
                            let started = cal.start(engine, *node, plan, handle, now);
                            s.running.insert(id, started);
                        }
                    },
                    Asked::Cancel(id) => {
                        if let Some(started) = s.running.remove(&id) {
                            cal.cancel(engine, started);
                        }
                    }
                }
            }
        }
    }

    /// Publishes every server's status when it changed or is due.
    pub fn publish(&mut self, now: Instant) {
        for s in self.servers.values_mut() {
            s.action.publish_status(now);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use roslibrust::RosMessageType;

    /// genmsg's rules for the messages of an action (genaction: `<A>ActionGoal` is a Header, a GoalID and the goal;
    /// `<A>ActionResult` / `<A>ActionFeedback` a Header, a GoalStatus and the result / feedback), their MD5 sums
    /// computed by Debian's genmsg over Debian's Header, GoalID and GoalStatus (those of the actionlib peer).
    const GENACTION: &str = r#"
import json, sys
import genmsg.msg_loader as ml, genmsg.gentools as gt
from std_msgs.msg import Header
from actionlib_msgs.msg import GoalID, GoalStatus
ctx = ml.MsgContext.create_default()
def add(name, text):
    spec = ml.load_msg_from_string(ctx, text, name)
    ctx.register(name, spec)
    return gt.compute_md5(ctx, spec)
for cls, name in [(Header, 'std_msgs/Header'), (GoalID, 'actionlib_msgs/GoalID'), (GoalStatus, 'actionlib_msgs/GoalStatus')]:
    assert add(name, cls._full_text.split('\n=====')[0]) == cls._md5sum, name
pkg, a = 'thymio_rt_msgs', 'CalibrateMotors'
goal, result, feedback = [p for p in open(sys.argv[1]).read().split('\n---\n')]
out = {}
for part, text in [('Goal', goal), ('Result', result), ('Feedback', feedback)]:
    out[a + part] = add(f'{pkg}/{a}{part}', text)
out[a + 'ActionGoal'] = add(f'{pkg}/{a}ActionGoal', f'Header header\nactionlib_msgs/GoalID goal_id\n{a}Goal goal\n')
for part in ['Result', 'Feedback']:
    out[a + 'Action' + part] = add(f'{pkg}/{a}Action{part}', f'Header header\nactionlib_msgs/GoalStatus status\n{a}{part} {part.lower()}\n')
out[a + 'Action'] = add(f'{pkg}/{a}Action', f'{a}ActionGoal action_goal\n{a}ActionResult action_result\n{a}ActionFeedback action_feedback\n')
print(json.dumps(out))
"#;

    #[test]
    fn the_action_md5_sums_follow_genmsg() {
        let action = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../msgs/ros/thymio_rt_msgs/action/CalibrateMotors.action"
        );
        let out = std::process::Command::new("/usr/bin/python3")
            .args(["-c", GENACTION, action])
            .output()
            .expect(
                "/usr/bin/python3 (scripts/setup-ros1.sh installs Debian's genmsg and actionlib)",
            );
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "genmsg: {stdout}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let md5 = |name: &str| {
            let key = format!("\"{name}\": \"");
            let at = stdout
                .find(&key)
                .unwrap_or_else(|| panic!("{name} in {stdout}"))
                + key.len();
            stdout[at..at + 32].to_owned()
        };
        for (name, ours) in [
            (
                "CalibrateMotorsGoal",
                tm::CalibrateMotorsGoal::DESCRIPTION.md5sum,
            ),
            (
                "CalibrateMotorsResult",
                tm::CalibrateMotorsResult::DESCRIPTION.md5sum,
            ),
            (
                "CalibrateMotorsFeedback",
                tm::CalibrateMotorsFeedback::DESCRIPTION.md5sum,
            ),
            (
                "CalibrateMotorsActionGoal",
                tm::CalibrateMotorsActionGoal::DESCRIPTION.md5sum,
            ),
            (
                "CalibrateMotorsActionResult",
                tm::CalibrateMotorsActionResult::DESCRIPTION.md5sum,
            ),
            (
                "CalibrateMotorsActionFeedback",
                tm::CalibrateMotorsActionFeedback::DESCRIPTION.md5sum,
            ),
            (
                "CalibrateMotorsAction",
                tm::CalibrateMotorsAction::DESCRIPTION.md5sum,
            ),
        ] {
            assert_eq!(ours, md5(name), "{name}");
        }
    }

    #[test]
    fn a_goal_message_is_the_layers_goal() {
        let g = goal(tm::CalibrateMotorsGoal {
            motor_speeds: vec![100, 200],
            motors: vec!["left".into()],
            samples: 3,
            timeout: 9.5,
            dry_run: true,
        });
        assert_eq!(
            g,
            Goal {
                motor_speeds: vec![100, 200],
                motors: vec!["left".into()],
                samples: 3,
                timeout: 9.5,
                dry_run: true
            }
        );
    }
}
