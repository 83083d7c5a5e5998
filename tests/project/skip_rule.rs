//! The rule of tests/common/missing.rs (`verdict`) for a test that could check nothing: a missing peer fails unless
//! the run opted out outside CI; what the machine forbids (namespaces, capabilities) skips outside CI and fails in
//! CI. Shared by every crate's integration tests (rt/tests and sim/tests include the file), tested once here; the
//! rule at work in a test binary: tests/project/netns_lan.rs.

use crate::common;

use common::missing::{is_ci, verdict, Cause, Verdict};

#[test]
fn ci_is_any_value_but_empty_0_or_false() {
    for ci in ["true", "1", "yes", "TRUE", "gitlab"] {
        assert!(is_ci(Some(ci)), "{ci}");
    }
    for ci in [
        None,
        Some(""),
        Some("0"),
        Some("false"),
        Some("False"),
        Some(" false "),
    ] {
        assert!(!is_ci(ci), "{ci:?}");
    }
}

#[test]
fn what_the_machine_forbids_skips_outside_ci_and_fails_in_ci() {
    for ci in [None, Some("false"), Some("0")] {
        for opt_out in [None, Some("1"), Some("0")] {
            assert_eq!(
                verdict(Cause::MachineCannot, ci, opt_out),
                Verdict::Skip,
                "CI={ci:?} opt-out={opt_out:?}"
            );
        }
    }
    for opt_out in [None, Some("1")] {
        let Verdict::Fail(why) = verdict(Cause::MachineCannot, Some("true"), opt_out) else {
            panic!("skipped in CI with opt-out {opt_out:?}");
        };
        assert!(why.contains("refused with CI=true"), "{why}");
    }
}

#[test]
fn a_missing_peer_fails_unless_opted_out_outside_ci() {
    assert_eq!(verdict(Cause::MissingPeer, None, Some("1")), Verdict::Skip);
    assert_eq!(
        verdict(Cause::MissingPeer, Some("false"), Some("1")),
        Verdict::Skip
    );
    for (ci, opt_out, says) in [
        (None, None, "THYMIO_SKIP_MISSING_PEERS=1, outside CI"),
        (None, Some("0"), "THYMIO_SKIP_MISSING_PEERS=1, outside CI"),
        (
            Some("true"),
            Some("1"),
            "THYMIO_SKIP_MISSING_PEERS=1 is refused with CI=true",
        ),
        (None, Some("yes"), "\"yes\" is not understood"),
    ] {
        match verdict(Cause::MissingPeer, ci, opt_out) {
            Verdict::Fail(why) => assert!(why.contains(says), "{why}"),
            Verdict::Skip => panic!("skipped: CI={ci:?} opt-out={opt_out:?}"),
        }
    }
}
