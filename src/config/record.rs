//! The section `record`: the flight recorder (`thymio-rt run --record FILE.mcap` sets `record.file`). Everything
//! the RT thread took as input and every frame it wrote, with what the driver published, go to MCAP files
//! (docs/recorder.md); bounded by a size or a duration per file with rotation, keeping the last files.

use nrt_engine::schema::{Invalid, Section};
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// The flight recorder.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RecordParams {
    /// The MCAP file (relative: to the configuration file; "": no recording). With a limit, the next files of
    /// the rotation are `<stem>_001.mcap`, `<stem>_002.mcap`, ….
    pub file: String,
    /// Largest size of one file [MB] before the recording goes on in the next (0: no limit).
    pub max_file_mb: f64,
    /// Longest time one file covers [s] before the recording goes on in the next (0: no limit).
    pub max_file_s: f64,
    /// How many files of the rotation are kept, the oldest deleted first (0: all).
    pub keep_files: u32,
}

/// Largest `record.max_file_mb` (1 TB).
pub const MAX_FILE_MB: f64 = 1e6;
/// Largest `record.max_file_s` (a week).
pub const MAX_FILE_S: f64 = 7.0 * 86_400.0;
/// Smallest nonzero `record.max_file_mb`: a file holds at least its channels, schemas and a few messages.
pub const MIN_FILE_MB: f64 = 0.1;

impl Default for RecordParams {
    fn default() -> Self {
        Self {
            file: String::new(),
            max_file_mb: 0.0,
            max_file_s: 0.0,
            keep_files: 0,
        }
    }
}

impl RecordParams {
    /// Whether the driver records.
    pub fn on(&self) -> bool {
        !self.file.is_empty()
    }

    /// The size limit of one file in bytes (0: none).
    pub fn max_file_bytes(&self) -> u64 {
        (self.max_file_mb * 1e6) as u64
    }

    /// The duration limit of one file (zero: none).
    pub fn max_file_duration(&self) -> Duration {
        Duration::from_secs_f64(self.max_file_s)
    }
}

/// `record.*`, read at start.
impl Section for RecordParams {
    fn validate(&self) -> Result<(), Invalid> {
        let mb = self.max_file_mb;
        if !(mb == 0.0 || (MIN_FILE_MB..=MAX_FILE_MB).contains(&mb)) {
            return Err(Invalid::new(
                "max_file_mb",
                mb,
                format!("MB: 0 (no limit) or {MIN_FILE_MB}..{MAX_FILE_MB}"),
            ));
        }
        let s = self.max_file_s;
        if !(s == 0.0 || (1.0..=MAX_FILE_S).contains(&s)) {
            return Err(Invalid::new(
                "max_file_s",
                s,
                format!("s: 0 (no limit) or 1..{MAX_FILE_S}"),
            ));
        }
        if self.keep_files > 0 && mb == 0.0 && s == 0.0 {
            return Err(Invalid::new(
                "keep_files",
                self.keep_files,
                "needs a rotation (max_file_mb or max_file_s): one file is never rotated",
            ));
        }
        if !self.file.is_empty() && !self.file.ends_with(".mcap") {
            return Err(Invalid::new(
                "file",
                &self.file,
                "must end in .mcap (the rotation names the next files after it)",
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_are_checked_naming_the_key() {
        let ok = RecordParams {
            file: "run.mcap".into(),
            max_file_mb: 50.0,
            keep_files: 3,
            ..Default::default()
        };
        assert!(ok.validate().is_ok());
        assert_eq!(ok.max_file_bytes(), 50_000_000);
        for (bad, key) in [
            (
                RecordParams {
                    max_file_mb: 0.01,
                    ..ok.clone()
                },
                "max_file_mb",
            ),
            (
                RecordParams {
                    max_file_mb: f64::NAN,
                    ..ok.clone()
                },
                "max_file_mb",
            ),
            (
                RecordParams {
                    max_file_s: -1.0,
                    ..ok.clone()
                },
                "max_file_s",
            ),
            (
                RecordParams {
                    max_file_mb: 0.0,
                    ..ok.clone()
                },
                "keep_files",
            ),
            (
                RecordParams {
                    file: "run.bag".into(),
                    ..ok.clone()
                },
                "file",
            ),
        ] {
            let e = bad.validate().unwrap_err();
            assert!(e.to_string().contains(key), "{e}");
        }
        assert!(!RecordParams::default().on());
    }
}
