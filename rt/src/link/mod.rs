//! Links to Aseba networks: a non-blocking byte-stream trait read by the RT thread when its
//! readiness descriptor says so (or polled every period if it has none), and its transports
//! (TCP client, serial port, in-process pipe). Opening a link (blocking) is NRT work
//! (`crate::nrt_connector`); reading and writing an open link never blocks and never allocates.

mod pipe;
mod serial;
mod tcp;
mod txbuf;

pub use pipe::PipeLink;
pub use serial::{
    find_port, port_matches, SerialLink, SerialOpenError, SerialSelector, SerialSpec,
};
pub use tcp::TcpLink;
pub use txbuf::TxBuffer;

use handoff::{LinkDownReason, LinkKind};
use std::io;
use std::os::fd::BorrowedFd;

/// A byte stream to an Aseba network, read and written by the RT thread.
///
/// Both methods return immediately: `Ok(0)` means "nothing now". `Err` means the link is
/// dead; the RT thread then hands it back to the NRT side, which drops it.
///
/// The RT thread waits on [`Link::rt_fd`] (level-triggered) and reads the link when it is
/// readable; a link without one is polled once per period.
pub trait Link: Send {
    /// Reads the bytes available now into `buf`.
    fn read(&mut self, buf: &mut [u8]) -> Result<usize, LinkError>;
    /// Writes as many bytes of `buf` as the link accepts now.
    fn write(&mut self, buf: &[u8]) -> Result<usize, LinkError>;
    /// Transport.
    fn kind(&self) -> LinkKind;
    /// A descriptor that is readable (level-triggered) whenever [`Link::read`] may return bytes
    /// or report the end of the link, and stays readable until a read returned fewer bytes
    /// than asked; `None`: the RT thread polls the link every period instead.
    fn rt_fd(&self) -> Option<BorrowedFd<'_>> {
        None
    }
    /// NRT, when the driver stops with this link open: starts an orderly close (a stream says it
    /// will send no more). Followed by [`Link::nrt_finish_close`]; the default does nothing.
    fn nrt_begin_close(&mut self) {}
    /// NRT: waits, at most until `deadline`, for the peer's end of an orderly close begun by
    /// [`Link::nrt_begin_close`], reading and discarding what still arrives — so that dropping
    /// the link afterwards does not reset the connection. The default does nothing.
    fn nrt_finish_close(&mut self, _deadline: std::time::Instant) {}
}

impl std::fmt::Debug for dyn Link {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Link({:?})", self.kind())
    }
}

/// Why a link is dead (`Copy`, built without allocation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum LinkError {
    /// The peer closed the stream.
    #[error("closed by the peer")]
    Eof,
    /// An I/O error.
    #[error("I/O error {kind:?} (errno {errno})")]
    Io {
        /// Kind.
        kind: io::ErrorKind,
        /// OS error number, 0 if none.
        errno: i32,
    },
}

impl LinkError {
    /// From an OS error number.
    pub fn from_errno(errno: i32) -> Self {
        LinkError::Io {
            kind: io::Error::from_raw_os_error(errno).kind(),
            errno,
        }
    }

    /// From a std I/O error (OS errors carry no heap data).
    pub fn from_io(e: &io::Error) -> Self {
        LinkError::Io {
            kind: e.kind(),
            errno: e.raw_os_error().unwrap_or(0),
        }
    }
}

impl From<LinkError> for LinkDownReason {
    fn from(e: LinkError) -> Self {
        match e {
            LinkError::Eof => LinkDownReason::Eof,
            LinkError::Io { kind, errno } => LinkDownReason::Io { kind, errno },
        }
    }
}

/// Maps the result of a non-blocking std read/write: would-block and EINTR are "nothing now";
/// a zero-byte read of a non-empty buffer is end of stream.
pub(crate) fn map_io(r: io::Result<usize>, is_read: bool, len: usize) -> Result<usize, LinkError> {
    match r {
        Ok(0) if is_read && len > 0 => Err(LinkError::Eof),
        Ok(n) => Ok(n),
        Err(e)
            if matches!(
                e.kind(),
                io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted
            ) =>
        {
            Ok(0)
        }
        Err(e) => Err(LinkError::from_io(&e)),
    }
}
