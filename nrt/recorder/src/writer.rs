//! The rotating MCAP writer: [`Recording`] writes registered channels' messages into `stem.mcap`, then (with a size
//! or duration limit) `stem_001.mcap`, `stem_002.mcap`…; each file is closed (summary and footer: readable on its
//! own) before the next one opens, and carries every channel, schema and metadata record again. A failed write
//! stops the recording, never the process.
//!
//! Chunks are written **uncompressed**: the `mcap` crate's `lz4` and `zstd` features bind C libraries (lz4-sys,
//! zstd-sys) that would be compiled into the driver, the messages are small (a frame, an odometry sample) and the
//! recorder must cost little CPU; readers (the `mcap` Python reader, rosbag2, Foxglove) read uncompressed chunks.
//! Each chunk is closed after [`CHUNK_MAX_AGE`] of log time or its size target, so that a crash loses little.
//!
//! The MCAP writer never seeks: a chunk is made in memory and written out whole (a device such as `/dev/null`, whose
//! position is always 0, made the seeking writer's chunk code panic), so a file cut by a crash or a full disk holds
//! whole chunks followed by at most one cut short, which `flight::read` reads up to.

use crate::channel::{ChannelKey, SchemaDef};
use crate::error::RecordError;
use crate::naming::Naming;
use crate::size::{self, Counting};
use mcap::records::{MessageHeader, Metadata};
use mcap::{WriteOptions, Writer};
use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// The MCAP header's `library` field.
const LIBRARY: &str = concat!("thymio-rt nrt-recorder ", env!("CARGO_PKG_VERSION"));
/// A chunk is closed (and written out) once its first message is this old (log time).
pub const CHUNK_MAX_AGE: Duration = Duration::from_secs(1);
/// A chunk's size target without a size limit (with one: an eighth of it, at least 4 KiB).
const CHUNK_BYTES: u64 = 1 << 20;
/// The write buffer of a file.
const BUFFER: usize = 64 * 1024;

/// When a recording moves on to its next file, and how many files it keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RecordLimits {
    /// A file is closed before the message that would make it larger than this (bytes, the closing summary
    /// included; 0: no limit). A file always takes its first message, even a larger one.
    pub max_bytes: u64,
    /// A file is closed before a message logged this long after its first one (ZERO: no limit).
    pub max_duration: Duration,
    /// The number of files kept: opening one more deletes the oldest (0: keep all).
    pub keep_files: u32,
}

impl RecordLimits {
    /// One file, no limit.
    pub const NONE: RecordLimits = RecordLimits {
        max_bytes: 0,
        max_duration: Duration::ZERO,
        keep_files: 0,
    };

    /// Whether the recording may have more than one file.
    pub fn rotates(&self) -> bool {
        self.max_bytes > 0 || !self.max_duration.is_zero()
    }
}

/// What a finished recording wrote.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RecordSummary {
    /// The files kept, oldest first.
    pub files: Vec<PathBuf>,
    /// The files deleted by [`RecordLimits::keep_files`], oldest first.
    pub deleted: Vec<PathBuf>,
    /// Messages written per topic (deleted files included).
    pub messages: BTreeMap<String, u64>,
    /// Bytes written, deleted files included (a file left without its summary by an error: its size on disk).
    pub bytes: u64,
    /// The file an error left without its summary (readable up to its last complete chunk), if one did.
    pub cut: Option<PathBuf>,
}

/// A channel as registered, written again into every file.
#[derive(Debug)]
struct ChannelDef {
    topic: String,
    /// None: no schema (id 0).
    schema: Option<SchemaDef>,
    message_encoding: String,
    messages: u64,
    /// Messages handed to the system by the last successful flush or close (what a crash keeps).
    durable: u64,
}

/// The file being written.
struct OpenFile {
    path: PathBuf,
    writer: Guarded,
    /// The furthest byte written into it.
    end: Arc<AtomicU64>,
    /// The MCAP channel id of each channel, by key.
    ids: Vec<u16>,
    first_log_time: Option<u64>,
    /// Chunks started, the open one included.
    chunks: u64,
    /// The open chunk: its first log time, messages and bytes (none open: `None`).
    chunk: Option<(u64, u64, u64)>,
    /// The furthest byte handed to the system by the last successful flush (what a crash keeps).
    durable_end: u64,
}

/// A rotating MCAP recording: registered channels' messages go into `stem.mcap`, then (with a size or duration
/// limit, [`RecordLimits`]) `stem_001.mcap`, `stem_002.mcap`… (three digits at least) beside it. Each file is closed
/// (summary and footer: readable on its own) before the next one opens and carries every channel, schema and
/// metadata record again. Chunks are uncompressed and closed after [`CHUNK_MAX_AGE`] of log time at most. A failed
/// write stops the recording ([`RecordError::Stopped`]), never the process.
///
/// ```
/// use nrt_recorder::{Recording, RecordLimits, SchemaDef};
/// let dir = tempfile::tempdir().unwrap();
/// let mut rec = Recording::create(&dir.path().join("run.mcap"), RecordLimits::NONE, &[]).unwrap();
/// let raw = SchemaDef { name: "thymio_rt/frame".into(), encoding: String::new(), data: Vec::new() };
/// let ch = rec.channel("/aseba/frames", &raw, "thymio-rt/rt-record-v1").unwrap();
/// rec.write(ch, 1_000, 1_000, &[1, 2, 3]).unwrap();
/// let summary = rec.finish().unwrap();
/// assert_eq!(summary.messages["/aseba/frames"], 1);
/// assert_eq!(summary.files, [dir.path().join("run.mcap")]);
/// ```
pub struct Recording {
    naming: Naming,
    limits: RecordLimits,
    metadata: Vec<Metadata>,
    /// The metadata names' bytes in the summary's metadata indexes.
    metadata_names: u64,
    channels: Vec<ChannelDef>,
    /// What the channels' schema and channel records take (in the summary, again).
    channel_bytes: u64,
    chunk_target: u64,
    current: Option<OpenFile>,
    /// The index of the current file in the rotation.
    index: u32,
    files: Vec<PathBuf>,
    deleted: Vec<PathBuf>,
    /// The bytes of the files closed.
    closed_bytes: u64,
    /// The error that stopped the recording.
    failed: Option<Arc<RecordError>>,
}

impl Recording {
    /// Starts a recording at `path` (its first file) with `metadata` (name, key-values: written into every file).
    /// Refuses to overwrite a recording (the path, or with limits a `stem_NNN` file beside it, exists: a device
    /// such as `/dev/full` is written to) and fails at once when the file cannot be created.
    pub fn create(
        path: &Path,
        limits: RecordLimits,
        metadata: &[(&str, BTreeMap<String, String>)],
    ) -> Result<Recording, RecordError> {
        let naming = Naming::new(path)?;
        naming.check_free(limits.rotates())?;
        let chunk_target = match limits.max_bytes {
            0 => CHUNK_BYTES,
            max => (max / 8).clamp(4096, CHUNK_BYTES),
        };
        let metadata: Vec<Metadata> = metadata
            .iter()
            .map(|(name, map)| Metadata {
                name: (*name).to_owned(),
                metadata: map.clone(),
            })
            .collect();
        let mut rec = Recording {
            naming,
            limits,
            metadata_names: metadata.iter().map(|m| m.name.len() as u64).sum(),
            metadata,
            channels: Vec::new(),
            channel_bytes: 0,
            chunk_target,
            current: None,
            index: 0,
            files: Vec::new(),
            deleted: Vec::new(),
            closed_bytes: 0,
            failed: None,
        };
        rec.current = Some(rec.open(0)?);
        rec.files.push(rec.naming.path(0));
        Ok(rec)
    }

    /// Registers a channel: `topic`, its `schema` and the encoding of its messages (`cdr` for ROS 2 messages);
    /// written into the current file and every later one. A topic is registered once.
    pub fn channel(
        &mut self,
        topic: &str,
        schema: &SchemaDef,
        message_encoding: &str,
    ) -> Result<ChannelKey, RecordError> {
        self.check_running()?;
        let bad = |reason: &str| RecordError::BadChannel {
            topic: topic.to_owned(),
            reason: reason.to_owned(),
        };
        if topic.is_empty() {
            return Err(bad("empty topic"));
        }
        if message_encoding.is_empty() {
            return Err(bad("empty message encoding (e.g. \"cdr\")"));
        }
        if schema.encoding.is_empty() && !schema.data.is_empty() {
            return Err(bad(&format!(
                "schema {:?} has data but no encoding (\"\" means no schema)",
                schema.name
            )));
        }
        if schema.name.is_empty() && !schema.encoding.is_empty() {
            return Err(bad(&format!(
                "schema of encoding {:?} without a name",
                schema.encoding
            )));
        }
        if self.channels.iter().any(|c| c.topic == topic) {
            return Err(bad("registered already"));
        }
        let key = u16::try_from(self.channels.len())
            .map(ChannelKey)
            .map_err(|_| bad("too many channels (65535 at most)"))?;
        let def = ChannelDef {
            topic: topic.to_owned(),
            schema: (!schema.name.is_empty() || !schema.encoding.is_empty())
                .then(|| schema.clone()),
            message_encoding: message_encoding.to_owned(),
            messages: 0,
            durable: 0,
        };
        let file = self.file()?;
        match register(file.writer.get(), &def) {
            Ok(id) => file.ids.push(id),
            Err(e) => {
                let e = RecordError::from_mcap(&file.path, "a channel", e);
                return Err(self.fail(e));
            }
        }
        self.channel_bytes += size::channel_bytes(topic, message_encoding, def.schema.as_ref());
        self.channels.push(def);
        Ok(key)
    }

    /// Writes a message of channel `ch` logged at `log_time_ns` (wall clock, as rosbag2) and published at
    /// `publish_time_ns` (its stamp), after moving on to the next file if a limit says so. An I/O error stops the
    /// recording: it is returned here, and every later write returns [`RecordError::Stopped`] at once.
    pub fn write(
        &mut self,
        ch: ChannelKey,
        log_time_ns: u64,
        publish_time_ns: u64,
        data: &[u8],
    ) -> Result<(), RecordError> {
        self.check_running()?;
        let idx = usize::from(ch.0);
        if idx >= self.channels.len() {
            return Err(RecordError::UnknownChannel(ch));
        }
        if self.must_rotate(log_time_ns, data.len() as u64) {
            self.rotate()?;
        }
        let chunk_target = self.chunk_target;
        let sequence = self.channels[idx].messages;
        if let Some((first, _, bytes)) = self.file()?.chunk {
            let old = log_time_ns.saturating_sub(first) >= CHUNK_MAX_AGE.as_nanos() as u64;
            if bytes >= chunk_target || old {
                // closes the chunk (its message indexes) and hands it to the file
                self.flush()?;
            }
        }
        let file = self.file()?;
        let header = MessageHeader {
            channel_id: file.ids[idx],
            // the MCAP sequence is a u32: it wraps
            sequence: sequence as u32,
            log_time: log_time_ns,
            publish_time: publish_time_ns,
        };
        if let Err(e) = file.writer.get().write_to_known_channel(&header, data) {
            let e = RecordError::from_mcap(&file.path, "writing a message", e);
            return Err(self.fail(e));
        }
        file.first_log_time.get_or_insert(log_time_ns);
        let bytes = size::MESSAGE_OVERHEAD + data.len() as u64;
        file.chunk = Some(match file.chunk {
            Some((first, n, b)) => (first, n + 1, b + bytes),
            None => {
                file.chunks += 1;
                (log_time_ns, 1, bytes)
            }
        });
        self.channels[idx].messages += 1;
        Ok(())
    }

    /// Closes the open chunk and writes it out to the file (the writer does so by itself after [`CHUNK_MAX_AGE`]
    /// of log time, at the next message): call it when messages may stop for a while, so that a crash loses
    /// nothing written before. An error stops the recording, as in [`Recording::write`].
    pub fn flush(&mut self) -> Result<(), RecordError> {
        self.check_running()?;
        let file = self.file()?;
        if let Err(e) = file.writer.get().flush() {
            let e = RecordError::from_mcap(&file.path, "writing a chunk", e);
            return Err(self.fail(e));
        }
        file.chunk = None;
        file.durable_end = file.end.load(Ordering::Relaxed);
        for c in &mut self.channels {
            c.durable = c.messages;
        }
        Ok(())
    }

    /// The files of the recording still on disk, oldest first (the last one is being written).
    pub fn files(&self) -> &[PathBuf] {
        &self.files
    }

    /// The error that stopped the recording, if one did.
    pub fn stopped_by(&self) -> Option<&RecordError> {
        self.failed.as_deref()
    }

    /// `Err(Stopped)` once an error stopped the recording.
    fn check_running(&self) -> Result<(), RecordError> {
        match &self.failed {
            Some(cause) => Err(RecordError::Stopped {
                cause: cause.clone(),
            }),
            None => Ok(()),
        }
    }

    /// The file being written (a running recording always has one).
    fn file(&mut self) -> Result<&mut OpenFile, RecordError> {
        match (self.current.as_mut(), &self.failed) {
            (Some(file), _) => Ok(file),
            (None, Some(cause)) => Err(RecordError::Stopped {
                cause: cause.clone(),
            }),
            (None, None) => Err(RecordError::Stopped {
                cause: Arc::new(RecordError::BadPath {
                    path: self.naming.path(self.index),
                    reason: "no file open",
                }),
            }),
        }
    }

    /// Stops the recording at `e` (kept as the cause of later `Stopped` errors) and gives `e` back.
    fn fail(&mut self, e: RecordError) -> RecordError {
        self.failed = Some(Arc::new(e.shadow()));
        e
    }

    /// Whether a message of `len` bytes logged at `log_time_ns` goes into a new file.
    fn must_rotate(&self, log_time_ns: u64, len: u64) -> bool {
        let Some(file) = &self.current else {
            return false;
        };
        let Some(first) = file.first_log_time else {
            // a file takes its first message whatever its size
            return false;
        };
        let max_ns = u64::try_from(self.limits.max_duration.as_nanos()).unwrap_or(u64::MAX);
        if max_ns > 0 && log_time_ns.saturating_sub(first) >= max_ns {
            return true;
        }
        if self.limits.max_bytes == 0 {
            return false;
        }
        // the message in a new chunk (counted whether or not it is), then everything closing adds
        let (chunks, chunk_messages) = match file.chunk {
            Some((_, n, _)) => (file.chunks + 1, n + 1),
            None => (file.chunks + 1, 1),
        };
        // the open chunk is in memory until it closes (the writer never seeks): its messages count here
        let open_chunk = file.chunk.map_or(0, |(_, _, bytes)| bytes);
        let projected = file.end.load(Ordering::Relaxed)
            + open_chunk
            + size::CHUNK_HEADER
            + size::MESSAGE_OVERHEAD
            + len
            + size::closing_bound(
                self.channels.len() as u64,
                self.channel_bytes,
                chunks,
                self.metadata_names,
                self.metadata.len() as u64,
                chunk_messages,
            );
        projected > self.limits.max_bytes
    }

    /// Closes the current file, opens the next one and deletes the oldest beyond `keep_files`.
    fn rotate(&mut self) -> Result<(), RecordError> {
        if let Some(file) = self.current.take() {
            if let Err(e) = self.close(file) {
                return Err(self.fail(e));
            }
        }
        self.index += 1;
        match self.open(self.index) {
            Ok(file) => self.current = Some(file),
            Err(e) => return Err(self.fail(e)),
        }
        self.files.push(self.naming.path(self.index));
        let keep = self.limits.keep_files as usize;
        while keep > 0 && self.files.len() > keep {
            let oldest = &self.files[0];
            if let Err(e) = std::fs::remove_file(oldest) {
                // tried again at the next rotation; the recording goes on
                tracing::warn!(
                    "recording: cannot delete {} (keep_files): {e}",
                    oldest.display()
                );
                break;
            }
            self.deleted.push(self.files.remove(0));
        }
        Ok(())
    }

    /// Creates file `index` of the rotation with its metadata and every channel.
    fn open(&self, index: u32) -> Result<OpenFile, RecordError> {
        let path = self.naming.path(index);
        let mut options = OpenOptions::new();
        options.write(true);
        // never over a file; the first path may be a device (checked by `Naming::check_free`)
        if index > 0 || std::fs::symlink_metadata(&path).is_err() {
            options.create_new(true);
        }
        let file = options.open(&path).map_err(|source| RecordError::Create {
            path: path.clone(),
            source,
        })?;
        let (sink, end) = Counting::new(BufWriter::with_capacity(BUFFER, file));
        let mcap_err = |what, e| RecordError::from_mcap(&path, what, e);
        let mut writer = WriteOptions::new()
            .compression(None)
            .chunk_size(None)
            // chunks made in memory and written out whole: see the module documentation
            .disable_seeking(true)
            .library(LIBRARY)
            .create(sink)
            .map_err(|e| mcap_err("the header", e))?;
        for m in &self.metadata {
            writer
                .write_metadata(m)
                .map_err(|e| mcap_err("a metadata record", e))?;
        }
        let mut ids = Vec::with_capacity(self.channels.len());
        for def in &self.channels {
            ids.push(register(&mut writer, def).map_err(|e| mcap_err("a channel", e))?);
        }
        Ok(OpenFile {
            path,
            writer: Guarded(Some(writer)),
            end,
            ids,
            first_log_time: None,
            chunks: 0,
            chunk: None,
            durable_end: 0,
        })
    }
}

/// Writes `def`'s schema (if it has one) and channel records; its MCAP channel id.
fn register(
    writer: &mut Writer<Counting<BufWriter<File>>>,
    def: &ChannelDef,
) -> Result<u16, mcap::McapError> {
    let schema_id = match &def.schema {
        Some(s) => writer.add_schema(&s.name, &s.encoding, &s.data)?,
        None => 0,
    };
    writer.add_channel(
        schema_id,
        &def.topic,
        &def.message_encoding,
        &BTreeMap::new(),
    )
}

#[path = "writer_end.rs"]
mod end;
use end::Guarded;

#[cfg(test)]
#[path = "writer_tests.rs"]
mod tests;
