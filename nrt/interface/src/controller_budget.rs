//! The RT controllers' time and budget, described once for every front end: a `/diagnostics` status per
//! controller (its `update` p50/p99/max, overruns of the budget, stops over budget; OK, WARN once it overran,
//! ERROR once the RT thread stopped it) and the warning said when the RT thread stops a controller that overran
//! its budget `control.controller_overruns` times in a row (which controller, which robot, the measured times).
//! The RT side (timing, budget, the stop itself) is `rt::rtloop`'s; the figures come in the RT statistics
//! (`RtStats::controllers`), the stop as `EngineEvent::ControllerStopped` (the owner change itself comes, as every
//! owner change, as `EngineEvent::Owner`, so `controller_owner` and the switch show `ros`).

use crate::owner_switch::Switch;
use handoff::{NodeId, OwnerId, RtStats, TimeSummary};
use nrt_engine::diagnostics::{kv, DiagnosticStatus, ERROR, OK, WARN};

/// `/diagnostics` key: `update`'s time.
pub const UPDATE: &str = "update [µs] p50/p99/max";
/// `/diagnostics` key: `serve`'s time.
pub const SERVE: &str = "serve [µs] p50/p99/max";
/// `/diagnostics` key: the budget.
pub const BUDGET: &str = "Budget per update [µs]";
/// `/diagnostics` key: calls over the budget.
pub const OVERRUNS: &str = "Overruns";
/// `/diagnostics` key: stops over budget.
pub const STOPPED: &str = "Stopped over budget";

fn us(ns: u64) -> String {
    format!("{:.1}", ns as f64 / 1e3)
}

fn times(s: &TimeSummary) -> String {
    if s.count == 0 {
        "no calls".to_owned()
    } else {
        format!("{}/{}/{} (n={})", us(s.p50), us(s.p99), us(s.max), s.count)
    }
}

/// The warning said when the RT thread stopped controller `owner` of robot `node` over its budget.
pub fn stopped_line(switch: &Switch, node: NodeId, stop: &handoff::OverBudget) -> String {
    format!(
        "node {node}: controller {} stopped: its update took more than its budget of {} µs {} times in a \
         row (last {} µs, longest {} µs); zero speed sent, the wheels are back with ros (switch to it again to \
         restart it)",
        switch.name(stop.owner),
        us(stop.budget_ns),
        stop.overruns,
        us(stop.last_ns),
        us(stop.max_ns)
    )
}

/// One `/diagnostics` status per RT controller (`<prefix>: Controller <name>`), from the last RT statistics
/// (none before the first).
pub fn statuses(prefix: &str, switch: &Switch, stats: Option<&RtStats>) -> Vec<DiagnosticStatus> {
    let Some(stats) = stats else {
        return Vec::new();
    };
    let t = &stats.controllers;
    t.rows()
        .map(|(k, c)| {
            let name = switch.name(OwnerId::controller(k as u8));
            let (level, message) = if c.budget_stops > 0 {
                (
                    ERROR,
                    format!(
                        "stopped {} times over budget ({} overruns in a row)",
                        c.budget_stops, t.overruns_to_stop
                    ),
                )
            } else if c.overruns > 0 {
                (WARN, format!("{} calls over budget", c.overruns))
            } else {
                (OK, "OK".to_owned())
            };
            let budget = if t.budget_ns == 0 {
                "none".to_owned()
            } else {
                us(t.budget_ns)
            };
            DiagnosticStatus {
                level,
                name: format!("{prefix}: Controller {name}"),
                message,
                hardware_id: String::new(),
                values: vec![
                    kv(UPDATE, times(&c.update)),
                    kv(OVERRUNS, c.overruns),
                    kv(STOPPED, c.budget_stops),
                    kv(BUDGET, budget),
                    kv(SERVE, times(&c.serve)),
                ],
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use handoff::{ControllerTimes, ControllerTimesTable, OwnerNames};

    fn stats(controllers: ControllerTimesTable) -> RtStats {
        RtStats {
            period_ns: 10_000_000,
            allocator_installed: true,
            controllers,
            ..Default::default()
        }
    }

    fn value<'a>(s: &'a DiagnosticStatus, key: &str) -> &'a str {
        &s.values
            .iter()
            .find(|kv| kv.key == key)
            .unwrap_or_else(|| panic!("no {key} in {:?}", s.values))
            .value
    }

    fn switch() -> Switch {
        let mut s = Switch::default();
        s.set_names(OwnerNames::new(vec!["line_follower", "go_to_pose", "slow"]));
        s
    }

    #[test]
    fn a_status_per_controller_ok_warn_when_it_overran_error_when_it_was_stopped() {
        let sw = switch();
        assert!(
            statuses("asebaros", &sw, None).is_empty(),
            "no statistics yet"
        );
        let mut t = ControllerTimesTable {
            count: 3,
            budget_ns: 1_000_000,
            overruns_to_stop: 5,
            ..Default::default()
        };
        let fast = TimeSummary {
            count: 100,
            p50: 1_500,
            p99: 3_000,
            max: 4_000,
        };
        t.times[0] = ControllerTimes {
            update: fast,
            serve: fast,
            ..Default::default()
        };
        t.times[1] = ControllerTimes {
            update: fast,
            overruns: 2,
            ..Default::default()
        };
        t.times[2] = ControllerTimes {
            update: TimeSummary {
                count: 5,
                p50: 2_000_000,
                p99: 2_500_000,
                max: 2_500_000,
            },
            overruns: 5,
            budget_stops: 1,
            ..Default::default()
        };
        let s = statuses("asebaros", &sw, Some(&stats(t)));
        let names: Vec<_> = s.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "asebaros: Controller line_follower",
                "asebaros: Controller go_to_pose",
                "asebaros: Controller slow"
            ]
        );
        assert_eq!((s[0].level, s[0].message.as_str()), (OK, "OK"));
        assert_eq!(value(&s[0], UPDATE), "1.5/3.0/4.0 (n=100)");
        assert_eq!(value(&s[0], BUDGET), "1000.0");
        assert_eq!(
            (s[1].level, s[1].message.as_str()),
            (WARN, "2 calls over budget")
        );
        assert_eq!(value(&s[1], SERVE), "no calls");
        assert_eq!(s[2].level, ERROR);
        assert_eq!(
            s[2].message,
            "stopped 1 times over budget (5 overruns in a row)"
        );
        assert_eq!(value(&s[2], STOPPED), "1");
        assert_eq!(value(&s[2], UPDATE), "2000.0/2500.0/2500.0 (n=5)");
    }

    #[test]
    fn the_stop_names_the_controller_the_robot_and_the_times() {
        let stop = handoff::OverBudget {
            owner: OwnerId::controller(2),
            budget_ns: 1_000_000,
            overruns: 5,
            last_ns: 2_400_000,
            max_ns: 3_100_000,
        };
        let line = stopped_line(&switch(), NodeId(7), &stop);
        assert_eq!(
            line,
            "node 7: controller slow stopped: its update took more than its budget of 1000.0 µs 5 times in a row \
             (last 2400.0 µs, longest 3100.0 µs); zero speed sent, the wheels are back with ros (switch to it \
             again to restart it)"
        );
    }
}
