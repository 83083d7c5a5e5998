//! Root build script: with the feature `ros2`, the run-time linking of the thymio-rt binary, its tests and benches
//! (DT_RPATH to the ROS 2 venv, libpython NEEDED); the logic is shared with nrt/ros2/build.rs.
#[path = "nrt/ros2/build.rs"]
mod nrt_build;

fn main() {
    println!("cargo:rerun-if-changed=nrt/ros2/build.rs");
    nrt_build::ros2_link_args();
}
