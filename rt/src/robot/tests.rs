use super::*;
use handoff::{NrtLiveParams, Quadratic};

const ODO: u16 = 2;
const SET_SPEED: u16 = 1;
const PROX: u16 = 9;
const GROUND: u16 = 11;

/// Both halves of the live parameters: the robot reads `rt`, the test writes through `nrt`.
struct Params {
    rt: RtLiveParams,
    nrt: NrtLiveParams,
}

fn robot() -> (Robot, Params) {
    let (rt, nrt) = handoff::live_params(4);
    nrt.nrt_set_calibration(
        RobotId(1),
        RobotCalibration {
            left: Quadratic { q0: 0.001, q1: 0.0 },
            right: Quadratic { q0: 0.001, q1: 0.0 },
            axis_length: 0.1,
            ..Default::default()
        },
    )
    .unwrap();
    let mut r = Robot::new(RobotId(1));
    let mut cfg = RobotConfig::script(NodeId(5), ODO, SET_SPEED, false);
    cfg.proximity_event = Some(PROX);
    cfg.ground_event = Some(GROUND);
    r.configure(cfg);
    (r, Params { rt, nrt })
}

fn words(w: &[i16]) -> Vec<u8> {
    w.iter().flat_map(|x| x.to_le_bytes()).collect()
}

#[test]
fn odometry_events_of_its_node_integrate_and_learn_the_link() {
    let (mut r, mut p) = robot();
    let a = words(&[0, 0, 10]);
    let b = words(&[100, 100, 20]);
    assert_eq!(r.link(), None);
    assert!(r
        .on_user_event(LinkId(3), 1, 1, 5, ODO, Words::from_le_bytes(&a), &mut p.rt)
        .is_none());
    assert_eq!(r.link(), Some(LinkId(3)));
    // Other node, other event: ignored.
    assert!(r
        .on_user_event(LinkId(3), 2, 2, 6, ODO, Words::from_le_bytes(&b), &mut p.rt)
        .is_none());
    assert!(r
        .on_user_event(LinkId(3), 2, 2, 5, 7, Words::from_le_bytes(&b), &mut p.rt)
        .is_none());
    let s = r
        .on_user_event(LinkId(3), 2, 3, 5, ODO, Words::from_le_bytes(&b), &mut p.rt)
        .unwrap();
    assert_eq!(
        (s.robot, s.node, s.link, s.seq, s.robot_ticks),
        (RobotId(1), NodeId(5), LinkId(3), 0, Some(20))
    );
    // read at the wake-up (2), decoded later (3)
    assert_eq!((s.wire_ns, s.t_ns), (2, 3));
    assert!((s.pose.x - 0.1).abs() < 1e-12 && (s.dt - 0.1).abs() < 1e-12);
    assert!((s.twist.linear - 1.0).abs() < 1e-12);
    assert_eq!(r.last_odometry(), Some(s));
    // Link loss: stale, and the next event only re-initialises.
    assert!(!r.link_lost(LinkId(4)));
    assert!(r.link_lost(LinkId(3)));
    assert!(r.view(0, false, OwnerId::ROS).stale);
    let c = words(&[200, 200, 30]);
    assert!(r
        .on_user_event(LinkId(2), 4, 4, 5, ODO, Words::from_le_bytes(&c), &mut p.rt)
        .is_none());
    assert_eq!(r.link(), Some(LinkId(2)));
}

#[test]
fn proximity_is_kept_for_controllers() {
    let (mut r, mut p) = robot();
    let prox = words(&[1, 2, 3, 4, 5, 6, 7]);
    r.on_user_event(
        LinkId(0),
        77,
        77,
        5,
        PROX,
        Words::from_le_bytes(&prox),
        &mut p.rt,
    );
    let v = r.view(100, true, OwnerId::JOINT);
    assert_eq!(
        (v.proximity, v.proximity_t_ns, v.node),
        ([1, 2, 3, 4, 5, 6, 7], Some(77), NodeId(5))
    );
}

#[test]
fn ground_readings_are_kept_for_controllers() {
    let (mut r, mut p) = robot();
    assert_eq!(r.view(0, true, OwnerId::ROS).ground_t_ns, None);
    let g = words(&[812, 95]);
    let e = r.on_user_event(
        LinkId(0),
        9,
        10,
        5,
        GROUND,
        Words::from_le_bytes(&g),
        &mut p.rt,
    );
    assert!(e.is_none());
    // another node's ground event is not this robot's
    r.on_user_event(
        LinkId(0),
        11,
        11,
        6,
        GROUND,
        Words::from_le_bytes(&words(&[1, 1])),
        &mut p.rt,
    );
    let v = r.view(20, true, OwnerId::controller(0));
    assert_eq!(
        (v.ground, v.ground_t_ns, v.owner),
        ([812, 95], Some(10), OwnerId::controller(0))
    );
    assert_eq!(r.take_proximity(), None, "ground is not proximity");
}

#[test]
fn proximity_events_are_handed_to_nrt_decoded_once() {
    let (mut r, mut p) = robot();
    assert_eq!(r.take_proximity(), None);
    let prox = words(&[1, 2, 3, 4, 5, 6, 7]);
    r.on_user_event(
        LinkId(2),
        77,
        77,
        5,
        PROX,
        Words::from_le_bytes(&prox),
        &mut p.rt,
    );
    assert_eq!(
        r.take_proximity(),
        Some(ProximitySample {
            robot: RobotId(1),
            node: NodeId(5),
            link: LinkId(2),
            t_ns: 77,
            values: [1, 2, 3, 4, 5, 6, 7],
        })
    );
    assert_eq!(r.take_proximity(), None, "handed over once");
    // Not the script's size: the RT controllers may use it, NRT gets nothing (as before, when
    // NRT decoded the event itself and refused the size).
    let long = words(&[1, 2, 3, 4, 5, 6, 7, 8]);
    r.on_user_event(
        LinkId(2),
        78,
        78,
        5,
        PROX,
        Words::from_le_bytes(&long),
        &mut p.rt,
    );
    assert_eq!(r.take_proximity(), None);
}

#[test]
fn set_points_are_taken_once_and_the_watchdog_stops_once() {
    let (mut r, mut p) = robot();
    assert_eq!(r.poll_set_point(&mut p.rt, 0, 500), CmdUpdate::None);
    p.nrt
        .nrt_set_cmd_vel(
            RobotId(1),
            Twist2 {
                linear: 0.1,
                angular: 0.0,
            },
        )
        .unwrap();
    assert_eq!(r.poll_set_point(&mut p.rt, 1_000, 500), CmdUpdate::New);
    assert_eq!(r.poll_set_point(&mut p.rt, 1_200, 500), CmdUpdate::None);
    assert_eq!(r.set_point().linear, 0.1);
    assert_eq!(
        r.poll_set_point(&mut p.rt, 1_501, 500),
        CmdUpdate::WatchdogStop
    );
    assert_eq!(r.set_point(), Twist2::default());
    assert_eq!(r.poll_set_point(&mut p.rt, 5_000, 500), CmdUpdate::None);
    // A zero set-point never trips; watchdog 0 disables it.
    p.nrt
        .nrt_set_cmd_vel(
            RobotId(1),
            Twist2 {
                linear: 0.0,
                angular: 0.0,
            },
        )
        .unwrap();
    assert_eq!(r.poll_set_point(&mut p.rt, 6_000, 500), CmdUpdate::New);
    assert_eq!(r.poll_set_point(&mut p.rt, 60_000, 500), CmdUpdate::None);
    p.nrt
        .nrt_set_cmd_vel(
            RobotId(1),
            Twist2 {
                linear: 0.0,
                angular: 1.0,
            },
        )
        .unwrap();
    assert_eq!(r.poll_set_point(&mut p.rt, 70_000, 0), CmdUpdate::New);
    assert_eq!(r.poll_set_point(&mut p.rt, u64::MAX, 0), CmdUpdate::None);
    // Unconfigured slots consume nothing.
    let mut free = Robot::new(RobotId(2));
    p.nrt
        .nrt_set_cmd_vel(
            RobotId(2),
            Twist2 {
                linear: 1.0,
                angular: 0.0,
            },
        )
        .unwrap();
    assert_eq!(free.poll_set_point(&mut p.rt, 1, 500), CmdUpdate::None);
}

#[test]
fn sending_rules() {
    let (mut r, mut p) = robot();
    // Nothing commanded yet: nothing to send.
    assert!(!r.should_send([0, 0], 0, 10, 0));
    assert_eq!(r.send_due([0, 0], 0, 10, 0), None);
    p.nrt
        .nrt_set_cmd_vel_at(
            RobotId(1),
            Twist2 {
                linear: 0.1,
                angular: 0.0,
            },
            42,
        )
        .unwrap();
    r.poll_set_point(&mut p.rt, 0, 0);
    // the stamp of the set-point, once
    assert_eq!(r.take_cmd_stamp(), Some(42));
    assert_eq!(r.take_cmd_stamp(), None);
    let set_point = r.set_point();
    let t = r.targets(&mut p.rt, WheelCommand::Twist(set_point));
    assert_eq!(t, [100, 100]);
    assert!(r.should_send(t, 0, 10, 0));
    r.sent(t, 0);
    assert!(!r.should_send(t, 5, 10, 0));
    // A change is rate-limited (and says until when), a stop is not.
    assert!(!r.should_send([120, 120], 5, 10, 0));
    assert_eq!(r.send_due([120, 120], 5, 10, 0), Some(10));
    assert_eq!(r.send_due(t, 5, 10, 0), None);
    assert!(r.should_send([120, 120], 10, 10, 0));
    assert!(r.should_send([0, 0], 5, 10, 0));
    // Refresh of a moving target.
    assert!(!r.should_send(t, 50, 10, 100));
    assert!(r.should_send(t, 100, 10, 100));
}

#[test]
fn speed_frames_carry_both_wheels_in_one_message() {
    let (mut r, _) = robot();
    let mut out = [0u8; MAX_FRAME];
    let n = r.speed_frame(0, [100, -100], &mut out).unwrap();
    // user event 1 from 0, args [100, -100]
    assert_eq!(&out[..n], &[4, 0, 0, 0, 1, 0, 100, 0, 0x9C, 0xFF]);
    let mut cfg = *r.config().unwrap();
    cfg.speed = SpeedOutput::Event {
        id: 1,
        node_prefix: true,
    };
    r.configure(cfg);
    let n = r.speed_frame(0, [100, -100], &mut out).unwrap();
    assert_eq!(&out[..n], &[6, 0, 0, 0, 1, 0, 5, 0, 100, 0, 0x9C, 0xFF]);
    cfg.speed = SpeedOutput::Variables { address: 86 };
    cfg.node = NodeId(1);
    r.configure(cfg);
    let n = r.speed_frame(0, [100, 100], &mut out).unwrap();
    // aseba.md §1.8: SET_VARIABLES dest 1, start 86, [100, 100]
    assert_eq!(
        &out[..n],
        &[0x08, 0x00, 0x00, 0x00, 0x0C, 0xA0, 0x01, 0x00, 0x56, 0x00, 0x64, 0x00, 0x64, 0x00]
    );
    cfg.speed = SpeedOutput::None;
    r.configure(cfg);
    assert!(r.speed_frame(0, [1, 1], &mut out).is_none());
    assert!(!r.should_send([1, 1], 0, 0, 0));
    r.clear();
    assert!(r.config().is_none());
}

/// Issue 42: a zero set-point the motion limits still decelerate to (here at 0.01 m/s², 10 s
/// from 0.1 m/s) is stopped by the watchdog at its deadline, at once; the robot used to coast on
/// because the watchdog armed only on a non-zero set-point.
#[test]
fn the_watchdog_stops_a_zero_set_point_still_being_decelerated_to() {
    let (mut r, mut p) = robot();
    let slow = handoff::MotionLimits {
        linear: handoff::AxisLimits {
            max_deceleration: 0.01,
            ..handoff::AxisLimits::OFF
        },
        angular: handoff::AxisLimits::OFF,
    };
    p.nrt.nrt_set_motion_limits(RobotId(1), slow).unwrap();
    let twist = |linear| Twist2 {
        linear,
        angular: 0.0,
    };
    const MS: u64 = 1_000_000;
    const WATCHDOG: u64 = 500 * MS;
    // One cycle: poll, then the owner's (ros) command through the limits.
    let cycle = |r: &mut Robot, p: &mut Params, now: u64| {
        let up = r.poll_set_point(&mut p.rt, now, WATCHDOG);
        let cmd = WheelCommand::Twist(r.set_point());
        r.limit(&mut p.rt, cmd, cmd, now);
        up
    };
    p.nrt.nrt_set_cmd_vel(RobotId(1), twist(0.1)).unwrap();
    assert_eq!(cycle(&mut r, &mut p, 0), CmdUpdate::New);
    // (the first cycle has no interval: the limiter starts on the next; no acceleration limit)
    assert_eq!(cycle(&mut r, &mut p, 10 * MS), CmdUpdate::None);
    assert_eq!(r.commanded(), twist(0.1));
    // The user's zero twist, then silence: the limiter decelerates (0.0001 m/s a 10 ms cycle).
    p.nrt.nrt_set_cmd_vel(RobotId(1), twist(0.0)).unwrap();
    assert_eq!(cycle(&mut r, &mut p, 20 * MS), CmdUpdate::New);
    let mut t = 20 * MS;
    while t < 20 * MS + WATCHDOG {
        t += 10 * MS;
        assert_eq!(cycle(&mut r, &mut p, t), CmdUpdate::None, "at {t} ns");
        assert!(
            r.moving() && r.commanded().linear > 0.09,
            "{:?}",
            r.commanded()
        );
    }
    // Past the deadline: stopped at once, not at 0.01 m/s².
    assert_eq!(cycle(&mut r, &mut p, t + 10 * MS), CmdUpdate::WatchdogStop);
    assert_eq!(r.commanded(), Twist2::default());
    assert!(r.watchdog_tripped() && !r.moving());
    // It stays stopped, and trips once.
    assert_eq!(cycle(&mut r, &mut p, t + 20 * MS), CmdUpdate::None);
    assert_eq!(r.commanded(), Twist2::default());
}
