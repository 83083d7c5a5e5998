//! The forwarding budget toward one robot link: a token bucket in bytes. The switch's clients
//! share it; the driver's own traffic (speed frames from the RT thread, the network manager's
//! requests) does not draw from it, and the budget is sized so that the link keeps room for
//! that traffic.

use std::time::Instant;

/// Seconds of budget a quiet link accumulates (the burst a client may send at once: a whole
/// script upload by asebamassloader or Studio, a few kB, passes in one go).
pub const BURST_SECONDS: f64 = 0.5;

/// Share (%) of a serial line's bandwidth the switch's clients may use.
pub const SERIAL_SHARE_PERCENT: u32 = 75;

/// Token bucket of one link.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LinkBudget {
    /// Bytes per second.
    rate: f64,
    tokens: f64,
    last: Instant,
}

impl LinkBudget {
    /// A full bucket of `rate` bytes per second (burst: [`BURST_SECONDS`] of it).
    pub fn new(rate: u32, now: Instant) -> Self {
        let rate = f64::from(rate.max(1));
        LinkBudget {
            rate,
            tokens: rate * BURST_SECONDS,
            last: now,
        }
    }

    /// The budget toward a serial link at `baud`: three quarters of what the line carries
    /// (8N1: 10 bits a byte, 11 520 B/s at 115200, so 8 640 B/s), the rest kept for the
    /// driver's own traffic.
    pub fn serial(baud: u32, now: Instant) -> Self {
        Self::new(baud / 10 * SERIAL_SHARE_PERCENT / 100, now)
    }

    /// Bytes per second.
    pub fn rate(&self) -> u32 {
        self.rate as u32
    }

    /// Takes `bytes` from the budget at `now`; false (and nothing taken) if they exceed it.
    pub fn take(&mut self, bytes: usize, now: Instant) -> bool {
        let dt = now.saturating_duration_since(self.last).as_secs_f64();
        self.last = self.last.max(now);
        self.tokens = (self.tokens + dt * self.rate).min(self.rate * BURST_SECONDS);
        if self.tokens >= bytes as f64 {
            self.tokens -= bytes as f64;
            true
        } else {
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_flood_gets_the_rate_and_a_burst_no_more() {
        let t0 = Instant::now();
        let mut b = LinkBudget::serial(115_200, t0);
        assert_eq!(b.rate(), 8_640);
        // 10 s of 8-byte frames offered every millisecond (far above the link)
        let mut passed = 0usize;
        for ms in 0..10_000u64 {
            let now = t0 + Duration::from_millis(ms);
            for _ in 0..100 {
                if b.take(8, now) {
                    passed += 8;
                }
            }
        }
        let most = (8_640.0 * (10.0 + BURST_SECONDS)) as usize;
        assert!(passed <= most && passed >= most - 100, "{passed} of {most}");
    }

    #[test]
    fn a_quiet_link_refills_up_to_the_burst() {
        let t0 = Instant::now();
        let mut b = LinkBudget::new(1000, t0);
        assert!(b.take(500, t0));
        assert!(!b.take(1, t0));
        let later = t0 + Duration::from_secs(60);
        assert!(b.take(500, later));
        assert!(
            !b.take(1, later),
            "no more than the burst after a long pause"
        );
        // time going backwards takes nothing and panics not
        assert!(!b.take(1, t0));
    }
}
