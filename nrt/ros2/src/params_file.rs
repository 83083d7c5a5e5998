//! The sections of `--ros-args --params-file` files that r2r does not give a node.
//!
//! r2r 0.9.7 hands a node the sections named `/**`, `**` or its bare name, and compares the
//! others with its fully qualified name — which never matches, as rcl stores the section names
//! without their leading slash (`/robot1/thymio_driver:` is `robot1/thymio_driver`). rclcpp also
//! takes `*` and `**` wildcards inside a name (`/**/thymio_driver`). This module reads the
//! parameter files of the process's command line as rcl does (a section is a path of map keys
//! down to `ros__parameters`, nested maps below it are dotted names) and gives a node the
//! sections r2r left out that name it, in file order, so that a ROS-Thymio parameter file with
//! `/<ns>/thymio_driver:` sections applies to that robot only, as it does with rclcpp.

use msgs::yaml_guard::{self, YamlGuardError, YamlLimits};
use nrt_engine::schema;
use nrt_engine::thymio::params::DriverParams;
use yaml_serde::{Mapping, Value};

/// Why a parameter file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ParamsFileError {
    /// Unreadable file.
    #[error("parameter file {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// Too large or too deeply nested to be given to the YAML parser.
    #[error("parameter file {path}: {source}")]
    Bounds {
        /// The file.
        path: String,
        /// The limit exceeded.
        #[source]
        source: YamlGuardError,
    },
    /// A robot's `thymio_driver` section sets one of the robot's parameters to a value the
    /// configuration refuses (as it refuses it in the bridge's sections).
    #[error("parameter file {path}, section {section}: {source}")]
    DriverParam {
        /// The file.
        path: String,
        /// The section's name, as written (without leading slash).
        section: String,
        /// The schema's error, naming the key.
        #[source]
        source: schema::SchemaError,
    },
    /// Not YAML.
    #[error("parameter file {path}: {source}")]
    Syntax {
        /// The file.
        path: String,
        /// Why.
        #[source]
        source: yaml_serde::Error,
    },
}

/// One section of a parameter file: the node name as written (without leading slash), and its
/// parameters as dotted names.
pub type Section = (String, Vec<(String, Value)>);

/// The `--params-file` paths of the ROS arguments in `args` (the process's command line), in
/// order: those between a `--ros-args` and the next `--` (or the end).
pub fn params_files(args: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_ros = false;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--ros-args" => in_ros = true,
            "--" => in_ros = false,
            "--params-file" if in_ros => out.extend(it.next().cloned()),
            _ => {}
        }
    }
    out
}

/// The sections of the YAML parameter file `text`, in file order.
pub fn sections(text: &str, path: &str) -> Result<Vec<Section>, ParamsFileError> {
    yaml_guard::check(text, YamlLimits::CONFIG).map_err(|source| ParamsFileError::Bounds {
        path: path.to_owned(),
        source,
    })?;
    let root: Value = yaml_serde::from_str(text).map_err(|source| ParamsFileError::Syntax {
        path: path.to_owned(),
        source,
    })?;
    let mut out = Vec::new();
    if let Value::Mapping(m) = root {
        walk(&m, "", &mut out);
    }
    Ok(out)
}

fn walk(m: &Mapping, prefix: &str, out: &mut Vec<Section>) {
    for (k, v) in m {
        let Some(key) = k.as_str() else { continue };
        let Value::Mapping(inner) = v else { continue };
        if key == "ros__parameters" {
            let params = schema::leaves(inner)
                .into_iter()
                .map(|(n, v)| (n, v.clone()))
                .collect();
            out.push((prefix.trim_start_matches('/').to_owned(), params));
        } else {
            let path = format!("{}/{}", prefix, key.trim_matches('/'));
            walk(inner, &path, out);
        }
    }
}

/// Whether section name `pattern` (no leading slash; `*` one name, `**` any number of them)
/// names the node of fully qualified name `fqn`.
pub fn matches(pattern: &str, fqn: &str) -> bool {
    let p: Vec<&str> = pattern.split('/').filter(|s| !s.is_empty()).collect();
    let n: Vec<&str> = fqn.split('/').filter(|s| !s.is_empty()).collect();
    glob(&p, &n)
}

fn glob(p: &[&str], n: &[&str]) -> bool {
    match p.split_first() {
        None => n.is_empty(),
        Some((&"**", rest)) => (0..=n.len()).any(|i| glob(rest, &n[i..])),
        Some((first, rest)) => n
            .split_first()
            .is_some_and(|(head, tail)| (*first == "*" || first == head) && glob(rest, tail)),
    }
}

/// Whether r2r already gives section `pattern` to a node named `name` (see the module doc).
fn given_by_r2r(pattern: &str, name: &str) -> bool {
    pattern == "**" || pattern == name
}

/// The text of parameter file `path`, read bounded (see [`yaml_guard::read_to_string`]).
fn read(path: &str) -> Result<String, ParamsFileError> {
    yaml_guard::read_to_string(std::path::Path::new(path), YamlLimits::CONFIG).map_err(|source| {
        ParamsFileError::Read {
            path: path.to_owned(),
            source,
        }
    })
}

/// Checks that every parameter file named in `args` (the process's command line) can be read,
/// is within the YAML guard's limits and is YAML, before rcl reads them: r2r panics when rcl
/// cannot.
pub fn check_files(args: &[String]) -> Result<(), ParamsFileError> {
    for path in params_files(args) {
        sections(&read(&path)?, &path)?;
    }
    Ok(())
}

/// Checks the robots' `thymio_driver` sections (those whose last name is the driver node's) of
/// the parameter files named in `args`: each of the robot's parameters they set must be one the
/// configuration takes over `base` (the process's driver parameters), as the bridge's sections
/// are checked, so that a wrong type stops the start instead of leaving that robot on the
/// default calibration. Parameters that are not the robot's are left to the node (it says what
/// it ignores).
pub fn check_driver_sections(args: &[String], base: &DriverParams) -> Result<(), ParamsFileError> {
    for path in params_files(args) {
        for (section, params) in sections(&read(&path)?, &path)? {
            if section.rsplit('/').next() != Some(crate::node_name::NODE_NAME) {
                continue;
            }
            let mut current = base.clone();
            for (name, value) in params {
                let name = schema::aliases::canonical_name(&name);
                if !DriverParams::is_per_robot(&name) {
                    continue;
                }
                current = schema::set(&current, &name, value).map_err(|source| {
                    ParamsFileError::DriverParam {
                        path: path.clone(),
                        section: section.clone(),
                        source,
                    }
                })?;
            }
        }
    }
    Ok(())
}

/// The parameters of the files named in `args` for the node `name` of fully qualified name
/// `fqn` that r2r did not give it, in file order (a later one overrides an earlier one).
pub fn extra_overrides(
    args: &[String],
    name: &str,
    fqn: &str,
) -> Result<Vec<(String, Value)>, ParamsFileError> {
    let mut out = Vec::new();
    for path in params_files(args) {
        for (pattern, params) in sections(&read(&path)?, &path)? {
            if !given_by_r2r(&pattern, name) && matches(&pattern, fqn) {
                out.extend(params);
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn only_the_ros_arguments_name_parameter_files() {
        let a = args("run --params-file x --ros-args -r __ns:=/a --params-file f1 -- --params-file y --ros-args --params-file f2");
        assert_eq!(params_files(&a), ["f1", "f2"]);
    }

    #[test]
    fn sections_are_key_paths_down_to_ros_parameters() {
        let text = "/**:\n  ros__parameters: {a: 1}\nthymio_driver:\n  ros__parameters:\n    motor: {left: {parameters: [1.0, 0.0]}}\n\
                    /ns/thymio_2/thymio_driver:\n  ros__parameters: {robot_frame: b}\n\
                    ns2:\n  thymio_driver:\n    ros__parameters: {odom_frame: o}\n";
        let s = sections(text, "f").unwrap();
        let names: Vec<&str> = s.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            [
                "**",
                "thymio_driver",
                "ns/thymio_2/thymio_driver",
                "ns2/thymio_driver"
            ]
        );
        assert_eq!(s[1].1[0].0, "motor.left.parameters");
        assert!(sections("a: [", "f").is_err());
    }

    #[test]
    fn a_file_is_checked_before_rcl_reads_it() {
        let dir = std::env::temp_dir().join(format!("thymio-rt-pf-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = |name: &str, text: &str| {
            let p = dir.join(name);
            std::fs::write(&p, text).unwrap();
            p.display().to_string()
        };
        let good = file("good.yaml", "/**:\n  ros__parameters: {a: 1}\n");
        let bad = file("bad.yaml", "a: [\n");
        let deep = file("deep.yaml", &"[".repeat(400_000));
        let missing = dir.join("missing.yaml").display().to_string();
        let check = |f: &str| check_files(&args(&format!("run --ros-args --params-file {f}")));
        let got = [check(&good), check(&bad), check(&deep), check(&missing)];
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(got[0].is_ok(), "{:?}", got[0]);
        assert!(matches!(&got[1], Err(ParamsFileError::Syntax { path, .. }) if *path == bad));
        assert!(matches!(
            &got[2],
            Err(ParamsFileError::Bounds {
                source: YamlGuardError::TooDeep { .. },
                ..
            })
        ));
        assert!(matches!(&got[3], Err(ParamsFileError::Read { path, .. }) if *path == missing));
        let e = got[3].as_ref().unwrap_err().to_string();
        assert!(e.starts_with(&format!("parameter file {missing}: ")), "{e}");
    }

    #[test]
    fn a_robot_section_is_checked_like_the_bridge_sections() {
        let dir = std::env::temp_dir().join(format!("thymio-rt-pfd-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = |name: &str, text: &str| {
            let p = dir.join(name);
            std::fs::write(&p, text).unwrap();
            format!("run --ros-args --params-file {}", p.display())
        };
        let good = file(
            "good.yaml",
            concat!(
                "/ns/thymio_1/thymio_driver:\n  ros__parameters:\n    axis_length: 0.1\n",
                "    motor: {left: {parameters: [0.00033, 0.0]}}\n    unknown_one: x\n",
                "    cmd_vel_timeout: 2.0\n"
            ),
        );
        let bad = file(
            "bad.yaml",
            "/**:\n  ros__parameters: {axis_length: 0.1}\n/**/thymio_driver:\n  ros__parameters:\n    motor: {left: {parameters: x}}\n",
        );
        let base = DriverParams::default();
        let got = [
            check_driver_sections(&args(&good), &base),
            check_driver_sections(&args(&bad), &base),
        ];
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(got[0].is_ok(), "{:?}", got[0]);
        let e = got[1].as_ref().unwrap_err();
        assert!(
            matches!(e, ParamsFileError::DriverParam { section, .. } if section == "**/thymio_driver"),
            "{e:?}"
        );
        assert!(
            e.to_string()
                .contains("configuration key `motor.left.parameters`"),
            "{e}"
        );
    }

    #[test]
    fn names_match_as_rclcpp_wildcards() {
        assert!(matches(
            "ns/thymio_2/thymio_driver",
            "/ns/thymio_2/thymio_driver"
        ));
        assert!(!matches(
            "ns/thymio_2/thymio_driver",
            "/ns/thymio_1/thymio_driver"
        ));
        assert!(matches("**/thymio_driver", "/ns/thymio_1/thymio_driver"));
        assert!(matches("**/thymio_driver", "/thymio_driver"));
        assert!(matches("ns/*/thymio_driver", "/ns/thymio_1/thymio_driver"));
        assert!(!matches("*/thymio_driver", "/ns/thymio_1/thymio_driver"));
        assert!(matches("**", "/a/b"));
        // r2r gives these already
        assert!(
            given_by_r2r("**", "thymio_driver") && given_by_r2r("thymio_driver", "thymio_driver")
        );
    }
}
