//! The robot scripts built into the binary: the files of `config/aseba/` as they were at build
//! time, named `builtin:<path relative to config/>` (`builtin:aseba/thymio_ros.aesl`) wherever a
//! script path is taken (`script.path`, `aseba/load_script`). The built-in configuration (the
//! shipped `config/thymio-rt.yaml`, also built in) names its script this way, so that the binary
//! alone is the full Thymio driver, wherever it runs from.

/// The prefix of a built-in script's path.
pub const BUILTIN_PREFIX: &str = "builtin:";

/// Every built-in script: its name (the path below `config/`) and its text.
pub const BUILTIN_SCRIPTS: &[(&str, &str)] = &[
    (
        "aseba/thymio_ros.aesl",
        include_str!("../../../../config/aseba/thymio_ros.aesl"),
    ),
    (
        "aseba/thymio_ros_multi.aesl",
        include_str!("../../../../config/aseba/thymio_ros_multi.aesl"),
    ),
    (
        "aseba/thymio_ros_playground.aesl",
        include_str!("../../../../config/aseba/thymio_ros_playground.aesl"),
    ),
    (
        "aseba/thymio_ros_multi_playground.aesl",
        include_str!("../../../../config/aseba/thymio_ros_multi_playground.aesl"),
    ),
];

/// Whether `path` names a built-in script (rather than a file).
pub fn is_builtin(path: &str) -> bool {
    path.starts_with(BUILTIN_PREFIX)
}

/// The text of the built-in script `path` names; `None` if `path` is not `builtin:` or names no
/// built-in script.
pub fn builtin_script(path: &str) -> Option<&'static str> {
    let name = path.strip_prefix(BUILTIN_PREFIX)?;
    BUILTIN_SCRIPTS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, text)| *text)
}

/// The names of the built-in scripts, for error messages.
pub fn builtin_names() -> String {
    BUILTIN_SCRIPTS
        .iter()
        .map(|(n, _)| format!("{BUILTIN_PREFIX}{n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_scripts_are_the_config_files() {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../config/");
        for (name, text) in BUILTIN_SCRIPTS {
            let file = std::fs::read_to_string(format!("{root}{name}")).unwrap();
            assert_eq!(&file, text, "{name}");
            assert_eq!(builtin_script(&format!("builtin:{name}")), Some(*text));
        }
        assert_eq!(builtin_script("builtin:aseba/nope.aesl"), None);
        assert_eq!(builtin_script("aseba/thymio_ros.aesl"), None);
        assert!(builtin_names().contains("builtin:aseba/thymio_ros.aesl"));
    }
}
