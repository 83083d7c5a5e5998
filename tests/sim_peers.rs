//! Official Aseba clients against thymio-rt's simulated Thymio: the Mobsya client (pyaseba)
//! compiles with the official compiler, uploads and runs a program whose events come back;
//! the community massloader uploads to a protocol-5 robot; asebaswitch joins simulated
//! robots; the pseudo-terminal carries the protocol like a USB Thymio.

mod common;

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
            "asebaswitch_joins_simulated_robots",
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
    let test = "sim_peers::asebaswitch_joins_simulated_robots";
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

// ---- thymio-rt doctor (issue 44 item 4) ----------------------------------------------------------------------------

/// `thymio-rt doctor ARGS --json` run as `as_nobody` says: its exit status and report. Bounded by `timeout`(1).
fn doctor(args: &[&str], as_nobody: bool) -> (Option<i32>, serde_json::Value, String) {
    let mut c = Command::new("/usr/bin/timeout");
    c.arg("60");
    if as_nobody {
        c.args([
            "/usr/bin/setpriv",
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
        ]);
    }
    let bin = thymio_rt().get_program().to_owned();
    c.arg(bin)
        .arg("doctor")
        .args(args)
        .args(["--json", "--timeout", "5"]);
    let out = c.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let report = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("doctor {args:?}: not JSON ({e}):\n{stdout}\n{stderr}"));
    (out.status.code(), report, stderr)
}

/// The failed checks of a doctor report, as `(check, message, fix)`.
fn failed(report: &serde_json::Value) -> Vec<(String, String, String)> {
    report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["status"] == "fail")
        .map(|c| {
            let s = |k: &str| c[k].as_str().unwrap_or("").to_owned();
            (s("check"), s("message"), s("fix"))
        })
        .collect()
}

/// The check `name` of a doctor report (of node 1 for the per-node checks).
fn check<'a>(report: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["check"] == name)
        .unwrap_or_else(|| panic!("no {name} check in {report:#}"))
}

/// `thymio-rt sim` serving one robot on TCP `port` and on a pseudo-terminal: the process and the pty's path.
fn sim_with_pty(port: u16) -> (Proc, String) {
    sim_robots_with_pty(port, 1)
}

/// `thymio-rt sim` serving `robots` robots from TCP `port` and all of them on one pseudo-terminal (as a wireless
/// dongle carries several robots): the process and the pty's path.
fn sim_robots_with_pty(port: u16, robots: usize) -> (Proc, String) {
    let mut s = sim(port, robots, &["--pty"]);
    let line = s
        .seen
        .iter()
        .find(|l| l.contains("ser:device="))
        .cloned()
        .unwrap_or_else(|| s.wait_line(Duration::from_secs(5), |l| l.contains("ser:device=")));
    let device = line[line.find("ser:device=").unwrap() + "ser:device=".len()..]
        .trim()
        .to_string();
    (s, device)
}

#[test]
fn doctor_reports_a_healthy_simulated_robot_over_a_pty_and_tcp() {
    let port = free_port();
    let (_sim, pty) = sim_with_pty(port);
    let (code, r, err) = doctor(&["--target", &format!("ser:device={pty}")], false);
    assert_eq!(code, Some(0), "{r:#}\n{err}");
    assert_eq!(r["healthy"], true);
    assert!(failed(&r).is_empty(), "{r:#}");
    for name in [
        "port",
        "holders",
        "permission",
        "connect",
        "protocol",
        "script",
        "battery",
    ] {
        assert_eq!(check(&r, name)["status"], "ok", "{name}: {r:#}");
    }
    // a process that holds the pty's master (the simulator, which may keep the slave open too) serves the port: no rival
    let holders = &check(&r, "holders")["data"]["holders"];
    assert!(
        holders
            .as_array()
            .unwrap()
            .iter()
            .all(|h| h["serves"] == true && h["name"] == "thymio-rt"),
        "{holders}"
    );
    assert_eq!(check(&r, "protocol")["data"]["protocol_version"], 9);
    assert_eq!(
        check(&r, "script")["data"]["fwversion"],
        serde_json::json!([14, 0])
    );
    assert!(
        check(&r, "battery")["data"]["volts"].as_f64().unwrap() >= 3.5,
        "{r:#}"
    );
    let prox = &check(&r, "proximity")["data"];
    assert_eq!(prox["sensors"].as_array().unwrap().len(), 7, "{prox}");
    assert_eq!(prox["threshold"], 2000);
    let ground = &check(&r, "ground")["data"];
    assert_eq!(ground["sensors"].as_array().unwrap().len(), 2, "{ground}");
    assert_eq!(ground["threshold"], 30);
    // the suggestion is half of what the table reads (a drop reads near 0)
    let floor = ground["sensors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["min"].as_i64().unwrap())
        .min()
        .unwrap();
    assert!(floor > 30, "{ground}");
    assert_eq!(ground["suggested_threshold"], floor / 2);
    assert_eq!(
        check(&r, "wheels")["status"],
        "skip",
        "the wheels turn only with --wheels"
    );

    // over TCP, with the wheel check: both wheels turn forward, backward, then stop
    let target = format!("tcp:host=127.0.0.1;port={port}");
    let (code, r, err) = doctor(&["--target", &target, "--wheels", "--samples", "3"], false);
    assert_eq!(code, Some(0), "{r:#}\n{err}");
    let wheels = check(&r, "wheels");
    assert_eq!(wheels["status"], "ok", "{r:#}");
    for side in 0..2 {
        assert!(
            wheels["data"]["forward"][side].as_i64().unwrap() > 33,
            "{wheels}"
        );
        assert!(
            wheels["data"]["backward"][side].as_i64().unwrap() < -33,
            "{wheels}"
        );
        assert!(
            wheels["data"]["stopped"][side].as_i64().unwrap().abs() < 33,
            "{wheels}"
        );
    }
    let (ok, out, err) = tool(&[
        "vars",
        "get",
        "--target",
        &target,
        "--node",
        "1",
        "motor.left.target",
    ]);
    assert!(
        ok && out.trim() == "0",
        "the wheel check left the motor at {out}: {err}"
    );
}

#[test]
fn doctor_names_a_missing_port_and_its_fix() {
    let dir = tempfile::tempdir().unwrap();
    let device = dir.path().join("ttyACM9");
    let (code, r, err) = doctor(
        &["--target", &format!("ser:device={}", device.display())],
        false,
    );
    assert_eq!(code, Some(1), "{r:#}\n{err}");
    assert_eq!(r["healthy"], false);
    let f = failed(&r);
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(f[0].0, "port");
    assert!(f[0].1.contains("ttyACM9: no such device"), "{f:?}");
    assert!(f[0].2.contains("plug the robot in"), "{f:?}");
    assert!(err.contains("not healthy: port"), "{err}");
}

#[test]
fn doctor_names_the_process_holding_the_port() {
    let (_sim, pty) = sim_with_pty(free_port());
    // another program with the port open (as Thymio Suite's device manager keeps it): a shell opens it on fd 3 and
    // becomes `sleep` (same pid)
    let mut c = Command::new("sh");
    c.args(["-c", "exec sleep 60 3<>\"$1\"", "sh", &pty]);
    let holder = Proc::spawn("sleep holding the pty", c);
    let pid = holder.child.id();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !(std::fs::read_link(format!("/proc/{pid}/fd/3"))
        .is_ok_and(|l| l.to_str() == Some(pty.as_str()))
        && std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| c.starts_with(b"sleep\0")))
    {
        assert!(
            std::time::Instant::now() < deadline,
            "the holder did not open {pty}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let (code, r, err) = doctor(&["--target", &format!("ser:device={pty}")], false);
    assert_eq!(code, Some(1), "{r:#}\n{err}");
    let f = failed(&r);
    assert_eq!(
        f.iter().map(|f| f.0.as_str()).collect::<Vec<_>>(),
        ["holders"],
        "{f:?}"
    );
    assert!(f[0].1.contains(&format!("sleep (pid {pid})")), "{f:?}");
    assert!(f[0].2.contains(&format!("kill {pid}")), "{f:?}");
    let holders = &check(&r, "holders")["data"]["holders"];
    assert!(
        holders
            .as_array()
            .unwrap()
            .iter()
            .any(|h| h["pid"] == pid && h["name"] == "sleep" && h["serves"] == false),
        "{holders}"
    );
    assert_eq!(check(&r, "connect")["status"], "skip");
}

#[test]
fn doctor_names_a_port_without_permission_and_the_udev_rule() {
    use std::os::unix::fs::PermissionsExt;
    let (_sim, pty) = sim_with_pty(free_port());
    std::fs::set_permissions(&pty, std::fs::Permissions::from_mode(0o000)).unwrap();
    // root opens any file: the check runs as nobody, like a user without the udev rule
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { nix::libc::geteuid() } == 0;
    let (code, r, err) = doctor(&["--target", &format!("ser:device={pty}")], root);
    assert_eq!(code, Some(1), "{r:#}\n{err}");
    let f = failed(&r);
    assert_eq!(
        f.iter().map(|f| f.0.as_str()).collect::<Vec<_>>(),
        ["permission"],
        "{f:?}"
    );
    assert!(
        f[0].1.contains("permission denied (EACCES)") && f[0].1.contains("mode 0000"),
        "{f:?}"
    );
    assert!(
        f[0].2.contains("--install-udev-rule") && f[0].2.contains("dialout"),
        "{f:?}"
    );
    // the rule it points at
    let (ok, rule, err) = tool(&["doctor", "--udev-rule"]);
    assert!(ok, "{err}");
    assert!(
        rule.contains(r#"ATTRS{idVendor}=="0617", ATTRS{idProduct}=="000a""#),
        "{rule}"
    );
    assert!(
        rule.contains(r#"ATTRS{idProduct}=="000c""#) && rule.contains(r#"GROUP="dialout""#),
        "{rule}"
    );
}

/// An interrupted wheel check still stops the wheels: without a script the firmware keeps a motor target for ever.
#[test]
fn doctor_wheel_check_stops_the_wheels_when_interrupted() {
    let port = free_port();
    let (_sim, pty) = sim_with_pty(port);
    let mut c = thymio_rt();
    c.args(["doctor", "--wheels", "--samples", "1", "--target"])
        .arg(format!("ser:device={pty}"));
    let mut d = Proc::spawn("thymio-rt doctor --wheels", c);
    d.wait_line(Duration::from_secs(20), |l| {
        l.contains("wheel check of node 1")
    });
    d.signal(nix::sys::signal::Signal::SIGINT);
    let exit = d.wait_exit(Duration::from_secs(20));
    assert!(exit.success(), "{exit}:\n{}", d.seen.join("\n"));
    assert!(
        d.seen
            .iter()
            .any(|l| l.contains("wheels") && l.starts_with("ok")),
        "{}",
        d.seen.join("\n")
    );
    let target = format!("tcp:host=127.0.0.1;port={port}");
    for var in ["motor.left.target", "motor.right.target"] {
        let (ok, out, err) = tool(&["vars", "get", "--target", &target, "--node", "1", var]);
        assert!(ok && out.trim() == "0", "{var} left at {out} {err}");
    }
}

/// Several robots behind one port (a wireless dongle's case): every node is checked.
#[test]
fn doctor_checks_every_robot_behind_one_port() {
    let (_sim, pty) = sim_robots_with_pty(consecutive_free_ports(2), 2);
    let (code, r, err) = doctor(
        &["--target", &format!("ser:device={pty}"), "--samples", "2"],
        false,
    );
    assert_eq!(code, Some(0), "{r:#}\n{err}");
    assert_eq!(
        check(&r, "connect")["data"]["nodes"],
        serde_json::json!([1, 2])
    );
    for node in [1, 2] {
        let of_node: Vec<(&str, &str)> = r["checks"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["node"] == node)
            .map(|c| (c["check"].as_str().unwrap(), c["status"].as_str().unwrap()))
            .collect();
        assert_eq!(
            of_node,
            [
                ("protocol", "ok"),
                ("script", "ok"),
                ("battery", "ok"),
                ("proximity", "ok"),
                ("ground", "ok"),
                ("wheels", "skip")
            ],
            "node {node}: {r:#}"
        );
    }
}
