//! In-process link over a pair of rtrb byte rings (the embedded simulator's endpoint).

use super::{Link, LinkError};
use msgs::handoff::{prefault_ring, LinkKind};
use rtrb::{Consumer, Producer, RingBuffer};

/// One end of an in-process byte pipe: writes go to `tx`, reads come from `rx`.
#[derive(Debug)]
pub struct PipeLink {
    tx: Producer<u8>,
    rx: Consumer<u8>,
}

impl PipeLink {
    /// Wraps the rings of a peer (e.g. the simulator's `(Producer<u8>, Consumer<u8>)`).
    pub fn new(tx: Producer<u8>, rx: Consumer<u8>) -> Self {
        PipeLink { tx, rx }
    }

    /// Two connected ends with `capacity` bytes each way (memory touched now).
    pub fn pair(capacity: usize) -> (PipeLink, PipeLink) {
        let (mut a_tx, mut b_rx) = RingBuffer::new(capacity);
        let (mut b_tx, mut a_rx) = RingBuffer::new(capacity);
        prefault_ring(&mut a_tx, &mut b_rx, 0);
        prefault_ring(&mut b_tx, &mut a_rx, 0);
        (PipeLink::new(a_tx, a_rx), PipeLink::new(b_tx, b_rx))
    }
}

impl Link for PipeLink {
    fn read(&mut self, buf: &mut [u8]) -> Result<usize, LinkError> {
        let want = buf.len();
        let n = self.rx.pop_partial_slice(buf).0.len();
        // Abandoned and drained: the peer is gone for good.
        if n == 0 && want > 0 && self.rx.is_abandoned() && self.rx.is_empty() {
            return Err(LinkError::Eof);
        }
        Ok(n)
    }

    fn write(&mut self, buf: &[u8]) -> Result<usize, LinkError> {
        if self.tx.is_abandoned() {
            return Err(LinkError::Eof);
        }
        let (written, _) = self.tx.push_partial_slice(buf);
        Ok(written.len())
    }

    fn kind(&self) -> LinkKind {
        LinkKind::Pipe
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_flow_both_ways_and_partial_writes_are_reported() {
        let (mut a, mut b) = PipeLink::pair(4);
        assert_eq!(a.write(b"abcdef"), Ok(4));
        let mut buf = [0u8; 8];
        assert_eq!(b.read(&mut buf), Ok(4));
        assert_eq!(&buf[..4], b"abcd");
        assert_eq!(b.read(&mut buf), Ok(0));
        assert_eq!(b.write(b"xy"), Ok(2));
        assert_eq!(a.read(&mut buf), Ok(2));
        assert_eq!(a.kind(), LinkKind::Pipe);
    }

    #[test]
    fn drop_of_the_peer_ends_the_link_after_draining() {
        let (mut a, mut b) = PipeLink::pair(16);
        b.write(b"last").unwrap();
        drop(b);
        let mut buf = [0u8; 16];
        assert_eq!(a.read(&mut buf), Ok(4));
        assert_eq!(a.read(&mut buf), Err(LinkError::Eof));
        assert_eq!(a.write(b"x"), Err(LinkError::Eof));
    }
}
