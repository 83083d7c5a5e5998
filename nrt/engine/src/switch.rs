//! The Aseba switch: a TCP server (like asebaros' `tcpin` hub and `asebaswitch`) that lets
//! other Aseba tools share the robot link. Every frame from the robot link goes to every
//! client; every frame from a client goes to the link and to the other clients (and back to
//! the sender with `loop`). Non-blocking, polled from the NRT loop.
//!
//! Any local process can connect, so nothing a client sends may harm the robot or the driver:
//! - At most [`READ_PER_POLL`] bytes are read from a client per poll: a flood cannot hold the
//!   NRT loop.
//! - Clients' byte streams are reassembled and validated: garbage is dropped and counted,
//!   never forwarded. A frame announcing more than the protocol's 516 payload bytes (or more
//!   than the target firmware takes, [`SwitchLimits::max_payload`]) is refused whole and
//!   counted: forwarded, it wedges a Thymio (aseba.md §1.2, `sim::rx`).
//! - Toward each client, a bounded output queue ([`SwitchLimits::client_queue`]): a client
//!   that does not read loses frames, counted, and slows no one.
//! - Toward the robot links, the owner applies a forwarding budget (`to_link` returns whether
//!   the frame went out); the frames over budget are counted for the client that sent them.
//!
//! Every counter is kept per client ([`ClientStats`]), for the clients connected now and the
//! last [`HISTORY`] that left, and summed in [`SwitchStats`].

mod budget;

pub use budget::{LinkBudget, BURST_SECONDS, SERIAL_SHARE_PERCENT};

use msgs::reassembler::Reassembler;
use msgs::wire::{Frame, FrameError, MAX_PAYLOAD};
use serde::Serialize;
use std::collections::VecDeque;
use std::io::{self, ErrorKind, Read, Write};
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream};

/// Bytes read from one client per poll: a client writing faster than the switch reads cannot
/// keep the NRT loop (and the driver's work) in its read loop; the rest waits in the kernel and
/// TCP flow control slows the client down.
pub const READ_PER_POLL: usize = 16 * 1024;

/// Counters of clients that left, kept for the report and `/diagnostics`.
pub const HISTORY: usize = 32;

/// Identifies a connected client.
pub type ClientId = u32;

/// What the switch accepts from and queues for its clients.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SwitchLimits {
    /// Largest payload (bytes) of a client's frame that is forwarded; at most 516, the
    /// protocol's maximum (`ASEBA_MAX_EVENT_ARG_SIZE`), which is also what the Thymio-II
    /// firmware takes (type + payload ≤ 518 bytes).
    pub max_payload: usize,
    /// Bytes queued toward one client; frames that do not fit are dropped for that client.
    pub client_queue: usize,
}

impl Default for SwitchLimits {
    fn default() -> Self {
        SwitchLimits {
            max_payload: MAX_PAYLOAD,
            client_queue: 256 * 1024,
        }
    }
}

/// Counters of one client.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ClientStats {
    /// Client number (in order of connection, from 1).
    pub id: ClientId,
    /// Its address.
    pub peer: String,
    /// Still connected.
    pub connected: bool,
    /// Valid frames received from it.
    pub frames_in: u64,
    /// Garbage or malformed frames from it (dropped).
    pub rejected: u64,
    /// Frames from it above the largest payload allowed (refused whole).
    pub oversize: u64,
    /// Frames from it not forwarded to a robot link: over that link's budget.
    pub over_budget: u64,
    /// Frames for it dropped because its output queue was full (it does not read).
    pub queue_drops: u64,
}

/// Counters of the switch (sums over every client since start).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct SwitchStats {
    /// Clients accepted since start.
    pub accepted: u64,
    /// Clients currently connected.
    pub connected: usize,
    /// Valid frames received from clients.
    pub frames_in: u64,
    /// Frames rejected from clients (garbage, malformed).
    pub frames_rejected: u64,
    /// Frames refused because their payload exceeds the largest allowed.
    pub oversize: u64,
    /// Client frames not forwarded to a robot link (over its budget).
    pub over_budget: u64,
    /// Frames dropped toward clients whose output queue was full.
    pub queue_drops: u64,
}

/// Totals and per-client counters, as the run report and `/diagnostics` show them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SwitchReport {
    /// Totals.
    #[serde(flatten)]
    pub totals: SwitchStats,
    /// Largest payload forwarded (bytes).
    pub max_payload: usize,
    /// Output queue per client (bytes).
    pub client_queue: usize,
    /// Clients connected now, then the last ones that left (most recent first).
    pub clients: Vec<ClientStats>,
}

struct Client {
    stats: ClientStats,
    stream: TcpStream,
    reassembler: Reassembler,
    backlog: Vec<u8>,
    /// Frames dropped toward it since the last warning (one warning per episode).
    dropping: bool,
    dead: bool,
}

/// The switch server.
pub struct Switch {
    listener: TcpListener,
    clients: Vec<Client>,
    left: VecDeque<ClientStats>,
    loop_back: bool,
    limits: SwitchLimits,
    next_id: ClientId,
    stats: SwitchStats,
    scratch: Vec<u8>,
}

impl std::fmt::Debug for Switch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Switch")
            .field("addr", &self.local_addr().ok())
            .field("stats", &self.stats)
            .finish()
    }
}

impl Switch {
    /// Listens on `address:port` (port 0 picks a free one) with the default limits. Binding
    /// anything but a loopback address is an explicit choice: it is logged as a warning.
    pub fn bind(address: &str, port: u16, loop_back: bool) -> io::Result<Switch> {
        Self::bind_with(address, port, loop_back, SwitchLimits::default())
    }

    /// As [`Switch::bind`], with `limits` (`max_payload` is capped at 516).
    pub fn bind_with(
        address: &str,
        port: u16,
        loop_back: bool,
        limits: SwitchLimits,
    ) -> io::Result<Switch> {
        let ip: IpAddr = address.parse().map_err(|_| {
            io::Error::new(
                ErrorKind::InvalidInput,
                format!("invalid switch address \"{address}\""),
            )
        })?;
        if !ip.is_loopback() {
            tracing::warn!(
                "Aseba switch bound to {ip}:{port}: other machines can reach the robot through it"
            );
        }
        let listener = TcpListener::bind((ip, port))?;
        listener.set_nonblocking(true)?;
        Ok(Switch {
            listener,
            clients: Vec::new(),
            left: VecDeque::with_capacity(HISTORY),
            loop_back,
            limits: SwitchLimits {
                max_payload: limits.max_payload.min(MAX_PAYLOAD),
                ..limits
            },
            next_id: 1,
            stats: SwitchStats::default(),
            scratch: vec![0; 4096],
        })
    }

    /// The address actually bound.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// Totals.
    pub fn stats(&self) -> SwitchStats {
        SwitchStats {
            connected: self.clients.len(),
            ..self.stats
        }
    }

    /// Whether a client is connected (its socket needs polling).
    pub fn has_clients(&self) -> bool {
        !self.clients.is_empty()
    }

    /// Totals, limits and per-client counters (connected clients first).
    pub fn report(&self) -> SwitchReport {
        SwitchReport {
            totals: self.stats(),
            max_payload: self.limits.max_payload,
            client_queue: self.limits.client_queue,
            clients: self
                .clients
                .iter()
                .map(|c| c.stats.clone())
                .chain(self.left.iter().cloned())
                .collect(),
        }
    }

    /// Accepts new clients, reads what they sent, forwards their frames to the other clients
    /// and hands each valid frame to `to_link` (to be written to the robot links and seen by
    /// the network manager), which says whether it went out (false: over a link's budget,
    /// counted for the client). Never blocks.
    pub fn poll(&mut self, mut to_link: impl FnMut(ClientId, &Frame<'_>) -> bool) {
        self.accept();
        for i in 0..self.clients.len() {
            self.read_client(i, &mut to_link);
        }
        self.flush();
        self.reap();
    }

    /// Sends a frame from the robot link (or from the host) to every client but `except`.
    pub fn broadcast(&mut self, frame: &[u8], except: Option<ClientId>) {
        let cap = self.limits.client_queue;
        for c in self
            .clients
            .iter_mut()
            .filter(|c| Some(c.stats.id) != except)
        {
            self.stats.queue_drops += queue(c, frame, cap) as u64;
        }
        self.flush();
    }

    fn accept(&mut self) {
        // accept(2) on an empty backlog still makes and frees a socket file: at every NRT wake-up that was most
        // of the idle loop's system time, so a zero-timeout poll(2) asks first
        if !readable(&self.listener) {
            return;
        }
        loop {
            match self.listener.accept() {
                Ok((stream, peer)) => {
                    if stream.set_nonblocking(true).is_err() {
                        continue;
                    }
                    let _ = stream.set_nodelay(true);
                    tracing::info!("Aseba switch: client {peer} connected");
                    self.stats.accepted += 1;
                    self.clients.push(Client {
                        stats: ClientStats {
                            id: self.next_id,
                            peer: peer.to_string(),
                            connected: true,
                            frames_in: 0,
                            rejected: 0,
                            oversize: 0,
                            over_budget: 0,
                            queue_drops: 0,
                        },
                        stream,
                        reassembler: Reassembler::skipping_oversize(),
                        backlog: Vec::new(),
                        dropping: false,
                        dead: false,
                    });
                    self.next_id += 1;
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) => {
                    tracing::warn!("Aseba switch: accept failed: {e}");
                    break;
                }
            }
        }
    }

    fn read_client(&mut self, i: usize, to_link: &mut impl FnMut(ClientId, &Frame<'_>) -> bool) {
        let (cap, max_payload) = (self.limits.client_queue, self.limits.max_payload);
        let mut read = 0;
        while read < READ_PER_POLL {
            let n = match self.clients[i].stream.read(&mut self.scratch) {
                Ok(0) => {
                    self.clients[i].dead = true;
                    return;
                }
                Ok(n) => n,
                Err(e) if e.kind() == ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(_) => {
                    self.clients[i].dead = true;
                    return;
                }
            };
            read += n;
            let mut input = &self.scratch[..n];
            let (before, rest) = self.clients.split_at_mut(i);
            let (client, after) = rest.split_first_mut().expect("index in range");
            let stats = &mut self.stats;
            while let Some(res) = client.reassembler.push(&mut input) {
                match res {
                    Ok(frame) if frame.payload.len() > max_payload => {
                        client.stats.oversize += 1;
                        stats.oversize += 1;
                        tracing::debug!(
                            "Aseba switch: client {}: frame of {} bytes refused (largest {max_payload})",
                            client.stats.peer,
                            frame.payload.len()
                        );
                    }
                    Ok(frame) => {
                        client.stats.frames_in += 1;
                        stats.frames_in += 1;
                        for other in before.iter_mut().chain(after.iter_mut()) {
                            stats.queue_drops += queue(other, frame.raw(), cap) as u64;
                        }
                        if self.loop_back {
                            let Client {
                                backlog,
                                stats: cs,
                                dropping,
                                ..
                            } = client;
                            let dropped = queue_bytes(backlog, frame.raw(), cap);
                            note_drop(cs, dropping, dropped);
                            stats.queue_drops += dropped as u64;
                        }
                        if !to_link(client.stats.id, &frame) {
                            client.stats.over_budget += 1;
                            stats.over_budget += 1;
                        }
                    }
                    Err(FrameError::Oversize(len)) => {
                        client.stats.oversize += 1;
                        stats.oversize += 1;
                        tracing::debug!(
                            "Aseba switch: client {}: frame of {len} bytes refused (protocol maximum {MAX_PAYLOAD})",
                            client.stats.peer
                        );
                    }
                    Err(e) => {
                        client.stats.rejected += 1;
                        stats.frames_rejected += 1;
                        tracing::debug!("Aseba switch: client {}: {e}", client.stats.peer);
                    }
                }
            }
        }
    }

    fn flush(&mut self) {
        for c in self
            .clients
            .iter_mut()
            .filter(|c| !c.backlog.is_empty() && !c.dead)
        {
            match c.stream.write(&c.backlog) {
                Ok(n) => {
                    c.backlog.drain(..n);
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                Err(_) => c.dead = true,
            }
        }
    }

    fn reap(&mut self) {
        let mut i = 0;
        while i < self.clients.len() {
            if !self.clients[i].dead {
                i += 1;
                continue;
            }
            let mut c = self.clients.remove(i);
            tracing::info!("Aseba switch: client {} disconnected", c.stats.peer);
            c.stats.connected = false;
            if self.left.len() == HISTORY {
                self.left.pop_back();
            }
            self.left.push_front(c.stats);
        }
    }
}

/// Queues `frame` for `c` unless its queue is full; true if dropped.
fn queue(c: &mut Client, frame: &[u8], cap: usize) -> bool {
    if c.dead {
        return false;
    }
    let dropped = queue_bytes(&mut c.backlog, frame, cap);
    note_drop(&mut c.stats, &mut c.dropping, dropped);
    dropped
}

fn note_drop(stats: &mut ClientStats, dropping: &mut bool, dropped: bool) {
    if dropped {
        stats.queue_drops += 1;
        if !*dropping {
            tracing::warn!(
                "Aseba switch: client {} does not read: dropping frames for it",
                stats.peer
            );
        }
    }
    *dropping = dropped;
}

/// Appends `frame` to `backlog` if it stays within `cap` bytes; true if dropped.
fn queue_bytes(backlog: &mut Vec<u8>, frame: &[u8], cap: usize) -> bool {
    if backlog.len() + frame.len() > cap {
        return true;
    }
    backlog.extend_from_slice(frame);
    false
}

/// Whether `listener` has a connection waiting (or an error to report): a zero-timeout poll(2), which allocates
/// nothing. Any poll failure says yes, so that accept(2) runs and reports it as before.
fn readable(listener: &TcpListener) -> bool {
    use std::os::fd::AsRawFd;
    let mut fd = libc::pollfd {
        fd: listener.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd for the duration of the call; the descriptor is the listener's, open while borrowed.
    let n = unsafe { libc::poll(&mut fd, 1, 0) };
    n != 0
}

#[cfg(test)]
mod tests;
