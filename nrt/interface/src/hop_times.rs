//! Per-hop timing on the ROS side, and every hop (the RT thread's and the front end's) as one
//! `/diagnostics` status, so that a user sees where time goes between the wire and ROS on their
//! own machine. Each front end times its own hops ([`NrtHopTimers`]) and publishes its own status.
//!
//! The hops, in path order (CLOCK_MONOTONIC ns throughout, [`handoff::monotonic_ns`]):
//!
//! | hop | owner | from → to |
//! |---|---|---|
//! | wire → decoded | RT thread | bytes found readable → frame decoded and acted on |
//! | odometry handed → publish start | a front end's odometry publisher thread | pushed by the RT thread → the publisher thread starts publishing it |
//! | publish | publisher thread | `odom` publish called → `odom`, `/tf` and `joint_states` publish returned |
//! | cmd_vel taken → set-point stored | the thread that received it (ROS 2's hot node, ROS 1's socket task) | `cmd_vel` taken → set-point stored (RT thread rung) |
//! | set-point → wire | RT thread | set-point stored → speed frame written to the link |
//!
//! plus the odometry samples dropped because the publisher thread was behind.
//!
//! Each NRT hop is an HDR histogram behind a mutex: the timing thread records (no allocation)
//! and the NRT loop reads quantiles once per diagnostics period; the lock is held for a record
//! or for four quantile look-ups, never across a wait.

use handoff::{LatencySummary, OdomTrace, RosHops, RtStats, SLOWEST_ODOM};
use hdrhistogram::Histogram;
use nrt_engine::diagnostics::{DiagnosticStatus, KeyValue, OK, WARN};
use std::sync::{Arc, Mutex};

/// Largest hop recorded as itself (60 s); longer ones are recorded as 60 s.
const HIGHEST_NS: u64 = 60_000_000_000;

/// One hop's latency histogram (ns), shared by the thread that times it and the reader.
#[derive(Debug, Clone)]
pub struct HopHistogram(Arc<Mutex<Histogram<u64>>>);

impl Default for HopHistogram {
    fn default() -> Self {
        Self::new()
    }
}

impl HopHistogram {
    /// An empty histogram of 1 ns … 60 s at 3 significant digits.
    pub fn new() -> HopHistogram {
        let h = Histogram::new_with_bounds(1, HIGHEST_NS, 3)
            .unwrap_or_else(|_| Histogram::new(3).expect("3 significant digits are valid"));
        HopHistogram(Arc::new(Mutex::new(h)))
    }

    /// Records one hop of `ns` (saturating; never allocates).
    pub fn record(&self, ns: u64) {
        let mut h = self.0.lock().unwrap_or_else(|e| e.into_inner());
        h.saturating_record(ns.clamp(1, HIGHEST_NS));
    }

    /// Its distribution so far.
    pub fn summary(&self) -> LatencySummary {
        summary(&self.0.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

/// The distribution of `h` (all zero when empty).
pub fn summary(h: &Histogram<u64>) -> LatencySummary {
    if h.is_empty() {
        return LatencySummary::default();
    }
    LatencySummary {
        count: h.len(),
        min: h.min(),
        mean: h.mean() as u64,
        p50: h.value_at_quantile(0.50),
        p90: h.value_at_quantile(0.90),
        p99: h.value_at_quantile(0.99),
        p999: h.value_at_quantile(0.999),
        max: h.max(),
    }
}

/// The slowest odometry samples by wire → `odom` published, each with where its time went (the tails of the
/// hop, sample by sample). Recording takes the lock for one comparison, and a copy when the sample is among
/// the slowest; never allocates.
#[derive(Debug, Clone, Default)]
pub struct SlowestOdom(Arc<Mutex<[OdomTrace; SLOWEST_ODOM]>>);

impl SlowestOdom {
    /// Keeps `t` if it is slower than the fastest kept.
    pub fn record(&self, t: OdomTrace) {
        let mut kept = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let Some((i, fastest)) = kept
            .iter()
            .enumerate()
            .min_by_key(|(_, k)| (k.wire_ns != 0, k.total_ns()))
        else {
            return;
        };
        if fastest.wire_ns == 0 || t.total_ns() > fastest.total_ns() {
            kept[i] = t;
        }
    }

    /// The samples kept, slowest first (unused entries, `wire_ns == 0`, last).
    pub fn sorted(&self) -> [OdomTrace; SLOWEST_ODOM] {
        let mut kept = *self.0.lock().unwrap_or_else(|e| e.into_inner());
        kept.sort_by_key(|k| (k.wire_ns == 0, std::cmp::Reverse(k.total_ns())));
        kept
    }
}

/// The hops the ROS side owns, recorded by its threads (clone to hand to a thread).
#[derive(Debug, Clone, Default)]
pub struct NrtHopTimers {
    /// Odometry handed over by the RT thread → the publisher thread starts publishing it.
    pub handed_to_publish: HopHistogram,
    /// Time spent publishing one sample's `odom`, `/tf` and `joint_states` (the `odom` of a burst's samples go out
    /// first, then their `/tf` and `joint_states`: [`crate::odom_burst`]).
    pub publish: HopHistogram,
    /// `cmd_vel` taken → set-point stored (and the RT thread rung).
    pub cmd_vel_to_set_point: HopHistogram,
    /// Odometry bytes read by the RT thread → `odom` publish returned (the driver's whole part).
    pub wire_to_odom: HopHistogram,
    /// The slowest samples of [`Self::wire_to_odom`], hop by hop.
    pub slowest: SlowestOdom,
}

impl NrtHopTimers {
    /// The distributions so far.
    pub fn summaries(&self) -> RosHops {
        RosHops {
            handed_to_publish: self.handed_to_publish.summary(),
            publish: self.publish.summary(),
            cmd_vel_to_set_point: self.cmd_vel_to_set_point.summary(),
            wire_to_odom: self.wire_to_odom.summary(),
            slowest: self.slowest.sorted(),
        }
    }

    /// Records an odometry sample's path once its `odom` publish returned at `odom_ns` (the other stamps: see
    /// [`OdomTrace`]).
    pub fn record_odom(&self, trace: OdomTrace) {
        self.wire_to_odom.record(trace.total_ns());
        self.slowest.record(trace);
    }
}

/// Every timed hop in path order (odometry out, then cmd_vel in), named as in `/diagnostics`;
/// the RT hops are zero before the RT thread's first statistics.
pub fn rows(rt: Option<&RtStats>, nrt: &RosHops) -> [(&'static str, LatencySummary); 6] {
    let h = rt.map(|s| s.hops).unwrap_or_default();
    [
        ("Odometry: wire → decoded (RT)", h.wire_to_decoded),
        ("Odometry: handed → publish start", nrt.handed_to_publish),
        ("Odometry: publish → returned", nrt.publish),
        ("Odometry: wire → odom published", nrt.wire_to_odom),
        (
            "cmd_vel: taken → set-point stored",
            nrt.cmd_vel_to_set_point,
        ),
        ("cmd_vel: set-point → wire (RT)", h.cmd_to_wire),
    ]
}

fn hop_kv(name: &str, s: &LatencySummary) -> KeyValue {
    KeyValue {
        key: format!("{name} [µs] p50/p99/max"),
        value: if s.count == 0 {
            "no samples".to_owned()
        } else {
            format!(
                "{:.1}/{:.1}/{:.1} (n={})",
                s.p50 as f64 / 1e3,
                s.p99 as f64 / 1e3,
                s.max as f64 / 1e3,
                s.count
            )
        },
    }
}

/// "Hops": p50/p99/max of every hop ([`rows`]) and the odometry samples the publisher thread
/// missed. WARN while samples were dropped.
pub fn status(prefix: &str, rt: Option<&RtStats>, nrt: &RosHops) -> DiagnosticStatus {
    let mut values: Vec<KeyValue> = rows(rt, nrt)
        .iter()
        .map(|(name, s)| hop_kv(name, s))
        .collect();
    let drops = rt.map_or(0, |s| s.hops.odometry_out_drops);
    values.push(KeyValue {
        key: "Odometry samples dropped (publisher behind)".to_owned(),
        value: drops.to_string(),
    });
    DiagnosticStatus {
        level: if drops > 0 { WARN } else { OK },
        name: format!("{prefix}: Hops"),
        message: if drops > 0 {
            format!("{drops} odometry samples dropped")
        } else {
            "OK".to_owned()
        },
        hardware_id: String::new(),
        values,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value<'a>(s: &'a DiagnosticStatus, key: &str) -> &'a str {
        &s.values
            .iter()
            .find(|kv| kv.key == key)
            .unwrap_or_else(|| panic!("no {key} in {:?}", s.values))
            .value
    }

    #[test]
    fn histograms_summarise_what_was_recorded() {
        let h = HopHistogram::new();
        assert_eq!(h.summary(), LatencySummary::default());
        for ns in 1..=1000u64 {
            h.record(ns * 1000);
        }
        h.record(u64::MAX); // saturates at the highest trackable value
        let s = h.summary();
        assert_eq!(s.count, 1001);
        assert!((499_000..=502_000).contains(&s.p50), "{s:?}");
        assert!((989_000..=992_000).contains(&s.p99), "{s:?}");
        assert!(s.max >= HIGHEST_NS && s.max < HIGHEST_NS + HIGHEST_NS / 500);
        assert_eq!(s.min, 1000);
    }

    #[test]
    fn every_hop_is_in_the_status_in_path_order() {
        let mut rt = RtStats {
            period_ns: 1_000_000,
            allocator_installed: true,
            ..Default::default()
        };
        rt.hops.wire_to_decoded = LatencySummary {
            count: 10,
            p50: 1_500,
            p99: 9_000,
            max: 12_345,
            ..Default::default()
        };
        let nrt = RosHops {
            publish: LatencySummary {
                count: 3,
                p50: 20_000,
                p99: 40_000,
                max: 41_000,
                ..Default::default()
            },
            ..Default::default()
        };
        let s = status("asebaros", Some(&rt), &nrt);
        assert_eq!((s.level, s.name.as_str()), (0, "asebaros: Hops"));
        let keys: Vec<&str> = s.values.iter().map(|kv| kv.key.as_str()).collect();
        assert_eq!(
            keys,
            [
                "Odometry: wire → decoded (RT) [µs] p50/p99/max",
                "Odometry: handed → publish start [µs] p50/p99/max",
                "Odometry: publish → returned [µs] p50/p99/max",
                "Odometry: wire → odom published [µs] p50/p99/max",
                "cmd_vel: taken → set-point stored [µs] p50/p99/max",
                "cmd_vel: set-point → wire (RT) [µs] p50/p99/max",
                "Odometry samples dropped (publisher behind)",
            ]
        );
        assert_eq!(
            value(&s, "Odometry: wire → decoded (RT) [µs] p50/p99/max"),
            "1.5/9.0/12.3 (n=10)"
        );
        assert_eq!(
            value(&s, "Odometry: publish → returned [µs] p50/p99/max"),
            "20.0/40.0/41.0 (n=3)"
        );
        assert_eq!(
            value(&s, "cmd_vel: set-point → wire (RT) [µs] p50/p99/max"),
            "no samples"
        );
        rt.hops.odometry_out_drops = 4;
        let s = status("x", Some(&rt), &nrt);
        assert_eq!(
            (s.level, s.message.as_str()),
            (1, "4 odometry samples dropped")
        );
        // Before the RT thread's first statistics: the NRT hops alone.
        let s = status("x", None, &nrt);
        assert_eq!(
            value(&s, "Odometry: wire → decoded (RT) [µs] p50/p99/max"),
            "no samples"
        );
    }

    fn trace(wire_ns: u64, total: u64) -> OdomTrace {
        OdomTrace {
            wire_ns,
            decoded_ns: wire_ns + 1,
            handed_ns: wire_ns + 2,
            publish_ns: wire_ns + 3,
            odom_ns: wire_ns + total,
        }
    }

    #[test]
    fn the_slowest_samples_are_kept_slowest_first() {
        let timers = NrtHopTimers::default();
        for i in 1..=1000u64 {
            // totals 10..10_000 in a scrambled order
            let total = 10 * ((i * 389) % 1000 + 1);
            timers.record_odom(trace(i * 1_000_000, total));
        }
        let h = timers.summaries();
        assert_eq!(h.wire_to_odom.count, 1000);
        let totals: Vec<u64> = h.slowest.iter().map(|t| t.total_ns()).collect();
        let want: Vec<u64> = (0..SLOWEST_ODOM as u64).map(|k| 10_000 - 10 * k).collect();
        assert_eq!(totals, want);
        // fewer samples than places: those there are, then the unused entries
        let few = NrtHopTimers::default();
        few.record_odom(trace(5, 40));
        few.record_odom(trace(9, 70));
        let s = few.summaries().slowest;
        assert_eq!((s[0].wire_ns, s[1].wire_ns, s[2].wire_ns), (9, 5, 0));
    }
}
