//! The ROS arguments of `thymio-rt run`, kept apart from ours so that clap refuses every argument it does not
//! understand, naming it.
//!
//! - ROS 2: rcl reads the process's whole command line itself (r2r passes it to `rcl_init`) and takes what lies
//!   between a `--ros-args` and rcl's `--` terminator (or the end). [`split_ros2`] removes those segments before clap
//!   parses the rest; a `--` of ours ends our options, and only ROS segments may follow it.
//! - ROS 1: roslaunch gives a node `name:=value` arguments (`__name:=`, `__log:=`, remappings, `_param:=`).
//!   [`parse_ros1_arg`] accepts the ones the ROS 1 front end honours and refuses the others, saying why; remappings
//!   are resolved by the ROS 1 front end (`nrt_ros1::remap`).

use std::ffi::OsString;
use std::path::PathBuf;

/// rcl's marker of the start of ROS arguments.
pub const ROS_ARGS: &str = "--ros-args";
/// The end of options (ours), or of a `--ros-args` segment (rcl's).
pub const END: &str = "--";

/// A `thymio-rt run` command line split in two.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Split {
    /// Our arguments, for clap.
    pub ours: Vec<OsString>,
    /// The ROS 2 arguments (inside `--ros-args` segments, markers left out), read by rcl.
    pub ros: Vec<String>,
}

/// Why a command line cannot be split.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SplitError {
    /// Something other than a `--ros-args` segment after our `--`.
    #[error(
        "unexpected argument '{0}' after '--': only ROS arguments, starting with '--ros-args', may follow '--'"
    )]
    AfterEnd(String),
}

/// rcl's ROS arguments that take a value (ROS 2 Jazzy).
const WITH_VALUE: &[&str] = &[
    "-r",
    "--remap",
    "-p",
    "--param",
    "--params-file",
    "-e",
    "--enclave",
    "--log-level",
    "--log-config-file",
    "--log-file-name",
];

/// rcl's ROS arguments without a value (ROS 2 Jazzy).
const FLAGS: &[&str] = &[
    "--enable-rosout-logs",
    "--disable-rosout-logs",
    "--enable-stdout-logs",
    "--disable-stdout-logs",
    "--enable-external-lib-logs",
    "--disable-external-lib-logs",
];

/// Checks the ROS 2 arguments (the markers removed) as rcl would read them: r2r does not refuse what rcl leaves
/// unparsed (rclcpp does), so a mistyped ROS argument would be ignored without a word.
pub fn check_ros2(ros: &[String]) -> Result<(), String> {
    let mut it = ros.iter();
    while let Some(arg) = it.next() {
        let a = arg.as_str();
        if FLAGS.contains(&a) {
            continue;
        }
        if !WITH_VALUE.contains(&a) {
            return Err(format!(
                "unknown ROS argument '{a}' after --ros-args (rcl takes {} and {})",
                WITH_VALUE.join(", "),
                FLAGS.join(", ")
            ));
        }
        let Some(value) = it.next() else {
            return Err(format!("ROS argument '{a}' needs a value"));
        };
        if matches!(a, "-r" | "--remap" | "-p" | "--param") && !value.contains(":=") {
            return Err(format!("ROS argument '{a} {value}': expected NAME:=VALUE"));
        }
        if matches!(a, "-p" | "--param") {
            check_param_rule(value).map_err(|why| format!("ROS argument '{a} {value}': {why}"))?;
        }
    }
    Ok(())
}

/// Checks a `-p NAME:=VALUE` as rcl reads it (r2r panics when rcl cannot): a name, and a value
/// that is YAML (within the YAML guard's limits): a scalar or a list of scalars of one type.
fn check_param_rule(rule: &str) -> Result<(), String> {
    use yaml_serde::Value;
    let (name, value) = rule.split_once(":=").unwrap_or((rule, ""));
    if name.is_empty() {
        return Err("the parameter name is empty".into());
    }
    if value.trim().is_empty() {
        return Err("the value is empty (rcl takes YAML: '' for an empty string)".into());
    }
    msgs::yaml_guard::check(value, msgs::yaml_guard::YamlLimits::CONFIG)
        .map_err(|e| e.to_string())?;
    let v: Value =
        yaml_serde::from_str(value).map_err(|e| format!("the value is not YAML: {e}"))?;
    let kind = |v: &Value| match v {
        Value::Bool(_) => Some("bool"),
        Value::Number(n) if n.is_f64() => Some("double"),
        Value::Number(_) => Some("integer"),
        Value::String(_) => Some("string"),
        _ => None,
    };
    match v {
        Value::Mapping(_) | Value::Tagged(_) => {
            Err("the value must be a scalar or a list of scalars, not a map".into())
        }
        Value::Sequence(items) => {
            // rcl takes nulls and nested lists in a list (and ignores them)
            let kinds: Vec<_> = items.iter().filter_map(kind).collect();
            if kinds.windows(2).any(|w| w[0] != w[1]) {
                return Err(
                    "a list must hold scalars of one type (bool, integer, double or string)".into(),
                );
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

/// Splits the arguments of `thymio-rt run` (after the subcommand's name) into ours and the ROS 2 ones, as rcl
/// reads them: a `--ros-args` starts ROS arguments up to the next `--` or the end. Outside a ROS segment, a `--`
/// ends our options: after it, only ROS segments may come.
pub fn split_ros2(args: impl IntoIterator<Item = OsString>) -> Result<Split, SplitError> {
    #[derive(Clone, Copy, PartialEq)]
    enum State {
        Ours,
        Ros { after_end: bool },
        AfterEnd,
    }
    let mut out = Split::default();
    let mut state = State::Ours;
    for arg in args {
        let text = arg.to_str();
        state = match (state, text) {
            (State::Ours, Some(ROS_ARGS)) => State::Ros { after_end: false },
            (State::Ours, Some(END)) => State::AfterEnd,
            (State::Ours, _) => {
                out.ours.push(arg);
                State::Ours
            }
            (State::Ros { after_end }, Some(END)) => {
                if after_end {
                    State::AfterEnd
                } else {
                    State::Ours
                }
            }
            (State::Ros { after_end }, _) => {
                out.ros.push(arg.to_string_lossy().into_owned());
                State::Ros { after_end }
            }
            (State::AfterEnd, Some(ROS_ARGS)) => State::Ros { after_end: true },
            (State::AfterEnd, _) => {
                return Err(SplitError::AfterEnd(arg.to_string_lossy().into_owned()))
            }
        };
    }
    Ok(out)
}

/// A ROS 1 command-line argument the ROS 1 front end honours.
#[derive(Debug, Clone, PartialEq)]
pub enum Ros1Arg {
    /// `__name:=NAME`: the node's name (roslaunch's `name=`), in place of `asebaros`.
    Name(String),
    /// `__ns:=NAMESPACE`: the node's namespace (roslaunch's `ns=`), as `ROS_NAMESPACE`.
    Namespace(String),
    /// `__log:=FILE`: where roslaunch wants the node's log; the log goes there too.
    Log(PathBuf),
    /// `_NAME:=VALUE`: a private parameter (`~NAME`), as a configuration entry (`/` nests as `.`); it wins over
    /// the parameter server's.
    Param(String, yaml_serde::Value),
    /// `FROM:=TO`: a remapping of a topic or service name (`<remap>`), resolved as ROS 1 does.
    Remap(String, String),
}

/// Whether `s` is a ROS 1 name (possibly nested with `/`): letters, digits and `_`, not starting with a digit.
fn is_ros1_name(s: &str) -> bool {
    !s.is_empty()
        && s.split('/').all(|p| {
            !p.is_empty()
                && !p.starts_with(|c: char| c.is_ascii_digit())
                && p.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
}

/// Parses one ROS 1 argument (`name:=value`), for clap: the ones the front end honours, an error saying why for
/// the others (`__master:=`, `__ip:=`, `__hostname:=`, other special keys, anything else).
pub fn parse_ros1_arg(arg: &str) -> Result<Ros1Arg, String> {
    let Some((name, value)) = arg.split_once(":=") else {
        return Err(format!(
            "'{arg}' is not an argument of `thymio-rt run`: ROS 2 arguments go after --ros-args, ROS 1 ones are \
             NAME:=VALUE (__name:=, __ns:=, __log:=, _PARAM:=)"
        ));
    };
    match name {
        "__name" if is_ros1_name(value) && !value.contains('/') => Ok(Ros1Arg::Name(value.into())),
        "__ns" if value.is_empty() || is_ros1_name(value.trim_matches('/')) => {
            Ok(Ros1Arg::Namespace(value.into()))
        }
        "__log" if !value.is_empty() => Ok(Ros1Arg::Log(PathBuf::from(value))),
        "__name" | "__ns" | "__log" => Err(format!("'{arg}': '{value}' is not valid for {name}")),
        "__master" => Err(format!(
            "'{arg}': set the master with ROS_MASTER_URI in the environment"
        )),
        "__ip" | "__hostname" => Err(format!(
            "'{arg}': set the node's address with ROS_IP or ROS_HOSTNAME in the environment"
        )),
        _ if name.starts_with("__") => Err(format!(
            "'{arg}': {name} is not a special key the ROS 1 front end knows (__name, __ns, __log)"
        )),
        _ if name.starts_with('_') && is_ros1_name(&name[1..]) => {
            // as rospy reads it: YAML, a plain string when it is not; bounded first
            msgs::yaml_guard::check(value, msgs::yaml_guard::YamlLimits::CONFIG)
                .map_err(|e| format!("'{name}:=…': {e}"))?;
            let v = yaml_serde::from_str(value)
                .unwrap_or_else(|_| yaml_serde::Value::String(value.into()));
            Ok(Ros1Arg::Param(name[1..].replace('/', "."), v))
        }
        _ if is_ros1_name(name.trim_start_matches(['/', '~'])) => {
            match is_ros1_name(value.trim_start_matches(['/', '~'])) {
                true => Ok(Ros1Arg::Remap(name.into(), value.into())),
                false => Err(format!(
                    "'{arg}': '{value}' is not a ROS name to remap {name} to"
                )),
            }
        }
        _ => Err(format!("'{arg}' is not a ROS 1 argument (NAME:=VALUE)")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(args: &[&str]) -> Result<Split, SplitError> {
        split_ros2(args.iter().map(OsString::from))
    }

    fn ours(s: &Split) -> Vec<&str> {
        s.ours.iter().map(|a| a.to_str().unwrap()).collect()
    }

    #[test]
    fn ros_segments_are_removed_as_rcl_reads_them() {
        let s = split(&["--duration", "1", "--ros-args", "-p", "a:=1"]).unwrap();
        assert_eq!(ours(&s), ["--duration", "1"]);
        assert_eq!(s.ros, ["-p", "a:=1"]);
        // rcl's `--` ends the segment: what follows is ours again
        let s = split(&["--ros-args", "-p", "a:=1", "--", "--no-ros"]).unwrap();
        assert_eq!(ours(&s), ["--no-ros"]);
        assert_eq!(s.ros, ["-p", "a:=1"]);
        let s = split(&["--no-ros", "--", "--ros-args", "--params-file", "f.yaml"]).unwrap();
        assert_eq!(ours(&s), ["--no-ros"]);
        assert_eq!(s.ros, ["--params-file", "f.yaml"]);
    }

    #[test]
    fn after_our_end_only_ros_segments_may_come() {
        assert_eq!(
            split(&["--", "--duraton", "1"]),
            Err(SplitError::AfterEnd("--duraton".into()))
        );
        assert_eq!(
            split(&["--", "--ros-args", "-p", "a:=1", "--", "x"]),
            Err(SplitError::AfterEnd("x".into()))
        );
        let s = split(&[
            "--",
            "--ros-args",
            "-p",
            "a:=1",
            "--",
            "--ros-args",
            "-r",
            "b:=c",
        ])
        .unwrap();
        assert!(s.ours.is_empty());
        assert_eq!(s.ros, ["-p", "a:=1", "-r", "b:=c"]);
        assert!(split(&["--"]).unwrap().ours.is_empty());
    }

    #[test]
    fn ros2_arguments_are_checked_as_rcl_reads_them() {
        let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            check_ros2(&args(&[
                "-p",
                "a:=1",
                "--params-file",
                "f.yaml",
                "-r",
                "__ns:=/x",
                "--disable-rosout-logs",
                "--log-level",
                "debug",
                "-p",
                "b:=''",
                "-p",
                "c:=[]",
                "-p",
                "d:=~",
                "-p",
                "e:=[1, 2]",
                "-p",
                "f:=[[1]]",
                "-p",
                "n:g:=[x, 'y']",
            ])),
            Ok(())
        );
        let deep = format!("a:={}", "[".repeat(400_000));
        let e = check_ros2(&args(&["-p", &deep])).unwrap_err();
        assert!(e.contains("nested deeper than the limit"), "{e}");
        for (bad, named) in [
            (&["--foo"][..], "'--foo'"),
            (&["-p"], "'-p'"),
            (&["-p", "a=1"], "a=1"),
            (&["--params-file"], "'--params-file'"),
            // values rcl cannot parse (r2r panicked)
            (
                &["-p", "axis_length:=["],
                "axis_length:=[': the value is not YAML",
            ),
            (&["-p", "a:="], "the value is empty"),
            (&["--param", ":=1"], "the parameter name is empty"),
            (&["-p", "a:={b: 1}"], "not a map"),
            (&["-p", "a:=[1, 2.0]"], "of one type"),
            (&["-p", "a:=[true, x]"], "of one type"),
        ] {
            let e = check_ros2(&args(bad)).unwrap_err();
            assert!(e.contains(named), "{bad:?}: {e}");
        }
        let e = parse_ros1_arg(&format!("_axis_length:={}", "[".repeat(400_000))).unwrap_err();
        assert!(e.contains("'_axis_length:=…': YAML nested deeper"), "{e}");
    }

    #[test]
    fn ros1_arguments_the_front_end_honours() {
        assert_eq!(
            parse_ros1_arg("__name:=bridge"),
            Ok(Ros1Arg::Name("bridge".into()))
        );
        assert_eq!(
            parse_ros1_arg("__ns:=/robot1"),
            Ok(Ros1Arg::Namespace("/robot1".into()))
        );
        assert_eq!(
            parse_ros1_arg("__log:=/tmp/x.log"),
            Ok(Ros1Arg::Log("/tmp/x.log".into()))
        );
        assert_eq!(
            parse_ros1_arg("_port:=44444"),
            Ok(Ros1Arg::Param(
                "port".into(),
                yaml_serde::Value::from(44444)
            ))
        );
        assert_eq!(
            parse_ros1_arg("_nodes/thymio/prefix:=thymio_"),
            Ok(Ros1Arg::Param(
                "nodes.thymio.prefix".into(),
                yaml_serde::Value::from("thymio_")
            ))
        );
        assert_eq!(
            parse_ros1_arg("cmd_vel:=/robot/cmd_vel"),
            Ok(Ros1Arg::Remap("cmd_vel".into(), "/robot/cmd_vel".into()))
        );
        assert_eq!(
            parse_ros1_arg("~set_parameters:=reconf"),
            Ok(Ros1Arg::Remap("~set_parameters".into(), "reconf".into()))
        );
    }

    #[test]
    fn other_ros1_arguments_are_refused_saying_why() {
        for (arg, why) in [
            ("cmd_vel:=robot cmd_vel", "not a ROS name"),
            ("__master:=http://x:11311", "ROS_MASTER_URI"),
            ("__ip:=10.0.0.1", "ROS_IP"),
            ("__foo:=1", "__foo"),
            ("__name:=a/b", "not valid"),
            ("stray", "stray"),
            ("1abc:=2", "not a ROS 1 argument"),
        ] {
            let e = parse_ros1_arg(arg).unwrap_err();
            assert!(e.contains(arg) && e.contains(why), "{arg}: {e}");
        }
    }
}
