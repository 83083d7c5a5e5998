//! The flight recorder's row of the end-to-end benchmark (issue 28, item 3): thymio-rt at its default
//! configuration plus `--record <temp dir>/bench.mcap`. Each window records into a temporary directory of its own,
//! deleted after the window (a recording grows by about 80 kB/s); before that the recording is checked — the file
//! is an MCAP file, and the driver's last log line about it says it wrote messages, dropped none and did not stop
//! early — so that a row whose recording failed says so in the results instead of passing silently.

use serde_json::json;
use std::path::{Path, PathBuf};

/// The recording's file name in its temporary directory.
const FILE: &str = "bench.mcap";
/// The first bytes of every MCAP file.
const MCAP_MAGIC: &[u8] = b"\x89MCAP0\r\n";
/// What the driver logs as its recorder finishes (`FlightSummary::describe`).
const SUMMARY: &str = "flight recorder: ";

/// One window's recording: a temporary directory, deleted on drop.
pub struct TempRecording {
    dir: tempfile::TempDir,
}

impl TempRecording {
    /// A new, empty temporary directory.
    pub fn new() -> Result<TempRecording, String> {
        let dir = tempfile::Builder::new()
            .prefix("thymio-bench-record-")
            .tempdir()
            .map_err(|e| format!("cannot create a temporary directory for the recording: {e}"))?;
        Ok(TempRecording { dir })
    }

    /// The file to give to `--record` (it does not exist yet: the driver refuses to overwrite a recording).
    pub fn file(&self) -> PathBuf {
        self.dir.path().join(FILE)
    }

    /// Checks the recording against the driver's output `lines` (all of them, its exit included), then deletes it.
    pub fn finish(self, lines: &[String]) -> Recorded {
        let mut r = Recorded {
            windows: 1,
            ..Recorded::default()
        };
        match parse_summary(lines) {
            Ok((messages, bytes)) => {
                r.messages = messages;
                r.bytes = bytes;
            }
            Err(e) => r.problems.push(e),
        }
        if let Err(e) = check_file(&self.file()) {
            r.problems.push(e);
        }
        let path = self.dir.path().to_owned();
        if let Err(e) = self.dir.close() {
            eprintln!(
                "  warning: the recording {} could not be deleted: {e}",
                path.display()
            );
        }
        r
    }
}

/// What the recordings of one row's windows were.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Recorded {
    /// Windows recorded.
    pub windows: u32,
    /// Messages written, over the windows (the driver's count).
    pub messages: u64,
    /// Bytes written, over the windows (the driver's count).
    pub bytes: u64,
    /// What went wrong, one entry per problem (empty: every recording worked).
    pub problems: Vec<String>,
}

impl Recorded {
    /// Adds another window's recording.
    pub fn merge(&mut self, other: Recorded) {
        self.windows += other.windows;
        self.messages += other.messages;
        self.bytes += other.bytes;
        self.problems.extend(other.problems);
    }

    /// For the results: `ok` is false when a recording failed, `problems` says how.
    pub fn to_json(&self) -> serde_json::Value {
        json!({"ok": self.problems.is_empty(), "windows": self.windows, "messages": self.messages,
               "bytes": self.bytes, "problems": self.problems})
    }
}

/// The driver's summary of its recording, from its output: `(messages, bytes)`, or why the recording failed (no
/// summary, nothing written, records dropped, stopped early).
pub fn parse_summary(lines: &[String]) -> Result<(u64, u64), String> {
    let Some(line) = lines.iter().rev().find(|l| l.contains(SUMMARY)) else {
        return Err(format!(
            "the driver never logged \"{SUMMARY}…\" (its recorder did not finish)"
        ));
    };
    let text = &line[line.find(SUMMARY).unwrap_or(0)..];
    if text.contains("stopped early")
        || text.contains("dropped")
        || text.contains("nothing written")
    {
        return Err(format!("the driver reports a failed recording: {text}"));
    }
    let number_before = |unit: &str| -> Option<u64> {
        let end = text.find(unit)?;
        text[..end]
            .split([' ', ','])
            .rfind(|w| !w.is_empty())?
            .parse()
            .ok()
    };
    match (number_before(" message(s)"), number_before(" byte(s)")) {
        (Some(0), _) => Err(format!("the recording has no message: {text}")),
        (Some(m), Some(b)) => Ok((m, b)),
        _ => Err(format!("unexpected recorder summary: {text}")),
    }
}

/// The recording's first file exists and is an MCAP file.
fn check_file(path: &Path) -> Result<(), String> {
    let mut head = [0u8; 8];
    let read = std::fs::File::open(path).and_then(|mut f| {
        use std::io::Read;
        f.read_exact(&mut head)
    });
    match read {
        Err(e) => Err(format!("{}: {e}", path.display())),
        Ok(()) if head != MCAP_MAGIC => Err(format!("{}: not an MCAP file", path.display())),
        Ok(()) => Ok(()),
    }
}

/// Checks [`parse_summary`] on the driver's lines (the bench has no test harness: run at every start, like
/// `matching::self_check`).
pub fn self_check() {
    let line = |s: &str| vec!["other".to_owned(), s.to_owned()];
    let ok = "2026-11-27T14:00:00Z  INFO thymio_rt::cli::run: flight recorder: 12345 message(s), 1600000 byte(s) \
              in /tmp/x/bench.mcap";
    assert_eq!(parse_summary(&line(ok)), Ok((12345, 1_600_000)));
    for bad in [
        "WARN flight recorder: 10 message(s), 900 byte(s) in /tmp/x/bench.mcap; the RT thread dropped 3 input(s) \
         and 0 frame(s) (its rings were full)",
        "WARN flight recorder: 10 message(s), 900 byte(s) in /tmp/x/bench.mcap; stopped early: disk full",
        "WARN flight recorder: nothing written; stopped early: disk full",
        "INFO flight recorder: 0 message(s), 900 byte(s) in /tmp/x/bench.mcap",
        "INFO flight recorder: garbled",
        "INFO driver interface ready",
    ] {
        assert!(parse_summary(&line(bad)).is_err(), "accepted: {bad}");
    }
}
