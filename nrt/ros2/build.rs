//! Build script of `nrt-ros2`: with the feature `ros2`, the run-time linking of the executables that link r2r.
//!
//! The ROS 2 libraries come from the PyPI wheels in the project's venv (`scripts/setup-ros2.sh`), which is not on the
//! loader's path, and `librcl.so` needs CPython symbols. `scripts/ros2-env.sh` exports the directories and the
//! libpython to use; this script turns them into link arguments for this package's executables (its unit tests):
//! a `DT_RPATH` (not `RUNPATH`, which the loader ignores for transitive dependencies) and a libpython `NEEDED` entry
//! kept despite `--as-needed`. Link arguments apply to one package only: the root package's build script includes
//! this file (`#[path = "nrt/ros2/build.rs"] mod ...`) and calls [`ros2_link_args`] for the binary, its tests and benches.
//! Nothing changes without the feature, and no RUSTFLAGS are involved (they would invalidate the whole build cache).

use std::env;
use std::path::Path;

/// Colon-separated directories of the run-time search path (venv/lib, the wheels' `*.libs`, libpython's directory).
const RPATH_VAR: &str = "THYMIO_RT_ROS2_RPATH";
/// Path of the shared libpython the wheels were built for.
const PYLIB_VAR: &str = "THYMIO_RT_ROS2_PYLIB";

#[allow(dead_code)] // unused when the root build script includes this file as a module
fn main() {
    ros2_link_args();
}

/// Emits the r2r run-time link arguments when the package's feature `ros2` is enabled.
pub fn ros2_link_args() {
    println!("cargo:rerun-if-env-changed={RPATH_VAR}");
    println!("cargo:rerun-if-env-changed={PYLIB_VAR}");
    if env::var_os("CARGO_FEATURE_ROS2").is_none() {
        return;
    }
    let (Ok(rpath), Ok(pylib)) = (env::var(RPATH_VAR), env::var(PYLIB_VAR)) else {
        println!(
            "cargo:warning=feature ros2 without {RPATH_VAR}/{PYLIB_VAR}: source scripts/ros2-env.sh \
             (executables linking r2r would need LD_LIBRARY_PATH)"
        );
        return;
    };
    let dirs: Vec<&str> = rpath.split(':').filter(|d| !d.is_empty()).collect();
    for dir in &dirs {
        if !Path::new(dir).is_dir() {
            println!("cargo:warning={RPATH_VAR} names a missing directory: {dir}");
        }
    }
    if !Path::new(&pylib).is_file() {
        println!("cargo:warning={PYLIB_VAR} names a missing file: {pylib}");
    }
    println!(
        "cargo:rustc-link-arg=-Wl,--disable-new-dtags,-rpath,{}",
        dirs.join(":")
    );
    println!("cargo:rustc-link-arg=-Wl,--push-state,--no-as-needed,{pylib},--pop-state");
}
