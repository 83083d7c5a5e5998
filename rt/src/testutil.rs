//! Helpers for the unit tests: bounded waiting and pseudo-terminal pairs.

use nix::fcntl::{fcntl, FcntlArg, OFlag};
use nix::pty::openpty;
use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Polls `f` until it returns something truthy, failing the test after `limit`.
pub fn until<T: Truthy>(limit: Duration, mut f: impl FnMut() -> T) -> T::Out {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(v) = f().get() {
            return v;
        }
        assert!(
            Instant::now() < deadline,
            "condition not reached within {limit:?}"
        );
        std::thread::yield_now();
    }
}

/// What [`until`] waits for: `true` or `Some(_)`.
pub trait Truthy {
    /// Value returned by `until`.
    type Out;
    /// `Some` when done.
    fn get(self) -> Option<Self::Out>;
}

impl Truthy for bool {
    type Out = ();
    fn get(self) -> Option<()> {
        self.then_some(())
    }
}

impl<T> Truthy for Option<T> {
    type Out = T;
    fn get(self) -> Option<T> {
        self
    }
}

/// A pseudo-terminal: the non-blocking master, the slave (keep it open until the code under
/// test has opened `path` like a serial device, then drop it) and the slave's path.
#[derive(Debug)]
pub struct Pty {
    /// Master side (the "robot" end in tests).
    pub master: OwnedFd,
    /// Slave descriptor of `openpty`.
    pub slave: OwnedFd,
    /// Slave device path.
    pub path: PathBuf,
}

/// Opens a pseudo-terminal pair.
pub fn pty_pair() -> Pty {
    let pty = openpty(None, None).expect("openpty");
    let path = nix::unistd::ttyname(&pty.slave).expect("ttyname");
    let flags = OFlag::from_bits_truncate(fcntl(&pty.master, FcntlArg::F_GETFL).unwrap());
    fcntl(&pty.master, FcntlArg::F_SETFL(flags | OFlag::O_NONBLOCK)).unwrap();
    Pty {
        master: pty.master,
        slave: pty.slave,
        path,
    }
}

/// Bytes readable now from a non-blocking descriptor.
pub fn read_available(fd: &OwnedFd) -> Vec<u8> {
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    while let Ok(n) = nix::unistd::read(fd, &mut buf) {
        if n == 0 {
            break;
        }
        out.extend_from_slice(&buf[..n]);
    }
    out
}
