//! Every subcommand refuses the arguments it does not understand, naming them, with exit status 2 (issue 23): a
//! mistyped option (`--duraton 1`, `--swich-port 0`) used to fall silently into `run`'s hidden list of ROS
//! arguments, so the driver ran forever or opened the switch on 33333. ROS 2 arguments are taken only after
//! `--ros-args`, as rcl reads them; a `--` ends our options and only ROS arguments may follow it.

use crate::common;

/// Runs `thymio-rt ARGS` to its end (the test fails after 20 s: it took the mistake as a run).
fn run(args: &[&str]) -> (Option<i32>, String) {
    let args: Vec<&std::ffi::OsStr> = args.iter().map(std::ffi::OsStr::new).collect();
    common::run_to_end(
        &args,
        Duration::from_secs(20),
        "it took the mistake as a run",
    )
}

use std::time::Duration;

/// `thymio-rt ARGS` is refused with exit status 2 and a message naming `culprit`.
fn refused(args: &[&str], culprit: &str) {
    let (code, out) = run(args);
    assert_eq!(code, Some(2), "thymio-rt {args:?} not refused:\n{out}");
    assert!(
        out.contains(&format!("'{culprit}'")) || out.contains(&format!("{culprit} ")),
        "thymio-rt {args:?}: the error does not name {culprit}:\n{out}"
    );
    assert!(
        out.contains("error:") || out.contains("thymio-rt:"),
        "{out}"
    );
}

/// `thymio-rt run` without ROS, switch or endless run: what the refusal tests add to their mistake, so that the
/// old behaviour (taking it) shows as a run that ends with status 0 or never.
const RUN: &[&str] = &["run", "--no-ros", "--switch-port", "0"];

fn with(base: &[&'static str], more: &[&'static str]) -> Vec<&'static str> {
    base.iter().chain(more).copied().collect()
}

#[test]
fn run_refuses_a_mistyped_duration() {
    refused(&with(RUN, &["--duraton", "1"]), "--duraton");
}

#[test]
fn run_refuses_a_mistyped_switch_port() {
    // --duration bounds the run the old code made of it (with the switch on 33333)
    refused(
        &["run", "--no-ros", "--duration", "1", "--swich-port", "0"],
        "--swich-port",
    );
}

#[test]
fn run_refuses_stray_positionals_and_what_follows_its_double_dash() {
    refused(&with(RUN, &["--duration", "1", "stray"]), "stray");
    refused(
        &with(RUN, &["--duration", "1", "--", "--duraton"]),
        "--duraton",
    );
    refused(
        &with(
            RUN,
            &[
                "--duration",
                "1",
                "--",
                "--ros-args",
                "-p",
                "a:=1",
                "--",
                "x",
            ],
        ),
        "x",
    );
    // a ROS argument rcl does not know, or without its value (r2r would ignore it without a word)
    refused(
        &with(RUN, &["--duration", "1", "--ros-args", "--foo"]),
        "--foo",
    );
    refused(&with(RUN, &["--duration", "1", "--ros-args", "-p"]), "-p");
    // ROS 1 arguments need the ROS 1 front end; a remapping to what is not a ROS name it refuses
    refused(&with(RUN, &["--duration", "1", "__name:=x"]), "__name:=x");
    refused(
        &with(RUN, &["--duration", "1", "--ros1", "cmd_vel:=9x"]),
        "cmd_vel:=9x",
    );
}

#[test]
fn run_takes_ros_arguments_after_ros_args_and_after_double_dash() {
    for tail in [
        &["--ros-args", "-p", "x:=1"][..],
        &["--", "--ros-args", "-p", "cmd_vel_timeout:=1.0"],
        &[
            "--ros-args",
            "--params-file",
            "f.yaml",
            "--",
            "--cmd-vel",
            "0,0",
        ],
    ] {
        let args = with(RUN, &["--duration", "0.3"])
            .into_iter()
            .chain(tail.iter().copied())
            .collect::<Vec<_>>();
        let (code, out) = run(&args);
        assert_eq!(code, Some(0), "thymio-rt {args:?}:\n{out}");
        // without the bridge they cannot apply: said, not silently dropped
        assert!(out.contains("ROS 2 arguments ignored"), "{out}");
    }
}

#[test]
fn nodes_refuses_unknown_options_and_stray_positionals() {
    refused(&["nodes", "-t", "sim", "--jsn"], "--jsn");
    refused(&["nodes", "-t", "sim", "extra"], "extra");
    refused(&["nodes", "-t", "sim", "--ros-args"], "--ros-args");
}

#[test]
fn vars_refuses_unknown_options_and_stray_positionals() {
    refused(
        &["vars", "get", "-t", "sim", "--node", "1", "--nod", "x"],
        "--nod",
    );
    refused(&["vars", "get", "-t", "sim", "--node", "1", "x", "y"], "y");
    refused(
        &["vars", "set", "-t", "sim", "--node", "1", "x", "1", "a"],
        "a",
    );
    refused(&["vars", "gett"], "gett");
}

#[test]
fn emit_refuses_unknown_options_and_stray_positionals() {
    refused(&["emit", "-t", "sim", "--scrip", "a.aesl", "1"], "--scrip");
    refused(&["emit", "-t", "sim", "1", "2", "two"], "two");
}

#[test]
fn compile_refuses_unknown_options_and_stray_positionals() {
    refused(&["compile", "--dumpp", "a.aesl"], "--dumpp");
    refused(&["compile", "a.aesl", "b.aesl"], "b.aesl");
}

#[test]
fn sim_refuses_unknown_options_and_stray_positionals() {
    refused(&["sim", "--robot", "2", "--duration", "1"], "--robot");
    refused(&["sim", "--duration", "1", "extra"], "extra");
}

/// `thymio-rt run ARGS` with the ROS 2 bridge refuses what rcl cannot parse with one line naming it and exit status
/// `code`, no panic (r2r panicked in `rcl_init` with a backtrace, status 101).
#[cfg(feature = "ros2")]
fn ros2_refused(more: &[&str], code: i32, says: &str) {
    let args = ["run", "--switch-port", "0", "--duration", "5"]
        .into_iter()
        .chain(more.iter().copied())
        .collect::<Vec<_>>();
    let (got, out) = run(&args);
    assert_eq!(got, Some(code), "thymio-rt {args:?}:\n{out}");
    assert!(
        !out.contains("panicked") && !out.contains("backtrace"),
        "{out}"
    );
    let line = out
        .lines()
        .find(|l| l.contains(says))
        .unwrap_or_else(|| panic!("thymio-rt {args:?} does not say {says:?}:\n{out}"));
    assert!(
        line.starts_with("thymio-rt: ") || line.starts_with("error: "),
        "{out}"
    );
}

#[cfg(feature = "ros2")]
#[test]
fn run_refuses_parameter_files_and_rules_rcl_cannot_parse() {
    let dir = std::env::temp_dir().join(format!("thymio-rt-cli-params-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = |name: &str, text: &str| {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p.display().to_string()
    };
    let missing = dir.join("missing.yaml").display().to_string();
    let bad = file("bad.yaml", "/**:\n  ros__parameters: {axis_length: [\n");
    let deep = file("deep.yaml", &"[".repeat(400_000));
    // YAML, but a rule of rcl's own: one type per list
    let mixed = file(
        "mixed.yaml",
        "/**:\n  ros__parameters:\n    motor: {left: {parameters: [1, x]}}\n",
    );
    ros2_refused(
        &["--ros-args", "--params-file", &missing],
        1,
        &format!("parameter file {missing}: "),
    );
    ros2_refused(
        &["--ros-args", "--params-file", &bad],
        1,
        &format!("parameter file {bad}: "),
    );
    ros2_refused(
        &["--ros-args", "--params-file", &deep],
        1,
        "nested deeper than the limit",
    );
    ros2_refused(
        &["--ros-args", "--params-file", &mixed],
        1,
        "rcl refused the ROS arguments: Couldn't parse params file",
    );
    std::fs::remove_dir_all(&dir).unwrap();
    ros2_refused(
        &["--ros-args", "-p", "axis_length:=["],
        2,
        "'-p axis_length:=[': the value is not YAML",
    );
}

#[cfg(feature = "ros2")]
#[test]
fn run_refuses_a_robot_section_of_wrong_types_like_the_bridge_sections() {
    let dir = std::env::temp_dir().join(format!("thymio-rt-cli-driver-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = |name: &str, text: &str| {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p.display().to_string()
    };
    let bridge = file(
        "bridge.yaml",
        "asebaros:\n  ros__parameters:\n    axis_length: abc\n",
    );
    let robot = file(
        "robot.yaml",
        "thymio_driver:\n  ros__parameters:\n    axis_length: abc\n",
    );
    let says = "configuration key `axis_length`: invalid type: string \"abc\", expected f64";
    // the bridge's section was refused; the robot's started the driver on the default calibration
    ros2_refused(&["--ros-args", "--params-file", &bridge], 1, says);
    ros2_refused(&["--ros-args", "--params-file", &robot], 1, says);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn doctor_refuses_bad_arguments_with_usage_status() {
    refused(&["doctor", "--samples", "0"], "0");
    refused(&["doctor", "--target", "bogus:x"], "bogus:x:");
    refused(
        &["doctor", "--timeout", "0", "--target", "sim"],
        "--timeout",
    );
    refused(
        &["doctor", "--udev-rule", "--install-udev-rule"],
        "--install-udev-rule",
    );
    refused(&["doctor", "--wheel"], "--wheel");
}
