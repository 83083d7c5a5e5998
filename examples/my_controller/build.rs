//! With the feature `ros2`: the binary finds the ROS 2 libraries at run time with no LD_LIBRARY_PATH, as
//! thymio-rt's own binary does (its build.rs). `source <thymio-rt>/scripts/ros2-env.sh` before `cargo build`
//! exports the two variables read here: the directories of the ROS 2 venv's libraries (a DT_RPATH) and the
//! libpython the ROS 2 libraries need (a NEEDED entry kept despite `--as-needed`).

fn main() {
    println!("cargo:rerun-if-env-changed=THYMIO_RT_ROS2_RPATH");
    println!("cargo:rerun-if-env-changed=THYMIO_RT_ROS2_PYLIB");
    if std::env::var_os("CARGO_FEATURE_ROS2").is_none() {
        return;
    }
    let (Ok(rpath), Ok(pylib)) = (
        std::env::var("THYMIO_RT_ROS2_RPATH"),
        std::env::var("THYMIO_RT_ROS2_PYLIB"),
    ) else {
        println!(
            "cargo:warning=feature ros2: source <thymio-rt>/scripts/ros2-env.sh before building"
        );
        return;
    };
    let dirs: Vec<&str> = rpath.split(':').filter(|d| !d.is_empty()).collect();
    println!(
        "cargo:rustc-link-arg=-Wl,--disable-new-dtags,-rpath,{}",
        dirs.join(":")
    );
    println!("cargo:rustc-link-arg=-Wl,--push-state,--no-as-needed,{pylib},--pop-state");
}
