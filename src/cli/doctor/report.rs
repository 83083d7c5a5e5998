//! The doctor's report: a table for people, JSON for scripts, and whether the robot is healthy.

use super::checks::{Check, Status};
use super::usb::UsbPort;
use serde::Serialize;

/// Everything the doctor found.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// Healthy: no check failed.
    pub healthy: bool,
    /// The target checked, if any.
    pub target: Option<String>,
    /// Thymios and dongles on USB.
    pub usb: Vec<UsbPort>,
    /// The checks, in the order they ran.
    pub checks: Vec<Check>,
}

impl Report {
    /// The report of `checks`.
    pub fn new(target: Option<String>, usb: Vec<UsbPort>, checks: Vec<Check>) -> Report {
        Report {
            healthy: checks.iter().all(|c| c.status != Status::Fail),
            target,
            usb,
            checks,
        }
    }

    /// The names of the failed checks (`node 1 battery` for a node's).
    pub fn failures(&self) -> Vec<String> {
        self.checks
            .iter()
            .filter(|c| c.status == Status::Fail)
            .map(label)
            .collect()
    }

    /// The JSON document.
    pub fn json(&self) -> String {
        serde_json::to_string_pretty(self).expect("the report serializes")
    }

    /// The table: one line per check (status, check, what was found), the fix indented below.
    pub fn table(&self) -> String {
        let mut s = String::new();
        if let Some(t) = &self.target {
            s.push_str(&format!("thymio-rt doctor: {t}\n"));
        }
        let width = self
            .checks
            .iter()
            .map(|c| label(c).len())
            .max()
            .unwrap_or(0);
        for c in &self.checks {
            s.push_str(&format!(
                "{:<4}  {:<width$}  {}\n",
                c.status.label(),
                label(c),
                c.message
            ));
            if let Some(fix) = &c.fix {
                s.push_str(&format!("      {:<width$}  fix: {fix}\n", ""));
            }
        }
        s.push_str(if self.healthy {
            "healthy\n"
        } else {
            "NOT healthy: see the FAIL lines and their fixes\n"
        });
        s
    }
}

/// A check's label: `node 1 battery`, or its name.
fn label(c: &Check) -> String {
    match c.node {
        Some(n) => format!("node {n} {}", c.check),
        None => c.check.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Report {
        Report::new(
            Some("ser:device=/dev/ttyACM0".into()),
            Vec::new(),
            vec![
                Check::new("port", Status::Ok, "/dev/ttyACM0"),
                Check::new("battery", Status::Fail, "3.10 V (empty)")
                    .node(1)
                    .fix("charge it"),
                Check::new("wheels", Status::Skip, "not asked (--wheels)"),
            ],
        )
    }

    #[test]
    fn a_failure_makes_it_unhealthy_and_is_named() {
        let r = sample();
        assert!(!r.healthy);
        assert_eq!(r.failures(), vec!["node 1 battery"]);
        let ok = Report::new(
            None,
            Vec::new(),
            vec![Check::new("usb", Status::Warn, "none")],
        );
        assert!(ok.healthy && ok.failures().is_empty());
    }

    #[test]
    fn table_lines_and_fixes() {
        let t = sample().table();
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines[0], "thymio-rt doctor: ser:device=/dev/ttyACM0");
        assert_eq!(lines[1], "ok    port            /dev/ttyACM0");
        assert_eq!(lines[2], "FAIL  node 1 battery  3.10 V (empty)");
        assert_eq!(lines[3], "                      fix: charge it");
        assert!(lines.last().unwrap().starts_with("NOT healthy"));
    }

    #[test]
    fn json_names_each_check_with_status_and_fix() {
        let v: serde_json::Value = serde_json::from_str(&sample().json()).unwrap();
        assert_eq!(v["healthy"], false);
        assert_eq!(v["checks"][1]["check"], "battery");
        assert_eq!(v["checks"][1]["node"], 1);
        assert_eq!(v["checks"][1]["status"], "fail");
        assert_eq!(v["checks"][1]["fix"], "charge it");
        assert_eq!(v["checks"][0]["fix"], serde_json::Value::Null);
    }
}
