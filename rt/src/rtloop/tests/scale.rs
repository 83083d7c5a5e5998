//! The work of an I/O wake-up stays with the robots it concerns: frames from one robot drive that robot (its
//! controllers, filters, targets) and not the others, which wait for the periodic cycle or an NRT input — so that
//! a period's work grows with the robot count, not with its square.

use super::*;
use crate::controllers::{Controller, Registry, RobotView};
use crate::rtloop::wait::Ready;
use handoff::{NodeId, RobotId, WheelCommand};
use std::sync::atomic::AtomicU32;

/// Counts its `serve` calls (one counter per robot slot).
struct Counting(Arc<AtomicU32>);

impl Controller for Counting {
    fn serve(&mut self, _: &RobotView, _: bool) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
    fn update(&mut self, _: &RobotView) -> WheelCommand {
        WheelCommand::Stop
    }
}

#[test]
fn an_io_wake_up_drives_the_robots_whose_frames_came_and_nrt_input_drives_all() {
    let (rt_ends, mut nrt) = channels(&ChannelConfig {
        robots: 2,
        ..Default::default()
    });
    let (rt_port, mut port) = link_port();
    let served: [Arc<AtomicU32>; 2] = Default::default();
    let mut reg = Registry::new();
    let s = served.clone();
    reg.register(
        "counting",
        Box::new(move |init| Ok(Box::new(Counting(s[init.robot().index()].clone())))),
    )
    .unwrap();
    let (ctrls, _) = reg.instantiate(2).unwrap();
    let mut rt = RtLoop::new(test_config(), rt_ends, rt_port, ctrls, Vec::new());
    let mut peer = attach(&mut rt, &mut port, &mut nrt, 0);
    for (robot, node) in [(0u8, NODE), (1, NODE + 1)] {
        nrt.nrt_push_command(RtCommand::ConfigureRobot {
            robot: RobotId(robot),
            config: RobotConfig::script(NodeId(node), ODOMETRY, SET_SPEED, false),
        })
        .unwrap();
    }
    rt.cycle(MS);
    let count = |r: usize| served[r].swap(0, Ordering::Relaxed);
    assert_eq!(
        (count(0), count(1)),
        (1, 1),
        "the periodic cycle drives both"
    );
    // robot 0's frames at ten I/O wake-ups: robot 0 driven each time, robot 1 never
    let links = Ready {
        links: 1,
        ..Ready::default()
    };
    for k in 0..10i16 {
        peer.write(&event(NODE, ODOMETRY, &[k, k, k])).unwrap();
        rt.io_wake(2 * MS + k as u64, links);
    }
    assert_eq!((count(0), count(1)), (10, 0));
    // robot 1's frame: robot 1 only
    peer.write(&event(NODE + 1, ODOMETRY, &[0, 0, 0])).unwrap();
    rt.io_wake(3 * MS, links);
    assert_eq!((count(0), count(1)), (0, 1));
    // a frame of no robot's node: nobody
    peer.write(&event(NODE + 7, ODOMETRY, &[0, 0, 0])).unwrap();
    rt.io_wake(4 * MS, links);
    assert_eq!((count(0), count(1)), (0, 0));
    // NRT input (a set-point may be any robot's) or a held-back change's deadline: both
    for ready in [
        Ready {
            wake: true,
            ..Ready::default()
        },
        Ready {
            timer: true,
            ..Ready::default()
        },
    ] {
        rt.io_wake(5 * MS, ready);
        assert_eq!((count(0), count(1)), (1, 1), "{ready:?}");
    }
}
