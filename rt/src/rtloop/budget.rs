//! Every RT controller's time on the RT thread and its budget: each `update` and `serve` call is
//! timed with CLOCK_MONOTONIC (a vDSO read, no system call) into a preallocated histogram per
//! controller (summed over the robots); an `update` longer than the budget is an overrun, and
//! `overruns_to_stop` overruns in a row on one robot stop the controller there
//! (`rtloop/owner.rs`: `stop`, zero speed in that cycle, the wheels back to `ros`). The
//! histograms are summarised into [`RtStats`](handoff::RtStats) at each statistics report.

use crate::hist::Histogram;
use handoff::{ControllerTimes, ControllerTimesTable, MAX_CONTROLLERS};
use std::time::Duration;

/// One controller's record.
struct ControllerClock {
    update: Histogram,
    serve: Histogram,
    overruns: u64,
    budget_stops: u64,
}

/// A robot's run of consecutive over-budget `update` calls of its controller owner (reset by any
/// call within the budget and by every owner change).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Streak {
    /// Calls over the budget in a row.
    pub count: u32,
    /// The longest of them (ns).
    pub max_ns: u64,
}

/// Every controller's record (preallocated for the registry's controllers, in registry order).
pub(crate) struct ControllerClocks {
    clocks: Box<[ControllerClock]>,
    budget_ns: u64,
    overruns_to_stop: u32,
}

impl ControllerClocks {
    /// Records for `controllers` controllers (at most [`MAX_CONTROLLERS`]); `budget`: the longest
    /// `update` within budget (zero: no budget, timed only); `overruns_to_stop`: consecutive
    /// overruns that stop a controller (at least 1).
    pub fn new(controllers: usize, budget: Duration, overruns_to_stop: u32) -> Self {
        let clocks = (0..controllers.min(MAX_CONTROLLERS))
            .map(|_| ControllerClock {
                update: Histogram::new(),
                serve: Histogram::new(),
                overruns: 0,
                budget_stops: 0,
            })
            .collect();
        ControllerClocks {
            clocks,
            budget_ns: budget.as_nanos().min(u64::MAX as u128) as u64,
            overruns_to_stop: overruns_to_stop.max(1),
        }
    }

    /// The budget per `update` (ns; 0: none).
    pub fn budget_ns(&self) -> u64 {
        self.budget_ns
    }

    /// Controller `k`'s `serve` took `ns`.
    pub fn record_serve(&mut self, k: usize, ns: u64) {
        if let Some(c) = self.clocks.get_mut(k) {
            c.serve.record(ns);
        }
    }

    /// Controller `k`'s `update` took `ns` on the robot whose run is `streak`: true when that
    /// robot must stop it now (the run reached `overruns_to_stop`; the caller resets the run).
    pub fn record_update(&mut self, k: usize, ns: u64, streak: &mut Streak) -> bool {
        let Some(c) = self.clocks.get_mut(k) else {
            return false;
        };
        c.update.record(ns);
        if self.budget_ns == 0 || ns <= self.budget_ns {
            *streak = Streak::default();
            return false;
        }
        c.overruns += 1;
        streak.count = streak.count.saturating_add(1);
        streak.max_ns = streak.max_ns.max(ns);
        if streak.count < self.overruns_to_stop {
            return false;
        }
        c.budget_stops += 1;
        true
    }

    /// The table carried by [`RtStats`](handoff::RtStats) (one pass over each histogram's
    /// buckets: called at statistics reports only).
    pub fn table(&self) -> ControllerTimesTable {
        let mut t = ControllerTimesTable {
            count: self.clocks.len() as u8,
            budget_ns: self.budget_ns,
            overruns_to_stop: self.overruns_to_stop,
            ..Default::default()
        };
        for (row, c) in t.times.iter_mut().zip(self.clocks.iter()) {
            *row = ControllerTimes {
                update: c.update.summary().into(),
                overruns: c.overruns,
                budget_stops: c.budget_stops,
                serve: c.serve.summary().into(),
            };
        }
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_overruns_and_stops_per_controller() {
        let mut c = ControllerClocks::new(2, Duration::from_micros(100), 3);
        let mut s = Streak::default();
        // controller 1: 1..=1000 µs (the first 100 within budget), one robot
        let mut stops = 0;
        for us in 1..=1000u64 {
            if c.record_update(1, us * 1000, &mut s) {
                stops += 1;
                s = Streak::default();
            }
        }
        c.record_serve(0, 5_000);
        c.record_serve(0, 7_000);
        let t = c.table();
        assert_eq!((t.count, t.budget_ns, t.overruns_to_stop), (2, 100_000, 3));
        let one = t.times[1];
        assert_eq!(one.update.count, 1000);
        assert!(
            (500_000..=500_000 + 500_000 / 32).contains(&one.update.p50),
            "{one:?}"
        );
        assert!((990_000..=1_000_000).contains(&one.update.p99), "{one:?}");
        assert_eq!(one.update.max, 1_000_000);
        assert_eq!(one.overruns, 900);
        // 900 overruns in a row, every third stops
        assert_eq!((one.budget_stops, stops), (300, 300));
        let zero = t.times[0];
        assert_eq!(zero.update.count, 0);
        assert_eq!((zero.serve.count, zero.serve.max), (2, 7_000));
        assert_eq!(t.rows().count(), 2);
    }

    #[test]
    fn a_call_within_budget_ends_the_run() {
        let mut c = ControllerClocks::new(1, Duration::from_micros(10), 2);
        let mut s = Streak::default();
        assert!(!c.record_update(0, 20_000, &mut s));
        assert_eq!(
            s,
            Streak {
                count: 1,
                max_ns: 20_000
            }
        );
        assert!(
            !c.record_update(0, 10_000, &mut s),
            "at the budget is within it"
        );
        assert_eq!(s, Streak::default());
        assert!(!c.record_update(0, 30_000, &mut s));
        assert!(c.record_update(0, 25_000, &mut s));
        assert_eq!(
            s,
            Streak {
                count: 2,
                max_ns: 30_000
            }
        );
        // no budget: timed, never an overrun
        let mut free = ControllerClocks::new(1, Duration::ZERO, 1);
        let mut s = Streak::default();
        assert!(!free.record_update(0, u64::MAX, &mut s));
        assert_eq!(free.table().times[0].overruns, 0);
        // an index beyond the registry is ignored
        assert!(!free.record_update(5, u64::MAX, &mut s));
    }
}
