//! A bare Aseba node: any description, the standard natives at ids 0…29, no robot around it
//! (like the nodes of the official `asebadummynode` or pyaseba's `Network`). Served over TCP,
//! it is the counterpart of the official VM in the differential tests.

use crate::node::{Node, NodeConfig};
use crate::rx::NodeRx;
use crate::server::Server;
use crate::vm::std_natives::{self, StdState};
use crate::vm::{Fault, Outbox, Target, Vm};
use msgs::description::TargetDescription;
use msgs::wire::{Message, MAX_FRAME};
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Standard natives only; the reset callback clears variable memory (as pyaseba's official
/// nodes do) and writes the node id in the first variable.
#[derive(Debug, Clone)]
pub struct StdTarget {
    /// `math.rand` state.
    pub std: StdState,
}

impl Target for StdTarget {
    fn native(&mut self, vm: &mut Vm, id: u16, out: &mut dyn Outbox) -> Result<(), Fault> {
        std_natives::call(vm, id, &mut self.std, out)
    }
    fn reset(&mut self, vm: &mut Vm) {
        let id = vm.node_id() as i16;
        let vars = vm.variables_mut();
        vars.fill(0);
        if let Some(first) = vars.first_mut() {
            *first = id;
        }
    }
}

struct Bytes<'a>(&'a mut Vec<u8>, u16);

impl Outbox for Bytes<'_> {
    fn send(&mut self, msg: &Message<'_>) {
        let mut frame = [0u8; MAX_FRAME];
        if let Ok(n) = msg.encode(self.1, &mut frame) {
            self.0.extend_from_slice(&frame[..n]);
        }
    }
}

/// Serves a bare node with `description` and id `id` on `addr`; the VM runs at most
/// `steps_limit` instructions per event (0 = unlimited).
pub fn serve_node(
    description: TargetDescription,
    id: u16,
    addr: SocketAddr,
    steps_limit: u16,
) -> io::Result<Server> {
    let listener = TcpListener::bind(addr)?;
    listener.set_nonblocking(true)?;
    let local = listener.local_addr()?;
    let stop = Arc::new(AtomicBool::new(false));
    let s = stop.clone();
    let config = NodeConfig {
        id,
        protocol: description.protocol_version,
        variables_chunk: 0,
        name: description.name.clone(),
        uuid: [0; 16],
    };
    let thread = std::thread::Builder::new()
        .name(format!("sim-node-{id}"))
        .spawn(move || {
            let mut node = Node::new(description, config);
            let mut target = StdTarget {
                std: StdState::new(0),
            };
            // each client's bytes framed as a node does (oversize frames dropped whole)
            let mut clients: Vec<(TcpStream, NodeRx)> = Vec::new();
            let started = Instant::now();
            let mut out = Vec::new();
            let mut buf = [0u8; 4096];
            while !s.load(Ordering::Relaxed) {
                while let Ok((c, _)) = listener.accept() {
                    if c.set_nonblocking(true).is_ok() {
                        let _ = c.set_nodelay(true);
                        clients.push((c, NodeRx::new()));
                    }
                }
                out.clear();
                let mut gone = Vec::new();
                let now_ms = started.elapsed().as_millis() as u64;
                for (i, (c, rx)) in clients.iter_mut().enumerate() {
                    rx.tick(now_ms);
                    loop {
                        match c.read(&mut buf) {
                            Ok(0) => {
                                gone.push(i);
                                break;
                            }
                            Ok(n) => {
                                rx.push(now_ms, &buf[..n], |raw| {
                                    let Ok((frame, _)) = msgs::wire::Frame::parse(raw) else {
                                        return;
                                    };
                                    let Ok(msg) = frame.message() else { return };
                                    let mut o = Bytes(&mut out, id);
                                    node.handle(frame.source, &msg, &mut target, &mut o);
                                    node.vm.run(steps_limit, &mut target, &mut o);
                                });
                            }
                            Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                            Err(_) => {
                                gone.push(i);
                                break;
                            }
                        }
                    }
                }
                node.vm
                    .run(steps_limit, &mut target, &mut Bytes(&mut out, id));
                for i in gone.into_iter().rev() {
                    clients.remove(i);
                }
                if !out.is_empty() {
                    clients.retain_mut(|(c, _)| {
                        let _ = c.set_nonblocking(false);
                        let ok = c.write_all(&out).is_ok();
                        let _ = c.set_nonblocking(true);
                        ok
                    });
                }
                std::thread::sleep(Duration::from_micros(500));
            }
        })?;
    Ok(Server::new(
        stop,
        thread,
        format!("tcp:host={};port={}", local.ip(), local.port()),
    ))
}
