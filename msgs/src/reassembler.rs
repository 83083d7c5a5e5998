//! Stream reassembly: bytes in arbitrary chunks in, validated frames out, with counted
//! rejections and resynchronisation. A fixed buffer, no allocation: usable on the RT thread.
//!
//! The Aseba stream has no start marker and no checksum (aseba.md §1.1); a corrupted header
//! is detected by plausibility (length ≤ 516, even user events, a type in a protocol range, a
//! known type whose payload matches its layout) and the stream is resynchronised by dropping
//! one byte at a time until a plausible frame starts. Frames of a protocol range that this
//! implementation does not know are skipped whole and counted.
//!
//! While resynchronising, a candidate frame must also be followed by a plausible header, and a
//! user event must have a compiler-range id (< 0x1000): random bytes and frames read at the
//! wrong offset often look like one plausible user event, rarely like two in a row. The
//! price is that the first frame after a garbage burst is delivered when the next header
//! arrives — or when the link goes quiet: the owner of the link calls
//! [`Reassembler::push_idle`] when no byte came for a while (longer than a frame takes to
//! arrive), and a candidate then either stands alone (complete: delivered without lookahead)
//! or is given up (incomplete: its first byte is dropped and the rest scanned again). This
//! keeps sparse traffic (a node answering requests) from waiting on a bogus long frame.
//!
//! A reassembler made by [`Reassembler::skipping_oversize`] (for streams from hosts, such as
//! the Aseba switch's clients, which frame by length as Dashel does) drops a frame announcing
//! more than 516 bytes whole, by its length, when it is in step with the stream and the rest of
//! its header is plausible: resynchronising byte by byte there would read the frame's body as
//! frames and forward them.

use crate::wire::{
    check_header, kind, read_header, Frame, FrameError, Message, HEADER_LEN, MAX_FRAME,
};

/// A frame plus the header that follows it (lookahead while resynchronising).
const BUF_LEN: usize = MAX_FRAME + HEADER_LEN;
/// Largest user-event id accepted while resynchronising (ids the compiler generates).
const RESYNC_MAX_EVENT_ID: u16 = 0x0FFF;

/// Counters of a [`Reassembler`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReassemblerStats {
    /// Frames delivered.
    pub frames: u64,
    /// Frames rejected (one per resynchronisation episode or skipped frame).
    pub rejected: u64,
    /// Bytes dropped while resynchronising or skipping frames.
    pub bytes_discarded: u64,
    /// Rejections because the length exceeded 516.
    pub oversize: u64,
    /// Rejections of user events with an odd length.
    pub odd_user_event: u64,
    /// Rejections because the type is in no protocol range.
    pub invalid_type: u64,
    /// Frames of an unknown type, skipped whole.
    pub unknown_type: u64,
    /// Rejections of known types with a malformed payload.
    pub malformed: u64,
}

/// Reassembles frames from a byte stream.
#[derive(Clone)]
pub struct Reassembler {
    buf: [u8; BUF_LEN],
    start: usize,
    end: usize,
    /// Length of the frame yielded last, dropped at the next call.
    yielded: usize,
    resyncing: bool,
    /// The link is quiet: resolve pending resynchronisation candidates without more bytes.
    idle: bool,
    /// Drop oversize frames whole (by their length) when in step with the stream.
    skip_oversize: bool,
    /// Bytes of an oversize frame still to drop.
    skip: usize,
    stats: ReassemblerStats,
}

impl Default for Reassembler {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for Reassembler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reassembler")
            .field("buffered", &self.buffered())
            .field("stats", &self.stats)
            .finish()
    }
}

enum Step {
    NeedMore,
    Deliver(usize),
    Reject(FrameError, Resync),
}

enum Resync {
    /// Drop one byte and look for a header again.
    Byte,
    /// Drop the whole frame of this length (possibly more than is buffered).
    Frame(usize),
}

impl Reassembler {
    /// An empty reassembler.
    pub const fn new() -> Self {
        Reassembler {
            buf: [0; BUF_LEN],
            start: 0,
            end: 0,
            yielded: 0,
            resyncing: false,
            idle: false,
            skip_oversize: false,
            skip: 0,
            stats: ReassemblerStats {
                frames: 0,
                rejected: 0,
                bytes_discarded: 0,
                oversize: 0,
                odd_user_event: 0,
                invalid_type: 0,
                unknown_type: 0,
                malformed: 0,
            },
        }
    }

    /// An empty reassembler that drops a frame announcing more than 516 payload bytes whole,
    /// by its length, when the stream is in step and the header's type and parity are
    /// plausible (see the module documentation). For streams from hosts.
    pub const fn skipping_oversize() -> Self {
        let mut r = Self::new();
        r.skip_oversize = true;
        r
    }

    /// Consumes bytes from `input` (advancing it) until one frame is complete, and yields it.
    /// Returns `None` when `input` is exhausted without a complete frame (partial bytes are
    /// kept). A rejection is reported once per resynchronisation episode or skipped frame; the
    /// caller just keeps calling. The yielded frame stays valid until the next call.
    pub fn push<'s>(&'s mut self, input: &mut &[u8]) -> Option<Result<Frame<'s>, FrameError>> {
        if !input.is_empty() {
            self.idle = false;
        }
        self.start += std::mem::take(&mut self.yielded);
        loop {
            if self.skip > 0 {
                let n = self.skip.min(input.len());
                self.skip -= n;
                *input = &input[n..];
                if self.skip > 0 {
                    return None;
                }
            }
            match self.step(input) {
                Step::NeedMore => return None,
                Step::Deliver(total) => {
                    self.resyncing = false;
                    self.stats.frames += 1;
                    self.yielded = total;
                    let raw = &self.buf[self.start..self.start + total];
                    return Some(Ok(Frame::from_validated(raw)));
                }
                Step::Reject(err, resync) => {
                    let dropped = match resync {
                        Resync::Byte => 1,
                        Resync::Frame(n) => n,
                    };
                    let buffered = self.end - self.start;
                    self.start += dropped.min(buffered);
                    self.skip = dropped.saturating_sub(buffered);
                    self.stats.bytes_discarded += dropped as u64;
                    let report = matches!(resync, Resync::Frame(_)) || !self.resyncing;
                    self.resyncing = matches!(resync, Resync::Byte);
                    if report {
                        self.count(&err);
                        return Some(Err(err));
                    }
                }
            }
        }
    }

    /// Tells the reassembler that the link has been quiet (no byte for longer than a frame
    /// takes to arrive) and yields what that resolves: while resynchronising, a complete
    /// candidate frame waiting only for the next header is delivered, and an incomplete one is
    /// given up. Call it until it returns `None`; new bytes end the quiet state.
    pub fn push_idle(&mut self) -> Option<Result<Frame<'_>, FrameError>> {
        self.idle = true;
        let mut nothing: &[u8] = &[];
        self.push(&mut nothing)
    }

    fn count(&mut self, err: &FrameError) {
        let s = &mut self.stats;
        s.rejected += 1;
        match err {
            FrameError::Oversize(_) => s.oversize += 1,
            FrameError::OddUserEvent { .. } => s.odd_user_event += 1,
            FrameError::InvalidType(_) => s.invalid_type += 1,
            FrameError::UnknownType(_) => s.unknown_type += 1,
            FrameError::Malformed(_) | FrameError::Incomplete { .. } => s.malformed += 1,
        }
    }

    /// Looks at the buffered bytes, pulling from `input` as needed; decides what to do next.
    fn step(&mut self, input: &mut &[u8]) -> Step {
        if !self.fill_to(HEADER_LEN, input) {
            return Step::NeedMore;
        }
        let header = match check_header(&self.buf[self.start..self.end]) {
            Ok(h) => h,
            Err(FrameError::Oversize(len)) if self.skip_oversize && !self.resyncing => {
                // a plausible header is a host's too-long frame: dropped whole; otherwise the
                // header is garbage, rejected for what else is wrong with it
                let kind = read_header(&self.buf[self.start..self.end]).map_or(0, |h| h.kind);
                let err = if kind::is_user_event(kind) && !len.is_multiple_of(2) {
                    FrameError::OddUserEvent { kind, len }
                } else if !kind::is_user_event(kind) && !(0x8000..0xB000).contains(&kind) {
                    FrameError::InvalidType(kind)
                } else {
                    return Step::Reject(
                        FrameError::Oversize(len),
                        Resync::Frame(HEADER_LEN + len),
                    );
                };
                return Step::Reject(err, Resync::Byte);
            }
            Err(e) => return Step::Reject(e, Resync::Byte),
        };
        let total = HEADER_LEN + header.len;
        if self.resyncing && kind::is_user_event(header.kind) && header.kind > RESYNC_MAX_EVENT_ID {
            return Step::Reject(FrameError::InvalidType(header.kind), Resync::Byte);
        }
        if !self.fill_to(total, input) {
            if self.resyncing && self.idle {
                // a real frame arrives in one piece: a quiet link means this one is bogus
                return Step::Reject(
                    FrameError::Incomplete {
                        need: total,
                        have: self.end - self.start,
                    },
                    Resync::Byte,
                );
            }
            return Step::NeedMore;
        }
        if self.resyncing {
            if !self.fill_to(total + HEADER_LEN, input) {
                if !self.idle {
                    return Step::NeedMore;
                }
                // the link went quiet after a complete candidate: it stands alone
            } else {
                let next = &self.buf[self.start + total..self.start + total + HEADER_LEN];
                if let Err(e) = check_header(next) {
                    return Step::Reject(e, Resync::Byte);
                }
            }
        }
        if !kind::is_known(header.kind) {
            return Step::Reject(FrameError::UnknownType(header.kind), Resync::Frame(total));
        }
        let payload = &self.buf[self.start + HEADER_LEN..self.start + total];
        match Message::decode(header.kind, payload) {
            Ok(_) => Step::Deliver(total),
            Err(e) => Step::Reject(FrameError::Malformed(e), Resync::Byte),
        }
    }

    /// Ensures `n` buffered bytes from `start`, taking them from `input`; false if not enough.
    fn fill_to(&mut self, n: usize, input: &mut &[u8]) -> bool {
        let have = self.end - self.start;
        if have >= n {
            return true;
        }
        if self.start + n > BUF_LEN {
            self.buf.copy_within(self.start..self.end, 0);
            self.end = have;
            self.start = 0;
        }
        let take = (n - have).min(input.len());
        self.buf[self.end..self.end + take].copy_from_slice(&input[..take]);
        self.end += take;
        *input = &input[take..];
        self.end - self.start >= n
    }

    /// Counters since creation (or the last [`reset`](Self::reset)).
    pub fn stats(&self) -> ReassemblerStats {
        self.stats
    }

    /// Bytes held while waiting for the rest of a frame.
    pub fn buffered(&self) -> usize {
        self.end - self.start - self.yielded
    }

    /// Drops buffered bytes (e.g. after the link reconnected); counters are kept.
    pub fn clear(&mut self) {
        self.start = 0;
        self.end = 0;
        self.yielded = 0;
        self.resyncing = false;
        self.idle = false;
        self.skip = 0;
    }

    /// Drops buffered bytes and zeroes the counters (the oversize mode is kept).
    pub fn reset(&mut self) {
        let skip_oversize = self.skip_oversize;
        *self = Self::new();
        self.skip_oversize = skip_oversize;
    }
}

#[cfg(test)]
mod tests;
