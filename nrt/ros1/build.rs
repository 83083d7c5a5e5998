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
    let out_dir = std::path::PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets it"));
    let own = own_interfaces(&dir.join("../../msgs/ros/thymio_rt_msgs"), &out_dir);
    let (source, paths) =
        roslibrust_codegen::find_and_generate_ros_messages_without_ros_package_path(vec![
            dir.join("msg"),
            own,
        ])
        .expect("the vendored ROS 1 definitions of msg/ and thymio_rt_msgs generate");
    // the whole tree: a package or file added to msg/ must regenerate too, not only the files read last time
    println!("cargo:rerun-if-changed={}", dir.join("msg").display());
    for p in paths {
        println!("cargo:rerun-if-changed={}", p.display());
    }
    let out = out_dir.join("ros1_msgs.rs");
    std::fs::write(&out, source.to_string()).expect("OUT_DIR is writable");
}

/// thymio-rt's own interfaces (`thymio_rt_msgs`) are defined once, in the ROS 2 package of `msgs/ros/`; their
/// definitions are ROS 1 syntax too. The ROS 2 package.xml (ament) would make the generator read them as ROS 2, so
/// they are generated from a copy under `OUT_DIR` with a ROS 1 (catkin) package.xml; the directory of that copy.
#[cfg(feature = "ros1")]
fn own_interfaces(package: &std::path::Path, out_dir: &std::path::Path) -> std::path::PathBuf {
    let root = out_dir.join("own_interfaces");
    let copy = root.join("thymio_rt_msgs");
    println!("cargo:rerun-if-changed={}", package.display());
    for sub in ["msg", "srv", "action"] {
        let from = package.join(sub);
        let to = copy.join(sub);
        std::fs::create_dir_all(&to).expect("OUT_DIR is writable");
        let Ok(entries) = std::fs::read_dir(&from) else {
            continue;
        };
        for e in entries {
            let path = e.expect("msgs/ros/thymio_rt_msgs is readable").path();
            println!("cargo:rerun-if-changed={}", path.display());
            std::fs::copy(&path, to.join(path.file_name().expect("a file")))
                .expect("OUT_DIR is writable");
        }
    }
    std::fs::write(
        copy.join("package.xml"),
        "<?xml version=\"1.0\"?>\n<package format=\"2\">\n  <name>thymio_rt_msgs</name>\n  <version>0.1.0</version>\n  \
         <description>thymio-rt's own interfaces, generated for ROS 1 from msgs/ros/thymio_rt_msgs</description>\n  \
         <maintainer email=\"none@example.invalid\">thymio-rt</maintainer>\n  <license>MIT OR Apache-2.0</license>\n  \
         <buildtool_depend>catkin</buildtool_depend>\n</package>\n",
    )
    .expect("OUT_DIR is writable");
    root
}
