//! TCP client link (Aseba Playground, asebaswitch, any `tcp:` target): non-blocking,
//! TCP_NODELAY.

use super::{map_io, Link, LinkError};
use handoff::LinkKind;
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::os::fd::{AsFd, BorrowedFd};
use std::time::Duration;

/// A connected TCP stream in non-blocking mode.
#[derive(Debug)]
pub struct TcpLink {
    stream: TcpStream,
}

impl TcpLink {
    /// Connects (blocking, NRT) to the first address of `host:port` that answers within
    /// `timeout`, then switches to non-blocking mode with TCP_NODELAY.
    pub fn connect(host: &str, port: u16, timeout: Duration) -> io::Result<Self> {
        let mut last = io::Error::new(io::ErrorKind::NotFound, format!("{host}: no address"));
        for addr in (host, port).to_socket_addrs()? {
            match TcpStream::connect_timeout(&addr, timeout) {
                Ok(s) => return Self::from_stream(s),
                Err(e) => last = e,
            }
        }
        Err(last)
    }

    /// Connects to one address (blocking, NRT).
    pub fn connect_addr(addr: SocketAddr, timeout: Duration) -> io::Result<Self> {
        Self::from_stream(TcpStream::connect_timeout(&addr, timeout)?)
    }

    /// Wraps a connected stream (sets non-blocking and TCP_NODELAY).
    pub fn from_stream(stream: TcpStream) -> io::Result<Self> {
        stream.set_nodelay(true)?;
        stream.set_nonblocking(true)?;
        Ok(TcpLink { stream })
    }

    /// Address of the peer.
    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        self.stream.peer_addr()
    }
}

impl Link for TcpLink {
    fn read(&mut self, buf: &mut [u8]) -> Result<usize, LinkError> {
        map_io(self.stream.read(buf), true, buf.len())
    }

    fn write(&mut self, buf: &[u8]) -> Result<usize, LinkError> {
        map_io(self.stream.write(buf), false, buf.len())
    }

    fn kind(&self) -> LinkKind {
        LinkKind::Tcp
    }

    /// The socket: readable when bytes arrived or the peer closed.
    fn rt_fd(&self) -> Option<BorrowedFd<'_>> {
        Some(self.stream.as_fd())
    }

    /// Sends FIN: the peer reads the end of the stream and closes its side.
    fn nrt_begin_close(&mut self) {
        let _ = self.stream.shutdown(std::net::Shutdown::Write);
    }

    /// Reads until the peer's FIN (or `deadline`). A socket closed with unread bytes in its
    /// receive buffer sends RST instead of FIN, and a peer that keeps writing to it gets EPIPE —
    /// SIGPIPE, which kills Aseba Playground and asebaswitch (they neither ignore it nor write
    /// with MSG_NOSIGNAL) while the robot streams its events.
    fn nrt_finish_close(&mut self, deadline: std::time::Instant) {
        if self.stream.set_nonblocking(false).is_err() {
            return;
        }
        let mut buf = [0u8; 4096];
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() || self.stream.set_read_timeout(Some(left)).is_err() {
                return;
            }
            match self.stream.read(&mut buf) {
                Ok(0) | Err(_) => return, // the peer's FIN, a reset or the deadline
                Ok(_) => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::until;
    use std::net::TcpListener;

    #[test]
    fn nonblocking_round_trip_and_eof_over_loopback() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let mut link = TcpLink::connect("127.0.0.1", addr.port(), Duration::from_secs(5)).unwrap();
        let (mut peer, _) = listener.accept().unwrap();
        let mut buf = [0u8; 64];
        assert_eq!(link.read(&mut buf), Ok(0)); // nothing yet, no blocking
        assert!(!readable(&link));
        peer.write_all(b"hello").unwrap();
        until(Duration::from_secs(10), || readable(&link));
        let mut got = Vec::new();
        until(Duration::from_secs(10), || {
            let n = link.read(&mut buf).unwrap();
            got.extend_from_slice(&buf[..n]);
            got.len() >= 5
        });
        assert_eq!(got, b"hello");
        assert_eq!(link.write(b"abc"), Ok(3));
        let mut back = [0u8; 3];
        peer.read_exact(&mut back).unwrap();
        assert_eq!(&back, b"abc");
        drop(peer);
        let end = until(Duration::from_secs(10), || link.read(&mut buf).err());
        assert!(matches!(end, LinkError::Eof | LinkError::Io { .. }));
        assert_eq!(link.kind(), LinkKind::Tcp);
    }

    /// Whether the link's readiness fd is readable now.
    fn readable(link: &TcpLink) -> bool {
        use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
        let mut fds = [PollFd::new(link.rt_fd().unwrap(), PollFlags::POLLIN)];
        poll(&mut fds, PollTimeout::ZERO).unwrap() > 0
    }

    #[test]
    fn refused_connection_is_an_error() {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        // The listener is dropped: nobody listens on that port now.
        assert!(TcpLink::connect("127.0.0.1", port, Duration::from_secs(2)).is_err());
    }
}
