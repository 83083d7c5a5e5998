//! `thymio-rt replay` on recordings of the driver (issue 28): a run recorded on the embedded simulator
//! (`run --record`, driven by `--cmd-vel`, files rotated by size) replays to the same frames and odometry bit for
//! bit (`replay --check`, exit 0); a recording whose odometry an independent MCAP writer changed by one bit is
//! caught (exit 1, saying which sample); a file cut short, one that is not a recording, and a rotation whose first
//! file was deleted are refused with a reason naming the file (exit 2).

mod common;

use common::Proc;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// A configuration: the driver script, an unprivileged RT thread, and `extra`.
fn config(dir: &Path, extra: &str) -> PathBuf {
    let path = dir.join("config.yaml");
    let yaml = format!(
        "script: {{path: {}}}\nrt: {{priority: 0, lock_memory: false}}\n{extra}",
        common::root()
            .join("config/aseba/thymio_ros.aesl")
            .display()
    );
    std::fs::write(&path, yaml).unwrap();
    path
}

/// Runs `thymio-rt ARGS` to its end (bounded) and returns its exit code and every line it printed.
fn thymio_rt(args: &[&str], within: Duration) -> (Option<i32>, String) {
    let mut cmd = common::thymio_rt();
    cmd.args(args);
    let mut p = Proc::spawn("thymio-rt", cmd);
    let status = p.wait_exit(within);
    (status.code(), p.seen.join("\n"))
}

/// Records `secs` seconds of the simulated Thymio driven at (0.06 m/s, 0.4 rad/s) into `<dir>/run.mcap`.
fn record(dir: &Path, extra: &str, secs: &str) -> PathBuf {
    let cfg = config(dir, extra);
    let file = dir.join("run.mcap");
    let (code, out) = thymio_rt(
        &[
            "run",
            "-c",
            cfg.to_str().unwrap(),
            "--no-ros",
            "--switch-port",
            "0",
            "--cmd-vel",
            "0.06,0.4",
            "--duration",
            secs,
            "--record",
            file.to_str().unwrap(),
        ],
        Duration::from_secs(60),
    );
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("flight recorder:"), "{out}");
    file
}

/// The number after `after` in `text` (0 if none).
fn number_after(text: &str, after: &str) -> u64 {
    text.split(after)
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
        .and_then(|w| w.parse().ok())
        .unwrap_or(0)
}

fn text(p: &Path) -> String {
    p.to_str().unwrap().to_owned()
}

#[test]
fn a_recorded_run_replays_bit_for_bit_across_its_rotation() {
    let dir = tempfile::tempdir().unwrap();
    // small files: the recording rotates (run.mcap, run_001.mcap, …)
    let file = record(dir.path(), "record: {max_file_mb: 0.1}\n", "4");
    assert!(dir.path().join("run_001.mcap").exists(), "no rotation");
    let (code, out) = thymio_rt(
        &["replay", "--check", &text(&file)],
        Duration::from_secs(60),
    );
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("check: identical"), "{out}");
    // what was compared is the whole run: hundreds of passes, the frames written and the odometry
    assert!(number_after(&out, "file(s)): ") > 300, "passes: {out}");
    assert!(
        number_after(&out, "identical — ") > 50,
        "frames compared: {out}"
    );
    assert!(
        number_after(&out, "frame(s) written and ") > 30,
        "odometry compared: {out}"
    );
}

#[test]
fn a_changed_recording_is_caught_and_damaged_ones_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let file = record(dir.path(), "", "2");

    // one bit of one odometry value changed by an independent writer (valid MCAP, valid CBOR): --check finds it
    let python = common::root().join(".venv-ros/bin/python");
    if python.exists() || std::env::var_os("CI").is_some() {
        let altered = dir.path().join("altered.mcap");
        let st = Command::new(&python)
            .arg(common::root().join("tests/py/alter_recording.py"))
            .args([&file, &altered])
            .env_remove("_ROS_WHEELS_BOOTSTRAP_COMPLETE")
            .output()
            .expect("the MCAP writer (scripts/setup-ros2.sh installs it)");
        assert!(
            st.status.success() && String::from_utf8_lossy(&st.stdout).contains("altered"),
            "{st:?}"
        );
        let (code, out) = thymio_rt(
            &["replay", "--check", &text(&altered)],
            Duration::from_secs(30),
        );
        assert_eq!(code, Some(1), "{out}");
        assert!(
            out.contains("differs from the recording: odometry sample 0"),
            "{out}"
        );
    } else {
        eprintln!("skipped the altered recording: no .venv-ros (scripts/setup-ros2.sh)");
    }

    // cut short: the reader says so, naming the file
    let bytes = std::fs::read(&file).unwrap();
    let cut = dir.path().join("cut.mcap");
    std::fs::write(&cut, &bytes[..bytes.len() * 2 / 3]).unwrap();
    let (code, out) = thymio_rt(&["replay", "--check", &text(&cut)], Duration::from_secs(30));
    assert_eq!(code, Some(2), "{out}");
    assert!(
        out.contains("cut.mcap") && out.contains("damaged or cut short"),
        "{out}"
    );

    // not a recording at all
    let junk = dir.path().join("junk.mcap");
    std::fs::write(&junk, b"{\"not\": \"mcap\"}").unwrap();
    let (code, out) = thymio_rt(&["replay", &text(&junk)], Duration::from_secs(30));
    assert_eq!(code, Some(2), "{out}");
    assert!(out.contains("junk.mcap"), "{out}");

    // the first file of a rotation deleted (as keep_files does): not from the run's start
    let rot = dir.path().join("rot");
    std::fs::create_dir(&rot).unwrap();
    let first = record(&rot, "record: {max_file_mb: 0.1}\n", "3");
    let second = rot.join("run_001.mcap");
    assert!(second.exists(), "no rotation");
    std::fs::remove_file(&first).unwrap();
    let (code, out) = thymio_rt(
        &["replay", "--check", &text(&second)],
        Duration::from_secs(30),
    );
    assert_eq!(code, Some(2), "{out}");
    assert!(out.contains("not at its run's start"), "{out}");
}

/// `replay --ros` publishes the replayed odometry where the recorded run's front end did, equal to what was
/// recorded: rclpy receives every odom (and /tf, joint_states) and finds them equal, in order, to the recording's
/// `/odom` read by the mcap project's reader.
#[cfg(feature = "ros2")]
#[test]
fn replay_publishes_the_run_again_on_ros_2() {
    let dir = tempfile::tempdir().unwrap();
    let file = record(dir.path(), "", "2");
    let (code, out) = thymio_rt(
        &["replay", "--check", &text(&file)],
        Duration::from_secs(30),
    );
    assert_eq!(code, Some(0), "{out}");
    let n = number_after(&out, "frame(s) written and ");
    assert!(n > 10, "{out}");
    let domain = common::test_domain_id().to_string();
    let root = common::root();
    let mut cmd = Command::new(root.join(".venv-ros/bin/python"));
    cmd.arg(root.join("tests/ros/replay_listener.py"))
        .args([
            "/odom",
            "/joint_states",
            &n.to_string(),
            "150",
            &text(&file),
        ])
        .env("ROS_DOMAIN_ID", &domain)
        .env("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
        .env("PYTHONUNBUFFERED", "1")
        .env_remove("_ROS_WHEELS_BOOTSTRAP_COMPLETE");
    let mut listener = Proc::spawn("replay listener", cmd);
    listener.wait_line(Duration::from_secs(60), |l| l.contains("\"ready\""));
    let mut replay = common::thymio_rt();
    replay
        .args([
            "replay",
            "--ros",
            "--rate",
            "4",
            "--wait-subscriber",
            "120",
            &text(&file),
        ])
        .env("ROS_DOMAIN_ID", &domain)
        .env("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
        .env_remove("LD_LIBRARY_PATH")
        .env_remove("LD_PRELOAD");
    let mut replay = Proc::spawn("thymio-rt replay --ros", replay);
    let status = replay.wait_exit(Duration::from_secs(150));
    let log = replay.seen.join("\n");
    assert!(status.success(), "{log}");
    assert!(
        log.contains(&format!("published {n} odometry sample(s)")),
        "{log}"
    );
    let done = listener.wait_line(Duration::from_secs(170), |l| l.contains("\"done\""));
    let v: serde_json::Value = serde_json::from_str(&done).unwrap();
    assert_eq!(v["received"], n, "{done}\n{log}");
    assert_eq!(v["recorded"], n, "{done}");
    assert_eq!(v["equal"], true, "{done}");
    assert_eq!(
        (v["frame"].as_str(), v["child"].as_str()),
        (Some("odom"), Some("base_link")),
        "{done}"
    );
    assert!(
        v["tf"].as_u64() >= Some(n) && v["joint_states"].as_u64() >= Some(n),
        "{done}"
    );
}
