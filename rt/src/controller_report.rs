//! The RT controllers' rows of the run report (`thymio-rt run --report`): per controller, its
//! `update` calls and their p50 / p99 / max, its overruns of the budget and how often it was
//! stopped for them (from [`ControllerTimesTable`] in the RT statistics).

use handoff::{ControllerTimesTable, TimeSummary};
use serde::Serialize;

/// A duration summary (ns).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Times {
    /// Calls timed.
    pub count: u64,
    /// Median.
    pub p50: u64,
    /// 99th percentile.
    pub p99: u64,
    /// Longest.
    pub max: u64,
}

impl From<TimeSummary> for Times {
    fn from(s: TimeSummary) -> Self {
        Times {
            count: s.count,
            p50: s.p50,
            p99: s.p99,
            max: s.max,
        }
    }
}

/// One controller's row (summed over the robots).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ControllerRow {
    /// Its registry name (`controller N` until [`ControllersSection::name`] names it).
    pub name: String,
    /// `update` (the owner's command): calls and their time (ns).
    pub update_ns: Times,
    /// `serve` (every cycle, owner or not): calls and their time (ns), not budgeted.
    pub serve_ns: Times,
    /// `update` calls over the budget.
    pub overruns: u64,
    /// Times it was stopped for `overruns_to_stop` overruns in a row.
    pub stopped_over_budget: u64,
}

/// `controllers` object of the report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ControllersSection {
    /// `control.controller_budget_us` in ns (0: none).
    pub budget_ns: u64,
    /// `control.controller_overruns`.
    pub overruns_to_stop: u32,
    /// Per controller, in registry order.
    pub rows: Vec<ControllerRow>,
}

impl From<&ControllerTimesTable> for ControllersSection {
    fn from(t: &ControllerTimesTable) -> Self {
        ControllersSection {
            budget_ns: t.budget_ns,
            overruns_to_stop: t.overruns_to_stop,
            rows: t
                .rows()
                .map(|(k, c)| ControllerRow {
                    name: format!("controller {k}"),
                    update_ns: c.update.into(),
                    serve_ns: c.serve.into(),
                    overruns: c.overruns,
                    stopped_over_budget: c.budget_stops,
                })
                .collect(),
        }
    }
}

impl ControllersSection {
    /// Names the rows (registry order).
    pub fn name(&mut self, names: &[&str]) {
        for (row, n) in self.rows.iter_mut().zip(names) {
            row.name = (*n).to_owned();
        }
    }

    /// The rows as a text table (µs), one line per controller.
    pub fn to_text(&self) -> String {
        let mut out = format!(
            "{:<22} {:>9} {:>10} {:>10} {:>10} {:>9} {:>8}\n",
            "controller", "calls", "p50 [µs]", "p99 [µs]", "max [µs]", "overruns", "stopped"
        );
        let us = |ns: u64| format!("{:.1}", ns as f64 / 1e3);
        for r in &self.rows {
            let u = r.update_ns;
            out.push_str(&format!(
                "{:<22} {:>9} {:>10} {:>10} {:>10} {:>9} {:>8}\n",
                r.name,
                u.count,
                us(u.p50),
                us(u.p99),
                us(u.max),
                r.overruns,
                r.stopped_over_budget
            ));
        }
        let budget = if self.budget_ns == 0 {
            "none".to_owned()
        } else {
            format!("{} µs", us(self.budget_ns))
        };
        out.push_str(&format!(
            "budget per update: {budget}, stopped after {} in a row\n",
            self.overruns_to_stop
        ));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use handoff::ControllerTimes;

    #[test]
    fn a_row_per_registered_controller_with_its_times_and_stops() {
        let mut t = ControllerTimesTable {
            count: 2,
            budget_ns: 1_000_000,
            overruns_to_stop: 5,
            ..Default::default()
        };
        t.times[1] = ControllerTimes {
            update: TimeSummary {
                count: 40,
                p50: 1500,
                p99: 1_200_000,
                max: 2_500_000,
            },
            overruns: 7,
            budget_stops: 1,
            serve: TimeSummary::default(),
        };
        t.times[2].overruns = 99; // beyond the registry: not a row
        let mut s = ControllersSection::from(&t);
        assert_eq!(s.rows.len(), 2);
        assert_eq!(s.rows[0].name, "controller 0");
        s.name(&["line_follower", "slow"]);
        let text = s.to_text();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 4, "{text}");
        let slow: Vec<&str> = lines[2].split_whitespace().collect();
        assert_eq!(slow, ["slow", "40", "1.5", "1200.0", "2500.0", "7", "1"]);
        assert!(lines[1].starts_with("line_follower "), "{text}");
        assert_eq!(
            lines[3],
            "budget per update: 1000.0 µs, stopped after 5 in a row"
        );
        let v = serde_json::to_value(&s).unwrap();
        assert_eq!(v["rows"][1]["stopped_over_budget"], 1);
        assert_eq!(v["rows"][1]["update_ns"]["p99"], 1_200_000);
        assert_eq!(v["budget_ns"], 1_000_000);
    }
}
