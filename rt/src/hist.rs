//! A preallocated log-linear histogram of nanosecond values: O(1) record, no allocation after
//! construction, ≤ 1/32 (≈3 %) relative bucket width over the whole u64 range; exact below 64.

use handoff::LatencySummary;

/// Mantissa bits per power of two.
const SUB_BITS: u32 = 5;
const SUB: u64 = 1 << SUB_BITS;
/// Values below this are counted exactly.
const LINEAR: u64 = 2 * SUB;
/// Number of buckets covering all of u64.
pub const BUCKETS: usize = (LINEAR + (64 - (SUB_BITS as u64 + 1)) * SUB) as usize;

/// Histogram of u64 samples.
#[derive(Clone)]
pub struct Histogram {
    counts: Box<[u64; BUCKETS]>,
    count: u64,
    sum: u128,
    min: u64,
    max: u64,
}

impl std::fmt::Debug for Histogram {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Histogram")
            .field("count", &self.count)
            .field("min", &self.min)
            .field("max", &self.max)
            .finish()
    }
}

impl Default for Histogram {
    fn default() -> Self {
        Self::new()
    }
}

/// Bucket of a value.
fn index(v: u64) -> usize {
    if v < LINEAR {
        return v as usize;
    }
    let e = 63 - v.leading_zeros(); // ≥ SUB_BITS + 1
    let sub = (v >> (e - SUB_BITS)) & (SUB - 1);
    (LINEAR + (e - SUB_BITS - 1) as u64 * SUB + sub) as usize
}

/// Largest value of a bucket.
fn upper(i: usize) -> u64 {
    let i = i as u64;
    if i < LINEAR {
        return i;
    }
    let e = (i - LINEAR) / SUB + SUB_BITS as u64 + 1;
    let sub = (i - LINEAR) % SUB;
    let shift = e - SUB_BITS as u64;
    let lower = (SUB + sub) << shift;
    lower + ((1u64 << shift) - 1)
}

impl Histogram {
    /// An empty histogram (allocates and touches its buckets once).
    pub fn new() -> Self {
        let mut counts = Box::new([0u64; BUCKETS]);
        // Touch every page now so that recording never page-faults.
        let c = std::hint::black_box(&mut counts[..]);
        for x in c.iter_mut().step_by(512) {
            *x = 1;
        }
        std::hint::black_box(&mut *c);
        c.fill(0);
        Histogram {
            counts,
            count: 0,
            sum: 0,
            min: u64::MAX,
            max: 0,
        }
    }

    /// Records one sample.
    pub fn record(&mut self, v: u64) {
        self.counts[index(v)] += 1;
        self.count += 1;
        self.sum += v as u128;
        self.min = self.min.min(v);
        self.max = self.max.max(v);
    }

    /// Number of samples.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Largest sample (exact).
    pub fn max(&self) -> u64 {
        self.max
    }

    /// The value at quantile `q` (0..=1): the upper bound of the bucket holding it, capped at
    /// the exact maximum. 0 when empty.
    pub fn quantile(&self, q: f64) -> u64 {
        if self.count == 0 {
            return 0;
        }
        let rank = ((q.clamp(0.0, 1.0) * self.count as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return upper(i).min(self.max);
            }
        }
        self.max
    }

    /// min / mean / p50 / p90 / p99 / p99.9 / max in one pass over the buckets.
    pub fn summary(&self) -> LatencySummary {
        if self.count == 0 {
            return LatencySummary::default();
        }
        let qs = [0.5, 0.9, 0.99, 0.999];
        let mut out = [self.max; 4];
        let ranks = qs.map(|q| ((q * self.count as f64).ceil() as u64).max(1));
        let mut k = 0;
        let mut seen = 0;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c;
            while k < 4 && seen >= ranks[k] {
                out[k] = upper(i).min(self.max);
                k += 1;
            }
            if k == 4 {
                break;
            }
        }
        LatencySummary {
            count: self.count,
            min: self.min,
            mean: (self.sum / self.count as u128) as u64,
            p50: out[0],
            p90: out[1],
            p99: out[2],
            p999: out[3],
            max: self.max,
        }
    }

    /// Forgets every sample (keeps the buckets).
    pub fn clear(&mut self) {
        self.counts.fill(0);
        self.count = 0;
        self.sum = 0;
        self.min = u64::MAX;
        self.max = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn buckets_cover_u64_and_are_monotonic() {
        assert_eq!(index(u64::MAX), BUCKETS - 1);
        assert_eq!(upper(BUCKETS - 1), u64::MAX);
        for i in 1..BUCKETS {
            assert!(upper(i) > upper(i - 1), "bucket {i}");
            assert_eq!(index(upper(i)), i);
            assert_eq!(index(upper(i - 1) + 1), i);
        }
    }

    #[test]
    fn small_values_are_exact_and_percentiles_ordered() {
        let mut h = Histogram::new();
        for v in 1..=1000u64 {
            h.record(v);
        }
        let s = h.summary();
        assert_eq!((s.count, s.min, s.max, s.mean), (1000, 1, 1000, 500));
        assert!(s.p50 >= 500 && s.p50 <= 500 + 500 / 32, "{s:?}");
        assert!(s.p99 >= 990 && s.p99 <= 1000, "{s:?}");
        assert!(s.p50 <= s.p90 && s.p90 <= s.p99 && s.p99 <= s.p999 && s.p999 <= s.max);
        assert_eq!(h.quantile(1.0), 1000);
        h.clear();
        assert_eq!(h.summary(), LatencySummary::default());
        let mut h = Histogram::new();
        h.record(7);
        assert_eq!(h.quantile(0.5), 7);
    }

    proptest! {
        #[test]
        fn bucket_width_is_within_a_32nd(v in any::<u64>()) {
            let i = index(v);
            let hi = upper(i);
            prop_assert!(hi >= v);
            prop_assert!((hi - v) as f64 <= v as f64 / 32.0 + 1.0);
        }

        #[test]
        fn quantiles_bound_the_true_order_statistic(mut xs in proptest::collection::vec(0u64..10_000_000, 1..300), q in 0.0f64..1.0) {
            let mut h = Histogram::new();
            for &x in &xs { h.record(x); }
            xs.sort_unstable();
            let rank = ((q * xs.len() as f64).ceil() as usize).max(1);
            let truth = xs[rank - 1];
            let got = h.quantile(q);
            prop_assert!(got >= truth && got as f64 <= truth as f64 * (1.0 + 1.0 / 32.0) + 1.0, "q={} truth={} got={}", q, truth, got);
        }
    }
}
