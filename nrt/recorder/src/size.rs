//! How big a file of the recording is and will be once closed: the bytes written so far (counted under the MCAP
//! writer) plus an upper bound of what closing it adds (the open chunk's message indexes, the summary, the footer),
//! from the MCAP record layouts (<https://mcap.dev/spec>: a record is an opcode byte, a u64 length and its fields;
//! strings and maps carry a u32 length).

use std::io::{self, Seek, SeekFrom, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// A writer that counts how far into the file anything was written (the MCAP writer seeks back to complete a chunk
/// header: the end is the furthest byte, not the position).
#[derive(Debug)]
pub(crate) struct Counting<W> {
    inner: W,
    pos: u64,
    end: Arc<AtomicU64>,
}

impl<W> Counting<W> {
    /// Counts what goes to `inner`; `end` reads the furthest byte written.
    pub(crate) fn new(inner: W) -> (Counting<W>, Arc<AtomicU64>) {
        let end = Arc::new(AtomicU64::new(0));
        (
            Counting {
                inner,
                pos: 0,
                end: end.clone(),
            },
            end,
        )
    }

    /// The writer counted.
    pub(crate) fn into_inner(self) -> W {
        self.inner
    }
}

impl<W: Write> Write for Counting<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.pos += n as u64;
        self.end.fetch_max(self.pos, Ordering::Relaxed);
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

impl<W: Seek> Seek for Counting<W> {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        // SeekFrom::End of a device (/dev/full) is 0: the position is what the inner writer says
        self.pos = self.inner.seek(to)?;
        Ok(self.pos)
    }

    /// Counted, not asked: `BufWriter::seek` writes its buffer out, and the MCAP writer asks the position for
    /// every chunk and metadata record.
    fn stream_position(&mut self) -> io::Result<u64> {
        Ok(self.pos)
    }
}

/// Record framing: opcode + u64 length.
const RECORD: u64 = 1 + 8;
/// A message record without its data: channel id, sequence, log and publish times.
pub(crate) const MESSAGE_OVERHEAD: u64 = RECORD + 2 + 4 + 8 + 8;
/// A chunk's header record (no compression name): start/end times, sizes, CRC, compression, compressed size.
pub(crate) const CHUNK_HEADER: u64 = RECORD + 8 + 8 + 8 + 4 + 4 + 8;

/// One message index entry (log time, offset).
const INDEX_ENTRY: u64 = 16;
/// A message index record without entries: channel id, the entries' u32 length.
const INDEX_RECORD: u64 = RECORD + 2 + 4;

/// What one channel's registration writes into a file (schema record and channel record, no channel metadata).
pub(crate) fn channel_bytes(
    topic: &str,
    message_encoding: &str,
    schema: Option<&crate::SchemaDef>,
) -> u64 {
    let schema = schema.map_or(0, |s| {
        RECORD + 2 + 4 + s.name.len() as u64 + 4 + s.encoding.len() as u64 + 4 + s.data.len() as u64
    });
    schema + RECORD + 2 + 2 + 4 + topic.len() as u64 + 4 + message_encoding.len() as u64 + 4
}

/// An upper bound of what closing a file adds to what it holds: the open chunk's message indexes (`chunk_messages`
/// over at most `channels` channels), then the data end, the summary (the schemas and channels again, statistics,
/// `chunks` chunk indexes, the metadata indexes), the summary offsets, the footer and the closing magic.
pub(crate) fn closing_bound(
    channels: u64,
    schema_and_channel_bytes: u64,
    chunks: u64,
    metadata_names: u64,
    metadata_count: u64,
    chunk_messages: u64,
) -> u64 {
    let indexes = channels * INDEX_RECORD + chunk_messages * INDEX_ENTRY;
    let data_end = RECORD + 4;
    let statistics = RECORD + 8 + 2 + 4 + 4 + 4 + 4 + 8 + 8 + 4 + channels * (2 + 8);
    let chunk_index = RECORD + 8 + 8 + 8 + 8 + 4 + channels * (2 + 8) + 8 + 4 + 8 + 8;
    let metadata_index = RECORD + 8 + 8 + 4;
    let summary_offsets = 6 * (RECORD + 1 + 8 + 8);
    let footer = RECORD + 8 + 8 + 4;
    let magic = 8;
    indexes
        + data_end
        + schema_and_channel_bytes
        + statistics
        + chunks * chunk_index
        + metadata_count * metadata_index
        + metadata_names
        + summary_offsets
        + footer
        + magic
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    #[test]
    fn counts_the_furthest_byte() {
        let (mut w, end) = Counting::new(Cursor::new(Vec::new()));
        w.write_all(b"0123456789").unwrap();
        w.seek(SeekFrom::Start(2)).unwrap();
        w.write_all(b"ab").unwrap();
        assert_eq!(end.load(Ordering::Relaxed), 10);
        w.seek(SeekFrom::End(0)).unwrap();
        w.write_all(b"xyz").unwrap();
        assert_eq!(end.load(Ordering::Relaxed), 13);
        assert_eq!(w.stream_position().unwrap(), 13);
        assert_eq!(w.into_inner().into_inner(), b"01ab456789xyz");
    }

    #[test]
    fn the_closing_bound_grows_with_what_is_closed() {
        let base = closing_bound(1, 100, 1, 0, 0, 0);
        assert!(closing_bound(2, 100, 1, 0, 0, 0) > base);
        assert!(closing_bound(1, 200, 1, 0, 0, 0) == base + 100);
        assert!(closing_bound(1, 100, 2, 0, 0, 0) > base);
        assert!(closing_bound(1, 100, 1, 5, 1, 0) > base);
        assert_eq!(closing_bound(1, 100, 1, 0, 0, 3), base + 48);
    }
}
