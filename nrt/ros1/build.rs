//! Generates the ROS 1 message types (with their MD5 sums and full definitions) from the definitions vendored in
//! `msg/` (no ROS install needed), when the feature `ros1` is on.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    #[cfg(feature = "ros1")]
    generate();
}

#[cfg(feature = "ros1")]
fn generate() {
    let dir = std::path::PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let (source, paths) =
        roslibrust_codegen::find_and_generate_ros_messages_without_ros_package_path(vec![
            dir.join("msg")
        ])
        .expect("the vendored ROS 1 definitions of msg/ generate");
    // the whole tree: a package or file added to msg/ must regenerate too, not only the files read last time
    println!("cargo:rerun-if-changed={}", dir.join("msg").display());
    for p in paths {
        println!("cargo:rerun-if-changed={}", p.display());
    }
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets it"))
        .join("ros1_msgs.rs");
    std::fs::write(&out, source.to_string()).expect("OUT_DIR is writable");
}
