//! The names of a rotating recording's files: `stem.ext` first, then `stem_001.ext`, `stem_002.ext`… (three digits
//! at least, more past 999), in the directory of the path given; and the check that none of them exists yet.

use crate::error::RecordError;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The file names of one recording.
#[derive(Debug, Clone)]
pub(crate) struct Naming {
    /// The path given (file 0).
    first: PathBuf,
    dir: PathBuf,
    stem: OsString,
    /// The extension with its dot ("" for none).
    ext: OsString,
}

impl Naming {
    /// The names of the recording at `path` (its file name must be a name, not `..` or a root).
    pub(crate) fn new(path: &Path) -> Result<Naming, RecordError> {
        let bad = |reason| RecordError::BadPath {
            path: path.to_owned(),
            reason,
        };
        if path.file_name().is_none() {
            return Err(bad("no file name (expected e.g. run.mcap)"));
        }
        let stem = path
            .file_stem()
            .ok_or_else(|| bad("no file name (expected e.g. run.mcap)"))?
            .to_owned();
        let ext = match path.extension() {
            Some(e) => {
                let mut dotted = OsString::from(".");
                dotted.push(e);
                dotted
            }
            None => OsString::new(),
        };
        let dir = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_owned(),
            _ => PathBuf::from("."),
        };
        Ok(Naming {
            first: path.to_owned(),
            dir,
            stem,
            ext,
        })
    }

    /// The path of file `index` of the rotation (0: the path given).
    pub(crate) fn path(&self, index: u32) -> PathBuf {
        if index == 0 {
            return self.first.clone();
        }
        let mut name = self.stem.clone();
        name.push(format!("_{index:03}"));
        name.push(&self.ext);
        self.dir.join(name)
    }

    /// The index of a rotated file named `name` (`stem_NNN.ext`, N ≥ 1), if it is one.
    fn rotated_index(&self, name: &std::ffi::OsStr) -> Option<u32> {
        let name = name.to_str()?;
        let rest = name.strip_prefix(self.stem.to_str()?)?;
        let digits = rest.strip_prefix('_')?.strip_suffix(self.ext.to_str()?)?;
        if digits.len() < 3 || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        digits.parse().ok().filter(|&i| i > 0)
    }

    /// Refuses a recording that would overwrite one: the path given when it is a regular file or a symbolic link
    /// to one or to nothing (a device such as `/dev/full`, or a link to one, is written to), and, when the
    /// recording rotates, any `stem_NNN.ext` beside it.
    pub(crate) fn check_free(&self, rotates: bool) -> Result<(), RecordError> {
        let exists = |existing: PathBuf| RecordError::Exists {
            path: self.first.clone(),
            existing,
        };
        // followed: a link to a file is a recording written over, a dangling one would make a file elsewhere
        let target = std::fs::metadata(&self.first);
        let link = std::fs::symlink_metadata(&self.first);
        if target.as_ref().is_ok_and(|m| m.is_file()) || (link.is_ok() && target.is_err()) {
            return Err(exists(self.first.clone()));
        }
        if !rotates {
            return Ok(());
        }
        // an unreadable or missing directory fails at the file's creation, with its own error
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return Ok(());
        };
        for entry in entries.flatten() {
            if self.rotated_index(&entry.file_name()).is_some() {
                return Err(exists(entry.path()));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rotated_names() {
        let n = Naming::new(Path::new("/d/run.mcap")).unwrap();
        assert_eq!(n.path(0), PathBuf::from("/d/run.mcap"));
        assert_eq!(n.path(1), PathBuf::from("/d/run_001.mcap"));
        assert_eq!(n.path(42), PathBuf::from("/d/run_042.mcap"));
        assert_eq!(n.path(1234), PathBuf::from("/d/run_1234.mcap"));
        let bare = Naming::new(Path::new("run")).unwrap();
        assert_eq!(bare.path(2), PathBuf::from("./run_002"));
        assert_eq!(n.rotated_index("run_007.mcap".as_ref()), Some(7));
        assert_eq!(n.rotated_index("run_1000.mcap".as_ref()), Some(1000));
        for other in [
            "run.mcap",
            "run_7.mcap",
            "run_000.mcap",
            "run_00x.mcap",
            "runs_001.mcap",
            "run_001.txt",
        ] {
            assert_eq!(n.rotated_index(other.as_ref()), None, "{other}");
        }
    }

    #[test]
    fn refuses_no_file_name() {
        let e = Naming::new(Path::new("/")).unwrap_err();
        assert!(e.to_string().contains("\"/\": no file name"), "{e}");
    }

    #[test]
    fn refuses_to_overwrite() {
        let dir = tempfile::tempdir().unwrap();
        let n = Naming::new(&dir.path().join("a.mcap")).unwrap();
        n.check_free(true).unwrap();
        std::fs::write(dir.path().join("a_003.mcap"), b"x").unwrap();
        // rotated files only matter when the recording rotates
        n.check_free(false).unwrap();
        let e = n.check_free(true).unwrap_err();
        assert!(e.to_string().contains("a_003.mcap\" exists already"), "{e}");
        std::fs::write(dir.path().join("a.mcap"), b"x").unwrap();
        let e = n.check_free(false).unwrap_err();
        assert!(
            matches!(e, RecordError::Exists { ref existing, .. } if existing.ends_with("a.mcap")),
            "{e}"
        );
        // a device is written to, not refused
        Naming::new(Path::new("/dev/full"))
            .unwrap()
            .check_free(false)
            .unwrap();
        // so is a link to one (`run.mcap` -> /dev/full: a test's full disk), not a link to a recording or nowhere
        let link = |name: &str, to: &Path| {
            let p = dir.path().join(name);
            std::os::unix::fs::symlink(to, &p).unwrap();
            Naming::new(&p).unwrap().check_free(false)
        };
        link("full.mcap", Path::new("/dev/full")).unwrap();
        let e = link("old.mcap", &dir.path().join("a.mcap")).unwrap_err();
        assert!(matches!(e, RecordError::Exists { .. }), "{e}");
        let e = link("nowhere.mcap", &dir.path().join("gone/b.mcap")).unwrap_err();
        assert!(matches!(e, RecordError::Exists { .. }), "{e}");
    }
}
