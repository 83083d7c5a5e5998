//! Where the tail of the wire → `odom` hop goes (issue 29): the driver's `--report` keeps, per window, its 32
//! slowest odometry samples from the wire to `odom` published, each split into its hops (`odom_slowest`:
//! decode, hand-over to the publisher thread, that thread's wait, publish). Every sample the client saw above
//! a threshold (the floor's p99) is looked up among them by its wire time: found, its time splits into the
//! driver's hops and the rest (DDS and the client's own wake-up); not found, the driver's part was at most the
//! fastest of the window's kept samples, and the rest is at least the remainder.

use crate::matching::Matched;
use serde_json::json;
use std::path::Path;

/// One sample of the driver's `odom_slowest` (ns): the report's own type.
pub type DriverTrace = rt::report::SlowOdom;

/// The driver's slowest samples of one window.
#[derive(Debug, Clone, Default)]
pub struct WindowTraces {
    /// The window's span (CLOCK_MONOTONIC ns): from the driver's start to its exit.
    pub from_ns: u64,
    pub to_ns: u64,
    pub traces: Vec<DriverTrace>,
    /// The driver's wire → `odom` published histogram of the window (its `--report` quantiles).
    pub hop: serde_json::Value,
}

impl WindowTraces {
    /// Reads the `--report` of a driver that ran from `from_ns` to `to_ns`.
    pub fn read(report: &Path, from_ns: u64, to_ns: u64) -> Result<WindowTraces, String> {
        let text =
            std::fs::read_to_string(report).map_err(|e| format!("{}: {e}", report.display()))?;
        let v: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| format!("{}: {e}", report.display()))?;
        let traces = serde_json::from_value(v["odom_slowest"].clone())
            .map_err(|e| format!("{}: odom_slowest: {e}", report.display()))?;
        Ok(WindowTraces {
            from_ns,
            to_ns,
            traces,
            hop: v["hops"]["odom_wire_to_published_ns"].clone(),
        })
    }

    /// The most the driver's part of a sample not kept can have been: the fastest kept one (all samples are
    /// kept while there are fewer than the places).
    fn bound_ns(&self) -> u64 {
        self.traces.iter().map(|t| t.total_ns).min().unwrap_or(0)
    }

    /// The kept sample whose bytes the driver read between `wire` (the relay's stamp) and `received`.
    fn find(&self, wire: u64, received: u64) -> Option<&DriverTrace> {
        self.traces
            .iter()
            .filter(|t| t.wire_ns >= wire && t.wire_ns <= received)
            .min_by_key(|t| t.wire_ns)
    }

    fn covers(&self, wire: u64) -> bool {
        (self.from_ns..=self.to_ns).contains(&wire)
    }
}

fn quantiles(mut v: Vec<u64>) -> serde_json::Value {
    if v.is_empty() {
        return serde_json::Value::Null;
    }
    v.sort_unstable();
    let at = |q: f64| v[((v.len() - 1) as f64 * q).round() as usize] as f64 / 1000.0;
    json!({"p50": at(0.5), "max": at(1.0), "n": v.len()})
}

/// The split of every odometry sample of `odom` slower than `threshold_ns` (see the module documentation).
pub fn attribute(odom: &Matched, windows: &[WindowTraces], threshold_ns: u64) -> serde_json::Value {
    let (mut known, mut unknown) = (Vec::new(), Vec::new());
    for (lat, wire) in odom.lat.iter().zip(&odom.start) {
        if *lat <= threshold_ns {
            continue;
        }
        let received = wire + lat;
        match windows.iter().find_map(|w| w.find(*wire, received)) {
            Some(t) => known.push((*lat, *t)),
            None => {
                let bound = windows
                    .iter()
                    .find(|w| w.covers(*wire))
                    .map_or(0, WindowTraces::bound_ns);
                unknown.push((*lat, bound));
            }
        }
    }
    let driver: Vec<u64> = known.iter().map(|(_, t)| t.total_ns).collect();
    let rest: Vec<u64> = known
        .iter()
        .map(|(l, t)| l.saturating_sub(t.total_ns))
        .collect();
    let part = |f: fn(&DriverTrace) -> u64| quantiles(known.iter().map(|(_, t)| f(t)).collect());
    let mut slowest: Vec<&(u64, DriverTrace)> = known.iter().collect();
    slowest.sort_by_key(|(l, _)| std::cmp::Reverse(*l));
    json!({
        "threshold_us": threshold_ns as f64 / 1000.0,
        "slow": known.len() + unknown.len(),
        "driver_known": known.len(),
        "driver_us": quantiles(driver),
        "decode_us": part(|t| t.decode_ns),
        "hand_us": part(|t| t.hand_ns),
        "wait_us": part(|t| t.wait_ns),
        "publish_us": part(|t| t.publish_ns),
        "after_publish_us": quantiles(rest),
        "not_kept": unknown.len(),
        "not_kept_driver_at_most_us": unknown.iter().map(|(_, b)| *b).max().map(|b| b as f64 / 1000.0),
        "not_kept_after_publish_at_least_us": quantiles(unknown.iter().map(|(l, b)| l.saturating_sub(*b)).collect()),
        "worst": slowest.iter().take(10).map(|(l, t)| json!({
            "client_us": *l as f64 / 1000.0, "driver_us": t.total_ns as f64 / 1000.0,
            "decode_us": t.decode_ns as f64 / 1000.0, "hand_us": t.hand_ns as f64 / 1000.0,
            "wait_us": t.wait_ns as f64 / 1000.0, "publish_us": t.publish_ns as f64 / 1000.0,
        })).collect::<Vec<_>>(),
        "driver_hop_per_window": windows.iter().map(|w| w.hop.clone()).collect::<Vec<_>>(),
    })
}

/// Checks the split on synthetic data (run before measuring, as the matching's self-check).
pub fn self_check() {
    let odom = Matched {
        lat: vec![500_000, 3_000_000, 4_000_000],
        start: vec![1_000_000, 2_000_000, 10_000_000],
        ..Matched::default()
    };
    let t = |wire_ns, total_ns| DriverTrace {
        wire_ns,
        decode_ns: 10_000,
        hand_ns: 5_000,
        wait_ns: total_ns - 115_000,
        publish_ns: 100_000,
        total_ns,
    };
    let w = WindowTraces {
        from_ns: 0,
        to_ns: 60_000_000,
        // the sample at 2 ms read 20 µs after the relay's stamp; another one far away
        traces: vec![t(2_020_000, 2_500_000), t(50_000_000, 300_000)],
        hop: serde_json::Value::Null,
    };
    let a = attribute(&odom, &[w], 1_000_000);
    assert_eq!(a["slow"], 2, "{a}");
    assert_eq!(a["driver_known"], 1, "{a}");
    assert_eq!(a["driver_us"]["max"], 2500.0, "{a}");
    assert_eq!(a["after_publish_us"]["max"], 500.0, "{a}");
    // the sample at 10 ms was not kept: the driver's part was at most the fastest kept (300 µs)
    assert_eq!(a["not_kept_driver_at_most_us"], 300.0, "{a}");
    assert_eq!(
        a["not_kept_after_publish_at_least_us"]["max"], 3700.0,
        "{a}"
    );
}
