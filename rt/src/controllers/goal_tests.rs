//! Tests of the goal controllers: each motion reaching its goal within its limits, and every
//! way a goal ends (cancel, replacement, cliff, obstacle, stall, owner or link lost, bad goal).

use super::go_to_pose::wrap;
use super::goal::GoalController;
use super::{Controller, DriveDistance, Motion, NavigateToPosition, RobotView, RotateAngle};
use handoff::{
    ControllerInit, Goal, GoalAbort, GoalCommand, GoalId, GoalReport, NrtGoalPort, NrtParams,
    Pose2, RobotCalibration, RobotId, Twist2, WheelCommand,
};
use std::f64::consts::PI;

const DT_NS: u64 = 10_000_000;

/// A goal controller on a simulated unicycle robot.
struct Bench<M> {
    c: GoalController<M>,
    port: NrtGoalPort,
    params: NrtParams,
    view: RobotView,
    /// Largest |linear| and |angular| commanded.
    peak: (f64, f64),
    reports: Vec<GoalReport>,
}

impl<M: Motion + std::fmt::Debug> Bench<M> {
    fn new() -> Self {
        let mut init = ControllerInit::new(RobotId(0), M::NAME);
        let (rt, port) = handoff::goal_port();
        let c = GoalController::<M>::new(&mut init, rt).unwrap();
        let params = init.finish_ports().params;
        let view = RobotView {
            now_ns: 1_000_000_000,
            odom_t_ns: Some(1),
            link_up: true,
            calibration: RobotCalibration::default(),
            ..RobotView::default()
        };
        let mut b = Bench {
            c,
            port,
            params,
            view,
            peak: (0.0, 0.0),
            reports: Vec::new(),
        };
        b.c.start(&b.view);
        b
    }

    fn send(&mut self, cmd: GoalCommand) {
        self.port.nrt_send(cmd).unwrap();
    }

    fn goal(&mut self, id: u32, goal: Goal) {
        self.send(GoalCommand::Start {
            id: GoalId(id),
            goal,
        });
    }

    /// One cycle; the robot moves by the command unless `stuck`.
    fn cycle(&mut self, stuck: bool) -> WheelCommand {
        self.c.serve(&self.view, true);
        let cmd = self.c.update(&self.view);
        let t = match cmd {
            WheelCommand::Twist(t) => t,
            _ => Twist2::default(),
        };
        self.peak.0 = self.peak.0.max(t.linear.abs());
        self.peak.1 = self.peak.1.max(t.angular.abs());
        let dt = DT_NS as f64 * 1e-9;
        let v = &mut self.view;
        if !stuck {
            v.pose.theta += t.angular * dt;
            v.pose.x += t.linear * dt * v.pose.theta.cos();
            v.pose.y += t.linear * dt * v.pose.theta.sin();
        }
        let (r, half) = (v.calibration.wheel_radius, v.calibration.axis_length / 2.0);
        let wheels = [t.linear - t.angular * half, t.linear + t.angular * half];
        v.wheel_vel = if stuck {
            [0.0; 2]
        } else {
            wheels.map(|w| w / r)
        };
        // the odometry's wheel angles, as the RT loop integrates them
        for (pos, vel) in v.wheel_pos.iter_mut().zip(v.wheel_vel) {
            *pos += vel * dt;
        }
        v.now_ns += DT_NS;
        v.odom_t_ns = Some(v.now_ns);
        while let Some(rep) = self.port.nrt_next_report() {
            self.reports.push(rep);
        }
        cmd
    }

    /// Runs until a final report (at most `max` cycles); returns it.
    fn run(&mut self, max: usize) -> GoalReport {
        for _ in 0..max {
            self.cycle(false);
            if let Some(last) = self.reports.iter().rev().find(|r| r.is_final()) {
                return *last;
            }
        }
        panic!("no end after {max} cycles: {:?}", self.reports.last());
    }

    fn feedback(&self) -> Vec<f64> {
        let it = self.reports.iter();
        it.filter_map(|r| match r {
            GoalReport::Feedback { remaining, .. } => Some(*remaining),
            _ => None,
        })
        .collect()
    }
}

fn drive(distance: f64, max: f64) -> Goal {
    Goal::DriveDistance {
        distance,
        max_translation_speed: max,
    }
}

fn rotate(angle: f64, max: f64) -> Goal {
    Goal::RotateAngle {
        angle,
        max_rotation_speed: max,
    }
}

#[test]
fn drive_distance_reaches_its_goal_forward_and_back_within_the_speed_limit() {
    for (d, theta) in [(0.3, 0.7), (-0.2, -2.0)] {
        let mut b = Bench::<DriveDistance>::new();
        b.view.pose = Pose2 {
            x: 1.0,
            y: -1.0,
            theta,
        };
        b.goal(7, drive(d, 0.05));
        let end = b.run(3000);
        let GoalReport::Succeeded { id, pose } = end else {
            panic!("{end:?}")
        };
        assert_eq!(id, GoalId(7));
        assert_eq!(b.reports[0], GoalReport::Started { id: GoalId(7) });
        let travelled = (pose.x - 1.0).hypot(pose.y + 1.0);
        assert!((travelled - d.abs()).abs() <= 0.005, "{pose:?}");
        assert!(
            wrap(pose.theta - theta).abs() < 1e-6,
            "heading held: {pose:?}"
        );
        assert!(b.peak.0 <= 0.05 + 1e-12, "speed limit: {:?}", b.peak);
        let fb = b.feedback();
        assert!(
            fb.len() > 10 && fb.windows(2).all(|w| w[1] <= w[0]),
            "{fb:?}"
        );
        assert!((fb[0] - d.abs()).abs() < 1e-9);
        assert_eq!(b.cycle(false), WheelCommand::Stop, "stopped after");
    }
}

#[test]
fn a_goal_speed_above_the_parameter_is_capped_and_zero_means_the_parameter() {
    let mut b = Bench::<DriveDistance>::new();
    b.params.nrt_set("max_translation_speed", 0.08).unwrap();
    b.goal(1, drive(0.5, 5.0));
    b.run(3000);
    assert!((b.peak.0 - 0.08).abs() < 1e-12, "{:?}", b.peak);
    let mut b = Bench::<DriveDistance>::new();
    b.goal(1, drive(0.5, 0.0));
    b.run(3000);
    assert!((b.peak.0 - 0.1).abs() < 1e-12, "the default: {:?}", b.peak);
}

#[test]
fn rotate_angle_turns_more_than_a_turn_both_ways() {
    for angle in [2.0 * PI + 1.0, -1.0] {
        let mut b = Bench::<RotateAngle>::new();
        b.view.pose.theta = 3.0;
        b.goal(
            2,
            Goal::RotateAngle {
                angle,
                max_rotation_speed: 0.8,
            },
        );
        let GoalReport::Succeeded { pose, .. } = b.run(5000) else {
            panic!("{:?}", b.reports)
        };
        assert!((pose.theta - 3.0 - angle).abs() <= 0.02, "{pose:?}");
        assert!((pose.x, pose.y) == (0.0, 0.0), "in place");
        assert!((b.peak.1 - 0.8).abs() < 1e-12, "{:?}", b.peak);
        assert!(b.feedback()[0] > angle.abs() - 1e-9);
    }
}

#[test]
fn navigate_to_position_reaches_the_pose_and_its_heading_only_if_asked() {
    for heading in [true, false] {
        let mut b = Bench::<NavigateToPosition>::new();
        let target = Pose2 {
            x: -0.3,
            y: 0.4,
            theta: -PI / 2.0,
        };
        b.goal(
            3,
            Goal::NavigateToPosition {
                pose: target,
                achieve_goal_heading: heading,
                max_translation_speed: 0.06,
                max_rotation_speed: 0.0,
            },
        );
        let GoalReport::Succeeded { pose, .. } = b.run(5000) else {
            panic!("{:?}", b.reports)
        };
        assert!(
            (pose.x - target.x).hypot(pose.y - target.y) <= 0.02,
            "{pose:?}"
        );
        let off = wrap(pose.theta - target.theta).abs();
        assert_eq!(off <= 0.05, heading, "{pose:?}");
        assert!(
            b.peak.0 <= 0.06 + 1e-12 && b.peak.1 <= 1.5 + 1e-12,
            "{:?}",
            b.peak
        );
    }
}

#[test]
fn a_cliff_or_an_obstacle_held_robot_aborts_the_goal_and_stops() {
    for cliff in [true, false] {
        let mut b = Bench::<DriveDistance>::new();
        b.goal(4, drive(1.0, 0.0));
        for _ in 0..20 {
            assert!(matches!(b.cycle(false), WheelCommand::Twist(_)));
        }
        if cliff {
            b.view.reflexes.cliff = true;
        } else {
            b.view.reflexes.obstacle = true;
        }
        assert_eq!(b.cycle(false), WheelCommand::Stop);
        let want = if cliff {
            GoalAbort::Cliff
        } else {
            GoalAbort::Obstacle
        };
        assert!(
            matches!(b.reports.last(), Some(GoalReport::Aborted { id: GoalId(4), reason, .. }) if *reason == want),
            "{:?}",
            b.reports
        );
        b.view.reflexes = Default::default();
        assert_eq!(b.cycle(false), WheelCommand::Stop, "stays stopped");
        assert!(b.c.running().is_none());
    }
}

#[test]
fn wheels_that_do_not_move_while_commanded_abort_on_a_stall_after_the_timeout() {
    let mut b = Bench::<RotateAngle>::new();
    b.params.nrt_set("stall_timeout", 0.5).unwrap();
    b.goal(
        5,
        Goal::RotateAngle {
            angle: 3.0,
            max_rotation_speed: 0.0,
        },
    );
    // stuck for 0.4 s: still trying; moving again resets the timer
    for _ in 0..40 {
        assert!(matches!(b.cycle(true), WheelCommand::Twist(_)));
    }
    b.cycle(false);
    for _ in 0..45 {
        assert!(matches!(b.cycle(true), WheelCommand::Twist(_)));
    }
    let mut stopped = 0;
    for _ in 0..20 {
        stopped += usize::from(b.cycle(true) == WheelCommand::Stop);
    }
    assert!(stopped > 0, "{:?}", b.reports.last());
    assert!(matches!(
        b.reports.last(),
        Some(GoalReport::Aborted {
            reason: GoalAbort::Stall,
            ..
        })
    ));
}

#[test]
fn cancel_and_a_replacing_goal_end_the_running_goal_as_canceled() {
    let mut b = Bench::<DriveDistance>::new();
    b.goal(1, drive(1.0, 0.0));
    b.cycle(false);
    b.send(GoalCommand::Cancel { id: GoalId(9) }); // not the running goal: ignored
    b.cycle(false);
    assert!(b.c.running() == Some(GoalId(1)));
    b.goal(2, drive(1.0, 0.0));
    b.cycle(false);
    b.send(GoalCommand::Cancel { id: GoalId(2) });
    assert_eq!(b.cycle(false), WheelCommand::Stop);
    let kinds: Vec<_> = b
        .reports
        .iter()
        .filter(|r| !matches!(r, GoalReport::Feedback { .. }))
        .map(|r| (r.id().0, r.is_final()))
        .collect();
    assert_eq!(kinds, [(1, false), (1, true), (2, false), (2, true)]);
    assert!(matches!(
        b.reports.last(),
        Some(GoalReport::Canceled { .. })
    ));
}

#[test]
fn a_goal_of_another_kind_or_not_finite_is_aborted_as_bad() {
    let mut b = Bench::<RotateAngle>::new();
    b.goal(1, drive(0.1, 0.0));
    b.goal(
        2,
        Goal::RotateAngle {
            angle: f64::NAN,
            max_rotation_speed: 1.0,
        },
    );
    assert_eq!(b.cycle(false), WheelCommand::Stop);
    let mut b2 = Bench::<NavigateToPosition>::new();
    b2.goal(
        3,
        Goal::NavigateToPosition {
            pose: Pose2 {
                x: 1e9,
                ..Pose2::default()
            },
            achieve_goal_heading: false,
            max_translation_speed: 0.0,
            max_rotation_speed: 0.0,
        },
    );
    assert_eq!(b2.cycle(false), WheelCommand::Stop);
    let ends: Vec<_> = b.reports.iter().chain(&b2.reports).copied().collect();
    assert!(
        matches!(ends[0], GoalReport::Canceled { id: GoalId(1), .. }),
        "{ends:?}"
    );
    for (e, id) in ends[1..].iter().zip([2, 3]) {
        assert!(
            matches!(e, GoalReport::Aborted { id: i, reason: GoalAbort::BadGoal, .. } if i.0 == id),
            "{ends:?}"
        );
    }
}

#[test]
fn losing_the_wheels_or_the_link_aborts_and_a_goal_waits_for_odometry() {
    for link in [true, false] {
        let mut b = Bench::<DriveDistance>::new();
        b.view.odom_t_ns = None;
        b.goal(1, drive(1.0, 0.0));
        b.c.serve(&b.view, true);
        assert_eq!(b.c.update(&b.view), WheelCommand::Stop, "no odometry yet");
        assert!(b.port.nrt_next_report().is_none());
        b.view.odom_t_ns = Some(1);
        b.cycle(false);
        b.view.link_up = link;
        b.c.stop(&b.view);
        let want = if link {
            GoalAbort::OwnerLost
        } else {
            GoalAbort::LinkLost
        };
        let last = std::iter::from_fn(|| b.port.nrt_next_report()).last();
        assert!(
            matches!(last, Some(GoalReport::Aborted { reason, .. }) if reason == want),
            "{last:?}"
        );
    }
}

#[test]
fn the_shipped_goal_controllers_declare_a_goal_port() {
    let (_, nrt) = super::Registry::shipped().instantiate(1).unwrap();
    for name in ["drive_distance", "rotate_angle", "navigate_to_position"] {
        let p = nrt.ports.iter().find(|p| p.controller == name).unwrap();
        let private = p.private.as_ref().map(|p| p.0.is::<NrtGoalPort>());
        assert_eq!(private, Some(true), "{name}");
        assert_eq!(p.params.get("stall_timeout"), Some(1.0), "{name}");
    }
}

/// The red team's case: the odometry's origin so far away that a double's step (16 m at 1e17)
/// swallows every move, so the pose never changes while the wheels turn. Progress is the wheels'
/// travel since the start, so the goals end all the same; and as at a far but allowed origin.
#[test]
fn progress_is_measured_from_the_start_whatever_the_odometry_origin() {
    for origin in [1e4, -1e4, 1e17] {
        let far = Pose2 {
            x: origin,
            y: -origin,
            theta: 0.3,
        };
        let mut b = Bench::<DriveDistance>::new();
        b.view.pose = far;
        b.goal(1, drive(0.05, 0.05));
        let end = b.run(3000);
        assert!(
            matches!(end, GoalReport::Succeeded { .. }),
            "{origin}: {end:?}"
        );
        // the wheels went 5 cm (each wheel: radius × angle)
        let r = b.view.calibration.wheel_radius;
        let went = (b.view.wheel_pos[0] + b.view.wheel_pos[1]) / 2.0 * r;
        assert!((went - 0.05).abs() <= 0.005, "{origin}: drove {went} m");
        let mut b = Bench::<RotateAngle>::new();
        b.view.pose = far;
        b.goal(2, rotate(-1.5, 1.0));
        let end = b.run(3000);
        assert!(
            matches!(end, GoalReport::Succeeded { .. }),
            "{origin}: {end:?}"
        );
        let axis = b.view.calibration.axis_length;
        let turned = (b.view.wheel_pos[1] - b.view.wheel_pos[0]) * r / axis;
        assert!(
            (turned + 1.5).abs() <= 0.03,
            "{origin}: turned {turned} rad"
        );
    }
}

/// Speed limits not finite, negative or too slow to move the robot, and a target beyond the
/// odometry frame's range, are bad goals: the robot never moves for them.
#[test]
fn speed_limits_not_finite_and_positive_and_far_targets_are_bad_goals() {
    let nav = |x: f64, v: f64, w: f64| Goal::NavigateToPosition {
        pose: Pose2 {
            x,
            ..Pose2::default()
        },
        achieve_goal_heading: false,
        max_translation_speed: v,
        max_rotation_speed: w,
    };
    let mut drives = Bench::<DriveDistance>::new();
    let mut turns = Bench::<RotateAngle>::new();
    let mut navs = Bench::<NavigateToPosition>::new();
    // a robot already far away (as the red team's set_odometry left it): a goal next to it
    navs.view.pose.x = 1e17;
    for (k, v) in [f64::NAN, f64::INFINITY, -0.1, 1e-300]
        .into_iter()
        .enumerate()
    {
        let id = k as u32 + 1;
        drives.goal(id, drive(0.05, v));
        assert_eq!(drives.cycle(false), WheelCommand::Stop, "{v}");
        turns.goal(id, rotate(1.0, v));
        assert_eq!(turns.cycle(false), WheelCommand::Stop, "{v}");
        navs.goal(id, nav(1e17 + 1.0, 0.0, v));
        assert_eq!(navs.cycle(false), WheelCommand::Stop, "{v}");
    }
    for b in [&drives.reports, &turns.reports, &navs.reports] {
        assert_eq!(b.len(), 4, "{b:?}");
        assert!(
            b.iter().all(|r| matches!(
                r,
                GoalReport::Aborted {
                    reason: GoalAbort::BadGoal,
                    ..
                }
            )),
            "{b:?}"
        );
    }
}
