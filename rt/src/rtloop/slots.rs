//! The RT thread's link slots: each holds a link, its reassembler and its transmit buffer, all
//! preallocated. A dead link stays in its slot (not polled) until it is handed back.

use crate::clock::monotonic_ns;
use crate::link::{Link, LinkError, TxBuffer};
use msgs::handoff::{LinkDownReason, LinkId, LinkKind, LinkTotals};
use msgs::reassembler::Reassembler;
use msgs::wire::Frame;

/// One slot.
pub(crate) struct Slot {
    pub link: Option<Box<dyn Link>>,
    pub target: u16,
    pub kind: LinkKind,
    pub dead: Option<LinkDownReason>,
    pub reasm: Reassembler,
    pub tx: TxBuffer,
    pub bytes_rx: u64,
    pub bytes_tx: u64,
    pub frames_tx: u64,
    /// Time of the last received bytes (quiet-link detection of the reassembler).
    pub last_rx_ns: u64,
}

/// A link quiet for this long is told so (a frame arrives in one piece well within it, even at
/// 115200 baud): the reassembler then resolves a pending resynchronisation.
const QUIET_NS: u64 = 50_000_000;

impl Slot {
    /// Polled this cycle.
    pub fn live(&self) -> bool {
        self.link.is_some() && self.dead.is_none()
    }
}

/// All slots plus the counters of links already detached.
pub(crate) struct Slots {
    pub slots: Box<[Slot]>,
    pub retired: LinkTotals,
}

impl Slots {
    pub fn new(count: usize, tx_bytes: usize) -> Self {
        Slots {
            slots: (0..count)
                .map(|_| Slot {
                    link: None,
                    target: 0,
                    kind: LinkKind::Other,
                    dead: None,
                    reasm: Reassembler::new(),
                    tx: TxBuffer::new(tx_bytes),
                    bytes_rx: 0,
                    bytes_tx: 0,
                    frames_tx: 0,
                    last_rx_ns: 0,
                })
                .collect(),
            retired: LinkTotals::default(),
        }
    }

    pub fn live(&self, id: LinkId) -> bool {
        self.slots.get(id.index()).is_some_and(Slot::live)
    }

    pub fn any_live(&self) -> bool {
        self.slots.iter().any(Slot::live)
    }

    /// Puts `link` in a free slot; gives it back if none is free.
    pub fn attach(&mut self, target: u16, link: Box<dyn Link>) -> Result<LinkId, Box<dyn Link>> {
        let Some(i) = self.slots.iter().position(|s| s.link.is_none()) else {
            return Err(link);
        };
        let s = &mut self.slots[i];
        s.kind = link.kind();
        s.link = Some(link);
        s.target = target;
        s.dead = None;
        s.reasm.clear();
        s.tx.clear();
        self.retired.attached += 1;
        Ok(LinkId(i as u8))
    }

    /// Empties a dead slot, folding its counters into the retired ones.
    pub fn detach(&mut self, id: usize) -> Option<(u16, Box<dyn Link>)> {
        let s = &mut self.slots[id];
        let link = s.link.take()?;
        let st = s.reasm.stats();
        let r = &mut self.retired;
        r.detached += 1;
        r.frames_rx += st.frames;
        r.frames_rejected += st.rejected;
        r.bytes_discarded += st.bytes_discarded;
        r.bytes_rx += s.bytes_rx;
        r.bytes_tx += s.bytes_tx;
        r.frames_tx += s.frames_tx;
        s.reasm.reset();
        s.tx.clear();
        s.dead = None;
        (s.bytes_rx, s.bytes_tx, s.frames_tx) = (0, 0, 0);
        Some((s.target, link))
    }

    /// Queues a frame on one link; false if the link is not live or its buffer is full.
    pub fn queue(&mut self, id: LinkId, frame: &[u8]) -> Result<(), QueueError> {
        let s = self
            .slots
            .get_mut(id.index())
            .filter(|s| s.live())
            .ok_or(QueueError::NoLink)?;
        if s.tx.push(frame) {
            s.frames_tx += 1;
            Ok(())
        } else {
            Err(QueueError::Full)
        }
    }

    /// Queues a frame on every live link; returns (queued, overflowed).
    pub fn queue_all(&mut self, frame: &[u8]) -> (u32, u32) {
        let (mut ok, mut full) = (0, 0);
        for s in self.slots.iter_mut().filter(|s| s.live()) {
            if s.tx.push(frame) {
                s.frames_tx += 1;
                ok += 1;
            } else {
                full += 1;
            }
        }
        (ok, full)
    }

    /// Reads every live link (up to `budget` bytes each), feeding frames to `on_frame` with the
    /// link id and the receive time. A failing link is marked dead.
    pub fn read_all(&mut self, budget: usize, mut on_frame: impl FnMut(LinkId, u64, &Frame<'_>)) {
        let mut buf = [0u8; 4096];
        for (i, s) in self.slots.iter_mut().enumerate() {
            if !s.live() {
                continue;
            }
            let Some(link) = s.link.as_mut() else {
                continue;
            };
            let mut left = budget;
            while left > 0 {
                let want = left.min(buf.len());
                match link.read(&mut buf[..want]) {
                    Ok(0) => {
                        if s.reasm.buffered() > 0 {
                            let t = monotonic_ns();
                            if t.saturating_sub(s.last_rx_ns) > QUIET_NS {
                                while let Some(r) = s.reasm.push_idle() {
                                    if let Ok(frame) = r {
                                        on_frame(LinkId(i as u8), t, &frame);
                                    }
                                }
                            }
                        }
                        break;
                    }
                    Ok(n) => {
                        left -= n;
                        s.bytes_rx += n as u64;
                        let t = monotonic_ns();
                        s.last_rx_ns = t;
                        let mut input = &buf[..n];
                        while let Some(r) = s.reasm.push(&mut input) {
                            if let Ok(frame) = r {
                                on_frame(LinkId(i as u8), t, &frame);
                            }
                        }
                    }
                    Err(e) => {
                        s.dead = Some(e.into());
                        break;
                    }
                }
            }
        }
    }

    /// Writes queued bytes of every live link; a failing link is marked dead.
    pub fn flush_all(&mut self) {
        for s in self.slots.iter_mut() {
            if !s.live() || s.tx.is_empty() {
                continue;
            }
            let Some(link) = s.link.as_mut() else {
                continue;
            };
            match s.tx.flush(link.as_mut()) {
                Ok(n) => s.bytes_tx += n as u64,
                Err(e) => s.dead = Some(LinkError::into(e)),
            }
        }
    }

    /// Whether every live link has written all its queued bytes.
    pub fn all_flushed(&self) -> bool {
        self.slots.iter().all(|s| !s.live() || s.tx.is_empty())
    }

    /// Counters over retired and current links.
    pub fn totals(&self) -> LinkTotals {
        let mut t = self.retired;
        for s in self.slots.iter().filter(|s| s.link.is_some()) {
            let st = s.reasm.stats();
            t.frames_rx += st.frames;
            t.frames_rejected += st.rejected;
            t.bytes_discarded += st.bytes_discarded;
            t.bytes_rx += s.bytes_rx;
            t.bytes_tx += s.bytes_tx;
            t.frames_tx += s.frames_tx;
            if s.live() {
                t.connected += 1;
            }
        }
        t
    }
}

/// Why a frame was not queued on a link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum QueueError {
    /// No live link with that id.
    NoLink,
    /// Its transmit buffer is full.
    Full,
}
