//! Why a recording cannot be read ([`ReadError`], re-exported by [`super::read`]): shared by the reader and the
//! file scanner (a leaf module).

use std::path::PathBuf;

/// Why a recording cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The file cannot be read.
    #[error("cannot read {path:?}: {source}")]
    Open {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// Not a regular file: a FIFO, a device, a directory (replay would block or never end).
    #[error("{path:?} is {kind}, not a regular file: replay reads recordings (FILE.mcap)")]
    NotAFile {
        /// The path.
        path: PathBuf,
        /// What it is.
        kind: &'static str,
    },
    /// Not an MCAP file, or a damaged one (a record that does not parse, or one too large to read).
    #[error("{path:?} is not a readable MCAP file (damaged at byte {at}): {what}")]
    Damaged {
        /// The file.
        path: PathBuf,
        /// Where the record that does not read starts.
        at: u64,
        /// What is wrong.
        what: String,
    },
    /// Chunks compressed by another tool (the recorder writes none; decompressing needs C libraries the driver
    /// does not link).
    #[error("{path:?} has chunks compressed with {compression}, which replay does not read: write an uncompressed copy first (e.g. the mcap CLI: mcap compress --compression none)")]
    Compressed {
        /// The file.
        path: PathBuf,
        /// The compression.
        compression: String,
    },
    /// A record of the RT thread that does not decode.
    #[error("{path:?}: a message on {topic} does not decode: {source}")]
    Decode {
        /// The file.
        path: PathBuf,
        /// Its channel.
        topic: String,
        /// The decoder's error.
        source: ciborium::de::Error<std::io::Error>,
    },
    /// More than replay holds in memory ([`MEMORY_MAX`](super::read::MEMORY_MAX)): the records of a very long run.
    #[error("{path:?}: the recording's records take more than {max} bytes in memory, the most replay holds; replay a shorter run (record.max_file_s with keep_files, or several runs)")]
    TooLarge {
        /// The file where the bound was passed.
        path: PathBuf,
        /// The bound.
        max: u64,
    },
    /// No record of the RT thread in it.
    #[error("{path:?} holds no record of the RT thread (not a thymio-rt flight recording)")]
    NotARecording {
        /// The file.
        path: PathBuf,
    },
}
