//! The Aseba switch: a TCP server (like asebaros' `tcpin` hub and `asebaswitch`) that lets
//! other Aseba tools share the robot link. Every frame from the robot link goes to every
//! client; every frame from a client goes to the link and to the other clients (and back to
//! the sender with `loop`). Clients' byte streams are reassembled and validated: garbage is
//! dropped and counted, never forwarded. Non-blocking, polled from the NRT loop.

use msgs::reassembler::Reassembler;
use msgs::wire::Frame;
use std::io::{self, ErrorKind, Read, Write};
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream};

/// Bytes queued for a client before it is considered stuck and disconnected.
const MAX_CLIENT_BACKLOG: usize = 1 << 20;

/// Identifies a connected client.
pub type ClientId = u32;

struct Client {
    id: ClientId,
    stream: TcpStream,
    peer: SocketAddr,
    reassembler: Reassembler,
    backlog: Vec<u8>,
    dead: bool,
}

/// Counters of the switch.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SwitchStats {
    /// Clients accepted since start.
    pub accepted: u64,
    /// Clients currently connected.
    pub connected: usize,
    /// Valid frames received from clients.
    pub frames_in: u64,
    /// Frames rejected from clients (garbage, malformed).
    pub frames_rejected: u64,
    /// Clients dropped because they did not read their data.
    pub dropped_slow: u64,
}

/// The switch server.
pub struct Switch {
    listener: TcpListener,
    clients: Vec<Client>,
    loop_back: bool,
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
    /// Listens on `address:port` (port 0 picks a free one). Binding anything but a loopback
    /// address is an explicit choice: it is logged as a warning.
    pub fn bind(address: &str, port: u16, loop_back: bool) -> io::Result<Switch> {
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
            loop_back,
            next_id: 1,
            stats: SwitchStats::default(),
            scratch: vec![0; 4096],
        })
    }

    /// The address actually bound.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// Counters.
    pub fn stats(&self) -> SwitchStats {
        SwitchStats {
            connected: self.clients.len(),
            ..self.stats
        }
    }

    /// Accepts new clients, reads what they sent, forwards their frames to the other clients
    /// and hands each valid frame to `to_link` (to be written to the robot link and seen by
    /// the network manager). Never blocks.
    pub fn poll(&mut self, mut to_link: impl FnMut(ClientId, &Frame<'_>)) {
        self.accept();
        for i in 0..self.clients.len() {
            self.read_client(i, &mut to_link);
        }
        self.flush();
        self.reap();
    }

    /// Sends a frame from the robot link (or from the host) to every client but `except`.
    pub fn broadcast(&mut self, frame: &[u8], except: Option<ClientId>) {
        for c in self.clients.iter_mut().filter(|c| Some(c.id) != except) {
            queue(c, frame);
        }
        self.flush();
    }

    fn accept(&mut self) {
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
                        id: self.next_id,
                        stream,
                        peer,
                        reassembler: Reassembler::new(),
                        backlog: Vec::new(),
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

    fn read_client(&mut self, i: usize, to_link: &mut impl FnMut(ClientId, &Frame<'_>)) {
        loop {
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
            let mut input = &self.scratch[..n];
            let (before, rest) = self.clients.split_at_mut(i);
            let (client, after) = rest.split_first_mut().expect("index in range");
            while let Some(res) = client.reassembler.push(&mut input) {
                match res {
                    Ok(frame) => {
                        self.stats.frames_in += 1;
                        for other in before.iter_mut().chain(after.iter_mut()) {
                            queue(other, frame.raw());
                        }
                        if self.loop_back {
                            queue_self(&mut client.backlog, frame.raw());
                        }
                        to_link(client.id, &frame);
                    }
                    Err(e) => {
                        self.stats.frames_rejected += 1;
                        tracing::debug!("Aseba switch: client {}: {e}", client.peer);
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
            if c.backlog.len() > MAX_CLIENT_BACKLOG {
                tracing::warn!(
                    "Aseba switch: client {} does not read, disconnecting it",
                    c.peer
                );
                self.stats.dropped_slow += 1;
                c.dead = true;
            }
        }
    }

    fn reap(&mut self) {
        self.clients.retain(|c| {
            if c.dead {
                tracing::info!("Aseba switch: client {} disconnected", c.peer);
            }
            !c.dead
        });
    }
}

fn queue(c: &mut Client, frame: &[u8]) {
    if !c.dead {
        queue_self(&mut c.backlog, frame);
    }
}

fn queue_self(backlog: &mut Vec<u8>, frame: &[u8]) {
    backlog.extend_from_slice(frame);
}

#[cfg(test)]
mod tests;
