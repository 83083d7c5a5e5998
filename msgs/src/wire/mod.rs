//! The Aseba wire protocol (aseba.md §1–2): frame layout, message types, typed messages.
//!
//! A frame is `len: u16, source: u16, type: u16` (little-endian) followed by `len` payload
//! bytes. Decoding borrows the received bytes and never allocates, so the RT thread can use it.

mod decode;
mod encode;
pub mod kind;
mod message;
mod views;

pub use decode::DecodeError;
pub use encode::EncodeError;
pub use message::Message;
pub use views::{AsebaStr, ChangedBlocks, NativeParams, Words};

/// Bytes of the frame header (`len`, `source`, `type`).
pub const HEADER_LEN: usize = 6;
/// Largest payload the protocol allows (`ASEBA_MAX_EVENT_ARG_SIZE`).
pub const MAX_PAYLOAD: usize = 516;
/// Largest frame (header + payload).
pub const MAX_FRAME: usize = HEADER_LEN + MAX_PAYLOAD;
/// Largest number of i16 words in a payload.
pub const MAX_PAYLOAD_WORDS: usize = MAX_PAYLOAD / 2;
/// Words of bytecode per SET_BYTECODE message.
pub const BYTECODE_CHUNK_WORDS: usize = 256;
/// Source id hosts use by default.
pub const HOST_SOURCE: u16 = 0;

/// One complete frame, borrowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Frame<'a> {
    /// Node id of the sender.
    pub source: u16,
    /// Message type.
    pub kind: u16,
    /// Payload bytes (`len` of them).
    pub payload: &'a [u8],
    raw: &'a [u8],
}

/// Why bytes do not form an acceptable frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    /// Fewer bytes than the header announces.
    #[error("incomplete frame: {have} of {need} bytes")]
    Incomplete {
        /// Bytes needed.
        need: usize,
        /// Bytes available.
        have: usize,
    },
    /// The header announces more than 516 payload bytes.
    #[error("frame length {0} exceeds {MAX_PAYLOAD}")]
    Oversize(usize),
    /// A user event with an odd number of payload bytes.
    #[error("user event 0x{kind:04X} with odd payload length {len}")]
    OddUserEvent {
        /// Event id.
        kind: u16,
        /// Payload length.
        len: usize,
    },
    /// A type outside every protocol range (resynchronised byte by byte).
    #[error("invalid message type 0x{0:04X}")]
    InvalidType(u16),
    /// A type of a known protocol range that this implementation does not know (skipped whole).
    #[error("unknown message type 0x{0:04X}")]
    UnknownType(u16),
    /// A known type whose payload does not match its layout.
    #[error("malformed message: {0}")]
    Malformed(DecodeError),
}

impl<'a> Frame<'a> {
    /// Parses one complete frame at the start of `bytes`; returns it and its length.
    /// Validates the header and the payload layout (see [`FrameError`]).
    pub fn parse(bytes: &'a [u8]) -> Result<(Frame<'a>, usize), FrameError> {
        let header = check_header(bytes)?;
        let total = HEADER_LEN + header.len;
        if bytes.len() < total {
            return Err(FrameError::Incomplete {
                need: total,
                have: bytes.len(),
            });
        }
        let frame = Frame {
            source: header.source,
            kind: header.kind,
            payload: &bytes[HEADER_LEN..total],
            raw: &bytes[..total],
        };
        if kind::is_known(frame.kind) {
            Message::decode(frame.kind, frame.payload).map_err(FrameError::Malformed)?;
        }
        Ok((frame, total))
    }

    /// Builds a frame over bytes already validated by [`check_header`] (exactly one frame).
    pub(crate) fn from_validated(raw: &'a [u8]) -> Frame<'a> {
        let h = read_header(raw).unwrap_or(Header {
            len: 0,
            source: 0,
            kind: kind::INVALID,
        });
        Frame {
            source: h.source,
            kind: h.kind,
            payload: &raw[HEADER_LEN..],
            raw,
        }
    }

    /// Header + payload bytes, as received (for forwarding).
    pub fn raw(&self) -> &'a [u8] {
        self.raw
    }

    /// The typed message.
    pub fn message(&self) -> Result<Message<'a>, DecodeError> {
        Message::decode(self.kind, self.payload)
    }

    /// Whether this frame is a user event.
    pub fn is_user_event(&self) -> bool {
        kind::is_user_event(self.kind)
    }
}

/// A frame header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// Payload length.
    pub len: usize,
    /// Sender node id.
    pub source: u16,
    /// Message type.
    pub kind: u16,
}

impl Header {
    /// The 6 header bytes (little-endian length, source, type), as [`read_header`] reads them. Nothing is
    /// checked: this also writes the headers of malformed frames (tests of peers' framing).
    pub fn to_bytes(&self) -> [u8; HEADER_LEN] {
        let mut b = [0u8; HEADER_LEN];
        b[0..2].copy_from_slice(&(self.len as u16).to_le_bytes());
        b[2..4].copy_from_slice(&self.source.to_le_bytes());
        b[4..6].copy_from_slice(&self.kind.to_le_bytes());
        b
    }
}

/// A frame of `payload` as is, from `source`, of type `kind`, with nothing checked (size, parity, type): to test
/// how peers handle malformed frames. Well-formed frames come from [`Message::to_frame`].
pub fn unchecked_frame(source: u16, kind: u16, payload: &[u8]) -> Vec<u8> {
    let len = payload.len();
    let header = Header { len, source, kind };
    [&header.to_bytes()[..], payload].concat()
}

/// Reads a header from the first 6 bytes.
pub fn read_header(bytes: &[u8]) -> Option<Header> {
    let h = bytes.get(..HEADER_LEN)?;
    Some(Header {
        len: u16::from_le_bytes([h[0], h[1]]) as usize,
        source: u16::from_le_bytes([h[2], h[3]]),
        kind: u16::from_le_bytes([h[4], h[5]]),
    })
}

/// Reads and checks a header: length within limits, even user events, type in a protocol range.
pub fn check_header(bytes: &[u8]) -> Result<Header, FrameError> {
    let h = read_header(bytes).ok_or(FrameError::Incomplete {
        need: HEADER_LEN,
        have: bytes.len(),
    })?;
    if h.len > MAX_PAYLOAD {
        return Err(FrameError::Oversize(h.len));
    }
    if kind::is_user_event(h.kind) {
        if !h.len.is_multiple_of(2) {
            return Err(FrameError::OddUserEvent {
                kind: h.kind,
                len: h.len,
            });
        }
    } else if !(0x8000..0xB000).contains(&h.kind) {
        return Err(FrameError::InvalidType(h.kind));
    }
    Ok(h)
}

/// Encodes a user event frame `id(args)` from `source` into `out`; returns the frame length.
pub fn encode_user_event(
    source: u16,
    id: u16,
    args: &[i16],
    out: &mut [u8],
) -> Result<usize, EncodeError> {
    Message::UserEvent {
        id,
        args: Words::from_slice(args),
    }
    .encode(source, out)
}

#[cfg(test)]
mod tests;
