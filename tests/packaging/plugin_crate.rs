//! An RT controller from outside the repository (issue 27, items 1 and 2; docs/control.md "Writing an RT
//! controller"): the
//! template crate `examples/my_controller` is copied out of the repository and built as a user builds it (`cargo
//! test` then `cargo build`, features `ros2,ros1`, its `thymio_rt` dependency pointing at this checkout); its own
//! unit test (no allocation in its controller's RT methods) runs there. Its binary — thymio-rt's driver through
//! `thymio_rt::run` with `follow_heading` registered — then runs on the embedded simulator with the template's
//! configuration (`control.controllers`: go_to_pose and follow_heading with start values), and the behaviour
//! scenario `plugin` (tests/behaviour/scenarios_plugin.py) drives it from rclpy and from rospy: a controller that is
//! not loaded is refused by the switch with the loaded owners, `follow_heading` takes the wheels, moves the robot
//! (odometry) and publishes its topic.
//!
//! The copy lives at a fixed path in this test's cargo target directory (`plugin-ws`, rewritten at each run) and
//! is built in that same target directory with this repository's Cargo.lock and the same dev profile, so that the
//! dependency units whose features match this test's own build are reused. Without the root package's
//! dev-dependencies some features differ (e.g. rustix's, which tempfile widens), so r2r and the crates above it are
//! compiled once more for the template: minutes on 2 cores at the first run; a second run reuses them.
#![cfg(all(feature = "ros2", feature = "ros1"))]

use crate::common;
use crate::peers;
use crate::rclpy_peer;

use common::scenario::{expect_passed, scenario_command};
use common::{target_dir, Proc};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::time::Duration;

/// Bound of each cargo command on the template (the thymio-rt crates compiled for it: up to ~20 min on 2 cores).
const BUILD_TIMEOUT_S: u32 = 2400;
/// What the scenario may take, client start included (the client stops itself at this bound too).
/// An open 2 × 2 m arena, the robot in the middle of its west half facing east (tests/behaviour.rs's).
const OPEN: &str = "width: 2.0\nheight: 2.0\nrobots:\n  - [0.5, 1.0, 0.0]\n";

/// `src` copied into `dst`, but for what a build in place leaves (`target/`, `Cargo.lock`).
fn copy_dir(src: &Path, dst: &Path) {
    std::fs::create_dir_all(dst).unwrap();
    for entry in std::fs::read_dir(src).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name();
        if name == "target" || name == "Cargo.lock" {
            continue;
        }
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &dst.join(&name));
        } else {
            std::fs::copy(entry.path(), dst.join(&name)).unwrap();
        }
    }
}

/// `examples/my_controller` copied to `<target>/plugin-ws/my_controller` as a user copies it: its `thymio_rt`
/// path pointed at this checkout, and this repository's Cargo.lock beside it (the same dependency versions).
fn copy_template() -> PathBuf {
    let src = common::root().join("examples/my_controller");
    let ws = target_dir().join("plugin-ws");
    if ws.exists() {
        std::fs::remove_dir_all(&ws).unwrap();
    }
    let dst = ws.join("my_controller");
    copy_dir(&src, &dst);
    let manifest = std::fs::read_to_string(src.join("Cargo.toml")).unwrap();
    let dep = r#"thymio_rt = { path = "../.." }"#;
    assert!(
        manifest.contains(dep),
        "the template's Cargo.toml has no `{dep}`"
    );
    let root = common::root();
    let manifest = manifest.replace(dep, &format!("thymio_rt = {{ path = {:?} }}", root));
    std::fs::write(dst.join("Cargo.toml"), manifest).unwrap();
    std::fs::copy(root.join("Cargo.lock"), dst.join("Cargo.lock")).unwrap();
    dst
}

/// `cargo <args> --features ros2,ros1` in the copy, in this test's target directory, bounded in time; fails the
/// test with cargo's output unless it succeeded.
fn cargo(dir: &Path, args: &[&str]) {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new("timeout");
    cmd.current_dir(dir)
        .args(["--kill-after=10", &BUILD_TIMEOUT_S.to_string()])
        .arg(cargo)
        .args(args)
        .args(["--features", "ros2,ros1"])
        .env("CARGO_TARGET_DIR", target_dir());
    let what = format!("cargo {} (examples/my_controller)", args.join(" "));
    let mut p = Proc::spawn(&what, cmd);
    let status = p.wait_exit(Duration::from_secs(u64::from(BUILD_TIMEOUT_S) + 20));
    assert!(
        status.success(),
        "{what} ended with {status}:\n{}",
        p.seen.join("\n")
    );
}

/// The template's binary, built once per run of this test executable (its unit tests run first).
fn user_binary() -> PathBuf {
    static BUILT: Mutex<Option<PathBuf>> = Mutex::new(None);
    let mut built = BUILT.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(bin) = built.as_ref() {
        return bin.clone();
    }
    assert!(
        std::env::var_os("THYMIO_RT_ROS2_RPATH").is_some(),
        "the ROS 2 environment is not set: source scripts/ros2-env.sh (scripts/setup-ros2.sh installs it)"
    );
    let dir = copy_template();
    cargo(&dir, &["test"]);
    cargo(&dir, &["build"]);
    let bin = target_dir().join("debug/my_controller");
    assert!(bin.is_file(), "cargo build made no {}", bin.display());
    *built = Some(bin.clone());
    bin
}

/// The template's configuration with an unprivileged RT thread (a functional test) and the open arena, in `dir`.
fn config(dir: &Path, template: &Path) -> PathBuf {
    let arena = dir.join("arena.yaml");
    std::fs::write(&arena, OPEN).unwrap();
    let mut yaml = std::fs::read_to_string(template.join("my_controller.yaml")).unwrap();
    yaml.push_str(&format!(
        "rt: {{priority: 0, lock_memory: false}}\nsim: {{arena: {}}}\n",
        arena.display()
    ));
    let path = dir.join("config.yaml");
    std::fs::write(&path, yaml).unwrap();
    path
}

/// Stops the driver with SIGINT and checks it ends cleanly.
fn stop(mut driver: Proc) {
    driver.signal(nix::sys::signal::Signal::SIGINT);
    let status = driver.wait_exit(Duration::from_secs(15));
    assert!(
        status.success(),
        "my_controller run ended with {status}:\n{}",
        driver.seen.join("\n")
    );
}

/// The template's driver through rclpy (namespace `/plugin_r2`, this test process's DDS domain).
#[test]
fn a_user_controller_is_loaded_and_switched_to_from_rclpy() {
    let python = common::root().join(".venv-ros/bin/python");
    assert!(
        python.exists(),
        "rclpy (the ROS 2 venv, {}) not found: run scripts/setup-ros2.sh",
        python.display()
    );
    let bin = user_binary();
    let dir = tempfile::tempdir().unwrap();
    let ns = "plugin_r2";
    let mut d = Command::new(&bin);
    d.arg("run")
        .arg("-c")
        .arg(config(
            dir.path(),
            &common::root().join("examples/my_controller"),
        ))
        .args(["--switch-port", "0", "--ros-args", "-r"])
        .arg(format!("__ns:=/{ns}"))
        .env_remove("THYMIO_LOG")
        .env("ROS_DOMAIN_ID", rclpy_peer::test_domain_id().to_string())
        .env("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
        .env_remove("ROS_STATIC_PEERS")
        .env_remove("ROS_LOCALHOST_ONLY")
        .env_remove("LD_LIBRARY_PATH")
        .env_remove("LD_PRELOAD");
    let mut driver = Proc::spawn("my_controller run", d);
    let mut c = scenario_command(&python, "ros2", "plugin", ns, dir.path());
    c.env("ROS_DOMAIN_ID", rclpy_peer::test_domain_id().to_string())
        .env("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
        // the wheels' bootstrapper must run in the child to set its library path
        .env_remove("_ROS_WHEELS_BOOTSTRAP_COMPLETE");
    expect_passed(
        Proc::spawn("rclpy scenario", c),
        &mut driver,
        "ros2",
        "plugin",
    );
    stop(driver);
}

/// The template's driver through rospy (`run --ros1 --no-ros`, namespace `/plugin_r1`, a rosmaster of its own).
#[test]
fn a_user_controller_is_loaded_and_switched_to_from_rospy() {
    if !peers::need_ros1() {
        return; // peer missing, run opted out: skip recorded
    }
    let bin = user_binary();
    let dir = tempfile::tempdir().unwrap();
    let ns = "plugin_r1";
    let port = common::free_port();
    let _master = peers::rosmaster(port);
    let mut d = Command::new(&bin);
    d.args([
        "run",
        "--ros1",
        "--no-ros",
        "--switch-port",
        "0",
        "--duration",
        "170",
    ])
    .arg("-c")
    .arg(config(
        dir.path(),
        &common::root().join("examples/my_controller"),
    ))
    .env_remove("THYMIO_LOG")
    .env("ROS_MASTER_URI", peers::master_uri(port))
    .env("ROS_IP", "127.0.0.1")
    .env_remove("ROS_HOSTNAME")
    .env("ROS_NAMESPACE", ns);
    let mut driver = Proc::spawn("my_controller run --ros1", d);
    driver.wait_line(Duration::from_secs(60), |l| {
        l.contains("ROS 1 interface up")
    });
    let mut c = scenario_command(Path::new(peers::PYTHON), "ros1", "plugin", ns, dir.path());
    c.env("ROS_MASTER_URI", peers::master_uri(port))
        .env("ROS_IP", "127.0.0.1")
        .env_remove("ROS_HOSTNAME")
        .env_remove("ROS_NAMESPACE")
        .env("ROS_HOME", dir.path().join("ros_home"));
    expect_passed(
        Proc::spawn("rospy scenario", c),
        &mut driver,
        "ros1",
        "plugin",
    );
    stop(driver);
}

/// `run -c <config>` (no ROS, no switch) of `bin` to its end, bounded: its exit code and output.
fn run_refused(bin: &Path, dir: &Path, yaml: &str) -> (Option<i32>, String) {
    let path = dir.join("refused.yaml");
    std::fs::write(&path, yaml).unwrap();
    let mut cmd = Command::new(bin);
    cmd.args([
        "run",
        "--no-ros",
        "--switch-port",
        "0",
        "--duration",
        "20",
        "-c",
    ])
    .arg(&path)
    .env_remove("THYMIO_LOG");
    let mut p = Proc::spawn("run with a configuration that does not fit", cmd);
    let status = p.wait_exit(Duration::from_secs(30));
    p.drain();
    (status.code(), p.seen.join("\n"))
}

/// `control.controllers` is checked against the registry of the binary that runs — the user's controller's
/// declared parameters and ranges included — and a mistake stops the start naming its key, for the user's binary
/// and for thymio-rt (which does not know `follow_heading`).
#[test]
fn configured_controllers_that_do_not_fit_the_registry_stop_the_start_naming_the_key() {
    let user = user_binary();
    let shipped = PathBuf::from(env!("CARGO_BIN_EXE_thymio-rt"));
    let dir = tempfile::tempdir().unwrap();
    for (bin, controllers, wanted) in [
        (
            &user,
            "{follow_heading: {gain: 11}}",
            &["control.controllers.follow_heading.gain", "11", "[0, 10]"][..],
        ),
        (
            &user,
            "{follow_heading: {gian: 1}}",
            &[
                "control.controllers.follow_heading.gian",
                "heading, gain, speed",
            ][..],
        ),
        (
            &user,
            "{follow_heading: {speed: .inf}}",
            &["control.controllers.follow_heading.speed", "finite"][..],
        ),
        (
            &shipped,
            "{follow_heading: {}}",
            &[
                "control.controllers.follow_heading",
                "registered: line_follower, go_to_pose",
            ][..],
        ),
    ] {
        let yaml = format!("control: {{controllers: {controllers}}}\n");
        let (code, out) = run_refused(bin, dir.path(), &yaml);
        assert!(
            code == Some(1) && wanted.iter().all(|w| out.contains(w)),
            "{} with {yaml}: exit {code:?}, wanted {wanted:?} in:\n{out}",
            bin.display()
        );
    }
    // the default owner must be loaded
    let (code, out) = run_refused(
        &user,
        dir.path(),
        "control: {default_owner: follow_heading, controllers: {go_to_pose: {}}}\n",
    );
    assert!(
        code == Some(1)
            && out.contains("control.default_owner")
            && out.contains("ros, joint, go_to_pose"),
        "exit {code:?}:\n{out}"
    );
}
