//! `thymio-rt doctor` (issue 44 item 4) against the simulated Thymio behind a pseudo-terminal and TCP: a healthy
//! robot, a missing port, a port held by another process or without permission, the wheel check interrupted,
//! several robots behind one port.

use super::*;

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
