//! `follow_heading`: drives forward at `speed` while steering toward the absolute `heading` (odometry frame) with a
//! proportional `gain`. While it owns the wheels it publishes at 20 Hz, under `~/controllers/follow_heading/`, its
//! heading error (`heading_error`, std_msgs/Float64, a shipped endpoint kind) and the point it aims at, 0.2 m ahead
//! along the heading (`aim`, geometry_msgs/PointStamped in the odometry frame: an endpoint of a message type of its
//! own choosing, converted on the NRT side by [`aim_msg`]). Its `pause` service (std_srvs/SetBool, a service of a
//! type of its own choosing: [`pause_request`], [`pause_response`]) holds it at zero speed (`data: true`) or lets it
//! go on (`false`), answered from the RT cycle. The three parameters are live ROS parameters
//! (`controllers.follow_heading.<name>`) with their start values in `control.controllers.follow_heading`.

use thymio_rt::handoff::{
    ControllerInit, DeclareError, MsgCtx, MsgValue, ParamId, RtMessagePublisher, RtMessageService,
    RtParams, RtTopicPublisher, Twist2, WheelCommand,
};
use thymio_rt::rt::controllers::{Controller, RobotView};

/// Its registry name: owner name, `~/controllers/follow_heading/`, `control.controllers.follow_heading`.
pub const NAME: &str = "follow_heading";
/// Period of the heading error topic (ns).
const PUBLISH_PERIOD_NS: u64 = 50_000_000;
/// Largest turn rate it commands (rad/s).
const MAX_TURN: f64 = 2.0;
/// How far ahead along the heading `aim` is (m).
const AIM_AHEAD: f64 = 0.2;

/// What the RT cycle hands over for `aim`: a plain `Copy` value (no allocation in RT).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Aim {
    /// Odometry frame (m).
    pub x: f64,
    /// Odometry frame (m).
    pub y: f64,
    /// When (CLOCK_MONOTONIC ns, `RobotView::now_ns`).
    pub t_ns: u64,
}

/// `aim` as a geometry_msgs/PointStamped (NRT side, may allocate). The frame is the driver's default
/// `odom_frame`; a driver with another `odom_frame` or `tf_prefix` would name that one.
pub fn aim_msg(aim: &Aim, ctx: &MsgCtx) -> MsgValue {
    thymio_rt::serde_json::json!({
        "header": ctx.header(aim.t_ns, "odom"),
        "point": {"x": aim.x, "y": aim.y, "z": 0.0},
    })
}

/// A `pause` request (std_srvs/SetBool) as the RT value: whether to hold still (NRT side).
pub fn pause_request(m: &MsgValue) -> Result<bool, String> {
    m["data"]
        .as_bool()
        .ok_or_else(|| format!("data must be a boolean: {m}"))
}

/// The RT answer (paused now or not) as a std_srvs/SetBool response (NRT side).
pub fn pause_response(paused: &bool, _ctx: &MsgCtx) -> MsgValue {
    thymio_rt::serde_json::json!({
        "success": true,
        "message": if *paused { "paused" } else { "running" },
    })
}

/// One instance per robot slot (made by the registry before the RT thread starts).
pub struct FollowHeading {
    /// RT half of the parameters (refreshed every cycle in `serve`).
    params: RtParams,
    heading: ParamId,
    gain: ParamId,
    speed: ParamId,
    /// RT half of `heading_error`.
    error: RtTopicPublisher<f64>,
    /// RT half of `aim`.
    aim: RtMessagePublisher<Aim>,
    /// RT half of `pause`.
    pause: RtMessageService<bool, bool>,
    /// Held at zero speed by `pause`.
    paused: bool,
    /// When `heading_error` is next due (CLOCK_MONOTONIC ns).
    next_publish_ns: u64,
}

impl FollowHeading {
    /// NRT side (may allocate): declares the parameters and the topic.
    pub fn new(init: &mut ControllerInit) -> Result<Self, DeclareError> {
        let heading = init.parameter(
            "heading",
            0.0,
            -std::f64::consts::PI,
            std::f64::consts::PI,
            "heading to follow (rad, odometry frame)",
        )?;
        let gain = init.parameter(
            "gain",
            2.0,
            0.0,
            10.0,
            "turn rate per radian of error (1/s)",
        )?;
        let speed = init.parameter("speed", 0.05, 0.0, 0.2, "forward speed (m/s)")?;
        let error = init.publisher::<f64>("heading_error", 16)?;
        let aim = init.message_publisher("aim", "geometry_msgs/msg/PointStamped", 16, aim_msg)?;
        let pause = init.message_service(
            "pause",
            "std_srvs/srv/SetBool",
            pause_request,
            pause_response,
        )?;
        Ok(FollowHeading {
            params: init.rt_params(),
            heading,
            gain,
            speed,
            error,
            aim,
            pause,
            paused: false,
            next_publish_ns: 0,
        })
    }
}

/// `a` wrapped to [-π, π].
fn wrap(a: f64) -> f64 {
    let two_pi = 2.0 * std::f64::consts::PI;
    let w = (a + std::f64::consts::PI).rem_euclid(two_pi) - std::f64::consts::PI;
    if w.is_finite() {
        w
    } else {
        0.0
    }
}

/// RT side: no allocation, no lock, no blocking call, no panic.
impl Controller for FollowHeading {
    fn start(&mut self, robot: &RobotView) {
        self.next_publish_ns = robot.now_ns;
    }

    fn serve(&mut self, _robot: &RobotView, _owner: bool) {
        self.params.rt_refresh();
        let paused = &mut self.paused;
        self.pause.rt_serve(|hold| {
            *paused = hold;
            hold
        });
    }

    fn update(&mut self, robot: &RobotView) -> WheelCommand {
        let heading = self.params.get(self.heading);
        let error = wrap(heading - robot.pose.theta);
        if robot.now_ns >= self.next_publish_ns {
            // a full queue drops (and counts): never blocks
            self.error.rt_publish(error);
            self.aim.rt_publish(Aim {
                x: robot.pose.x + AIM_AHEAD * heading.cos(),
                y: robot.pose.y + AIM_AHEAD * heading.sin(),
                t_ns: robot.now_ns,
            });
            self.next_publish_ns = robot.now_ns.saturating_add(PUBLISH_PERIOD_NS);
        }
        if self.paused {
            return WheelCommand::Stop;
        }
        WheelCommand::Twist(Twist2 {
            linear: self.params.get(self.speed),
            angular: (self.params.get(self.gain) * error).clamp(-MAX_TURN, MAX_TURN),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use thymio_rt::handoff::{NodeId, NrtEndpoint, NrtMessagePort, Pose2, RobotId, RosValue};
    use thymio_rt::rt::alloc;

    /// Steers toward the heading, publishes its error, takes parameter writes — and allocates nothing on a
    /// thread marked RT (the counting allocator of main.rs is this test binary's too).
    #[test]
    fn steers_publishes_and_never_allocates() {
        let mut init = ControllerInit::new(RobotId(0), NAME);
        let mut c = FollowHeading::new(&mut init).unwrap();
        let mut ports = init.finish_ports();
        ports.params.nrt_set("heading", 1.0).unwrap();
        assert!(ports.params.nrt_set("gain", 11.0).is_err());
        let mut view = RobotView {
            now_ns: 1,
            ..RobotView::default()
        };
        assert!(alloc::is_installed());
        alloc::mark_current_thread_rt(true);
        let before = alloc::current_thread_allocations();
        c.start(&view);
        let mut last = WheelCommand::Stop;
        for k in 0..10_000u64 {
            view.now_ns = 1 + k * 1_000_000;
            view.pose = Pose2 {
                x: 0.0,
                y: 0.0,
                theta: (k % 7) as f64 * 0.3,
            };
            c.serve(&view, true);
            last = c.update(&view);
        }
        let allocated = alloc::current_thread_allocations() - before;
        alloc::mark_current_thread_rt(false);
        assert_eq!(allocated, 0, "allocations in the RT methods");
        // theta 9999 % 7 * 0.3 = 0.9: a small left turn toward 1.0 rad, at the default speed
        match last {
            WheelCommand::Twist(t) => {
                assert_eq!(t.linear, 0.05);
                assert!((t.angular - 2.0 * 0.1).abs() < 1e-9, "{t:?}");
            }
            other => panic!("{other:?}"),
        }
        let NrtEndpoint::Publisher { nrt, .. } = &mut ports.endpoints[0] else {
            panic!("heading_error is a publisher");
        };
        let mut n = 0;
        nrt.nrt_drain(|v: RosValue| {
            assert!(matches!(v, RosValue::Float64(_)));
            n += 1
        });
        assert!((1..=16).contains(&n), "{n} messages (20 Hz, a queue of 16)");
        let NrtEndpoint::Message {
            ty,
            port: NrtMessagePort::Publisher(p),
            ..
        } = &mut ports.endpoints[1]
        else {
            panic!("aim is a message publisher");
        };
        assert_eq!(*ty, "geometry_msgs/msg/PointStamped");
        let mut aims = Vec::new();
        p.nrt_drain(&MsgCtx::new(NodeId(1), RobotId(0)), &mut |m| aims.push(m));
        assert!((1..=16).contains(&aims.len()), "{} aims", aims.len());
        // heading 1.0 rad from (0, 0): 0.2 m ahead along it, in the odometry frame
        let last = aims.last().unwrap();
        assert!(
            (last["point"]["x"].as_f64().unwrap() - 0.2 * 1f64.cos()).abs() < 1e-9,
            "{last}"
        );
        assert!(
            (last["point"]["y"].as_f64().unwrap() - 0.2 * 1f64.sin()).abs() < 1e-9,
            "{last}"
        );
        assert_eq!(last["header"]["frame_id"], "odom");
        // pause: held at zero speed until resumed, answered from the RT cycle
        let NrtEndpoint::Message {
            port: NrtMessagePort::Service(pause),
            ..
        } = &mut ports.endpoints[2]
        else {
            panic!("pause is a message service");
        };
        let ctx = MsgCtx::new(NodeId(1), RobotId(0));
        let bad = thymio_rt::serde_json::json!({"data": "yes"});
        assert!(
            pause.nrt_call(&bad).is_err(),
            "a request that is not a SetBool"
        );
        let id = pause
            .nrt_call(&thymio_rt::serde_json::json!({"data": true}))
            .unwrap();
        c.serve(&view, true);
        assert_eq!(c.update(&view), WheelCommand::Stop);
        let (got, answer) = pause.nrt_poll_response(&ctx).unwrap();
        assert_eq!((got, &answer["message"]), (id, &"paused".into()));
        pause
            .nrt_call(&thymio_rt::serde_json::json!({"data": false}))
            .unwrap();
        c.serve(&view, true);
        assert!(matches!(c.update(&view), WheelCommand::Twist(_)));
    }
}
