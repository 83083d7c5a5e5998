//! The motion limits in the loop: a set-point ramps at the configured acceleration, a zero
//! set-point decelerates, the watchdog's stop is not slowed, and the limited twist rides with
//! the odometry hand-off.

use super::*;
use handoff::{AxisLimits, MotionLimits};

fn limits(acc: f64, dec: f64) -> MotionLimits {
    MotionLimits {
        linear: AxisLimits {
            max_acceleration: acc,
            max_deceleration: dec,
            ..AxisLimits::OFF
        },
        angular: AxisLimits::OFF,
    }
}

fn go(nrt: &mut NrtEnds, linear: f64) {
    let t = Twist2 {
        linear,
        angular: 0.0,
    };
    nrt.nrt_set_cmd_vel(RobotId(0), t).unwrap();
}

/// The targets of the set_speed frames the robot received.
fn speeds(peer: &mut PipeLink) -> Vec<Vec<i16>> {
    received(peer)
        .into_iter()
        .filter(|(k, _)| *k == SET_SPEED)
        .map(|(_, a)| a)
        .collect()
}

#[test]
fn a_set_point_ramps_at_the_acceleration_and_a_zero_one_decelerates() {
    let (mut rt, mut nrt, mut port) = build();
    let mut out = nrt.nrt_take_odometry_out().unwrap();
    let mut peer = attach(&mut rt, &mut port, &mut nrt, 0);
    configure(&mut nrt, &mut rt, 0);
    nrt.nrt_params()
        .nrt_set_motion_limits(RobotId(0), limits(1.0, 2.0))
        .unwrap();
    go(&mut nrt, 0.1);
    // 1 m/s² over 10 ms cycles: +0.01 m/s a cycle (293 units = 0.1 m/s).
    let mut sent = Vec::new();
    for k in 1..=12 {
        rt.cycle(k * 10 * MS);
        sent.extend(speeds(&mut peer));
    }
    let left: Vec<i16> = sent.iter().map(|s| s[0]).collect();
    // One frame a cycle, each 0.01 m/s (29.3 units, rounded) above the last, then the set-point.
    assert_eq!(left.len(), 10, "{left:?}");
    for (k, u) in left.iter().enumerate() {
        assert!(
            (*u as f64 - 29.3 * (k + 1) as f64).abs() <= 0.5 + 1e-6,
            "{left:?}"
        );
    }
    assert_eq!(sent.last(), Some(&vec![293, 293]));
    // The limited twist is handed out with the odometry.
    // (The first odometry event initialises the integrator; the second makes a sample.)
    let mut bytes = event(NODE, ODOMETRY, &[0, 0, 0]);
    bytes.extend(event(NODE, ODOMETRY, &[29, 29, 1]));
    peer.write(&bytes).unwrap();
    rt.cycle(130 * MS);
    let h = out.nrt_pop().unwrap();
    assert!(
        (h.commanded.linear - 0.1).abs() < 1e-12,
        "{:?}",
        h.commanded
    );
    // A zero set-point from the user decelerates at 2 m/s²: −0.02 m/s a cycle.
    go(&mut nrt, 0.0);
    let mut sent = Vec::new();
    for k in 14..=20 {
        rt.cycle(k * 10 * MS);
        sent.extend(speeds(&mut peer));
    }
    let left: Vec<i16> = sent.iter().map(|s| s[0]).collect();
    assert_eq!(left, [234, 176, 117, 59, 0]);
}

#[test]
fn the_watchdog_stop_is_not_slowed() {
    let (mut rt, mut nrt, mut port) = build();
    let mut peer = attach(&mut rt, &mut port, &mut nrt, 0);
    configure(&mut nrt, &mut rt, 0);
    // Slow deceleration: a slowed stop would take 10 s.
    nrt.nrt_params()
        .nrt_set_motion_limits(RobotId(0), limits(f64::NAN, 0.01))
        .unwrap();
    go(&mut nrt, 0.1);
    rt.cycle(10 * MS);
    assert_eq!(speeds(&mut peer), [vec![293, 293]]);
    // The watchdog (0.5 s) expires: zero at once.
    rt.cycle(520 * MS);
    assert_eq!(speeds(&mut peer), [vec![0, 0]]);
    // The next set-point starts from rest (no acceleration limit: at once).
    go(&mut nrt, 0.04);
    rt.cycle(530 * MS);
    assert_eq!(speeds(&mut peer), [vec![117, 117]]);
    // An owner change stops at once as well.
    nrt.nrt_params()
        .nrt_request_owner(RobotId(0), handoff::OwnerId::JOINT)
        .unwrap();
    rt.cycle(540 * MS);
    assert_eq!(speeds(&mut peer), [vec![0, 0]]);
}

#[test]
fn an_obstacle_stop_is_not_slowed_and_the_ramp_resumes_from_rest() {
    use crate::controllers::{ObstacleStop, ObstacleStopParams};
    const PROX: u16 = 3;
    let (rt_ends, mut nrt) = channels(&ChannelConfig {
        robots: 1,
        ..Default::default()
    });
    let (rt_port, mut port) = link_port();
    let reflex = Box::new(ObstacleStop::new(ObstacleStopParams::default()));
    let mut rt = RtLoop::new(
        test_config(),
        rt_ends,
        rt_port,
        RtControllers::none(),
        vec![reflex],
    );
    let mut peer = attach(&mut rt, &mut port, &mut nrt, 0);
    let mut config = RobotConfig::script(NodeId(NODE), ODOMETRY, SET_SPEED, false);
    config.proximity_event = Some(PROX);
    nrt.nrt_push_command(RtCommand::ConfigureRobot {
        robot: RobotId(0),
        config,
    })
    .unwrap();
    rt.cycle(0);
    // Slow deceleration (a slowed stop would take 10 s), no acceleration limit.
    nrt.nrt_params()
        .nrt_set_motion_limits(RobotId(0), limits(f64::NAN, 0.01))
        .unwrap();
    go(&mut nrt, 0.1);
    rt.cycle(10 * MS);
    assert_eq!(speeds(&mut peer), [vec![293, 293]]);
    // Something close in front: the reflex stops the robot at once.
    peer.write(&event(NODE, PROX, &[0, 0, 4000, 0, 0, 0, 0]))
        .unwrap();
    rt.cycle(20 * MS);
    assert_eq!(speeds(&mut peer), [vec![0, 0]]);
    // Now with an acceleration limit: once the way is clear, the robot starts from rest.
    nrt.nrt_params()
        .nrt_set_motion_limits(RobotId(0), limits(1.0, 0.01))
        .unwrap();
    peer.write(&event(NODE, PROX, &[0; 7])).unwrap();
    rt.cycle(30 * MS);
    assert_eq!(speeds(&mut peer), [vec![29, 29]]);
}

#[test]
fn a_cliff_stop_is_not_slowed_and_backing_away_is_allowed() {
    use crate::controllers::{CliffStop, CliffStopParams};
    const GROUND: u16 = 4;
    let (rt_ends, mut nrt) = channels(&ChannelConfig {
        robots: 1,
        ..Default::default()
    });
    let (rt_port, mut port) = link_port();
    let reflex = Box::new(CliffStop::new(CliffStopParams::default()));
    let mut rt = RtLoop::new(
        test_config(),
        rt_ends,
        rt_port,
        RtControllers::none(),
        vec![reflex],
    );
    let mut peer = attach(&mut rt, &mut port, &mut nrt, 0);
    let mut config = RobotConfig::script(NodeId(NODE), ODOMETRY, SET_SPEED, false);
    config.ground_event = Some(GROUND);
    nrt.nrt_push_command(RtCommand::ConfigureRobot {
        robot: RobotId(0),
        config,
    })
    .unwrap();
    rt.cycle(0);
    // Slow deceleration (a slowed stop would take 10 s), no acceleration limit.
    nrt.nrt_params()
        .nrt_set_motion_limits(RobotId(0), limits(f64::NAN, 0.01))
        .unwrap();
    go(&mut nrt, 0.1);
    // Over black tape (delta ≈ 60): driving on.
    peer.write(&event(NODE, GROUND, &[60, 58])).unwrap();
    rt.cycle(10 * MS);
    assert_eq!(speeds(&mut peer), [vec![293, 293]]);
    // The right sensor past the table's edge: stopped at once.
    peer.write(&event(NODE, GROUND, &[900, 4])).unwrap();
    rt.cycle(20 * MS);
    assert_eq!(speeds(&mut peer), [vec![0, 0]]);
    // Backing away is not held.
    go(&mut nrt, -0.1);
    rt.cycle(30 * MS);
    assert_eq!(speeds(&mut peer), [vec![-293, -293]]);
}

/// Issue 42: for both owners with a watchdog (`ros`: cmd_vel, `joint`: joint commands), a zero
/// command the limits still decelerate to (0.01 m/s²: 10 s from 0.1 m/s), then silence: the
/// watchdog (0.5 s) stops the wheels at its deadline, at once. It used to arm only on a
/// non-zero command, and the robot coasted on for seconds with no client.
#[test]
fn the_watchdog_stops_a_zero_command_still_being_decelerated_to_for_every_owner() {
    use handoff::{JointCommand, OwnerId};
    for owner in [OwnerId::ROS, OwnerId::JOINT] {
        let (mut rt, mut nrt, mut port) = build();
        let mut peer = attach(&mut rt, &mut port, &mut nrt, 0);
        configure(&mut nrt, &mut rt, 0);
        let p = nrt.nrt_params().clone();
        p.nrt_set_motion_limits(RobotId(0), limits(f64::NAN, 0.01))
            .unwrap();
        p.nrt_request_owner(RobotId(0), owner).unwrap();
        rt.cycle(MS);
        // 0.1 m/s forward (joint: 0.1 m/s / 0.022 m wheel radius), stamped `t`.
        let command = |nrt: &mut NrtEnds, v: f64, t: u64| {
            if owner == OwnerId::ROS {
                go(nrt, v);
            } else {
                let w = v / 0.022;
                p.nrt_set_joint_command_at(RobotId(0), JointCommand { velocity: [w, w] }, t)
                    .unwrap();
            }
        };
        command(&mut nrt, 0.1, 1);
        rt.cycle(10 * MS);
        let first = speeds(&mut peer);
        assert!(
            first.len() == 1 && (first[0][0] - 293).abs() <= 1,
            "{owner:?}: {first:?}"
        );
        // The zero command at 20 ms, then silence until the deadline at 520 ms.
        command(&mut nrt, 0.0, 2);
        let mut stopped_at = None;
        for k in 2..=100u64 {
            rt.cycle(k * 10 * MS);
            let sent = speeds(&mut peer);
            if sent.contains(&vec![0, 0]) {
                stopped_at = Some(k * 10);
                break;
            }
            // before the deadline the robot decelerates at 0.01 m/s² (≤ 15 units in 0.5 s)
            assert!(sent.iter().all(|s| s[0] > 270), "{owner:?}: {sent:?}");
        }
        // Stopped in the first cycle past the deadline (20 ms + 500 ms), not after 10 s.
        assert_eq!(stopped_at, Some(530), "{owner:?}");
        let ev = events(&mut nrt);
        assert!(
            ev.contains(&RtEvent::WatchdogStop { robot: RobotId(0) }),
            "{owner:?}: {ev:?}"
        );
        // And it stays stopped.
        rt.cycle(1200 * MS);
        assert!(
            speeds(&mut peer).iter().all(|s| s == &vec![0, 0]),
            "{owner:?}"
        );
    }
}
