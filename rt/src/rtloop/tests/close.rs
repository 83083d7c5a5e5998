//! The controllers' end of life: the RT thread hands its instances back in its exit, and NRT closes them
//! (`Controller::close`, the XBotCore plugin's `close`), never the RT thread.

use super::*;
use crate::controllers::{Controller, Registry, RobotView};
use handoff::WheelCommand;
use std::sync::atomic::AtomicU32;

/// Counts `close` calls.
struct Closing(Arc<AtomicU32>);

impl Controller for Closing {
    fn update(&mut self, _: &RobotView) -> WheelCommand {
        WheelCommand::Stop
    }
    fn close(&mut self) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}

#[test]
fn the_controllers_come_back_from_the_rt_thread_to_be_closed() {
    let (rt_ends, _nrt) = channels(&ChannelConfig {
        robots: 2,
        ..Default::default()
    });
    let (rt_port, _port) = link_port();
    let closed = Arc::new(AtomicU32::new(0));
    let mut reg = Registry::new();
    let c = closed.clone();
    reg.register(
        "closing",
        Box::new(move |_| Ok(Box::new(Closing(c.clone())))),
    )
    .unwrap();
    let (ctrls, _) = reg.instantiate(2).unwrap();
    let cfg = RtConfig {
        period: Duration::from_millis(1),
        ..test_config()
    };
    let handle = spawn(cfg, rt_ends, rt_port, ctrls, Vec::new()).unwrap();
    handle.stop();
    let mut exit = handle.join().unwrap();
    assert_eq!(
        closed.load(Ordering::Relaxed),
        0,
        "not closed on the RT thread"
    );
    assert_eq!(
        exit.controllers.close_all(),
        2,
        "one instance per robot slot"
    );
    assert_eq!(closed.load(Ordering::Relaxed), 2);
}
