//! What the RT reflexes (the obstacle stop, the cliff stop) share: taking the translation a reflex forbids out of any
//! owner's command while keeping the turn ([`hold_translation`]), and each robot's engaged state with its
//! engage/release edges reported to NRT ([`ReflexState`]). Each reflex only says when it holds.

use super::RobotView;
use handoff::{RobotId, RtPublisher, WheelCommand, MAX_ROBOTS};

/// Published when a reflex engages or releases for a robot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReflexEvent {
    /// Robot.
    pub robot: RobotId,
    /// Engaged (true) or released.
    pub engaged: bool,
    /// Time (ns).
    pub t_ns: u64,
}

/// Takes out of `cmd` the translation that `blocks(forward)` forbids, `forward` being the command's forward part (a
/// twist's linear speed, the sum of the wheels): a twist loses its linear part, wheel speeds or raw targets lose their
/// common part and keep their difference (the turn). Whether it took anything out. Never allocates.
///
/// # Example
///
/// ```
/// use handoff::{Twist2, WheelCommand};
/// use rt::controllers::hold_translation;
///
/// let mut cmd = WheelCommand::WheelSpeeds([0.1, 0.2]);
/// assert!(hold_translation(&mut cmd, |forward| forward > 0.0));
/// assert_eq!(cmd, WheelCommand::WheelSpeeds([-0.05, 0.05]));
/// let mut back = WheelCommand::Twist(Twist2 { linear: -0.1, angular: 0.3 });
/// assert!(!hold_translation(&mut back, |forward| forward > 0.0));
/// ```
pub fn hold_translation(cmd: &mut WheelCommand, blocks: impl Fn(f64) -> bool) -> bool {
    match cmd {
        WheelCommand::Stop => false,
        WheelCommand::Twist(t) => {
            let held = blocks(t.linear);
            if held {
                t.linear = 0.0;
            }
            held
        }
        WheelCommand::WheelSpeeds([l, r]) => {
            let held = blocks(*l + *r);
            if held {
                let turn = (*r - *l) / 2.0;
                (*l, *r) = (-turn, turn);
            }
            held
        }
        WheelCommand::Targets([l, r]) => {
            let held = blocks(f64::from(*l) + f64::from(*r));
            if held {
                let turn = ((i32::from(*r) - i32::from(*l)) / 2) as i16;
                (*l, *r) = (-turn, turn);
            }
            held
        }
    }
}

/// Whether a reflex holds each robot, with the edges published as [`ReflexEvent`]s.
#[derive(Debug)]
pub struct ReflexState {
    engaged: [bool; MAX_ROBOTS],
    events: Option<RtPublisher<ReflexEvent>>,
}

impl Default for ReflexState {
    fn default() -> Self {
        ReflexState {
            engaged: [false; MAX_ROBOTS],
            events: None,
        }
    }
}

impl ReflexState {
    /// Reports the edges to `events` from now on.
    pub fn set_events(&mut self, events: RtPublisher<ReflexEvent>) {
        self.events = Some(events);
    }

    /// Whether the reflex holds `robot`.
    pub fn engaged(&self, robot: RobotId) -> bool {
        self.engaged.get(robot.index()).copied().unwrap_or(false)
    }

    /// Records whether the reflex holds `robot` in this cycle, publishing an edge (a full ring drops it, never
    /// blocks).
    pub fn record(&mut self, robot: &RobotView, engaged: bool) {
        let Some(slot) = self.engaged.get_mut(robot.robot.index()) else {
            return;
        };
        if *slot != engaged {
            *slot = engaged;
            if let Some(ev) = &mut self.events {
                ev.rt_publish(ReflexEvent {
                    robot: robot.robot,
                    engaged,
                    t_ns: robot.now_ns,
                });
            }
        }
    }
}
