//! `thymio-rt run --record FILE` refuses a file it cannot record into before it drives anything: a directory that
//! does not exist, a name without `.mcap`, an existing recording (never written over). The driver exits at once
//! with a non-zero status and a message naming the option or the file (issue 28; without ROS: `--no-ros`).

use crate::common;

/// Runs `thymio-rt run --no-ros --duration 20 --record FILE` to its end (the test fails if it takes more than 10 s:
/// it took the file as good).
fn run_recording(file: &std::path::Path) -> (Option<i32>, String) {
    let mut args: Vec<&std::ffi::OsStr> = ["run", "--no-ros", "--duration", "20", "--record"]
        .iter()
        .map(std::ffi::OsStr::new)
        .collect();
    args.push(file.as_os_str());
    common::run_to_end(&args, Duration::from_secs(10), "it did not stop at once")
}

use std::time::Duration;

/// The run is refused: non-zero exit, a message naming `culprit` and `--record`/`record.file`, and nothing started
/// (no runtime: the driver's "starting on …" line never comes, nor "recording into …").
fn refused(file: &std::path::Path, culprit: &str) -> String {
    let (code, out) = run_recording(file);
    assert!(
        code.is_some_and(|c| c != 0),
        "--record {} not refused ({code:?}):\n{out}",
        file.display()
    );
    assert!(
        out.contains(culprit),
        "the error does not name {culprit}:\n{out}"
    );
    assert!(
        out.contains("--record") || out.contains("record.file"),
        "the error does not name the option:\n{out}"
    );
    assert!(
        !out.contains("starting on") && !out.contains("recording into"),
        "{out}"
    );
    out
}

#[test]
fn a_bad_recording_path_stops_the_start() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing_dir/x.mcap");
    refused(&missing, &missing.display().to_string());
    assert!(!missing.parent().unwrap().exists());

    let bag = dir.path().join("x.bag");
    refused(&bag, ".mcap");
    assert!(!bag.exists(), "x.bag was created");

    let existing = dir.path().join("old.mcap");
    std::fs::write(&existing, b"an earlier recording").unwrap();
    refused(&existing, &existing.display().to_string());
    assert_eq!(
        std::fs::read(&existing).unwrap(),
        b"an earlier recording",
        "the existing recording was touched"
    );
}

/// A start that fails after the recording's file was made (the Aseba switch's port taken) leaves no file behind:
/// the next run may record under the same name.
#[test]
fn a_failed_start_leaves_no_recording() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("run.mcap");
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    let mut cmd = common::thymio_rt();
    cmd.args([
        "run",
        "--no-ros",
        "--duration",
        "20",
        "--switch-port",
        &port,
        "--record",
    ])
    .arg(&file);
    let mut p = common::Proc::spawn("thymio-rt run", cmd);
    let status = p.wait_exit(Duration::from_secs(20));
    let out = p.seen.join("\n");
    assert!(
        !status.success() && out.contains("Address already in use"),
        "{out}"
    );
    assert!(
        !file.exists(),
        "the failed start left {}: {out}",
        file.display()
    );
}
