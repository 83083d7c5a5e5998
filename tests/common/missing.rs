//! What a test does when a real peer it needs is missing, or when the machine forbids what it needs. Shared by the
//! integration tests of every crate (`rt/tests` and `sim/tests` include this file with `#[path]`). No test passes
//! having checked nothing without saying so, and none does in CI ([`verdict`] is the rule):
//!
//! - **A missing peer fails the test**, naming the peer and the install step to run: a machine (or a CI job) where an
//!   install step silently failed must not look green with nothing checked. This holds under `scripts/test.sh`, CI
//!   and a bare `cargo test` alike.
//! - **The opt-out**: `THYMIO_SKIP_MISSING_PEERS=1` (for a machine without ROS or Aseba) skips such a test instead:
//!   `SKIPPED: <test>: <reason>` on stderr and a line in the skip record. A run with `CI` set (to anything but
//!   empty, `0` or `false`) refuses the opt-out: the test fails, saying why.
//! - **What the machine forbids** (network namespaces without the privileges, no capabilities to drop, …) is not a
//!   missing peer: outside CI the test is skipped with the reason, with or without the opt-out, and recorded; in
//!   CI it is recorded and FAILS (a CI job must have what every test needs).
//!
//! The skip record is the file named by `THYMIO_SKIP_RECORD` (scripts/test.sh sets it, sums it up at the end and
//! fails a CI run that skipped anything): one line per skipped test, `<kind>\t<binary>::<test>\t<reason>`, kind
//! `missing-peer` or `machine-cannot`.
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

/// Why a test checked nothing: the two cases of [`verdict`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cause {
    /// A peer an install step provides is missing (`missing-peer`).
    MissingPeer,
    /// The machine forbids what the test needs: privileges, capabilities (`machine-cannot`).
    MachineCannot,
}

/// What becomes of a test that could check nothing ([`verdict`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Skipped: printed and recorded, the test passes.
    Skip,
    /// Failed with this explanation (after the reason). A `machine-cannot` failure is recorded too.
    Fail(String),
}

/// The rule, from the environment's `CI` and `THYMIO_SKIP_MISSING_PEERS` (`None`: unset): a missing peer fails
/// unless the run opted out (`1`), which CI refuses; what the machine forbids skips outside CI and fails in CI. A
/// value of the opt-out other than empty, `0` or `1` fails, saying what it means.
pub fn verdict(cause: Cause, ci: Option<&str>, opt_out: Option<&str>) -> Verdict {
    let ci_run = is_ci(ci);
    let ci = ci.unwrap_or_default();
    match cause {
        Cause::MachineCannot if ci_run => Verdict::Fail(format!(
            "refused with CI={ci}: a CI run must check every test; give its job what the test needs \
             (outside CI the test is skipped and recorded)"
        )),
        Cause::MachineCannot => Verdict::Skip,
        Cause::MissingPeer => match opt_out.unwrap_or_default() {
            "" | "0" => Verdict::Fail(format!(
                "a machine without it can skip the tests needing it with {OPT_OUT}=1, outside CI"
            )),
            "1" if ci_run => Verdict::Fail(format!(
                "{OPT_OUT}=1 is refused with CI={ci}: CI must run every real-peer test"
            )),
            "1" => Verdict::Skip,
            other => Verdict::Fail(format!(
                "{OPT_OUT}={other:?} is not understood: 1 skips the tests whose peer is missing, 0 or unset fails them"
            )),
        },
    }
}

/// Whether `CI` (`None`: unset) marks a CI run: set, as CI services do, to anything but empty, `0` or `false`.
pub fn is_ci(ci: Option<&str>) -> bool {
    ci.is_some_and(|v| !matches!(v.trim().to_ascii_lowercase().as_str(), "" | "0" | "false"))
}

/// [`verdict`] for this process's environment.
fn verdict_here(cause: Cause) -> Verdict {
    let ci = std::env::var("CI").ok();
    let opt_out = std::env::var(OPT_OUT).ok();
    verdict(cause, ci.as_deref(), opt_out.as_deref())
}

/// A peer the running test needs is missing (`peer` names it, `install` is the step that installs it).
///
/// Panics with both unless the run opted out ([`OPT_OUT`], refused in CI); opted out, prints and records the skip
/// and returns: the caller then ends the test (see [`peer_missing!`](crate::peer_missing)).
pub fn peer_missing(peer: &str, install: &str) {
    let what = format!("{peer} not found: run {install}");
    match verdict_here(Cause::MissingPeer) {
        Verdict::Skip => record("missing-peer", &what),
        Verdict::Fail(why) => panic!("{what} ({why})"),
    }
}

/// The machine forbids what the running test needs (not a peer an install step provides): prints and records the
/// skip with `why`, and returns outside CI (the caller then ends the test); in CI the test fails, saying so.
pub fn machine_cannot(why: &str) {
    record("machine-cannot", why);
    if let Verdict::Fail(refused) = verdict_here(Cause::MachineCannot) {
        panic!("{why}: nothing checked, {refused}");
    }
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
/// `peer_missing!`): prints the reason and records the skip; in CI the test fails ([`machine_cannot`]).
#[macro_export]
macro_rules! skip {
    ($($arg:tt)*) => {{
        $crate::common::missing::machine_cannot(&format!($($arg)*));
        return;
    }};
}
