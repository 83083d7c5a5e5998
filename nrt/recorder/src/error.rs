//! What can go wrong while recording, each error naming the file (or the channel, or the argument) it concerns and
//! keeping its cause.

use crate::channel::ChannelKey;
use std::io;
use std::path::PathBuf;
use std::sync::Arc;

/// An error of a [`Recording`](crate::Recording). None of them panics or ends the process: a failed write puts the
/// recording into a failed state (its later writes return [`RecordError::Stopped`]); the driver goes on.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    /// The recording's path cannot name a file (no file name, `..`).
    #[error("recording path {path:?}: {reason}")]
    BadPath {
        /// The path given.
        path: PathBuf,
        /// Why it is refused.
        reason: &'static str,
    },
    /// A file of the recording exists already: recording would overwrite (lose) it.
    #[error("recording {path:?}: {existing:?} exists already (a recording is never written over another)")]
    Exists {
        /// The path given to [`Recording::create`](crate::Recording::create).
        path: PathBuf,
        /// The file that would be overwritten.
        existing: PathBuf,
    },
    /// A file of the recording cannot be created (missing or read-only directory, permissions...).
    #[error("recording {path:?}: cannot create the file: {source}")]
    Create {
        /// The file.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// Writing a file failed (ENOSPC, EIO...).
    #[error("recording {path:?}: {what} failed: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What was being written ("a message", "the summary"...).
        what: &'static str,
        /// Why.
        source: io::Error,
    },
    /// The MCAP writer refused a record (too many channels or schemas...).
    #[error("recording {path:?}: {what} failed: {source}")]
    Mcap {
        /// The file.
        path: PathBuf,
        /// What was being written.
        what: &'static str,
        /// Why.
        source: mcap::McapError,
    },
    /// A channel cannot be registered as given.
    #[error("recording channel {topic:?}: {reason}")]
    BadChannel {
        /// Its topic.
        topic: String,
        /// Why it is refused.
        reason: String,
    },
    /// A write named a channel this recording never registered.
    #[error("recording: unknown channel key {0:?} (keys come from Recording::channel of the same recording)")]
    UnknownChannel(ChannelKey),
    /// The MCAP writer panicked (a bug of the `mcap` crate or of its use): caught at the recorder's boundary, the
    /// recording ends here and the driver goes on.
    #[error("recording {path:?}: the MCAP writer failed inside ({what}); the recording ends here, the driver goes on")]
    Panicked {
        /// The file being written.
        path: PathBuf,
        /// The panic's message.
        what: String,
    },
    /// The recording stopped at an earlier error (named here); nothing more is written.
    #[error("recording stopped after an earlier error: {cause}")]
    Stopped {
        /// The error that stopped it.
        #[source]
        cause: Arc<RecordError>,
    },
}

impl RecordError {
    /// The error of writing `what` to `path`: an I/O error as [`RecordError::Io`] (its kind stays matchable, e.g.
    /// `StorageFull`), any other as [`RecordError::Mcap`].
    pub(crate) fn from_mcap(
        path: &std::path::Path,
        what: &'static str,
        e: mcap::McapError,
    ) -> Self {
        match e {
            mcap::McapError::Io(source) => RecordError::Io {
                path: path.to_owned(),
                what,
                source,
            },
            source => RecordError::Mcap {
                path: path.to_owned(),
                what,
                source,
            },
        }
    }

    /// A copy to keep as the cause of the failed state while the original is returned to the caller (causes that are
    /// not `Clone` are kept as their kind and text).
    pub(crate) fn shadow(&self) -> RecordError {
        let text = |e: &dyn std::error::Error| e.to_string();
        match self {
            RecordError::BadPath { path, reason } => RecordError::BadPath {
                path: path.clone(),
                reason,
            },
            RecordError::Exists { path, existing } => RecordError::Exists {
                path: path.clone(),
                existing: existing.clone(),
            },
            RecordError::Create { path, source } => RecordError::Create {
                path: path.clone(),
                source: io::Error::new(source.kind(), text(source)),
            },
            RecordError::Io { path, what, source } => RecordError::Io {
                path: path.clone(),
                what,
                source: io::Error::new(source.kind(), text(source)),
            },
            RecordError::Mcap { path, what, source } => RecordError::Io {
                path: path.clone(),
                what,
                source: io::Error::other(text(source)),
            },
            RecordError::BadChannel { topic, reason } => RecordError::BadChannel {
                topic: topic.clone(),
                reason: reason.clone(),
            },
            RecordError::UnknownChannel(k) => RecordError::UnknownChannel(*k),
            RecordError::Panicked { path, what } => RecordError::Panicked {
                path: path.clone(),
                what: what.clone(),
            },
            RecordError::Stopped { cause } => RecordError::Stopped {
                cause: cause.clone(),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_io_error_keeps_its_kind_and_names_the_path() {
        let e = RecordError::from_mcap(
            std::path::Path::new("/x/y.mcap"),
            "a message",
            mcap::McapError::Io(io::Error::from_raw_os_error(28)),
        );
        let RecordError::Io { ref source, .. } = e else {
            panic!("{e:?}")
        };
        assert_eq!(source.kind(), io::ErrorKind::StorageFull);
        let shown = e.to_string();
        assert!(
            shown.contains("/x/y.mcap") && shown.contains("a message"),
            "{shown}"
        );
        // the kept copy says the same and keeps the kind
        let kept = e.shadow();
        assert_eq!(kept.to_string(), shown);
        let RecordError::Io { source, .. } = kept else {
            panic!()
        };
        assert_eq!(source.kind(), io::ErrorKind::StorageFull);
    }

    #[test]
    fn stopped_names_its_cause() {
        let cause = Arc::new(RecordError::BadPath {
            path: "p".into(),
            reason: "r",
        });
        let e = RecordError::Stopped { cause };
        assert!(e.to_string().contains("recording path \"p\": r"), "{e}");
        assert!(std::error::Error::source(&e).is_some());
    }
}
