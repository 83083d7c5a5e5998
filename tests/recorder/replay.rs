//! `thymio-rt replay` on recordings of the driver (issue 28): a run recorded on the embedded simulator
//! (`run --record`, driven by `--cmd-vel`, files rotated by size) replays to the same frames and odometry bit for
//! bit (`replay --check`, exit 0); a recording whose odometry an independent MCAP writer changed by one bit is
//! caught (exit 1, saying which sample); one that is not a recording and a rotation whose first file was deleted
//! are refused with a reason naming the file (exit 2). A recording cut by SIGKILL or by a full disk replays up to
//! its last complete chunk and `--check` says where it was cut (issue 42); a link to `/dev/null` records without
//! ending the driver; what is not a regular file and a `--rate` out of range are refused.

use crate::common;
use crate::peer_missing;

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

/// `thymio-rt run` with configuration `cfg` on the embedded simulator, driven at (0.06 m/s, 0.4 rad/s) for `secs`
/// s without ROS, recording into `file`.
fn recording_args<'a>(cfg: &'a Path, file: &'a Path, secs: &'a str) -> Vec<&'a str> {
    vec![
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
    ]
}

/// Records `secs` seconds of the simulated Thymio driven at (0.06 m/s, 0.4 rad/s) into `<dir>/run.mcap`.
fn record(dir: &Path, extra: &str, secs: &str) -> PathBuf {
    let cfg = config(dir, extra);
    let file = dir.join("run.mcap");
    let report = dir.join("report.json");
    let mut args = recording_args(&cfg, &file, secs);
    args.extend(["--report", report.to_str().unwrap()]);
    let (code, out) = thymio_rt(&args, Duration::from_secs(60));
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("flight recorder:"), "{out}");
    // the report gives the recording's account: its files, what went on each channel, nothing dropped
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("report.json")).unwrap()).unwrap();
    let rec = &report["recording"];
    assert_eq!(rec["files"][0], text(&file), "{rec}");
    assert!(
        rec["messages"]["/thymio_rt/rt/inputs"].as_u64() > Some(100),
        "{rec}"
    );
    assert!(rec["messages"]["/odom"].as_u64() > Some(10), "{rec}");
    assert_eq!(
        (
            rec["dropped_inputs"].as_u64(),
            rec["dropped_frames"].as_u64()
        ),
        (Some(0), Some(0)),
        "{rec}"
    );
    assert!(rec["error"].is_null(), "{rec}");
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

    // cut short (a copy of its first two thirds): replayed up to the cut, which is named
    let bytes = std::fs::read(&file).unwrap();
    let cut = dir.path().join("cut.mcap");
    std::fs::write(&cut, &bytes[..bytes.len() * 2 / 3]).unwrap();
    let (code, out) = thymio_rt(&["replay", "--check", &text(&cut)], Duration::from_secs(30));
    assert_eq!(code, Some(0), "{out}");
    assert!(
        out.contains("cut.mcap") && out.contains("check: identical up to the cut"),
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

    // last, as it needs the venv's MCAP writer (a missing venv fails the test: tests/common/missing.rs)
    let python = common::root().join(".venv-ros/bin/python");
    if !python.exists() {
        peer_missing!(
            format!("{} (the mcap writer)", python.display()),
            common::missing::ROS2_SETUP
        );
    }
    // one bit of one odometry value changed by an independent writer (valid MCAP, valid CBOR): --check finds it
    {
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
    }
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

/// `thymio-rt run` on the embedded simulator recording into `file` for up to `secs` s, as a process of its own.
fn recording_run(dir: &Path, file: &Path, secs: &str, wrap: Option<&str>) -> Proc {
    let cfg = config(dir, "");
    let bin = common::thymio_rt();
    let args = recording_args(&cfg, file, secs);
    let mut cmd = match wrap {
        // a shell that sets a limit, then becomes the driver (its environment kept)
        Some(script) => {
            let mut sh = Command::new("sh");
            sh.arg("-c")
                .arg(format!("{script}; exec \"$0\" \"$@\""))
                .arg(bin.get_program())
                .envs(bin.get_envs().filter_map(|(k, v)| v.map(|v| (k, v))));
            for (k, v) in bin.get_envs() {
                if v.is_none() {
                    sh.env_remove(k);
                }
            }
            sh
        }
        None => bin,
    };
    cmd.args(args);
    Proc::spawn("thymio-rt run --record", cmd)
}

/// Waits (bounded) until `file` holds `bytes` bytes.
fn wait_size(file: &Path, bytes: u64, p: &Proc) {
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while std::fs::metadata(file).map_or(0, |m| m.len()) < bytes {
        assert!(
            std::time::Instant::now() < deadline,
            "{} never reached {bytes} bytes:\n{}",
            file.display(),
            p.seen.join("\n")
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_recording_cut_by_sigkill_replays_up_to_its_cut() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("run.mcap");
    let mut run = recording_run(dir.path(), &file, "30", None);
    // a few chunks written out (one a second at least)
    wait_size(&file, 60_000, &run);
    run.signal(nix::sys::signal::Signal::SIGKILL);
    run.wait_exit(Duration::from_secs(10));
    let (code, out) = thymio_rt(
        &["replay", "--check", &text(&file)],
        Duration::from_secs(60),
    );
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("the file has no summary"), "{out}");
    assert!(
        out.contains("check: identical up to the cut (") && out.contains("cut after "),
        "{out}"
    );
    assert!(number_after(&out, "cut after ") > 100, "{out}");
    assert!(number_after(&out, "file(s)): ") > 50, "passes: {out}");
}

#[test]
fn a_full_disk_leaves_the_recording_it_accounts_for() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("run.mcap");
    // the file may not grow past 400 blocks (200 or 400 KiB: chunks of a second or so fit); writes past that fail
    // (EFBIG) instead of killing
    let mut run = recording_run(dir.path(), &file, "30", Some("trap '' XFSZ; ulimit -f 400"));
    run.wait_line(Duration::from_secs(30), |l| {
        l.contains("flight recorder stopped")
    });
    run.signal(nix::sys::signal::Signal::SIGINT);
    let status = run.wait_exit(Duration::from_secs(15));
    let log = run.seen.join("\n");
    assert!(
        status.success(),
        "the driver goes on to its end: {status}\n{log}"
    );
    // one error, when it happened
    assert_eq!(log.matches("flight recorder stopped").count(), 1, "{log}");
    let account = log
        .lines()
        .find(|l| l.contains("flight recorder: "))
        .unwrap_or_else(|| panic!("no account: {log}"));
    assert!(account.contains("left without its summary"), "{account}");
    // what it says was written is on disk: its bytes, and at most the messages a reader finds
    let said = number_after(account, "flight recorder: ");
    let bytes = number_after(account, "message(s), ");
    assert!(said > 0, "{account}");
    assert_eq!(bytes, std::fs::metadata(&file).unwrap().len(), "{account}");
    let (code, out) = thymio_rt(
        &["replay", "--check", &text(&file)],
        Duration::from_secs(60),
    );
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("check: identical up to the cut"), "{out}");
    assert!(number_after(&out, "cut after ") >= said, "{account}\n{out}");
}

#[test]
fn recording_to_a_link_to_dev_null_does_not_end_the_driver() {
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("null.mcap");
    std::os::unix::fs::symlink("/dev/null", &link).unwrap();
    // 4 s: the chunks written out (one a second) made the seeking writer panic and abort the driver at ~1 s
    let mut run = recording_run(dir.path(), &link, "4", None);
    let status = run.wait_exit(Duration::from_secs(30));
    let log = run.seen.join("\n");
    assert!(status.success(), "{status}\n{log}");
    let account = log
        .lines()
        .find(|l| l.contains("flight recorder: "))
        .unwrap_or_else(|| panic!("no account: {log}"));
    assert!(
        number_after(account, "flight recorder: ") > 100,
        "{account}"
    );
    assert!(
        !log.contains("stopped early") && !log.contains("panicked"),
        "{log}"
    );
}

#[test]
fn replay_refuses_what_is_not_a_regular_file_and_a_rate_out_of_range() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo.mcap");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let zero = dir.path().join("zero.mcap");
    std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
    for (p, kind) in [
        (&fifo, "a FIFO"),
        (&zero, "a device"),
        (&dir.path().to_path_buf(), "a directory"),
    ] {
        let (code, out) = thymio_rt(&["replay", "--check", &text(p)], Duration::from_secs(20));
        assert_eq!(code, Some(2), "{out}");
        assert!(
            out.contains(&format!("is {kind}, not a regular file")),
            "{out}"
        );
    }
    for rate in ["1e-300", "0.001", "1000", "inf", "-1"] {
        let (code, out) = thymio_rt(
            &[
                "replay",
                "--ros",
                &format!("--rate={rate}"),
                "--wait-subscriber",
                "0",
                &text(&fifo),
            ],
            Duration::from_secs(20),
        );
        assert!(code.is_some_and(|c| c != 0), "{rate}: {out}");
        assert!(out.contains("a factor from 0.01 to 100"), "{rate}: {out}");
    }
}

/// `replay --ros` at a slow pace ends on Ctrl-C (rcl takes SIGINT, and the pacing waited for the next sample
/// without looking: 1e-300 panicked, 0.01 waited minutes per sample).
#[cfg(feature = "ros2")]
#[test]
fn replay_at_a_slow_rate_ends_on_ctrl_c() {
    let dir = tempfile::tempdir().unwrap();
    let file = record(dir.path(), "", "2");
    let mut replay = common::thymio_rt();
    replay
        .args([
            "replay",
            "--ros",
            "--rate",
            "0.01",
            "--wait-subscriber",
            "0",
            &text(&file),
        ])
        .env_remove("LD_LIBRARY_PATH")
        .env_remove("LD_PRELOAD");
    let mut replay = Proc::spawn("thymio-rt replay --ros", replay);
    // said once it paces the samples
    replay.wait_line(Duration::from_secs(60), |l| l.contains("--ros: publishing"));
    replay.signal(nix::sys::signal::Signal::SIGINT);
    let status = replay.wait_exit(Duration::from_secs(10));
    let log = replay.seen.join("\n");
    assert!(status.success(), "{status}\n{log}");
    assert!(log.contains("stopped by a signal"), "{log}");
}

#[test]
fn a_deeply_nested_configuration_in_a_recording_is_refused_before_the_yaml_parser() {
    use nrt_recorder::flight::rt_channels::RtChannels;
    use nrt_recorder::{RecordLimits, Recording};
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("nested.mcap");
    // 80 KB of nesting: the YAML parser took seconds to refuse it
    let yaml = format!("{}{}", "[".repeat(40_000), "]".repeat(40_000));
    let meta = std::collections::BTreeMap::from([("yaml".to_owned(), yaml)]);
    let mut rec = Recording::create(&file, RecordLimits::NONE, &[("configuration", meta)]).unwrap();
    let mut channels = RtChannels::register(&mut rec, 0).unwrap();
    let pass = handoff::RecInput::Pass {
        kind: handoff::PassKind::Periodic,
        now_ns: 1_000_000,
        wake: false,
        timer: true,
        signal: false,
    };
    channels
        .input(
            &mut rec,
            &handoff::RecEntry {
                seq: 0,
                input: pass,
            },
        )
        .unwrap();
    rec.finish().unwrap();
    let (code, out) = thymio_rt(&["replay", &text(&file)], Duration::from_secs(30));
    assert_eq!(code, Some(2), "{out}");
    assert!(
        out.contains(
            "nested.mcap: its configuration (metadata): YAML nested deeper than the limit"
        ),
        "{out}"
    );
}

/// A `RobotView` of robot 0 with a fresh accelerometer sample `acc` taken at `t_ns`.
fn acc_view(acc: [i16; 3], t_ns: u64) -> thymio_rt::rt::controllers::RobotView {
    thymio_rt::rt::controllers::RobotView {
        robot: thymio_rt::handoff::RobotId(0),
        now_ns: t_ns,
        acc,
        acc_t_ns: Some(t_ns),
        link_up: true,
        ..Default::default()
    }
}

#[test]
fn replay_puts_the_pick_up_stops_recorded_parameters_back_into_the_driver_s_filter() {
    use thymio_rt::handoff::{Twist2, WheelCommand};
    // the filters `replay` builds from a recording's configuration (pick-up stop off), and its setter
    let (mut filters, ports) =
        thymio_rt::runtime::rt_filters(&thymio_rt::config::Config::default());
    let mut set = ports.into_replay_setter();
    let drive = WheelCommand::Twist(Twist2 {
        linear: 0.1,
        angular: 0.0,
    });
    let pickup = &mut filters[2];
    // lifted and tilted (z 12): each new sample, what the pick-up stop makes of the owner's command
    let mut t = 0;
    let mut tilted = |f: &mut Box<dyn thymio_rt::rt::controllers::Filter>| {
        t += 125_000_000;
        let mut cmd = drive;
        f.update(&acc_view([2, 18, 12], t), &mut cmd);
        cmd
    };
    for _ in 0..4 {
        assert_eq!(tilted(pickup), drive, "off at the start");
    }
    // recorded as ReflexParams 2: on, z_min (threshold) 10, below this tilt: never held
    set(2, true, 10, 2, 1_000_000_000).unwrap();
    for _ in 0..4 {
        assert_eq!(tilted(pickup), drive, "z_min 10 put back");
    }
    // z_min 15 and 3 samples: held at the third tilted sample, not the second
    set(2, true, 15, 3, 1_000_000_000).unwrap();
    assert_eq!([tilted(pickup), tilted(pickup)], [drive, drive]);
    assert_eq!(tilted(pickup), WheelCommand::Stop, "samples 3 put back");
    // a reflex the driver does not have is refused
    assert!(set(3, true, 0, 0, 0).is_err());
}
