//! Line-crossing timing for the motor calibration (RT, allocation-free): one [`LineTimer`] per
//! ground sensor turns its samples (10 Hz on a Thymio) into the times it *enters* a dark line,
//! interpolating the threshold crossing between the two samples around it.
//!
//! The threshold is the middle of the darkest and brightest readings seen so far, once they
//! differ by at least [`MIN_CONTRAST`]; an entry counts only after the reading went back above
//! the threshold by a quarter of the contrast (hysteresis: noise on the edge is not two
//! entries). While the robot pivots about its stopped wheel, a straight line crossing the
//! sensor's circle is entered at two points per revolution, alternately: the time between an
//! entry and the next-but-one of the same sensor is one revolution, wherever the line lies.

/// Smallest difference (ground reading units) between the floor and the line.
pub const MIN_CONTRAST: i16 = 200;

/// Entry times of one ground sensor.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct LineTimer {
    last: Option<(i16, u64)>,
    min: i16,
    max: i16,
    seen: bool,
    armed: bool,
    /// Entries so far.
    entries: u32,
    /// The last three entry times (ns), oldest first.
    times: [u64; 3],
}

impl LineTimer {
    /// Forgets everything (a new run).
    pub fn reset(&mut self) {
        *self = LineTimer::default();
    }

    /// Whether the floor and the line were both seen.
    pub fn has_contrast(&self) -> bool {
        self.seen && self.max.saturating_sub(self.min) >= MIN_CONTRAST
    }

    /// Entries so far.
    pub fn entries(&self) -> u32 {
        self.entries
    }

    /// Time of the last entry.
    pub fn last_entry(&self) -> Option<u64> {
        (self.entries > 0).then_some(self.times[2])
    }

    /// The entry two before the last one: one revolution before it (same place on the circle).
    pub fn revolution_start(&self) -> Option<u64> {
        (self.entries > 2).then_some(self.times[0])
    }

    /// The entry before the last one.
    pub fn previous_entry(&self) -> Option<u64> {
        (self.entries > 1).then_some(self.times[1])
    }

    /// Takes a sample `value` read at `t_ns`; returns the interpolated entry time if this
    /// sample completes an entry into the line.
    pub fn sample(&mut self, value: i16, t_ns: u64) -> Option<u64> {
        if !self.seen {
            (self.min, self.max, self.seen) = (value, value, true);
        }
        self.min = self.min.min(value);
        self.max = self.max.max(value);
        let prev = self.last.replace((value, t_ns));
        if !self.has_contrast() {
            return None;
        }
        let contrast = self.max as i32 - self.min as i32;
        let threshold = (self.max as i32 + self.min as i32) / 2;
        let v = value as i32;
        if v > threshold + contrast / 4 {
            self.armed = true;
        }
        let (pv, pt) = prev?;
        let pv = pv as i32;
        // the floor seen before the contrast was known arms too
        if pv > threshold + contrast / 4 {
            self.armed = true;
        }
        if !(self.armed && pv >= threshold && v < threshold && t_ns > pt) {
            return None;
        }
        self.armed = false;
        // linear interpolation of the threshold crossing between the two samples
        let frac = (pv - threshold) as f64 / (pv - v) as f64;
        let t = pt + ((t_ns - pt) as f64 * frac.clamp(0.0, 1.0)) as u64;
        self.times = [self.times[1], self.times[2], t];
        self.entries = self.entries.saturating_add(1);
        Some(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn entries_are_interpolated_and_need_contrast_and_rearming() {
        let mut t = LineTimer::default();
        // bright floor only: nothing
        assert_eq!(t.sample(900, 0), None);
        assert_eq!(t.sample(905, 100 * MS), None);
        assert!(!t.has_contrast());
        // into the line: 905 → 100, threshold (905+100)/2 = 502, crossed halfway
        let near = |got: Option<u64>, want: u64| got.is_some_and(|g| g.abs_diff(want) < MS);
        assert!(near(t.sample(100, 200 * MS), 150 * MS));
        assert_eq!(t.entries(), 1);
        // noise around the threshold without going back to the floor: no new entry
        assert_eq!(t.sample(520, 300 * MS), None);
        assert_eq!(t.sample(480, 400 * MS), None);
        // back on the floor, then in again: 900 → 300 crosses 502 at 2/3 of the way
        assert_eq!(t.sample(900, 500 * MS), None);
        assert!(near(t.sample(300, 600 * MS), 566 * MS));
        assert!(near(t.previous_entry(), 150 * MS));
        assert_eq!(t.entries(), 2);
        assert_eq!(t.revolution_start(), None);
        assert_eq!(t.sample(900, 700 * MS), None);
        assert!(t.sample(100, 800 * MS).is_some());
        assert!(near(t.revolution_start(), 150 * MS));
        t.reset();
        assert_eq!(t.entries(), 0);
    }

    #[test]
    fn a_robot_placed_on_the_line_counts_its_first_entry_after_leaving_it() {
        let mut t = LineTimer::default();
        assert_eq!(t.sample(80, 0), None);
        assert_eq!(t.sample(950, 100 * MS), None);
        assert_eq!(t.sample(950, 200 * MS), None);
        assert!(t.sample(80, 300 * MS).is_some());
    }
}
