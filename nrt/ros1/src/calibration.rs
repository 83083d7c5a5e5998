//! The motor calibration action on ROS 1: an actionlib server ([`nrt_ros1_client::actionlib`]) `<ns>/calibrate_motors`
//! (`thymio_rt_msgs/CalibrateMotorsAction`, the name ROS 2's action has) for each driven Thymio that has the
//! controller: the front end's one action-server shape ([`ActionServers`]) over the layer's calibration
//! ([`nrt_interface::calibration`]: the checks, the run, the result and their texts); this says how its messages
//! map ([`Ros1Action`]). Unlike ROS 2, actionlib carries a rejection's reason: it is the goal's status text.

use super::action_server::{ActionServers, Ros1Action};
use nrt_interface::calibration::{CalKind, CalResult, Feedback, Goal, ACTION};
use nrt_ros1_client::actionlib::ActionTypes;
use nrt_ros1_client::ros1_msgs::actionlib_msgs::{GoalID, GoalStatus};
use nrt_ros1_client::ros1_msgs::std_msgs::Header;
use nrt_ros1_client::ros1_msgs::thymio_rt_msgs as tm;

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

/// Every driven robot's `calibrate_motors` actionlib server.
pub type CalibrationActions = ActionServers<CalibrateMotors>;

impl Ros1Action for CalibrateMotors {
    type Kind = CalKind;
    const NAME: &'static str = ACTION;
    const WATCH_CLIENTS: bool = false;

    fn goal(g: tm::CalibrateMotorsGoal) -> Goal {
        Goal {
            motor_speeds: g.motor_speeds,
            motors: g.motors,
            samples: g.samples,
            timeout: g.timeout,
            dry_run: g.dry_run,
        }
    }

    fn feedback_msg(f: &Feedback) -> tm::CalibrateMotorsFeedback {
        tm::CalibrateMotorsFeedback {
            phase: f.phase.to_owned(),
            motor: f.motor.to_owned(),
            motor_speed: f.motor_speed,
            measured_speed: f.measured_speed,
            samples: f.samples,
            progress: f.progress,
        }
    }

    fn result_msg(r: CalResult) -> tm::CalibrateMotorsResult {
        tm::CalibrateMotorsResult {
            success: r.success,
            message: r.message,
            left_q0: r.left_q0,
            left_q1: r.left_q1,
            right_q0: r.right_q0,
            right_q1: r.right_q1,
            left_deadband: r.left_deadband,
            right_deadband: r.right_deadband,
            calibration_file: r.calibration_file,
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
        let g = CalibrateMotors::goal(tm::CalibrateMotorsGoal {
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
