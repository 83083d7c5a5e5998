//! The communication switch in the loop: owner requests at a cycle boundary, commands from
//! non-owners dropped and counted, the joint command path and its watchdog, controllers
//! started / stopped / served, the filter on every owner, extended joint states.

use super::*;
use crate::controllers::{Controller, ObstacleStop, ObstacleStopParams, Registry, RobotView};
use handoff::{JointCommand, JointStateSample, NodeId, OwnerId, RobotId, WheelCommand};
use std::sync::atomic::AtomicU32;

const PROX: u16 = 3;

/// A controller that drives fixed targets and counts its calls (start, stop, serve, update,
/// and updates whose view says the obstacle stop held the robot the cycle before).
struct Fixed {
    targets: [i16; 2],
    calls: Arc<[AtomicU32; 5]>,
}

impl Controller for Fixed {
    fn start(&mut self, _: &RobotView) {
        self.calls[0].fetch_add(1, Ordering::Relaxed);
    }
    fn stop(&mut self, _: &RobotView) {
        self.calls[1].fetch_add(1, Ordering::Relaxed);
    }
    fn serve(&mut self, _: &RobotView, _: bool) {
        self.calls[2].fetch_add(1, Ordering::Relaxed);
    }
    fn update(&mut self, robot: &RobotView) -> WheelCommand {
        assert_eq!(
            robot.owner,
            OwnerId::controller(0),
            "the view names its owner"
        );
        self.calls[3].fetch_add(1, Ordering::Relaxed);
        if robot.reflexes.obstacle {
            self.calls[4].fetch_add(1, Ordering::Relaxed);
        }
        assert!(!robot.reflexes.cliff, "no cliff filter here");
        WheelCommand::Targets(self.targets)
    }
}

pub(super) type Calls = Arc<[AtomicU32; 5]>;

pub(super) fn build_with(targets: [i16; 2]) -> (RtLoop, NrtEnds, NrtLinkPort, Calls) {
    let (rt_ends, nrt) = channels(&ChannelConfig {
        robots: 2,
        ..Default::default()
    });
    let (rt_port, port) = link_port();
    let calls: Calls = Arc::new(Default::default());
    let mut reg = Registry::new();
    let c = calls.clone();
    reg.register(
        "fixed",
        Box::new(move |_| {
            Ok(Box::new(Fixed {
                targets,
                calls: c.clone(),
            }))
        }),
    )
    .unwrap();
    let (ctrls, _nrt_control) = reg.instantiate(2).unwrap();
    let reflex = Box::new(ObstacleStop::new(ObstacleStopParams::default()));
    let rt = RtLoop::new(test_config(), rt_ends, rt_port, ctrls, vec![reflex]);
    (rt, nrt, port, calls)
}

pub(super) fn configure_prox(nrt: &mut NrtEnds, rt: &mut RtLoop, now: u64) {
    let mut config = RobotConfig::script(NodeId(NODE), ODOMETRY, SET_SPEED, false);
    config.proximity_event = Some(PROX);
    nrt.nrt_push_command(RtCommand::ConfigureRobot {
        robot: RobotId(0),
        config,
    })
    .unwrap();
    rt.cycle(now);
}

fn owners(ev: &[RtEvent]) -> Vec<(OwnerId, u32)> {
    ev.iter()
        .filter_map(|e| match e {
            RtEvent::Owner { owner, dropped, .. } => Some((*owner, *dropped)),
            _ => None,
        })
        .collect()
}

fn go(nrt: &mut NrtEnds) {
    let t = Twist2 {
        linear: 0.1,
        angular: 0.0,
    };
    nrt.nrt_params().nrt_set_cmd_vel(RobotId(0), t).unwrap();
}

#[test]
fn a_controller_owner_takes_the_wheels_and_cmd_vel_is_dropped_and_counted() {
    let (mut rt, mut nrt, mut port, calls) = build_with([120, 80]);
    let mut peer = attach(&mut rt, &mut port, &mut nrt, 0);
    configure_prox(&mut nrt, &mut rt, 0);
    assert_eq!(owners(&events(&mut nrt)), [(OwnerId::ROS, 0)]);
    go(&mut nrt);
    rt.cycle(MS);
    assert_eq!(received(&mut peer), [(SET_SPEED, vec![293, 293])]);
    let served = calls[2].load(Ordering::Relaxed);
    assert!(served > 0, "served while not the owner");
    assert_eq!(calls[3].load(Ordering::Relaxed), 0, "not updated");

    let p = nrt.nrt_params().clone();
    p.nrt_request_owner(RobotId(0), OwnerId::controller(0))
        .unwrap();
    rt.cycle(20 * MS);
    assert_eq!(received(&mut peer), [(SET_SPEED, vec![120, 80])]);
    assert_eq!(owners(&events(&mut nrt)), [(OwnerId::controller(0), 0)]);
    assert_eq!(calls[0].load(Ordering::Relaxed), 1, "started once");
    // cmd_vel is not the owner: dropped, counted, reported once per periodic cycle.
    go(&mut nrt);
    rt.cycle(40 * MS);
    go(&mut nrt);
    rt.cycle(60 * MS);
    assert!(received(&mut peer).is_empty());
    assert_eq!(
        owners(&events(&mut nrt)),
        [(OwnerId::controller(0), 1), (OwnerId::controller(0), 2)]
    );
    // An owner that does not exist is refused: the owner stays, and is reported.
    p.nrt_request_owner(RobotId(0), OwnerId::controller(5))
        .unwrap();
    rt.cycle(80 * MS);
    assert_eq!(owners(&events(&mut nrt)), [(OwnerId::controller(0), 2)]);
    assert!(received(&mut peer).is_empty());
    // The reflex filters the controller's command too: forward toward a front obstacle keeps
    // only the turn (to the right).
    peer.write(&event(NODE, PROX, &[0, 0, 4000, 0, 0, 0, 0]))
        .unwrap();
    rt.cycle(100 * MS);
    assert_eq!(received(&mut peer), [(SET_SPEED, vec![20, -20])]);
    assert_eq!(calls[4].load(Ordering::Relaxed), 0, "not held before");
    peer.write(&event(NODE, PROX, &[0; 7])).unwrap();
    rt.cycle(120 * MS);
    assert_eq!(received(&mut peer), [(SET_SPEED, vec![120, 80])]);
    // The controller saw, the cycle after, that the obstacle stop held it (goals abort on it).
    assert_eq!(calls[4].load(Ordering::Relaxed), 1, "held the cycle before");

    // Back to ros: the controller is stopped, the cmd_vel dropped meanwhile does not come back.
    p.nrt_request_owner(RobotId(0), OwnerId::ROS).unwrap();
    rt.cycle(140 * MS);
    assert_eq!(received(&mut peer), [(SET_SPEED, vec![0, 0])]);
    assert_eq!(calls[1].load(Ordering::Relaxed), 1, "stopped once");
    go(&mut nrt);
    rt.cycle(160 * MS);
    assert_eq!(received(&mut peer), [(SET_SPEED, vec![293, 293])]);
    assert_eq!(owners(&events(&mut nrt)), [(OwnerId::ROS, 2)]);
}

#[test]
fn joint_commands_drive_each_wheel_with_the_watchdog_and_are_dropped_for_other_owners() {
    let (mut rt, mut nrt, mut port, _) = build_with([0, 0]);
    let mut peer = attach(&mut rt, &mut port, &mut nrt, 0);
    configure_prox(&mut nrt, &mut rt, 0);
    let p = nrt.nrt_params().clone();
    let joint = |l: f64, r: f64, t: u64| {
        p.nrt_set_joint_command_at(RobotId(0), JointCommand { velocity: [l, r] }, t)
            .unwrap()
    };
    // Not the owner yet: dropped.
    joint(5.0, 5.0, 1);
    rt.cycle(MS);
    assert!(received(&mut peer).is_empty());
    p.nrt_request_owner(RobotId(0), OwnerId::JOINT).unwrap();
    rt.cycle(2 * MS);
    assert_eq!(
        owners(&events(&mut nrt)),
        [(OwnerId::ROS, 0), (OwnerId::ROS, 1), (OwnerId::JOINT, 1)]
    );
    // 4.545 rad/s × 0.022 m = 0.1 m/s = 293 units; 20 rad/s = 0.44 m/s → capped alone to 500.
    joint(0.1 / 0.022, 20.0, 3);
    rt.cycle(20 * MS);
    assert_eq!(received(&mut peer), [(SET_SPEED, vec![293, 500])]);
    // NaN keeps that wheel.
    joint(f64::NAN, -0.1 / 0.022, 4);
    rt.cycle(40 * MS);
    assert_eq!(received(&mut peer), [(SET_SPEED, vec![293, -293])]);
    // cmd_vel while joint owns: dropped.
    go(&mut nrt);
    rt.cycle(60 * MS);
    assert!(received(&mut peer).is_empty());
    // The watchdog (0.5 s) applies to the joint command stream.
    rt.cycle(600 * MS);
    assert_eq!(received(&mut peer), [(SET_SPEED, vec![0, 0])]);
    let ev = events(&mut nrt);
    assert!(ev.contains(&RtEvent::WatchdogStop { robot: RobotId(0) }));
    assert_eq!(owners(&ev), [(OwnerId::JOINT, 2)]);
}

#[test]
fn extended_joint_states_come_at_the_requested_rate_with_the_owner_and_targets() {
    let (rt_ends, mut nrt) = channels(&ChannelConfig {
        robots: 2,
        ..Default::default()
    });
    let mut out = nrt.nrt_take_odometry_out().unwrap();
    let (rt_port, mut port) = link_port();
    let cfg = RtConfig {
        period: Duration::from_millis(10),
        ..test_config()
    };
    let mut rt = RtLoop::new(cfg, rt_ends, rt_port, RtControllers::none(), Vec::new());
    let mut peer = attach(&mut rt, &mut port, &mut nrt, 0);
    configure(&mut nrt, &mut rt, 0);
    let p = nrt.nrt_params().clone();
    rt.cycle(MS);
    assert!(out.nrt_pop_joint().is_none(), "off by default");
    p.nrt_set_joint_state_hz(RobotId(0), 50.0).unwrap();
    let mut n = 0;
    // 1 s of 10 ms cycles at 50 Hz: 50 samples (one every other cycle, jitter aside).
    for k in 0..100u64 {
        go(&mut nrt);
        rt.cycle(10 * MS + k * 10 * MS + (k % 3) * 100_000);
        while let Some(s) = out.nrt_pop_joint() {
            n += 1;
            assert_eq!(
                (s.robot, s.owner, s.target),
                (RobotId(0), OwnerId::ROS, [293, 293])
            );
            assert!((s.velocity_reference[0] - 0.1 / 0.022).abs() < 1e-9);
            assert_eq!(s.pwm, None);
        }
    }
    assert!((49..=51).contains(&n), "{n} samples");
    received(&mut peer);
    // The watchdog's stop shows as a fault.
    rt.cycle(2000 * MS);
    let mut last = None;
    while let Some(s) = out.nrt_pop_joint() {
        last = Some(s);
    }
    let s = last.unwrap();
    assert_eq!(
        s.fault & JointStateSample::FAULT_WATCHDOG,
        JointStateSample::FAULT_WATCHDOG
    );
    assert_eq!(s.target, [0, 0]);
}
