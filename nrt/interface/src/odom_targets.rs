//! The robots whose odometry a front end's publisher threads publish (`odom_thread`), shared by the NRT
//! loop (which adds, removes and updates robots) and those threads. One slot per RT robot, each behind a mutex of
//! its own, held only to change that robot's entry or to publish one of its samples: the threads, each owning a
//! group of robots, never wait for each other's publishing, and a robot removed has no publish in flight.

use crate::frames::Frames;
use crate::odometry::{OdomSettings, RateLimit};
use handoff::{NodeId, OdomSample, RobotId, MAX_ROBOTS};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// What the thread needs of one robot (made by the NRT loop when the robot appears).
pub struct OdomRobot<P> {
    /// Its Aseba node (a sample of another node in the same RT slot is not published).
    pub node: NodeId,
    /// Its frames.
    pub frames: Frames,
    /// How its messages are made (covariances, `enable_odom_tf`, axis); updated live ([`OdomTargets::set_settings`]).
    pub settings: OdomSettings,
    /// Its `odom_max_rate` [Hz] (start-only): at most this many samples per second; ≤ 0: all.
    pub max_rate: f64,
    /// Whether `~/cmd_vel_out` is published (its `publish_limited_velocity`, set live by the NRT loop).
    pub limited_velocity: Arc<AtomicBool>,
    /// Whether the wheels (base_link → wheel links) go on `/tf`: the driver publishes the model (`publish_model`);
    /// without it they are the user's robot_state_publisher's (from `joint_states`, still published).
    pub wheel_tf: bool,
    /// The front end's publishers of this robot (`odom`, `joint_states`, `~/cmd_vel_out`, and what they need).
    pub out: P,
}

/// One robot's entry.
pub(crate) struct Entry<P> {
    pub(crate) robot: OdomRobot<P>,
    /// Changes whenever the entry does (the sink then prepares its messages again).
    pub(crate) generation: u64,
    pub(crate) rate: RateLimit,
}

/// A robot's slot: its entry while it is a target.
pub(crate) type Slot<'a, P> = MutexGuard<'a, Option<Entry<P>>>;

struct Slots<P> {
    /// Indexed by [`RobotId`] (`0..MAX_ROBOTS`).
    robots: Box<[Mutex<Option<Entry<P>>>]>,
    generations: AtomicU64,
}

/// The robots whose odometry is published, shared by the NRT loop and the publisher threads.
pub struct OdomTargets<P>(Arc<Slots<P>>);

impl<P> Clone for OdomTargets<P> {
    fn clone(&self) -> Self {
        OdomTargets(self.0.clone())
    }
}

impl<P> Default for OdomTargets<P> {
    fn default() -> Self {
        OdomTargets(Arc::new(Slots {
            robots: (0..MAX_ROBOTS).map(|_| Mutex::new(None)).collect(),
            generations: AtomicU64::new(0),
        }))
    }
}

impl<P> OdomTargets<P> {
    /// The slot of `robot` (`None` past [`MAX_ROBOTS`]: no RT robot).
    pub(crate) fn slot(&self, robot: RobotId) -> Option<Slot<'_, P>> {
        let m = self.0.robots.get(usize::from(robot.0))?;
        Some(m.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// The robots that may have a slot, in order.
    pub(crate) fn ids() -> impl Iterator<Item = RobotId> {
        (0..MAX_ROBOTS).filter_map(|r| u8::try_from(r).ok().map(RobotId))
    }

    fn next_generation(&self) -> u64 {
        self.0.generations.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// Publishes the odometry of RT robot `robot` with `entry` from now on (`robot` is below [`MAX_ROBOTS`], as
    /// every RT robot's id).
    pub fn insert(&self, robot: RobotId, entry: OdomRobot<P>) {
        let generation = self.next_generation();
        if let Some(mut slot) = self.slot(robot) {
            *slot = Some(Entry {
                rate: RateLimit::new(entry.max_rate),
                robot: entry,
                generation,
            });
        }
    }

    /// Stops publishing the odometry of `robot`; once this returns, no publish on its publishers is in flight (so
    /// they may be destroyed).
    pub fn remove(&self, robot: RobotId) {
        let gone = self.slot(robot).and_then(|mut s| s.take());
        drop(gone);
    }

    /// Applies new odometry settings of `robot` (calibration, covariances, `enable_odom_tf`; no-op when unchanged).
    pub fn set_settings(&self, robot: RobotId, settings: &OdomSettings) {
        let Some(mut slot) = self.slot(robot) else {
            return;
        };
        if let Some(e) = slot.as_mut().filter(|e| e.robot.settings != *settings) {
            e.robot.settings = settings.clone();
            e.generation = self.next_generation();
        }
    }
}

/// The entry sample `s` is published with: its robot's, if that robot is a target and still the same node.
pub(crate) fn entry_of<'s, P>(
    slot: &'s mut Slot<'_, P>,
    s: &OdomSample,
) -> Option<&'s mut Entry<P>> {
    slot.as_mut().filter(|e| e.robot.node == s.node)
}
