//! Fixed-size messages exchanged between the RT and NRT domains (all `Copy`), the rings that
//! carry them, and the live parameters (atomics) that the NRT side writes and the RT side reads.
//!
//! [`channels`] builds the whole bundle once (the only allocation) and returns the two halves:
//! [`RtEnds`] for the RT thread (crate `rt`) and [`NrtEnds`] for the NRT side (network manager,
//! switch, ROS bridge). Every operation of both halves returns immediately: a full ring drops
//! the item and says so (the RT side counts the drop), an empty ring returns `None`.
//!
//! | path | carries | semantics |
//! |---|---|---|
//! | RT → NRT byte ring | every received frame: `(link, t_ns, raw bytes)` | FIFO, drop + count when full |
//! | NRT → RT byte ring | frames to write to one link or to all links | FIFO, `Err(Full)` when full |
//! | RT → NRT [`RtEvent`] ring | link up/down, odometry, watchdog stops, stats | FIFO, drop + count when full |
//! | NRT → RT [`RtCommand`] ring | robot mapping, odometry reset, link close, shutdown | FIFO, `Err(Full)` when full |
//! | [`LiveParams`] (atomics) | cmd_vel set-points, calibration, limits, watchdog | latest value wins |
//!
//! Times are nanoseconds of `CLOCK_MONOTONIC` as read by the RT thread.

use crate::doorbell::Doorbell;
use crate::wire::{check_header, FrameError, HEADER_LEN, MAX_FRAME};
use atomic_float::AtomicF64;
use rtrb::{Consumer, Producer, RingBuffer};
use std::sync::atomic::{fence, AtomicU64, Ordering};
use std::sync::Arc;

/// Most links the RT thread owns at once (link ids are `0..MAX_LINKS`).
pub const MAX_LINKS: usize = 64;
/// Most robots the RT thread drives (robot ids are `0..MAX_ROBOTS`).
pub const MAX_ROBOTS: usize = 64;
/// Index of a link slot of the RT thread.
pub type LinkId = u8;
/// Index of a robot of the RT thread (the NRT side maps nodes/namespaces to robot ids).
pub type RobotId = u8;

/// Bytes before the frame in an RT → NRT record: link, reserved, `t_ns` (u64 LE).
const RX_RECORD_HEADER: usize = 10;
/// Bytes before the frame in an NRT → RT record: the target link (0xFF = all).
const TX_RECORD_HEADER: usize = 1;
/// Target byte meaning "every link".
const ALL_LINKS: u8 = 0xFF;

/// Where a frame from NRT goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LinkTarget {
    /// One link.
    One(LinkId),
    /// Every connected link.
    All,
}

impl LinkTarget {
    fn to_byte(self) -> u8 {
        match self {
            LinkTarget::One(l) => l,
            LinkTarget::All => ALL_LINKS,
        }
    }
    fn from_byte(b: u8) -> Self {
        if b == ALL_LINKS {
            LinkTarget::All
        } else {
            LinkTarget::One(b)
        }
    }
}

/// Transport of a link.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LinkKind {
    /// TCP client (Aseba Playground, asebaswitch, ...).
    Tcp,
    /// Serial port (USB Thymio, wireless dongle, pseudo-terminal).
    Serial,
    /// In-process pipe (the embedded simulator).
    Pipe,
    /// Anything else (tests, custom links).
    Other,
}

/// Why a link went down.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkDownReason {
    /// The peer closed the stream (end of file / abandoned pipe).
    Eof,
    /// An I/O error; `errno` is 0 when the error carried none.
    Io {
        /// Kind of the error.
        kind: std::io::ErrorKind,
        /// OS error number, 0 if none.
        errno: i32,
    },
    /// The NRT side asked to close it ([`RtCommand::CloseLink`]).
    Requested,
    /// The RT thread had no free slot for it.
    NoSlot,
    /// The RT thread stopped.
    Shutdown,
}

/// How the RT thread writes wheel targets to a robot: always both wheels in ONE frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpeedOutput {
    /// The robot script's `set_speed` user event: args `[left, right]`, or
    /// `[node, left, right]` when `node_prefix` (multi-robot scripts filter on the first word).
    Event {
        /// Event id of `set_speed` in the loaded script.
        id: u16,
        /// Prepend the node id to the arguments.
        node_prefix: bool,
    },
    /// One SET_VARIABLES of `[left, right]` at `address` (`motor.left.target`; the right target
    /// must follow it, as on every Thymio firmware and the Playground).
    Variables {
        /// Address of `motor.left.target`.
        address: u16,
    },
    /// No speed output (odometry only).
    None,
}

/// Which robot the RT thread drives in a robot slot, and where its script events are.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RobotConfig {
    /// Link of the node; `None`: the link the node was last heard on (all links until then).
    pub link: Option<LinkId>,
    /// Aseba node id.
    pub node: u16,
    /// Event id of the script's `odometry` event (`[left, right]` or `[left, right, ticks]`).
    pub odometry_event: Option<u16>,
    /// Event id of the script's `proximity` event (7 horizontal sensors), for RT controllers.
    pub proximity_event: Option<u16>,
    /// How wheel targets are written.
    pub speed: SpeedOutput,
    /// On-robot tick rate of the third `odometry` word (Hz; the motor event runs at 100 Hz).
    pub tick_hz: f64,
    /// Address of `motor.left.target` in the node's description (`motor.right.target` follows
    /// it): the stop paths also write zero there directly and read it back, which works even
    /// when the node's VM is stopped. `None`: no such variables.
    pub motor_targets: Option<u16>,
}

impl RobotConfig {
    /// A robot running the driver script: odometry and `set_speed` events of that script.
    pub fn script(node: u16, odometry_event: u16, set_speed_event: u16, node_prefix: bool) -> Self {
        RobotConfig {
            link: None,
            node,
            odometry_event: Some(odometry_event),
            proximity_event: None,
            speed: SpeedOutput::Event {
                id: set_speed_event,
                node_prefix,
            },
            tick_hz: 100.0,
            motor_targets: None,
        }
    }
}

/// A planar pose (m, m, rad).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Pose2 {
    /// x (m).
    pub x: f64,
    /// y (m).
    pub y: f64,
    /// Heading (rad, not wrapped).
    pub theta: f64,
}

/// A planar twist (m/s, rad/s).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Twist2 {
    /// Forward speed (m/s).
    pub linear: f64,
    /// Yaw rate (rad/s).
    pub angular: f64,
}

/// One odometry update of a robot (interface reference §3.5).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OdomSample {
    /// Robot slot.
    pub robot: RobotId,
    /// Node id.
    pub node: u16,
    /// Link the event arrived on.
    pub link: LinkId,
    /// Counter of samples of this robot (restarts at 0 after a reset).
    pub seq: u32,
    /// RT receive time (CLOCK_MONOTONIC ns).
    pub t_ns: u64,
    /// On-robot tick counter of the event, if it carried one.
    pub robot_ticks: Option<u16>,
    /// Time step used for the twist (s): on-robot ticks if present, else receive times.
    pub dt: f64,
    /// Integrated pose.
    pub pose: Pose2,
    /// Twist over the last step.
    pub twist: Twist2,
    /// Wheel joint angles `[left, right]` (rad).
    pub wheel_pos: [f64; 2],
    /// Wheel joint velocities `[left, right]` (rad/s).
    pub wheel_vel: [f64; 2],
}

/// Distribution summary of a latency histogram (ns).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LatencySummary {
    /// Samples.
    pub count: u64,
    /// Smallest sample.
    pub min: u64,
    /// Mean.
    pub mean: u64,
    /// Median.
    pub p50: u64,
    /// 90th percentile.
    pub p90: u64,
    /// 99th percentile.
    pub p99: u64,
    /// 99.9th percentile.
    pub p999: u64,
    /// Largest sample (exact).
    pub max: u64,
}

/// Items dropped because a ring or buffer was full, or refused as invalid.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RingDrops {
    /// Received frames not forwarded to NRT (byte ring full).
    pub frames_to_nrt: u64,
    /// Events not delivered to NRT (event ring full).
    pub events: u64,
    /// Frames not written because the link's transmit buffer was full.
    pub tx_overflow: u64,
    /// Records from NRT that were not a valid frame or named no link.
    pub invalid_from_nrt: u64,
}

impl RingDrops {
    /// Sum of all drops.
    pub fn total(&self) -> u64 {
        self.frames_to_nrt + self.events + self.tx_overflow + self.invalid_from_nrt
    }
}

/// Counters over all links of the RT thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LinkTotals {
    /// Links connected now.
    pub connected: u8,
    /// Links attached since start.
    pub attached: u64,
    /// Links detached (lost or closed) since start.
    pub detached: u64,
    /// Frames received.
    pub frames_rx: u64,
    /// Frames rejected by the reassemblers.
    pub frames_rejected: u64,
    /// Bytes dropped by the reassemblers while resynchronising.
    pub bytes_discarded: u64,
    /// Bytes received.
    pub bytes_rx: u64,
    /// Frames queued for writing.
    pub frames_tx: u64,
    /// Bytes written.
    pub bytes_tx: u64,
}

/// Scheduling the RT thread obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SchedulerMode {
    /// SCHED_FIFO at this priority.
    Fifo {
        /// Priority 1–99.
        priority: u8,
    },
    /// SCHED_OTHER (no privilege, or not requested).
    Fallback,
}

/// Outcome of one setup step of the RT thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SetupStatus {
    /// Not asked for by the configuration.
    NotRequested,
    /// Done.
    Ok,
    /// Failed with this errno (the thread runs anyway).
    Failed {
        /// OS error number.
        errno: i32,
    },
}

/// What the RT thread obtained at start (sent once, logged by NRT).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SetupSummary {
    /// CPU the thread was pinned to.
    pub cpu: Option<u16>,
    /// Pinning.
    pub affinity: SetupStatus,
    /// Requested SCHED_FIFO priority.
    pub priority: u8,
    /// SCHED_FIFO.
    pub scheduler: SetupStatus,
    /// `mlockall(MCL_CURRENT | MCL_FUTURE)`.
    pub memory_lock: SetupStatus,
    /// `/dev/cpu_dma_latency` held at 0.
    pub dma_latency: SetupStatus,
    /// Stack bytes touched before the loop.
    pub stack_prefault_bytes: u32,
    /// Whether the kernel reports PREEMPT_RT (`/sys/kernel/realtime`).
    pub realtime_kernel: bool,
}

impl SetupSummary {
    /// The scheduling obtained.
    pub fn mode(&self) -> SchedulerMode {
        match self.scheduler {
            SetupStatus::Ok => SchedulerMode::Fifo {
                priority: self.priority,
            },
            _ => SchedulerMode::Fallback,
        }
    }

    /// Human-readable warnings with the decoded reason and the fix (NRT side, allocates).
    pub fn warnings(&self) -> Vec<String> {
        let mut out = Vec::new();
        let mut check = |status: SetupStatus, what: &str, fix: &str| {
            if let SetupStatus::Failed { errno } = status {
                let reason = std::io::Error::from_raw_os_error(errno);
                out.push(format!(
                    "{what} failed: {reason}; running without it ({fix})"
                ));
            }
        };
        check(
            self.affinity,
            "pinning the RT thread to its CPU",
            "check the configured CPU exists and is allowed (taskset/cpuset)",
        );
        check(
            self.scheduler,
            "SCHED_FIFO",
            "grant CAP_SYS_NICE or an rtprio limit, e.g. `@realtime - rtprio 99` in limits.conf",
        );
        check(
            self.memory_lock,
            "mlockall",
            "grant CAP_IPC_LOCK or `memlock unlimited` in limits.conf",
        );
        check(
            self.dma_latency,
            "holding /dev/cpu_dma_latency at 0",
            "make /dev/cpu_dma_latency writable for this user",
        );
        out
    }
}

/// Statistics of the RT thread, sent periodically and at exit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RtStats {
    /// Time since the loop started (ns).
    pub elapsed_ns: u64,
    /// Configured period (ns; 0 = free-running).
    pub period_ns: u64,
    /// Cycles run.
    pub cycles: u64,
    /// Cycles that ended after their next deadline.
    pub overruns: u64,
    /// Periods skipped to recover from overruns (never run as a burst).
    pub skipped_periods: u64,
    /// Heap allocations made on the RT thread since the loop started.
    pub allocations: u64,
    /// Whether the counting allocator is installed (otherwise `allocations` stays 0).
    pub allocator_installed: bool,
    /// Minor + major page faults of the RT thread after warm-up.
    pub page_faults: u64,
    /// Of which major.
    pub page_faults_major: u64,
    /// Page faults during warm-up.
    pub page_faults_warmup: u64,
    /// Time spent in a cycle's work.
    pub cycle_ns: LatencySummary,
    /// Wake-up time minus deadline.
    pub wakeup_latency_ns: LatencySummary,
    /// Ring drops.
    pub ring_drops: RingDrops,
    /// Link counters.
    pub links: LinkTotals,
    /// Robots stopped by the cmd_vel watchdog.
    pub watchdog_stops: u64,
    /// Speed frames written.
    pub speed_frames: u64,
    /// Odometry samples produced.
    pub odometry_samples: u64,
    /// Scheduling obtained.
    pub scheduler: SchedulerMode,
}

/// Why the RT thread stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitReason {
    /// SIGINT or SIGTERM.
    Signal,
    /// [`RtCommand::Shutdown`].
    Requested,
    /// The NRT side dropped its end of the rings.
    NrtGone,
    /// The configured cycle count was reached.
    CycleLimit,
}

/// RT → NRT notifications.
// Fixed-size `Copy` records by design: a ring slot holds the largest (statistics) variant.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RtEvent {
    /// The RT thread is running (first event).
    Started(SetupSummary),
    /// A link was attached to slot `link`; `target` is the connector's target index.
    LinkUp {
        /// Slot.
        link: LinkId,
        /// Connector target index.
        target: u16,
        /// Transport.
        kind: LinkKind,
    },
    /// A link was detached from slot `link`.
    LinkDown {
        /// Slot.
        link: LinkId,
        /// Connector target index.
        target: u16,
        /// Why.
        reason: LinkDownReason,
    },
    /// New odometry of a robot.
    Odometry(OdomSample),
    /// The robot's link went down: its state is stale until its next odometry event.
    RobotStale {
        /// Robot.
        robot: RobotId,
    },
    /// The cmd_vel watchdog stopped a robot.
    WatchdogStop {
        /// Robot.
        robot: RobotId,
    },
    /// Periodic statistics.
    Stats(RtStats),
    /// Last event: the RT thread stopped (robots were sent zero speed).
    Exiting {
        /// Why.
        reason: ExitReason,
    },
}

/// NRT → RT commands.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RtCommand {
    /// Drive a robot slot (replaces its previous configuration, keeps its pose).
    ConfigureRobot {
        /// Slot.
        robot: RobotId,
        /// Mapping.
        config: RobotConfig,
    },
    /// Stop a robot (zero speed) and free its slot.
    RemoveRobot {
        /// Slot.
        robot: RobotId,
    },
    /// Set a robot's pose (odometry restarts from it).
    ResetOdometry {
        /// Slot.
        robot: RobotId,
        /// New pose.
        pose: Pose2,
    },
    /// Close a link (handed back to the connector, which may reconnect it).
    CloseLink {
        /// Slot.
        link: LinkId,
    },
    /// Stop every robot and end the RT thread.
    Shutdown,
}

/// Why a value was refused by [`LiveParams`].
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
pub enum ParamError {
    /// No such robot slot.
    #[error("no robot slot {0}")]
    NoSuchRobot(RobotId),
    /// NaN or infinite.
    #[error("{0} is not a finite number")]
    NotFinite(&'static str),
    /// Outside its valid range.
    #[error("{name} = {value} is out of range")]
    OutOfRange {
        /// Parameter.
        name: &'static str,
        /// Refused value.
        value: f64,
    },
}

/// Quadratic motor calibration `d = q0·r + q1·r·|r|` (r in motor units, d in m/s).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Quadratic {
    /// Linear coefficient (m/s per unit).
    pub q0: f64,
    /// Quadratic coefficient.
    pub q1: f64,
}

/// Calibration and limits of one robot.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RobotCalibration {
    /// Left motor.
    pub left: Quadratic,
    /// Right motor.
    pub right: Quadratic,
    /// Wheel separation (m).
    pub axis_length: f64,
    /// Wheel radius (m), for joint angles.
    pub wheel_radius: f64,
    /// Largest wheel target magnitude sent (units; the firmware nominal maximum is 500).
    pub max_units: f64,
}

impl Default for RobotCalibration {
    /// ROS-Thymio defaults for a real Thymio: q0 = 0.001/2.93, axis 0.0935 m, radius 0.022 m, 500.
    fn default() -> Self {
        let q = Quadratic {
            q0: 0.001 / 2.93,
            q1: 0.0,
        };
        RobotCalibration {
            left: q,
            right: q,
            axis_length: 0.0935,
            wheel_radius: 0.022,
            max_units: 500.0,
        }
    }
}

impl RobotCalibration {
    fn to_array(self) -> [f64; 7] {
        [
            self.left.q0,
            self.left.q1,
            self.right.q0,
            self.right.q1,
            self.axis_length,
            self.wheel_radius,
            self.max_units,
        ]
    }
    fn from_array(a: [f64; 7]) -> Self {
        RobotCalibration {
            left: Quadratic { q0: a[0], q1: a[1] },
            right: Quadratic { q0: a[2], q1: a[3] },
            axis_length: a[4],
            wheel_radius: a[5],
            max_units: a[6],
        }
    }

    /// Checks every value is finite and in range (q0 > 0, lengths > 0, 0 < max ≤ 1000).
    pub fn validate(&self) -> Result<(), ParamError> {
        let names = [
            "q0",
            "q1",
            "q0",
            "q1",
            "axis_length",
            "wheel_radius",
            "max_units",
        ];
        for (v, n) in self.to_array().into_iter().zip(names) {
            if !v.is_finite() {
                return Err(ParamError::NotFinite(n));
            }
        }
        let positive = [
            ("left.q0", self.left.q0),
            ("right.q0", self.right.q0),
            ("axis_length", self.axis_length),
            ("wheel_radius", self.wheel_radius),
            ("max_units", self.max_units),
        ];
        for (name, value) in positive {
            if value <= 0.0 {
                return Err(ParamError::OutOfRange { name, value });
            }
        }
        if self.max_units > 1000.0 {
            return Err(ParamError::OutOfRange {
                name: "max_units",
                value: self.max_units,
            });
        }
        Ok(())
    }
}

/// A sequence lock over `N` f64 values built from atomics only: writers (any thread, they
/// serialise among themselves) never block the reader, and the reader is wait-free: it gets a
/// consistent snapshot or `None` while a write is in progress.
#[derive(Debug)]
pub struct SeqCell<const N: usize> {
    seq: AtomicU64,
    values: [AtomicF64; N],
}

impl<const N: usize> SeqCell<N> {
    /// A cell holding `v` at version 0.
    pub fn new(v: [f64; N]) -> Self {
        SeqCell {
            seq: AtomicU64::new(0),
            values: std::array::from_fn(|i| AtomicF64::new(v[i])),
        }
    }

    /// Stores `v`; the version grows by 2.
    pub fn store(&self, v: [f64; N]) {
        let mut s = self.seq.load(Ordering::Relaxed);
        loop {
            if s & 1 == 1 {
                std::hint::spin_loop();
                s = self.seq.load(Ordering::Relaxed);
                continue;
            }
            match self
                .seq
                .compare_exchange_weak(s, s + 1, Ordering::Acquire, Ordering::Relaxed)
            {
                Ok(_) => break,
                Err(now) => s = now,
            }
        }
        fence(Ordering::Release);
        for (slot, x) in self.values.iter().zip(v) {
            slot.store(x, Ordering::Relaxed);
        }
        self.seq.store(s + 2, Ordering::Release);
    }

    /// A consistent snapshot and its version, or `None` while a write is in progress.
    pub fn load_versioned(&self) -> Option<(u64, [f64; N])> {
        let s1 = self.seq.load(Ordering::Acquire);
        if s1 & 1 == 1 {
            return None;
        }
        let v = std::array::from_fn(|i| self.values[i].load(Ordering::Relaxed));
        fence(Ordering::Acquire);
        let s2 = self.seq.load(Ordering::Relaxed);
        (s1 == s2).then_some((s1, v))
    }

    /// A consistent snapshot, or `None` while a write is in progress.
    pub fn load(&self) -> Option<[f64; N]> {
        self.load_versioned().map(|(_, v)| v)
    }

    /// Version of the last completed store (0 before the first, +2 per store).
    pub fn version(&self) -> u64 {
        self.seq.load(Ordering::Acquire) & !1
    }
}

/// Live parameters of one robot.
#[derive(Debug)]
struct RobotLive {
    calibration: SeqCell<7>,
    cmd_vel: SeqCell<2>,
}

/// Parameters the NRT side changes at run time and the RT thread reads every cycle.
/// Writers take `&self` (share it with `Arc`); readers never wait.
#[derive(Debug)]
pub struct LiveParams {
    watchdog_s: AtomicF64,
    robots: Box<[RobotLive]>,
}

/// Default cmd_vel watchdog (s).
pub const DEFAULT_WATCHDOG_S: f64 = 0.5;

impl LiveParams {
    /// Parameters for `robots` robot slots (at most [`MAX_ROBOTS`]), with default calibration,
    /// zero set-points and the default watchdog.
    pub fn new(robots: usize) -> Self {
        let cal = RobotCalibration::default().to_array();
        LiveParams {
            watchdog_s: AtomicF64::new(DEFAULT_WATCHDOG_S),
            robots: (0..robots.min(MAX_ROBOTS))
                .map(|_| RobotLive {
                    calibration: SeqCell::new(cal),
                    cmd_vel: SeqCell::new([0.0; 2]),
                })
                .collect(),
        }
    }

    /// Number of robot slots.
    pub fn robots(&self) -> usize {
        self.robots.len()
    }

    fn robot(&self, robot: RobotId) -> Result<&RobotLive, ParamError> {
        self.robots
            .get(robot as usize)
            .ok_or(ParamError::NoSuchRobot(robot))
    }

    /// Sets the cmd_vel watchdog (s); 0 disables it.
    pub fn set_watchdog(&self, seconds: f64) -> Result<(), ParamError> {
        if !seconds.is_finite() {
            return Err(ParamError::NotFinite("watchdog"));
        }
        if seconds < 0.0 {
            return Err(ParamError::OutOfRange {
                name: "watchdog",
                value: seconds,
            });
        }
        self.watchdog_s.store(seconds, Ordering::Relaxed);
        Ok(())
    }

    /// The cmd_vel watchdog (s); 0 = disabled.
    pub fn watchdog(&self) -> f64 {
        self.watchdog_s.load(Ordering::Relaxed)
    }

    /// Sets a robot's calibration and limits (validated).
    pub fn set_calibration(&self, robot: RobotId, c: RobotCalibration) -> Result<(), ParamError> {
        c.validate()?;
        self.robot(robot)?.calibration.store(c.to_array());
        Ok(())
    }

    /// A robot's calibration; `None` if no such robot or while it is being written.
    pub fn calibration(&self, robot: RobotId) -> Option<RobotCalibration> {
        let r = self.robots.get(robot as usize)?;
        r.calibration.load().map(RobotCalibration::from_array)
    }

    /// Sets a robot's velocity set-point (latest value wins; each call re-arms the watchdog).
    pub fn set_cmd_vel(&self, robot: RobotId, twist: Twist2) -> Result<(), ParamError> {
        if !twist.linear.is_finite() {
            return Err(ParamError::NotFinite("linear"));
        }
        if !twist.angular.is_finite() {
            return Err(ParamError::NotFinite("angular"));
        }
        self.robot(robot)?
            .cmd_vel
            .store([twist.linear, twist.angular]);
        Ok(())
    }

    /// A robot's last set-point and its version (grows with every set), or `None` if no such
    /// robot or while it is being written.
    pub fn cmd_vel(&self, robot: RobotId) -> Option<(u64, Twist2)> {
        let r = self.robots.get(robot as usize)?;
        r.cmd_vel
            .load_versioned()
            .map(|(v, [linear, angular])| (v, Twist2 { linear, angular }))
    }
}

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
}

impl Default for ChannelConfig {
    fn default() -> Self {
        ChannelConfig {
            frames_to_nrt_bytes: 1 << 18,
            frames_from_nrt_bytes: 1 << 16,
            events: 1024,
            commands: 256,
            robots: MAX_ROBOTS,
        }
    }
}

/// Writes and reads every slot of a fresh ring once, so that neither thread takes a first-touch
/// page fault on it later (a new ring's memory may not be mapped yet).
pub fn prefault_ring<T: Copy>(p: &mut Producer<T>, c: &mut Consumer<T>, filler: T) {
    while p.push(filler).is_ok() {}
    while c.pop().is_ok() {}
}

/// Builds the RT ↔ NRT bundle (allocates the rings once and touches all their memory).
pub fn channels(cfg: &ChannelConfig) -> (RtEnds, NrtEnds) {
    let rx_bytes = cfg.frames_to_nrt_bytes.max(RX_RECORD_HEADER + MAX_FRAME);
    let tx_bytes = cfg.frames_from_nrt_bytes.max(TX_RECORD_HEADER + MAX_FRAME);
    let (mut rx_p, mut rx_c) = RingBuffer::new(rx_bytes);
    let (mut tx_p, mut tx_c) = RingBuffer::new(tx_bytes);
    let (mut ev_p, mut ev_c) = RingBuffer::new(cfg.events.max(1));
    let (mut cmd_p, mut cmd_c) = RingBuffer::new(cfg.commands.max(1));
    prefault_ring(&mut rx_p, &mut rx_c, 0u8);
    prefault_ring(&mut tx_p, &mut tx_c, 0u8);
    prefault_ring(&mut ev_p, &mut ev_c, RtEvent::RobotStale { robot: 0 });
    prefault_ring(&mut cmd_p, &mut cmd_c, RtCommand::Shutdown);
    let params = Arc::new(LiveParams::new(cfg.robots));
    let doorbell = Doorbell::new();
    (
        RtEnds {
            frames_out: rx_p,
            frames_in: tx_c,
            events: ev_p,
            commands: cmd_c,
            params: params.clone(),
            doorbell: doorbell.clone(),
            pushed: false,
        },
        NrtEnds {
            frames_in: rx_c,
            frames_out: tx_p,
            events: ev_c,
            commands: cmd_p,
            params,
            doorbell,
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
    params: Arc<LiveParams>,
    doorbell: Doorbell,
    /// Something was pushed to NRT since the doorbell last rang.
    pushed: bool,
}

/// Why a record from NRT was not a frame (the RT side counts it and drops the ring's content).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("invalid record in the NRT → RT frame ring")]
pub struct InvalidRecord;

impl RtEnds {
    /// Forwards a received frame (header + payload) to NRT; false if the ring is full (dropped).
    pub fn try_forward_frame(&mut self, link: LinkId, t_ns: u64, raw: &[u8]) -> bool {
        let mut rec = [0u8; RX_RECORD_HEADER + MAX_FRAME];
        let n = RX_RECORD_HEADER + raw.len();
        if raw.len() > MAX_FRAME {
            return false;
        }
        rec[0] = link;
        rec[2..10].copy_from_slice(&t_ns.to_le_bytes());
        rec[RX_RECORD_HEADER..n].copy_from_slice(raw);
        let ok = self.frames_out.push_entire_slice(&rec[..n]).is_ok();
        self.pushed |= ok;
        ok
    }

    /// Pops the next frame to write: copies it into `out` and returns its target and length.
    /// On a corrupt record the ring is emptied and `Err(InvalidRecord)` returned.
    pub fn try_pop_outgoing(
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
    pub fn try_push_event(&mut self, ev: RtEvent) -> bool {
        let ok = self.events.push(ev).is_ok();
        self.pushed |= ok;
        ok
    }

    /// Rings the NRT side's doorbell if frames or events were pushed since the last call (once
    /// per RT cycle: one non-blocking write at most).
    pub fn wake_nrt(&mut self) {
        if std::mem::take(&mut self.pushed) {
            self.doorbell.ring();
        }
    }

    /// Pops the next command from NRT.
    pub fn try_pop_command(&mut self) -> Option<RtCommand> {
        self.commands.pop().ok()
    }

    /// Whether the NRT side dropped its half (the command ring is abandoned).
    pub fn nrt_gone(&self) -> bool {
        self.commands.is_abandoned()
    }

    /// The live parameters.
    pub fn params(&self) -> &LiveParams {
        &self.params
    }

    /// A shared handle on the live parameters (taken once, when the RT state is built).
    pub fn params_arc(&self) -> Arc<LiveParams> {
        self.params.clone()
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
    params: Arc<LiveParams>,
    doorbell: Doorbell,
    buf: [u8; RX_RECORD_HEADER + MAX_FRAME],
}

impl NrtEnds {
    /// The next frame received by the RT thread, if any.
    pub fn recv_frame(&mut self) -> Option<ReceivedFrame<'_>> {
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
            link: self.buf[0],
            t_ns: u64::from_le_bytes(t),
            bytes: &self.buf[RX_RECORD_HEADER..total],
        })
    }

    /// Calls `f` for every frame received so far; returns how many.
    pub fn drain_frames(&mut self, mut f: impl FnMut(ReceivedFrame<'_>)) -> usize {
        let mut n = 0;
        while let Some(fr) = self.recv_frame() {
            f(fr);
            n += 1;
        }
        n
    }

    /// Queues one frame (header + payload, validated) to write to `to`.
    pub fn send_frame(&mut self, to: LinkTarget, frame: &[u8]) -> Result<(), SendError> {
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
            .map_err(|_| SendError::Full)
    }

    /// The next event from the RT thread, if any.
    pub fn poll_event(&mut self) -> Option<RtEvent> {
        self.events.pop().ok()
    }

    /// Queues a command for the RT thread.
    pub fn send_command(&mut self, cmd: RtCommand) -> Result<(), SendError> {
        self.commands.push(cmd).map_err(|_| SendError::Full)
    }

    /// Sets a robot's cmd_vel set-point (latest value wins, never blocks).
    pub fn set_cmd_vel(&self, robot: RobotId, twist: Twist2) -> Result<(), ParamError> {
        self.params.set_cmd_vel(robot, twist)
    }

    /// The live parameters (calibration, limits, watchdog, set-points).
    pub fn params(&self) -> &Arc<LiveParams> {
        &self.params
    }

    /// Whether the RT thread dropped its half (it stopped).
    pub fn rt_gone(&self) -> bool {
        self.events.is_abandoned()
    }

    /// The doorbell the RT thread rings when it pushed frames or events (see
    /// [`RtEnds::wake_nrt`]); others may ring it too to wake the NRT loop.
    pub fn doorbell(&self) -> &Doorbell {
        &self.doorbell
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{encode_user_event, HOST_SOURCE};

    fn event(id: u16, args: &[i16]) -> Vec<u8> {
        let mut out = [0u8; MAX_FRAME];
        let n = encode_user_event(HOST_SOURCE, id, args, &mut out).unwrap();
        out[..n].to_vec()
    }

    #[test]
    fn frames_cross_both_ways_whole_and_in_order() {
        let (mut rt, mut nrt) = channels(&ChannelConfig {
            frames_to_nrt_bytes: 600,
            frames_from_nrt_bytes: 600,
            ..Default::default()
        });
        // Many wrap-arounds of the small rings.
        for i in 0..200i16 {
            let f = event(3, &[i, -i, i / 2]);
            assert!(rt.try_forward_frame((i % 7) as u8, 1000 + i as u64, &f));
            let got = nrt.recv_frame().unwrap();
            assert_eq!(
                (got.link, got.t_ns, got.bytes),
                ((i % 7) as u8, 1000 + i as u64, &f[..])
            );
            assert!(nrt.recv_frame().is_none());

            let to = if i % 2 == 0 {
                LinkTarget::All
            } else {
                LinkTarget::One(5)
            };
            nrt.send_frame(to, &f).unwrap();
            let mut out = [0u8; MAX_FRAME];
            let (t, n) = rt.try_pop_outgoing(&mut out).unwrap().unwrap();
            assert_eq!((t, &out[..n]), (to, &f[..]));
            assert!(rt.try_pop_outgoing(&mut out).is_none());
        }
    }

    #[test]
    fn a_record_pushed_while_rt_looks_is_never_taken_for_garbage() {
        // NRT pushes while RT polls a nearly always empty ring: every frame arrives, in order,
        // and no record is ever reported invalid (the fill level is read once per pop).
        let (mut rt, mut nrt) = channels(&ChannelConfig {
            frames_from_nrt_bytes: 256,
            ..Default::default()
        });
        const N: i16 = 20_000;
        let producer = std::thread::spawn(move || {
            for round in 0..20 {
                for i in 0..N {
                    let f = event(round, &[i]);
                    while nrt.send_frame(LinkTarget::One(1), &f) == Err(SendError::Full) {
                        std::hint::spin_loop();
                    }
                }
            }
            nrt
        });
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        let mut out = [0u8; MAX_FRAME];
        for round in 0..20 {
            for i in 0..N {
                let (to, n) = loop {
                    match rt.try_pop_outgoing(&mut out) {
                        Some(r) => break r.expect("a whole record taken for garbage"),
                        None => assert!(std::time::Instant::now() < deadline, "frame lost"),
                    }
                };
                assert_eq!(
                    (to, &out[..n]),
                    (LinkTarget::One(1), &event(round, &[i])[..])
                );
            }
        }
        producer.join().unwrap();
    }

    #[test]
    fn full_rings_refuse_without_tearing() {
        let (mut rt, mut nrt) = channels(&ChannelConfig {
            frames_to_nrt_bytes: 10 + MAX_FRAME,
            frames_from_nrt_bytes: 1 + MAX_FRAME,
            ..Default::default()
        });
        let big = event(1, &[7; 258]);
        assert!(rt.try_forward_frame(0, 1, &big));
        assert!(!rt.try_forward_frame(0, 2, &big));
        assert_eq!(nrt.recv_frame().unwrap().t_ns, 1);
        assert!(nrt.recv_frame().is_none());

        nrt.send_frame(LinkTarget::One(1), &big).unwrap();
        assert_eq!(
            nrt.send_frame(LinkTarget::One(1), &big),
            Err(SendError::Full)
        );
    }

    #[test]
    fn send_frame_validates() {
        let (_rt, mut nrt) = channels(&ChannelConfig::default());
        let f = event(1, &[1, 2]);
        assert!(matches!(
            nrt.send_frame(LinkTarget::All, &f[..7]),
            Err(SendError::Invalid(FrameError::Incomplete { .. }))
        ));
        let mut two = f.clone();
        two.extend_from_slice(&f);
        assert_eq!(
            nrt.send_frame(LinkTarget::All, &two),
            Err(SendError::TrailingBytes(f.len()))
        );
        assert!(matches!(
            nrt.send_frame(LinkTarget::All, &[0xFF, 0xFF, 0, 0, 1, 0]),
            Err(SendError::Invalid(FrameError::Oversize(_)))
        ));
    }

    #[test]
    fn abandonment_is_visible_both_ways() {
        let (rt, nrt) = channels(&ChannelConfig::default());
        assert!(!rt.nrt_gone() && !nrt.rt_gone());
        drop(nrt);
        assert!(rt.nrt_gone());
        let (rt, nrt) = channels(&ChannelConfig::default());
        drop(rt);
        assert!(nrt.rt_gone());
    }

    #[test]
    fn events_and_commands_are_fifo_and_bounded() {
        let (mut rt, mut nrt) = channels(&ChannelConfig {
            events: 2,
            commands: 1,
            ..Default::default()
        });
        assert!(rt.try_push_event(RtEvent::RobotStale { robot: 1 }));
        assert!(rt.try_push_event(RtEvent::WatchdogStop { robot: 2 }));
        assert!(!rt.try_push_event(RtEvent::RobotStale { robot: 3 }));
        assert_eq!(nrt.poll_event(), Some(RtEvent::RobotStale { robot: 1 }));
        assert_eq!(nrt.poll_event(), Some(RtEvent::WatchdogStop { robot: 2 }));
        assert_eq!(nrt.poll_event(), None);
        nrt.send_command(RtCommand::Shutdown).unwrap();
        assert_eq!(nrt.send_command(RtCommand::Shutdown), Err(SendError::Full));
        assert_eq!(rt.try_pop_command(), Some(RtCommand::Shutdown));
        assert_eq!(rt.try_pop_command(), None);
    }

    #[test]
    fn live_params_validate_and_version() {
        let p = LiveParams::new(2);
        assert_eq!(p.robots(), 2);
        assert_eq!(p.cmd_vel(0).unwrap().0, 0);
        p.set_cmd_vel(
            1,
            Twist2 {
                linear: 0.1,
                angular: -0.5,
            },
        )
        .unwrap();
        let (v, t) = p.cmd_vel(1).unwrap();
        assert_eq!((v, t.linear, t.angular), (2, 0.1, -0.5));
        assert_eq!(
            p.set_cmd_vel(2, Twist2::default()),
            Err(ParamError::NoSuchRobot(2))
        );
        assert_eq!(
            p.set_cmd_vel(
                0,
                Twist2 {
                    linear: f64::NAN,
                    angular: 0.0
                }
            ),
            Err(ParamError::NotFinite("linear"))
        );
        let mut c = RobotCalibration {
            max_units: 2000.0,
            ..Default::default()
        };
        assert!(matches!(
            p.set_calibration(0, c),
            Err(ParamError::OutOfRange { .. })
        ));
        c.max_units = 300.0;
        p.set_calibration(0, c).unwrap();
        assert_eq!(p.calibration(0), Some(c));
        assert_eq!(p.calibration(1), Some(RobotCalibration::default()));
        assert!(p.set_watchdog(-1.0).is_err());
        p.set_watchdog(0.25).unwrap();
        assert_eq!(p.watchdog(), 0.25);
    }

    #[test]
    fn seq_cell_never_tears_under_a_concurrent_writer() {
        let cell = Arc::new(SeqCell::<4>::new([0.0; 4]));
        let w = cell.clone();
        let writer = std::thread::spawn(move || {
            for i in 1..=200_000u32 {
                let x = i as f64;
                w.store([x, x, x, x]);
            }
        });
        let mut seen = 0u64;
        let mut last = 0.0;
        while !writer.is_finished() || seen == 0 {
            if let Some(v) = cell.load() {
                assert!(v.iter().all(|&x| x == v[0]), "torn snapshot {v:?}");
                assert!(v[0] >= last, "went backwards");
                last = v[0];
                seen += 1;
            }
        }
        writer.join().unwrap();
        assert_eq!(cell.load(), Some([200_000.0; 4]));
        assert_eq!(cell.version(), 400_000);
    }

    #[test]
    fn the_rt_side_rings_the_doorbell_only_after_pushing() {
        let (mut rt, nrt) = channels(&ChannelConfig::default());
        let bell = nrt.doorbell().clone();
        rt.wake_nrt();
        assert!(
            !bell.wait(std::time::Duration::from_millis(1)),
            "nothing pushed"
        );
        assert!(rt.try_push_event(RtEvent::RobotStale { robot: 0 }));
        assert!(rt.try_forward_frame(0, 1, &event(1, &[2])));
        rt.wake_nrt();
        assert!(bell.wait(std::time::Duration::from_secs(5)));
        rt.wake_nrt();
        assert!(
            !bell.wait(std::time::Duration::from_millis(1)),
            "rung once per push batch"
        );
    }

    #[test]
    fn setup_warnings_decode_errno() {
        let s = SetupSummary {
            cpu: Some(1),
            affinity: SetupStatus::Ok,
            priority: 50,
            scheduler: SetupStatus::Failed { errno: 1 },
            memory_lock: SetupStatus::Failed { errno: 12 },
            dma_latency: SetupStatus::NotRequested,
            stack_prefault_bytes: 0,
            realtime_kernel: false,
        };
        assert_eq!(s.mode(), SchedulerMode::Fallback);
        let w = s.warnings();
        assert_eq!(w.len(), 2);
        assert!(
            w[0].contains("SCHED_FIFO") && w[0].contains("not permitted"),
            "{}",
            w[0]
        );
        assert!(
            w[1].contains("mlockall") && w[1].contains("memory"),
            "{}",
            w[1]
        );
    }
}
