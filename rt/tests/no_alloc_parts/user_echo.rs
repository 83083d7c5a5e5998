//! A user's controller for the allocation proof (`rt/tests/no_alloc.rs`): endpoints of ROS types of its own
//! choosing, all three kinds, beside the shipped controllers.

use handoff::{
    ControllerInit, DeclareError, MsgCtx, MsgValue, Pose2, RtMessagePublisher, RtMessageService,
    RtMessageSubscriber, Twist2, WheelCommand,
};
use rt::controllers::{Controller, RobotView};

/// A user's controller (registered beside the shipped ones): heads for the latest point received
/// as a `geometry_msgs/PointStamped`, publishes its wheel state as a `sensor_msgs/JointState` every
/// cycle and can be paused through a `std_srvs/SetBool` service.
pub struct UserEcho {
    target: RtMessageSubscriber<Pose2>,
    state: RtMessagePublisher<[f64; 4]>,
    pause: RtMessageService<bool, bool>,
    paused: bool,
}

fn point(m: &MsgValue) -> Result<Pose2, String> {
    let x = m["point"]["x"].as_f64().ok_or("no point.x")?;
    let y = m["point"]["y"].as_f64().ok_or("no point.y")?;
    Ok(Pose2 { x, y, theta: 0.0 })
}

fn joint_state(s: &[f64; 4], ctx: &MsgCtx) -> MsgValue {
    serde_json::json!({
        "header": ctx.header(0, "base_link"),
        "name": ["left", "right"],
        "position": [s[0], s[1]],
        "velocity": [s[2], s[3]],
    })
}

fn set_bool(m: &MsgValue) -> Result<bool, String> {
    m["data"].as_bool().ok_or_else(|| "no data".into())
}

fn set_bool_answer(was: &bool, _: &MsgCtx) -> MsgValue {
    serde_json::json!({"success": true, "message": if *was { "was paused" } else { "was running" }})
}

impl UserEcho {
    pub fn new(init: &mut ControllerInit) -> Result<UserEcho, DeclareError> {
        Ok(UserEcho {
            target: init.message_subscriber(
                "target",
                "geometry_msgs/msg/PointStamped",
                Pose2::default(),
                point,
            )?,
            state: init.message_publisher("state", "sensor_msgs/msg/JointState", 8, joint_state)?,
            pause: init.message_service(
                "pause",
                "std_srvs/srv/SetBool",
                set_bool,
                set_bool_answer,
            )?,
            paused: false,
        })
    }
}

impl Controller for UserEcho {
    fn serve(&mut self, robot: &RobotView, _owner: bool) {
        let paused = &mut self.paused;
        self.pause.rt_serve(|p| std::mem::replace(paused, p));
        self.state.rt_publish([
            robot.wheel_pos[0],
            robot.wheel_pos[1],
            robot.wheel_vel[0],
            robot.wheel_vel[1],
        ]);
    }

    fn update(&mut self, robot: &RobotView) -> WheelCommand {
        let (goal, _) = self.target.rt_read();
        if self.paused {
            return WheelCommand::Stop;
        }
        let (dx, dy) = (goal.x - robot.pose.x, goal.y - robot.pose.y);
        WheelCommand::Twist(Twist2 {
            linear: (0.5 * dx.hypot(dy)).min(0.05),
            angular: (dy.atan2(dx) - robot.pose.theta).sin(),
        })
    }
}
