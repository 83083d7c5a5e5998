//! A streaming reader of one MCAP file: record by record from the file (never the whole file in memory), every
//! record read into memory capped at [`RECORD_MAX`], attachments and indexes skipped without being read, chunks
//! (uncompressed, as the recorder writes them) opened one at a time. A file cut short — by SIGKILL, a power loss or
//! a full disk, which leave no summary — is read up to its last complete record, and the cut is said
//! ([`Cut`]); a file that is not a regular file (a FIFO, a device, a directory) is refused before it is opened.

use super::read_error::ReadError;
use mcap::records::{op, Record};
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufReader, ErrorKind, Read};
use std::path::Path;

/// The largest record read into memory: the recorder's chunks are 1 MiB at most, its metadata holds the
/// configuration (a few KiB). A larger one (of another writer) is refused, naming its size.
pub const RECORD_MAX: u64 = 64 << 20;
/// The read buffer.
const BUFFER: usize = 64 * 1024;

/// Where a file without its summary ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cut {
    /// The byte after the last complete record (what is read).
    pub at_byte: u64,
    /// The file's size.
    pub size: u64,
    /// The complete chunks read.
    pub chunks: u64,
    /// The messages read (in those chunks).
    pub messages: u64,
}

impl std::fmt::Display for Cut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "cut after {} message(s) / chunk {} at byte {} of {}: the file has no summary (a crash, a kill or a \
             full disk ended it)",
            self.messages, self.chunks, self.at_byte, self.size
        )
    }
}

/// What [`scan`] found in a file.
#[derive(Debug, Default)]
pub struct Scanned {
    /// Its metadata records, by name.
    pub metadata: BTreeMap<String, BTreeMap<String, String>>,
    /// Where it was cut (`None`: it ends with its data end record, as a closed file does).
    pub cut: Option<Cut>,
}

/// Refuses what is not a regular file (followed through links), before opening it: a FIFO would block, a device
/// such as `/dev/zero` never ends.
pub fn regular_file(path: &Path) -> Result<u64, ReadError> {
    let meta = std::fs::metadata(path).map_err(|source| ReadError::Open {
        path: path.to_path_buf(),
        source,
    })?;
    use std::os::unix::fs::FileTypeExt;
    let t = meta.file_type();
    let kind = if t.is_file() {
        return Ok(meta.len());
    } else if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_char_device() || t.is_block_device() {
        "a device"
    } else if t.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    };
    Err(ReadError::NotAFile {
        path: path.to_path_buf(),
        kind,
    })
}

/// Reads `path` record by record, handing each message to `message` (its channel's topic, its data) and
/// stopping at the first chunk when `metadata_only` (the metadata come before the chunks in the recorder's files).
pub fn scan(
    path: &Path,
    metadata_only: bool,
    mut message: impl FnMut(&str, &[u8]) -> Result<(), ReadError>,
) -> Result<Scanned, ReadError> {
    let size = regular_file(path)?;
    let io = |source| ReadError::Open {
        path: path.to_path_buf(),
        source,
    };
    let damaged = |at: u64, what: String| ReadError::Damaged {
        path: path.to_path_buf(),
        at,
        what,
    };
    let mut f = BufReader::with_capacity(BUFFER, File::open(path).map_err(io)?);
    let mut magic = [0u8; 8];
    if size < 8 || f.read_exact(&mut magic).is_err() || magic != mcap::MAGIC {
        return Err(damaged(0, "it does not start as an MCAP file".into()));
    }
    let mut out = Scanned::default();
    let mut topics: BTreeMap<u16, String> = BTreeMap::new();
    let (mut pos, mut chunks, mut messages) = (8u64, 0u64, 0u64);
    let mut body = Vec::new();
    let cut = |pos, chunks, messages| Cut {
        at_byte: pos,
        size,
        chunks,
        messages,
    };
    loop {
        let mut head = [0u8; 9];
        match f.read_exact(&mut head) {
            Ok(()) => {}
            Err(e) if e.kind() == ErrorKind::UnexpectedEof => {
                out.cut = Some(cut(pos, chunks, messages));
                return Ok(out);
            }
            Err(e) => return Err(io(e)),
        }
        let opcode = head[0];
        let len = u64::from_le_bytes(head[1..].try_into().expect("8 bytes"));
        let end = pos.saturating_add(9).saturating_add(len);
        if opcode == 0 {
            // no record has opcode 0: the zeros a power loss leaves past what was written
            out.cut = Some(cut(pos, chunks, messages));
            return Ok(out);
        }
        if end > size {
            // the record goes past the end of the file: written in part
            out.cut = Some(cut(pos, chunks, messages));
            return Ok(out);
        }
        match opcode {
            op::DATA_END | op::FOOTER => return Ok(out),
            op::CHUNK if metadata_only => return Ok(out),
            op::HEADER | op::CHANNEL | op::MESSAGE | op::CHUNK | op::METADATA => {
                if len > RECORD_MAX {
                    return Err(damaged(
                        pos,
                        format!(
                            "a record of {len} bytes (opcode {opcode:#04x}), larger than the {RECORD_MAX} \
                             bytes replay reads at once"
                        ),
                    ));
                }
                body.clear();
                body.resize(len as usize, 0);
                f.read_exact(&mut body).map_err(io)?;
            }
            _ => {
                // attachments, schemas, indexes, statistics: not needed, skipped without being read
                f.seek_relative(len as i64).map_err(io)?;
                pos = end;
                continue;
            }
        }
        let record = mcap::parse_record(opcode, &body).map_err(|e| damaged(pos, e.to_string()))?;
        match record {
            Record::Channel(c) => {
                topics.insert(c.id, c.topic);
            }
            Record::Metadata(m) => {
                out.metadata.insert(m.name, m.metadata);
            }
            Record::Message { header, data } => {
                let topic = topics.get(&header.channel_id).map_or("", String::as_str);
                message(topic, &data)?;
                messages += 1;
            }
            Record::Chunk { header, data } => {
                if !header.compression.is_empty() {
                    return Err(ReadError::Compressed {
                        path: path.to_path_buf(),
                        compression: header.compression,
                    });
                }
                messages += chunk(&data, &mut topics, &mut message).map_err(|e| match e {
                    // the caller's own error (a message that does not decode, too much to hold)
                    ChunkError::Message(e) => e,
                    e => damaged(pos, format!("in the chunk there: {e}")),
                })?;
                chunks += 1;
            }
            _ => {}
        }
        pos = end;
    }
}

/// Why a chunk's content does not read.
#[derive(Debug)]
enum ChunkError {
    Mcap(mcap::McapError),
    Short,
    Message(ReadError),
}

impl std::fmt::Display for ChunkError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ChunkError::Mcap(e) => e.fmt(f),
            ChunkError::Short => f.write_str("a record runs past the chunk's end"),
            ChunkError::Message(e) => e.fmt(f),
        }
    }
}

/// The records of an uncompressed chunk's data; the number of messages.
fn chunk(
    mut data: &[u8],
    topics: &mut BTreeMap<u16, String>,
    message: &mut impl FnMut(&str, &[u8]) -> Result<(), ReadError>,
) -> Result<u64, ChunkError> {
    let mut n = 0;
    while !data.is_empty() {
        if data.len() < 9 {
            return Err(ChunkError::Short);
        }
        let opcode = data[0];
        let len = u64::from_le_bytes(data[1..9].try_into().expect("8 bytes"));
        let rest = &data[9..];
        let len = usize::try_from(len)
            .ok()
            .filter(|l| *l <= rest.len())
            .ok_or(ChunkError::Short)?;
        let (body, next) = rest.split_at(len);
        data = next;
        match mcap::parse_record(opcode, body).map_err(ChunkError::Mcap)? {
            Record::Channel(c) => {
                topics.insert(c.id, c.topic);
            }
            Record::Message { header, data } => {
                let topic = topics.get(&header.channel_id).map_or("", String::as_str);
                message(topic, &data).map_err(ChunkError::Message)?;
                n += 1;
            }
            _ => {}
        }
    }
    Ok(n)
}
