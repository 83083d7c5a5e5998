//! When the RT loop may sleep past its period ([`RtLoop::quiet`]) and until when
//! ([`RtLoop::quiet_deadline`]): see the module documentation of `rtloop`, "Asleep while quiet".

use super::{ns, RtLoop, QUIET_WAIT_MAX};

impl RtLoop {
    /// Whether nothing needs the periodic cycle before the next statistics report: NRT gave
    /// nothing since the last cycle, no wheel-target change is held back, every link is in the
    /// wait (none polled or muted) and settled (alive, flushed, no partial frame), and every
    /// configured robot is settled (no motion commanded, nothing to write or confirm: no
    /// watchdog armed, no refresh due) with a quiet owner (no RT controller, zero joint command,
    /// drops reported, no joint states), and every wake-up it relies on has its descriptor. Reads no
    /// NRT input (the flight recorder sees none).
    pub(super) fn quiet(&self) -> bool {
        self.can_sleep
            && !self.need_cycle
            && self.hold_until.is_none()
            && self.slots.settled()
            && (0..self.slots.slots.len())
                .all(|i| self.slots.slots[i].link.is_none() || !self.waiter.polled(i))
            && (0..self.robots.len()).all(|i| {
                self.robots[i].config().is_none()
                    || (self.robots[i].settled() && self.owner_quiet(i))
            })
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
