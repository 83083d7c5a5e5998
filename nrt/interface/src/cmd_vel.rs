//! `cmd_vel` as a stamped twist (driver parameter `cmd_vel_stamped`: `geometry_msgs/TwistStamped` instead of
//! `Twist`): a command stamped longer ago than `cmd_vel_timeout` is ignored and counted
//! ([`nrt_engine::diagnostics::STALE_CMD_VEL`] in `/diagnostics`), and the first of a run of them is reported
//! ([`StaleFilter`]). The same rule on every front end.

use msgs::handoff::NodeId;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// A message's stamp: seconds and nanoseconds since the epoch (ROS time without `use_sim_time`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    /// Seconds (negative: before 1970).
    pub sec: i64,
    /// Nanoseconds.
    pub nanosec: u32,
}

/// The age beyond which a stamped command is ignored: `cmd_vel_timeout` (s); none when it is not positive (no
/// watchdog, no limit).
pub fn max_age(cmd_vel_timeout: f64) -> Option<Duration> {
    (cmd_vel_timeout > 0.0)
        .then(|| Duration::try_from_secs_f64(cmd_vel_timeout).ok())
        .flatten()
}

/// How old `stamp` is at `now` (system time). A zero stamp, which many publishers leave unset, is "now" (as
/// `diff_drive_controller` takes it); a stamp in the future has age zero.
pub fn stamp_age(stamp: Stamp, now: SystemTime) -> Duration {
    if stamp.sec == 0 && stamp.nanosec == 0 {
        return Duration::ZERO;
    }
    let Ok(sec) = u64::try_from(stamp.sec) else {
        return Duration::MAX; // before 1970
    };
    let at = UNIX_EPOCH + Duration::new(sec, stamp.nanosec.min(999_999_999));
    now.duration_since(at).unwrap_or(Duration::ZERO)
}

/// Ignores one robot's stamped commands older than `max_age` (see the module documentation); moved to the thread
/// or task that receives them.
pub struct StaleFilter {
    /// Its node (for messages).
    pub id: NodeId,
    /// Stamped commands older than this are ignored (`cmd_vel_timeout`; `None`: no limit).
    pub max_age: Option<Duration>,
    /// Stamped commands ignored (shown in `/diagnostics`).
    pub stale: Arc<AtomicU64>,
    ignoring: bool,
}

impl StaleFilter {
    /// The filter of node `id`'s commands (`max_age`: `cmd_vel_timeout`), counting in `stale`.
    pub fn new(id: NodeId, max_age: Option<Duration>, stale: Arc<AtomicU64>) -> StaleFilter {
        StaleFilter {
            id,
            max_age,
            stale,
            ignoring: false,
        }
    }

    /// `Ok` if a command stamped `stamp` (`None`: a plain `Twist`) is to be applied at `now`; a stale one is
    /// counted, with the line to report for the first of a run (the front end reports it).
    pub fn check(&mut self, stamp: Option<Stamp>, now: SystemTime) -> Result<(), Option<String>> {
        if let (Some(stamp), Some(max)) = (stamp, self.max_age) {
            let age = stamp_age(stamp, now);
            if age > max {
                self.stale.fetch_add(1, Ordering::Relaxed);
                if std::mem::replace(&mut self.ignoring, true) {
                    return Err(None);
                }
                return Err(Some(format!(
                        "node {}: cmd_vel stamped {:.3} s ago ignored (older than cmd_vel_timeout, {} s); \
                         further ones counted in /diagnostics, not logged until a fresh one",
                        self.id,
                        age.as_secs_f64(),
                    max.as_secs_f64()
                )));
            }
        }
        self.ignoring = false;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn time(sec: i64, nanosec: u32) -> Stamp {
        Stamp { sec, nanosec }
    }

    #[test]
    fn the_limit_is_cmd_vel_timeout_when_positive() {
        assert_eq!(max_age(0.5), Some(Duration::from_millis(500)));
        assert_eq!(max_age(0.0), None);
        assert_eq!(max_age(-1.0), None);
        assert_eq!(max_age(f64::INFINITY), None);
    }

    #[test]
    fn stamp_age_against_the_system_clock() {
        let now = UNIX_EPOCH + Duration::new(1_000, 500_000_000);
        assert_eq!(stamp_age(time(999, 0), now), Duration::from_millis(1500));
        assert_eq!(stamp_age(time(1_000, 500_000_000), now), Duration::ZERO);
        // in the future: not old
        assert_eq!(stamp_age(time(2_000, 0), now), Duration::ZERO);
        // unset: now
        assert_eq!(stamp_age(time(0, 0), now), Duration::ZERO);
        // before 1970: as old as can be
        assert_eq!(stamp_age(time(-1, 0), now), Duration::MAX);
    }

    #[test]
    fn stale_commands_are_counted_and_a_plain_or_fresh_one_passes() {
        let now = UNIX_EPOCH + Duration::new(1_000, 0);
        let stale = Arc::new(AtomicU64::new(0));
        let mut f = StaleFilter::new(NodeId(1), Some(Duration::from_millis(500)), stale.clone());
        let line = f
            .check(Some(time(998, 0)), now)
            .unwrap_err()
            .expect("reported");
        assert_eq!(
            line,
            "node 1: cmd_vel stamped 2.000 s ago ignored (older than cmd_vel_timeout, 0.5 s); further ones \
             counted in /diagnostics, not logged until a fresh one"
        );
        assert_eq!(f.check(Some(time(999, 0)), now), Err(None), "once per run");
        assert_eq!(stale.load(Ordering::Relaxed), 2);
        assert_eq!(f.check(Some(time(999, 800_000_000)), now), Ok(()));
        assert_eq!(f.check(None, now), Ok(()), "a plain Twist has no age");
        assert!(
            matches!(f.check(Some(time(1, 0)), now), Err(Some(_))),
            "a fresh one ended the run"
        );
        let mut unlimited = StaleFilter::new(NodeId(1), None, stale.clone());
        assert_eq!(unlimited.check(Some(time(1, 0)), now), Ok(()));
        assert_eq!(stale.load(Ordering::Relaxed), 3);
    }
}
