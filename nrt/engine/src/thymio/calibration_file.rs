//! Writing a robot's motor calibration into the calibration file (the one
//! [`read_file`](super::calibration::read_file) reads, ROS-Thymio's format
//! `{<uid>: {motor: {left: {parameters: [q0, q1], deadband}, right: ...}}}`).
//!
//! The entry is merged into what the file already holds (other robots, this robot's proximity
//! and axis length, a wheel not calibrated now) and the result is checked with the reader
//! before it replaces the file atomically and durably (a temporary file in the same directory,
//! synced, renamed over it, then the directory synced so that the rename survives a power
//! loss): a reader sees the old file or the new one, never a partial one, and a failure of any
//! step is an error before the result is claimed. A file that does not parse is never
//! overwritten.

use super::calibration::{for_robot, parse_file, CalibrationError};
use handoff::NodeId;
use std::io::Write;
use std::path::{Path, PathBuf};
use yaml_serde::{Mapping, Value};

/// File name of ROS-Thymio's default calibration file.
pub const DEFAULT_NAME: &str = "thymio_calibration.yaml";

/// ROS-Thymio's (ROS 2) default location: `$ROS_HOME/thymio_calibration.yaml`, else
/// `$HOME/.ros/thymio_calibration.yaml`, else `./thymio_calibration.yaml`.
pub fn default_path() -> PathBuf {
    let env = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    if let Some(ros_home) = env("ROS_HOME") {
        return PathBuf::from(ros_home).join(DEFAULT_NAME);
    }
    match env("HOME") {
        Some(home) => PathBuf::from(home).join(".ros").join(DEFAULT_NAME),
        None => PathBuf::from(DEFAULT_NAME),
    }
}

/// One wheel's calibration result.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MotorResult {
    /// `left` or `right`.
    pub side: &'static str,
    /// `[q0, q1]`.
    pub parameters: [f64; 2],
    /// Largest target that does not move the wheel (units).
    pub deadband: f64,
}

/// Why the file could not be written.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// The existing file cannot be read.
    #[error("cannot read calibration file {path}: {source}")]
    Read {
        /// File.
        path: String,
        /// Cause.
        source: std::io::Error,
    },
    /// The existing file is not a calibration file (left untouched).
    #[error("calibration file {path} is not a calibration file, left untouched: {source}")]
    Existing {
        /// File.
        path: String,
        /// Cause.
        source: CalibrationError,
    },
    /// The merged result would not be readable (a bug or a bad value; nothing written).
    #[error("the merged calibration for {path} would not be readable, nothing written: {source}")]
    Merged {
        /// File.
        path: String,
        /// Cause.
        source: CalibrationError,
    },
    /// The file was renamed into place but its directory could not be synced: the new file may
    /// not survive a power loss (reported, never claimed written).
    #[error("calibration file {path}: renamed into place but its directory {dir} could not be synced (the write may not survive a power loss): {source}")]
    SyncDir {
        /// File.
        path: String,
        /// Its directory.
        dir: String,
        /// Cause.
        source: std::io::Error,
    },
    /// Writing or renaming failed.
    #[error("cannot write calibration file {path}: {source}")]
    Write {
        /// File.
        path: String,
        /// Cause.
        source: std::io::Error,
    },
}

/// The file text with robot `uid`'s `motors` entries replaced (everything else kept).
pub fn merged(
    existing: &str,
    uid: u16,
    motors: &[MotorResult],
) -> Result<String, CalibrationError> {
    parse_file(existing)?;
    let mut root = match yaml_serde::from_str::<Value>(existing) {
        Ok(Value::Mapping(m)) => m,
        _ => Mapping::new(),
    };
    let key = Value::from(uid as u64);
    let robot = root
        .entry(key)
        .or_insert_with(|| Value::Mapping(Mapping::new()));
    if !robot.is_mapping() {
        *robot = Value::Mapping(Mapping::new());
    }
    let motor = robot
        .as_mapping_mut()
        .map(|r| {
            r.entry("motor".into())
                .or_insert_with(|| Value::Mapping(Mapping::new()))
        })
        .ok_or_else(|| CalibrationError::Invalid("robot entry".into()))?;
    if !motor.is_mapping() {
        *motor = Value::Mapping(Mapping::new());
    }
    if let Some(motor) = motor.as_mapping_mut() {
        for m in motors {
            let mut side = Mapping::new();
            side.insert("kind".into(), "quadratic".into());
            side.insert(
                "parameters".into(),
                Value::Sequence(m.parameters.iter().map(|p| Value::from(*p)).collect()),
            );
            side.insert("deadband".into(), Value::from(m.deadband));
            motor.insert(m.side.into(), Value::Mapping(side));
        }
    }
    let text = yaml_serde::to_string(&Value::Mapping(root))
        .map_err(|e| CalibrationError::Parse(e.to_string()))?;
    // readable, and usable for this robot
    for_robot(&parse_file(&text)?, NodeId(uid), false)?;
    Ok(text)
}

/// Merges robot `uid`'s `motors` into the file at `path` (created with its directory if
/// missing) and replaces it atomically.
pub fn write_motors(path: &Path, uid: u16, motors: &[MotorResult]) -> Result<(), WriteError> {
    let p = path.display().to_string();
    let existing = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(source) => return Err(WriteError::Read { path: p, source }),
    };
    parse_file(&existing).map_err(|source| WriteError::Existing {
        path: p.clone(),
        source,
    })?;
    let text = merged(&existing, uid, motors).map_err(|source| WriteError::Merged {
        path: p.clone(),
        source,
    })?;
    let write = |source| WriteError::Write {
        path: p.clone(),
        source,
    };
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(write)?;
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
    let tmp = dir.join(format!(
        ".{}.{}.tmp",
        name.unwrap_or_else(|| DEFAULT_NAME.into()),
        std::process::id()
    ));
    replace_durably(&tmp, path, dir, text.as_bytes(), sync_dir).map_err(|e| match e {
        Step::File(source) => write(source),
        Step::Dir(source) => WriteError::SyncDir {
            path: p.clone(),
            dir: dir.display().to_string(),
            source,
        },
    })
}

/// Which step of [`replace_durably`] failed.
#[derive(Debug)]
enum Step {
    /// Writing, syncing or renaming the file.
    File(std::io::Error),
    /// Syncing the directory after the rename.
    Dir(std::io::Error),
}

/// Writes `text` to `tmp`, syncs it, renames it over `path` and syncs `dir` (with `sync_dir`)
/// so that the rename itself survives a power loss: until then the old file (or none) may come
/// back after a crash although the calibration was reported written.
fn replace_durably(
    tmp: &Path,
    path: &Path,
    dir: &Path,
    text: &[u8],
    sync_dir: fn(&Path) -> std::io::Result<()>,
) -> Result<(), Step> {
    let file = (|| {
        let mut f = std::fs::File::create(tmp)?;
        f.write_all(text)?;
        f.sync_all()?;
        std::fs::rename(tmp, path)
    })();
    if let Err(e) = file {
        let _ = std::fs::remove_file(tmp);
        return Err(Step::File(e));
    }
    sync_dir(dir).map_err(Step::Dir)
}

/// `fsync(2)` of directory `dir` (opened read-only, as POSIX allows for directories).
fn sync_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::File::open(dir)?.sync_all()
}

#[cfg(test)]
mod tests {
    use super::super::calibration::{read_file, Calibration};
    use super::*;

    const LEFT: MotorResult = MotorResult {
        side: "left",
        parameters: [0.00036, 1e-8],
        deadband: 7.0,
    };

    #[test]
    fn merges_into_what_the_file_has_and_the_reader_reads_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/cal.yaml");
        // a new file (and its directory)
        write_motors(&path, 5, &[LEFT]).unwrap();
        let c = for_robot(&read_file(path.to_str().unwrap()).unwrap(), NodeId(5), true).unwrap();
        assert_eq!((c.left.parameters, c.left.deadband), ([0.00036, 1e-8], 7.0));
        assert_eq!(c.right, Calibration::simulation().right);
        // other robots, this robot's other keys and its other wheel are kept; `q` is replaced
        std::fs::write(
            &path,
            "5: {motor: {left: {kind: quadratic, q: [0.0003, 0.0]}, right: {parameters: [0.00033, 0.0], deadband: 3}}, axis_length: 0.094}\n77: {motor: {left: {parameters: [0.0004, 0.0]}}}\n",
        )
        .unwrap();
        write_motors(&path, 5, &[LEFT]).unwrap();
        let file = read_file(path.to_str().unwrap()).unwrap();
        let c = for_robot(&file, NodeId(5), false).unwrap();
        assert_eq!(c.left.parameters, [0.00036, 1e-8]);
        assert_eq!(
            (c.right.parameters, c.right.deadband),
            ([0.00033, 0.0], 3.0)
        );
        assert_eq!(c.axis_length, 0.094);
        assert!(file[&5].motor["left"].q.is_none());
        assert_eq!(
            for_robot(&file, NodeId(77), false).unwrap().left.parameters[0],
            0.0004
        );
        // no temporary file left behind
        let names: Vec<_> = std::fs::read_dir(path.parent().unwrap()).unwrap().collect();
        assert_eq!(names.len(), 1);
    }

    #[test]
    fn a_file_that_is_not_a_calibration_file_is_left_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cal.yaml");
        std::fs::write(&path, "5: {motr: {}}\n").unwrap();
        let e = write_motors(&path, 5, &[LEFT]).unwrap_err();
        assert!(matches!(e, WriteError::Existing { .. }), "{e}");
        assert!(e.to_string().contains("cal.yaml"));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "5: {motr: {}}\n");
        // a value the reader refuses is not written
        let bad = MotorResult {
            parameters: [-1.0, 0.0],
            ..LEFT
        };
        let path = dir.path().join("new.yaml");
        let e = write_motors(&path, 5, &[bad]).unwrap_err();
        assert!(matches!(e, WriteError::Merged { .. }), "{e}");
        assert!(!path.exists());
    }

    #[test]
    fn the_directory_is_synced_after_the_rename_and_its_failure_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let (tmp, path) = (dir.path().join(".cal.tmp"), dir.path().join("cal.yaml"));
        // the real directory sync works on the file's directory
        replace_durably(&tmp, &path, dir.path(), b"1: {}\n", sync_dir).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "1: {}\n");
        // a directory that cannot be synced: said, not claimed written
        fn failing(_: &Path) -> std::io::Result<()> {
            Err(std::io::Error::other("EIO"))
        }
        let r = replace_durably(&tmp, &path, dir.path(), b"2: {}\n", failing);
        assert!(matches!(r, Err(Step::Dir(_))), "{r:?}");
        assert!(sync_dir(&dir.path().join("missing")).is_err());
        let e = WriteError::SyncDir {
            path: "cal.yaml".into(),
            dir: "d".into(),
            source: std::io::Error::other("EIO"),
        };
        assert!(e.to_string().contains("power loss"), "{e}");
    }

    #[test]
    fn the_default_location_is_ros_thymios() {
        let p = default_path();
        assert!(p.ends_with(DEFAULT_NAME), "{p:?}");
    }
}
