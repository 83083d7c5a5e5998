//! Matching what the ROS client saw with what the relay saw on the wire, and the percentiles.
//!
//! **cmd_vel → wire.** The client publishes a speed of alternating sign at 20 Hz (the robot rocks
//! in place), and two publishes apart the magnitude differs, so every `cmd_vel` changes the wheel
//! targets. A publish at t is matched to the first `set_speed` frame on the wire at or after t
//! whose left target differs from the one in force before t and has the sign of the published
//! speed, if it comes before the publish after next (the next one has the other sign, so a late
//! response is still recognised; the one after would be the first that could be confused).
//! Periodic refreshes of the same targets (thymio-rt re-sends them) are thus never taken for a
//! response; a publish with no such frame (a driver that coalesced it with the next, or answered
//! more than 100 ms late) is counted unmatched, and the table shows the count.
//!
//! **wire → odom.** Every driver publishes one `odom` per odometry frame, in order, so the i-th
//! message received is frame i + d for an offset d the client's start decides. The offset is
//! found from the content: the distance the robot moved between two messages (the pose, along
//! its heading) against the wheel counts the frames carry between the same two frames
//! (`(Δleft + Δright) / 2`), scaled by the driver's calibration (fitted: the drivers differ). The
//! offset with the least residual among those that keep every message after its frame wins (of
//! equal ones, the latest); it is re-fitted every [`BLOCK`] messages within ±[`DRIFT`] frames,
//! so a lost or merged message costs one block's alignment, not the rest of the run. Messages that would precede their frame
//! or fall outside the frames are unmatched.

use hdrhistogram::Histogram;

/// Messages per re-alignment block.
const BLOCK: usize = 200;
/// How far (frames) the offset may move between blocks.
const DRIFT: i64 = 3;
/// How many frames before the first message the first offset is searched.
const SEARCH: i64 = 30;
/// Residuals closer than this are equal fits.
const TIE: f64 = 1e-6;

/// Latency percentiles (µs) of matched samples.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Hop {
    pub samples: u64,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub p999: f64,
    pub max: f64,
    pub unmatched: u64,
    /// Relative residual of the content fit (odometry only; 0 is a perfect fit).
    pub residual: f64,
    /// Residual of the best other offset for the first block (odometry only): how clearly the
    /// content decided the alignment (far above `residual` is clear).
    pub runner_up: f64,
    pub cdf: Vec<(f64, f64)>,
}

/// Matched latencies of one or more runs, before the percentiles.
#[derive(Debug, Default)]
pub struct Matched {
    /// Latencies (ns).
    pub lat: Vec<u64>,
    /// Where each latency of `lat` starts (CLOCK_MONOTONIC ns): the frame on the wire (odometry), the publish
    /// (cmd_vel).
    pub start: Vec<u64>,
    pub unmatched: u64,
    /// Worst relative residual of the odometry content fit.
    pub residual: f64,
    /// Least residual of the best other offset (odometry): far above `residual` is clear.
    pub runner_up: f64,
}

impl Matched {
    /// Adds another run's samples.
    pub fn merge(&mut self, other: Matched) {
        if self.lat.is_empty() && self.unmatched == 0 {
            self.runner_up = other.runner_up;
        }
        self.lat.extend(other.lat);
        self.start.extend(other.start);
        self.unmatched += other.unmatched;
        self.residual = self.residual.max(other.residual);
        self.runner_up = self.runner_up.min(other.runner_up);
    }

    /// The percentiles.
    pub fn hop(&self) -> Hop {
        let mut h = hop(&self.lat, self.unmatched, self.residual);
        h.runner_up = self.runner_up;
        h
    }
}

/// Percentiles of `latencies_ns`.
pub fn hop(latencies_ns: &[u64], unmatched: u64, residual: f64) -> Hop {
    let mut h = Histogram::<u64>::new_with_bounds(1, 60_000_000_000, 3).expect("bounds");
    for l in latencies_ns {
        h.saturating_record((*l).max(1));
    }
    let us = |v: u64| v as f64 / 1000.0;
    Hop {
        samples: h.len(),
        p50: us(h.value_at_quantile(0.5)),
        p90: us(h.value_at_quantile(0.9)),
        p99: us(h.value_at_quantile(0.99)),
        p999: us(h.value_at_quantile(0.999)),
        max: us(h.max()),
        unmatched,
        residual,
        runner_up: f64::NAN,
        cdf: h
            .iter_quantiles(2)
            .map(|i| (us(i.value_iterated_to()), i.quantile_iterated_to()))
            .collect(),
    }
}

/// An odometry frame on the wire: time (ns), left and right wheel counts.
pub type Frame = (u64, i16, i16);
/// An odom message received: time (ns), x, y, yaw.
pub type Odom = (u64, f64, f64, f64);

/// Matches odometry messages to frames (see the module documentation).
pub fn match_odometry(frames: &[Frame], received: &[Odom]) -> Result<Matched, String> {
    if received.len() < 2 || frames.len() < 2 {
        return Err(format!(
            "too little odometry: {} frames, {} messages",
            frames.len(),
            received.len()
        ));
    }
    // wheel units the frame moved since the previous one; metres the message moved
    let e: Vec<f64> = std::iter::once(f64::NAN)
        .chain(frames.windows(2).map(|w| {
            (w[1].1.wrapping_sub(w[0].1) as f64 + w[1].2.wrapping_sub(w[0].2) as f64) / 2.0
        }))
        .collect();
    let s: Vec<f64> = std::iter::once(f64::NAN)
        .chain(
            received
                .windows(2)
                .map(|w| (w[1].1 - w[0].1) * w[0].3.cos() + (w[1].2 - w[0].2) * w[0].3.sin()),
        )
        .collect();
    let pairs = |d: i64, from: usize, to: usize| {
        (from.max(1)..to).filter_map(move |i| {
            let j = i as i64 + d;
            (j >= 1 && (j as usize) < frames.len()).then_some((i, j as usize))
        })
    };
    let late = |d: i64, from: usize, to: usize| {
        pairs(d, from, to)
            .filter(|&(i, j)| frames[j].0 > received[i].0)
            .count()
    };
    // the first message's frame came before it: the last frame before it, or up to SEARCH earlier
    let last_before = frames.partition_point(|f| f.0 <= received[0].0) as i64 - 1;
    let first = BLOCK.min(received.len());
    let fit = |d: i64, from: usize, to: usize, q: Option<f64>| -> f64 {
        let (mut se, mut ee, mut ss) = (0.0, 0.0, 0.0);
        for (i, j) in pairs(d, from, to) {
            se += s[i] * e[j];
            ee += e[j] * e[j];
            ss += s[i] * s[i];
        }
        let q = q.unwrap_or(if ee > 0.0 { se / ee } else { 0.0 });
        let mut r = 0.0;
        for (i, j) in pairs(d, from, to) {
            r += (s[i] - q * e[j]).powi(2);
        }
        if ss > 0.0 {
            r / ss
        } else {
            f64::INFINITY
        }
    };
    let best = |range: std::ops::RangeInclusive<i64>, from: usize, to: usize, q: Option<f64>| {
        // latest first: of equal fits (within rounding), the one with the shortest latencies (no
        // older frame explains the messages better)
        let fits: Vec<(i64, f64)> = range
            .rev()
            .filter(|&d| late(d, from, to) == 0)
            .map(|d| (d, fit(d, from, to, q)))
            .filter(|(_, r)| r.is_finite())
            .collect();
        let least = fits.iter().map(|f| f.1).fold(f64::INFINITY, f64::min);
        let next = fits
            .iter()
            .map(|f| f.1)
            .filter(|r| *r > least + TIE)
            .fold(f64::INFINITY, f64::min);
        fits.into_iter()
            .find(|f| f.1 <= least + TIE)
            .map(|(d, r)| (d, r, next))
    };
    let Some((mut d, _, runner_up)) = best(last_before - SEARCH..=last_before, 0, first, None)
    else {
        return Err("no alignment of odom messages to frames: did the robot move?".into());
    };
    // the driver's calibration, from the first block
    let (mut se, mut ee) = (0.0f64, 0.0f64);
    for (i, j) in pairs(d, 0, first) {
        se += s[i] * e[j];
        ee += e[j] * e[j];
    }
    let q = se / ee.max(1e-9);
    let mut lat = Vec::with_capacity(received.len());
    let mut start = Vec::with_capacity(received.len());
    let mut unmatched = 0u64;
    let (mut r_sum, mut r_n) = (0.0f64, 0.0f64);
    for from in (0..received.len()).step_by(BLOCK) {
        let to = (from + BLOCK).min(received.len());
        if let Some((bd, r, _)) = best(d - DRIFT..=d + DRIFT, from, to, Some(q)) {
            d = bd;
            r_sum += r;
            r_n += 1.0;
        }
        for (i, m) in received.iter().enumerate().take(to).skip(from) {
            let j = i as i64 + d;
            match usize::try_from(j).ok().and_then(|j| frames.get(j)) {
                Some(f) if f.0 <= m.0 => {
                    lat.push(m.0 - f.0);
                    start.push(f.0);
                }
                _ => unmatched += 1,
            }
        }
    }
    Ok(Matched {
        lat,
        start,
        unmatched,
        residual: r_sum / r_n.max(1.0),
        runner_up,
    })
}

/// Matches published cmd_vel (publish time, linear speed) to `set_speed` frames on the wire
/// (time, left, right) (see the module documentation).
pub fn match_cmd_vel(published: &[(u64, f64)], arrived: &[(u64, i16, i16)]) -> Matched {
    let mut lat = Vec::with_capacity(published.len());
    let mut start = Vec::with_capacity(published.len());
    let mut unmatched = 0;
    for (k, &(t, v)) in published.iter().enumerate() {
        let next = published.get(k + 2).map_or(u64::MAX, |p| p.0);
        let at = arrived.partition_point(|a| a.0 < t);
        let before = at.checked_sub(1).map(|i| arrived[i].1);
        let hit = arrived[at..]
            .iter()
            .take_while(|a| a.0 < next)
            .find(|a| Some(a.1) != before && a.1 != 0 && (a.1 > 0) == (v > 0.0));
        match hit {
            Some(a) => {
                lat.push(a.0 - t);
                start.push(t);
            }
            None => unmatched += 1,
        }
    }
    Matched {
        lat,
        start,
        unmatched,
        residual: 0.0,
        runner_up: f64::NAN,
    }
}

/// Checks the matching on synthetic data (the harness runs it before measuring: a wrong match
/// would silently corrupt the headline numbers).
pub fn self_check() {
    // bursts of three frames every 30 ms; speed changes every 5 frames; each message 1-3 ms
    // after its frame, with a calibration of 0.0003 m per wheel unit and the first 7 frames
    // before the client started
    let mut frames = Vec::new();
    let (mut l, mut r) = (0i16, 0i16);
    for j in 0..600u64 {
        let step = [3i16, -2, 5, -4, 1][(j / 5 % 5) as usize];
        l = l.wrapping_add(step);
        r = r.wrapping_add(step);
        frames.push((j / 3 * 30_000_000, l, r));
    }
    let mut received: Vec<Odom> = Vec::new();
    let mut x = 0.0;
    for (j, f) in frames.iter().enumerate().skip(7) {
        if j > 7 {
            x += 0.0003 * f.1.wrapping_sub(frames[j - 1].1) as f64;
        }
        received.push((f.0 + 1_000_000 + (j as u64 % 3) * 1_000_000, x, 0.0, 0.0));
    }
    let h = match_odometry(&frames, &received)
        .expect("odometry matching")
        .hop();
    assert_eq!((h.samples, h.unmatched), (593, 0), "odometry matching");
    assert!(
        (h.p50 - 2000.0).abs() < 5.0 && (h.max - 3000.0).abs() < 5.0,
        "odometry latencies {h:?}"
    );
    let published = vec![(100, 0.03), (200, -0.04), (300, 0.05)];
    let arrived = vec![
        (90, 90, 90),
        (150, 90, 90),
        (160, 90, 90),
        (260, -120, -120),
    ];
    let h = match_cmd_vel(&published, &arrived).hop();
    assert_eq!((h.samples, h.unmatched), (1, 2), "cmd_vel matching");
    assert!((h.p50 - 0.06).abs() < 0.01, "cmd_vel latency {h:?}");
}
