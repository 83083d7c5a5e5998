//! The rule "the RT thread hands a robot's odometry samples to a front end's publisher thread only while someone
//! listens to what that thread makes of them": `odom`, `/tf` (odom → base and the wheel links), `joint_states`
//! and, while `publish_limited_velocity` is on, `~/cmd_vel_out`. Each front end's publisher thread counts the
//! subscribers of those topics for every robot it publishes when [`DemandCheck::due`] (every [`DEMAND_CHECK`]) and
//! applies the result to its ring's [`OdomDemand`]: an unwatched robot's samples are then neither pushed nor
//! rung, so the publisher thread of an idle driver sleeps instead of waking at the odometry rate.
//!
//! A count that cannot be read counts as a subscriber (publishing for nobody is harmless, not publishing for
//! somebody is not). A new subscriber gets its first sample at most one [`DEMAND_CHECK`] after its publisher
//! matched it (the topics are volatile: a late subscriber misses what came before it anyway). The extended joint
//! states have their own rule ([`crate::joints::JointRates`]); the flight recorder's ring keeps every sample.

use handoff::{OdomDemand, RobotId};
use std::time::{Duration, Instant};

/// How often a publisher thread counts its subscribers.
pub const DEMAND_CHECK: Duration = Duration::from_millis(100);
/// How long a publisher thread whose robots are all wanted may wait for a sample before it counts its subscribers
/// anyway: their samples wake it, and it counts at the first wake-up past [`DEMAND_CHECK`] (a timer of its own would
/// only add wake-ups to a busy thread; a silent robot's listeners are counted at this pace).
pub const WANTED_RECHECK: Duration = Duration::from_secs(1);

/// The subscribers of what a publisher thread makes of one robot's samples (`None`: could not be counted).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Listeners {
    /// `odom`.
    pub odom: Option<usize>,
    /// `/tf` (shared by every robot).
    pub tf: Option<usize>,
    /// `joint_states`.
    pub joint_states: Option<usize>,
    /// `~/cmd_vel_out`; `Some(0)` while `publish_limited_velocity` is off (not published).
    pub cmd_vel_out: Option<usize>,
}

impl Listeners {
    /// Whether anyone (or someone not counted) listens.
    ///
    /// ```
    /// use nrt_interface::odom_demand::Listeners;
    ///
    /// let none = Listeners { odom: Some(0), tf: Some(0), joint_states: Some(0), cmd_vel_out: Some(0) };
    /// assert!(!none.wanted());
    /// assert!(Listeners { tf: Some(1), ..none }.wanted());
    /// assert!(Listeners { odom: None, ..none }.wanted(), "a count that failed is a listener");
    /// ```
    pub fn wanted(&self) -> bool {
        [self.odom, self.tf, self.joint_states, self.cmd_vel_out]
            .iter()
            .any(|n| n.is_none_or(|n| n > 0))
    }

    /// Every count set to `n`.
    pub fn with_all(self, n: Option<usize>) -> Listeners {
        Listeners {
            odom: n,
            tf: n,
            joint_states: n,
            cmd_vel_out: n,
        }
    }
}

/// Applies [`Listeners`] to one publisher thread's [`OdomDemand`] every [`DEMAND_CHECK`].
#[derive(Debug)]
pub struct DemandCheck {
    demand: OdomDemand,
    last: Option<Instant>,
    /// Every robot of the last check was wanted (their samples wake the thread).
    all_wanted: bool,
}

impl DemandCheck {
    /// For the ring whose demand is `demand` (every robot wanted until the first check).
    pub fn new(demand: OdomDemand) -> DemandCheck {
        DemandCheck {
            demand,
            last: None,
            all_wanted: false,
        }
    }

    /// Whether the subscribers are to be counted at `now`.
    pub fn due(&self, now: Instant) -> bool {
        self.last
            .is_none_or(|t| now.duration_since(t) >= DEMAND_CHECK)
    }

    /// How long the thread may wait from `now` before it counts (zero if due): until [`DemandCheck::due`], or
    /// [`WANTED_RECHECK`] after the last count while every robot is wanted (their samples wake it before).
    pub fn until_due(&self, now: Instant) -> Duration {
        let every = if self.all_wanted {
            WANTED_RECHECK
        } else {
            DEMAND_CHECK
        };
        self.last.map_or(Duration::ZERO, |t| {
            every.saturating_sub(now.duration_since(t))
        })
    }

    /// Wants exactly the robots of `robots` that someone listens to (the others' samples, and those of robots the
    /// thread does not publish, stop coming); checked at `now`.
    ///
    /// ```
    /// use handoff::{odom_out, RobotId};
    /// use nrt_interface::odom_demand::{DemandCheck, Listeners};
    /// use std::time::Instant;
    ///
    /// let (_rt, nrt) = odom_out(4);
    /// let mut check = DemandCheck::new(nrt.nrt_demand());
    /// let (now, quiet) = (Instant::now(), Listeners::default().with_all(Some(0)));
    /// assert!(check.due(now));
    /// check.apply(now, [(RobotId(0), quiet), (RobotId(1), Listeners { odom: Some(2), ..quiet })]);
    /// assert!(!check.due(now));
    /// let demand = nrt.nrt_demand();
    /// assert!(!demand.wants(RobotId(0)) && demand.wants(RobotId(1)) && !demand.wants(RobotId(2)));
    /// ```
    pub fn apply(&mut self, now: Instant, robots: impl IntoIterator<Item = (RobotId, Listeners)>) {
        self.last = Some(now);
        let (mut all_wanted, mut any) = (true, false);
        self.demand.nrt_want_only(
            robots
                .into_iter()
                .filter(|(_, l)| {
                    let wanted = l.wanted();
                    any = true;
                    all_wanted &= wanted;
                    wanted
                })
                .map(|(r, _)| r),
        );
        // no robot: nothing wakes the thread but its timer
        self.all_wanted = any && all_wanted;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use handoff::{odom_out, OdomSample, Twist2};

    #[test]
    fn a_robot_comes_and_goes_with_its_listeners_and_the_check_is_periodic() {
        let (mut rt, mut nrt) = odom_out(8);
        nrt.nrt_activate();
        let mut check = DemandCheck::new(nrt.nrt_demand());
        let of = |robot| OdomSample {
            robot: RobotId(robot),
            ..OdomSample::default()
        };
        let quiet = Listeners::default().with_all(Some(0));
        let t0 = Instant::now();
        assert!(
            rt.rt_publish(of(3), Twist2::default(), 1),
            "wanted before any check"
        );
        assert_eq!(check.until_due(t0), Duration::ZERO, "due before any check");
        check.apply(t0, [(RobotId(3), quiet)]);
        assert!(!rt.rt_publish(of(3), Twist2::default(), 2));
        assert!(!check.due(t0 + DEMAND_CHECK / 2));
        assert_eq!(check.until_due(t0 + DEMAND_CHECK / 4), DEMAND_CHECK * 3 / 4);
        assert_eq!(check.until_due(t0 + 2 * DEMAND_CHECK), Duration::ZERO);
        let later = t0 + DEMAND_CHECK;
        assert!(check.due(later));
        let watched = Listeners {
            cmd_vel_out: Some(1),
            ..quiet
        };
        check.apply(later, [(RobotId(3), watched)]);
        assert!(rt.rt_publish(of(3), Twist2::default(), 3));
        // every robot wanted: its samples wake the thread, which counts at the first wake-up past the period;
        // its own timer only backs that up
        assert!(check.due(later + DEMAND_CHECK));
        assert_eq!(
            check.until_due(later + DEMAND_CHECK / 4),
            WANTED_RECHECK - DEMAND_CHECK / 4
        );
        check.apply(later + DEMAND_CHECK, [(RobotId(3), quiet.with_all(None))]);
        assert!(
            rt.rt_publish(of(3), Twist2::default(), 4),
            "uncounted listeners are listeners"
        );
        check.apply(later + 2 * DEMAND_CHECK, []);
        assert_eq!(
            check.until_due(later + 2 * DEMAND_CHECK),
            DEMAND_CHECK,
            "no robot: the timer"
        );
        assert!(
            !rt.rt_publish(of(3), Twist2::default(), 5),
            "a robot no longer published is not wanted"
        );
        let handed: Vec<u64> = std::iter::from_fn(|| nrt.nrt_pop())
            .map(|h| h.handed_ns)
            .collect();
        assert_eq!(handed, [1, 3, 4]);
        assert_eq!(rt.rt_dropped(), 0);
    }
}
