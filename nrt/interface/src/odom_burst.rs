//! The order in which a front end's odometry publisher thread publishes the samples that wait for
//! it, the same for ROS 1 and ROS 2.
//!
//! When one RT wake decodes the frames of many robots (a classroom's simulator, several robots
//! behind one dongle), their samples reach the publisher thread together. Publishing each
//! sample's `odom`, `/tf` and `joint_states` in turn makes the last robot's `odom` wait behind
//! three publications per robot before it; publishing every waiting sample's `odom` first, then
//! their `/tf` and `joint_states`, makes it wait behind one. A [`Burst`] takes the waiting
//! samples in that order: in the order they were handed over, at most one per robot (a front end
//! may keep one set of messages per robot, filled in the first pass and published in the second:
//! a robot's next sample waits for the next burst) and at most [`Burst::MAX`] at once.

use handoff::OdomHandoff;

/// The samples published together: each with what the first pass left for the second (`T`).
#[derive(Debug)]
pub struct Burst<T> {
    items: Vec<(OdomHandoff, Option<T>)>,
    /// A robot's next sample, taken from the ring while the burst already had one of that robot.
    carry: Option<OdomHandoff>,
}

impl<T> Default for Burst<T> {
    fn default() -> Self {
        Burst::new()
    }
}

impl<T> Burst<T> {
    /// Most samples in one burst.
    pub const MAX: usize = 64;

    /// An empty burst, with room for [`Burst::MAX`] samples (allocated once).
    pub fn new() -> Burst<T> {
        Burst {
            items: Vec::with_capacity(Self::MAX),
            carry: None,
        }
    }

    /// Replaces the burst with the next samples `pop` gives (see the module documentation);
    /// false when none waits.
    ///
    /// ```
    /// use handoff::{OdomHandoff, OdomSample, RobotId};
    /// use nrt_interface::odom_burst::Burst;
    /// let of = |robot| OdomHandoff {
    ///     sample: OdomSample { robot: RobotId(robot), ..OdomSample::default() },
    ///     handed_ns: 0,
    ///     commanded: Default::default(),
    /// };
    /// let mut waiting = vec![of(1), of(2), of(1)].into_iter();
    /// let mut burst: Burst<u64> = Burst::new();
    /// assert!(burst.take(|| waiting.next()));
    /// for (h, first) in burst.items_mut() {
    ///     *first = Some(u64::from(h.sample.robot.0)); // publish `odom`, keep what is left
    /// }
    /// let left: Vec<u64> = burst.items_mut().iter_mut().filter_map(|(_, f)| f.take()).collect();
    /// assert_eq!(left, [1, 2]);
    /// assert!(burst.take(|| waiting.next())); // robot 1's second sample
    /// assert!(!burst.take(|| waiting.next()));
    /// ```
    pub fn take(&mut self, mut pop: impl FnMut() -> Option<OdomHandoff>) -> bool {
        self.items.clear();
        while self.items.len() < Self::MAX {
            let Some(h) = self.carry.take().or_else(&mut pop) else {
                break;
            };
            if self
                .items
                .iter()
                .any(|(b, _)| b.sample.robot == h.sample.robot)
            {
                self.carry = Some(h);
                break;
            }
            self.items.push((h, None));
        }
        !self.items.is_empty()
    }

    /// The burst's samples, in order, each with what its first pass left (`None` until set).
    pub fn items_mut(&mut self) -> &mut [(OdomHandoff, Option<T>)] {
        &mut self.items
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use handoff::{OdomSample, RobotId};
    use std::collections::VecDeque;

    fn of(robot: u8, t_ns: u64) -> OdomHandoff {
        OdomHandoff {
            sample: OdomSample {
                robot: RobotId(robot),
                t_ns,
                ..OdomSample::default()
            },
            handed_ns: t_ns,
            commanded: Default::default(),
        }
    }

    fn taken(b: &mut Burst<()>) -> Vec<(u8, u64)> {
        b.items_mut()
            .iter()
            .map(|(h, _)| (h.sample.robot.0, h.sample.t_ns))
            .collect()
    }

    #[test]
    fn bursts_take_one_sample_per_robot_in_order() {
        let mut waiting: VecDeque<OdomHandoff> = [of(1, 1), of(2, 2), of(1, 3), of(3, 4)].into();
        let mut burst = Burst::new();
        assert!(burst.take(|| waiting.pop_front()));
        assert_eq!(taken(&mut burst), [(1, 1), (2, 2)]);
        assert!(burst.take(|| waiting.pop_front()));
        assert_eq!(taken(&mut burst), [(1, 3), (3, 4)]);
        assert!(!burst.take(|| waiting.pop_front()));
        assert!(burst.carry.is_none());
    }

    #[test]
    fn at_most_max_at_once_the_rest_in_the_next() {
        let n = Burst::<()>::MAX as u8 + 3;
        let mut many: VecDeque<OdomHandoff> = (0..n).map(|r| of(r, r as u64)).collect();
        let mut burst = Burst::new();
        assert!(burst.take(|| many.pop_front()));
        assert_eq!(burst.items_mut().len(), Burst::<()>::MAX);
        assert!(burst.take(|| many.pop_front()));
        assert_eq!(taken(&mut burst), [(64, 64), (65, 65), (66, 66)]);
    }
}
