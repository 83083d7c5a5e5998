//! The pinned RT loop: absolute deadlines on CLOCK_MONOTONIC, overruns counted and skipped
//! (never a burst), and per cycle: take offered links, drain every link without blocking,
//! reassemble and decode frames, handle odometry/proximity, forward every frame to NRT, apply
//! NRT commands and frames, run the set-point watchdog and the controllers, map velocities to
//! wheel targets, write, hand dead links back, report statistics.
//!
//! Nothing in a cycle allocates, frees, locks or blocks; everything is preallocated in
//! [`RtLoop::new`] (NRT). Every zero speed (cmd_vel watchdog, a stop set-point, a robot removed,
//! the first write after its link came back, exit) also writes the robot's motor targets
//! directly (SET_VARIABLES, which a stopped VM cannot ignore) and reads them back; a robot is
//! re-sent its targets every `speed_refresh` while it moves (feeding the on-robot watchdog of
//! the driver script) and until its stop is read back. On exit (signal, shutdown command, NRT
//! gone) every robot is stopped so, flushed and confirmed within a bound (`rtloop/exit.rs`).

mod exit;
mod slots;
mod stats;

use crate::alloc;
use crate::clock::{monotonic_ns, sleep_until, SleepError};
use crate::handoff::{LinkReturn, RtLinkPort};
use crate::robot::{CmdUpdate, Robot};
use crate::rosrt::Controller;
use crate::sched::{self, RtSetup};
use crate::signals;
use msgs::handoff::{
    ExitReason, LinkDownReason, LinkId, LinkTarget, OdomSample, RobotId, RtCommand, RtEnds,
    RtEvent, RtStats, SetupSummary, MAX_LINKS,
};
use msgs::wire::{kind, Frame, Words, MAX_FRAME};
use slots::{QueueError, Slots};
use stats::Stats;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

pub use exit::StopOutcome;
pub use stats::thread_faults;

/// Most commands and outgoing frames taken from NRT per cycle (the rest wait a cycle).
const MAX_INPUTS_PER_CYCLE: usize = 256;

/// Configuration of the RT loop (fixed for its lifetime; live values are in `RtLiveParams`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RtConfig {
    /// Cycle period; zero = free-running (tests, benchmarks).
    pub period: Duration,
    /// Period of the statistics sent to NRT.
    pub stats_period: Duration,
    /// Cycles before page faults count as steady state (warm-up ends at the first statistics
    /// report after them).
    pub warmup_cycles: u64,
    /// Link slots (at most [`MAX_LINKS`]).
    pub max_links: usize,
    /// Transmit buffer per link (bytes).
    pub tx_buffer: usize,
    /// Bytes read per link per cycle at most.
    pub read_budget: usize,
    /// Source id of the frames the RT thread writes.
    pub host_source: u16,
    /// Minimum interval between two speed frames of a robot (stops are never delayed).
    pub min_speed_interval: Duration,
    /// Re-send a moving robot's targets this often (lossy radio links); zero = never.
    pub speed_refresh: Duration,
    /// Longest wait for the stop frames to be written at exit.
    pub exit_flush_timeout: Duration,
    /// Stop on SIGINT/SIGTERM (with [`signals::install_stop_handlers`]).
    pub honor_signals: bool,
    /// Stop after this many cycles.
    pub max_cycles: Option<u64>,
    /// Thread setup.
    pub setup: RtSetup,
    /// Stack size of the spawned thread (above `setup.prefault_stack`).
    pub stack_size: usize,
    /// Ring the NRT side's doorbell at the end of a cycle that pushed frames or events (one
    /// non-blocking eventfd write); `false`: never wake anyone, NRT polls.
    pub wake_nrt: bool,
}

impl Default for RtConfig {
    fn default() -> Self {
        RtConfig {
            period: Duration::from_millis(1),
            stats_period: Duration::from_secs(1),
            warmup_cycles: 1000,
            max_links: MAX_LINKS,
            tx_buffer: 16 * 1024,
            read_budget: 16 * 1024,
            host_source: msgs::wire::HOST_SOURCE,
            min_speed_interval: Duration::from_millis(10),
            speed_refresh: Duration::ZERO,
            exit_flush_timeout: Duration::from_millis(200),
            honor_signals: true,
            max_cycles: None,
            setup: RtSetup::default(),
            stack_size: 2 * 1024 * 1024,
            wake_nrt: true,
        }
    }
}

/// What the RT thread leaves when it ends.
#[derive(Debug)]
pub struct RtExit {
    /// Why it stopped.
    pub reason: ExitReason,
    /// What the thread setup obtained.
    pub setup: SetupSummary,
    /// Final statistics.
    pub stats: RtStats,
    /// Last odometry of every robot that had some.
    pub odometry: Vec<OdomSample>,
    /// Links that could not be handed back through the port (drop them).
    pub links: Vec<LinkReturn>,
    /// The exit stop of every robot driven at the end: whether its zero speed was confirmed.
    pub stops: Vec<StopOutcome>,
}

/// The RT loop and all its preallocated state.
pub struct RtLoop {
    cfg: RtConfig,
    ends: RtEnds,
    port: RtLinkPort,
    slots: Slots,
    robots: Box<[Robot]>,
    controllers: Vec<Box<dyn Controller>>,
    stats: Stats,
    stop: Arc<AtomicBool>,
    shutdown: bool,
    frame: Box<[u8; MAX_FRAME]>,
}

impl std::fmt::Debug for RtLoop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RtLoop")
            .field("cfg", &self.cfg)
            .finish_non_exhaustive()
    }
}

/// Handle on a spawned RT thread.
#[derive(Debug)]
pub struct RtHandle {
    stop: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<RtExit>,
}

impl RtHandle {
    /// Asks the thread to stop (it sends zero speeds first).
    pub fn stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
    }

    /// Whether the thread has ended.
    pub fn is_finished(&self) -> bool {
        self.thread.is_finished()
    }

    /// Waits for the thread and returns what it left (`Err` only if it panicked).
    pub fn join(self) -> std::thread::Result<RtExit> {
        self.thread.join()
    }
}

/// Builds the loop and runs it on a new thread named `thymio-rt`.
pub fn spawn(
    cfg: RtConfig,
    ends: RtEnds,
    port: RtLinkPort,
    controllers: Vec<Box<dyn Controller>>,
) -> std::io::Result<RtHandle> {
    let rt = RtLoop::new(cfg, ends, port, controllers);
    let stop = rt.stop_flag();
    let thread = std::thread::Builder::new()
        .name("thymio-rt".into())
        .stack_size(cfg.stack_size.max(cfg.setup.prefault_stack + 256 * 1024))
        .spawn(move || rt.run())?;
    Ok(RtHandle { stop, thread })
}

/// A frame buffer whose page is written now (a zeroed allocation may be left unmapped).
fn touched_frame() -> Box<[u8; MAX_FRAME]> {
    let mut b = Box::new([0u8; MAX_FRAME]);
    std::hint::black_box(&mut b[..]).fill(1);
    b.fill(0);
    b
}

fn ns(d: Duration) -> u64 {
    d.as_nanos().min(u64::MAX as u128) as u64
}

impl RtLoop {
    /// Preallocates everything (NRT side).
    pub fn new(
        cfg: RtConfig,
        mut ends: RtEnds,
        port: RtLinkPort,
        controllers: Vec<Box<dyn Controller>>,
    ) -> Self {
        let robots = (0..ends.rt_params().robots())
            .map(|i| Robot::new(RobotId(i as u8)))
            .collect();
        RtLoop {
            slots: Slots::new(cfg.max_links.clamp(1, MAX_LINKS), cfg.tx_buffer),
            stats: Stats::new(ns(cfg.period)),
            cfg,
            ends,
            port,
            robots,
            controllers,
            stop: Arc::new(AtomicBool::new(false)),
            shutdown: false,
            frame: touched_frame(),
        }
    }

    /// The flag that stops the loop (shared with [`RtHandle`]).
    pub fn stop_flag(&self) -> Arc<AtomicBool> {
        self.stop.clone()
    }

    fn push_event(&mut self, ev: RtEvent) {
        if !self.ends.rt_push_event(ev) {
            self.stats.drops.events += 1;
        }
    }

    /// Runs on the calling thread until a stop condition; sends zero speeds before returning.
    pub fn run(mut self) -> RtExit {
        let (setup, _dma) = sched::setup_current_thread(&self.cfg.setup);
        self.push_event(RtEvent::Started(setup));
        self.wake_nrt();
        alloc::mark_current_thread_rt(true);
        let start = monotonic_ns();
        self.stats.start(start, setup.mode());
        let period = ns(self.cfg.period);
        let mut next = start + period;
        let reason = loop {
            let wake = if period > 0 {
                self.sleep_until(next);
                let w = monotonic_ns();
                self.stats.wakeup.record(w.saturating_sub(next));
                w
            } else {
                monotonic_ns()
            };
            self.cycle(wake);
            let end = monotonic_ns();
            self.stats.cycle.record(end.saturating_sub(wake));
            self.stats.cycles += 1;
            if let Some(r) = self.exit_reason() {
                self.stats.freeze();
                break r;
            }
            if period > 0 {
                next += period;
                if end > next {
                    let missed = (end - next) / period + 1;
                    self.stats.overruns += 1;
                    self.stats.skipped += missed;
                    next += missed * period;
                }
            }
        };
        self.stop_robots();
        let stats = self.finish(reason);
        alloc::mark_current_thread_rt(false);
        self.into_exit(reason, setup, stats)
    }

    fn sleep_until(&self, deadline: u64) {
        loop {
            match sleep_until(deadline) {
                Err(SleepError::Interrupted) if !self.stop_requested() => continue,
                _ => return,
            }
        }
    }

    fn stop_requested(&self) -> bool {
        self.stop.load(Ordering::Relaxed) || (self.cfg.honor_signals && signals::stop_signalled())
    }

    fn exit_reason(&self) -> Option<ExitReason> {
        if self.shutdown || self.stop.load(Ordering::Relaxed) {
            Some(ExitReason::Requested)
        } else if self.cfg.honor_signals && signals::stop_signalled() {
            Some(ExitReason::Signal)
        } else if self.ends.rt_peer_gone() {
            Some(ExitReason::NrtGone)
        } else if self.cfg.max_cycles.is_some_and(|m| self.stats.cycles >= m) {
            Some(ExitReason::CycleLimit)
        } else {
            None
        }
    }

    /// One cycle at time `now_ns` (public for benchmarks; `run` calls it).
    pub fn cycle(&mut self, now_ns: u64) {
        self.accept_links();
        self.read_links();
        self.apply_commands();
        self.apply_outgoing();
        self.drive_robots(now_ns);
        self.slots.flush_all();
        self.retire_dead_links();
        if now_ns.saturating_sub(self.stats.last_report_ns) >= ns(self.cfg.stats_period) {
            self.stats.last_report_ns = now_ns;
            let s = self.stats.snapshot(now_ns, self.slots.totals());
            self.push_event(RtEvent::Stats(s));
            // Warm-up ends after enough cycles AND one report, so that the report path itself
            // has run once before page faults count.
            if !self.stats.warm() && self.stats.cycles >= self.cfg.warmup_cycles {
                self.stats.end_warmup();
            }
        }
        self.wake_nrt();
    }

    fn wake_nrt(&mut self) {
        if self.cfg.wake_nrt {
            self.ends.rt_wake_nrt();
        }
    }

    fn accept_links(&mut self) {
        // Only take an offer when its return is guaranteed to fit.
        while self.port.rt_return_room() > 0 {
            let Some(offer) = self.port.rt_take_offer() else {
                break;
            };
            match self.slots.attach(offer.target, offer.link) {
                Ok(link) => {
                    let kind = self.slots.slots[link.index()].kind;
                    self.push_event(RtEvent::LinkUp {
                        link,
                        target: offer.target,
                        kind,
                    });
                }
                Err(link) => {
                    let _ = self.port.rt_give_back(LinkReturn {
                        target: offer.target,
                        link,
                        reason: LinkDownReason::NoSlot,
                    });
                }
            }
        }
    }

    fn read_links(&mut self) {
        let RtLoop {
            slots,
            ends,
            robots,
            stats,
            cfg,
            ..
        } = self;
        slots.read_all(cfg.read_budget, |link, t, frame: &Frame<'_>| {
            if !ends.rt_push_frame(link, t, frame.raw()) {
                stats.drops.frames_to_nrt += 1;
            }
            if frame.kind == kind::VARIABLES && frame.payload.len() >= 2 {
                let start = u16::from_le_bytes([frame.payload[0], frame.payload[1]]);
                let values = Words::from_le_bytes(&frame.payload[2..]);
                for r in robots.iter_mut() {
                    r.on_variables(link, frame.source, start, values);
                }
                return;
            }
            if !frame.is_user_event() {
                return;
            }
            let args = Words::from_le_bytes(frame.payload);
            for r in robots.iter_mut() {
                if let Some(s) =
                    r.on_user_event(link, t, frame.source, frame.kind, args, ends.rt_params())
                {
                    stats.odometry_samples += 1;
                    ends.rt_publish_odometry(s, t);
                    if !ends.rt_push_event(RtEvent::Odometry(s)) {
                        stats.drops.events += 1;
                    }
                }
                if let Some(p) = r.take_proximity() {
                    if !ends.rt_push_event(RtEvent::Proximity(p)) {
                        stats.drops.events += 1;
                    }
                }
            }
        });
    }

    fn apply_commands(&mut self) {
        for _ in 0..MAX_INPUTS_PER_CYCLE {
            let Some(cmd) = self.ends.rt_pop_command() else {
                break;
            };
            match cmd {
                RtCommand::ConfigureRobot { robot, config } => {
                    if let Some(r) = self.robots.get_mut(robot.index()) {
                        r.configure(config);
                    }
                }
                RtCommand::RemoveRobot { robot } => {
                    if (robot.index()) < self.robots.len() {
                        self.send_stop(robot.index());
                        self.robots[robot.index()].clear();
                    }
                }
                RtCommand::ResetOdometry { robot, pose } => {
                    if let Some(r) = self.robots.get_mut(robot.index()) {
                        r.reset_odometry(pose);
                    }
                }
                RtCommand::CloseLink { link } => {
                    if let Some(s) = self.slots.slots.get_mut(link.index()) {
                        if s.live() {
                            s.dead = Some(LinkDownReason::Requested);
                        }
                    }
                }
                RtCommand::Shutdown => self.shutdown = true,
            }
        }
    }

    fn apply_outgoing(&mut self) {
        for _ in 0..MAX_INPUTS_PER_CYCLE {
            let (target, n) = match self.ends.rt_pop_frame(&mut self.frame) {
                None => break,
                Some(Err(_)) => {
                    self.stats.drops.invalid_from_nrt += 1;
                    continue;
                }
                Some(Ok(x)) => x,
            };
            let frame = &self.frame[..n];
            match target {
                LinkTarget::One(l) => match self.slots.queue(l, frame) {
                    Ok(()) => {}
                    Err(QueueError::Full) => self.stats.drops.tx_overflow += 1,
                    Err(QueueError::NoLink) => self.stats.drops.invalid_from_nrt += 1,
                },
                LinkTarget::All => {
                    let (_, full) = self.slots.queue_all(frame);
                    self.stats.drops.tx_overflow += full as u64;
                }
            }
        }
    }

    /// Queues `frame[..n]` on `link` (or on every live link); true if at least one took it.
    fn queue_robot_frame(&mut self, link: Option<LinkId>, n: usize) -> bool {
        let frame = &self.frame[..n];
        match link {
            Some(l) => match self.slots.queue(l, frame) {
                Ok(()) => true,
                Err(QueueError::Full) => {
                    self.stats.drops.tx_overflow += 1;
                    false
                }
                Err(QueueError::NoLink) => false,
            },
            None => {
                let (ok, full) = self.slots.queue_all(frame);
                self.stats.drops.tx_overflow += full as u64;
                ok > 0
            }
        }
    }

    fn drive_robots(&mut self, now: u64) {
        let wd = self.ends.rt_params().rt_watchdog();
        let wd_ns = if wd > 0.0 { (wd * 1e9) as u64 } else { 0 };
        let min_gap = ns(self.cfg.min_speed_interval);
        let refresh = ns(self.cfg.speed_refresh);
        for i in 0..self.robots.len() {
            if self.robots[i].config().is_none() {
                continue;
            }
            if self.robots[i].poll_set_point(self.ends.rt_params(), now, wd_ns)
                == CmdUpdate::WatchdogStop
            {
                self.stats.watchdog_stops += 1;
                self.push_event(RtEvent::WatchdogStop {
                    robot: RobotId(i as u8),
                });
            }
            let r = &self.robots[i];
            let mut cmd = r.set_point();
            if !self.controllers.is_empty() {
                let link_up = r
                    .link()
                    .map_or(self.slots.any_live(), |l| self.slots.live(l));
                let view = r.view(now, link_up);
                for c in self.controllers.iter_mut() {
                    c.update(&view, &mut cmd);
                }
            }
            let targets = self.robots[i].targets(self.ends.rt_params(), cmd);
            if self.robots[i].should_send(targets, now, min_gap, refresh) {
                self.write_targets(i, targets, now);
            }
        }
    }

    /// Writes `targets` to robot `i`: its speed frame and, for a stop, the direct write of its
    /// motor targets (SET_VARIABLES, obeyed even by a stopped VM) and their read-back.
    /// Returns true if the speed frame was queued.
    fn write_targets(&mut self, i: usize, targets: [i16; 2], now: u64) -> bool {
        let source = self.cfg.host_source;
        let link = self.robots[i].link();
        let Some(n) = self.robots[i].speed_frame(source, targets, &mut self.frame) else {
            return false;
        };
        if !self.queue_robot_frame(link, n) {
            return false;
        }
        self.stats.speed_frames += 1;
        if targets == [0, 0] {
            if let Some(n) = self.robots[i].direct_targets_frame(source, targets, &mut self.frame) {
                self.queue_robot_frame(link, n);
            }
            self.queue_readback(i);
        }
        self.robots[i].sent(targets, now);
        true
    }

    /// Queues a read-back of robot `i`'s motor targets (if it has their address).
    fn queue_readback(&mut self, i: usize) {
        let link = self.robots[i].link();
        if let Some(n) = self.robots[i].readback_frame(self.cfg.host_source, &mut self.frame) {
            self.queue_robot_frame(link, n);
        }
    }

    /// Queues a stop for robot `i` (removal and exit paths; no rate limit): zero speed, the
    /// direct zero write of its motor targets and their read-back.
    fn send_stop(&mut self, i: usize) {
        self.robots[i].request_stop();
        self.write_targets(i, [0, 0], monotonic_ns());
    }

    fn retire_dead_links(&mut self) {
        for i in 0..self.slots.slots.len() {
            let Some(reason) = self.slots.slots[i].dead else {
                continue;
            };
            if self.port.rt_return_room() == 0 {
                return; // retried next cycle; the slot is not polled meanwhile
            }
            let Some((target, link)) = self.slots.detach(i) else {
                continue;
            };
            let _ = self.port.rt_give_back(LinkReturn {
                target,
                link,
                reason,
            });
            self.push_event(RtEvent::LinkDown {
                link: LinkId(i as u8),
                target,
                reason,
            });
            for r in 0..self.robots.len() {
                if self.robots[r].link_lost(LinkId(i as u8)) {
                    self.push_event(RtEvent::RobotStale {
                        robot: RobotId(r as u8),
                    });
                }
            }
        }
    }
}

#[cfg(test)]
mod tests;
