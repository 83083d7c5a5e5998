//! NRT helper thread that does the blocking part of links: TCP connect, serial open + DTR +
//! settle time, retry rounds over the target list, reconnection after a loss. It hands open
//! links to the RT thread through a [`NrtLinkPort`] and drops the links the RT thread gives back.
//!
//! Every round tries each target that is not connected; rounds start at most once per
//! `retry_interval` (1 s, as asebaros). In-process pipes (the embedded simulator) are offered
//! once and never reconnected.

use crate::link::{Link, PipeLink, SerialLink, SerialSpec, TcpLink};
use crate::link_port::NrtLinkPort;
use handoff::LinkDownReason;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A target the connector opens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConnectSpec {
    /// TCP client (`tcp:host=…;port=…`).
    Tcp {
        /// Host name or address.
        host: String,
        /// Port.
        port: u16,
    },
    /// Serial port (`ser:…`).
    Serial(SerialSpec),
}

impl std::fmt::Display for ConnectSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ConnectSpec::Tcp { host, port } => write!(f, "tcp:host={host};port={port}"),
            ConnectSpec::Serial(s) => write!(f, "ser:{:?}", s.selector),
        }
    }
}

/// Timing of the connector.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectorConfig {
    /// Least time between two rounds of connection attempts.
    pub retry_interval: Duration,
    /// Wait after opening a serial port before handing it over (the Thymio needs ~200 ms).
    pub serial_settle: Duration,
    /// TCP connect timeout.
    pub tcp_timeout: Duration,
    /// How often the thread looks at returned links and the stop flag when it cannot be woken
    /// (no eventfd available); otherwise it blocks until a link comes back, it is stopped or the
    /// next round of attempts is due.
    pub poll_interval: Duration,
    /// At the driver's stop, how long the links given back open may wait for their peers' end of
    /// an orderly close (all links together).
    pub close_timeout: Duration,
}

impl Default for ConnectorConfig {
    fn default() -> Self {
        ConnectorConfig {
            retry_interval: Duration::from_secs(1),
            serial_settle: Duration::from_millis(200),
            tcp_timeout: Duration::from_secs(2),
            poll_interval: Duration::from_millis(10),
            close_timeout: Duration::from_millis(300),
        }
    }
}

/// Counters of the connector.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ConnectorStats {
    /// Links handed to the RT thread.
    pub connects: u64,
    /// Of which re-connections of a target that had been connected before.
    pub reconnects: u64,
    /// Failed attempts.
    pub failures: u64,
    /// Links the RT thread gave back.
    pub returned: u64,
}

#[derive(Debug, Default)]
struct Counters {
    connects: AtomicU64,
    reconnects: AtomicU64,
    failures: AtomicU64,
    returned: AtomicU64,
}

impl Counters {
    fn get(&self) -> ConnectorStats {
        ConnectorStats {
            connects: self.connects.load(Ordering::Relaxed),
            reconnects: self.reconnects.load(Ordering::Relaxed),
            failures: self.failures.load(Ordering::Relaxed),
            returned: self.returned.load(Ordering::Relaxed),
        }
    }
}

/// Longest wait of the connector while every target is connected: it is woken when a link comes
/// back, the RT thread goes away or it is stopped; this only bounds a wait should a wake-up be
/// missed.
const IDLE_WAIT: Duration = Duration::from_secs(60);

/// Handle on the connector thread.
#[derive(Debug)]
pub struct ConnectorHandle {
    stop: Arc<AtomicBool>,
    wake: handoff::Doorbell,
    counters: Arc<Counters>,
    thread: std::thread::JoinHandle<()>,
}

impl ConnectorHandle {
    /// Asks the thread to stop (it returns within one attempt).
    pub fn stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
        self.wake.ring();
    }

    /// Current counters.
    pub fn stats(&self) -> ConnectorStats {
        self.counters.get()
    }

    /// Whether the thread has ended (stopped, or the RT thread went away).
    pub fn is_finished(&self) -> bool {
        self.thread.is_finished()
    }

    /// Stops the thread, waits for it, and returns the final counters.
    pub fn join(self) -> ConnectorStats {
        self.stop();
        let _ = self.thread.join();
        self.counters.get()
    }
}

/// Opens one target (blocking).
pub fn open(spec: &ConnectSpec, cfg: &ConnectorConfig) -> Result<Box<dyn Link>, String> {
    match spec {
        ConnectSpec::Tcp { host, port } => TcpLink::connect(host, *port, cfg.tcp_timeout)
            .map(|l| Box::new(l) as Box<dyn Link>)
            .map_err(|e| e.to_string()),
        ConnectSpec::Serial(s) => {
            let link = SerialLink::open(s).map_err(|e| e.to_string())?;
            std::thread::sleep(cfg.serial_settle);
            Ok(Box::new(link))
        }
    }
}

/// Starts the connector thread: `targets[i]` is target `i` in `LinkUp`/`LinkDown`, and
/// `pipes[j]` is target `targets.len() + j`.
pub fn spawn_connector(
    cfg: ConnectorConfig,
    targets: Vec<ConnectSpec>,
    pipes: Vec<PipeLink>,
    port: NrtLinkPort,
) -> std::io::Result<ConnectorHandle> {
    let stop = Arc::new(AtomicBool::new(false));
    let counters = Arc::new(Counters::default());
    let (s, c) = (stop.clone(), counters.clone());
    let wake = port.nrt_waker();
    let thread = std::thread::Builder::new()
        .name("thymio-connect".into())
        .spawn(move || run(cfg, targets, pipes, port, &s, &c))?;
    Ok(ConnectorHandle {
        stop,
        wake,
        counters,
        thread,
    })
}

fn run(
    cfg: ConnectorConfig,
    targets: Vec<ConnectSpec>,
    pipes: Vec<PipeLink>,
    mut port: NrtLinkPort,
    stop: &AtomicBool,
    counters: &Counters,
) {
    let n = targets.len();
    for (j, pipe) in pipes.into_iter().enumerate() {
        if port.nrt_offer((n + j) as u16, Box::new(pipe)).is_ok() {
            counters.connects.fetch_add(1, Ordering::Relaxed);
        } else {
            tracing::error!("no room to hand the in-process link {j} to the RT thread");
        }
    }
    let mut connected = vec![false; n];
    let mut ever = vec![false; n];
    let mut failing = vec![false; n];
    let mut next_round = Instant::now();
    let mut rt_ending = false;
    // links given back open by the stopping RT thread, closed in order at the end
    let mut closing: Vec<Box<dyn Link>> = Vec::new();
    while !stop.load(Ordering::Relaxed) && !port.nrt_peer_gone() {
        while let Some(ret) = port.nrt_take_returned() {
            counters.returned.fetch_add(1, Ordering::Relaxed);
            if ret.reason == LinkDownReason::Shutdown {
                // The RT thread is stopping: it gives its links back before it drops the port,
                // and a link opened now would only be closed again (or left to a dead thread).
                rt_ending = true;
                closing.push(ret.link);
                continue;
            }
            let t = ret.target as usize;
            let name = targets
                .get(t)
                .map_or("in-process link".into(), |s| s.to_string());
            tracing::warn!("link to {name} lost: {:?}", ret.reason);
            if t < n {
                connected[t] = false;
            }
            drop(ret.link); // here, on the NRT side
        }
        if rt_ending {
            break;
        }
        if Instant::now() >= next_round && connected.iter().any(|c| !c) {
            for i in 0..n {
                if connected[i] || stop.load(Ordering::Relaxed) {
                    continue;
                }
                match open(&targets[i], &cfg) {
                    Ok(link) => match port.nrt_offer(i as u16, link) {
                        Ok(()) => {
                            connected[i] = true;
                            failing[i] = false;
                            counters.connects.fetch_add(1, Ordering::Relaxed);
                            if ever[i] {
                                counters.reconnects.fetch_add(1, Ordering::Relaxed);
                            }
                            ever[i] = true;
                            tracing::info!("connected to {}", targets[i]);
                        }
                        Err(_link) => tracing::error!("RT thread takes no more links"),
                    },
                    Err(e) => {
                        counters.failures.fetch_add(1, Ordering::Relaxed);
                        if !failing[i] {
                            tracing::warn!("cannot connect to {}: {e}; retrying", targets[i]);
                        }
                        failing[i] = true;
                    }
                }
            }
            next_round = Instant::now() + cfg.retry_interval;
        }
        // Block until the RT thread gives a link back or goes away, or `stop` (both ring the
        // port), or the next round is due while a target is not connected.
        let wait = if !port.nrt_waker().is_live() {
            cfg.poll_interval
        } else if connected.iter().any(|c| !c) {
            next_round.saturating_duration_since(Instant::now())
        } else {
            IDLE_WAIT
        };
        port.nrt_wait_returned(wait);
    }
    while let Some(ret) = port.nrt_take_returned() {
        counters.returned.fetch_add(1, Ordering::Relaxed);
        closing.push(ret.link);
    }
    nrt_close_links(closing, cfg.close_timeout);
}

/// Closes links the RT thread gave back when it stopped: every one starts its orderly close, then
/// each waits for its peer's end within one shared `timeout` (a peer that does not answer delays
/// the exit by `timeout` at most, whatever the number of links). NRT: blocks up to `timeout`.
///
/// ```
/// use rt::link::{Link, PipeLink};
/// let (a, _b) = PipeLink::pair(64);
/// rt::nrt_connector::nrt_close_links(vec![Box::new(a) as Box<dyn Link>], std::time::Duration::from_millis(10));
/// ```
pub fn nrt_close_links(mut links: Vec<Box<dyn Link>>, timeout: Duration) {
    for l in &mut links {
        l.nrt_begin_close();
    }
    let deadline = Instant::now() + timeout;
    for l in &mut links {
        l.nrt_finish_close(deadline);
    }
}

#[cfg(test)]
mod tests;
