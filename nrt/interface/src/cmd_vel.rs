//! `cmd_vel` → the RT set-point of one robot, from the front end's receiving thread (the hot path: no NRT loop in
//! between). A stamped command older than `cmd_vel_timeout` is ignored and counted; a refused command (NaN,
//! infinite) leaves the last good set-point in force. A run of either is reported once (the text the gate gives
//! back), until a good command ends it.

use crate::geometry::Stamp;
use handoff::{NodeId, NrtLiveParams, RobotId, Twist2};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// How old a command stamped `stamp` is at `now` (system time, ROS time without `use_sim_time`). A zero stamp,
/// which many publishers leave unset, is "now" (as `diff_drive_controller` takes it); a stamp in the future has
/// age zero. `None` (before 1970) is as old as can be.
pub fn stamp_age(stamp: Option<Stamp>, now: Stamp) -> Duration {
    match stamp {
        None => Duration::MAX,
        Some(s) if s.is_zero() => Duration::ZERO,
        Some(s) => now.saturating_sub(s),
    }
}

/// The age beyond which a stamped command is ignored: `cmd_vel_timeout` \[s\]; none when it is not positive (no
/// watchdog, no limit) or not finite.
pub fn max_age(cmd_vel_timeout: f64) -> Option<Duration> {
    (cmd_vel_timeout > 0.0)
        .then(|| Duration::try_from_secs_f64(cmd_vel_timeout).ok())
        .flatten()
}

/// What became of one command.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// Stored as the set-point.
    Stored,
    /// Not used; the text to report (error for a refusal, warning for a stale command) when it starts a run.
    Dropped(Option<(crate::report::Severity, String)>),
}

/// The `cmd_vel` of one robot: where its commands go and the latches of its reports.
pub struct CmdVelGate {
    params: NrtLiveParams,
    robot: RobotId,
    node: NodeId,
    max_age: Option<Duration>,
    stale: Arc<AtomicU64>,
    refusing: bool,
    ignoring: bool,
}

impl CmdVelGate {
    /// The gate of RT robot `robot` (node `node`); stamped commands older than `cmd_vel_timeout` \[s\] are ignored
    /// (≤ 0: no limit).
    pub fn new(
        params: NrtLiveParams,
        robot: RobotId,
        node: NodeId,
        cmd_vel_timeout: f64,
    ) -> CmdVelGate {
        CmdVelGate {
            params,
            robot,
            node,
            max_age: max_age(cmd_vel_timeout),
            stale: Arc::default(),
            refusing: false,
            ignoring: false,
        }
    }

    /// `cmd_vel_timeout` when positive (the watchdog period; `None`: no watchdog).
    pub fn max_age(&self) -> Option<Duration> {
        self.max_age
    }

    /// Stamped commands ignored as older than `cmd_vel_timeout` so far (shared: shown in `/diagnostics`).
    pub fn stale_count(&self) -> Arc<AtomicU64> {
        self.stale.clone()
    }

    /// Takes one command `twist` (with its stamp when it has one: `Some(None)` for a stamp before 1970) taken
    /// from the transport at `taken_ns` (CLOCK_MONOTONIC, the start of the cmd_vel → wire hop); `now` is the
    /// system time.
    pub fn nrt_take(
        &mut self,
        twist: Twist2,
        stamp: Option<Option<Stamp>>,
        taken_ns: u64,
        now: Stamp,
    ) -> Verdict {
        use crate::report::Severity;
        if let (Some(stamp), Some(max)) = (stamp, self.max_age) {
            let age = stamp_age(stamp, now);
            if age > max {
                self.stale.fetch_add(1, Ordering::Relaxed);
                if self.ignoring {
                    return Verdict::Dropped(None);
                }
                self.ignoring = true;
                return Verdict::Dropped(Some((
                    Severity::Warn,
                    format!(
                        "node {}: cmd_vel stamped {:.3} s ago ignored (older than cmd_vel_timeout, {} s); \
                         further ones counted in /diagnostics, not logged until a fresh one",
                        self.node,
                        age.as_secs_f64(),
                        max.as_secs_f64()
                    ),
                )));
            }
        }
        self.ignoring = false;
        match self.params.nrt_set_cmd_vel_at(self.robot, twist, taken_ns) {
            Ok(()) => {
                self.refusing = false;
                Verdict::Stored
            }
            Err(_) if self.refusing => Verdict::Dropped(None),
            Err(e) => {
                self.refusing = true;
                Verdict::Dropped(Some((
                    Severity::Error,
                    format!(
                        "node {}: cmd_vel refused: {e} (further refusals not logged until a valid one)",
                        self.node
                    ),
                )))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::Severity;
    use handoff::{live_params, RtLiveParams};

    fn gate(timeout: f64) -> (CmdVelGate, RtLiveParams) {
        let (rt, nrt) = live_params(2);
        (CmdVelGate::new(nrt, RobotId(0), NodeId(1), timeout), rt)
    }

    fn twist(linear: f64) -> Twist2 {
        Twist2 {
            linear,
            angular: 0.0,
        }
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
        let now = Duration::new(1_000, 500_000_000);
        let at = |s, ns| Some(Duration::new(s, ns));
        assert_eq!(stamp_age(at(999, 0), now), Duration::from_millis(1500));
        assert_eq!(stamp_age(at(1_000, 500_000_000), now), Duration::ZERO);
        // in the future: not old
        assert_eq!(stamp_age(at(2_000, 0), now), Duration::ZERO);
        // unset: now
        assert_eq!(stamp_age(at(0, 0), now), Duration::ZERO);
        // before 1970: as old as can be
        assert_eq!(stamp_age(None, now), Duration::MAX);
    }

    #[test]
    fn a_run_of_refusals_is_reported_once_and_a_good_command_ends_it() {
        let (mut g, _rt) = gate(0.5);
        let now = Duration::from_secs(100);
        assert_eq!(g.nrt_take(twist(0.1), None, 1, now), Verdict::Stored);
        let Verdict::Dropped(Some((Severity::Error, text))) =
            g.nrt_take(twist(f64::NAN), None, 2, now)
        else {
            panic!("a NaN is refused and said");
        };
        assert!(text.starts_with("node 1: cmd_vel refused: "), "{text}");
        assert!(text.ends_with("(further refusals not logged until a valid one)"));
        assert_eq!(
            g.nrt_take(twist(f64::NAN), None, 3, now),
            Verdict::Dropped(None)
        );
        assert_eq!(g.nrt_take(twist(0.2), None, 4, now), Verdict::Stored);
        assert!(matches!(
            g.nrt_take(twist(f64::INFINITY), None, 5, now),
            Verdict::Dropped(Some(_))
        ));
    }

    #[test]
    fn stale_stamped_commands_are_counted_and_said_once_per_run() {
        let (mut g, _rt) = gate(0.5);
        let stale = g.stale_count();
        let now = Duration::from_secs(100);
        let old = Some(Some(Duration::from_secs(99)));
        let Verdict::Dropped(Some((Severity::Warn, text))) = g.nrt_take(twist(0.1), old, 1, now)
        else {
            panic!("a stale command is ignored and said");
        };
        assert!(
            text.contains("cmd_vel stamped 1.000 s ago ignored"),
            "{text}"
        );
        assert_eq!(g.nrt_take(twist(0.1), old, 2, now), Verdict::Dropped(None));
        assert_eq!(stale.load(Ordering::Relaxed), 2);
        let fresh = Some(Some(Duration::from_millis(99_900)));
        assert_eq!(g.nrt_take(twist(0.1), fresh, 3, now), Verdict::Stored);
        // unstamped or unset stamps are fresh; no limit: nothing is stale
        assert_eq!(
            g.nrt_take(twist(0.1), Some(Some(Duration::ZERO)), 4, now),
            Verdict::Stored
        );
        let (mut unlimited, _rt2) = gate(0.0);
        assert_eq!(unlimited.nrt_take(twist(0.1), old, 1, now), Verdict::Stored);
    }
}
