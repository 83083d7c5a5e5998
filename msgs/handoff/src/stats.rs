//! Statistics and setup outcome of the RT thread (sent to NRT in [`super::RtEvent`]).

use super::control::MAX_CONTROLLERS;

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
    /// Frames from NRT not written because the robots were being stopped (after a signal only
    /// those that stop or reset a VM go out).
    pub refused_at_exit: u64,
}

impl RingDrops {
    /// Sum of all drops.
    pub fn total(&self) -> u64 {
        self.frames_to_nrt
            + self.events
            + self.tx_overflow
            + self.invalid_from_nrt
            + self.refused_at_exit
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SchedulerMode {
    /// SCHED_FIFO at this priority.
    Fifo {
        /// Priority 1–99.
        priority: u8,
    },
    /// SCHED_OTHER (no privilege, or not requested).
    #[default]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
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
    /// The hops the RT thread owns, timed per sample since the loop started.
    pub hops: RtHops,
    /// The RT controllers' time, in registry order (the first `controller_count`).
    pub controllers: ControllerTimesTable,
}

/// Every RT controller's time and budget record, in registry (owner id) order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ControllerTimesTable {
    /// Controllers in the registry (the first this many of `times` are meaningful).
    pub count: u8,
    /// `update`'s budget per call (ns; 0: no budget).
    pub budget_ns: u64,
    /// Consecutive calls over the budget that stop a controller.
    pub overruns_to_stop: u32,
    /// Per controller.
    pub times: [ControllerTimes; MAX_CONTROLLERS],
}

impl ControllerTimesTable {
    /// The meaningful rows, with their controller index.
    pub fn rows(&self) -> impl Iterator<Item = (usize, &ControllerTimes)> {
        self.times.iter().take(self.count as usize).enumerate()
    }
}

/// One RT controller's time on the RT thread since the loop started, summed over the robots
/// (CLOCK_MONOTONIC ns around each call).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ControllerTimes {
    /// `update` (the owner's command) calls and their duration.
    pub update: TimeSummary,
    /// `update` calls longer than the budget.
    pub overruns: u64,
    /// Times it was stopped for exceeding its budget on consecutive calls.
    pub budget_stops: u64,
    /// `serve` calls (every cycle, owner or not) and their duration, timed apart from `update`
    /// (not budgeted).
    pub serve: TimeSummary,
}

/// A compact [`LatencySummary`] (ns): what `--report` and `/diagnostics` show of a controller,
/// small enough for [`MAX_CONTROLLERS`] of them in every statistics record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TimeSummary {
    /// Samples.
    pub count: u64,
    /// Median.
    pub p50: u64,
    /// 99th percentile.
    pub p99: u64,
    /// Largest sample (exact).
    pub max: u64,
}

impl From<LatencySummary> for TimeSummary {
    fn from(s: LatencySummary) -> Self {
        TimeSummary {
            count: s.count,
            p50: s.p50,
            p99: s.p99,
            max: s.max,
        }
    }
}

/// Latency of the hops the ROS side owns (ns, CLOCK_MONOTONIC), timed by its threads and shown
/// beside [`RtHops`] in `--report` and `/diagnostics`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RosHops {
    /// Odometry handed over by the RT thread → the publisher thread starts publishing it.
    pub handed_to_publish: LatencySummary,
    /// `odom` publish called → `odom`, `/tf` and `joint_states` returned.
    pub publish: LatencySummary,
    /// `cmd_vel` taken from rcl → set-point stored (and the RT thread rung).
    pub cmd_vel_to_set_point: LatencySummary,
    /// Odometry bytes found readable by the RT thread → its `odom` publish returned: the driver's whole part
    /// of the wire → `odom` hop.
    pub wire_to_odom: LatencySummary,
    /// The slowest odometry samples of the run by [`Self::wire_to_odom`], slowest first (unused entries have
    /// `wire_ns == 0`): where each one's time went.
    pub slowest: [OdomTrace; SLOWEST_ODOM],
}

/// How many of the slowest odometry samples [`RosHops::slowest`] keeps.
pub const SLOWEST_ODOM: usize = 32;

/// The path of one odometry sample through the driver (CLOCK_MONOTONIC ns): each stamp is where the previous
/// hop ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct OdomTrace {
    /// The RT thread found its bytes readable (the wake-up that read them).
    pub wire_ns: u64,
    /// Its frame decoded and integrated (RT thread).
    pub decoded_ns: u64,
    /// Handed to the publisher thread (RT thread).
    pub handed_ns: u64,
    /// The publisher thread started publishing it.
    pub publish_ns: u64,
    /// Its `odom` publish returned.
    pub odom_ns: u64,
}

impl OdomTrace {
    /// Wire → `odom` published (ns).
    pub fn total_ns(&self) -> u64 {
        self.odom_ns.saturating_sub(self.wire_ns)
    }
}

/// Latency of the hops the RT thread owns (ns, CLOCK_MONOTONIC), for `--report` and
/// `/diagnostics`: where time goes between the wire and ROS on the user's machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RtHops {
    /// Bytes found readable (the wake-up that read them) → their frame decoded and acted on.
    pub wire_to_decoded: LatencySummary,
    /// A set-point received by the NRT side (its stamp) → the speed frame written to the link.
    pub cmd_to_wire: LatencySummary,
    /// Odometry samples the publisher thread could not take (its ring was full).
    pub odometry_out_drops: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

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
