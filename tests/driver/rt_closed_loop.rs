//! The RT controllers in closed loop, without ROS and in simulated time: the RT loop (every
//! shipped controller, the obstacle and cliff reflexes) drives a simulated Thymio-II running the driver
//! script (`config/aseba/thymio_ros.aesl`, compiled by thymio-rt's compiler) through an
//! in-process link; the world is stepped by hand (1 ms) and the loop cycled after each step,
//! so a minute of robot time takes seconds. The judge is the simulator's true pose.

use handoff::{
    channels, ChannelConfig, Doorbell, JointCommand, LinkTarget, NodeId, NrtControl, NrtEndpoint,
    NrtEnds, OwnerId, Pose2, RobotConfig, RobotId, RosValue, RtEvent, Twist2,
};
use handoff::{Goal, GoalAbort, GoalCommand, GoalId, GoalReport, NrtGoalPort};
use msgs::description::thymio_ii_fw14;
use msgs::wire::{Message, Words, MAX_FRAME};
use rt::controllers::{CliffStop, CliffStopParams, ObstacleStop, ObstacleStopParams, Registry};
use rt::link::PipeLink;
use rt::link_port::{link_port, NrtLinkPort};
use rt::rtloop::{RtConfig, RtLoop};
use rt::sched::RtSetup;
use sim::thymio::Arena;
use sim::world::{World, WorldConfig};
use std::f64::consts::PI;
use std::path::Path;
use std::time::Duration;

const MS: u64 = 1_000_000;
/// RT time of simulated time 0 (any positive origin).
const T0: u64 = 1_000 * MS;
const LINE_FOLLOWER: OwnerId = OwnerId::controller(0);
const GO_TO_POSE: OwnerId = OwnerId::controller(1);

/// A simulated robot driven by the RT loop, stepped together.
struct Rig {
    world: World,
    rt: RtLoop,
    nrt: NrtEnds,
    control: NrtControl,
    events: Vec<RtEvent>,
    /// The connector's end of the link port (the loop hands the link back there at the end).
    _port: NrtLinkPort,
}

fn repo(p: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(p)
        .display()
        .to_string()
}

impl Rig {
    fn new(arena: Arena) -> Rig {
        let mut world = World::new(&WorldConfig {
            arena,
            realtime: false,
            ..WorldConfig::default()
        });
        let readable = Doorbell::new();
        let bell = readable.clone();
        let (host_tx, host_rx) = world.attach_rung(vec![0], 1 << 16, move || bell.ring());
        let (rt_ends, nrt) = channels(&ChannelConfig {
            robots: 2,
            ..Default::default()
        });
        let (rt_port, mut port) = link_port();
        port.nrt_offer(
            0,
            Box::new(PipeLink::with_doorbells(host_tx, host_rx, readable, None)),
        )
        .unwrap();
        let (controllers, control) = Registry::shipped().instantiate(2).unwrap();
        let cfg = RtConfig {
            period: Duration::from_millis(10),
            stats_period: Duration::from_secs(3600),
            speed_refresh: Duration::from_millis(100),
            honor_signals: false,
            setup: RtSetup::unprivileged(),
            ..Default::default()
        };
        let reflex = Box::new(ObstacleStop::new(ObstacleStopParams::default()));
        let cliff = Box::new(CliffStop::new(CliffStopParams::default()));
        let rt = RtLoop::new(cfg, rt_ends, rt_port, controllers, vec![reflex, cliff]);
        let mut rig = Rig {
            world,
            rt,
            nrt,
            control,
            events: Vec::new(),
            _port: port,
        };
        rig.load_driver_script();
        rig
    }

    fn now(&self) -> u64 {
        T0 + self.world.time_ms * MS
    }

    /// Steps the world and the loop `ms` times (1 ms each).
    fn run(&mut self, ms: u64) {
        for _ in 0..ms {
            self.world.step();
            let now = self.now();
            self.rt.cycle(now);
            self.nrt.nrt_drain_frames(|_| {});
            while let Some(e) = self.nrt.nrt_pop_event() {
                if matches!(e, RtEvent::Owner { .. } | RtEvent::WatchdogStop { .. }) {
                    self.events.push(e);
                }
            }
        }
    }

    fn send(&mut self, m: Message<'_>) {
        let mut out = [0u8; MAX_FRAME];
        let n = m.encode(0, &mut out).unwrap();
        self.nrt.nrt_push_frame(LinkTarget::All, &out[..n]).unwrap();
        self.run(2);
    }

    /// Compiles and loads the driver script, then drives the robot from the RT loop.
    fn load_driver_script(&mut self) {
        let text = std::fs::read_to_string(repo("config/aseba/thymio_ros.aesl")).unwrap();
        let aesl = nrt_compiler::parse_aesl(&text).unwrap();
        let fw = thymio_ii_fw14();
        let code = aesl.source_for("thymio-II", 1).unwrap();
        let program =
            nrt_compiler::compile(&code.code, &fw, &aesl.events, &aesl.constants).unwrap();
        let words: Vec<i16> = program.bytecode.iter().map(|w| *w as i16).collect();
        for (i, chunk) in words.chunks(200).enumerate() {
            self.send(Message::SetBytecode {
                dest: 1,
                start: (i * 200) as u16,
                words: Words::from_slice(chunk),
            });
        }
        self.send(Message::Run { dest: 1 });
        let event = |name: &str| {
            aesl.events
                .iter()
                .position(|e| e.name == name)
                .map(|i| i as u16)
        };
        let mut config = RobotConfig::script(
            NodeId(1),
            event("odometry").unwrap(),
            event("set_speed").unwrap(),
            false,
        );
        config.proximity_event = event("proximity");
        config.ground_event = event("ground");
        config.motor_targets = fw.variable("motor.left.target").map(|v| v.address);
        self.nrt
            .nrt_push_command(handoff::RtCommand::ConfigureRobot {
                robot: RobotId(0),
                config,
            })
            .unwrap();
        self.run(300);
    }

    fn owner(&mut self, owner: OwnerId) {
        self.nrt
            .nrt_params()
            .nrt_request_owner(RobotId(0), owner)
            .unwrap();
        self.run(20);
    }

    /// The true pose.
    fn pose(&self) -> Pose2 {
        let p = self.world.robots[0].pose;
        Pose2 {
            x: p.x,
            y: p.y,
            theta: p.theta,
        }
    }

    fn set_param(&mut self, controller: &str, name: &str, value: f64) {
        let port = self
            .control
            .ports
            .iter_mut()
            .find(|p| p.robot == RobotId(0) && p.controller == controller)
            .unwrap();
        port.params.nrt_set(name, value).unwrap();
    }

    fn endpoint(&mut self, controller: &str, name: &str) -> &mut NrtEndpoint {
        let port = self
            .control
            .ports
            .iter_mut()
            .find(|p| p.robot == RobotId(0) && p.controller == controller)
            .unwrap();
        port.endpoints
            .iter_mut()
            .find(|e| e.name() == name)
            .unwrap()
    }

    fn cmd_vel(&mut self, linear: f64, angular: f64) {
        self.nrt
            .nrt_params()
            .nrt_set_cmd_vel(RobotId(0), Twist2 { linear, angular })
            .unwrap();
    }

    /// `(owner, dropped)` of the owner reports so far.
    fn owners(&self) -> Vec<(OwnerId, u32)> {
        self.events
            .iter()
            .filter_map(|e| match e {
                RtEvent::Owner { owner, dropped, .. } => Some((*owner, *dropped)),
                _ => None,
            })
            .collect()
    }
}

/// Distance of `(x, y)` from the line track's centre line (a rounded rectangle: the points at
/// 0.2 m from the square [0.6, 1.4]²).
fn off_track(x: f64, y: f64) -> f64 {
    let dx = (0.6 - x).max(x - 1.4).max(0.0);
    let dy = (0.6 - y).max(y - 1.4).max(0.0);
    (dx.hypot(dy) - 0.2).abs()
}

/// Follows the line track with the line follower: returns the angle travelled around the
/// track's centre (rad) and the largest distance of the robot from the line.
fn line_lap(kp: f64, seconds: u64) -> (f64, f64) {
    let arena = Arena::load(Path::new(&repo("config/arena/line.yaml"))).unwrap();
    let mut rig = Rig::new(arena);
    rig.set_param("line_follower", "kp", kp);
    rig.owner(LINE_FOLLOWER);
    let angle = |p: Pose2| (p.y - 1.0).atan2(p.x - 1.0);
    let (mut travelled, mut last, mut worst) = (0.0, angle(rig.pose()), 0.0f64);
    for _ in 0..seconds * 10 {
        rig.run(100);
        let p = rig.pose();
        let a = angle(p);
        let mut d = a - last;
        if d > PI {
            d -= 2.0 * PI;
        } else if d < -PI {
            d += 2.0 * PI;
        }
        travelled += d;
        last = a;
        worst = worst.max(off_track(p.x, p.y));
        if travelled >= 2.0 * PI + 0.2 {
            break;
        }
    }
    eprintln!(
        "kp {kp}: {travelled:.2} rad, {worst:.3} m off, {} ms",
        rig.world.time_ms
    );
    (travelled, worst)
}

#[test]
fn the_line_follower_completes_a_lap_of_the_line_track() {
    // 4.46 m at 5 cm/s: 90 s of robot time, and some margin.
    let (travelled, worst) = line_lap(1.2, 150);
    assert!(
        travelled >= 2.0 * PI,
        "went {travelled:.2} rad around the track"
    );
    // On the line all along: the sensors are 2.3 cm apart on a 5 cm line (stop-and-search
    // progress without steering strays 3.5 cm).
    assert!(worst < 0.025, "left the line by {worst:.3} m");
}

#[test]
fn without_steering_the_line_follower_does_not_complete_the_track() {
    // The lap test's failure mode: no steering gain, no lap on the line (the bounded search
    // alone drags the robot around, off the line at every corner).
    let (travelled, worst) = line_lap(0.0, 150);
    assert!(
        travelled < 2.0 * PI || worst >= 0.025,
        "{travelled:.2} rad, {worst:.3} m"
    );
}

/// Drives to `goal` (odometry frame = the start pose) with go_to_pose; returns the true pose
/// in the start frame after `seconds`.
fn go_to(goal: Pose2, gains: f64, seconds: u64) -> (Pose2, Rig) {
    let mut rig = Rig::new(Arena::default());
    let start = rig.pose();
    rig.set_param("go_to_pose", "k_linear", gains);
    rig.set_param("go_to_pose", "k_angular", 3.0 * gains);
    rig.owner(GO_TO_POSE);
    let NrtEndpoint::Service { nrt: client, .. } = rig.endpoint("go_to_pose", "set_goal") else {
        panic!("set_goal is a service")
    };
    client.nrt_call(RosValue::Pose2D(goal)).unwrap();
    rig.run(seconds * 1000);
    let p = rig.pose();
    let (c, s) = (start.theta.cos(), start.theta.sin());
    let (dx, dy) = (p.x - start.x, p.y - start.y);
    (
        Pose2 {
            x: c * dx + s * dy,
            y: -s * dx + c * dy,
            theta: p.theta - start.theta,
        },
        rig,
    )
}

fn heading_error(a: f64, b: f64) -> f64 {
    ((a - b + PI).rem_euclid(2.0 * PI) - PI).abs()
}

#[test]
fn go_to_pose_reaches_its_goal_and_holds_still() {
    let goal = Pose2 {
        x: 0.25,
        y: 0.15,
        theta: PI / 2.0,
    };
    let (p, mut rig) = go_to(goal, 1.0, 15);
    // Odometry against the true pose: a few cm and degrees of slip on top of the tolerances.
    assert!((p.x - goal.x).hypot(p.y - goal.y) < 0.05, "{p:?}");
    assert!(heading_error(p.theta, goal.theta) < 0.15, "{p:?}");
    let NrtEndpoint::Publisher { nrt: reached, .. } = rig.endpoint("go_to_pose", "reached") else {
        panic!("reached is a publisher")
    };
    let mut got = Vec::new();
    reached.nrt_drain(|v| got.push(v));
    assert_eq!(got.last(), Some(&RosValue::Bool(true)), "{got:?}");
    // It holds zero.
    let before = rig.pose();
    rig.run(2000);
    let after = rig.pose();
    assert!((after.x - before.x).hypot(after.y - before.y) < 1e-3);
    assert_eq!(rig.world.robots[0].targets, [0, 0]);
}

#[test]
fn go_to_pose_without_gains_does_not_get_there() {
    let goal = Pose2 {
        x: 0.25,
        y: 0.15,
        theta: PI / 2.0,
    };
    let (p, _) = go_to(goal, 0.0, 5);
    assert!((p.x - goal.x).hypot(p.y - goal.y) > 0.2, "{p:?}");
}

#[test]
fn cmd_vel_is_dropped_while_a_controller_owns_the_wheels_and_joint_commands_move_them() {
    let mut rig = Rig::new(Arena::default());
    // ros owns: cmd_vel moves the robot.
    let p0 = rig.pose();
    for _ in 0..10 {
        rig.cmd_vel(0.05, 0.0);
        rig.run(100);
    }
    let p1 = rig.pose();
    let moved = (p1.x - p0.x).hypot(p1.y - p0.y);
    assert!((0.035..0.065).contains(&moved), "{moved}");
    // go_to_pose owns (no goal: it holds zero): cmd_vel is dropped and counted.
    rig.owner(GO_TO_POSE);
    rig.run(500);
    let p2 = rig.pose();
    for _ in 0..10 {
        rig.cmd_vel(0.05, 0.0);
        rig.run(100);
    }
    let p3 = rig.pose();
    assert!(
        (p3.x - p2.x).hypot(p3.y - p2.y) < 1e-3,
        "moved while not the owner"
    );
    let (owner, dropped) = *rig.owners().last().unwrap();
    assert_eq!((owner, dropped), (GO_TO_POSE, 10));
    // joint owns: wheel velocities move it (3 rad/s × 22 mm = 6.6 cm/s for 1 s); a cmd_vel
    // is dropped.
    rig.owner(OwnerId::JOINT);
    let p4 = rig.pose();
    for _ in 0..10 {
        rig.nrt
            .nrt_params()
            .nrt_set_joint_command_at(
                RobotId(0),
                JointCommand {
                    velocity: [3.0, 3.0],
                },
                rig.now(),
            )
            .unwrap();
        rig.cmd_vel(0.0, 2.0);
        rig.run(100);
    }
    let p5 = rig.pose();
    let moved = (p5.x - p4.x).hypot(p5.y - p4.y);
    assert!((0.045..0.08).contains(&moved), "{moved}");
    assert!(
        heading_error(p5.theta, p4.theta) < 0.05,
        "the dropped cmd_vel turned it"
    );
    // The joint watchdog stops it once commands stop coming.
    rig.run(1500);
    assert_eq!(rig.world.robots[0].targets, [0, 0]);
    // Back to ros.
    rig.owner(OwnerId::ROS);
    let p6 = rig.pose();
    for _ in 0..10 {
        rig.cmd_vel(0.05, 0.0);
        rig.run(100);
    }
    let p7 = rig.pose();
    assert!((p7.x - p6.x).hypot(p7.y - p6.y) > 0.035);
}

/// The goal controllers' owner ids (registry order) and names.
const GOALS: [(OwnerId, &str); 3] = [
    (OwnerId::controller(3), "drive_distance"),
    (OwnerId::controller(4), "rotate_angle"),
    (OwnerId::controller(5), "navigate_to_position"),
];

/// Runs `goal` with goal controller `k` (as the goal action does: the goal, then the owner) until
/// it ends or `seconds` pass; its final report and the true pose in the start frame.
fn run_goal(rig: &mut Rig, k: usize, goal: Goal, seconds: u64) -> (Option<GoalReport>, Pose2) {
    let (owner, name) = GOALS[k];
    let mut port = rig
        .control
        .ports
        .iter_mut()
        .find(|p| p.robot == RobotId(0) && p.controller == name)
        .and_then(|p| p.private.take())
        .and_then(|p| p.0.downcast::<NrtGoalPort>().ok())
        .expect("a goal port");
    let start = rig.pose();
    port.nrt_send(GoalCommand::Start {
        id: GoalId(7),
        goal,
    })
    .unwrap();
    rig.owner(owner);
    let mut end = None;
    for _ in 0..seconds * 10 {
        rig.run(100);
        while let Some(r) = port.nrt_next_report() {
            if r.is_final() {
                end = Some(r);
            }
        }
        if end.is_some() {
            break;
        }
    }
    let p = rig.pose();
    let (c, s) = (start.theta.cos(), start.theta.sin());
    let (dx, dy) = (p.x - start.x, p.y - start.y);
    let rel = Pose2 {
        x: c * dx + s * dy,
        y: -s * dx + c * dy,
        theta: p.theta - start.theta,
    };
    (end, rel)
}

#[test]
fn each_goal_controller_reaches_its_goal_on_the_simulated_robot() {
    let mut rig = Rig::new(Arena::default());
    // the odometry frame: where the robot stood when it was first driven
    let origin = rig.pose();
    let drive = Goal::DriveDistance {
        distance: 0.2,
        max_translation_speed: 0.08,
    };
    let (end, p) = run_goal(&mut rig, 0, drive, 20);
    assert!(matches!(end, Some(GoalReport::Succeeded { .. })), "{end:?}");
    // odometry against the true pose: a few mm of slip on top of the tolerance
    assert!((p.x - 0.2).abs() < 0.015 && p.y.abs() < 0.01, "{p:?}");
    let rotate = Goal::RotateAngle {
        angle: -PI / 2.0,
        max_rotation_speed: 1.0,
    };
    let (end, p) = run_goal(&mut rig, 1, rotate, 20);
    assert!(matches!(end, Some(GoalReport::Succeeded { .. })), "{end:?}");
    assert!(heading_error(p.theta, -PI / 2.0) < 0.06, "{p:?}");
    assert!(p.x.hypot(p.y) < 0.01, "in place: {p:?}");
    let target = Pose2 {
        x: 0.15,
        y: 0.1,
        theta: PI,
    };
    let (end, _) = run_goal(
        &mut rig,
        2,
        Goal::NavigateToPosition {
            pose: target,
            achieve_goal_heading: true,
            max_translation_speed: 0.0,
            max_rotation_speed: 0.0,
        },
        30,
    );
    let Some(GoalReport::Succeeded { pose, .. }) = end else {
        panic!("{end:?}")
    };
    assert!(
        (pose.x - target.x).hypot(pose.y - target.y) <= 0.02,
        "odometry: {pose:?}"
    );
    let t = rig.pose();
    let (c, s) = (origin.theta.cos(), origin.theta.sin());
    let (dx, dy) = (t.x - origin.x, t.y - origin.y);
    let (x, y) = (c * dx + s * dy, -s * dx + c * dy);
    // the true pose: odometry's slip over the three goals on top of the tolerances
    assert!((x - target.x).hypot(y - target.y) < 0.05, "true {t:?}");
    assert!(
        heading_error(t.theta - origin.theta, PI) < 0.15,
        "true {t:?}"
    );
    assert_eq!(rig.world.robots[0].targets, [0, 0], "stopped at the end");
}

#[test]
fn a_drive_off_the_table_is_aborted_by_the_cliff_reflex_before_the_edge() {
    let arena = Arena::load(Path::new(&repo("config/arena/table.yaml"))).unwrap();
    let mut rig = Rig::new(arena);
    let drive = Goal::DriveDistance {
        distance: 2.0,
        max_translation_speed: 0.1,
    };
    let (end, _) = run_goal(&mut rig, 0, drive, 30);
    assert!(
        matches!(
            end,
            Some(GoalReport::Aborted {
                reason: GoalAbort::Cliff,
                ..
            })
        ),
        "{end:?}"
    );
    // the table's east edge is at x = 1.2; the robot starts at 0.3
    let x = rig.pose().x;
    assert!(1.0 < x && x < 1.19, "stopped at x = {x}");
    rig.run(1000);
    assert!(
        (rig.pose().x - x).abs() < 0.005,
        "held still after the abort"
    );
    assert_eq!(rig.world.robots[0].targets, [0, 0]);
}

#[test]
fn a_drive_toward_a_wall_is_aborted_by_the_obstacle_stop() {
    let mut rig = Rig::new(Arena::default());
    let drive = Goal::DriveDistance {
        distance: 3.0,
        max_translation_speed: 0.1,
    };
    let (end, p) = run_goal(&mut rig, 0, drive, 40);
    assert!(
        matches!(
            end,
            Some(GoalReport::Aborted {
                reason: GoalAbort::Obstacle,
                ..
            })
        ),
        "{end:?}"
    );
    assert!(
        p.x > 0.5 && p.x < 1.0,
        "stopped {p:?} before the wall 1 m ahead"
    );
}
