//! The controllers' budget in the loop: an owner whose `update` overruns the budget
//! `controller_overruns` times in a row is stopped in that cycle (zero speed, `stop`, owner
//! `ros`, reported), can be switched to again; runs broken by a call within budget never stop
//! it; `update` and `serve` are timed per controller.

use super::*;
use crate::controllers::{Controller, Registry, RobotView};
use handoff::{OwnerId, RobotId, WheelCommand};
use std::sync::atomic::AtomicU32;
use std::time::Instant;

const BUDGET: Duration = Duration::from_micros(500);
const OVERRUNS: u32 = 3;

/// Drives fixed targets; its `update` busy-waits `slow` on the calls whose number (from 0) `is_slow`
/// says; counts start / stop / update.
struct Busy {
    slow: Duration,
    is_slow: fn(u32) -> bool,
    calls: Arc<[AtomicU32; 3]>,
}

impl Controller for Busy {
    fn start(&mut self, _: &RobotView) {
        self.calls[0].fetch_add(1, Ordering::Relaxed);
    }
    fn stop(&mut self, _: &RobotView) {
        self.calls[1].fetch_add(1, Ordering::Relaxed);
    }
    fn update(&mut self, _: &RobotView) -> WheelCommand {
        let n = self.calls[2].fetch_add(1, Ordering::Relaxed);
        if (self.is_slow)(n) {
            let t = Instant::now();
            while t.elapsed() < self.slow {
                std::hint::spin_loop();
            }
        }
        WheelCommand::Targets([120, 80])
    }
}

fn build_busy(
    slow: Duration,
    is_slow: fn(u32) -> bool,
) -> (RtLoop, NrtEnds, NrtLinkPort, Arc<[AtomicU32; 3]>) {
    let (rt_ends, nrt) = channels(&ChannelConfig {
        robots: 2,
        ..Default::default()
    });
    let (rt_port, port) = link_port();
    let calls: Arc<[AtomicU32; 3]> = Arc::new(Default::default());
    let mut reg = Registry::new();
    let c = calls.clone();
    reg.register(
        "busy",
        Box::new(move |_| {
            Ok(Box::new(Busy {
                slow,
                is_slow,
                calls: c.clone(),
            }))
        }),
    )
    .unwrap();
    let (ctrls, _nrt_control) = reg.instantiate(2).unwrap();
    let cfg = RtConfig {
        controller_budget: BUDGET,
        controller_overruns: OVERRUNS,
        ..test_config()
    };
    let rt = RtLoop::new(cfg, rt_ends, rt_port, ctrls, Vec::new());
    (rt, nrt, port, calls)
}

fn owners(ev: &[RtEvent]) -> Vec<OwnerId> {
    ev.iter()
        .filter_map(|e| match e {
            RtEvent::Owner { owner, .. } => Some(*owner),
            _ => None,
        })
        .collect()
}

fn stopped(ev: &[RtEvent]) -> Vec<RtEvent> {
    ev.iter()
        .filter(|e| matches!(e, RtEvent::ControllerStopped { .. }))
        .copied()
        .collect()
}

#[test]
fn an_owner_over_budget_n_times_in_a_row_is_stopped_with_zero_speed_and_the_wheels_go_to_ros() {
    let slow = Duration::from_millis(3);
    let (mut rt, mut nrt, mut port, calls) = build_busy(slow, |_| true);
    let mut peer = attach(&mut rt, &mut port, &mut nrt, 0);
    configure(&mut nrt, &mut rt, 0);
    let p = nrt.nrt_params().clone();
    p.nrt_request_owner(RobotId(0), OwnerId::controller(0))
        .unwrap();
    rt.cycle(20 * MS);
    assert_eq!(received(&mut peer), [(SET_SPEED, vec![120, 80])]);
    rt.cycle(40 * MS);
    let ev = events(&mut nrt);
    assert!(stopped(&ev).is_empty(), "2 overruns of {OVERRUNS}");
    assert_eq!(calls[1].load(Ordering::Relaxed), 0);
    // the third in a row: stopped in this very cycle
    rt.cycle(60 * MS);
    assert_eq!(received(&mut peer), [(SET_SPEED, vec![0, 0])]);
    assert_eq!(calls[1].load(Ordering::Relaxed), 1, "its stop() was called");
    let ev = events(&mut nrt);
    let [RtEvent::ControllerStopped {
        robot,
        stop:
            handoff::OverBudget {
                owner,
                budget_ns,
                overruns,
                last_ns,
                max_ns,
            },
    }] = stopped(&ev)[..]
    else {
        panic!("one ControllerStopped: {ev:?}");
    };
    assert_eq!((robot, owner), (RobotId(0), OwnerId::controller(0)));
    assert_eq!((budget_ns, overruns), (500_000, OVERRUNS));
    assert!(
        last_ns >= 3_000_000 && max_ns >= last_ns,
        "{last_ns} {max_ns}"
    );
    assert_eq!(owners(&ev), [OwnerId::ROS], "the owner change is reported");
    // cmd_vel drives again
    p.nrt_set_cmd_vel(
        RobotId(0),
        Twist2 {
            linear: 0.1,
            angular: 0.0,
        },
    )
    .unwrap();
    rt.cycle(80 * MS);
    assert_eq!(received(&mut peer), [(SET_SPEED, vec![293, 293])]);
    assert_eq!(calls[2].load(Ordering::Relaxed), 3, "not updated any more");
    // it can be switched to again: its run starts from zero
    p.nrt_request_owner(RobotId(0), OwnerId::controller(0))
        .unwrap();
    rt.cycle(100 * MS);
    rt.cycle(120 * MS);
    assert_eq!(calls[0].load(Ordering::Relaxed), 2, "started again");
    let ev = events(&mut nrt);
    assert!(stopped(&ev).is_empty(), "{ev:?}");
    assert_eq!(owners(&ev), [OwnerId::controller(0)]);
    assert_eq!(received(&mut peer), [(SET_SPEED, vec![120, 80])]);
    rt.cycle(140 * MS);
    assert_eq!(stopped(&events(&mut nrt)).len(), 1, "stopped again");
    let t = rt.stats.controllers.table();
    let busy = t.times[0];
    assert_eq!((t.count, busy.update.count, busy.overruns), (1, 6, 6));
    assert_eq!(busy.budget_stops, 2);
    assert!(busy.update.p50 >= 3_000_000 && busy.update.max >= busy.update.p99);
    assert!(busy.serve.count >= 8, "served every cycle: {busy:?}");
}

#[test]
fn runs_broken_by_a_call_within_budget_never_stop_the_owner() {
    // two slow calls, then a fast one, again and again: never 3 in a row
    let (mut rt, mut nrt, mut port, calls) = build_busy(Duration::from_millis(2), |n| n % 3 != 2);
    let mut peer = attach(&mut rt, &mut port, &mut nrt, 0);
    configure(&mut nrt, &mut rt, 0);
    nrt.nrt_params()
        .nrt_request_owner(RobotId(0), OwnerId::controller(0))
        .unwrap();
    for k in 1..=9 {
        rt.cycle(k * 20 * MS);
    }
    let ev = events(&mut nrt);
    assert!(stopped(&ev).is_empty(), "{ev:?}");
    assert_eq!(owners(&ev).last(), Some(&OwnerId::controller(0)));
    assert_eq!(calls[1].load(Ordering::Relaxed), 0, "never stopped");
    assert_eq!(
        received(&mut peer).last(),
        Some(&(SET_SPEED, vec![120, 80]))
    );
    let busy = rt.stats.controllers.table().times[0];
    assert_eq!(
        (busy.update.count, busy.overruns, busy.budget_stops),
        (9, 6, 0)
    );
}
