//! Reading a script file from a path someone else chose (`aseba/load_script`, `script.path`):
//! regular files only, at most [`MAX_SCRIPT_BYTES`], opened without blocking.
//!
//! A device such as `/dev/zero` would otherwise be read until memory runs out (under
//! `mlockall`, every page stays resident) and a FIFO would block the reader until a writer
//! comes. The path is checked with `stat(2)` before it is opened (a device is never opened: an
//! open can have side effects, such as DTR on a serial port), opened with `O_NONBLOCK |
//! O_NOCTTY`, checked again with `fstat(2)` on the open file (the path may have been swapped in
//! between), and read through a bound of one byte more than the limit (the file may grow).

use std::fs::{File, Metadata, OpenOptions};
use std::io::{ErrorKind, Read};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};

/// The largest script file accepted (bytes). The largest Aseba program a Thymio-II holds is a
/// few kilobytes of source; the driver scripts are about 10 KiB.
pub const MAX_SCRIPT_BYTES: u64 = 1 << 20;

/// Why a script file cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScriptFileError {
    /// No such file.
    #[error("not found")]
    NotFound,
    /// The process may not read it.
    #[error("permission denied")]
    PermissionDenied,
    /// A directory, device, FIFO or socket.
    #[error("not a regular file (a {0})")]
    NotRegular(&'static str),
    /// Larger than [`MAX_SCRIPT_BYTES`].
    #[error("too large ({size} bytes; at most {max} bytes)")]
    TooLarge {
        /// Size found (at least `max + 1` if the file grew while read).
        size: u64,
        /// The limit.
        max: u64,
    },
    /// Not UTF-8 text.
    #[error("not UTF-8 text")]
    NotText,
    /// A `builtin:` path that names no built-in script.
    #[error("no such built-in script (built in: {0})")]
    NoSuchBuiltin(String),
    /// Any other I/O error.
    #[error("{message}")]
    Io {
        /// The kind of error.
        kind: ErrorKind,
        /// The system's message.
        message: String,
    },
}

impl From<std::io::Error> for ScriptFileError {
    fn from(e: std::io::Error) -> Self {
        match e.kind() {
            ErrorKind::NotFound => ScriptFileError::NotFound,
            ErrorKind::PermissionDenied => ScriptFileError::PermissionDenied,
            ErrorKind::InvalidData => ScriptFileError::NotText,
            kind => ScriptFileError::Io {
                kind,
                message: e.to_string(),
            },
        }
    }
}

/// What a file that is not regular is, for the error message.
fn kind_of(m: &Metadata) -> &'static str {
    let t = m.file_type();
    if t.is_dir() {
        "directory"
    } else if t.is_fifo() {
        "FIFO"
    } else if t.is_char_device() {
        "character device"
    } else if t.is_block_device() {
        "block device"
    } else if t.is_socket() {
        "socket"
    } else {
        "special file"
    }
}

/// Refuses what is not a regular file of at most [`MAX_SCRIPT_BYTES`].
fn check(m: &Metadata) -> Result<(), ScriptFileError> {
    if !m.file_type().is_file() {
        return Err(ScriptFileError::NotRegular(kind_of(m)));
    }
    if m.len() > MAX_SCRIPT_BYTES {
        return Err(ScriptFileError::TooLarge {
            size: m.len(),
            max: MAX_SCRIPT_BYTES,
        });
    }
    Ok(())
}

/// Reads a script file (see the module documentation). Never blocks on a FIFO or a device;
/// may still wait for a slow file system, so the driver calls it off its loop's thread.
/// A `builtin:` path gives the built-in script of that name (see [`super::builtin`]) without
/// touching the file system.
pub fn read_script_file(path: &str) -> Result<String, ScriptFileError> {
    if super::builtin::is_builtin(path) {
        return super::builtin::builtin_script(path)
            .map(str::to_owned)
            .ok_or_else(|| ScriptFileError::NoSuchBuiltin(super::builtin::builtin_names()));
    }
    check(&std::fs::metadata(path)?)?;
    let file: File = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)?;
    check(&file.metadata()?)?;
    let mut bytes = Vec::new();
    file.take(MAX_SCRIPT_BYTES + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_SCRIPT_BYTES {
        return Err(ScriptFileError::TooLarge {
            size: bytes.len() as u64,
            max: MAX_SCRIPT_BYTES,
        });
    }
    String::from_utf8(bytes).map_err(|_| ScriptFileError::NotText)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn reads_builtin_scripts_by_name() {
        let text = read_script_file("builtin:aseba/thymio_ros.aesl").unwrap();
        assert!(text.contains("name=\"odometry\""));
        let e = read_script_file("builtin:thymio_ros.aesl").unwrap_err();
        assert!(
            matches!(&e, ScriptFileError::NoSuchBuiltin(names) if names.contains("builtin:aseba/thymio_ros.aesl")),
            "{e}"
        );
    }

    #[test]
    fn reads_a_regular_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.aesl");
        std::fs::write(&p, "<network/>").unwrap();
        assert_eq!(read_script_file(p.to_str().unwrap()).unwrap(), "<network/>");
    }

    #[test]
    fn refuses_devices_fifos_and_directories_without_blocking() {
        assert_eq!(
            read_script_file("/dev/zero"),
            Err(ScriptFileError::NotRegular("character device"))
        );
        assert_eq!(
            read_script_file("/"),
            Err(ScriptFileError::NotRegular("directory"))
        );
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        nix_mkfifo(&fifo);
        assert_eq!(
            read_script_file(fifo.to_str().unwrap()),
            Err(ScriptFileError::NotRegular("FIFO"))
        );
    }

    fn nix_mkfifo(p: &std::path::Path) {
        let c = std::ffi::CString::new(p.to_str().unwrap()).unwrap();
        // SAFETY: `c` is a valid NUL-terminated path that outlives the call.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    }

    #[test]
    fn names_missing_unreadable_large_and_binary_files() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("missing.aesl");
        assert_eq!(
            read_script_file(missing.to_str().unwrap()),
            Err(ScriptFileError::NotFound)
        );
        let big = dir.path().join("big.aesl");
        let mut f = File::create(&big).unwrap();
        f.write_all(&vec![b' '; MAX_SCRIPT_BYTES as usize + 1])
            .unwrap();
        assert_eq!(
            read_script_file(big.to_str().unwrap()),
            Err(ScriptFileError::TooLarge {
                size: MAX_SCRIPT_BYTES + 1,
                max: MAX_SCRIPT_BYTES
            })
        );
        let exact = dir.path().join("exact.aesl");
        std::fs::write(&exact, vec![b' '; MAX_SCRIPT_BYTES as usize]).unwrap();
        assert!(read_script_file(exact.to_str().unwrap()).is_ok());
        let binary = dir.path().join("bin.aesl");
        std::fs::write(&binary, [0xff, 0xfe, 0x00]).unwrap();
        assert_eq!(
            read_script_file(binary.to_str().unwrap()),
            Err(ScriptFileError::NotText)
        );
        let locked = dir.path().join("locked.aesl");
        std::fs::write(&locked, "x").unwrap();
        std::fs::set_permissions(&locked, std::os::unix::fs::PermissionsExt::from_mode(0o000))
            .unwrap();
        // root reads it anyway; anyone else gets the reason
        if let Err(e) = read_script_file(locked.to_str().unwrap()) {
            assert_eq!(e, ScriptFileError::PermissionDenied);
        }
    }
}
