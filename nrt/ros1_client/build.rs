//! Generates the ROS 1 message types (with their MD5 sums and full definitions) from the definitions vendored in
//! `msg/` (no ROS install needed).

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    generate();
}

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
    embed(&[dir.join("msg"), out_dir.join("own_interfaces")], &out_dir);
}

/// The texts of every vendored `.msg` and `.srv` (msg/ and thymio_rt_msgs), included in the binary for the
/// run-time type resolver (`src/dynamic/`): `EMBEDDED`, sorted `(package, "msg" | "srv", name, text)`.
fn embed(roots: &[std::path::PathBuf], out_dir: &std::path::Path) {
    let mut rows = Vec::new();
    for root in roots {
        let Ok(packages) = std::fs::read_dir(root) else {
            continue;
        };
        for package in packages {
            let package = package.expect("the definitions are readable").path();
            let Some(pkg) = package
                .file_name()
                .and_then(|n| n.to_str())
                .map(str::to_owned)
            else {
                continue;
            };
            for kind in ["msg", "srv"] {
                let Ok(files) = std::fs::read_dir(package.join(kind)) else {
                    continue;
                };
                for f in files {
                    let f = f.expect("the definitions are readable").path();
                    if f.extension().and_then(|e| e.to_str()) != Some(kind) {
                        continue;
                    }
                    let name = f
                        .file_stem()
                        .and_then(|n| n.to_str())
                        .expect("a UTF-8 file name");
                    let path = f.canonicalize().expect("the definition exists");
                    rows.push(format!(
                        "    ({pkg:?}, {kind:?}, {name:?}, include_str!({:?})),\n",
                        path.to_str().expect("a UTF-8 path")
                    ));
                }
            }
        }
    }
    rows.sort();
    let text = format!(
        "/// The vendored definitions: `(package, \"msg\" | \"srv\", name, text)`, sorted.\n\
         pub static EMBEDDED: &[(&str, &str, &str, &str)] = &[\n{}];\n",
        rows.concat()
    );
    std::fs::write(out_dir.join("ros1_embedded.rs"), text).expect("OUT_DIR is writable");
}

/// thymio-rt's own interfaces (`thymio_rt_msgs`) are defined once, in the ROS 2 package of `msgs/ros/`; their
/// definitions are ROS 1 syntax too. The ROS 2 package.xml (ament) would make the generator read them as ROS 2, so
/// they are generated from a copy under `OUT_DIR` with a ROS 1 (catkin) package.xml; the directory of that copy.
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
