//! One odometry consumer's rings, one per group of robots: a front end may publish with several
//! threads, each owning the robots whose index modulo the number of groups is its own, so that the
//! samples of robots whose frames arrive together do not wait for each other behind one thread.
//!
//! Every ring is made at start ([`super::ChannelConfig::odometry_out_groups`] of them per consumer);
//! the consumer says how many it uses when it takes them ([`NrtOdomGroups::nrt_take`]: a front
//! end all of them, the flight recorder one, which then gets every robot's samples). The RT side
//! pushes a sample to the ring of its robot's group only: one relaxed-cost atomic load, an index,
//! the ring's own push (no allocation, no lock).

use super::control::JointStateSample;
use super::ids::RobotId;
use super::odom_out::{odom_out, NrtOdomOut, RtOdomOut};
use super::values::{OdomSample, Twist2};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// RT half of one consumer: its rings, and how many of them it took (0: not taken yet).
#[derive(Debug)]
pub(crate) struct RtOdomGroups {
    rings: Box<[RtOdomOut]>,
    groups: Arc<AtomicUsize>,
}

/// NRT half of one consumer, until it is taken.
#[derive(Debug)]
pub(crate) struct NrtOdomGroups {
    rings: Vec<NrtOdomOut>,
    groups: Arc<AtomicUsize>,
}

/// `groups` rings (at least one) of `capacity` samples each.
pub(crate) fn odom_groups(groups: usize, capacity: usize) -> (RtOdomGroups, NrtOdomGroups) {
    let (rt, nrt): (Vec<_>, Vec<_>) = (0..groups.max(1)).map(|_| odom_out(capacity)).unzip();
    let taken = Arc::new(AtomicUsize::new(0));
    (
        RtOdomGroups {
            rings: rt.into_boxed_slice(),
            groups: taken.clone(),
        },
        NrtOdomGroups {
            rings: nrt,
            groups: taken,
        },
    )
}

impl RtOdomGroups {
    /// The ring of `robot`'s group, once the consumer took its rings.
    fn ring(&mut self, robot: RobotId) -> Option<&mut RtOdomOut> {
        match self.groups.load(Ordering::Acquire) {
            0 => None,
            k => self.rings.get_mut(usize::from(robot.0) % k),
        }
    }

    /// [`RtOdomOut::rt_publish`] on the ring of the sample's robot.
    pub(crate) fn rt_publish(
        &mut self,
        sample: OdomSample,
        commanded: Twist2,
        handed: u64,
    ) -> bool {
        self.ring(sample.robot)
            .is_some_and(|r| r.rt_publish(sample, commanded, handed))
    }

    /// [`RtOdomOut::rt_publish_joint`] on the ring of the joint state's robot.
    pub(crate) fn rt_publish_joint(&mut self, sample: JointStateSample) -> bool {
        self.ring(sample.robot)
            .is_some_and(|r| r.rt_publish_joint(sample))
    }

    /// Samples dropped on every ring of this consumer.
    pub(crate) fn rt_dropped(&self) -> u64 {
        self.rings.iter().map(RtOdomOut::rt_dropped).sum()
    }
}

impl NrtOdomGroups {
    /// Takes `groups` rings (at least one, at most as many as were made), activated: robot `r`'s
    /// samples go to ring `r % groups` from now on; the other rings are dropped.
    pub(crate) fn nrt_take(mut self, groups: usize) -> Vec<NrtOdomOut> {
        let k = groups.clamp(1, self.rings.len());
        self.rings.truncate(k);
        for r in &mut self.rings {
            r.nrt_activate();
        }
        // after the rings are active: the RT side that sees `k` finds them taken
        self.groups.store(k, Ordering::Release);
        self.rings
    }

    /// How many rings were made.
    pub(crate) fn len(&self) -> usize {
        self.rings.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(robot: u8) -> OdomSample {
        OdomSample {
            robot: RobotId(robot),
            ..OdomSample::default()
        }
    }

    #[test]
    fn each_robot_goes_to_its_group_only_once_taken() {
        let (mut rt, nrt) = odom_groups(3, 8);
        assert_eq!(nrt.len(), 3);
        assert!(!rt.rt_publish(of(0), Twist2::default(), 1), "not taken yet");
        let mut rings = nrt.nrt_take(2);
        assert_eq!(rings.len(), 2);
        for robot in 0..5 {
            assert!(rt.rt_publish(of(robot), Twist2::default(), u64::from(robot)));
        }
        assert!(rt.rt_publish_joint(JointStateSample {
            robot: RobotId(3),
            ..JointStateSample::default()
        }));
        let robots = |r: &mut NrtOdomOut| -> Vec<u8> {
            std::iter::from_fn(|| r.nrt_pop())
                .map(|h| h.sample.robot.0)
                .collect()
        };
        assert_eq!(robots(&mut rings[0]), [0, 2, 4]);
        assert_eq!(robots(&mut rings[1]), [1, 3]);
        assert_eq!(rings[1].nrt_pop_joint().map(|j| j.robot), Some(RobotId(3)));
        assert_eq!(rings[0].nrt_pop_joint(), None);
        assert_eq!(rt.rt_dropped(), 0);
        drop(rings);
        assert!(!rt.rt_publish(of(0), Twist2::default(), 9), "gone");
    }

    #[test]
    fn one_group_taken_gets_every_robot() {
        let (mut rt, nrt) = odom_groups(4, 8);
        let mut rings = nrt.nrt_take(0);
        assert_eq!(rings.len(), 1);
        for robot in [0, 1, 2, 63] {
            assert!(rt.rt_publish(of(robot), Twist2::default(), 0));
        }
        assert_eq!(std::iter::from_fn(|| rings[0].nrt_pop()).count(), 4);
    }
}
