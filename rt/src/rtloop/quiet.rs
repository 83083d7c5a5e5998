//! When the RT loop may sleep past its period ([`RtLoop::quiet_until`]) and until when
//! ([`RtLoop::quiet_deadline`]): see the module documentation of `rtloop`, "Asleep while quiet".

use super::{ns, RtLoop, QUIET_WAIT_MAX};

impl RtLoop {
    /// Until when nothing needs the periodic cycle (`None`: the next period does). Quiet: NRT
    /// gave nothing since the last cycle, no wheel-target change is held back, every link is in
    /// the wait (none polled or muted) and settled (alive, flushed, no partial frame), every
    /// configured robot has a quiet owner (no RT controller, zero joint command, drops reported,
    /// no joint states) and is either settled (no motion commanded, nothing to write or confirm:
    /// no watchdog armed, no refresh due) or cruising (moving at a steady command its last frame
    /// wrote, no filter acting: [`crate::robot::Robot::cruise_due`]), and every wake-up it relies
    /// on has its descriptor. The time is the earliest cruising robot's next duty (its cmd_vel
    /// watchdog's deadline or its next speed refresh; `u64::MAX`: none cruises). Reads no NRT
    /// input (the flight recorder sees none): the watchdog is the last drive's.
    pub(super) fn quiet_until(&self) -> Option<u64> {
        let loop_quiet = self.can_sleep
            && !self.need_cycle
            && self.hold_until.is_none()
            && self.slots.settled()
            && (0..self.slots.slots.len())
                .all(|i| self.slots.slots[i].link.is_none() || !self.waiter.polled(i));
        if !loop_quiet {
            return None;
        }
        let mut until = u64::MAX;
        for (i, robot) in self.robots.iter().enumerate() {
            if robot.config().is_none() {
                continue;
            }
            if !self.owner_quiet(i) {
                return None;
            }
            if robot.settled() {
                continue;
            }
            if self.owners[i].filtered {
                return None;
            }
            until = until.min(robot.cruise_due(self.pass.watchdog_ns, self.pass.refresh_ns)?);
        }
        Some(until)
    }

    /// The deadline of a quiet loop's wait (`next`: its next period): the next statistics report,
    /// at most [`QUIET_WAIT_MAX`] past `next`, and not past the last of `max_cycles` periods.
    pub(super) fn quiet_deadline(&self, next: u64, period: u64) -> u64 {
        let report = self
            .stats
            .last_report_ns
            .saturating_add(ns(self.cfg.stats_period));
        let mut due = report.min(next.saturating_add(ns(QUIET_WAIT_MAX)));
        if let Some(m) = self.cfg.max_cycles {
            let left = m.saturating_sub(self.stats.periods()).saturating_sub(1);
            due = due.min(next.saturating_add(left.saturating_mul(period)));
        }
        due.max(next)
    }
}
