//! Go to a pose on odometry, in the RT cycle: turn toward the goal, drive to it while steering
//! (speed proportional to the distance, reduced by the heading error), then turn to the goal's
//! heading; within both tolerances it stops, says so on `reached` and holds zero speed. A goal
//! comes through the `goal` topic (`geometry_msgs/Pose2D`) or the `set_goal` service
//! (`thymio_rt_msgs/SetPose2D`, which refuses a non-finite pose or one beyond
//! [`MAX_GOAL_DISTANCE`] / [`MAX_GOAL_HEADING`] / [`handoff::MAX_POSE_COORDINATE`]; the topic ignores
//! them), in the odometry frame.
//!
//! Hysteresis: once in position it only turns (a drift of less than twice the position
//! tolerance does not send it driving again), so that it settles instead of hunting.
//!
//! A goal also comes as a `geometry_msgs/PoseStamped` on `goal_pose` (what RViz's "2D Goal Pose"
//! tool and Nav2 clients send): its header's frame must be the odometry frame (`odom`, or a
//! prefixed `…/odom`; an empty frame is taken as it), its orientation gives the heading (yaw);
//! another frame or a non-finite pose is refused on the NRT side, before RT (logged).
//!
//! ROS (under `~/controllers/go_to_pose/`): subscribers `goal` and `goal_pose`, service
//! `set_goal`, publisher `reached` (`std_msgs/Bool`: false when a goal is taken, true when
//! reached); parameters below, applied live.

use super::{Controller, RobotView};
use handoff::{
    ControllerInit, DeclareError, MsgValue, Outcome, ParamId, Pose2, RtMessageSubscriber, RtParams,
    RtServiceEndpoint, RtTopicPublisher, RtTopicSubscriber, Twist2, WheelCommand,
};
use std::f64::consts::PI;

/// Registry name (and owner name).
pub const NAME: &str = "go_to_pose";

/// Heading error above which it turns in place before driving (rad).
const TURN_FIRST: f64 = 0.6;

/// The go-to-pose controller of one robot.
#[derive(Debug)]
pub struct GoToPose {
    params: RtParams,
    p: Params,
    goal_topic: RtTopicSubscriber<Pose2>,
    goal_pose: RtMessageSubscriber<Pose2>,
    set_goal: RtServiceEndpoint<Pose2>,
    reached_pub: RtTopicPublisher<bool>,
    goal: Option<Pose2>,
    /// In position (only the heading is left).
    in_position: bool,
    reached: bool,
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct Params {
    max_linear: ParamId,
    max_angular: ParamId,
    k_linear: ParamId,
    k_angular: ParamId,
    position_tolerance: ParamId,
    heading_tolerance: ParamId,
}

impl Params {
    /// Declares the steering law's parameters (also `navigate_to_position`'s), the two top speeds under
    /// `speed_names` (linear, angular).
    pub(crate) fn declare(
        init: &mut ControllerInit,
        [linear, angular]: [&'static str; 2],
    ) -> Result<Params, DeclareError> {
        Ok(Params {
            max_linear: init.parameter(linear, 0.1, 0.0, 0.3, "top speed (m/s)")?,
            max_angular: init.parameter(angular, 1.5, 0.0, 6.0, "top turn rate (rad/s)")?,
            k_linear: init.parameter(
                "k_linear",
                1.0,
                0.0,
                10.0,
                "speed per metre of distance (1/s)",
            )?,
            k_angular: init.parameter(
                "k_angular",
                3.0,
                0.0,
                20.0,
                "turn rate per radian of heading error (1/s)",
            )?,
            position_tolerance: init.parameter(
                "position_tolerance",
                0.02,
                0.001,
                1.0,
                "distance to the goal that counts as there (m)",
            )?,
            heading_tolerance: init.parameter(
                "heading_tolerance",
                0.05,
                0.001,
                PI,
                "heading error that counts as there (rad)",
            )?,
        })
    }

    /// Their values in effect as the law's gains.
    pub(crate) fn gains(&self, params: &RtParams) -> Gains {
        let g = |id| params.get(id);
        Gains {
            max_linear: g(self.max_linear),
            max_angular: g(self.max_angular),
            k_linear: g(self.k_linear),
            k_angular: g(self.k_angular),
            position_tolerance: g(self.position_tolerance),
            heading_tolerance: g(self.heading_tolerance),
        }
    }
}

/// `a` wrapped to (−π, π].
pub(crate) fn wrap(a: f64) -> f64 {
    let w = (a + PI).rem_euclid(2.0 * PI) - PI;
    if w == -PI {
        PI
    } else {
        w
    }
}

/// Farthest goal accepted from the robot's odometry pose (m): a Thymio drives 100 m in about
/// ten minutes, and odometry over such a distance has drifted beyond any use; a goal 1e9 m away
/// is a mistake (a unit error, a garbage field), refused.
pub const MAX_GOAL_DISTANCE: f64 = 100.0;
/// Largest goal heading accepted, in absolute value (rad): any heading is within ±π; a few
/// turns of unwrapped angle are tolerated, not a value whose wrapping loses all precision.
pub const MAX_GOAL_HEADING: f64 = 1000.0;

/// Whether `goal` is a goal for a robot at `pose`: finite, within the odometry frame's
/// ±[`handoff::MAX_POSE_COORDINATE`], within [`MAX_GOAL_DISTANCE`] of the robot and with a heading
/// within ±[`MAX_GOAL_HEADING`]; else why not.
pub(crate) fn check_goal(goal: &Pose2, pose: &Pose2) -> Result<(), &'static str> {
    if !(goal.x.is_finite() && goal.y.is_finite() && goal.theta.is_finite()) {
        return Err("the goal must be finite");
    }
    if (goal.x - pose.x).hypot(goal.y - pose.y) > MAX_GOAL_DISTANCE {
        return Err("the goal is more than 100 m (MAX_GOAL_DISTANCE) from the robot");
    }
    if goal.theta.abs() > MAX_GOAL_HEADING {
        return Err("the goal's heading is beyond ±1000 rad (MAX_GOAL_HEADING)");
    }
    if goal.x.abs().max(goal.y.abs()) > handoff::MAX_POSE_COORDINATE {
        return Err(
            "the goal is beyond ±10 km (MAX_POSE_COORDINATE) of the odometry frame's origin",
        );
    }
    Ok(())
}

/// A `geometry_msgs/PoseStamped` in the odometry frame as a planar pose (NRT side; see the module
/// documentation).
pub fn pose_stamped(m: &MsgValue) -> Result<Pose2, String> {
    let frame = m["header"]["frame_id"].as_str().unwrap_or("");
    if !(frame.is_empty() || frame == "odom" || frame.ends_with("/odom")) {
        return Err(format!(
            "frame \"{frame}\" is not the odometry frame (odom): transform the goal first"
        ));
    }
    let num = |v: &MsgValue, at: &str| match v {
        MsgValue::Null => Ok(0.0),
        v => v
            .as_f64()
            .filter(|x| x.is_finite())
            .ok_or_else(|| format!("{at} is not a finite number")),
    };
    let p = &m["pose"]["position"];
    let q = &m["pose"]["orientation"];
    let (qx, qy, qz) = (
        num(&q["x"], "pose.orientation.x")?,
        num(&q["y"], "pose.orientation.y")?,
        num(&q["z"], "pose.orientation.z")?,
    );
    // a message that leaves the orientation out has the identity (w = 1)
    let qw = match &q["w"] {
        MsgValue::Null => 1.0,
        w => num(w, "pose.orientation.w")?,
    };
    Ok(Pose2 {
        x: num(&p["x"], "pose.position.x")?,
        y: num(&p["y"], "pose.position.y")?,
        theta: (2.0 * (qw * qz + qx * qy)).atan2(1.0 - 2.0 * (qy * qy + qz * qz)),
    })
}

impl GoToPose {
    /// Declares its endpoints and parameters for the robot of `init`.
    pub fn new(init: &mut ControllerInit) -> Result<Self, DeclareError> {
        let p = Params::declare(init, ["max_linear", "max_angular"])?;
        let goal_topic = init.subscriber::<Pose2>("goal", Pose2::default())?;
        let goal_pose = init.message_subscriber(
            "goal_pose",
            "geometry_msgs/msg/PoseStamped",
            Pose2::default(),
            pose_stamped,
        )?;
        let set_goal = init.service::<Pose2>("set_goal")?;
        let reached_pub = init.publisher::<bool>("reached", 8)?;
        Ok(GoToPose {
            params: init.rt_params(),
            p,
            goal_topic,
            goal_pose,
            set_goal,
            reached_pub,
            goal: None,
            in_position: false,
            reached: false,
        })
    }

    fn take_goal(&mut self, goal: Pose2) {
        self.goal = Some(goal);
        self.in_position = false;
        self.reached = false;
        self.reached_pub.rt_publish(false);
    }

    /// The goal in effect, if any.
    pub fn goal(&self) -> Option<Pose2> {
        self.goal
    }

    fn command(&mut self, pose: Pose2, goal: Pose2) -> Twist2 {
        let gains = self.p.gains(&self.params);
        match steer(pose, goal, &gains, &mut self.in_position, true) {
            Some(t) => {
                self.reached = false;
                t
            }
            None => {
                if !self.reached {
                    self.reached = true;
                    self.reached_pub.rt_publish(true);
                }
                Twist2::default()
            }
        }
    }
}

/// The gains and limits of [`steer`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct Gains {
    pub max_linear: f64,
    pub max_angular: f64,
    pub k_linear: f64,
    pub k_angular: f64,
    pub position_tolerance: f64,
    pub heading_tolerance: f64,
}

/// The go-to-pose law (also `navigate_to_position`'s): the twist from `pose` toward `goal`, or
/// `None` when there (in position and, if `heading`, within the heading tolerance).
/// `in_position` is the hysteresis state (see the module's documentation).
pub(crate) fn steer(
    pose: Pose2,
    goal: Pose2,
    g: &Gains,
    in_position: &mut bool,
    heading: bool,
) -> Option<Twist2> {
    let (dx, dy) = (goal.x - pose.x, goal.y - pose.y);
    let dist = dx.hypot(dy);
    let pos_tol = g.position_tolerance;
    let turn = |e: f64| (g.k_angular * e).clamp(-g.max_angular, g.max_angular);
    if *in_position && dist > 2.0 * pos_tol {
        *in_position = false;
    }
    if !*in_position && dist <= pos_tol {
        *in_position = true;
    }
    if !*in_position {
        let alpha = wrap(dy.atan2(dx) - pose.theta);
        let linear = if alpha.abs() > TURN_FIRST {
            0.0
        } else {
            (g.k_linear * dist).min(g.max_linear) * alpha.cos()
        };
        return Some(Twist2 {
            linear,
            angular: turn(alpha),
        });
    }
    let e = wrap(goal.theta - pose.theta);
    if !heading || e.abs() <= g.heading_tolerance {
        return None;
    }
    Some(Twist2 {
        linear: 0.0,
        angular: turn(e),
    })
}

impl Controller for GoToPose {
    fn serve(&mut self, robot: &RobotView, _owner: bool) {
        self.params.rt_refresh();
        for goal in [self.goal_topic.rt_read_new(), self.goal_pose.rt_read_new()]
            .into_iter()
            .flatten()
        {
            if check_goal(&goal, &robot.pose).is_ok() {
                self.take_goal(goal);
            }
        }
        let mut new = None;
        self.set_goal
            .rt_serve(|goal| match check_goal(&goal, &robot.pose) {
                Ok(()) => {
                    new = Some(goal);
                    Outcome::ok("goal taken")
                }
                Err(why) => Outcome::refused(why),
            });
        if let Some(goal) = new {
            self.take_goal(goal);
        }
    }

    fn update(&mut self, robot: &RobotView) -> WheelCommand {
        let Some(goal) = self.goal else {
            return WheelCommand::Stop;
        };
        if robot.odom_t_ns.is_none() {
            return WheelCommand::Stop;
        }
        match self.command(robot.pose, goal) {
            t if t == Twist2::default() => WheelCommand::Stop,
            t => WheelCommand::Twist(t),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use handoff::{NodeId, NrtEndpoint, OwnerId, RobotCalibration, RobotId, RosValue};
    use msgs::thymio::{GROUND_COUNT, PROXIMITY_COUNT};

    fn view(pose: Pose2) -> RobotView {
        RobotView {
            robot: RobotId(0),
            node: NodeId(1),
            now_ns: 0,
            pose,
            twist: Twist2::default(),
            odom_t_ns: Some(1),
            wheel_pos: [0.0; 2],
            wheel_vel: [0.0; 2],
            proximity: [0; PROXIMITY_COUNT],
            proximity_t_ns: None,
            ground: [0; GROUND_COUNT],
            ground_t_ns: None,
            acc: [0; 3],
            acc_t_ns: None,
            link_up: true,
            stale: false,
            set_point: Twist2::default(),
            owner: OwnerId::controller(1),
            calibration: RobotCalibration::default(),
            reflexes: Default::default(),
        }
    }

    /// Integrates unicycle motion for `steps` of `dt` under the controller.
    fn drive(c: &mut GoToPose, mut p: Pose2, steps: usize, dt: f64) -> Pose2 {
        for _ in 0..steps {
            let v = view(p);
            c.serve(&v, true);
            if let WheelCommand::Twist(t) = c.update(&v) {
                p.theta += t.angular * dt;
                p.x += t.linear * dt * p.theta.cos();
                p.y += t.linear * dt * p.theta.sin();
            }
        }
        p
    }

    #[test]
    fn reaches_a_goal_behind_it_within_tolerance_and_holds_zero() {
        let mut init = ControllerInit::new(RobotId(0), NAME);
        let mut c = GoToPose::new(&mut init).unwrap();
        let mut ports = init.finish_ports();
        assert_eq!(
            c.update(&view(Pose2::default())),
            WheelCommand::Stop,
            "no goal"
        );
        let NrtEndpoint::Subscriber { nrt: goal, .. } = &mut ports.endpoints[0] else {
            panic!("goal is a subscriber")
        };
        let target = Pose2 {
            x: -0.3,
            y: 0.2,
            theta: PI / 2.0,
        };
        goal.nrt_store(RosValue::Pose2D(target));
        let p = drive(&mut c, Pose2::default(), 3000, 0.01);
        assert!((p.x - target.x).hypot(p.y - target.y) <= 0.02, "{p:?}");
        assert!(wrap(p.theta - target.theta).abs() <= 0.05, "{p:?}");
        assert_eq!(c.update(&view(p)), WheelCommand::Stop, "holds zero");
        let NrtEndpoint::Publisher { nrt: reached, .. } = &mut ports.endpoints[3] else {
            panic!("reached is a publisher")
        };
        let mut got = Vec::new();
        reached.nrt_drain(|v| got.push(v));
        assert_eq!(got, [false, true].map(RosValue::Bool));
    }

    #[test]
    fn the_service_refuses_a_non_finite_goal_and_takes_a_finite_one() {
        let mut init = ControllerInit::new(RobotId(0), NAME);
        let mut c = GoToPose::new(&mut init).unwrap();
        let mut ports = init.finish_ports();
        let NrtEndpoint::Service { nrt: client, .. } = &mut ports.endpoints[2] else {
            panic!("set_goal is a service")
        };
        let bad = Pose2 {
            x: f64::NAN,
            ..Pose2::default()
        };
        let good = Pose2 {
            x: 0.5,
            ..Pose2::default()
        };
        // absurdly far, or a heading whose wrapping means nothing (issue 23)
        let far = Pose2 {
            x: 1e9,
            ..Pose2::default()
        };
        let spun = Pose2 {
            theta: 1e300,
            ..Pose2::default()
        };
        for goal in [bad, far, spun, good] {
            client.nrt_call(RosValue::Pose2D(goal)).unwrap();
        }
        c.serve(&view(Pose2::default()), false);
        let mut answers = Vec::new();
        while let Some((_, a)) = client.nrt_poll_response() {
            answers.push(a);
        }
        let refused = |a: &RosValue, why: &str| matches!(a, RosValue::Outcome(o) if !o.success && o.message.contains(why));
        assert!(refused(&answers[0], "finite"), "{answers:?}");
        assert!(refused(&answers[1], "100 m"), "{answers:?}");
        assert!(refused(&answers[2], "1000 rad"), "{answers:?}");
        assert!(matches!(&answers[3], RosValue::Outcome(o) if o.success));
        assert_eq!(c.goal(), Some(good));
        // Zero gains: it never gets there (the test above can fail).
        ports.params.nrt_set("k_linear", 0.0).unwrap();
        ports.params.nrt_set("k_angular", 0.0).unwrap();
        let p = drive(&mut c, Pose2::default(), 500, 0.01);
        assert!(p.x < 0.01);
    }

    #[test]
    fn a_pose_stamped_in_the_odometry_frame_is_a_goal_and_another_frame_is_refused() {
        let mut init = ControllerInit::new(RobotId(0), NAME);
        let mut c = GoToPose::new(&mut init).unwrap();
        let mut ports = init.finish_ports();
        let NrtEndpoint::Message {
            ty,
            port: handoff::NrtMessagePort::Subscriber(store),
            ..
        } = &mut ports.endpoints[1]
        else {
            panic!("goal_pose is a message subscriber")
        };
        assert_eq!(*ty, "geometry_msgs/msg/PoseStamped");
        let (s, q) = ((PI / 4.0).sin(), (PI / 4.0).cos()); // a yaw of π/2
        let msg = |frame: &str, x: f64| {
            serde_json::json!({
                "header": {"stamp": {"sec": 1, "nanosec": 0}, "frame_id": frame},
                "pose": {"position": {"x": x, "y": -0.1, "z": 0.0},
                         "orientation": {"x": 0.0, "y": 0.0, "z": s, "w": q}},
            })
        };
        let err = store.nrt_store(&msg("map", 0.3)).unwrap_err();
        assert!(err.contains("\"map\" is not the odometry frame"), "{err}");
        c.serve(&view(Pose2::default()), false);
        assert_eq!(c.goal(), None, "nothing reached RT");
        store.nrt_store(&msg("thymio_0/odom", 0.3)).unwrap();
        c.serve(&view(Pose2::default()), false);
        let g = c.goal().expect("a goal");
        assert_eq!((g.x, g.y), (0.3, -0.1));
        assert!((g.theta - PI / 2.0).abs() < 1e-12, "{g:?}");
        // no orientation: heading 0; a non-finite number: refused
        let bare =
            serde_json::json!({"header": {"frame_id": "odom"}, "pose": {"position": {"x": 1.0}}});
        assert_eq!(
            pose_stamped(&bare),
            Ok(Pose2 {
                x: 1.0,
                y: 0.0,
                theta: 0.0
            })
        );
        let text = serde_json::json!({"pose": {"position": {"x": "far"}}});
        assert_eq!(
            pose_stamped(&text),
            Err("pose.position.x is not a finite number".into())
        );
    }

    #[test]
    fn a_goal_beside_a_robot_beyond_the_odometry_frames_range_is_refused() {
        // the red team's set_odometry to 1e17 (refused now): a goal 1 m from there never came closer
        let at = |x: f64| Pose2 {
            x,
            ..Pose2::default()
        };
        let why = check_goal(&at(1e17 + 1.0), &at(1e17)).unwrap_err();
        assert!(why.contains("±10 km (MAX_POSE_COORDINATE)"), "{why}");
        assert_eq!(check_goal(&at(9_999.0), &at(9_990.0)), Ok(()));
    }

    #[test]
    fn wrap_is_in_minus_pi_pi() {
        for a in [-7.0, -PI, -1.0, 0.0, 3.0, PI, 9.5] {
            let w = wrap(a);
            let k = (a - w) / (2.0 * PI);
            assert!(w > -PI && w <= PI && (k - k.round()).abs() < 1e-9, "{a}");
        }
    }
}
