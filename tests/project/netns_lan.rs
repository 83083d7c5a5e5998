//! The multi-host test bench itself (tests/common/netns.rs): hosts on one segment reach each other's addresses,
//! not each other's loopback, and a host whose cable is out reaches nobody.

use crate::common;

use common::netns::{Lan, Multicast};
use std::process::Stdio;
use std::time::Duration;

/// A one-shot TCP server on `bind` in host `i`, answering "hello": returns the process.
fn serve(lan: &Lan, i: usize, bind: &str) -> common::Proc {
    let mut c = lan.command(i, "python3");
    c.args([
        "-c",
        "import socket,sys\ns=socket.socket()\ns.setsockopt(socket.SOL_SOCKET,socket.SO_REUSEADDR,1)\n\
         s.bind((sys.argv[1],4242))\ns.listen()\nprint('listening',flush=True)\ns.settimeout(20)\n\
         c,_=s.accept()\nc.sendall(b'hello')\nc.close()",
        bind,
    ]);
    let mut p = common::Proc::spawn("server", c);
    p.wait_line(Duration::from_secs(10), |l| l == "listening");
    p
}

/// Whether host `i` reads "hello" from `addr`:4242 within 2 s.
fn reaches(lan: &Lan, i: usize, addr: &str) -> bool {
    let out = lan
        .command(i, "python3")
        .args([
            "-c",
            "import socket,sys\ns=socket.create_connection((sys.argv[1],4242),timeout=2)\n\
             print(s.recv(5).decode())",
            addr,
        ])
        .stdin(Stdio::null())
        .output()
        .expect("python3");
    String::from_utf8_lossy(&out.stdout).trim() == "hello"
}

#[test]
fn hosts_reach_each_other_but_not_each_others_loopback() {
    if !common::can_make_hosts() {
        return; // recorded: the machine forbids namespaces, or `ip` is missing and the run opted out
    }
    let lan = Lan::new(2, Multicast::On).expect("make the LAN");
    let a = lan.host(0).addr.to_string();
    let _server = serve(&lan, 0, &a);
    assert!(reaches(&lan, 1, &a), "host 1 cannot reach host 0 at {a}");

    let _local = serve(&lan, 0, "127.0.0.1");
    assert!(
        !reaches(&lan, 1, "127.0.0.1"),
        "host 1's loopback reached host 0's"
    );
}

#[test]
fn a_host_without_its_cable_reaches_nobody() {
    if !common::can_make_hosts() {
        return; // recorded: the machine forbids namespaces, or `ip` is missing and the run opted out
    }
    let lan = Lan::new(2, Multicast::Off).expect("make the LAN");
    let a = lan.host(0).addr.to_string();
    lan.set_link(1, false).unwrap();
    let _server = serve(&lan, 0, &a);
    assert!(
        !reaches(&lan, 1, &a),
        "host 1 reached host 0 with its link down"
    );
    lan.set_link(1, true).unwrap();
    assert!(
        reaches(&lan, 1, &a),
        "host 1 did not reach host 0 once its link was back"
    );
}

/// Runs `hosts_reach_each_other_but_not_each_others_loopback` of this very binary again, bounded, with `CI` set to
/// `ci` (`None`: unset) and without the opt-out: with every capability dropped (`setpriv`) when `no_caps`, else with
/// `PATH` empty (no `ip`). Its exit status, output and skip record.
fn rerun(no_caps: bool, ci: Option<&str>) -> (bool, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("skipped.tsv");
    let mut c = std::process::Command::new("/usr/bin/timeout");
    c.arg("60");
    if no_caps {
        c.args(["/usr/bin/setpriv", "--bounding-set=-all", "--inh-caps=-all"]);
    } else {
        c.env("PATH", dir.path());
    }
    c.arg(std::env::current_exe().unwrap())
        .args([
            "netns_lan::hosts_reach_each_other_but_not_each_others_loopback",
            "--exact",
        ])
        .env(common::missing::RECORD, &record)
        .env_remove("CI")
        .env_remove(common::missing::OPT_OUT)
        .stdin(Stdio::null());
    if let Some(ci) = ci {
        c.env("CI", ci);
    }
    let out = c.output().expect("run this test binary again");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (
        out.status.success(),
        text,
        std::fs::read_to_string(&record).unwrap_or_default(),
    )
}

/// A machine that forbids network namespaces skips the multi-host tests outside CI, saying why and recording it as
/// such (`machine-cannot`): that is no missing peer. In CI (`CI=true`) the same skip is recorded and FAILS: a CI job
/// must check every test (before, it passed there with nothing checked). A missing `ip` is a missing peer: the test
/// fails with the install step, in CI or not.
#[test]
fn a_machine_without_namespaces_skips_outside_ci_and_fails_in_ci_and_a_missing_ip_fails() {
    // an unprivileged test process cannot drop capabilities it does not have: its child is just as unprivileged
    let no_caps = common::netns::unavailable().is_none();
    let test = "project::netns_lan::hosts_reach_each_other_but_not_each_others_loopback";
    let line = format!("machine-cannot\t{test}\tnetwork namespaces unavailable on this machine");
    for ci in [None, Some("false"), Some("0")] {
        let (ok, out, record) = rerun(no_caps, ci);
        assert!(ok, "CI={ci:?}: {out}");
        assert!(
            out.contains(&format!(
                "SKIPPED: {test}: network namespaces unavailable on this machine"
            )),
            "{out}"
        );
        assert!(
            record.starts_with(&line) && record.lines().count() == 1,
            "{record}"
        );
    }
    for ci in ["true", "1", "yes"] {
        let (ok, out, record) = rerun(no_caps, Some(ci));
        assert!(!ok, "passed in CI ({ci}) with nothing checked:\n{out}");
        assert!(out.contains("nothing checked, refused with CI="), "{out}");
        assert!(
            record.starts_with(&line) && record.lines().count() == 1,
            "{record}"
        );
    }

    let (ok, out, record) = rerun(false, Some("true"));
    assert!(!ok, "passed without ip:\n{out}");
    assert!(
        out.contains("ip not found: run apt-get install iproute2"),
        "{out}"
    );
    assert_eq!(record, "");
}
