//! Ring framing: the RT ↔ NRT bundle of rings ([`channels`]), its two halves and their records.

use super::control::JointStateSample;
use super::doorbell::Doorbell;
use super::events::{RtCommand, RtEvent};
use super::ids::{LinkId, LinkTarget, RobotId, MAX_ROBOTS};
use super::odom_groups::{odom_groups, NrtOdomGroups, RtOdomGroups};
use super::odom_out::NrtOdomOut;
use super::params::{live_params, NrtLiveParams, RtLiveParams};
use super::prefault::prefault_ring;
use super::record::{record_rings, rt_record, NrtRecording, RecInput, RecordRings, RtRecorder};
use super::stats::RtStats;
use super::values::{OdomSample, ParamError, Twist2};
use msgs::wire::{check_header, FrameError, HEADER_LEN, MAX_FRAME};
use rtrb::{Consumer, Producer, RingBuffer};
use std::os::fd::BorrowedFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Bytes before the frame in an RT → NRT record: link, reserved, `t_ns` (u64 LE).
const RX_RECORD_HEADER: usize = 10;
/// Statistics reports in flight (one a second by default: NRT takes them long before this fills).
const STATS_RING: usize = 4;
/// Bytes before the frame in an NRT → RT record: the target link (0xFF = all).
const TX_RECORD_HEADER: usize = 1;

/// Ring sizes of [`channels`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChannelConfig {
    /// Bytes of the RT → NRT frame ring.
    pub frames_to_nrt_bytes: usize,
    /// Bytes of the NRT → RT frame ring.
    pub frames_from_nrt_bytes: usize,
    /// Slots of the event ring.
    pub events: usize,
    /// Slots of the command ring.
    pub commands: usize,
    /// Robot slots of the live parameters.
    pub robots: usize,
    /// Slots of the odometry ring to the publisher thread.
    pub odometry_out: usize,
    /// Publisher threads that may each take an odometry ring (one per ROS front end: ROS 2
    /// and ROS 1 run side by side); the RT thread fills every ring that was taken.
    pub odometry_out_consumers: usize,
    /// Odometry rings per consumer, one per group of robots (robot index modulo the groups a
    /// consumer takes, [`NrtEnds::nrt_take_odometry_groups`]): a front end publishes each group
    /// with a thread of its own.
    pub odometry_out_groups: usize,
    /// The flight recorder's rings (`None`: the RT thread records nothing); NRT takes them with
    /// [`NrtEnds::nrt_take_recording`].
    pub record: Option<RecordRings>,
}

impl Default for ChannelConfig {
    fn default() -> Self {
        ChannelConfig {
            frames_to_nrt_bytes: 1 << 18,
            frames_from_nrt_bytes: 1 << 16,
            events: 1024,
            commands: 256,
            robots: MAX_ROBOTS,
            odometry_out: 256,
            odometry_out_consumers: 1,
            odometry_out_groups: 1,
            record: None,
        }
    }
}

/// Builds the RT ↔ NRT bundle (allocates the rings once and touches all their memory).
///
/// # Example
///
/// ```
/// use handoff::{channels, ChannelConfig, LinkId, LinkTarget, RobotId, RtCommand, RtEvent};
/// use msgs::wire::{encode_user_event, HOST_SOURCE, MAX_FRAME};
///
/// let (mut rt, mut nrt) = channels(&ChannelConfig::default());
///
/// // RT → NRT: a received frame and an event.
/// let mut frame = [0u8; MAX_FRAME];
/// let n = encode_user_event(HOST_SOURCE, 3, &[1, 2], &mut frame).unwrap();
/// assert!(rt.rt_push_frame(LinkId(0), 1_000, &frame[..n]));
/// assert!(rt.rt_push_event(RtEvent::RobotStale { robot: RobotId(0) }));
/// rt.rt_wake_nrt(); // once per cycle: rings the NRT side's doorbell
/// let got = nrt.nrt_pop_frame().unwrap();
/// assert_eq!((got.link, got.t_ns, got.bytes), (LinkId(0), 1_000, &frame[..n]));
/// assert_eq!(nrt.nrt_pop_event(), Some(RtEvent::RobotStale { robot: RobotId(0) }));
///
/// // NRT → RT: a frame for every link and a command.
/// nrt.nrt_push_frame(LinkTarget::All, &frame[..n]).unwrap();
/// nrt.nrt_push_command(RtCommand::Shutdown).unwrap();
/// let mut out = [0u8; MAX_FRAME];
/// assert_eq!(rt.rt_pop_frame(&mut out), Some(Ok((LinkTarget::All, n))));
/// assert_eq!(rt.rt_pop_command(), Some(RtCommand::Shutdown));
/// assert_eq!(rt.rt_pop_command(), None);
/// ```
pub fn channels(cfg: &ChannelConfig) -> (RtEnds, NrtEnds) {
    let rx_bytes = cfg.frames_to_nrt_bytes.max(RX_RECORD_HEADER + MAX_FRAME);
    let tx_bytes = cfg.frames_from_nrt_bytes.max(TX_RECORD_HEADER + MAX_FRAME);
    let (mut rx_p, mut rx_c) = RingBuffer::new(rx_bytes);
    let (mut tx_p, mut tx_c) = RingBuffer::new(tx_bytes);
    let (mut ev_p, mut ev_c) = RingBuffer::new(cfg.events.max(1));
    let (mut cmd_p, mut cmd_c) = RingBuffer::new(cfg.commands.max(1));
    prefault_ring(&mut rx_p, &mut rx_c, 0u8);
    prefault_ring(&mut tx_p, &mut tx_c, 0u8);
    prefault_ring(
        &mut ev_p,
        &mut ev_c,
        RtEvent::RobotStale { robot: RobotId(0) },
    );
    prefault_ring(&mut cmd_p, &mut cmd_c, RtCommand::Shutdown);
    // The statistics go apart from the events: a report is large (the controllers' table) and
    // rare, the events small and frequent; every event slot would otherwise be a report's size.
    let (mut st_p, mut st_c) = RingBuffer::new(STATS_RING);
    prefault_ring(&mut st_p, &mut st_c, RtStats::default());
    let (rt_params, nrt_params) = live_params(cfg.robots);
    let (recorder, recording) = match cfg.record.map(record_rings) {
        Some((rt, nrt)) => (rt, Some(nrt)),
        None => (RtRecorder::off(), None),
    };
    let doorbell = Doorbell::new();
    // Wanted until NRT says otherwise (a driver that never sets it wakes at every burst, as before).
    let frames_wanted = Arc::new(AtomicBool::new(true));
    let rt_bell = rt_params.rt_wake_bell().clone();
    let (odom_rt, odom_nrt): (Vec<_>, Vec<_>) = (0..cfg.odometry_out_consumers.max(1))
        .map(|_| odom_groups(cfg.odometry_out_groups, cfg.odometry_out))
        .unzip();
    (
        RtEnds {
            frames_out: rx_p,
            frames_in: tx_c,
            events: ev_p,
            commands: cmd_c,
            stats: st_p,
            params: rt_params,
            recorder: Some(recorder),
            doorbell: doorbell.clone(),
            pushed: false,
            pushed_lazy: false,
            frames_wanted: frames_wanted.clone(),
            odom_out: odom_rt.into_boxed_slice(),
        },
        NrtEnds {
            frames_in: rx_c,
            frames_out: tx_p,
            events: ev_c,
            commands: cmd_p,
            stats: st_c,
            params: nrt_params,
            doorbell,
            rt_bell,
            frames_wanted,
            odom_out: odom_nrt,
            recording,
            buf: [0; RX_RECORD_HEADER + MAX_FRAME],
        },
    )
}

/// The RT thread's half of the bundle. Every method returns immediately and never allocates.
#[derive(Debug)]
pub struct RtEnds {
    frames_out: Producer<u8>,
    frames_in: Consumer<u8>,
    events: Producer<RtEvent>,
    commands: Consumer<RtCommand>,
    stats: Producer<RtStats>,
    params: RtLiveParams,
    /// The flight recorder's RT half, until the RT thread installs it ([`RtEnds::rt_take_recorder`]).
    recorder: Option<RtRecorder>,
    doorbell: Doorbell,
    /// Something NRT wants at once (an event) was pushed since the doorbell last rang.
    pushed: bool,
    /// Frames or proximity readings were pushed since the doorbell last rang: it rings for them only while NRT
    /// wants them at once ([`NrtEnds::nrt_set_frames_wanted`]) or their ring fills; else they wait for NRT's
    /// next wake-up of its own.
    pushed_lazy: bool,
    frames_wanted: Arc<AtomicBool>,
    /// Per consumer, its rings of groups of robots.
    odom_out: Box<[RtOdomGroups]>,
}

/// Whether more than half of `ring` is taken (an atomic load: RT-safe).
fn half_full<T>(ring: &Producer<T>) -> bool {
    ring.slots() < ring.buffer().capacity() / 2
}

/// Why a record from NRT was not a frame (the RT side counts it and drops the ring's content).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("invalid record in the NRT → RT frame ring")]
pub struct InvalidRecord;

impl RtEnds {
    /// Forwards a received frame (header + payload) to NRT; false if the ring is full (dropped).
    pub fn rt_push_frame(&mut self, link: LinkId, t_ns: u64, raw: &[u8]) -> bool {
        let mut rec = [0u8; RX_RECORD_HEADER + MAX_FRAME];
        let n = RX_RECORD_HEADER + raw.len();
        if raw.len() > MAX_FRAME {
            return false;
        }
        rec[0] = link.0;
        rec[2..10].copy_from_slice(&t_ns.to_le_bytes());
        rec[RX_RECORD_HEADER..n].copy_from_slice(raw);
        let ok = self.frames_out.push_entire_slice(&rec[..n]).is_ok();
        self.pushed_lazy |= ok;
        ok
    }

    /// Pops the next frame to write: copies it into `out` and returns its target and length.
    /// On a corrupt record the ring is emptied and `Err(InvalidRecord)` returned.
    pub fn rt_pop_frame(
        &mut self,
        out: &mut [u8; MAX_FRAME],
    ) -> Option<Result<(LinkTarget, usize), InvalidRecord>> {
        // One look at the fill level: NRT may push a whole record at any moment, so every
        // decision below is taken on this snapshot (it can only grow), and only the bytes it
        // counted are ever discarded.
        let available = self.frames_in.slots();
        if available == 0 {
            return None;
        }
        let head_len = TX_RECORD_HEADER + HEADER_LEN;
        if available < head_len {
            // Records are pushed whole: a shorter remainder cannot be a record.
            self.discard_incoming(available);
            return Some(Err(InvalidRecord));
        }
        let (target, total) = {
            let Ok(chunk) = self.frames_in.read_chunk(head_len) else {
                self.discard_incoming(available);
                return Some(Err(InvalidRecord));
            };
            let mut head = [0u8; TX_RECORD_HEADER + HEADER_LEN];
            let (a, b) = chunk.as_slices();
            head[..a.len()].copy_from_slice(a);
            head[a.len()..].copy_from_slice(b);
            let len = u16::from_le_bytes([head[1], head[2]]) as usize;
            (LinkTarget::from_byte(head[0]), HEADER_LEN + len)
        };
        if total > MAX_FRAME || available < TX_RECORD_HEADER + total {
            self.discard_incoming(available);
            return Some(Err(InvalidRecord));
        }
        let mut target_byte = [0u8; TX_RECORD_HEADER];
        if self.frames_in.pop_entire_slice(&mut target_byte).is_err()
            || self.frames_in.pop_entire_slice(&mut out[..total]).is_err()
        {
            self.discard_incoming(available.saturating_sub(TX_RECORD_HEADER));
            return Some(Err(InvalidRecord));
        }
        Some(Ok((target, total)))
    }

    /// Drops `n` bytes (at most what is there) of the NRT → RT frame ring.
    fn discard_incoming(&mut self, n: usize) {
        let n = n.min(self.frames_in.slots());
        if let Ok(c) = self.frames_in.read_chunk(n) {
            c.commit_all();
        }
    }

    /// Sends an event to NRT; false if the ring is full (dropped).
    /// A proximity reading is wanted at once only as the frames are (it feeds the sensor topics).
    pub fn rt_push_event(&mut self, ev: RtEvent) -> bool {
        let lazy = matches!(ev, RtEvent::Proximity(_));
        let ok = self.events.push(ev).is_ok();
        if lazy {
            self.pushed_lazy |= ok;
        } else {
            self.pushed |= ok;
        }
        ok
    }

    /// Hands a statistics report to NRT and says so with an [`RtEvent::Stats`]; false (the
    /// report dropped) if NRT has not taken the previous ones.
    pub fn rt_push_stats(&mut self, stats: RtStats) -> bool {
        self.stats.push(stats).is_ok() && self.rt_push_event(RtEvent::Stats)
    }

    /// Rings the NRT side's doorbell (once per RT cycle: one non-blocking write at most) if an event was pushed
    /// since the last ring or an RT controller published (an [`RtPublisher`](crate::RtPublisher)), or frames
    /// (and proximity readings) were and NRT wants them at once or their ring is half full. Frames NRT does not want at once wait for its own next wake-up (its idle tick): an idle
    /// driver's NRT loop is not woken by every burst of a robot's periodic events.
    pub fn rt_wake_nrt(&mut self) {
        let lazy_due = self.pushed_lazy
            && (self.frames_wanted.load(Ordering::Relaxed)
                || half_full(&self.frames_out)
                || half_full(&self.events));
        // an RT controller's or a reflex's output for the NRT loop (their queues are not these rings)
        let published = super::publisher::rt_take_published();
        if self.pushed || published || lazy_due {
            self.pushed = false;
            self.pushed_lazy = false;
            self.doorbell.ring();
        }
    }

    /// Hands an odometry sample, with the twist the RT loop commands its robot after the motion
    /// limits ([`OdomHandoff::commanded`](super::OdomHandoff::commanded)), to the publisher
    /// threads (of every consumer that took its rings, [`NrtEnds::nrt_take_odometry_groups`]: the
    /// ring of the robot's group) and rings them; false if nobody publishes or every ring was full.
    pub fn rt_publish_odometry(
        &mut self,
        sample: OdomSample,
        commanded: Twist2,
        handed_ns: u64,
    ) -> bool {
        let mut any = false;
        for o in self.odom_out.iter_mut() {
            any |= o.rt_publish(sample, commanded, handed_ns);
        }
        any
    }

    /// Hands an extended joint state to the publisher threads (as
    /// [`RtEnds::rt_publish_odometry`]); false if nobody publishes or every ring was full.
    pub fn rt_publish_joint_state(&mut self, sample: JointStateSample) -> bool {
        let mut any = false;
        for o in self.odom_out.iter_mut() {
            any |= o.rt_publish_joint(sample);
        }
        any
    }

    /// Odometry samples dropped because the publisher thread was behind.
    pub fn rt_odometry_dropped(&self) -> u64 {
        self.odom_out.iter().map(RtOdomGroups::rt_dropped).sum()
    }

    /// The fd the RT loop waits on for NRT input: readable once a set-point, a frame or a
    /// command was queued (then [`RtEnds::rt_drain_wake`]). `None` if no eventfd was available
    /// (then poll the rings every period).
    pub fn rt_wake_fd(&self) -> Option<BorrowedFd<'_>> {
        self.params.rt_wake_bell().fd()
    }

    /// Consumes the NRT → RT wake-ups so far (never blocks); whether there were any.
    pub fn rt_drain_wake(&mut self) -> bool {
        self.params.rt_wake_bell().drain()
    }

    /// Pops the next command from NRT (recorded when the flight recorder is on).
    pub fn rt_pop_command(&mut self) -> Option<RtCommand> {
        let cmd = self.commands.pop().ok()?;
        rt_record(RecInput::Command(cmd));
        Some(cmd)
    }

    /// The flight recorder's RT half (off unless [`ChannelConfig::record`] was set), for the RT thread to install
    /// ([`crate::rt_install`]) before its loop; `None` once taken.
    pub fn rt_take_recorder(&mut self) -> Option<RtRecorder> {
        self.recorder.take()
    }

    /// Whether the NRT side dropped its half (the command ring is abandoned).
    pub fn rt_peer_gone(&self) -> bool {
        self.commands.is_abandoned()
    }

    /// The RT half of the live parameters (set-points, calibration, watchdog).
    pub fn rt_params(&mut self) -> &mut RtLiveParams {
        &mut self.params
    }
}

/// A frame received by the RT thread, as seen by NRT (borrowed until the next receive).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReceivedFrame<'a> {
    /// Link slot it arrived on.
    pub link: LinkId,
    /// RT receive time (CLOCK_MONOTONIC ns).
    pub t_ns: u64,
    /// Header + payload.
    pub bytes: &'a [u8],
}

/// Why NRT could not queue something for the RT thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SendError {
    /// The ring is full (the RT thread is behind or stopped); nothing was queued.
    #[error("ring to the RT thread is full")]
    Full,
    /// The bytes are not exactly one valid frame.
    #[error("not a frame: {0}")]
    Invalid(FrameError),
    /// The bytes hold more than one frame.
    #[error("{0} bytes after the frame")]
    TrailingBytes(usize),
}

/// The NRT side's half of the bundle (network manager, switch, ROS bridge).
/// Every method returns immediately.
#[derive(Debug)]
pub struct NrtEnds {
    frames_in: Consumer<u8>,
    frames_out: Producer<u8>,
    events: Consumer<RtEvent>,
    commands: Producer<RtCommand>,
    stats: Consumer<RtStats>,
    params: NrtLiveParams,
    doorbell: Doorbell,
    rt_bell: Doorbell,
    frames_wanted: Arc<AtomicBool>,
    /// Odometry rings (per consumer, one per group of robots) not yet taken.
    odom_out: Vec<NrtOdomGroups>,
    /// The flight recorder's NRT half, until the writer takes it.
    recording: Option<NrtRecording>,
    buf: [u8; RX_RECORD_HEADER + MAX_FRAME],
}

impl NrtEnds {
    /// The next frame received by the RT thread, if any.
    pub fn nrt_pop_frame(&mut self) -> Option<ReceivedFrame<'_>> {
        let head_len = RX_RECORD_HEADER + HEADER_LEN;
        let total = {
            let chunk = self.frames_in.read_chunk(head_len).ok()?;
            let (a, b) = chunk.as_slices();
            let mut head = [0u8; RX_RECORD_HEADER + HEADER_LEN];
            head[..a.len()].copy_from_slice(a);
            head[a.len()..].copy_from_slice(b);
            let len = u16::from_le_bytes([head[RX_RECORD_HEADER], head[RX_RECORD_HEADER + 1]]);
            RX_RECORD_HEADER + HEADER_LEN + len as usize
        };
        // The RT side pushes whole records of at most RX_RECORD_HEADER + MAX_FRAME bytes.
        self.frames_in
            .pop_entire_slice(self.buf.get_mut(..total)?)
            .ok()?;
        let mut t = [0u8; 8];
        t.copy_from_slice(&self.buf[2..10]);
        Some(ReceivedFrame {
            link: LinkId(self.buf[0]),
            t_ns: u64::from_le_bytes(t),
            bytes: &self.buf[RX_RECORD_HEADER..total],
        })
    }

    /// Calls `f` for every frame received so far; returns how many.
    pub fn nrt_drain_frames(&mut self, mut f: impl FnMut(ReceivedFrame<'_>)) -> usize {
        let mut n = 0;
        while let Some(fr) = self.nrt_pop_frame() {
            f(fr);
            n += 1;
        }
        n
    }

    /// Queues one frame (header + payload, validated) to write to `to`.
    pub fn nrt_push_frame(&mut self, to: LinkTarget, frame: &[u8]) -> Result<(), SendError> {
        let h = check_header(frame).map_err(SendError::Invalid)?;
        let total = HEADER_LEN + h.len;
        if frame.len() < total {
            return Err(SendError::Invalid(FrameError::Incomplete {
                need: total,
                have: frame.len(),
            }));
        }
        if frame.len() > total {
            return Err(SendError::TrailingBytes(frame.len() - total));
        }
        let mut rec = [0u8; TX_RECORD_HEADER + MAX_FRAME];
        rec[0] = to.to_byte();
        rec[TX_RECORD_HEADER..TX_RECORD_HEADER + total].copy_from_slice(frame);
        self.frames_out
            .push_entire_slice(&rec[..TX_RECORD_HEADER + total])
            .map_err(|_| SendError::Full)?;
        self.rt_bell.ring();
        Ok(())
    }

    /// The next event from the RT thread, if any.
    pub fn nrt_pop_event(&mut self) -> Option<RtEvent> {
        self.events.pop().ok()
    }

    /// The newest statistics report not taken yet (older ones are dropped), on an
    /// [`RtEvent::Stats`].
    pub fn nrt_take_stats(&mut self) -> Option<RtStats> {
        let mut newest = None;
        while let Ok(s) = self.stats.pop() {
            newest = Some(s);
        }
        newest
    }

    /// Queues a command for the RT thread.
    pub fn nrt_push_command(&mut self, cmd: RtCommand) -> Result<(), SendError> {
        self.commands.push(cmd).map_err(|_| SendError::Full)?;
        self.rt_bell.ring();
        Ok(())
    }

    /// Sets a robot's cmd_vel set-point (latest value wins, never blocks).
    pub fn nrt_set_cmd_vel(&self, robot: RobotId, twist: Twist2) -> Result<(), ParamError> {
        self.params.nrt_set_cmd_vel(robot, twist)
    }

    /// The NRT half of the live parameters (calibration, limits, watchdog, set-points); clone
    /// it to share it with other NRT threads.
    pub fn nrt_params(&self) -> &NrtLiveParams {
        &self.params
    }

    /// Whether the RT thread dropped its half (it stopped).
    pub fn nrt_peer_gone(&self) -> bool {
        self.events.is_abandoned()
    }

    /// Takes the flight recorder's NRT half (`None` if [`ChannelConfig::record`] was not set, or
    /// taken already).
    pub fn nrt_take_recording(&mut self) -> Option<NrtRecording> {
        self.recording.take()
    }

    /// Takes a consumer's odometry ring as one (one consumer per
    /// [`ChannelConfig::odometry_out_consumers`]): from then on the RT thread hands it every
    /// odometry sample its [`super::OdomDemand`] wants and every extended joint state (the NRT
    /// engine gets no odometry).
    pub fn nrt_take_odometry_out(&mut self) -> Option<NrtOdomOut> {
        self.nrt_take_odometry_groups_of(1)?.pop()
    }

    /// Takes a consumer's odometry rings, one per group of robots
    /// ([`ChannelConfig::odometry_out_groups`]): robot `r`'s samples and joint states go to ring
    /// `r % len` (each ring as [`NrtEnds::nrt_take_odometry_out`]'s).
    pub fn nrt_take_odometry_groups(&mut self) -> Option<Vec<NrtOdomOut>> {
        let all = self.odom_out.first()?.len();
        self.nrt_take_odometry_groups_of(all)
    }

    fn nrt_take_odometry_groups_of(&mut self, groups: usize) -> Option<Vec<NrtOdomOut>> {
        if self.odom_out.is_empty() {
            return None;
        }
        Some(self.odom_out.remove(0).nrt_take(groups))
    }

    /// The doorbell that wakes the RT thread (rung by every push and set-point already; ring
    /// it after other changes the RT thread should see at once).
    pub fn nrt_rt_bell(&self) -> &Doorbell {
        &self.rt_bell
    }

    /// Says whether NRT wants the frames the RT thread reads (and its proximity readings) at once: when not,
    /// the RT thread does not ring the doorbell for them ([`RtEnds::rt_wake_nrt`]) and they wait in their ring
    /// (rung when half full) for the NRT loop's next wake-up. True until first set.
    pub fn nrt_set_frames_wanted(&self, wanted: bool) {
        self.frames_wanted.store(wanted, Ordering::Relaxed);
    }

    /// Whether NRT wants the frames at once (see [`Self::nrt_set_frames_wanted`]).
    pub fn nrt_frames_wanted(&self) -> bool {
        self.frames_wanted.load(Ordering::Relaxed)
    }

    /// The doorbell the RT thread rings when it pushed frames or events (see
    /// [`RtEnds::rt_wake_nrt`]); others may ring it too to wake the NRT loop.
    pub fn nrt_doorbell(&self) -> &Doorbell {
        &self.doorbell
    }
}

impl Drop for NrtEnds {
    /// The command ring abandoned first, then the RT thread rung: it sees NRT gone at once, even
    /// asleep past its period while quiet.
    fn drop(&mut self) {
        drop(std::mem::replace(&mut self.commands, RingBuffer::new(1).0));
        self.rt_bell.ring();
    }
}

#[cfg(test)]
#[path = "ring_tests.rs"]
mod tests;
