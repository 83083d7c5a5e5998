//! In-process link over a pair of rtrb byte rings (the embedded simulator's endpoint), with an
//! optional readiness doorbell: an eventfd the writer of the incoming ring rings after each
//! push, so that the RT thread waits on it as on a socket instead of polling the ring.

use super::{Link, LinkError};
use handoff::{prefault_ring, Doorbell, LinkKind};
use rtrb::{Consumer, Producer, RingBuffer};
use std::os::fd::BorrowedFd;

/// One end of an in-process byte pipe: writes go to `tx`, reads come from `rx`.
#[derive(Debug)]
pub struct PipeLink {
    tx: Producer<u8>,
    rx: Consumer<u8>,
    /// Rung by the peer after it pushed bytes into `rx` (and when it goes away).
    readable: Option<Doorbell>,
    /// The peer's `readable` bell: rung after every write that pushed bytes into `tx`.
    peer: Option<Doorbell>,
}

impl PipeLink {
    /// Wraps the rings of a peer that rings nothing (e.g. `sim::world::HostEnds`): the RT
    /// thread polls this link every period.
    pub fn new(tx: Producer<u8>, rx: Consumer<u8>) -> Self {
        PipeLink {
            tx,
            rx,
            readable: None,
            peer: None,
        }
    }

    /// Wraps the rings of a peer that rings `readable` after each push into `rx` and when it
    /// drops its end (e.g. the simulator's link made by `sim::world::World::attach_rung`); writes ring `peer` if given.
    /// The RT thread then waits on `readable`'s fd.
    pub fn with_doorbells(
        tx: Producer<u8>,
        rx: Consumer<u8>,
        readable: Doorbell,
        peer: Option<Doorbell>,
    ) -> Self {
        PipeLink {
            tx,
            rx,
            readable: readable.is_live().then_some(readable),
            peer: peer.filter(Doorbell::is_live),
        }
    }

    /// Two connected ends with `capacity` bytes each way (memory touched now), each ringing the
    /// other's readiness doorbell.
    pub fn pair(capacity: usize) -> (PipeLink, PipeLink) {
        let (mut a_tx, mut b_rx) = RingBuffer::new(capacity);
        let (mut b_tx, mut a_rx) = RingBuffer::new(capacity);
        prefault_ring(&mut a_tx, &mut b_rx, 0);
        prefault_ring(&mut b_tx, &mut a_rx, 0);
        let (a_bell, b_bell) = (Doorbell::new(), Doorbell::new());
        (
            PipeLink::with_doorbells(a_tx, a_rx, a_bell.clone(), Some(b_bell.clone())),
            PipeLink::with_doorbells(b_tx, b_rx, b_bell, Some(a_bell)),
        )
    }
}

impl Link for PipeLink {
    fn read(&mut self, buf: &mut [u8]) -> Result<usize, LinkError> {
        let want = buf.len();
        let n = self.rx.pop_partial_slice(buf).0.len();
        if n < want {
            // The ring was empty: consume the rings so far, then look again, so that a push
            // between the pop and the drain keeps the descriptor readable.
            if let Some(bell) = &self.readable {
                bell.drain();
                if !self.rx.is_empty() {
                    bell.ring();
                }
            }
        }
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
        let n = written.len();
        if n > 0 {
            if let Some(peer) = &self.peer {
                peer.ring();
            }
        }
        Ok(n)
    }

    fn kind(&self) -> LinkKind {
        LinkKind::Pipe
    }

    /// The readiness doorbell's eventfd, if the peer rings one.
    fn rt_fd(&self) -> Option<BorrowedFd<'_>> {
        self.readable.as_ref().and_then(Doorbell::fd)
    }
}

impl Drop for PipeLink {
    fn drop(&mut self) {
        // The peer's reader must wake to see the end of the link.
        if let Some(peer) = &self.peer {
            peer.ring();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nix::poll::{poll, PollFd, PollFlags, PollTimeout};

    fn readable(link: &PipeLink) -> bool {
        let mut fds = [PollFd::new(link.rt_fd().unwrap(), PollFlags::POLLIN)];
        poll(&mut fds, PollTimeout::ZERO).unwrap() > 0
    }

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
        assert!(readable(&a));
        let mut buf = [0u8; 16];
        assert_eq!(a.read(&mut buf), Ok(4));
        assert_eq!(a.read(&mut buf), Err(LinkError::Eof));
        assert_eq!(a.write(b"x"), Err(LinkError::Eof));
    }

    #[test]
    fn the_fd_is_readable_exactly_while_bytes_wait() {
        let (mut a, mut b) = PipeLink::pair(64);
        assert!(!readable(&a) && !readable(&b));
        b.write(b"hello").unwrap();
        assert!(readable(&a) && !readable(&b));
        let mut buf = [0u8; 2];
        // a full read may leave bytes: still readable
        assert_eq!(a.read(&mut buf), Ok(2));
        assert!(readable(&a));
        let mut buf = [0u8; 16];
        assert_eq!(a.read(&mut buf), Ok(3));
        assert!(!readable(&a), "a short read drained the ring and its bell");
        b.write(b"x").unwrap();
        assert!(readable(&a));
    }

    #[test]
    fn an_unrung_pipe_has_no_fd_and_is_polled() {
        let (tx, rx) = RingBuffer::new(8);
        let (_tx2, rx2) = RingBuffer::<u8>::new(8);
        let mut link = PipeLink::new(tx, rx2);
        assert!(link.rt_fd().is_none());
        assert_eq!(link.write(b"ab"), Ok(2));
        drop(rx);
    }
}
