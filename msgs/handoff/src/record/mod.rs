//! The flight recorder's RT half: what the RT thread took as input (its passes with their clock, the frames it
//! read, the commands, frames and live values NRT handed it, the links it gained and lost) and the frames it
//! wrote, on rings of their own to an NRT writer.
//!
//! [`record_rings`] makes the two halves. The RT half ([`RtRecorder`]) is either off ([`RtRecorder::off`]: every
//! call is one branch) or pushes fixed-size records without allocating, locking or blocking: a full ring drops
//! the record and counts it ([`NrtRecording::nrt_dropped`]). Two rings: [`RecInput`] values (small, `Copy`) and
//! frames (a byte ring: a frame is up to [`MAX_FRAME`] bytes, most are a few tens). Every record carries a
//! sequence number from one counter, so that the NRT side (or a replay) restores the order across the two rings.
//!
//! Times are CLOCK_MONOTONIC nanoseconds as the RT thread read them.

mod inputs;

pub use inputs::{PassKind, RecInput};

use super::ids::RobotId;
use super::prefault::prefault_ring;
use msgs::wire::{HEADER_LEN, MAX_FRAME};
use rtrb::{Consumer, Producer, RingBuffer};
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Bytes before the frame in a frame record: direction, link, sequence number, time, decode time (u64 LE each).
const FRAME_RECORD_HEADER: usize = 26;

/// Which way a recorded frame went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum FrameDir {
    /// Read from a link (an RT input).
    In,
    /// Queued to a link by the RT thread (an RT output: wheel targets, stops, read-backs, NRT's frames).
    Out,
    /// Taken from NRT's frame ring (an RT input; written to its target as an [`FrameDir::Out`] frame too).
    FromNrt,
}

impl FrameDir {
    fn byte(self) -> u8 {
        match self {
            FrameDir::In => 0,
            FrameDir::Out => 1,
            FrameDir::FromNrt => 2,
        }
    }

    fn from_byte(b: u8) -> Option<FrameDir> {
        Some(match b {
            0 => FrameDir::In,
            1 => FrameDir::Out,
            2 => FrameDir::FromNrt,
            _ => return None,
        })
    }
}

/// An input record with its sequence number.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RecEntry {
    /// Position in the RT thread's record order (shared with the frame records).
    pub seq: u64,
    /// The input.
    pub input: RecInput,
}

/// One record of a recording, owned.
#[derive(Debug, Clone, PartialEq)]
pub enum Record {
    /// An input the RT thread took.
    Input {
        /// Record order.
        seq: u64,
        /// The input.
        input: RecInput,
    },
    /// A frame it read, wrote or took from NRT.
    Frame {
        /// Record order.
        seq: u64,
        /// Direction.
        dir: FrameDir,
        /// Link slot (0xFF: every link).
        link: u8,
        /// Read (wake-up) or queue time.
        t_ns: u64,
        /// Decode time (frames read).
        decoded_ns: u64,
        /// Header and payload.
        bytes: Vec<u8>,
    },
}

impl Record {
    /// Its place in the record order.
    pub fn seq(&self) -> u64 {
        match self {
            Record::Input { seq, .. } | Record::Frame { seq, .. } => *seq,
        }
    }
}

/// A recorded frame as the NRT side sees it (borrowed until the next pop).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecFrame<'a> {
    /// Position in the RT thread's record order.
    pub seq: u64,
    /// Direction.
    pub dir: FrameDir,
    /// Link slot (for [`FrameDir::FromNrt`]: 0xFF for every link).
    pub link: u8,
    /// When (CLOCK_MONOTONIC ns: the wake-up that read it for `In`, the pass that queued it otherwise).
    pub t_ns: u64,
    /// For `In`: when the RT thread decoded it (the odometry's time); otherwise `t_ns`.
    pub decoded_ns: u64,
    /// Header + payload.
    pub bytes: &'a [u8],
}

impl RecFrame<'_> {
    /// The owned record.
    pub fn to_record(&self) -> Record {
        Record::Frame {
            seq: self.seq,
            dir: self.dir,
            link: self.link,
            t_ns: self.t_ns,
            decoded_ns: self.decoded_ns,
            bytes: self.bytes.to_vec(),
        }
    }
}

impl From<RecEntry> for Record {
    fn from(e: RecEntry) -> Record {
        Record::Input {
            seq: e.seq,
            input: e.input,
        }
    }
}

/// Ring sizes of [`record_rings`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordRings {
    /// Slots of the input ring.
    pub inputs: usize,
    /// Bytes of the frame ring.
    pub frame_bytes: usize,
}

impl Default for RecordRings {
    /// A second of a busy robot at 1 kHz passes, with room: 16 Ki inputs (~1.1 MB), 1 MiB of frames.
    fn default() -> Self {
        RecordRings {
            inputs: 16 * 1024,
            frame_bytes: 1 << 20,
        }
    }
}

#[derive(Debug, Default)]
struct Drops {
    inputs: AtomicU64,
    frames: AtomicU64,
}

/// The RT thread's half of the recorder (`&mut self`: one writer; `Send`, not `Sync`).
///
/// ```compile_fail
/// fn shared<T: Sync>() {}
/// shared::<handoff::RtRecorder>();
/// ```
#[derive(Debug, Default)]
pub struct RtRecorder {
    on: Option<RtRings>,
    /// The controller running (robot slot, registry index): see [`rt_set_context`].
    context: (RobotId, u8),
}

#[derive(Debug)]
struct RtRings {
    inputs: Producer<RecEntry>,
    frames: Producer<u8>,
    seq: u64,
    drops: Arc<Drops>,
}

/// The NRT half: the records, in the order of each ring, and the drop counts.
#[derive(Debug)]
pub struct NrtRecording {
    inputs: Consumer<RecEntry>,
    frames: Consumer<u8>,
    drops: Arc<Drops>,
    buf: Box<[u8; FRAME_RECORD_HEADER + MAX_FRAME]>,
}

/// Builds the recorder's rings (allocates once and touches their memory): `(rt, nrt)` halves.
///
/// # Example
///
/// ```
/// use handoff::{record_rings, FrameDir, LinkId, RecInput, PassKind, RecordRings};
///
/// let (mut rt, mut nrt) = record_rings(RecordRings { inputs: 8, frame_bytes: 256 });
/// rt.rt_input(RecInput::Pass { kind: PassKind::Io, now_ns: 5, wake: false, timer: false, signal: false });
/// rt.rt_frame(FrameDir::In, LinkId(0).0, 5, 6, &[2, 0, 1, 0, 0, 0, 7, 0]);
/// let pass = nrt.nrt_pop_input().unwrap();
/// assert_eq!(pass.seq, 0);
/// let f = nrt.nrt_pop_frame().unwrap();
/// assert_eq!((f.seq, f.dir, f.t_ns, f.decoded_ns, f.bytes), (1, FrameDir::In, 5, 6, &[2, 0, 1, 0, 0, 0, 7, 0][..]));
/// assert_eq!(nrt.nrt_dropped(), (0, 0));
/// ```
pub fn record_rings(sizes: RecordRings) -> (RtRecorder, NrtRecording) {
    let filler = RecEntry {
        seq: 0,
        input: RecInput::Watchdog { seconds: 0.0 },
    };
    let (mut ip, mut ic) = RingBuffer::new(sizes.inputs.max(1));
    let (mut fp, mut fc) = RingBuffer::new(sizes.frame_bytes.max(FRAME_RECORD_HEADER + MAX_FRAME));
    prefault_ring(&mut ip, &mut ic, filler);
    prefault_ring(&mut fp, &mut fc, 0u8);
    let drops = Arc::new(Drops::default());
    (
        RtRecorder {
            on: Some(RtRings {
                inputs: ip,
                frames: fp,
                seq: 0,
                drops: drops.clone(),
            }),
            context: (RobotId(0), 0),
        },
        NrtRecording {
            inputs: ic,
            frames: fc,
            drops,
            buf: Box::new([0; FRAME_RECORD_HEADER + MAX_FRAME]),
        },
    )
}

thread_local! {
    /// The recorder of the RT thread running on this thread (installed by the RT loop for its run, or by a
    /// replay), so that every place the thread takes an input — live values (through [`crate::RtIntake`]),
    /// rings, a controller's service and ports — records it where it takes it. Off elsewhere.
    static RT_RECORDER: std::cell::RefCell<RtRecorder> = const {
        std::cell::RefCell::new(RtRecorder { on: None, context: (RobotId(0), 0) })
    };
}

/// Installs `recorder` as this thread's (the RT thread, before its loop); returns the one it replaces. Its first
/// use on a thread may register the thread-local's destructor (an allocation): install before counting them.
pub fn rt_install(recorder: RtRecorder) -> RtRecorder {
    RT_RECORDER.with_borrow_mut(|r| std::mem::replace(r, recorder))
}

/// Takes this thread's recorder back (leaving it off).
pub fn rt_uninstall() -> RtRecorder {
    rt_install(RtRecorder::off())
}

/// Records what the controller running now took (see [`rt_set_context`]): `make` gets its robot and index, and is
/// called only when this thread records (the kinds of [`crate::RtIntake`] that are not a controller's ignore them).
pub fn rt_record_controller(make: impl FnOnce(RobotId, u8) -> RecInput) {
    RT_RECORDER.with_borrow_mut(|r| {
        if r.on.is_some() {
            let (robot, controller) = r.context;
            r.rt_input(make(robot, controller));
        }
    });
}

/// Records an input with this thread's recorder (nothing when it is off).
pub fn rt_record(input: RecInput) {
    RT_RECORDER.with_borrow_mut(|r| r.rt_input(input));
}

/// Records a frame with this thread's recorder (see [`RtRecorder::rt_frame`]).
pub fn rt_record_frame(dir: FrameDir, link: u8, t_ns: u64, decoded_ns: u64, bytes: &[u8]) {
    RT_RECORDER.with_borrow_mut(|r| r.rt_frame(dir, link, t_ns, decoded_ns, bytes));
}

/// Says which robot's controller (registry index) the RT thread runs now: what a controller's endpoints record is
/// theirs.
pub fn rt_set_context(robot: RobotId, controller: u8) {
    RT_RECORDER.with_borrow_mut(|r| r.context = (robot, controller));
}

/// The controller the RT thread runs now (see [`rt_set_context`]).
pub fn rt_context() -> (RobotId, u8) {
    RT_RECORDER.with_borrow(|r| r.context)
}

/// Whether this thread records.
pub fn rt_recording() -> bool {
    RT_RECORDER.with_borrow(|r| r.on.is_some())
}

impl RtRecorder {
    /// A recorder that records nothing (every call returns at once).
    pub const fn off() -> RtRecorder {
        RtRecorder {
            on: None,
            context: (RobotId(0), 0),
        }
    }

    /// Whether it records.
    pub fn rt_on(&self) -> bool {
        self.on.is_some()
    }

    /// Records an input (dropped and counted if the ring is full).
    pub fn rt_input(&mut self, input: RecInput) {
        if let Some(r) = &mut self.on {
            let seq = r.seq;
            r.seq += 1;
            if r.inputs.push(RecEntry { seq, input }).is_err() {
                r.drops.inputs.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// Records a frame (`bytes`: header + payload, at most [`MAX_FRAME`]; dropped and counted if the ring is full
    /// or the bytes are not one whole frame); `decoded_ns`: see [`RecFrame::decoded_ns`].
    pub fn rt_frame(&mut self, dir: FrameDir, link: u8, t_ns: u64, decoded_ns: u64, bytes: &[u8]) {
        if let Some(r) = &mut self.on {
            let seq = r.seq;
            r.seq += 1;
            let n = FRAME_RECORD_HEADER + bytes.len();
            // the NRT side reads a record's length from the frame's header: a frame must be exactly that long
            let whole = bytes.len() >= HEADER_LEN
                && bytes.len() <= MAX_FRAME
                && HEADER_LEN + u16::from_le_bytes([bytes[0], bytes[1]]) as usize == bytes.len();
            if !whole {
                r.drops.frames.fetch_add(1, Ordering::Relaxed);
                return;
            }
            let mut rec = [0u8; FRAME_RECORD_HEADER + MAX_FRAME];
            rec[0] = dir.byte();
            rec[1] = link;
            rec[2..10].copy_from_slice(&seq.to_le_bytes());
            rec[10..18].copy_from_slice(&t_ns.to_le_bytes());
            rec[18..26].copy_from_slice(&decoded_ns.to_le_bytes());
            rec[FRAME_RECORD_HEADER..n].copy_from_slice(bytes);
            if r.frames.push_entire_slice(&rec[..n]).is_err() {
                r.drops.frames.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// The next sequence number (how many records were made, dropped ones included).
    pub fn rt_seq(&self) -> u64 {
        self.on.as_ref().map_or(0, |r| r.seq)
    }
}

impl NrtRecording {
    /// The next input record, if any.
    pub fn nrt_pop_input(&mut self) -> Option<RecEntry> {
        self.inputs.pop().ok()
    }

    /// The next frame record, if any.
    pub fn nrt_pop_frame(&mut self) -> Option<RecFrame<'_>> {
        let head_len = FRAME_RECORD_HEADER + HEADER_LEN;
        let total = {
            let chunk = self.frames.read_chunk(head_len).ok()?;
            let (a, b) = chunk.as_slices();
            let mut head = [0u8; FRAME_RECORD_HEADER + HEADER_LEN];
            head[..a.len()].copy_from_slice(a);
            head[a.len()..].copy_from_slice(b);
            let len =
                u16::from_le_bytes([head[FRAME_RECORD_HEADER], head[FRAME_RECORD_HEADER + 1]]);
            (FRAME_RECORD_HEADER + HEADER_LEN + len as usize).min(FRAME_RECORD_HEADER + MAX_FRAME)
        };
        // The RT side pushes whole records (a header's length field bounds the frame).
        self.frames.pop_entire_slice(&mut self.buf[..total]).ok()?;
        let b = &self.buf;
        let dir = FrameDir::from_byte(b[0])?;
        let u64_at = |i: usize| {
            let mut x = [0u8; 8];
            x.copy_from_slice(&b[i..i + 8]);
            u64::from_le_bytes(x)
        };
        Some(RecFrame {
            seq: u64_at(2),
            dir,
            link: b[1],
            t_ns: u64_at(10),
            decoded_ns: u64_at(18),
            bytes: &b[FRAME_RECORD_HEADER..total],
        })
    }

    /// Records dropped so far because a ring was full: `(inputs, frames)`.
    pub fn nrt_dropped(&self) -> (u64, u64) {
        (
            self.drops.inputs.load(Ordering::Relaxed),
            self.drops.frames.load(Ordering::Relaxed),
        )
    }

    /// Whether the RT half is gone (the RT thread ended): what is left in the rings is all there is.
    pub fn nrt_peer_gone(&self) -> bool {
        self.inputs.is_abandoned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_survives_two_rings_and_a_full_ring_counts_drops() {
        let (mut rt, mut nrt) = record_rings(RecordRings {
            inputs: 2,
            frame_bytes: 0,
        });
        let frame = [1u8, 0, 0x10, 0, 0x20, 0, 9];
        for i in 0..3 {
            rt.rt_input(RecInput::Watchdog { seconds: i as f64 });
            rt.rt_frame(FrameDir::Out, 3, 100 + i, 100 + i, &frame);
        }
        // 2 input slots: the third input dropped; the frame ring holds at least one record
        assert_eq!(nrt.nrt_dropped().0, 1);
        let seqs: Vec<u64> = std::iter::from_fn(|| nrt.nrt_pop_input().map(|e| e.seq)).collect();
        assert_eq!(seqs, [0, 2]);
        let f = nrt.nrt_pop_frame().unwrap();
        assert_eq!(
            (f.seq, f.dir, f.link, f.t_ns, f.bytes),
            (1, FrameDir::Out, 3, 100, &frame[..])
        );
        assert_eq!(rt.rt_seq(), 6);
    }

    #[test]
    fn off_records_nothing_and_a_bad_frame_is_a_drop() {
        let mut off = RtRecorder::off();
        off.rt_input(RecInput::Watchdog { seconds: 1.0 });
        off.rt_frame(FrameDir::In, 0, 0, 0, &[0; 8]);
        assert!(!off.rt_on());
        assert_eq!(off.rt_seq(), 0);
        let (mut rt, mut nrt) = record_rings(RecordRings::default());
        rt.rt_frame(FrameDir::In, 0, 0, 0, &[0; 3]);
        rt.rt_frame(FrameDir::In, 0, 0, 0, &[1, 0, 0, 0, 0, 0]); // its header says one more byte
        assert_eq!(nrt.nrt_dropped(), (0, 2));
        assert!(nrt.nrt_pop_frame().is_none());
        drop(rt);
        assert!(nrt.nrt_peer_gone());
    }
}
