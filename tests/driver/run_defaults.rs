//! `thymio-rt run` as a new user starts it (issue 16), without ROS: the binary alone, from a directory without any
//! file, is the Thymio driver on the embedded simulated Thymio-II; a Thymio-II that will not be driven is reported
//! once, naming the node and why.

use crate::common;

use std::path::Path;
use std::time::Duration;

/// `thymio-rt run --no-ros --switch-port 0 ARGS` in `cwd`, to its end (`--duration` in `args`); its output.
fn run(cwd: &Path, args: &[&str]) -> Vec<String> {
    let mut cmd = common::thymio_rt();
    cmd.current_dir(cwd)
        .args(["run", "--no-ros", "--switch-port", "0"])
        .args(args);
    let mut p = common::Proc::spawn("thymio-rt run", cmd);
    let status = p.wait_exit(Duration::from_secs(30));
    assert!(
        status.success(),
        "thymio-rt run ended with {status}:\n{}",
        p.seen.join("\n")
    );
    std::mem::take(&mut p.seen)
}

/// Without `--config` the built-in configuration (the shipped file and its driver script) drives the robot:
/// `--cmd-vel` moves it (final odometry in the report). Before, no script was loaded and the robot never moved.
#[test]
fn the_binary_alone_drives_the_simulated_robot() {
    let cwd = tempfile::tempdir().unwrap();
    let report = cwd.path().join("report.json");
    let out = run(
        cwd.path(),
        &[
            "--cmd-vel",
            "0.1,0",
            "--duration",
            "3",
            "--report",
            report.to_str().unwrap(),
        ],
    );
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    let x = v["odom"]["x"].as_f64().unwrap();
    assert!(x > 0.1, "odometry x {x}:\n{}", out.join("\n"));
    assert!(
        out.iter()
            .any(|l| l.contains("builtin:aseba/thymio_ros.aesl")),
        "{}",
        out.join("\n")
    );
}

/// `--report` has a row per RT controller (issue 27, item 4): its name, its `update` and `serve` times, overruns and
/// stops over budget, in the JSON and as a table in the log. Before, a controller's cost was nowhere.
#[test]
fn the_report_has_a_row_per_rt_controller() {
    let cwd = tempfile::tempdir().unwrap();
    let report = cwd.path().join("report.json");
    let out = run(
        cwd.path(),
        &["--duration", "2", "--report", report.to_str().unwrap()],
    );
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    let c = &v["controllers"];
    assert_eq!(c["budget_ns"], 1_000_000, "{c}");
    assert_eq!(c["overruns_to_stop"], 5, "{c}");
    let rows = c["rows"].as_array().unwrap();
    let names: Vec<&str> = rows.iter().map(|r| r["name"].as_str().unwrap()).collect();
    assert_eq!(names, rt::controllers::SHIPPED);
    for r in rows {
        // served every cycle (owner or not); ros owned the wheels: never updated, never over budget
        assert!(r["serve_ns"]["count"].as_u64().unwrap() > 10, "{r}");
        assert_eq!(r["update_ns"]["count"], 0, "{r}");
        assert_eq!(
            (r["overruns"].as_u64(), r["stopped_over_budget"].as_u64()),
            (Some(0), Some(0))
        );
    }
    let header = out.iter().position(|l| l.contains("RT controllers:"));
    let table = &out[header.expect("the controllers' table is logged") + 1..];
    assert!(
        table[0].contains("calls") && table[0].contains("overruns"),
        "{}",
        out.join("\n")
    );
    for name in rt::controllers::SHIPPED {
        assert!(
            table.iter().any(|l| l.starts_with(name)),
            "{name}:\n{}",
            out.join("\n")
        );
    }
}

/// A Thymio-II whose script lacks the driver events, has no code for it, or that has no script to run, is reported
/// once, naming the node and what is missing. Before, it was bridged without a word: no cmd_vel, no odometry, no reason.
#[test]
fn a_thymio_that_is_not_driven_is_reported_once() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("plain.aesl"),
        "<!DOCTYPE aesl-source>\n<network>\n<event size=\"1\" name=\"ping\"/>\n\
         <node nodeId=\"1\" name=\"thymio-II\">var x = 0\n</node>\n</network>\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("epuck.aesl"),
        "<!DOCTYPE aesl-source>\n<network>\n<event size=\"2\" name=\"set_speed\"/>\n\
         <event size=\"3\" name=\"odometry\"/>\n<node nodeId=\"1\" name=\"e-puck0\">var x = 0\n</node>\n</network>\n",
    )
    .unwrap();
    let rt = "rt: {priority: 0, lock_memory: false}\n";
    for (yaml, why) in [
        // a relative path: against the configuration file, not the working directory
        (
            format!("script: {{path: plain.aesl}}\n{rt}"),
            "lacks the driver events odometry, set_speed",
        ),
        (rt.to_owned(), "there is no script to load"),
        (
            format!("script: {{path: epuck.aesl}}\n{rt}"),
            "has no code for thymio-II",
        ),
    ] {
        let config = dir.path().join("config.yaml");
        std::fs::write(&config, yaml).unwrap();
        let out = run(
            cwd.path(),
            &["--config", config.to_str().unwrap(), "--duration", "3"],
        );
        let reports: Vec<&String> = out.iter().filter(|l| l.contains("is not driven")).collect();
        assert_eq!(reports.len(), 1, "{}", out.join("\n"));
        assert!(
            reports[0].contains("node 1 (thymio-II) is not driven") && reports[0].contains(why),
            "{}",
            reports[0]
        );
    }
}
