//! RT → publisher odometry: the XBotCore way out of the RT domain. The RT thread pushes each
//! odometry sample (with the time it handed it over) into a ring of its own and rings a
//! doorbell; a publisher thread on the NRT side waits on that doorbell and publishes at once,
//! without going through the NRT engine loop.
//!
//! The publisher half is taken once ([`super::NrtEnds::nrt_take_odometry_out`]); until it is
//! taken the RT side pushes nothing (no drops are counted for a consumer that does not exist).
//! Its [`OdomDemand`] says which robots' samples it wants (all by default): a front end that
//! finds nobody subscribed to anything it makes of a robot's odometry clears that robot's bit,
//! and the RT thread then neither pushes those samples nor wakes the publisher for them (an idle
//! driver's publisher thread sleeps).

use super::control::JointStateSample;
use super::doorbell::Doorbell;
use super::ids::{RobotId, MAX_ROBOTS};
use super::publisher::{publisher, NrtPublisher, RtPublisher};
use super::values::{OdomSample, Twist2};
use std::os::fd::BorrowedFd;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// An odometry sample as handed to the publisher thread.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OdomHandoff {
    /// The sample (its `wire_ns` and `t_ns` time the RT hops).
    pub sample: OdomSample,
    /// When the RT thread pushed it (CLOCK_MONOTONIC ns): the start of the hand-off → publish
    /// hop.
    pub handed_ns: u64,
    /// The twist the RT loop commanded the robot when it handed the sample over: its owner's
    /// command after the filters and the motion limits, before the wheel mapping (zero while
    /// stopped) — diff_drive_controller's `~/cmd_vel_out` (the limited velocity) for a front
    /// end to publish.
    pub commanded: Twist2,
}

// `OdomDemand` is a bit set of robots.
const _: () = assert!(MAX_ROBOTS <= 64);

/// Which robots' odometry samples a publisher half wants, shared between its owner (NRT, which
/// sets it) and the RT half (which reads it before each push): one bit per [`RobotId`], every
/// robot wanted until told otherwise. Extended joint states are not filtered by it (the RT
/// thread makes them only for subscribed robots already).
///
/// # Example
///
/// ```
/// use handoff::{odom_out, OdomSample, RobotId, Twist2};
///
/// let (mut rt, mut nrt) = odom_out(4);
/// nrt.nrt_activate();
/// let demand = nrt.nrt_demand();
/// demand.nrt_want(RobotId(1), false); // nobody listens to robot 1
/// let of = |robot| OdomSample { robot: RobotId(robot), ..OdomSample::default() };
/// assert!(!rt.rt_publish(of(1), Twist2::default(), 1)); // not pushed, nobody woken
/// assert!(rt.rt_publish(of(0), Twist2::default(), 2));
/// assert_eq!(rt.rt_dropped(), 0, "an unwanted sample is not a drop");
/// assert_eq!(nrt.nrt_pop().map(|h| h.sample.robot), Some(RobotId(0)));
/// ```
#[derive(Debug, Clone)]
pub struct OdomDemand(Arc<AtomicU64>);

impl OdomDemand {
    fn new() -> OdomDemand {
        OdomDemand(Arc::new(AtomicU64::new(u64::MAX)))
    }

    fn bit(robot: RobotId) -> u64 {
        // RobotId < MAX_ROBOTS <= 64 (asserted above); an out-of-range id maps to no robot
        1u64.checked_shl(u32::from(robot.0)).unwrap_or(0)
    }

    /// Whether samples of `robot` are wanted (read by the RT half: one relaxed load).
    pub fn wants(&self, robot: RobotId) -> bool {
        self.0.load(Ordering::Relaxed) & Self::bit(robot) != 0
    }

    /// Wants the samples of `robot` from now on, or no longer.
    pub fn nrt_want(&self, robot: RobotId, wanted: bool) {
        let bit = Self::bit(robot);
        if wanted {
            self.0.fetch_or(bit, Ordering::Relaxed);
        } else {
            self.0.fetch_and(!bit, Ordering::Relaxed);
        }
    }

    /// Wants exactly `robots` (the others no longer).
    pub fn nrt_want_only(&self, robots: impl IntoIterator<Item = RobotId>) {
        let mask = robots.into_iter().fold(0, |m, r| m | Self::bit(r));
        self.0.store(mask, Ordering::Relaxed);
    }
}

/// RT half: pushes without blocking and rings the publisher's doorbell.
#[derive(Debug)]
pub struct RtOdomOut {
    queue: RtPublisher<OdomHandoff>,
    joints: RtPublisher<JointStateSample>,
    bell: Doorbell,
    taken: Arc<AtomicBool>,
    demand: OdomDemand,
}

/// Publisher half (NRT): waits for samples and pops them. `Send`, owned by one thread.
#[derive(Debug)]
pub struct NrtOdomOut {
    queue: NrtPublisher<OdomHandoff>,
    joints: NrtPublisher<JointStateSample>,
    bell: Doorbell,
    taken: Arc<AtomicBool>,
    demand: OdomDemand,
}

/// A pair with room for `capacity` samples in flight; the RT half pushes nothing until the NRT
/// half is marked taken ([`NrtOdomOut::nrt_activate`]).
///
/// # Example
///
/// ```
/// use handoff::{odom_out, OdomSample, Twist2};
/// use std::time::Duration;
///
/// let (mut rt, mut nrt) = odom_out(4);
/// assert!(!rt.rt_publish(OdomSample::default(), Twist2::default(), 1)); // nobody publishes yet
/// nrt.nrt_activate();
/// assert!(rt.rt_publish(OdomSample::default(), Twist2::default(), 2));
/// assert!(nrt.nrt_wait(Duration::from_secs(5)));
/// assert_eq!(nrt.nrt_pop().map(|h| h.handed_ns), Some(2));
/// ```
pub fn odom_out(capacity: usize) -> (RtOdomOut, NrtOdomOut) {
    let (rt, nrt) = publisher(capacity);
    let (joints_rt, joints_nrt) = publisher(capacity);
    let bell = Doorbell::new();
    let taken = Arc::new(AtomicBool::new(false));
    let demand = OdomDemand::new();
    (
        RtOdomOut {
            queue: rt,
            joints: joints_rt,
            bell: bell.clone(),
            taken: taken.clone(),
            demand: demand.clone(),
        },
        NrtOdomOut {
            queue: nrt,
            joints: joints_nrt,
            bell,
            taken,
            demand,
        },
    )
}

impl RtOdomOut {
    /// Queues a sample handed over at `handed_ns`, with the twist commanded then, and rings the
    /// publisher; false if nobody publishes, the publisher does not want this robot's samples
    /// ([`OdomDemand`]) or the queue is full (only then dropped and counted).
    pub fn rt_publish(&mut self, sample: OdomSample, commanded: Twist2, handed_ns: u64) -> bool {
        if !self.taken.load(Ordering::Acquire)
            || !self.demand.wants(sample.robot)
            || self.queue.rt_peer_gone()
        {
            return false;
        }
        let ok = self.queue.rt_publish_quiet(OdomHandoff {
            sample,
            handed_ns,
            commanded,
        });
        self.bell.ring();
        ok
    }

    /// Queues an extended joint state and rings the publisher; false if nobody publishes or
    /// the queue is full (then dropped and counted).
    pub fn rt_publish_joint(&mut self, sample: JointStateSample) -> bool {
        if !self.taken.load(Ordering::Acquire) || self.joints.rt_peer_gone() {
            return false;
        }
        let ok = self.joints.rt_publish_quiet(sample);
        self.bell.ring();
        ok
    }

    /// Samples (odometry and joint states) dropped because the publisher was behind.
    pub fn rt_dropped(&self) -> u64 {
        self.queue.rt_dropped() + self.joints.rt_dropped()
    }
}

impl NrtOdomOut {
    /// Marks this half as in use: from now on the RT side pushes.
    pub fn nrt_activate(&mut self) {
        self.taken.store(true, Ordering::Release);
    }

    /// Which robots' samples this half wants (shared: keep a clone where subscribers are counted).
    pub fn nrt_demand(&self) -> OdomDemand {
        self.demand.clone()
    }

    /// The doorbell [`NrtOdomOut::nrt_wait`] waits on: ring it to end that wait early (e.g. to stop the thread).
    pub fn nrt_bell(&self) -> Doorbell {
        self.bell.clone()
    }

    /// Waits until a sample may be there or `timeout` passed (see [`Doorbell::wait`]).
    pub fn nrt_wait(&self, timeout: Duration) -> bool {
        self.bell.wait(timeout)
    }

    /// The doorbell's fd, to wait on it beside others (then [`NrtOdomOut::nrt_drain_bell`]).
    pub fn nrt_fd(&self) -> Option<BorrowedFd<'_>> {
        self.bell.fd()
    }

    /// Consumes the rings so far without waiting.
    pub fn nrt_drain_bell(&self) -> bool {
        self.bell.drain()
    }

    /// The oldest sample not yet taken.
    pub fn nrt_pop(&mut self) -> Option<OdomHandoff> {
        self.queue.nrt_pop()
    }

    /// The oldest joint state not yet taken.
    pub fn nrt_pop_joint(&mut self) -> Option<JointStateSample> {
        self.joints.nrt_pop()
    }

    /// Whether the RT half is gone (the RT thread ended).
    pub fn nrt_peer_gone(&self) -> bool {
        self.queue.nrt_peer_gone()
    }
}

impl Drop for NrtOdomOut {
    fn drop(&mut self) {
        self.taken.store(false, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_flow_in_order_only_while_taken() {
        let (mut rt, mut nrt) = odom_out(2);
        let s = |seq| OdomSample {
            seq,
            ..OdomSample::default()
        };
        assert!(!rt.rt_publish(s(0), Twist2::default(), 0));
        nrt.nrt_activate();
        assert!(rt.rt_publish(s(1), Twist2::default(), 10));
        assert!(rt.rt_publish(s(2), Twist2::default(), 20));
        assert!(!rt.rt_publish(s(3), Twist2::default(), 30)); // full
        assert_eq!(rt.rt_dropped(), 1);
        assert!(nrt.nrt_drain_bell());
        assert_eq!(
            nrt.nrt_pop().map(|h| (h.sample.seq, h.handed_ns)),
            Some((1, 10))
        );
        assert_eq!(nrt.nrt_pop().map(|h| h.sample.seq), Some(2));
        let go = Twist2 {
            linear: 0.1,
            angular: -0.2,
        };
        assert!(rt.rt_publish(s(5), go, 50));
        assert_eq!(nrt.nrt_pop().map(|h| h.commanded), Some(go));
        assert_eq!(nrt.nrt_pop(), None);
        assert!(rt.rt_publish_joint(JointStateSample {
            t_ns: 7,
            ..JointStateSample::default()
        }));
        assert_eq!(nrt.nrt_pop_joint().map(|j| j.t_ns), Some(7));
        assert_eq!(
            nrt.nrt_pop(),
            None,
            "joint states do not enter the odometry queue"
        );
        drop(nrt);
        assert!(!rt.rt_publish(s(4), Twist2::default(), 40));
        assert_eq!(rt.rt_dropped(), 1, "a gone publisher is not a drop");
    }

    #[test]
    fn unwanted_robots_are_neither_pushed_nor_rung_and_come_back_when_wanted() {
        let (mut rt, mut nrt) = odom_out(4);
        nrt.nrt_activate();
        let demand = nrt.nrt_demand();
        let of = |robot| OdomSample {
            robot: RobotId(robot),
            ..OdomSample::default()
        };
        assert!(
            demand.wants(RobotId(0)) && demand.wants(RobotId(63)),
            "all by default"
        );
        demand.nrt_want_only([]);
        assert!(!rt.rt_publish(of(0), Twist2::default(), 1));
        assert!(!nrt.nrt_drain_bell(), "nobody woken for an unwanted sample");
        assert_eq!(nrt.nrt_pop(), None);
        assert!(
            rt.rt_publish_joint(JointStateSample::default()),
            "joint states are not filtered"
        );
        assert!(nrt.nrt_drain_bell());
        demand.nrt_want(RobotId(5), true);
        assert!(rt.rt_publish(of(5), Twist2::default(), 2));
        assert!(!rt.rt_publish(of(4), Twist2::default(), 3));
        demand.nrt_want(RobotId(5), false);
        assert!(!rt.rt_publish(of(5), Twist2::default(), 4));
        assert_eq!(nrt.nrt_pop().map(|h| h.handed_ns), Some(2));
        assert_eq!(nrt.nrt_pop(), None);
        assert_eq!(rt.rt_dropped(), 0);
        assert!(
            !OdomDemand::new().wants(RobotId(64)),
            "no robot past MAX_ROBOTS"
        );
    }
}
