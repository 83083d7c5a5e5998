//! Counters and histograms of the RT loop, and their periodic snapshot ([`RtStats`]).

use super::budget::ControllerClocks;
use crate::alloc;
use crate::hist::Histogram;
use handoff::{LinkTotals, RingDrops, RtHops, RtStats, SchedulerMode};
use nix::sys::resource::{getrusage, UsageWho};

/// Minor and major page faults of the calling thread.
pub fn thread_faults() -> (u64, u64) {
    match getrusage(UsageWho::RUSAGE_THREAD) {
        Ok(u) => (
            u.minor_page_faults().max(0) as u64,
            u.major_page_faults().max(0) as u64,
        ),
        Err(_) => (0, 0),
    }
}

/// Everything the loop counts.
pub(crate) struct Stats {
    pub cycle: Histogram,
    pub wakeup: Histogram,
    /// Bytes found readable (the wake-up) → their frame decoded, per frame.
    pub wire_to_decoded: Histogram,
    /// Set-point received by NRT → its speed frame accepted by the link's write.
    pub cmd_to_wire: Histogram,
    /// Wake-ups on I/O between two periodic cycles (not counted in `cycles`).
    pub io_wakes: u64,
    /// Periods in which the I/O wake-ups reached their bound (the rest waited a period).
    pub io_wake_limited: u64,
    pub cycles: u64,
    /// Periods the loop slept through without a cycle while quiet (`RtLoop::quiet_until`).
    pub slept: u64,
    pub overruns: u64,
    pub skipped: u64,
    pub watchdog_stops: u64,
    pub speed_frames: u64,
    pub odometry_samples: u64,
    pub drops: RingDrops,
    pub period_ns: u64,
    pub start_ns: u64,
    pub last_report_ns: u64,
    pub scheduler: SchedulerMode,
    /// Every RT controller's time and budget record.
    pub controllers: ControllerClocks,
    allocs_at_start: u64,
    faults_at_start: (u64, u64),
    faults_after_warmup: Option<(u64, u64)>,
    /// Allocations and faults when the loop ended (the exit path is not steady state).
    frozen: Option<(u64, (u64, u64))>,
}

impl Stats {
    /// Counters for a loop of period `period_ns` whose controllers are timed in `controllers`.
    pub fn new(period_ns: u64, controllers: ControllerClocks) -> Self {
        Stats {
            cycle: Histogram::new(),
            wakeup: Histogram::new(),
            wire_to_decoded: Histogram::new(),
            cmd_to_wire: Histogram::new(),
            io_wakes: 0,
            io_wake_limited: 0,
            cycles: 0,
            slept: 0,
            overruns: 0,
            skipped: 0,
            watchdog_stops: 0,
            speed_frames: 0,
            odometry_samples: 0,
            drops: RingDrops::default(),
            period_ns,
            start_ns: 0,
            last_report_ns: 0,
            scheduler: SchedulerMode::Fallback,
            controllers,
            allocs_at_start: 0,
            faults_at_start: (0, 0),
            faults_after_warmup: None,
            frozen: None,
        }
    }

    /// Baselines taken on the RT thread when the loop starts.
    pub fn start(&mut self, now_ns: u64, scheduler: SchedulerMode) {
        self.start_ns = now_ns;
        self.last_report_ns = now_ns;
        self.scheduler = scheduler;
        self.allocs_at_start = alloc::current_thread_allocations();
        self.faults_at_start = thread_faults();
    }

    /// Periods elapsed: cycles run and periods slept through.
    pub fn periods(&self) -> u64 {
        self.cycles + self.slept
    }

    /// Whether warm-up is over.
    pub fn warm(&self) -> bool {
        self.faults_after_warmup.is_some()
    }

    /// Warm-up is over: page faults count from now (called on the RT thread).
    pub fn end_warmup(&mut self) {
        self.faults_after_warmup = Some(thread_faults());
    }

    /// The loop ended: later allocations and faults (exit path) are not counted.
    pub fn freeze(&mut self) {
        self.frozen = Some((alloc::current_thread_allocations(), thread_faults()));
    }

    /// A snapshot (reads the thread's page faults: a syscall, done once per report);
    /// `odometry_out_drops` as counted by the odometry hand-off ring.
    pub fn snapshot(&self, now_ns: u64, links: LinkTotals, odometry_out_drops: u64) -> RtStats {
        let (allocs, (minor, major)) = self
            .frozen
            .unwrap_or_else(|| (alloc::current_thread_allocations(), thread_faults()));
        let total = minor + major;
        let start = self.faults_at_start.0 + self.faults_at_start.1;
        let (warm, after, after_major) = match self.faults_after_warmup {
            Some((wmin, wmaj)) => (
                (wmin + wmaj).saturating_sub(start),
                total.saturating_sub(wmin + wmaj),
                major.saturating_sub(wmaj),
            ),
            None => (total.saturating_sub(start), 0, 0),
        };
        RtStats {
            elapsed_ns: now_ns.saturating_sub(self.start_ns),
            period_ns: self.period_ns,
            cycles: self.cycles,
            overruns: self.overruns,
            skipped_periods: self.skipped,
            allocations: allocs.saturating_sub(self.allocs_at_start),
            allocator_installed: alloc::is_installed(),
            page_faults: after,
            page_faults_major: after_major,
            page_faults_warmup: warm,
            cycle_ns: self.cycle.summary(),
            wakeup_latency_ns: self.wakeup.summary(),
            ring_drops: self.drops,
            links,
            watchdog_stops: self.watchdog_stops,
            speed_frames: self.speed_frames,
            odometry_samples: self.odometry_samples,
            scheduler: self.scheduler,
            hops: RtHops {
                wire_to_decoded: self.wire_to_decoded.summary(),
                cmd_to_wire: self.cmd_to_wire.summary(),
                odometry_out_drops,
            },
            controllers: self.controllers.table(),
        }
    }
}
