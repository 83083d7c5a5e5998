//! Official Aseba clients against thymio-rt's simulated Thymio: the Mobsya client (pyaseba)
//! compiles with the official compiler, uploads and runs a program whose events come back;
//! the community massloader uploads to a protocol-5 robot; asebaswitch joins simulated
//! robots; the pseudo-terminal carries the protocol like a USB Thymio.

use crate::common;

use common::{free_port, missing, need_programs, pyaseba_python, thymio_rt, Proc};
use std::process::Command;
use std::time::Duration;

/// `thymio-rt sim` with `robots` robots from `port`, extra args; waits until it serves.
fn sim(port: u16, robots: usize, extra: &[&str]) -> Proc {
    let mut c = thymio_rt();
    c.args([
        "sim",
        "--robots",
        &robots.to_string(),
        "--listen",
        &format!("tcp:127.0.0.1:{port}"),
        "--duration",
        "60",
    ]);
    c.args(extra);
    let mut p = Proc::spawn("thymio-rt sim", c);
    p.wait_line(Duration::from_secs(10), |l| {
        l.contains("simulation running")
    });
    p
}

/// A port P such that P…P+n−1 are free now.
fn consecutive_free_ports(n: u16) -> u16 {
    loop {
        let p = free_port();
        if p < 65000 && (1..n).all(|i| std::net::TcpListener::bind(("127.0.0.1", p + i)).is_ok()) {
            return p;
        }
    }
}

fn tool(args: &[&str]) -> (bool, String, String) {
    let out = thymio_rt().args(args).output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn mobsya_client_loads_and_runs_a_program_on_the_sim() {
    let Some(python) = pyaseba_python() else {
        return; // peer missing, run opted out: skip recorded
    };
    let port = free_port();
    let _sim = sim(port, 1, &[]);
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("hello.aseba");
    std::fs::write(&src, "var n = 0\ntimer.period[0] = 50\nonevent timer0\nn++\nemit hello [_id, n * 0 + 42, prox.horizontal[2]]\n").unwrap();
    let out = Command::new(python)
        .arg(common::root().join("tests/py/load_and_listen.py"))
        .args([
            &format!("tcp:127.0.0.1;{port}"),
            src.to_str().unwrap(),
            "hello",
            "3",
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    assert_eq!(v["name"], "thymio-II");
    assert_eq!(v["event"][0], 1);
    assert_eq!(v["event"][1], 42);
}

#[test]
fn community_massloader_uploads_to_a_protocol_5_sim() {
    if !need_programs(&["asebamassloader"], missing::ASEBA_SETUP) {
        return; // peer missing, run opted out: skip recorded
    }
    let port = free_port();
    let _sim = sim(port, 1, &["--protocol", "5"]);
    let dir = tempfile::tempdir().unwrap();
    let aesl = dir.path().join("p.aesl");
    std::fs::write(
        &aesl,
        "<!DOCTYPE aesl-source>\n<network>\n<constant value=\"321\" name=\"X\"/>\n<node nodeId=\"1\" name=\"thymio-II\">motor.left.target = X\nmotor.right.target = -X</node>\n</network>\n",
    )
    .unwrap();
    let target = format!("tcp:127.0.0.1;{port}");
    let out = Command::new("timeout")
        .args([
            "20",
            "asebamassloader",
            "--once",
            aesl.to_str().unwrap(),
            &target,
        ])
        .env("LANG", "en_US.UTF-8")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    // massloader uploads and runs: the motors get their targets
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    loop {
        let (ok, stdout, err) = tool(&[
            "vars",
            "get",
            "--target",
            &target,
            "--node",
            "1",
            "motor.left.target",
        ]);
        assert!(ok, "{err}");
        if stdout.trim() == "321" {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "motor.left.target is {stdout}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn asebaswitch_joins_simulated_robots() {
    if !need_programs(&["asebaswitch"], missing::ASEBA_SETUP) {
        return; // peer missing, run opted out: skip recorded
    }
    let sim_base = consecutive_free_ports(2);
    let _sim = sim(sim_base, 2, &[]);
    let switch_port = free_port();
    let mut c = Command::new("asebaswitch");
    c.args([
        "-p",
        &switch_port.to_string(),
        &format!("tcp:127.0.0.1;{sim_base}"),
        &format!("tcp:127.0.0.1;{}", sim_base + 1),
    ]);
    common::ignoring_sigpipe(&mut c);
    let _switch = Proc::spawn("asebaswitch", c);
    common::wait_listening(switch_port, Duration::from_secs(10));
    let (ok, out, err) = tool(&[
        "nodes",
        "--target",
        &format!("tcp:127.0.0.1;{switch_port}"),
        "--json",
    ]);
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let ids: Vec<u64> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["id"].as_u64().unwrap())
        .collect();
    assert_eq!(ids, vec![1, 2]);
}

#[test]
fn pseudo_terminal_carries_the_protocol() {
    let port = free_port();
    let mut s = sim(port, 1, &["--pty"]);
    let line = s
        .seen
        .iter()
        .find(|l| l.contains("ser:device="))
        .cloned()
        .unwrap_or_else(|| s.wait_line(Duration::from_secs(5), |l| l.contains("ser:device=")));
    let target = line[line.find("ser:device=").unwrap()..].trim().to_string();
    let (ok, out, err) = tool(&[
        "vars",
        "get",
        "--target",
        &target,
        "--node",
        "1",
        "_productId",
    ]);
    assert!(ok, "{err}");
    assert_eq!(out.trim(), "8");
}

/// `prox.horizontal` of node 1 of the simulator on `port`, read again (10 s at most) until a
/// sensor sees something: then the sensors have been sampled.
fn proximity(port: u16) -> Vec<i64> {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let (ok, out, err) = tool(&[
            "vars",
            "get",
            "--target",
            &format!("tcp:127.0.0.1;{port}"),
            "--node",
            "1",
            "prox.horizontal",
        ]);
        assert!(ok, "{err}");
        let v: Vec<i64> = out
            .split_whitespace()
            .map(|w| {
                w.parse()
                    .unwrap_or_else(|_| panic!("prox.horizontal: {out}"))
            })
            .collect();
        assert_eq!(v.len(), 7, "prox.horizontal: {out}");
        if v.iter().any(|&x| x != 0) || std::time::Instant::now() > deadline {
            return v;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn sim_arena_file_and_seed_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    // facing the east wall of a 1 m square, its front 2–3 cm from it
    let near = dir.path().join("near.yaml");
    std::fs::write(
        &near,
        "width: 1.0\nheight: 1.0\nwalls: true\nrobots:\n  - [0.90, 0.5, 0.0]\n",
    )
    .unwrap();
    let port = free_port();
    let s = sim(port, 1, &["--arena", near.to_str().unwrap(), "--seed", "3"]);
    let p = proximity(port);
    drop(s);
    assert!(p[2] > 2000, "center sensor facing a wall: {p:?}");
    assert_eq!(&p[5..], &[0, 0], "rear sensors see nothing: {p:?}");

    // facing 1.9 m of open floor, the west wall 12 cm behind it: the rear sensors see the wall
    // (so the sensors have been sampled), the front ones nothing
    let open = dir.path().join("open.yaml");
    std::fs::write(
        &open,
        "width: 2.0\nheight: 2.0\nwalls: true\nrobots:\n  - [0.12, 1.0, 0.0]\n",
    )
    .unwrap();
    let port = free_port();
    let s = sim(port, 1, &["--arena", open.to_str().unwrap(), "--seed", "3"]);
    let p = proximity(port);
    drop(s);
    assert_eq!(&p[..5], &[0; 5], "front sensors facing open floor: {p:?}");
    assert!(p[5] > 0 && p[6] > 0, "rear sensors near a wall: {p:?}");

    // a bad arena file is refused with its name and the faulty key; a bad seed too
    let bad = dir.path().join("bad.yaml");
    std::fs::write(&bad, "width: 2.0\nheight: 2.0\nwals: true\n").unwrap();
    let (ok, _, err) = tool(&["sim", "--arena", bad.to_str().unwrap(), "--duration", "1"]);
    assert!(!ok);
    assert!(err.contains("bad.yaml") && err.contains("wals"), "{err}");
    let (ok, _, err) = tool(&["sim", "--seed", "minus-one", "--duration", "1"]);
    assert!(!ok);
    assert!(err.contains("--seed"), "{err}");
}

/// Runs `asebaswitch_joins_simulated_robots` of this very binary in a child process whose PATH holds no program
/// (asebaswitch is missing), with the environment `env`; its exit status, output and skip record.
fn run_without_asebaswitch(env: &[(&str, &str)]) -> (bool, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty-path");
    std::fs::create_dir(&empty).unwrap();
    let record = dir.path().join("skipped.tsv");
    // bounded by timeout(1), named by its path: the child's PATH is empty
    let mut c = Command::new("/usr/bin/timeout");
    c.arg("60")
        .arg(std::env::current_exe().unwrap())
        .args([
            "sim_peers::asebaswitch_joins_simulated_robots",
            "--exact",
            "--test-threads=1",
        ])
        .env("PATH", &empty)
        .env(missing::RECORD, &record)
        .env_remove(missing::OPT_OUT)
        .env_remove("CI");
    for (k, v) in env {
        c.env(k, v);
    }
    let out = c.output().expect("run this test binary again");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let record = std::fs::read_to_string(&record).unwrap_or_default();
    (out.status.success(), text, record)
}

/// A real-peer test whose peer is missing fails, naming the peer and its install step, on a bare `cargo test`;
/// `THYMIO_SKIP_MISSING_PEERS=1` skips it, saying so and recording one line; `CI=true` refuses that opt-out, and a
/// value it does not understand is refused too. Before, the test returned "ok" without a word in the summary.
#[test]
fn a_missing_peer_fails_the_test_unless_the_run_opts_out() {
    let (ok, out, record) = run_without_asebaswitch(&[]);
    assert!(!ok, "passed without asebaswitch:\n{out}");
    assert!(
        out.contains("asebaswitch not found: run scripts/setup-aseba-peers.sh")
            && out.contains("THYMIO_SKIP_MISSING_PEERS=1"),
        "{out}"
    );
    assert_eq!(record, "", "a failure is no skip");

    let (ok, out, record) = run_without_asebaswitch(&[("THYMIO_SKIP_MISSING_PEERS", "1")]);
    assert!(ok, "opted out, still failed:\n{out}");
    let test = "aseba::sim_peers::asebaswitch_joins_simulated_robots";
    assert!(
        out.contains(&format!(
            "SKIPPED: {test}: asebaswitch not found: run scripts/setup-aseba-peers.sh"
        )),
        "{out}"
    );
    assert_eq!(
        record,
        format!("missing-peer\t{test}\tasebaswitch not found: run scripts/setup-aseba-peers.sh\n")
    );

    let (ok, out, record) =
        run_without_asebaswitch(&[("THYMIO_SKIP_MISSING_PEERS", "1"), ("CI", "true")]);
    assert!(!ok, "CI accepted the opt-out:\n{out}");
    assert!(
        out.contains("asebaswitch not found")
            && out.contains("THYMIO_SKIP_MISSING_PEERS=1 is refused with CI=true"),
        "{out}"
    );
    assert_eq!(record, "");

    let (ok, out, _) = run_without_asebaswitch(&[("THYMIO_SKIP_MISSING_PEERS", "yes")]);
    assert!(!ok, "{out}");
    assert!(
        out.contains("THYMIO_SKIP_MISSING_PEERS=\"yes\" is not understood"),
        "{out}"
    );
}

// ---- thymio-rt doctor (issue 44 item 4): tests/sim/doctor.rs
#[path = "../sim/doctor.rs"]
mod doctor;
