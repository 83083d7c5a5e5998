//! Serving simulated robots the way real ones are reached: over TCP (one port per robot, like
//! Aseba Playground) and over a pseudo-terminal (the bytes of a USB Thymio).

use crate::rx::NodeRx;
use crate::world::{HostEnds, WorldHandle};
use nix::fcntl::{fcntl, FcntlArg, OFlag};
use nix::pty::openpty;
use nix::sys::termios::{cfmakeraw, tcgetattr, tcsetattr, SetArg};
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::fd::{AsFd, OwnedFd};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Bytes each way of a served link's rings.
const RING: usize = 1 << 16;
/// Bytes kept for a client that does not read before it is dropped.
const MAX_PENDING: usize = 1 << 20;

/// A serving thread.
pub struct Server {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
    /// Where it serves: `tcp:127.0.0.1;PORT` style address or the pty path.
    pub endpoint: String,
}

impl Server {
    /// A server from its thread and stop flag.
    pub(crate) fn new(stop: Arc<AtomicBool>, thread: JoinHandle<()>, endpoint: String) -> Server {
        Server {
            stop,
            thread: Some(thread),
            endpoint,
        }
    }

    /// Stops serving.
    pub fn stop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A peer of a served link: a TCP client or the pty master.
struct Peer<S> {
    stream: S,
    /// Frames the peer's bytes as the robot's firmware does (oversize frames dropped whole,
    /// a partial frame given up when the peer goes quiet).
    rx: NodeRx,
    pending: Vec<u8>,
}

/// Moves frames between peers and the robot link; returns false when a peer must go.
/// `now_ms`: the serving thread's clock.
fn pump<S: Read + Write>(
    peer: &mut Peer<S>,
    ends: &mut HostEnds,
    fresh: &[u8],
    now_ms: u64,
) -> bool {
    let (tx, _) = ends;
    let mut buf = [0u8; 4096];
    peer.rx.tick(now_ms);
    loop {
        match peer.stream.read(&mut buf) {
            Ok(0) => return false,
            Ok(n) => {
                peer.rx.push(now_ms, &buf[..n], |raw| {
                    // whole frames only, so that peers never interleave
                    if let Ok(chunk) = tx.write_chunk_uninit(raw.len()) {
                        chunk.fill_from_iter(raw.iter().copied());
                    }
                });
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            // a pty master reads EIO while no one has the terminal open
            Err(e) if e.raw_os_error() == Some(nix::libc::EIO) => break,
            Err(_) => return false,
        }
    }
    peer.pending.extend_from_slice(fresh);
    while !peer.pending.is_empty() {
        match peer.stream.write(&peer.pending) {
            Ok(0) => return false,
            Ok(n) => {
                peer.pending.drain(..n);
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) if e.raw_os_error() == Some(nix::libc::EIO) => {
                peer.pending.clear();
                break;
            }
            Err(_) => return false,
        }
    }
    peer.pending.len() <= MAX_PENDING
}

fn drain(ends: &mut HostEnds, into: &mut Vec<u8>) {
    let (_, rx) = ends;
    let n = rx.slots();
    if n > 0 {
        if let Ok(chunk) = rx.read_chunk(n) {
            let (a, b) = chunk.as_slices();
            into.extend_from_slice(a);
            into.extend_from_slice(b);
            chunk.commit_all();
        }
    }
}

/// Serves `robots` (indices; several = a bus) of the world on a TCP address.
pub fn serve_tcp(world: &WorldHandle, robots: Vec<usize>, addr: SocketAddr) -> io::Result<Server> {
    let listener = TcpListener::bind(addr)?;
    listener.set_nonblocking(true)?;
    let local = listener.local_addr()?;
    let mut ends = world.attach(robots, RING);
    let stop = Arc::new(AtomicBool::new(false));
    let s = stop.clone();
    let thread = std::thread::Builder::new()
        .name(format!("sim-tcp-{}", local.port()))
        .spawn(move || {
            let mut peers: Vec<Peer<TcpStream>> = Vec::new();
            let started = Instant::now();
            let mut fresh = Vec::new();
            while !s.load(Ordering::Relaxed) {
                while let Ok((stream, _)) = listener.accept() {
                    if stream.set_nonblocking(true).is_ok() {
                        let _ = stream.set_nodelay(true);
                        peers.push(Peer {
                            stream,
                            rx: NodeRx::new(),
                            pending: Vec::new(),
                        });
                    }
                }
                fresh.clear();
                drain(&mut ends, &mut fresh);
                let now_ms = started.elapsed().as_millis() as u64;
                peers.retain_mut(|p| pump(p, &mut ends, &fresh, now_ms));
                std::thread::sleep(Duration::from_micros(500));
            }
        })?;
    Ok(Server {
        stop,
        thread: Some(thread),
        endpoint: format!("tcp:host={};port={}", local.ip(), local.port()),
    })
}

/// A pty master as a stream.
struct Master(OwnedFd);

impl Read for Master {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        nix::unistd::read(self.0.as_fd(), buf).map_err(io::Error::from)
    }
}

impl Write for Master {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        nix::unistd::write(self.0.as_fd(), buf).map_err(io::Error::from)
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Serves `robots` on a new pseudo-terminal; the endpoint is the terminal's path.
pub fn serve_pty(world: &WorldHandle, robots: Vec<usize>) -> io::Result<(Server, PathBuf)> {
    let pty = openpty(None, None).map_err(io::Error::from)?;
    let mut t = tcgetattr(pty.slave.as_fd()).map_err(io::Error::from)?;
    cfmakeraw(&mut t);
    tcsetattr(pty.slave.as_fd(), SetArg::TCSANOW, &t).map_err(io::Error::from)?;
    let flags = OFlag::from_bits_truncate(
        fcntl(pty.master.as_fd(), FcntlArg::F_GETFL).map_err(io::Error::from)?,
    );
    fcntl(
        pty.master.as_fd(),
        FcntlArg::F_SETFL(flags | OFlag::O_NONBLOCK),
    )
    .map_err(io::Error::from)?;
    let path = std::fs::read_link(format!(
        "/proc/self/fd/{}",
        std::os::fd::AsRawFd::as_raw_fd(&pty.slave)
    ))?;
    let mut ends = world.attach(robots, RING);
    let stop = Arc::new(AtomicBool::new(false));
    let s = stop.clone();
    let slave = pty.slave;
    let thread = std::thread::Builder::new()
        .name("sim-pty".into())
        .spawn(move || {
            // the slave stays open here so that the master does not fail while no one uses it
            let _slave = slave;
            let mut peer = Peer {
                stream: Master(pty.master),
                rx: NodeRx::new(),
                pending: Vec::new(),
            };
            let mut fresh = Vec::new();
            let started = Instant::now();
            while !s.load(Ordering::Relaxed) {
                fresh.clear();
                drain(&mut ends, &mut fresh);
                let now_ms = started.elapsed().as_millis() as u64;
                if !pump(&mut peer, &mut ends, &fresh, now_ms) {
                    peer.pending.clear();
                }
                std::thread::sleep(Duration::from_micros(500));
            }
        })?;
    let endpoint = path.display().to_string();
    Ok((
        Server {
            stop,
            thread: Some(thread),
            endpoint,
        },
        path,
    ))
}
