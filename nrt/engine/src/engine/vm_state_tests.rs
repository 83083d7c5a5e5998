//! The engine and its robots' VM states: a stopped VM of a driven robot reported and set running, the load's own
//! states and the closing reset not taken for a halt.

use super::*;

/// Node 3 reports its execution state (flags) on link 0.
fn execution_state(rt: &mut RtEnds, flags: u16) {
    let f = Message::ExecutionStateChanged { pc: 7, flags }
        .to_frame(3)
        .unwrap();
    assert!(rt.rt_push_frame(LinkId(0), 3, &f));
}

#[test]
fn a_stopped_vm_of_a_driven_robot_is_reported_once_and_set_running() {
    use msgs::opcodes::{FLAG_EVENT_ACTIVE, FLAG_STEP_BY_STEP};
    let (mut e, mut rt) = engine(0);
    driven_robot(&mut e, &mut rt);
    e.poll(Instant::now()); // the load's own frames (SET_BYTECODE, RUN) go out first
    written(&mut rt);
    execution_state(&mut rt, 0);
    e.poll(Instant::now());
    assert_eq!(e.vm_record(NodeId(3)).map(|r| r.halted), Some(false));
    execution_state(&mut rt, FLAG_STEP_BY_STEP);
    e.poll(Instant::now());
    let runs = |rt: &mut RtEnds| {
        written(rt)
            .iter()
            .filter(|(to, k, _)| *to == LinkTarget::One(LinkId(0)) && *k == kind::RUN)
            .count()
    };
    assert_eq!(runs(&mut rt), 1);
    let r = e.vm_record(NodeId(3)).unwrap();
    assert_eq!((r.halted, r.halts, r.restarts), (true, 1, 1));
    // still stopped at the next check: RUN again, not a second report
    execution_state(&mut rt, FLAG_STEP_BY_STEP | FLAG_EVENT_ACTIVE);
    e.poll(Instant::now());
    assert_eq!(runs(&mut rt), 1);
    assert_eq!(e.vm_record(NodeId(3)).unwrap().halts, 1);
    execution_state(&mut rt, 0);
    e.poll(Instant::now());
    assert_eq!(
        e.vm_record(NodeId(3)).unwrap().summary(),
        "running (halts: 1, restarts: 2)"
    );
}

/// The load's own states (step-by-step until its RUN) read seconds late by a busy NRT loop (16 robots' ROS 2
/// endpoints made in one step) were taken for a halt of every robot: warning, `/diagnostics` halt, RUN resent. The
/// grace after a load counts from when the state arrived (its RT stamp), not from when the loop read it.
#[test]
fn the_loads_own_states_read_late_are_not_a_halt() {
    use msgs::opcodes::{FLAG_EVENT_ACTIVE, FLAG_STEP_BY_STEP};
    let (mut e, mut rt) = engine(0);
    driven_robot(&mut e, &mut rt);
    e.poll(Instant::now());
    written(&mut rt);
    let state_now = |rt: &mut RtEnds| {
        let f = Message::ExecutionStateChanged {
            pc: 577,
            flags: FLAG_STEP_BY_STEP | FLAG_EVENT_ACTIVE,
        }
        .to_frame(3)
        .unwrap();
        assert!(rt.rt_push_frame(LinkId(0), handoff::monotonic_ns(), &f));
    };
    // loaded just now, read 5 s later: the load's own state
    let loaded = Instant::now();
    e.loaded_at.insert(NodeId(3), loaded);
    state_now(&mut rt);
    e.poll(loaded + Duration::from_secs(5));
    assert!(!written(&mut rt).iter().any(|(_, k, _)| *k == kind::RUN));
    assert_eq!(e.vm_record(NodeId(3)).map_or(0, |r| r.halts), 0);
    // loaded 5 s before the state arrived: a real halt, reported and restarted
    e.loaded_at
        .insert(NodeId(3), Instant::now() - Duration::from_secs(5));
    state_now(&mut rt);
    e.poll(Instant::now());
    assert!(written(&mut rt).iter().any(|(_, k, _)| *k == kind::RUN));
    assert_eq!(e.vm_record(NodeId(3)).map(|r| r.halts), Some(1));
}

#[test]
fn with_restart_off_a_stopped_vm_is_only_reported() {
    let (mut rt_ends, nrt) = channels(&ChannelConfig::default());
    let mut e = Engine::new(
        EngineConfig {
            bridge: BridgeParams {
                port: 0,
                ..Default::default()
            },
            driver: DriverParams {
                restart_stopped_vm: false,
                ..Default::default()
            },
        },
        nrt,
    )
    .unwrap();
    driven_robot(&mut e, &mut rt_ends);
    e.poll(Instant::now());
    written(&mut rt_ends);
    execution_state(&mut rt_ends, msgs::opcodes::FLAG_STEP_BY_STEP);
    e.poll(Instant::now());
    assert!(!written(&mut rt_ends)
        .iter()
        .any(|(_, k, _)| *k == kind::RUN));
    let r = e.vm_record(NodeId(3)).unwrap();
    assert_eq!((r.halted, r.halts, r.restarts), (true, 1, 0));
}

/// `reset_on_closing` stops the robots' VMs on purpose at exit (RESET, as asebaros): the halt check must not
/// set them running again (it did: the script restarted, with a warning that set_speed was dead).
#[test]
fn a_vm_stopped_by_the_closing_reset_stays_stopped() {
    let (mut rt_ends, nrt) = channels(&ChannelConfig::default());
    let mut e = Engine::new(
        EngineConfig {
            bridge: BridgeParams {
                port: 0,
                reset_on_closing: true,
                ..Default::default()
            },
            driver: DriverParams::default(),
        },
        nrt,
    )
    .unwrap();
    assert!(
        e.driver.restart_stopped_vm,
        "the default restarts halted VMs"
    );
    driven_robot(&mut e, &mut rt_ends);
    e.poll(Instant::now());
    written(&mut rt_ends);
    e.shutdown();
    let resets = written(&mut rt_ends)
        .iter()
        .filter(|(_, k, _)| *k == kind::RESET)
        .count();
    assert_eq!(resets, 1, "RESET at closing");
    execution_state(&mut rt_ends, msgs::opcodes::FLAG_STEP_BY_STEP);
    e.poll(Instant::now());
    assert!(!written(&mut rt_ends)
        .iter()
        .any(|(_, k, _)| *k == kind::RUN));
    assert_eq!(e.vm_record(NodeId(3)).map(|r| r.halts).unwrap_or(0), 0);
}
