//! The RT thread's link slots: each holds a link, its reassembler and its transmit buffer, all
//! preallocated. A dead link stays in its slot (not read) until it is handed back.
//!
//! Each link may read `read_budget` bytes per period; a wake-up reads a ready link once (at most
//! [`WAKE_READ`] bytes of what is left). Set-point stamps ride along the transmit buffer
//! ([`Slots::mark_cmd`]) so that the cmd → wire hop ends when the link's `write` accepted the
//! speed frame's last byte.

use crate::clock::monotonic_ns;
use crate::hist::Histogram;
use crate::link::{Link, LinkError, TxBuffer};
use handoff::{LinkDownReason, LinkId, LinkKind, LinkTotals};
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
    /// Bytes this link may still read in the current period.
    pub period_left: usize,
    /// Bytes queued on `tx` since the link was attached.
    pub queued: u64,
    /// Set-points in flight: (value of `queued` after their speed frame, their stamp), oldest
    /// first; the first `marks` entries are valid.
    pub cmd_marks: [(u64, u64); CMD_MARKS],
    pub marks: usize,
}

/// Set-point stamps a link keeps in flight (more are not timed).
const CMD_MARKS: usize = 8;

/// Bytes one wake-up reads from a ready link at most (one `read`).
pub(crate) const WAKE_READ: usize = 4096;

/// A link quiet for this long is told so (a frame arrives in one piece well within it, even at
/// 115200 baud): the reassembler then resolves a pending resynchronisation.
const QUIET_NS: u64 = 50_000_000;

impl Slot {
    /// Read and written (attached, not dead).
    pub fn live(&self) -> bool {
        self.link.is_some() && self.dead.is_none()
    }

    /// The link's readiness descriptor, if it has a link with one.
    pub fn fd(&self) -> Option<std::os::fd::BorrowedFd<'_>> {
        self.link.as_deref().and_then(|l| l.rt_fd())
    }
}

/// All slots plus the counters of links already detached.
pub(crate) struct Slots {
    pub slots: Box<[Slot]>,
    pub retired: LinkTotals,
    /// Bytes a link may read per period.
    budget: usize,
    /// The read buffer of every link, made once: a `[0u8; WAKE_READ]` on the stack was zeroed at every read of
    /// every link (4 KiB per link per wake-up; 256 KiB per period with 64 links).
    rx_buf: Box<[u8]>,
}

impl Slots {
    /// `count` slots with `tx_bytes` of transmit buffer each; a link reads at most
    /// `read_budget` bytes per period.
    pub fn new(count: usize, tx_bytes: usize, read_budget: usize) -> Self {
        let budget = read_budget.max(1);
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
                    period_left: budget,
                    queued: 0,
                    cmd_marks: [(0, 0); CMD_MARKS],
                    marks: 0,
                })
                .collect(),
            retired: LinkTotals::default(),
            budget,
            rx_buf: vec![0u8; WAKE_READ].into_boxed_slice(),
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
        (s.queued, s.marks, s.period_left) = (0, 0, self.budget);
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
        (s.queued, s.marks) = (0, 0);
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
            s.queued += frame.len() as u64;
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
                s.queued += frame.len() as u64;
                ok += 1;
            } else {
                full += 1;
            }
        }
        (ok, full)
    }

    /// The frame just queued on `id` carries a set-point received at `stamp_ns`: its cmd → wire
    /// hop ends when the link accepted its last byte (see [`Slots::flush_all`]).
    pub fn mark_cmd(&mut self, id: LinkId, stamp_ns: u64) {
        if let Some(s) = self.slots.get_mut(id.index()) {
            if s.marks < CMD_MARKS {
                s.cmd_marks[s.marks] = (s.queued, stamp_ns);
                s.marks += 1;
            }
        }
    }

    /// Whether no link needs the periodic cycle: every attached link is alive (a dead one waits to
    /// be handed back), wrote all it queued and holds no partial frame for the quiet-link
    /// resolution.
    pub fn settled(&self) -> bool {
        self.slots.iter().all(|s| {
            s.link.is_none() || (s.dead.is_none() && s.tx.is_empty() && s.reasm.buffered() == 0)
        })
    }

    /// A new period: every link may read its budget again.
    pub fn new_period(&mut self) {
        for s in self.slots.iter_mut() {
            s.period_left = self.budget;
        }
    }

    /// Reads link `i`: at most `reads` reads, each of at most [`WAKE_READ`] bytes, within the
    /// link's period budget, stopping at the first short read (the link had no more). Frames go
    /// to `on_frame` with the link id, `wake_ns` (when the bytes were found readable) and the
    /// time each was decoded. A failing link is marked dead. Returns true if the link used up
    /// its period budget (it may have more).
    pub fn read(
        &mut self,
        i: usize,
        reads: usize,
        wake_ns: u64,
        mut on_frame: impl FnMut(LinkId, u64, u64, &Frame<'_>),
    ) -> bool {
        let Slots { slots, rx_buf, .. } = self;
        let buf = &mut rx_buf[..];
        let Some(s) = slots.get_mut(i).filter(|s| s.live()) else {
            return false;
        };
        let Some(link) = s.link.as_mut() else {
            return false;
        };
        for _ in 0..reads {
            let want = s.period_left.min(buf.len());
            if want == 0 {
                break;
            }
            match link.read(&mut buf[..want]) {
                Ok(0) => break,
                Ok(n) => {
                    s.period_left -= n;
                    s.bytes_rx += n as u64;
                    s.last_rx_ns = wake_ns;
                    let mut input = &buf[..n];
                    while let Some(r) = s.reasm.push(&mut input) {
                        if let Ok(frame) = r {
                            on_frame(LinkId(i as u8), wake_ns, monotonic_ns(), &frame);
                        }
                    }
                    if n < want {
                        break;
                    }
                }
                Err(e) => {
                    s.dead = Some(e.into());
                    break;
                }
            }
        }
        s.period_left == 0
    }

    /// Hands over the frames a reassembler holds back on a link quiet for [`QUIET_NS`] (a
    /// pending resynchronisation; called once per period).
    pub fn resolve_quiet(
        &mut self,
        now: u64,
        mut on_frame: impl FnMut(LinkId, u64, u64, &Frame<'_>),
    ) {
        for (i, s) in self.slots.iter_mut().enumerate() {
            if !s.live() || s.reasm.buffered() == 0 || now.saturating_sub(s.last_rx_ns) <= QUIET_NS
            {
                continue;
            }
            while let Some(r) = s.reasm.push_idle() {
                if let Ok(frame) = r {
                    on_frame(LinkId(i as u8), now, now, &frame);
                }
            }
        }
    }

    /// Writes queued bytes of every live link; a failing link is marked dead. Every set-point
    /// whose speed frame is now fully written records its cmd → wire latency in `cmd_to_wire`.
    pub fn flush_all(&mut self, cmd_to_wire: &mut Histogram) {
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
            if s.marks > 0 && s.cmd_marks[0].0 <= s.bytes_tx {
                let now = monotonic_ns();
                let done = s.cmd_marks[..s.marks]
                    .iter()
                    .take_while(|m| m.0 <= s.bytes_tx)
                    .count();
                for m in &s.cmd_marks[..done] {
                    cmd_to_wire.record(now.saturating_sub(m.1));
                }
                s.cmd_marks.copy_within(done..s.marks, 0);
                s.marks -= done;
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
