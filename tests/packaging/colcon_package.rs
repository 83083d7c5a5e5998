//! The ROS 2 package (issue 16, item 7; issue 26, item 6), used the way a ROS user does: a bare `colcon build` in a
//! fresh workspace whose `src/thymio_rt` is this repository, beside a Python package of the workspace that uses
//! `thymio_rt_msgs` (tests/colcon/thymio_rt_msgs_user), builds the interface packages asebaros_msgs, thymio_msgs and
//! thymio_rt_msgs (found through the root Cargo.toml's `[workspace.metadata.colcon]`), the driver with the feature
//! `ros2` (installed with its configuration and Aseba scripts: `install/thymio_rt/lib/thymio_rt/thymio-rt`,
//! `share/thymio_rt/config/…`) and the Python package, in one invocation. The installed binary then starts as the ROS 2
//! driver from the installed configuration file, and the Python package's entry point, with only the install space
//! sourced, calls the driver's `switch_controller` with the type from the install space (its module and C libraries
//! are checked to come from `install/thymio_rt_msgs`, not from the project's venv, which has them too).
//!
//! colcon, colcon-ros-cargo and cargo-ament-build come from scripts/setup-ros2.sh (`.venv-ros`, on the PATH after
//! `source scripts/ros2-env.sh`). The workspace lives at a fixed path in this test's cargo target directory
//! (`colcon-ws`, emptied at each run) and the driver is built in a cargo target directory of its own beside it
//! (`colcon-cargo`, colcon's build directory of the package is a symlink to it): the interface packages of the workspace
//! are on the driver build's AMENT_PREFIX_PATH/CMAKE_PREFIX_PATH, which r2r watches, so sharing the target directory of
//! these tests would rebuild r2r both ways at every run, while fixed paths let a second run reuse the first's build.
//! The first run (a fresh clone's, as in CI) starts from a copy of what the workspace's build already compiled of the
//! driver's dependencies (`seed_cargo_dir`), so that colcon's cargo compiles only what differs from it: r2r on the
//! workspace's install space, the driver's crates with the feature `ros2` alone, the binary (~25 s instead of ~100 s
//! on 2 cores; the interface packages' CMake builds, ~65 s, are colcon's own).
#![cfg(feature = "ros2")]

use crate::common;
use crate::rclpy_peer;

use common::{target_dir, Proc};
use rclpy_peer::test_domain_id;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// Bound of `colcon build`: the interface packages take minutes, the driver is normally up to date in its target
/// directory (`colcon-cargo`, a few seconds) or seeded from the workspace's build, but a first build with nothing to
/// seed from (r2r in the dev profile) takes up to ~30 minutes on 2 cores.
const COLCON_TIMEOUT_S: u32 = 3600;
/// Bound of the Python package's entry point (its own deadline for discovery and both calls is `CLIENT_TIMEOUT_S`).
const CLIENT_TIMEOUT_S: u32 = 30;
/// Bound of the installed driver's start.
const START_TIMEOUT: Duration = Duration::from_secs(30);

/// A bare `colcon build` in `ws` (colcon's default discovery: the workspace crawled from `ws`), bounded by `timeout`
/// (which stops colcon and the cargo under it as one process group).
fn colcon_build(ws: &Path) -> Proc {
    let mut cmd = Command::new("timeout");
    cmd.current_dir(ws)
        .args(["--kill-after=10", &COLCON_TIMEOUT_S.to_string()])
        .args([
            "colcon",
            "build",
            "--event-handlers",
            "console_direct+",
            "--cargo-args",
            "--features",
            "ros2",
        ]);
    Proc::spawn("colcon build", cmd)
}

/// The fixture Python package of the workspace (tests/colcon/thymio_rt_msgs_user), copied into `dst`.
fn copy_dir(src: &Path, dst: &Path) {
    std::fs::create_dir_all(dst).unwrap();
    for entry in std::fs::read_dir(src).unwrap() {
        let entry = entry.unwrap();
        let to = dst.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &to);
        } else {
            std::fs::copy(entry.path(), &to).unwrap();
        }
    }
}

/// A fresh workspace at `<target>/colcon-ws`: `src/thymio_rt` (this repository), `src/thymio_rt_msgs_user` (the
/// fixture package) and `build/thymio_rt` → `<target>/colcon-cargo` (the driver's cargo target directory, kept).
fn fresh_workspace() -> PathBuf {
    let target = target_dir();
    let ws = target.join("colcon-ws");
    if ws.exists() {
        // symlinks (src/thymio_rt, build/thymio_rt) are removed, not followed
        std::fs::remove_dir_all(&ws).unwrap();
    }
    std::fs::create_dir_all(ws.join("src")).unwrap();
    std::os::unix::fs::symlink(common::root(), ws.join("src/thymio_rt")).unwrap();
    copy_dir(
        &common::root().join("tests/colcon/thymio_rt_msgs_user"),
        &ws.join("src/thymio_rt_msgs_user"),
    );
    // colcon's build directory of the package is cargo-ament-build's --target-dir
    let cargo_dir = target.join("colcon-cargo");
    std::fs::create_dir_all(&cargo_dir).unwrap();
    seed_cargo_dir(&target, &cargo_dir);
    std::fs::create_dir_all(ws.join("build")).unwrap();
    std::fs::write(ws.join("build/COLCON_IGNORE"), "").unwrap();
    std::os::unix::fs::symlink(&cargo_dir, ws.join("build/thymio_rt")).unwrap();
    ws.canonicalize().unwrap()
}

/// Seeds an empty `cargo_dir` (a fresh clone's first run) with what the workspace's own build in `target` already
/// compiled of the packages the driver's `ros2` build uses (`cargo tree`): their libraries, build script outputs and
/// fingerprints, copied with their times (`cp -a`; never linked, since build scripts and cargo rewrite files in
/// place). cargo then reuses what it would have compiled identically (the same unit hashes: same package, features
/// and profile) and builds the rest as a user does: r2r's build scripts rerun on the workspace's install space and r2r
/// is recompiled, the driver's crates are built with the feature `ros2` alone, the binary linked. Nothing is seeded
/// when `cargo_dir` already holds a build (kept from the previous run) or when `cargo tree` fails.
fn seed_cargo_dir(target: &Path, cargo_dir: &Path) {
    let (from, to) = (target.join("debug"), cargo_dir.join("debug"));
    if to.join(".fingerprint").exists() || !from.join(".fingerprint").is_dir() {
        return;
    }
    let started = Instant::now();
    let out = Command::new("cargo")
        .current_dir(common::root())
        .args(["tree", "--offline", "-p", "thymio_rt", "--features", "ros2"])
        .args(["-e", "normal,build", "--prefix", "none", "--format", "{p}"])
        .output();
    let names: std::collections::HashSet<String> = match out {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout)
            .lines()
            .filter_map(|l| l.split_whitespace().next())
            .map(str::to_owned)
            .collect(),
        other => {
            eprintln!(
                "not seeding {}: cargo tree failed: {other:?}",
                cargo_dir.display()
            );
            return;
        }
    };
    // `<name>-<hash>` (build/, .fingerprint/) or `lib<name>-<hash>.<rlib|rmeta|so>` (deps/, `-` in names as `_`)
    let unit_of = |file: &str| file.rsplit_once('-').map(|(name, _)| name.to_owned());
    let libs: std::collections::HashSet<String> =
        names.iter().map(|n| n.replace('-', "_")).collect();
    let mut copied = 0;
    for dir in ["deps", "build", ".fingerprint"] {
        let mut picked = Vec::new();
        for e in std::fs::read_dir(from.join(dir)).unwrap() {
            let file = e.unwrap().file_name().to_string_lossy().into_owned();
            let keep = if dir == "deps" {
                let lib = [".rlib", ".rmeta", ".so"]
                    .iter()
                    .find_map(|x| file.strip_suffix(x))
                    .and_then(|f| f.strip_prefix("lib"))
                    .and_then(unit_of);
                lib.is_some_and(|l| libs.contains(&l))
            } else {
                unit_of(&file).is_some_and(|n| names.contains(&n))
            };
            if keep {
                picked.push(from.join(dir).join(file));
            }
        }
        std::fs::create_dir_all(to.join(dir)).unwrap();
        if picked.is_empty() {
            continue;
        }
        let status = Command::new("cp")
            .args(["-a", "--reflink=auto", "-t"])
            .arg(to.join(dir))
            .args(&picked)
            .status()
            .unwrap();
        assert!(
            status.success(),
            "cp -a into {} failed",
            to.join(dir).display()
        );
        copied += picked.len();
    }
    eprintln!(
        "seeded {} with {copied} files and directories of {} in {:?}",
        cargo_dir.display(),
        from.display(),
        started.elapsed()
    );
}

/// The Python package's entry point with only the install space sourced (`install/setup.sh`): no PYTHONPATH or
/// prefix paths of the caller, and for the library path only the venv's own ROS libraries (rclpy, Fast DDS, which
/// are no packages of the workspace), which the install space's come before. The wheels' bootstrapper, which
/// re-executes Python with its own library path order, is told it already ran.
fn run_switch_client(ws: &Path) -> Proc {
    let venv = common::root().join(".venv-ros");
    let mut libs = vec![venv.join("lib")];
    for e in std::fs::read_dir(venv.join("lib/python3.11/site-packages")).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() && p.extension().is_some_and(|x| x == "libs") {
            libs.push(p);
        }
    }
    let mut cmd = Command::new("timeout");
    cmd.current_dir(ws)
        .args([
            "--kill-after=5",
            &(CLIENT_TIMEOUT_S + 20).to_string(),
            "bash",
            "-c",
            r#". "$1" && exec "$2" "$3""#,
            "bash",
        ])
        .arg(ws.join("install/setup.sh"))
        .arg(ws.join("install/thymio_rt_msgs_user/bin/switch_controller_check"))
        .arg(CLIENT_TIMEOUT_S.to_string())
        .env("LD_LIBRARY_PATH", std::env::join_paths(&libs).unwrap())
        .env("_ROS_WHEELS_BOOTSTRAP_COMPLETE", "1")
        .env("ROS_DOMAIN_ID", test_domain_id().to_string())
        .env("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST");
    for var in [
        "PYTHONPATH",
        "AMENT_PREFIX_PATH",
        "CMAKE_PREFIX_PATH",
        "COLCON_PREFIX_PATH",
        "LD_PRELOAD",
        "ROS_STATIC_PEERS",
        "ROS_LOCALHOST_ONLY",
    ] {
        cmd.env_remove(var);
    }
    Proc::spawn("switch_controller_check", cmd)
}

#[test]
fn colcon_builds_everything_and_a_workspace_package_uses_the_installed_messages() {
    assert!(
        common::have("colcon") && common::have("cargo-ament-build"),
        "colcon or cargo-ament-build is not on the PATH: run scripts/setup-ros2.sh, then source scripts/ros2-env.sh"
    );
    let ws = fresh_workspace();
    let ws = ws.as_path();

    let started = Instant::now();
    let mut build = colcon_build(ws);
    let status = build.wait_exit(Duration::from_secs(u64::from(COLCON_TIMEOUT_S) + 20));
    let took = started.elapsed();
    assert!(
        status.success(),
        "colcon build ended with {status} after {took:?}:\n{}",
        build.seen.join("\n")
    );
    eprintln!("colcon build took {took:?}");

    let install = ws.join("install/thymio_rt");
    let share = install.join("share/thymio_rt");
    let bin = install.join("lib/thymio_rt/thymio-rt");
    let mut installed = vec![
        bin.clone(),
        share.join("package.xml"),
        share.join("config/thymio-rt.yaml"),
        share.join("config/aseba/thymio_ros.aesl"),
        share.join("config/aseba/thymio_ros_multi.aesl"),
        share.join("config/arena/default.yaml"),
        install.join("share/ament_index/resource_index/packages/thymio_rt"),
        ws.join("install/thymio_rt_msgs_user/bin/switch_controller_check"),
    ];
    for pkg in ["asebaros_msgs", "thymio_msgs", "thymio_rt_msgs"] {
        installed.push(ws.join(format!("install/{pkg}/share/{pkg}/package.xml")));
    }
    for f in installed {
        assert!(f.is_file(), "colcon build did not install {}", f.display());
    }
    // tf2_msgs is the ROS install's (or, with the wheels, the venv's): building ours would override it
    assert!(
        !ws.join("install/tf2_msgs").exists(),
        "colcon built the repository's tf2_msgs"
    );

    // The installed driver, from a directory that is not the repository, on the installed configuration file
    // (its script path resolves to share/thymio_rt/config/aseba/), with the ROS 2 bridge on a domain of its own.
    let mut cmd = Command::new(&bin);
    cmd.current_dir(ws)
        .args(["run", "--switch-port", "0", "--config"])
        .arg(share.join("config/thymio-rt.yaml"))
        .args([
            "--ros-args",
            "-p",
            "rt.priority:=0",
            "-p",
            "rt.lock_memory:=false",
        ])
        .env("ROS_DOMAIN_ID", test_domain_id().to_string())
        .env("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
        .env_remove("THYMIO_LOG")
        .env_remove("LD_LIBRARY_PATH")
        .env_remove("LD_PRELOAD");
    let mut driver = Proc::spawn("installed thymio-rt", cmd);
    driver.wait_line(START_TIMEOUT, |l| l.contains("ROS 2 interface up"));
    // the driver script loaded is the installed one
    let script = share.join("config/aseba/thymio_ros.aesl");
    let loaded = format!("script {} loaded", script.display());
    driver.wait_line(START_TIMEOUT, |l| l.contains(&loaded));
    driver.wait_line(START_TIMEOUT, |l| l.contains("driver interface ready"));

    // The workspace's Python package talks to the driver with the type from the install space.
    let mut client = run_switch_client(ws);
    let status = client.wait_exit(Duration::from_secs(u64::from(CLIENT_TIMEOUT_S) + 30));
    let seen = client.seen.join("\n");
    assert!(
        status.success(),
        "switch_controller_check ended with {status}:\n{seen}"
    );
    let report: serde_json::Value = client
        .seen
        .iter()
        .find_map(|l| serde_json::from_str(l).ok())
        .unwrap_or_else(|| panic!("no JSON report from switch_controller_check:\n{seen}"));
    let from_install = ws.join("install/thymio_rt_msgs");
    let under_install = |p: &serde_json::Value| {
        p.as_str()
            .and_then(|p| Path::new(p).canonicalize().ok())
            .is_some_and(|p| p.starts_with(&from_install))
    };
    assert!(
        under_install(&report["module"]),
        "thymio_rt_msgs was imported from elsewhere than {}: {report}",
        from_install.display()
    );
    let libs = report["libs"].as_array().unwrap();
    assert!(
        !libs.is_empty() && libs.iter().all(under_install),
        "the C libraries of thymio_rt_msgs were not all loaded from {}: {report}",
        from_install.display()
    );
    assert!(
        report["service"]
            .as_str()
            .is_some_and(|s| s.ends_with("/switch_controller")),
        "{report}"
    );
    assert_eq!(report["joint"]["success"], true, "{report}");
    assert_eq!(
        report["joint"]["message"], "joint owns the wheels",
        "{report}"
    );
    assert_eq!(report["unknown"]["success"], false, "{report}");
    assert!(
        report["unknown"]["message"]
            .as_str()
            .is_some_and(|m| m.contains(r#"unknown owner "no_such_owner""#)),
        "{report}"
    );

    driver.signal(nix::sys::signal::Signal::SIGINT);
    let status = driver.wait_exit(Duration::from_secs(15));
    assert!(
        status.success(),
        "the installed thymio-rt ended with {status}:\n{}",
        driver.seen.join("\n")
    );
}
