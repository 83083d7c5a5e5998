//! The receiving side of a simulated node's link, as the Thymio-II firmware frames its input
//! (aseba.md §1.2, `usb-buffer.c` `AsebaGetBuffer`): frames are cut by their `len` field alone,
//! never by their content, so a host that speaks the protocol can never make the node lose
//! the frame boundaries. What differs from the firmware is only where the firmware would
//! wedge or desynchronise, because the simulated robot must keep answering whatever arrives:
//!
//! - A frame whose payload exceeds 516 bytes (type + payload above
//!   `ASEBA_MAX_INNER_PACKET_SIZE`, 518) is dropped whole and counted. The firmware copies at
//!   most 518 bytes of type + payload out of its 587-byte receive FIFO and leaves the rest of
//!   the frame there (its next frame then starts inside this one), and a frame of more than
//!   581 payload bytes never fits the FIFO: its USB reception stops until the port is
//!   reopened.
//! - A partial frame on a link that has gone quiet (no byte for [`QUIET_MS`]) is given up
//!   and counted: a host writes a frame in one go, so it was garbage (or the tail of an
//!   interrupted host). Without this, a bogus header would swallow the next requests.
//!
//! Fixed buffer, no allocation: the world steps it on its thread.

use msgs::wire::{read_header, HEADER_LEN, MAX_FRAME, MAX_PAYLOAD};

/// Milliseconds without a byte after which a partial frame is given up.
pub const QUIET_MS: u64 = 50;

/// Counters of a [`NodeRx`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NodeRxStats {
    /// Whole frames delivered.
    pub frames: u64,
    /// Frames dropped because their payload exceeds 516 bytes.
    pub oversize: u64,
    /// Partial frames given up on a quiet link.
    pub abandoned: u64,
    /// Bytes dropped (oversize frames, abandoned partial frames).
    pub bytes_dropped: u64,
}

/// Frames a byte stream by the length field, as the firmware does.
#[derive(Clone)]
pub struct NodeRx {
    buf: [u8; MAX_FRAME],
    have: usize,
    /// Bytes of an oversize frame still to drop.
    skip: usize,
    /// Time (ms, caller's clock) of the last byte received.
    last_rx_ms: u64,
    stats: NodeRxStats,
}

impl Default for NodeRx {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for NodeRx {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NodeRx")
            .field("buffered", &self.have)
            .field("skip", &self.skip)
            .field("stats", &self.stats)
            .finish()
    }
}

impl NodeRx {
    /// An empty receiver.
    pub const fn new() -> Self {
        NodeRx {
            buf: [0; MAX_FRAME],
            have: 0,
            skip: 0,
            last_rx_ms: 0,
            stats: NodeRxStats {
                frames: 0,
                oversize: 0,
                abandoned: 0,
                bytes_dropped: 0,
            },
        }
    }

    /// Takes bytes received at `now_ms` and calls `on_frame` with every whole frame (header
    /// included, at most 522 bytes) they complete.
    pub fn push(&mut self, now_ms: u64, mut input: &[u8], mut on_frame: impl FnMut(&[u8])) {
        if !input.is_empty() {
            self.last_rx_ms = now_ms;
        }
        loop {
            if self.skip > 0 {
                let n = self.skip.min(input.len());
                self.skip -= n;
                self.stats.bytes_dropped += n as u64;
                input = &input[n..];
            }
            let need = match read_header(&self.buf[..self.have]) {
                None => HEADER_LEN,
                Some(h) if h.len > MAX_PAYLOAD => {
                    // the header is complete: drop it and the rest of the frame
                    self.stats.oversize += 1;
                    self.stats.bytes_dropped += HEADER_LEN as u64;
                    self.skip = h.len;
                    self.have = 0;
                    continue;
                }
                Some(h) if self.have == HEADER_LEN + h.len => {
                    self.stats.frames += 1;
                    on_frame(&self.buf[..self.have]);
                    self.have = 0;
                    continue;
                }
                Some(h) => HEADER_LEN + h.len,
            };
            if input.is_empty() || self.skip > 0 {
                return;
            }
            let n = (need - self.have).min(input.len());
            self.buf[self.have..self.have + n].copy_from_slice(&input[..n]);
            self.have += n;
            input = &input[n..];
        }
    }

    /// Tells the receiver the time: a partial frame (or the rest of an oversize one) waiting
    /// since [`QUIET_MS`] without a byte is given up.
    pub fn tick(&mut self, now_ms: u64) {
        let pending = self.have > 0 || self.skip > 0;
        if pending && now_ms.saturating_sub(self.last_rx_ms) >= QUIET_MS {
            self.stats.abandoned += 1;
            self.stats.bytes_dropped += self.have as u64;
            self.have = 0;
            self.skip = 0;
        }
    }

    /// Bytes of a partial frame held.
    pub fn buffered(&self) -> usize {
        self.have
    }

    /// Counters.
    pub fn stats(&self) -> NodeRxStats {
        self.stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use msgs::wire::{Message, Words};

    fn frames(rx: &mut NodeRx, now: u64, bytes: &[u8]) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        rx.push(now, bytes, |f| out.push(f.to_vec()));
        out
    }

    fn event(words: usize) -> Vec<u8> {
        msgs::wire::unchecked_frame(0, 3, &vec![0; 2 * words])
    }

    #[test]
    fn frames_split_anywhere_come_out_whole() {
        let a = Message::ListNodes { version: 9 }.to_frame(0).unwrap();
        let b = Message::UserEvent {
            id: 2,
            args: Words::from_slice(&[1, 2, 3]),
        }
        .to_frame(0)
        .unwrap();
        let all = [a.clone(), b.clone(), a.clone()].concat();
        for cut in 0..all.len() {
            let mut rx = NodeRx::new();
            let mut got = frames(&mut rx, 0, &all[..cut]);
            got.extend(frames(&mut rx, 1, &all[cut..]));
            assert_eq!(got, vec![a.clone(), b.clone(), a.clone()], "cut at {cut}");
        }
    }

    #[test]
    fn an_oversize_frame_is_dropped_whole_and_the_stream_stays_in_sync() {
        let ln = Message::ListNodes { version: 9 }.to_frame(0).unwrap();
        for words in [259, 291, 32767] {
            let mut rx = NodeRx::new();
            let stream = [event(words), ln.clone()].concat();
            // in small pieces, as a slow link delivers it
            let mut got = Vec::new();
            for chunk in stream.chunks(7) {
                got.extend(frames(&mut rx, 0, chunk));
            }
            assert_eq!(got, vec![ln.clone()], "{words} words");
            assert_eq!(rx.stats().oversize, 1);
        }
        // 258 words is the protocol's largest payload: delivered
        let mut rx = NodeRx::new();
        assert_eq!(frames(&mut rx, 0, &event(258)).len(), 1);
    }

    #[test]
    fn a_partial_frame_on_a_quiet_link_is_given_up() {
        let ln = Message::ListNodes { version: 9 }.to_frame(0).unwrap();
        let mut rx = NodeRx::new();
        // a header announcing 400 bytes that never come
        assert!(frames(&mut rx, 10, &[0x90, 0x01, 0, 0, 1, 0, 7]).is_empty());
        rx.tick(10 + QUIET_MS - 1);
        assert_eq!(rx.buffered(), 7);
        rx.tick(10 + QUIET_MS);
        assert_eq!((rx.buffered(), rx.stats().abandoned), (0, 1));
        assert_eq!(frames(&mut rx, 100, &ln), vec![ln.clone()]);
        // the rest of an oversize frame too
        assert!(frames(&mut rx, 200, &event(300)[..100]).is_empty());
        rx.tick(200 + QUIET_MS);
        assert_eq!(frames(&mut rx, 300, &ln), vec![ln]);
    }
}
