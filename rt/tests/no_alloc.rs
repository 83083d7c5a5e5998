//! Proof of the RT loop's budget: 10^6 free-running cycles against an in-process link fed with
//! a typical frame mix (odometry, proximity, variable replies, garbage to resynchronise on),
//! with an NRT side draining frames and events, changing set-points and sending frames, and
//! with filters using every ROS-from-RT hand-off and every shipped controller (line follower,
//! go-to-pose, calibrate_motors with runs, aborts and owner losses, the goal controllers
//! drive_distance / rotate_angle / navigate_to_position with goals, cancels and ends) owning the robot in turn with the joint command path — owners switched, goals,
//! parameters, joint commands and cmd_vel arriving, joint states and controller topics flowing
//! out. After warm-up: 0 allocations and 0 page faults on the RT thread (counting global
//! allocator; getrusage(RUSAGE_THREAD)).
//!
//! A user controller registered beside the shipped ones (`user_echo`, below) owns the robot in
//! turn too: its endpoints of ROS types of its own choosing (a message publisher, subscriber and
//! service, converted on the NRT side) carry fixed-size values through the counted section.
//!
//! Motion limits are on throughout (every kind on both axes, changed while the loop runs), so
//! the speed limiter runs on every owner's command in the counted section.
//!
//! A controller over its budget is stopped again and again (its stop, the owner change and the
//! report of it) without allocation or page fault either.
//!
//! The same in the waiting loop: a 20 ms period with the robot writing every millisecond and
//! set-points arriving between deadlines, so that nearly all the work happens in I/O wake-ups
//! (link readable, NRT wake fd rung, a held-back change's timer).

use handoff::{
    channels, ChannelConfig, ExitReason, LinkId, LinkTarget, NodeId, RobotConfig, RobotId,
    RtCommand, RtEvent, Twist2, WheelCommand,
};
use handoff::{latest, publisher, service, RtPublisher, RtServiceServer};
use handoff::{monotonic_ns, JointCommand, NrtEndpoint, OwnerId, Pose2, RosValue};
use handoff::{AxisLimits, CalCommand, MotionLimits, NrtCalibrationPort, Wheel, WheelRun};
use handoff::{Goal, GoalCommand, GoalId, GoalReport, NrtGoalPort};
use handoff::{MsgCtx, NrtMessagePort};
use msgs::reassembler::Reassembler;
use msgs::wire::{encode_user_event, kind, Message, Words, MAX_FRAME};
use rt::controllers::{
    CliffStop, CliffStopParams, Controller, Filter, ObstacleStop, ObstacleStopParams, PickupStop,
    PickupStopParams, Registry, RobotView, RtControllers,
};
use rt::link::{Link, PipeLink};
use rt::link_port::link_port;
use rt::rtloop::{spawn, RtConfig};
use rt::sched::RtSetup;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[path = "no_alloc_parts/recording.rs"]
mod recording;
use recording::RecordCounts;
#[path = "no_alloc_parts/user_echo.rs"]
mod user_echo;
use user_echo::UserEcho;

#[global_allocator]
static ALLOC: rt::alloc::CountingAlloc = rt::alloc::CountingAlloc;

const NODE: u16 = 1;
const SET_SPEED: u16 = 1;
const ODOMETRY: u16 = 2;
const PROXIMITY: u16 = 9;
const GROUND: u16 = 10;
const ACC: u16 = 11;
/// `motor.left.target` of the robot: stops are written there directly and read back.
const MOTOR_TARGETS: u16 = 140;
const CYCLES: u64 = 1_000_000;
/// `max_velocity` of the linear axis in every set of motion limits the tests use (m/s).
const MAX_LINEAR: f64 = 0.1;

/// Motion limits with every kind on, on both axes; `k` varies the rates (the loop reads new
/// ones while it runs).
fn limits_on(k: u64) -> MotionLimits {
    let f = 1.0 + (k % 3) as f64;
    let axis = |v: f64| AxisLimits {
        max_velocity: v,
        min_velocity: -v / 2.0,
        max_acceleration: 0.5 * f,
        max_deceleration: 1.0 * f,
        max_acceleration_reverse: 0.25 * f,
        max_deceleration_reverse: 0.75 * f,
        max_jerk: 20.0 * f,
    };
    MotionLimits {
        linear: axis(MAX_LINEAR),
        angular: axis(2.0),
    }
}

/// A controller that answers pose queries and publishes a heartbeat from inside the cycle.
struct PoseServer {
    service: RtServiceServer<u8, f64>,
    beat: RtPublisher<u64>,
}

impl Filter for PoseServer {
    fn update(&mut self, robot: &RobotView, _cmd: &mut WheelCommand) {
        let x = robot.pose.x;
        self.service.rt_serve(|_| x);
        self.beat.rt_publish(robot.now_ns);
    }
}

fn frame(out: &mut Vec<u8>, m: Message<'_>) {
    let mut buf = [0u8; MAX_FRAME];
    let n = m.encode(NODE, &mut buf).unwrap();
    out.extend_from_slice(&buf[..n]);
}

/// The robot end: emits the frame mix every `pace`, reads what the RT thread writes.
fn robot(mut link: PipeLink, stop: Arc<AtomicBool>, pace: Duration) -> (u64, u64, u64) {
    let mut pending = Vec::new();
    let mut reasm = Reassembler::new();
    let mut buf = [0u8; 4096];
    let (mut odo, mut ticks, mut k) = ([0i16; 2], 0u16, 0u64);
    let (mut speed_frames, mut list_nodes, mut direct) = (0, 0, 0);
    while !stop.load(Ordering::Relaxed) {
        if pending.is_empty() {
            k += 1;
            odo[0] = odo[0].wrapping_add(17);
            odo[1] = odo[1].wrapping_add(19);
            ticks = ticks.wrapping_add(5);
            let args = [odo[0], odo[1], ticks as i16];
            frame(
                &mut pending,
                Message::UserEvent {
                    id: ODOMETRY,
                    args: Words::from_slice(&args),
                },
            );
            if k % 4 == 0 {
                let near = if k % 64 < 8 { 3000 } else { 100 };
                let prox = [0, 50, near, 80, 0, 0, 0];
                frame(
                    &mut pending,
                    Message::UserEvent {
                        id: PROXIMITY,
                        args: Words::from_slice(&prox),
                    },
                );
                // the line under the left sensor, the right one, both, none; the left one past a
                // table's edge (the cliff reflex)
                let ground =
                    [[60, 900], [900, 60], [60, 60], [900, 900], [5, 900]][(k / 4 % 5) as usize];
                frame(
                    &mut pending,
                    Message::UserEvent {
                        id: GROUND,
                        args: Words::from_slice(&ground),
                    },
                );
                // on the floor, then lifted and tilted for a while (the pick-up reflex)
                let acc = if k % 256 < 64 {
                    [2, 18, 12]
                } else {
                    [0, 1, 22]
                };
                frame(
                    &mut pending,
                    Message::UserEvent {
                        id: ACC,
                        args: Words::from_slice(&acc),
                    },
                );
            }
            if k % 10 == 0 {
                let vals = [k as i16; 40];
                frame(
                    &mut pending,
                    Message::Variables {
                        start: 0,
                        values: Words::from_slice(&vals),
                    },
                );
            }
            if k % 97 == 0 {
                pending.extend_from_slice(&[0xFF, 0xEE, 0x01, 0x80, 0x33]); // line noise
            }
        }
        let n = link.write(&pending).unwrap();
        pending.drain(..n);
        let n = link.read(&mut buf).unwrap();
        let mut input = &buf[..n];
        while let Some(f) = reasm.push(&mut input) {
            match f.unwrap().kind {
                SET_SPEED => speed_frames += 1,
                kind::LIST_NODES => list_nodes += 1,
                kind::SET_VARIABLES => direct += 1,
                kind::GET_VARIABLES => frame(
                    &mut pending,
                    Message::Variables {
                        start: MOTOR_TARGETS,
                        values: Words::from_slice(&[0, 0]),
                    },
                ),
                _ => {}
            }
        }
        std::thread::sleep(pace); // the robot's pace, not a wait
    }
    (speed_frames, list_nodes, direct)
}

#[test]
fn a_million_cycles_without_allocation_or_page_fault() {
    // the flight recorder on: every input recorded, within the same proof
    let (rt_ends, mut nrt) = channels(&ChannelConfig {
        robots: 4,
        record: Some(handoff::RecordRings::default()),
        ..Default::default()
    });
    let mut recording = nrt.nrt_take_recording().unwrap();
    let mut recorded = RecordCounts::default();
    let (rt_port, mut port) = link_port();
    let (ours, theirs) = PipeLink::pair(1 << 16);
    port.nrt_offer(0, Box::new(ours)).unwrap();
    let mut config = RobotConfig::script(NodeId(NODE), ODOMETRY, SET_SPEED, false);
    config.proximity_event = Some(PROXIMITY);
    config.ground_event = Some(GROUND);
    config.acc_event = Some(ACC);
    config.motor_targets = Some(MOTOR_TARGETS);
    nrt.nrt_push_command(RtCommand::ConfigureRobot {
        robot: RobotId(0),
        config,
    })
    .unwrap();
    let mut joint_states = nrt.nrt_take_odometry_out().unwrap();
    let mut registry = Registry::shipped();
    registry
        .register(
            "user_echo",
            Box::new(|init| Ok(Box::new(UserEcho::new(init)?))),
        )
        .unwrap();
    let (shipped, mut control) = registry.instantiate(4).unwrap();
    let owners = [
        OwnerId::ROS,
        OwnerId::controller(0),
        OwnerId::JOINT,
        OwnerId::controller(1),
        OwnerId::controller(2),
        OwnerId::controller(3),
        OwnerId::controller(4),
        OwnerId::controller(5),
        OwnerId::controller(6),
    ];
    // the goal actions' side of the goal controllers (owner ids 3, 4, 5)
    let mut goal_ports: Vec<Box<NrtGoalPort>> =
        ["drive_distance", "rotate_angle", "navigate_to_position"]
            .iter()
            .map(|name| {
                control
                    .ports
                    .iter_mut()
                    .find(|p| p.robot == RobotId(0) && p.controller == *name)
                    .and_then(|p| p.private.take())
                    .and_then(|p| p.0.downcast::<NrtGoalPort>().ok())
                    .expect("a goal controller's private port")
            })
            .collect();
    // per goal controller: goals started, feedback, ends
    let mut goal_reports = [[0u64; 3]; 3];
    // the calibration action's side of calibrate_motors
    let mut calibration = control
        .ports
        .iter_mut()
        .find(|p| p.robot == RobotId(0) && p.controller == "calibrate_motors")
        .and_then(|p| p.private.take())
        .and_then(|p| p.0.downcast::<NrtCalibrationPort>().ok())
        .expect("calibrate_motors' private port");
    let mut cal_reports = 0u64;
    let params = nrt.nrt_params().clone();
    params.nrt_set_joint_state_hz(RobotId(0), 2000.0).unwrap();
    params
        .nrt_set_motion_limits(RobotId(0), limits_on(0))
        .unwrap();
    // The fastest forward twist commanded, and whether a ramp between rest and the set-points
    // was seen (the limiter really limited).
    let (mut fastest, mut ramped) = (0.0f64, false);

    let (reflex_pub, mut reflex_nrt) = publisher(64);
    let (params_rt, mut params_nrt) = latest(ObstacleStopParams::default());
    let (cliff_pub, mut cliff_nrt) = publisher(64);
    let (cliff_params_rt, mut cliff_params_nrt) = latest(CliffStopParams::default());
    let (pickup_pub, mut pickup_nrt) = publisher(64);
    let (pickup_params_rt, mut pickup_params_nrt) = latest(PickupStopParams::default());
    let (service, mut client) = service::<u8, f64>(8);
    let (beat, mut beats) = publisher::<u64>(1024);
    let controllers: Vec<Box<dyn Filter>> = vec![
        Box::new(
            ObstacleStop::new(ObstacleStopParams::default())
                .with_events(reflex_pub)
                .with_live_params(params_rt),
        ),
        Box::new(
            CliffStop::new(CliffStopParams::default())
                .with_events(cliff_pub)
                .with_live_params(cliff_params_rt),
        ),
        Box::new(
            PickupStop::new(PickupStopParams::default())
                .with_events(pickup_pub)
                .with_live_params(pickup_params_rt),
        ),
        Box::new(PoseServer { service, beat }),
    ];
    let cfg = RtConfig {
        period: Duration::ZERO,
        max_cycles: Some(CYCLES),
        warmup_cycles: 20_000,
        stats_period: Duration::from_millis(20),
        speed_refresh: Duration::from_millis(2),
        honor_signals: false,
        // memory locked where the process may (as the driver does): this machine's proactive reclaim (DAMON) can
        // take back a page the RT thread touched during warm-up, and its fault back is not the loop's; without the
        // privilege the step fails and is recorded, as in the driver
        setup: RtSetup {
            lock_memory: true,
            ..RtSetup::unprivileged()
        },
        ..Default::default()
    };
    let stop_robot = Arc::new(AtomicBool::new(false));
    let robot = {
        let stop = stop_robot.clone();
        std::thread::spawn(move || robot(theirs, stop, Duration::from_micros(20)))
    };
    let handle = spawn(cfg, rt_ends, rt_port, shipped, controllers).unwrap();

    // The NRT side.
    let (mut frames, mut odometry, mut stats, mut reflexes, mut answers) =
        (0u64, 0u64, 0u64, 0u64, 0u64);
    let mut cliffs = 0u64;
    let mut pickups = 0u64;
    let (mut joints, mut switches, mut topics, mut owners_seen) = (0u64, 0usize, 0u64, [false; 9]);
    let (mut user_msgs, mut user_answers) = (0u64, 0u64);
    let mut exit_event = None;
    let deadline = Instant::now() + Duration::from_secs(600);
    let mut k = 0u64;
    while exit_event.is_none() {
        assert!(Instant::now() < deadline, "RT loop did not finish");
        k += 1;
        frames += nrt.nrt_drain_frames(|f| assert!(f.bytes.len() >= 6)) as u64;
        recorded.drain(&mut recording);
        while let Some(ev) = nrt.nrt_pop_event() {
            match ev {
                RtEvent::Owner { owner, .. } => {
                    if let Some(i) = owners.iter().position(|o| *o == owner) {
                        owners_seen[i] = true;
                    }
                }
                // the reports travel apart (taking one drops the older ones)
                RtEvent::Stats => stats += u64::from(nrt.nrt_take_stats().is_some()),
                RtEvent::Exiting { reason } => exit_event = Some(reason),
                _ => {}
            }
        }
        reflexes += reflex_nrt.nrt_drain(|_| {}) as u64;
        cliffs += cliff_nrt.nrt_drain(|_| {}) as u64;
        pickups += pickup_nrt.nrt_drain(|_| {}) as u64;
        beats.nrt_drain(|_| {});
        while joint_states.nrt_pop_joint().is_some() {
            joints += 1;
        }
        while let Some(h) = joint_states.nrt_pop() {
            odometry += 1;
            fastest = fastest.max(h.commanded.linear);
            ramped |= h.commanded.linear > 0.0 && h.commanded.linear < 0.07;
        }
        for port in control.ports.iter_mut().filter(|p| p.robot == RobotId(0)) {
            for e in port.endpoints.iter_mut() {
                match e {
                    NrtEndpoint::Publisher { nrt, .. } => topics += nrt.nrt_drain(|_| {}) as u64,
                    NrtEndpoint::Service { nrt, .. } => while nrt.nrt_poll_response().is_some() {},
                    NrtEndpoint::Subscriber { .. } => {}
                    NrtEndpoint::Message { port, .. } => match port {
                        NrtMessagePort::Publisher(p) => {
                            user_msgs += p
                                .nrt_drain(&MsgCtx::new(NodeId(NODE), RobotId(0)), &mut |m| {
                                    assert!(m["position"][0].is_number(), "{m}")
                                }) as u64
                        }
                        NrtMessagePort::Service(c) => {
                            let ctx = MsgCtx::new(NodeId(NODE), RobotId(0));
                            while let Some((_, m)) = c.nrt_poll_response(&ctx) {
                                assert!(m["success"].is_boolean(), "{m}");
                                user_answers += 1;
                            }
                        }
                        NrtMessagePort::Subscriber(_) => {}
                    },
                }
            }
        }
        if k.is_multiple_of(400) {
            // the next owner: ros, line follower, joint, go-to-pose, calibrate_motors, …
            switches += 1;
            if owners[switches % owners.len()] == OwnerId::controller(2) {
                let mut speeds = [0i16; handoff::MAX_SWEEP];
                speeds[..2].copy_from_slice(&[200, 400]);
                let run = WheelRun {
                    wheel: if switches % 2 == 0 {
                        Wheel::Left
                    } else {
                        Wheel::Right
                    },
                    deadband: switches % 3 == 0,
                    deadband_max: 20,
                    speeds,
                    speeds_len: 2,
                    samples: 2,
                    timeout_ns: 5_000_000,
                };
                calibration.nrt_send(CalCommand::Run(run)).unwrap();
            }
            let id = GoalId(switches as u32);
            let goal = match owners[switches % owners.len()].controller_index() {
                Some(3) => Some((
                    0,
                    Goal::DriveDistance {
                        distance: 0.2,
                        max_translation_speed: 0.05,
                    },
                )),
                Some(4) => Some((
                    1,
                    Goal::RotateAngle {
                        angle: -2.0,
                        max_rotation_speed: 0.0,
                    },
                )),
                Some(5) => Some((
                    2,
                    Goal::NavigateToPosition {
                        pose: Pose2 {
                            x: 0.3,
                            y: -0.2,
                            theta: 0.5,
                        },
                        achieve_goal_heading: switches % 2 == 0,
                        max_translation_speed: 0.1,
                        max_rotation_speed: 1.0,
                    },
                )),
                _ => None,
            };
            if let Some((j, goal)) = goal {
                goal_ports[j]
                    .nrt_send(GoalCommand::Start { id, goal })
                    .unwrap();
                // (not a multiple of 3: with 9 owners a goal controller's turns are 9 apart)
                if switches % 4 == 0 {
                    // a cancel while it runs
                    goal_ports[j].nrt_send(GoalCommand::Cancel { id }).unwrap();
                }
            }
            params
                .nrt_request_owner(RobotId(0), owners[switches % owners.len()])
                .unwrap();
        }
        if k.is_multiple_of(30) {
            let w = (k % 7) as f64;
            let cmd = JointCommand {
                velocity: [w, if k.is_multiple_of(60) { f64::NAN } else { -w }],
            };
            params
                .nrt_set_joint_command_at(RobotId(0), cmd, monotonic_ns())
                .unwrap();
        }
        if k.is_multiple_of(250) {
            let goal = Pose2 {
                x: (k % 1000) as f64 * 1e-3,
                y: 0.1,
                theta: 1.0,
            };
            for port in control.ports.iter_mut().filter(|p| p.robot == RobotId(0)) {
                for e in port.endpoints.iter_mut() {
                    match e {
                        NrtEndpoint::Subscriber { nrt, .. } => {
                            nrt.nrt_store(RosValue::Pose2D(goal))
                        }
                        NrtEndpoint::Service { nrt, .. } => {
                            let _ = nrt.nrt_call(RosValue::Pose2D(goal));
                        }
                        NrtEndpoint::Publisher { .. } => {}
                        NrtEndpoint::Message { port, .. } => {
                            let point = serde_json::json!({
                                "header": {"frame_id": "odom"},
                                "point": {"x": goal.x, "y": goal.y},
                                "pose": {"position": {"x": goal.x, "y": goal.y}},
                            });
                            match port {
                                NrtMessagePort::Subscriber(st) => st.nrt_store(&point).unwrap(),
                                NrtMessagePort::Service(c) => {
                                    let _ = c.nrt_call(
                                        &serde_json::json!({"data": k.is_multiple_of(500)}),
                                    );
                                }
                                NrtMessagePort::Publisher(_) => {}
                            }
                        }
                    }
                }
                // calibrate_motors has no parameters
                if let Some(d) = port.params.decls().first().copied() {
                    port.params
                        .nrt_set(d.name, d.max * (k % 3) as f64 / 4.0)
                        .unwrap();
                }
            }
        }
        while client.nrt_poll_response().is_some() {
            answers += 1;
        }
        while calibration.nrt_next_report().is_some() {
            cal_reports += 1;
        }
        for (port, counts) in goal_ports.iter_mut().zip(goal_reports.iter_mut()) {
            while let Some(r) = port.nrt_next_report() {
                let kind = match r {
                    GoalReport::Started { .. } => 0,
                    GoalReport::Feedback { .. } => 1,
                    _ => 2,
                };
                counts[kind] += 1;
            }
        }
        if k.is_multiple_of(1700) {
            calibration.nrt_send(CalCommand::Abort).unwrap();
        }
        if k.is_multiple_of(50) {
            // moving, and every 300th a stop (direct write of the targets, read-back, refresh
            // until confirmed)
            let (v, w) = match k % 300 {
                0 => (0.0, 0.0),
                x if x % 100 == 0 => (0.08, 0.3),
                _ => (0.12, 0.3),
            };
            nrt.nrt_set_cmd_vel(
                RobotId(0),
                Twist2 {
                    linear: v,
                    angular: w,
                },
            )
            .unwrap();
            let _ = client.nrt_call(0);
        }
        if k.is_multiple_of(500) {
            let _ = nrt.nrt_push_frame(LinkTarget::All, &[2, 0, 0, 0, 0x11, 0xA0, 5, 0]);
            let mut ev = [0u8; MAX_FRAME];
            let n = encode_user_event(0, 20, &[1, 2, 3], &mut ev).unwrap();
            let _ = nrt.nrt_push_frame(LinkTarget::One(LinkId(0)), &ev[..n]);
            params_nrt.nrt_store(ObstacleStopParams {
                threshold: 2000 + (k % 1000) as i16,
                ..Default::default()
            });
            cliff_params_nrt.nrt_store(CliffStopParams {
                threshold: 20 + (k % 20) as i16,
                ..Default::default()
            });
            pickup_params_nrt.nrt_store(PickupStopParams {
                z_min: 14 + (k % 3) as i16,
                ..Default::default()
            });
            params
                .nrt_set_motion_limits(RobotId(0), limits_on(k / 500))
                .unwrap();
            // a managed driver node's hold, on a quarter of the time
            params.nrt_set_held(RobotId(0), (k / 500) % 4 == 3).unwrap();
        }
        std::thread::sleep(Duration::from_micros(50));
    }
    let exit = handle.join().unwrap();
    stop_robot.store(true, Ordering::Relaxed);
    let (speed_frames, list_nodes, direct) = robot.join().unwrap();
    recorded.drain(&mut recording);
    recorded.check(&recording);
    assert!(
        recorded.joint_commands > 0
            && recorded.owner_requests > 0
            && recorded.motion_limits > 0
            && recorded.held > 0
            && recorded.joint_state_hz > 0
            && recorded.controllers.iter().all(|n| *n > 0),
        "{recorded:?}"
    );

    let s = exit.stats;
    eprintln!("{s:#?}");
    assert_eq!(exit.reason, ExitReason::CycleLimit);
    assert_eq!(exit_event, Some(ExitReason::CycleLimit));
    assert!(s.cycles >= CYCLES);
    assert!(s.allocator_installed);
    assert_eq!(s.allocations, 0, "heap allocations on the RT thread");
    assert_eq!(
        s.page_faults, 0,
        "page faults on the RT thread after warm-up"
    );
    // The mix really flowed through the loop.
    assert!(s.odometry_samples > 1000 && odometry > 1000, "{odometry}");
    assert!(s.links.frames_rx > 2000 && frames > 2000);
    assert!(s.links.frames_rejected > 0, "the line noise was seen");
    assert!(s.speed_frames > 10 && speed_frames > 10);
    assert!(list_nodes > 0 && stats > 5 && answers > 0 && reflexes > 0);
    assert!(cliffs > 0, "the cliff reflex never engaged");
    assert!(pickups > 0, "the pick-up reflex never engaged");
    // Every owner had the wheels, joint states and the controllers' topics flowed.
    assert!(owners_seen.iter().all(|s| *s), "{owners_seen:?}");
    assert!(cal_reports > 10, "{cal_reports} calibration reports");
    assert!(
        user_msgs > 10 && user_answers > 0,
        "the user controller's JointState messages ({user_msgs}) and service answers ({user_answers})"
    );
    assert!(
        goal_reports.iter().flatten().all(|n| *n > 0),
        "every goal controller started, fed back and ended goals: {goal_reports:?}"
    );
    assert!(
        joints > 1000 && topics > 10,
        "{joints} joint states, {topics} topic values"
    );
    assert!(
        direct > 0,
        "stops were written to the motor targets directly"
    );
    // Every controller's update and serve were timed in the counted section.
    let t = s.controllers;
    assert_eq!(t.count, 7, "the six shipped controllers and user_echo");
    assert!(
        t.rows()
            .all(|(_, c)| c.update.count > 0 && c.serve.count > 1000),
        "{t:?}"
    );
    assert!(
        ramped && fastest > 0.0 && fastest <= MAX_LINEAR + 1e-9,
        "the motion limits held every owner's command (fastest {fastest} m/s, ramp seen: {ramped})"
    );
    assert_eq!(exit.stops.len(), 1);
    assert_eq!(
        exit.stops[0].confirmed,
        Some(true),
        "the exit stop was read back"
    );
}

#[path = "no_alloc_parts/waiting.rs"]
mod waiting;
