//! What a test does when a real peer it needs is missing, or when the machine forbids what it needs. Shared by the
//! integration tests of every crate (`rt/tests` and `sim/tests` include this file with `#[path]`).
//!
//! - **A missing peer fails the test**, naming the peer and the install step to run: a machine (or a CI job) where an
//!   install step silently failed must not look green with nothing checked. This holds under `scripts/test.sh`, CI
//!   and a bare `cargo test` alike.
//! - **The opt-out**: `THYMIO_SKIP_MISSING_PEERS=1` (for a machine without ROS or Aseba) skips such a test instead:
//!   `SKIPPED: <test>: <reason>` on stderr and a line in the skip record. A run with `CI=true` refuses the opt-out:
//!   the test fails, saying why.
//! - **What the machine forbids** (network namespaces without the privileges, …) is not a missing peer: the test is
//!   skipped with the reason, with or without the opt-out, and recorded too.
//!
//! The skip record is the file named by `THYMIO_SKIP_RECORD` (scripts/test.sh sets it and sums it up at the end):
//! one line per skipped test, `<kind>\t<binary>::<test>\t<reason>`, kind `missing-peer` or `machine-cannot`.
#![allow(dead_code)] // each including crate uses a part

use std::io::Write;
use std::path::PathBuf;

/// The opt-out: `1` skips the tests whose peer is missing instead of failing them (refused with `CI=true`).
pub const OPT_OUT: &str = "THYMIO_SKIP_MISSING_PEERS";
/// The file every skip is appended to, one line per skipped test (unset: skips are only printed).
pub const RECORD: &str = "THYMIO_SKIP_RECORD";
/// Installs Debian's `aseba` (asebaplayground, asebaswitch, asebamassloader), socat and the pyaseba venv.
pub const ASEBA_SETUP: &str = "scripts/setup-aseba-peers.sh";
/// Installs Debian's rosmaster and rospy.
pub const ROS1_SETUP: &str = "scripts/setup-ros1.sh";
/// Installs the ROS 2 venv (rclpy, colcon).
pub const ROS2_SETUP: &str = "scripts/setup-ros2.sh";

/// The first of `programs` that is not on the PATH.
pub fn first_missing<'a>(programs: &[&'a str]) -> Option<&'a str> {
    let dirs: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect())
        .unwrap_or_default();
    programs
        .iter()
        .copied()
        .find(|p| !dirs.iter().any(|d| d.join(p).is_file()))
}

/// A peer the running test needs is missing (`peer` names it, `install` is the step that installs it).
///
/// Panics with both unless the run opted out ([`OPT_OUT`]); opted out, prints and records the skip and returns:
/// the caller then ends the test (see [`peer_missing!`](crate::peer_missing)).
pub fn peer_missing(peer: &str, install: &str) {
    let what = format!("{peer} not found: run {install}");
    match opted_out() {
        Ok(true) => record("missing-peer", &what),
        Ok(false) => panic!(
            "{what} (a machine without it can skip the tests needing it with {OPT_OUT}=1, outside CI)"
        ),
        Err(refused) => panic!("{what}; {refused}"),
    }
}

/// The machine forbids what the running test needs (not a peer an install step provides): prints and records the
/// skip with `why`.
pub fn machine_cannot(why: &str) {
    record("machine-cannot", why);
}

/// Whether the run opted out of failing on missing peers; the reason when the opt-out is refused or not understood.
fn opted_out() -> Result<bool, String> {
    let value = std::env::var(OPT_OUT).unwrap_or_default();
    match value.as_str() {
        "" | "0" => Ok(false),
        "1" if ci() => Err(format!(
            "{OPT_OUT}=1 is refused with CI={}: CI must run every real-peer test",
            std::env::var("CI").unwrap_or_default()
        )),
        "1" => Ok(true),
        other => Err(format!(
            "{OPT_OUT}={other:?} is not understood: 1 skips the tests whose peer is missing, 0 or unset fails them"
        )),
    }
}

/// Whether this is a CI run (`CI` set, as CI services do, to anything but `false`/`0`).
fn ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !matches!(v.trim(), "" | "0" | "false" | "FALSE" | "False"))
}

/// `<binary>::<test>` of the running test (libtest names each test's thread after the test).
pub fn test_name() -> String {
    let binary = std::env::current_exe()
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_default();
    // cargo names test binaries `<target>-<16 hex digits>`
    let binary = match binary.rsplit_once('-') {
        Some((name, hash)) if hash.len() == 16 && hash.bytes().all(|b| b.is_ascii_hexdigit()) => {
            name.to_owned()
        }
        _ => binary,
    };
    let thread = std::thread::current();
    format!("{binary}::{}", thread.name().unwrap_or("?"))
}

/// Prints the skip and appends it to the record, if one is named.
fn record(kind: &str, reason: &str) {
    let test = test_name();
    let reason = reason.replace(['\t', '\n'], " ");
    // straight to the process's stderr, past libtest's capture: a skip shows in every run, passing or not
    let _ = writeln!(std::io::stderr(), "SKIPPED: {test}: {reason}");
    let Some(path) = std::env::var_os(RECORD).filter(|p| !p.is_empty()) else {
        return;
    };
    // one write of one short line to a file opened for appending: lines of concurrent tests do not mix
    let line = format!("{kind}\t{test}\t{reason}\n");
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut f| f.write_all(line.as_bytes()))
        .unwrap_or_else(|e| {
            panic!(
                "cannot record the skip in {RECORD}={}: {e}",
                PathBuf::from(&path).display()
            )
        });
}

/// Ends the running test because a peer it needs is missing: fails naming the peer and its install step, or, when
/// the run opted out (`THYMIO_SKIP_MISSING_PEERS=1`, outside CI), records the skip and returns.
#[macro_export]
macro_rules! peer_missing {
    ($peer:expr, $install:expr $(,)?) => {{
        $crate::common::missing::peer_missing(&$peer, $install);
        return;
    }};
}

/// Ends the running test because the machine forbids what it needs (never for a peer an install step provides: use
/// `peer_missing!`): prints the reason and records the skip.
#[macro_export]
macro_rules! skip {
    ($($arg:tt)*) => {{
        $crate::common::missing::machine_cannot(&format!($($arg)*));
        return;
    }};
}
