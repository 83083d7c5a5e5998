//! A fixed transmit buffer per link: whole frames in (or nothing), as many bytes out as the
//! link accepts. No allocation after construction.

use super::{Link, LinkError};

/// Byte FIFO of fixed capacity.
pub struct TxBuffer {
    buf: Box<[u8]>,
    head: usize,
    len: usize,
}

impl std::fmt::Debug for TxBuffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TxBuffer")
            .field("capacity", &self.buf.len())
            .field("queued", &self.len)
            .finish()
    }
}

impl TxBuffer {
    /// A buffer of `capacity` bytes (allocated and touched now).
    pub fn new(capacity: usize) -> Self {
        let mut buf = vec![0u8; capacity.max(1)].into_boxed_slice();
        // Write every page so that the RT thread never takes a first-touch page fault here.
        let b = std::hint::black_box(&mut buf[..]);
        for x in b.iter_mut().step_by(4096) {
            *x = 1;
        }
        std::hint::black_box(&mut *b);
        TxBuffer {
            buf,
            head: 0,
            len: 0,
        }
    }

    /// Bytes queued.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Free bytes.
    pub fn free(&self) -> usize {
        self.buf.len() - self.len
    }

    /// Queues all of `bytes`, or nothing if they do not fit (returns false).
    pub fn push(&mut self, bytes: &[u8]) -> bool {
        if bytes.len() > self.free() {
            return false;
        }
        let cap = self.buf.len();
        let tail = (self.head + self.len) % cap;
        let first = bytes.len().min(cap - tail);
        self.buf[tail..tail + first].copy_from_slice(&bytes[..first]);
        self.buf[..bytes.len() - first].copy_from_slice(&bytes[first..]);
        self.len += bytes.len();
        true
    }

    /// Writes queued bytes to `link` until it accepts no more; returns the bytes written.
    pub fn flush(&mut self, link: &mut dyn Link) -> Result<usize, LinkError> {
        let mut total = 0;
        while self.len > 0 {
            let cap = self.buf.len();
            let end = (self.head + self.len).min(cap);
            let n = link.write(&self.buf[self.head..end])?;
            if n == 0 {
                break;
            }
            total += n;
            self.head = (self.head + n) % cap;
            self.len -= n;
        }
        if self.len == 0 {
            self.head = 0;
        }
        Ok(total)
    }

    /// Drops everything queued.
    pub fn clear(&mut self) {
        self.head = 0;
        self.len = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::link::PipeLink;

    #[test]
    fn whole_pushes_and_wrapping_flushes_keep_order() {
        let (mut a, mut b) = PipeLink::pair(5);
        let mut tx = TxBuffer::new(8);
        let mut out = Vec::new();
        let mut next = 0u8;
        let mut buf = [0u8; 16];
        for round in 0..50 {
            let chunk: Vec<u8> = (0..(round % 4 + 1)).map(|i| next.wrapping_add(i)).collect();
            if tx.push(&chunk) {
                next = next.wrapping_add(chunk.len() as u8);
            } else {
                assert!(chunk.len() > tx.free());
            }
            tx.flush(&mut a).unwrap();
            let n = b.read(&mut buf).unwrap();
            out.extend_from_slice(&buf[..n]);
        }
        while !tx.is_empty() {
            tx.flush(&mut a).unwrap();
            let n = b.read(&mut buf).unwrap();
            out.extend_from_slice(&buf[..n]);
        }
        let n = b.read(&mut buf).unwrap();
        out.extend_from_slice(&buf[..n]);
        let expected: Vec<u8> = (0..out.len()).map(|i| i as u8).collect();
        assert_eq!(out, expected);
        assert_eq!(out.len(), next as usize + 256 * (out.len() / 256));
    }

    #[test]
    fn too_big_is_refused_whole() {
        let mut tx = TxBuffer::new(4);
        assert!(tx.push(b"abc"));
        assert!(!tx.push(b"de"));
        assert_eq!(tx.len(), 3);
        tx.clear();
        assert!(tx.is_empty() && tx.free() == 4);
    }
}
