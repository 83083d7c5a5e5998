//! The ROS 2 package (issue 16, item 7), used the way a ROS user does: `colcon build` in a fresh workspace whose
//! `src/thymio_rt` is this repository builds the driver with the feature `ros2` and installs it with its
//! configuration and Aseba scripts (`install/thymio_rt/lib/thymio_rt/thymio-rt`, `share/thymio_rt/config/…`); the
//! installed binary then starts as the ROS 2 driver from the installed configuration file.
//!
//! colcon, colcon-ros-cargo and cargo-ament-build come from scripts/setup-ros2.sh (`.venv-ros`, on the PATH after
//! `source scripts/ros2-env.sh`). The package is built in this test's own cargo target directory (colcon's build
//! directory of the package is a symlink to it), so the binary cargo already built for these tests is reused and
//! CI does not build r2r a second time.
#![cfg(feature = "ros2")]

mod common;
#[path = "ros/rclpy_peer.rs"]
mod rclpy_peer;

use common::Proc;
use rclpy_peer::test_domain_id;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// Bound of `colcon build`: the binary is normally up to date in the shared target directory (a few seconds), but
/// a first build of the driver with r2r in the dev profile takes minutes on 2 cores.
const COLCON_TIMEOUT_S: u32 = 900;
/// Bound of the installed driver's start.
const START_TIMEOUT: Duration = Duration::from_secs(30);

/// The cargo target directory this test executable was built in (`<target>/<profile>/deps/<exe>`).
fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.ancestors()
        .nth(3)
        .unwrap_or_else(|| panic!("no target directory above {}", exe.display()))
        .to_path_buf()
}

/// `colcon build` in `ws` (packages under `ws/src`), bounded by `timeout` (which stops colcon and the cargo under it
/// as one process group).
fn colcon_build(ws: &Path) -> Proc {
    let mut cmd = Command::new("timeout");
    cmd.current_dir(ws)
        .args(["--kill-after=10", &COLCON_TIMEOUT_S.to_string()])
        .args([
            "colcon",
            "build",
            "--base-paths",
            "src",
            "--event-handlers",
            "console_direct+",
            "--cargo-args",
            "--features",
            "ros2",
        ]);
    Proc::spawn("colcon build", cmd)
}

#[test]
fn colcon_builds_installs_and_the_installed_driver_starts() {
    assert!(
        common::have("colcon") && common::have("cargo-ament-build"),
        "colcon or cargo-ament-build is not on the PATH: run scripts/setup-ros2.sh, then source scripts/ros2-env.sh"
    );
    let ws = tempfile::tempdir().unwrap();
    let ws = ws.path();
    std::fs::create_dir_all(ws.join("src")).unwrap();
    std::os::unix::fs::symlink(common::root(), ws.join("src/thymio_rt")).unwrap();
    // colcon's build directory of the package is cargo-ament-build's --target-dir: share this test's.
    std::fs::create_dir_all(ws.join("build")).unwrap();
    std::fs::write(ws.join("build/COLCON_IGNORE"), "").unwrap();
    std::os::unix::fs::symlink(target_dir(), ws.join("build/thymio_rt")).unwrap();

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
    for f in [
        bin.clone(),
        share.join("package.xml"),
        share.join("config/thymio-rt.yaml"),
        share.join("config/aseba/thymio_ros.aesl"),
        share.join("config/aseba/thymio_ros_multi.aesl"),
        share.join("config/arena/default.yaml"),
        install.join("share/ament_index/resource_index/packages/thymio_rt"),
    ] {
        assert!(f.is_file(), "colcon build did not install {}", f.display());
    }

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
    driver.signal(nix::sys::signal::Signal::SIGINT);
    let status = driver.wait_exit(Duration::from_secs(15));
    assert!(
        status.success(),
        "the installed thymio-rt ended with {status}:\n{}",
        driver.seen.join("\n")
    );
}
