//! The flight recorder's replay, in process: a periodic RT loop drives a robot (a thread on a pipe that sends
//! odometry, proximity, ground and accelerometer events and answers read-backs) while the NRT side changes
//! set-points, motion limits, the hold, joint commands, the owner (ros, line_follower, joint) and the obstacle and
//! pick-up stops' parameters; every input is recorded. A fresh loop replayed on the records writes the same frames
//! at the same recorded times and hands out the same odometry, bit for bit; a recording with one set-point
//! changed, or without the pick-up stop's parameters, does not.

use handoff::Record;
use handoff::{
    channels, AxisLimits, ChannelConfig, JointCommand, MotionLimits, NodeId, OdomHandoff, OwnerId,
    RecordRings, RobotConfig, RobotId, RtCommand, RtEvent, Twist2,
};
use handoff::{latest, NrtLatest};
use handoff::{NrtEndpoint, Pose2, RosValue};
use msgs::reassembler::Reassembler;
use msgs::wire::{kind, Message, Words, MAX_FRAME};
use rt::controllers::{
    Filter, ObstacleStop, ObstacleStopParams, PickupStop, PickupStopParams, Registry,
};
use rt::link::{Link, PipeLink};
use rt::link_port::link_port;
use rt::replay::{first_frame_difference, recorded_frames, Replayer};
use rt::rtloop::{spawn, RtConfig};
use rt::sched::RtSetup;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const NODE: u16 = 1;
const SET_SPEED: u16 = 1;
const ODOMETRY: u16 = 2;
const PROXIMITY: u16 = 9;
const GROUND: u16 = 10;
const ACC: u16 = 11;
const MOTOR_TARGETS: u16 = 140;

fn frame(out: &mut Vec<u8>, m: Message<'_>) {
    let mut buf = [0u8; MAX_FRAME];
    let n = m.encode(NODE, &mut buf).unwrap();
    out.extend_from_slice(&buf[..n]);
}

/// The robot: odometry every `pace`, proximity, ground and accelerometer every 4th (lifted and tilted now and
/// then), read-backs answered.
fn robot(mut link: PipeLink, stop: Arc<AtomicBool>, pace: Duration) {
    let (mut pending, mut reasm, mut buf) = (Vec::new(), Reassembler::new(), [0u8; 4096]);
    let (mut odo, mut k) = ([0i16; 2], 0u64);
    while !stop.load(Ordering::Relaxed) {
        k += 1;
        odo[0] = odo[0].wrapping_add(17 + (k % 5) as i16);
        odo[1] = odo[1].wrapping_add(19);
        let args = [odo[0], odo[1], (k * 5) as i16];
        frame(
            &mut pending,
            Message::UserEvent {
                id: ODOMETRY,
                args: Words::from_slice(&args),
            },
        );
        if k.is_multiple_of(4) {
            let near = if k % 64 < 8 { 3000 } else { 100 };
            let prox = [0, 50, near, 80, 0, 0, 0];
            frame(
                &mut pending,
                Message::UserEvent {
                    id: PROXIMITY,
                    args: Words::from_slice(&prox),
                },
            );
            let ground = [[60, 900], [900, 60], [60, 60], [900, 900]][(k / 4 % 4) as usize];
            frame(
                &mut pending,
                Message::UserEvent {
                    id: GROUND,
                    args: Words::from_slice(&ground),
                },
            );
            let acc = if k % 64 < 24 { [2, 18, 12] } else { [0, 1, 22] };
            frame(
                &mut pending,
                Message::UserEvent {
                    id: ACC,
                    args: Words::from_slice(&acc),
                },
            );
        }
        let n = link.write(&pending).unwrap();
        pending.drain(..n);
        let n = link.read(&mut buf).unwrap();
        let mut input = &buf[..n];
        while let Some(f) = reasm.push(&mut input) {
            if let Ok(f) = f {
                if f.kind == kind::GET_VARIABLES {
                    let values = Words::from_slice(&[0, 0]);
                    frame(
                        &mut pending,
                        Message::Variables {
                            start: MOTOR_TARGETS,
                            values,
                        },
                    );
                }
            }
        }
        std::thread::sleep(pace);
    }
}

fn limits(v: f64) -> MotionLimits {
    let axis = |v: f64| AxisLimits {
        max_velocity: v,
        max_acceleration: 0.8,
        max_deceleration: 1.5,
        ..AxisLimits::default()
    };
    MotionLimits {
        linear: axis(v),
        angular: axis(3.0),
    }
}

fn rt_config() -> RtConfig {
    RtConfig {
        period: Duration::from_millis(2),
        max_cycles: Some(900),
        speed_refresh: Duration::from_millis(20),
        min_speed_interval: Duration::from_millis(3),
        honor_signals: false,
        setup: RtSetup::unprivileged(),
        ..RtConfig::default()
    }
}

/// Takes what was recorded so far.
fn take(recording: &mut handoff::NrtRecording, records: &mut Vec<Record>) {
    while let Some(e) = recording.nrt_pop_input() {
        records.push(e.into());
    }
    while let Some(f) = recording.nrt_pop_frame() {
        records.push(f.to_record());
    }
}

/// A recorded run: its records (sorted) and the odometry it handed out.
fn record_a_run() -> (Vec<Record>, Vec<OdomHandoff>) {
    let (rt_ends, mut nrt) = channels(&ChannelConfig {
        robots: 2,
        record: Some(RecordRings::default()),
        ..Default::default()
    });
    let mut recording = nrt.nrt_take_recording().unwrap();
    let mut odometry_out = nrt.nrt_take_odometry_out().unwrap();
    odometry_out.nrt_activate();
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
    let (controllers, mut control) = Registry::shipped().instantiate(2).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let robot = {
        let stop = stop.clone();
        std::thread::spawn(move || robot(theirs, stop, Duration::from_micros(1500)))
    };
    let (reflex, mut reflex_params) = obstacle_stop();
    let (pickup, mut pickup_params) = pickup_stop();
    let handle = spawn(
        rt_config(),
        rt_ends,
        rt_port,
        controllers,
        vec![reflex, pickup],
    )
    .unwrap();
    let params = nrt.nrt_params().clone();
    let (mut records, mut odometry) = (Vec::new(), Vec::new());
    let deadline = Instant::now() + Duration::from_secs(60);
    let (mut k, mut exited) = (0u64, false);
    while !exited {
        assert!(Instant::now() < deadline, "the loop did not end");
        k += 1;
        take(&mut recording, &mut records);
        while let Some(h) = odometry_out.nrt_pop() {
            odometry.push(h);
        }
        nrt.nrt_drain_frames(|_| {});
        while let Some(ev) = nrt.nrt_pop_event() {
            exited |= matches!(ev, RtEvent::Exiting { .. });
        }
        if k.is_multiple_of(7) {
            let v = [0.05, 0.12, 0.0, -0.04][(k / 7 % 4) as usize];
            let twist = Twist2 {
                linear: v,
                angular: 0.3 - v,
            };
            params
                .nrt_set_cmd_vel_at(RobotId(0), twist, handoff::monotonic_ns())
                .unwrap();
        }
        controllers_from_ros(&mut control, k);
        if k.is_multiple_of(90) {
            // line_follower, go_to_pose, joint, drive_distance, ros
            let owner = [
                OwnerId::controller(0),
                OwnerId::controller(1),
                OwnerId::JOINT,
                OwnerId::controller(3),
                OwnerId::ROS,
            ][(k / 90 % 5) as usize];
            params.nrt_request_owner(RobotId(0), owner).unwrap();
            params
                .nrt_set_motion_limits(RobotId(0), limits(0.05 + (k % 4) as f64 * 0.03))
                .unwrap();
        }
        if k.is_multiple_of(11) {
            let w = (k % 9) as f64 - 4.0;
            params
                .nrt_set_joint_command_at(
                    RobotId(0),
                    JointCommand { velocity: [w, -w] },
                    handoff::monotonic_ns(),
                )
                .unwrap();
        }
        if k % 150 == 75 {
            // the obstacle stop turned on and off live (the robot reports an obstacle now and then)
            reflex_params.nrt_store(ObstacleStopParams {
                enabled: k % 300 == 75,
                threshold: 2000,
                ..ObstacleStopParams::default()
            });
        }
        if k % 150 == 30 {
            // the pick-up stop turned on and off live, its tilt threshold changed (the robot is lifted now and then)
            pickup_params.nrt_store(PickupStopParams {
                enabled: k % 300 == 30,
                z_min: 14 + (k / 300 % 3) as i16,
                ..PickupStopParams::default()
            });
        }
        if k.is_multiple_of(200) {
            params
                .nrt_set_held(RobotId(0), k.is_multiple_of(400))
                .unwrap();
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    handle.join().unwrap();
    stop.store(true, Ordering::Relaxed);
    robot.join().unwrap();
    take(&mut recording, &mut records);
    assert_eq!(
        recording.nrt_dropped(),
        (0, 0),
        "a ring overflowed: the test's NRT side is too slow"
    );
    records.sort_by_key(Record::seq);
    (records, odometry)
}

/// What ROS would hand robot 0's controllers: go_to_pose's goal (topic) and set_goal (service), line_follower's
/// first parameter, drive_distance's goals (its goal port) — and what they answer, taken.
fn controllers_from_ros(control: &mut handoff::NrtControl, k: u64) {
    let mine = control.ports.iter_mut().filter(|p| p.robot == RobotId(0));
    for (i, port) in mine.enumerate() {
        for e in port.endpoints.iter_mut() {
            match e {
                NrtEndpoint::Subscriber { nrt, .. } if k.is_multiple_of(45) => {
                    let x = (k % 7) as f64 * 0.05;
                    nrt.nrt_store(RosValue::Pose2D(Pose2 {
                        x,
                        y: 0.1,
                        theta: 0.5,
                    }));
                }
                NrtEndpoint::Service { nrt, .. } => {
                    if k.is_multiple_of(60) {
                        let _ = nrt.nrt_call(RosValue::Pose2D(Pose2 {
                            x: -0.2,
                            y: 0.0,
                            theta: 0.0,
                        }));
                    }
                    while nrt.nrt_poll_response().is_some() {}
                }
                NrtEndpoint::Publisher { nrt, .. } => {
                    nrt.nrt_drain(|_| {});
                }
                // go_to_pose's goal_pose (geometry_msgs/PoseStamped, RViz's "2D Goal Pose")
                NrtEndpoint::Message {
                    port: handoff::NrtMessagePort::Subscriber(store),
                    ..
                } if k % 45 == 20 => {
                    let x = (k % 5) as f64 * 0.04;
                    store
                        .nrt_store(&serde_json::json!({
                            "header": {"frame_id": "odom"},
                            "pose": {"position": {"x": x, "y": -0.1}, "orientation": {"z": 0.6, "w": 0.8}},
                        }))
                        .unwrap();
                }
                _ => {}
            }
        }
        if i == 0 && k.is_multiple_of(70) {
            if let Some(d) = port.params.decls().first().copied() {
                port.params
                    .nrt_set(d.name, d.min + (d.max - d.min) * (k % 5) as f64 / 5.0)
                    .unwrap();
            }
        }
        if let Some(g) = port
            .private
            .as_mut()
            .and_then(|p| p.0.downcast_mut::<handoff::NrtGoalPort>())
        {
            if i == 3 && k % 90 == 80 {
                let goal = handoff::Goal::DriveDistance {
                    distance: 0.1,
                    max_translation_speed: 0.05,
                };
                g.nrt_send(handoff::GoalCommand::Start {
                    id: handoff::GoalId(k as u32),
                    goal,
                })
                .unwrap();
            }
            while g.nrt_next_report().is_some() {}
        }
    }
}

fn replay(records: &[Record]) -> rt::replay::ReplayOutput {
    let (controllers, control) = Registry::shipped().instantiate(2).unwrap();
    let (reflex, mut params) = obstacle_stop();
    let (pickup, mut pickup_params) = pickup_stop();
    Replayer::new(rt_config(), 2, controllers, vec![reflex, pickup])
        .with_control(control)
        .with_reflex_params(Box::new(
            move |which, enabled, threshold, samples, max_age_ns| {
                match which {
                    0 => params.nrt_store(ObstacleStopParams {
                        enabled,
                        threshold,
                        max_age_ns,
                    }),
                    2 => pickup_params.nrt_store(PickupStopParams {
                        enabled,
                        z_min: threshold,
                        samples,
                        max_age_ns,
                    }),
                    _ => return Err(format!("no reflex {which}")),
                }
                Ok(())
            },
        ))
        .run(records)
}

/// The obstacle stop (off until turned on live) and its live parameters.
fn obstacle_stop() -> (Box<dyn Filter>, NrtLatest<ObstacleStopParams>) {
    let off = ObstacleStopParams {
        enabled: false,
        ..ObstacleStopParams::default()
    };
    let (rt, nrt) = latest(off);
    (Box::new(ObstacleStop::new(off).with_live_params(rt)), nrt)
}

/// The pick-up stop (off until turned on live) and its live parameters.
fn pickup_stop() -> (Box<dyn Filter>, NrtLatest<PickupStopParams>) {
    let off = PickupStopParams {
        enabled: false,
        ..PickupStopParams::default()
    };
    let (rt, nrt) = latest(off);
    (Box::new(PickupStop::new(off).with_live_params(rt)), nrt)
}

/// The odometry as compared: everything but the hand-off's own clock reading.
fn key(h: &OdomHandoff) -> String {
    let s = &h.sample;
    format!(
        "{:?} {:?} {} {} {:?} {:?} {:?} {:?} {:?} {:?}",
        s.robot,
        s.link,
        s.seq,
        s.t_ns,
        s.dt.to_bits(),
        s.pose,
        s.twist,
        s.wheel_pos,
        s.wheel_vel,
        h.commanded
    )
}

#[test]
fn a_replayed_run_writes_the_same_frames_and_odometry_bit_for_bit() {
    let (records, odometry) = record_a_run();
    let expected = recorded_frames(&records);
    assert!(
        expected.len() > 50,
        "the run wrote {} frames",
        expected.len()
    );
    let owners = records
        .iter()
        .filter(|r| {
            matches!(
                r,
                Record::Input {
                    input: handoff::RecInput::OwnerRequest { .. },
                    ..
                }
            )
        })
        .count();
    assert!(owners >= 5, "owner switches recorded: {owners}");
    // what the controllers took from ROS was recorded, every kind
    let count = |f: &dyn Fn(&handoff::RecInput) -> bool| {
        records
            .iter()
            .filter(|r| matches!(r, Record::Input { input, .. } if f(input)))
            .count()
    };
    use handoff::RecInput as I;
    let kinds = [
        count(&|i| matches!(i, I::Topic { .. })),
        count(&|i| matches!(i, I::ServiceRequest { .. })),
        count(&|i| matches!(i, I::Params { .. })),
        count(&|i| matches!(i, I::Goal { .. })),
        count(&|i| matches!(i, I::ReflexParams { .. })),
    ];
    assert!(
        kinds.iter().all(|n| *n > 0),
        "topic, service, params, goal, reflex records: {kinds:?}"
    );
    let is_pickup = |i: &I| matches!(i, I::ReflexParams { reflex: 2, .. });
    assert!(count(&is_pickup) > 0, "the pick-up stop's parameters");
    // go_to_pose's goal_pose (a message subscriber of a plain type) was recorded, not marked unrecorded
    assert_eq!(count(&|i| matches!(i, I::Unrecorded { .. })), 0);

    let out = replay(&records);
    eprintln!(
        "{} records, {} frames written, replay: {} passes, {} frames in, {} written, {} odometry (recorded {})",
        records.len(),
        expected.len(),
        out.passes,
        out.frames_in,
        out.frames.len(),
        out.odometry.len(),
        odometry.len()
    );
    assert!(out.refused.is_empty(), "{:?}", out.refused);
    assert!(
        out.passes > 800 && out.frames_in > 300,
        "{} passes, {} frames",
        out.passes,
        out.frames_in
    );
    if let Some(d) = first_frame_difference(&expected, &out.frames) {
        panic!("{d}");
    }
    // the odometry of the passes (the exit sequence reads the robot once more, outside any pass)
    assert!(out.odometry.len() > 300);
    assert!(odometry.len() >= out.odometry.len());
    for (i, (a, b)) in odometry.iter().zip(&out.odometry).enumerate() {
        assert_eq!(key(a), key(b), "odometry sample {i}");
    }

    // without the controllers' NRT halves, what they took cannot be put back: said, input by input
    let (controllers, _) = Registry::shipped().instantiate(2).unwrap();
    let filters = vec![obstacle_stop().0, pickup_stop().0];
    let bare = Replayer::new(rt_config(), 2, controllers, filters).run(&records);
    assert!(
        bare.refused
            .iter()
            .any(|r| r.contains("no controller ports")),
        "{:?}",
        bare.refused
    );

    // a recording with one set-point changed replays differently, and says where
    let mut changed = records.clone();
    let i = changed
        .iter()
        .position(|r| matches!(r, Record::Input { input: handoff::RecInput::CmdVel { twist, .. }, .. } if twist.linear > 0.1))
        .expect("a fast set-point");
    if let Record::Input {
        input: handoff::RecInput::CmdVel { twist, .. },
        ..
    } = &mut changed[i]
    {
        twist.linear = 0.02;
    }
    let d = first_frame_difference(&expected, &replay(&changed).frames).expect("a difference");
    assert!(d.contains("frame"), "{d}");

    // the pick-up stop's live parameters changed what the run wrote: without their records (the pick-up stop
    // left at its start parameters, as before they were recorded) the replay differs
    let mut without = records.clone();
    without.retain(|r| !matches!(r, Record::Input { input, .. } if is_pickup(input)));
    let d = first_frame_difference(&expected, &replay(&without).frames)
        .expect("the pick-up stop held the robot while on");
    assert!(d.contains("frame"), "{d}");
}
