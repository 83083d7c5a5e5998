//! The behaviour scenarios (`tests/behaviour/run.py`) run from the tests: the command that runs a group against a
//! driver, and the check of its result line.

use super::Proc;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// The longest a scenario group runs (its runner's `--timeout`).
pub const GROUP_TIMEOUT: Duration = Duration::from_secs(60);

/// `tests/behaviour/run.py TRANSPORT GROUP` run by `python` (its environment set by the caller).
pub fn scenario_command(
    python: &Path,
    transport: &str,
    group: &str,
    ns: &str,
    dir: &Path,
) -> Command {
    let mut c = Command::new(python);
    c.arg(super::root().join("tests/behaviour/run.py"))
        .args([transport, group, "--ns", ns, "--dir"])
        .arg(dir)
        .args(["--timeout", &GROUP_TIMEOUT.as_secs().to_string()])
        .env("PYTHONUNBUFFERED", "1")
        .env("PYTHONDONTWRITEBYTECODE", "1");
    c
}

/// Waits (bounded) for the scenario runner's result line and fails the test with the scenario's message (and
/// both processes' output) unless the group passed.
pub fn expect_passed(mut scenario: Proc, driver: &mut Proc, transport: &str, group: &str) {
    let line = scenario.wait_line(GROUP_TIMEOUT + Duration::from_secs(10), |l| {
        l.starts_with("{\"transport\"")
    });
    let status = scenario.wait_exit(Duration::from_secs(10));
    let result: serde_json::Value = serde_json::from_str(&line).unwrap();
    driver.drain();
    assert!(
        result["passed"] == true && status.success(),
        "{group} on {transport}: {}\n--- client ({status}):\n{}\n--- driver:\n{}",
        result["failure"].as_str().unwrap_or_default(),
        scenario.seen.join("\n"),
        driver.seen.join("\n")
    );
}
