//! The waiting loop (I/O wake-ups between deadlines) and controllers over their budget, without allocation or
//! page fault (see the binary's documentation).

use super::*;

#[test]
fn io_wake_ups_without_allocation_or_page_fault() {
    const PERIOD: Duration = Duration::from_millis(20);
    const WAKING_CYCLES: u64 = 500;
    let (rt_ends, mut nrt) = channels(&ChannelConfig {
        robots: 4,
        record: Some(handoff::RecordRings::default()),
        ..Default::default()
    });
    let mut recording = nrt.nrt_take_recording().unwrap();
    let mut recorded = RecordCounts::default();
    let mut odometry_out = nrt.nrt_take_odometry_out().unwrap();
    nrt.nrt_params()
        .nrt_set_motion_limits(RobotId(0), limits_on(1))
        .unwrap();
    let (rt_port, mut port) = link_port();
    let (ours, theirs) = PipeLink::pair(1 << 16);
    port.nrt_offer(0, Box::new(ours)).unwrap();
    let mut config = RobotConfig::script(NodeId(NODE), ODOMETRY, SET_SPEED, false);
    config.proximity_event = Some(PROXIMITY);
    config.motor_targets = Some(MOTOR_TARGETS);
    config.link = Some(LinkId(0));
    nrt.nrt_push_command(RtCommand::ConfigureRobot {
        robot: RobotId(0),
        config,
    })
    .unwrap();
    let (reflex_pub, mut reflex_nrt) = publisher(64);
    let controllers: Vec<Box<dyn Filter>> = vec![Box::new(
        ObstacleStop::new(ObstacleStopParams::default()).with_events(reflex_pub),
    )];
    let cfg = RtConfig {
        period: PERIOD,
        max_cycles: Some(WAKING_CYCLES),
        warmup_cycles: 50,
        stats_period: Duration::from_millis(200),
        speed_refresh: Duration::from_millis(50),
        min_speed_interval: Duration::from_millis(3),
        honor_signals: false,
        setup: RtSetup::unprivileged(),
        ..Default::default()
    };
    let stop_robot = Arc::new(AtomicBool::new(false));
    let robot = {
        let stop = stop_robot.clone();
        std::thread::spawn(move || robot(theirs, stop, Duration::from_millis(1)))
    };
    let handle = spawn(cfg, rt_ends, rt_port, RtControllers::none(), controllers).unwrap();

    let (mut handed, mut exit_event) = (0u64, None);
    let deadline = Instant::now() + Duration::from_secs(600);
    let mut k = 0u64;
    while exit_event.is_none() {
        assert!(Instant::now() < deadline, "RT loop did not finish");
        k += 1;
        nrt.nrt_drain_frames(|f| assert!(f.bytes.len() >= 6));
        recorded.drain(&mut recording);
        while let Some(ev) = nrt.nrt_pop_event() {
            if let RtEvent::Exiting { reason } = ev {
                exit_event = Some(reason);
            }
        }
        while odometry_out.nrt_pop().is_some() {
            handed += 1;
        }
        reflex_nrt.nrt_drain(|_| {});
        // set-points between deadlines (every 2nd within min_speed_interval: held back, then
        // written when the interval ends), now and then a frame and a stop
        let v = match k % 40 {
            0 => 0.0,
            x => 0.02 + 0.01 * (x % 5) as f64,
        };
        nrt.nrt_set_cmd_vel(
            RobotId(0),
            Twist2 {
                linear: v,
                angular: 0.1,
            },
        )
        .unwrap();
        if k.is_multiple_of(25) {
            let _ = nrt.nrt_push_frame(LinkTarget::All, &[2, 0, 0, 0, 0x11, 0xA0, 5, 0]);
        }
        std::thread::sleep(Duration::from_micros(1700)); // the NRT side's pace
    }
    let exit = handle.join().unwrap();
    stop_robot.store(true, Ordering::Relaxed);
    let (speed_frames, _, _) = robot.join().unwrap();
    recorded.drain(&mut recording);
    recorded.check(&recording);
    assert!(
        recorded.passes[0] >= WAKING_CYCLES && recorded.passes[1] > 100,
        "periodic cycles and I/O wake-ups recorded: {recorded:?}"
    );

    let s = exit.stats;
    eprintln!("{s:#?}");
    assert_eq!(exit.reason, ExitReason::CycleLimit);
    assert!(s.allocator_installed);
    assert_eq!(s.allocations, 0, "heap allocations on the RT thread");
    assert_eq!(
        s.page_faults, 0,
        "page faults on the RT thread after warm-up"
    );
    // The work really happened in wake-ups: set-points reached the wire far sooner than the
    // 20 ms period a polling loop would take half of on average, and odometry was handed over.
    assert!(
        speed_frames > 100 && s.hops.cmd_to_wire.count > 100,
        "{:?}",
        s.hops
    );
    assert!(
        s.hops.cmd_to_wire.p50 < (PERIOD / 4).as_nanos() as u64,
        "{:?}",
        s.hops.cmd_to_wire
    );
    assert!(s.odometry_samples > 1000 && handed > 1000, "{handed}");
    assert!(s.hops.wire_to_decoded.count > 1000);
}

/// A controller whose `update` busy-waits past any budget of a microsecond.
struct OverBudget;

impl Controller for OverBudget {
    fn update(&mut self, _: &RobotView) -> WheelCommand {
        let t = Instant::now();
        while t.elapsed() < Duration::from_micros(5) {
            std::hint::spin_loop();
        }
        WheelCommand::Targets([100, 100])
    }
}

#[test]
fn controllers_stopped_over_budget_without_allocation_or_page_fault() {
    const STOP_CYCLES: u64 = 200_000;
    let (rt_ends, mut nrt) = channels(&ChannelConfig {
        robots: 2,
        ..Default::default()
    });
    let (rt_port, mut port) = link_port();
    let (ours, theirs) = PipeLink::pair(1 << 16);
    port.nrt_offer(0, Box::new(ours)).unwrap();
    nrt.nrt_push_command(RtCommand::ConfigureRobot {
        robot: RobotId(0),
        config: RobotConfig::script(NodeId(NODE), ODOMETRY, SET_SPEED, false),
    })
    .unwrap();
    let mut reg = Registry::new();
    reg.register("over_budget", Box::new(|_| Ok(Box::new(OverBudget))))
        .unwrap();
    let (ctrls, _control) = reg.instantiate(2).unwrap();
    let cfg = RtConfig {
        period: Duration::ZERO,
        max_cycles: Some(STOP_CYCLES),
        warmup_cycles: 20_000,
        stats_period: Duration::from_millis(20),
        honor_signals: false,
        setup: RtSetup::unprivileged(),
        controller_budget: Duration::from_micros(1),
        controller_overruns: 3,
        ..Default::default()
    };
    let stop_robot = Arc::new(AtomicBool::new(false));
    let robot = {
        let stop = stop_robot.clone();
        std::thread::spawn(move || robot(theirs, stop, Duration::from_micros(20)))
    };
    let handle = spawn(cfg, rt_ends, rt_port, ctrls, Vec::new()).unwrap();
    let params = nrt.nrt_params().clone();
    let (mut stops, mut exit_event) = (0u64, None);
    let deadline = Instant::now() + Duration::from_secs(300);
    while exit_event.is_none() {
        assert!(Instant::now() < deadline, "RT loop did not finish");
        nrt.nrt_drain_frames(|_| {});
        while let Some(ev) = nrt.nrt_pop_event() {
            match ev {
                RtEvent::ControllerStopped { stop, .. } => {
                    assert_eq!(stop.overruns, 3);
                    stops += 1;
                }
                RtEvent::Exiting { reason } => exit_event = Some(reason),
                _ => {}
            }
        }
        // switched to it again and again (each time stopped after 3 updates)
        params
            .nrt_request_owner(RobotId(0), OwnerId::controller(0))
            .unwrap();
        std::thread::sleep(Duration::from_micros(500));
    }
    let exit = handle.join().unwrap();
    stop_robot.store(true, Ordering::Relaxed);
    robot.join().unwrap();
    let s = exit.stats;
    eprintln!("{s:#?}");
    assert_eq!(exit.reason, ExitReason::CycleLimit);
    assert!(s.allocator_installed);
    assert_eq!(s.allocations, 0, "heap allocations on the RT thread");
    assert_eq!(
        s.page_faults, 0,
        "page faults on the RT thread after warm-up"
    );
    let c = s.controllers.times[0];
    assert!(
        stops > 20 && c.budget_stops >= stops,
        "{stops} stops, {c:?}"
    );
    assert_eq!(c.overruns, c.update.count, "every update over budget");
}
