use super::*;
use crate::reply::held;
use handoff::{
    ControllerInit, OwnerNames, Pose2, RtParams, RtServiceEndpoint, RtTopicPublisher,
    RtTopicSubscriber,
};
use std::sync::mpsc::{channel, Receiver};

const NODE: NodeId = NodeId(4);
const SLOT: RobotId = RobotId(1);

/// The RT halves of a go_to_pose on slot 1.
struct Rt {
    params: RtParams,
    goal: RtTopicSubscriber<Pose2>,
    set_goal: RtServiceEndpoint<Pose2>,
    reached: RtTopicPublisher<bool>,
}

fn controllers(bell: Doorbell) -> (Controllers, Rt) {
    let mut init = ControllerInit::new(SLOT, "go_to_pose");
    let goal = init.subscriber::<Pose2>("goal", Pose2::default()).unwrap();
    let set_goal = init.service::<Pose2>("set_goal").unwrap();
    let reached = init.publisher::<bool>("reached", 8).unwrap();
    let speed = init.parameter("max_linear", 0.1, 0.0, 0.3, "top speed (m/s)");
    assert!(speed.is_ok());
    let (params, ports) = init.finish();
    let control = NrtControl {
        names: OwnerNames::new(vec!["go_to_pose"]),
        ports: vec![ports],
    };
    let rt = Rt {
        params,
        goal,
        set_goal,
        reached,
    };
    (Controllers::new(control, bell), rt)
}

fn driven(c: &mut Controllers) {
    c.on_engine_event(&EngineEvent::RobotReady {
        node: NODE,
        robot: SLOT,
    });
}

fn call() -> (Held<Answer>, Receiver<Answer>) {
    let (tx, rx) = channel();
    (held(move |a| tx.send(a).unwrap()), rx)
}

fn id(endpoint: usize) -> EndpointId {
    EndpointId {
        controller: 0,
        endpoint,
    }
}

fn pose(x: f64) -> RosValue {
    RosValue::Pose2D(Pose2 {
        x,
        y: 0.0,
        theta: 0.0,
    })
}

#[test]
fn a_driven_robot_lists_its_slots_endpoints_under_its_driver_node() {
    let (mut c, _rt) = controllers(Doorbell::new());
    assert!(c.endpoints(NODE).is_empty(), "not driven yet");
    driven(&mut c);
    let e = c.endpoints(NODE);
    let seen: Vec<_> = e.iter().map(|e| (e.leaf(), e.role, e.kind)).collect();
    assert_eq!(
        seen,
        [
            (
                "thymio_driver/controllers/go_to_pose/goal".to_owned(),
                Role::Subscriber,
                RosKind::Pose2D
            ),
            (
                "thymio_driver/controllers/go_to_pose/set_goal".to_owned(),
                Role::Service,
                RosKind::Pose2D
            ),
            (
                "thymio_driver/controllers/go_to_pose/reached".to_owned(),
                Role::Publisher,
                RosKind::Bool
            ),
        ]
    );
    assert_eq!(e[2].id, id(2));
    c.on_engine_event(&EngineEvent::RobotReady {
        node: NodeId(5),
        robot: RobotId(0),
    });
    assert!(
        c.endpoints(NodeId(5)).is_empty(),
        "ports belong to their slot"
    );
}

#[test]
fn received_messages_reach_the_rt_cell_and_ring_once_bad_ones_are_refused() {
    let bell = Doorbell::new();
    let (mut c, mut rt) = controllers(bell.clone());
    assert_eq!(
        c.receive(NODE, id(0), pose(1.0)),
        Err(ReceiveError::NotDriven(NODE))
    );
    driven(&mut c);
    let nan = pose(f64::NAN);
    assert!(matches!(
        c.receive(NODE, id(0), nan),
        Err(ReceiveError::NotFinite(..))
    ));
    assert!(matches!(
        c.receive(NODE, id(0), RosValue::Bool(true)),
        Err(ReceiveError::WrongKind(..))
    ));
    assert_eq!(
        c.receive(NODE, id(2), pose(1.0)),
        Err(ReceiveError::NoSuchEndpoint(NODE, id(2)))
    );
    c.serve(Instant::now());
    assert!(!bell.drain(), "refusals store nothing");
    assert_eq!(rt.goal.rt_read_new(), None);
    c.receive(NODE, id(0), pose(1.0)).unwrap();
    c.receive(NODE, id(0), pose(2.0)).unwrap();
    assert!(!bell.drain(), "rung once per iteration, by serve");
    c.serve(Instant::now());
    assert!(bell.drain());
    assert_eq!(rt.goal.rt_read_new().map(|p| p.x), Some(2.0), "the latest");
}

#[test]
fn what_rt_published_is_kept_for_every_front_end_until_the_end_of_the_step() {
    let (mut c, mut rt) = controllers(Doorbell::new());
    assert!(rt.reached.rt_publish(true));
    c.serve(Instant::now());
    assert!(
        c.outputs().is_empty(),
        "not drained for a slot without robot"
    );
    driven(&mut c);
    assert!(rt.reached.rt_publish(false));
    c.serve(Instant::now());
    let out = [
        Published {
            node: NODE,
            endpoint: id(2),
            value: Payload::Value(RosValue::Bool(true)),
        },
        Published {
            node: NODE,
            endpoint: id(2),
            value: Payload::Value(RosValue::Bool(false)),
        },
    ];
    assert_eq!(c.outputs(), out);
    assert_eq!(c.outputs(), out, "read by every front end");
    c.end_step();
    assert!(c.outputs().is_empty());
}

#[test]
fn service_calls_are_held_until_rt_answers_or_the_timeout() {
    let bell = Doorbell::new();
    let (mut c, mut rt) = controllers(bell.clone());
    driven(&mut c);
    let t0 = Instant::now();
    let (k, rx) = call();
    c.call(NODE, id(1), pose(f64::INFINITY), k, t0);
    assert_eq!(
        rx.try_recv().unwrap(),
        (false, "the pose must be finite".into())
    );
    c.serve(t0);
    assert!(!bell.drain(), "a refused call is nothing for RT");
    let (k, rx) = call();
    c.call(NODE, id(1), pose(0.25), k, t0);
    assert!(rx.try_recv().is_err(), "held");
    c.serve(t0);
    assert!(
        bell.drain(),
        "a call for RT wakes the RT thread (a quiet loop sleeps past its period)"
    );
    assert_eq!(
        rt.set_goal.rt_serve(|p| if p.x > 0.0 {
            Outcome::ok("goal set")
        } else {
            Outcome::refused("no")
        }),
        1
    );
    c.serve(t0);
    assert_eq!(rx.try_recv().unwrap(), (true, "goal set".into()));
    // no answer: refused at the timeout, naming the controller; a late answer is dropped
    let (k, rx) = call();
    c.call(NODE, id(1), pose(0.5), k, t0);
    c.serve(t0 + SERVICE_TIMEOUT / 2);
    assert!(rx.try_recv().is_err());
    c.serve(t0 + SERVICE_TIMEOUT);
    assert_eq!(
        rx.try_recv().unwrap(),
        (
            false,
            "go_to_pose did not answer within 1000 ms (is the RT thread running?)".into()
        )
    );
    rt.set_goal.rt_serve(|_| Outcome::ok("late"));
    c.serve(t0 + SERVICE_TIMEOUT);
    // a full request ring: refused at once
    let answers: Vec<_> = (0..5)
        .map(|_| {
            let (k, rx) = call();
            c.call(NODE, id(1), pose(0.1), k, t0 + SERVICE_TIMEOUT);
            rx
        })
        .collect();
    assert_eq!(
        answers[4].try_recv().unwrap(),
        (false, "go_to_pose: request queue full, try again".into())
    );
    // the robot goes: its held calls are refused
    c.on_engine_event(&EngineEvent::RobotRemoved {
        node: NODE,
        robot: SLOT,
    });
    for rx in &answers[..4] {
        assert_eq!(rx.try_recv().unwrap(), (false, NO_LONGER_DRIVEN.into()));
    }
    let (k, rx) = call();
    c.call(NODE, id(1), pose(0.1), k, t0);
    assert_eq!(rx.try_recv().unwrap(), (false, NO_LONGER_DRIVEN.into()));
}

#[test]
fn controller_parameters_are_validated_applied_and_ring_the_rt_thread() {
    let bell = Doorbell::new();
    let (mut c, mut rt) = controllers(bell.clone());
    let listed = c.params(SLOT);
    assert_eq!(listed.len(), 1);
    let (name, value, decl) = &listed[0];
    assert_eq!(
        (name.as_str(), *value),
        ("controllers.go_to_pose.max_linear", 0.1)
    );
    assert_eq!((decl.min, decl.max), (0.0, 0.3));
    assert!(
        c.params(RobotId(0)).is_empty(),
        "ports belong to their slot"
    );
    let err = c.set_param(SLOT, name, 0.5).unwrap_err();
    assert!(err.contains("outside [0, 0.3]"), "{err}");
    assert_eq!(c.check_param(SLOT, name, 0.5).unwrap_err(), err);
    assert!(c.set_param(SLOT, name, f64::NAN).is_err());
    let err = c
        .set_param(SLOT, "controllers.line_follower.kp", 1.0)
        .unwrap_err();
    assert!(err.contains("no controller line_follower"), "{err}");
    assert!(c.set_param(SLOT, "controllers.go_to_pose", 1.0).is_err());
    assert!(c.set_param(SLOT, "max_linear", 0.1).is_err());
    c.check_param(SLOT, name, 0.05).unwrap();
    assert!(!bell.drain(), "refusals and checks change nothing");
    assert_eq!(c.params(SLOT)[0].1, 0.1);
    c.set_param(SLOT, name, 0.05).unwrap();
    assert!(bell.drain(), "the RT thread is woken");
    assert!(rt.params.rt_refresh());
    assert_eq!(c.params(SLOT)[0].1, 0.05);
}

/// A controller with one endpoint of each role of a ROS type of its own choosing.
mod messages {
    use super::*;
    use handoff::{MsgCtx, RtMessagePublisher, RtMessageService, RtMessageSubscriber};
    use serde_json::json;

    fn point(p: &Pose2, ctx: &MsgCtx) -> MsgValue {
        json!({"header": ctx.header(0, "odom"), "point": {"x": p.x, "y": p.y}})
    }
    fn goal(m: &MsgValue) -> Result<Pose2, String> {
        if m["header"]["frame_id"] != "odom" {
            return Err(format!("frame {} is not odom", m["header"]["frame_id"]));
        }
        let x = m["pose"]["position"]["x"].as_f64().ok_or("no x")?;
        Ok(Pose2 {
            x,
            y: 0.0,
            theta: 0.0,
        })
    }
    fn take(m: &MsgValue) -> Result<bool, String> {
        m["data"].as_bool().ok_or_else(|| "no data".into())
    }
    fn answer(ok: &bool, _: &MsgContext) -> MsgValue {
        json!({"success": ok, "message": ""})
    }
    type MsgContext = MsgCtx;

    struct Rt {
        target: RtMessagePublisher<Pose2>,
        goal: RtMessageSubscriber<Pose2>,
        enable: RtMessageService<bool, bool>,
    }

    fn controllers() -> (Controllers, Rt) {
        let mut init = ControllerInit::new(SLOT, "mine");
        let target = init
            .message_publisher("target", "geometry_msgs/msg/PointStamped", 4, point)
            .unwrap();
        let goal = init
            .message_subscriber(
                "goal",
                "geometry_msgs/msg/PoseStamped",
                Pose2::default(),
                goal,
            )
            .unwrap();
        let enable = init
            .message_service("enable", "std_srvs/srv/SetBool", take, answer)
            .unwrap();
        let (_, ports) = init.finish();
        let control = NrtControl {
            names: OwnerNames::new(vec!["mine"]),
            ports: vec![ports],
        };
        let c = Controllers::new(control, Doorbell::silent());
        (
            c,
            Rt {
                target,
                goal,
                enable,
            },
        )
    }

    #[test]
    fn message_endpoints_carry_their_types_and_convert_both_ways() {
        let (mut c, mut rt) = controllers();
        assert!(c.endpoints(NODE).is_empty(), "not driven yet");
        driven(&mut c);
        let e = c.endpoints(NODE);
        let kinds: Vec<_> = e.iter().map(|e| (e.role, e.kind, e.ty.unwrap())).collect();
        assert_eq!(
            kinds,
            [
                (
                    Role::Publisher,
                    RosKind::Message,
                    "geometry_msgs/msg/PointStamped"
                ),
                (
                    Role::Subscriber,
                    RosKind::Message,
                    "geometry_msgs/msg/PoseStamped"
                ),
                (Role::Service, RosKind::Message, "std_srvs/srv/SetBool"),
            ]
        );
        // RT → ROS
        assert!(rt.target.rt_publish(Pose2 {
            x: 1.5,
            y: -2.0,
            theta: 0.0
        }));
        c.serve(Instant::now());
        let [out] = c.outputs() else {
            panic!("{:?}", c.outputs())
        };
        let Payload::Message(m) = &out.value else {
            panic!("{out:?}")
        };
        assert_eq!(
            (m["point"]["x"].as_f64(), m["point"]["y"].as_f64()),
            (Some(1.5), Some(-2.0))
        );
        assert!(m["header"]["stamp"]["sec"].as_i64().unwrap() > 1_600_000_000);
        c.end_step();
        // ROS → RT, and a refusal that reaches nothing
        let bad = json!({"header": {"frame_id": "map"}, "pose": {"position": {"x": 3.0}}});
        let err = c.receive_message(NODE, id(1), &bad).unwrap_err();
        assert!(
            err.to_string()
                .contains("mine/goal: frame \"map\" is not odom"),
            "{err}"
        );
        assert_eq!(rt.goal.rt_read_new(), None);
        let good = json!({"header": {"frame_id": "odom"}, "pose": {"position": {"x": 3.0}}});
        c.receive_message(NODE, id(1), &good).unwrap();
        assert_eq!(rt.goal.rt_read_new().map(|p| p.x), Some(3.0));
        assert!(matches!(
            c.receive_message(NODE, id(0), &good),
            Err(ReceiveError::NoSuchEndpoint(..))
        ));
        // a service: answered by RT, refused when the conversion refuses, timed out when RT is silent
        let (tx, rx) = channel();
        c.call_message(
            NODE,
            id(2),
            &json!({"data": true}),
            held(move |a| tx.send(a).unwrap()),
            Instant::now(),
        );
        assert_eq!(rt.enable.rt_serve(|on| !on), 1);
        c.serve(Instant::now());
        assert_eq!(
            rx.try_recv().unwrap(),
            Ok(json!({"success": false, "message": ""}))
        );
        let (tx, rx) = channel();
        c.call_message(
            NODE,
            id(2),
            &json!({}),
            held(move |a| tx.send(a).unwrap()),
            Instant::now(),
        );
        let why = rx.try_recv().unwrap().unwrap_err();
        assert!(why.contains("mine/enable: bad request: no data"), "{why}");
        let (tx, rx) = channel();
        let t0 = Instant::now();
        c.call_message(
            NODE,
            id(2),
            &json!({"data": true}),
            held(move |a| tx.send(a).unwrap()),
            t0,
        );
        c.serve(t0 + SERVICE_TIMEOUT);
        assert!(rx
            .try_recv()
            .unwrap()
            .unwrap_err()
            .contains("did not answer"));
        // a robot that goes refuses what it held
        let (tx, rx) = channel();
        c.call_message(
            NODE,
            id(2),
            &json!({"data": true}),
            held(move |a| tx.send(a).unwrap()),
            Instant::now(),
        );
        c.on_engine_event(&EngineEvent::RobotRemoved {
            node: NODE,
            robot: SLOT,
        });
        assert_eq!(rx.try_recv().unwrap(), Err(NO_LONGER_DRIVEN.into()));
    }
}
