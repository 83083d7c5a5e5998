//! The hold of a managed driver node that is not active: its wheels stay at zero whatever its owner commands
//! (cmd_vel, joint commands, a controller), at once even under a deceleration limit, and its owner's command goes
//! through again when it is released.

use super::owner::{build_with, configure_prox};
use super::*;
use handoff::{AxisLimits, JointCommand, MotionLimits, OwnerId, RobotId};

fn go(nrt: &mut NrtEnds, linear: f64) {
    let t = Twist2 {
        linear,
        angular: 0.0,
    };
    nrt.nrt_params().nrt_set_cmd_vel(RobotId(0), t).unwrap();
}

/// Whether every speed frame received (if any) is zero.
fn zero(peer: &mut PipeLink) -> bool {
    received(peer)
        .iter()
        .all(|(k, a)| *k != SET_SPEED || a == &vec![0, 0])
}

#[test]
fn a_held_robot_gets_zero_under_every_owner_and_a_release_lets_the_command_through() {
    let (mut rt, mut nrt, mut port, _calls) = build_with([120, 80]);
    let mut peer = attach(&mut rt, &mut port, &mut nrt, 0);
    configure_prox(&mut nrt, &mut rt, 0);
    let p = nrt.nrt_params().clone();
    // A slow deceleration: a slowed stop would take seconds.
    let slow = MotionLimits {
        linear: AxisLimits {
            max_deceleration: 0.01,
            ..AxisLimits::OFF
        },
        angular: AxisLimits::OFF,
    };
    p.nrt_set_motion_limits(RobotId(0), slow).unwrap();
    go(&mut nrt, 0.1);
    rt.cycle(10 * MS);
    assert_eq!(received(&mut peer), [(SET_SPEED, vec![293, 293])]);
    // Held: zero at once, and new set-points do not move it.
    p.nrt_set_held(RobotId(0), true).unwrap();
    rt.cycle(20 * MS);
    assert_eq!(received(&mut peer), [(SET_SPEED, vec![0, 0])]);
    go(&mut nrt, 0.1);
    rt.cycle(30 * MS);
    assert!(zero(&mut peer));
    // Released: the owner's command goes through (from rest: no acceleration limit, at once).
    p.nrt_set_held(RobotId(0), false).unwrap();
    go(&mut nrt, 0.1);
    rt.cycle(40 * MS);
    assert_eq!(received(&mut peer), [(SET_SPEED, vec![293, 293])]);
    // Joint commands are held too.
    p.nrt_request_owner(RobotId(0), OwnerId::JOINT).unwrap();
    rt.cycle(50 * MS);
    received(&mut peer);
    p.nrt_set_held(RobotId(0), true).unwrap();
    p.nrt_set_joint_command_at(
        RobotId(0),
        JointCommand {
            velocity: [5.0, 5.0],
        },
        0,
    )
    .unwrap();
    rt.cycle(60 * MS);
    rt.cycle(70 * MS);
    assert!(zero(&mut peer), "a held joint command moved it");
    // And a controller's raw targets.
    p.nrt_request_owner(RobotId(0), OwnerId::controller(0))
        .unwrap();
    rt.cycle(80 * MS);
    rt.cycle(90 * MS);
    assert!(zero(&mut peer), "a held controller moved it");
    p.nrt_set_held(RobotId(0), false).unwrap();
    rt.cycle(100 * MS);
    assert_eq!(received(&mut peer), [(SET_SPEED, vec![120, 80])]);
}
