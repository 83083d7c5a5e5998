//! The pinned RT loop. It sleeps in ONE wait ([`wait`]: epoll + an absolute CLOCK_MONOTONIC
//! timerfd) on every live link's readiness descriptor, the NRT → RT wake eventfd (rung by every
//! set-point, outgoing frame and command), the stop-signal eventfd and the next deadline, so
//! that a hop costs a wake-up, not half a period:
//!
//! - **I/O wake-up**: read the links found readable (one read each, within their period budget),
//!   reassemble and decode frames, handle odometry (integrated, handed to the publisher ring and
//!   to NRT), proximity and ground, forward every frame to NRT; apply NRT commands and frames;
//!   per robot, apply an owner request (the communication switch, `rtloop/owner.rs`), take the
//!   owner's command (cmd_vel set-point, joint command or an RT controller's `update`; the
//!   others' commands dropped and counted), filter it (obstacle reflex) and write changed wheel
//!   targets; flush every link.
//! - **Periodic cycle** (every `RtConfig::period`, absolute deadlines, overruns counted and
//!   skipped, never a burst): all of the above for links without descriptor (polled), plus
//!   taking offered links, the set-point watchdog, speed refreshes, handing dead links back,
//!   quiet-link resolution, owner reports of dropped commands, extended joint states and
//!   statistics. The period is the resolution of these duties, not
//!   the latency of a hop.
//! - **Asleep while quiet** ([`RtLoop::quiet_until`]): while no robot moves or has anything to write or
//!   confirm, no RT controller owns the wheels, no joint states are wanted, every link is in the
//!   wait with nothing held back, and NRT gave nothing since the last cycle, none of those duties
//!   is due before the next statistics report: the wait's deadline is then that report (at most
//!   [`QUIET_WAIT_MAX`] away), and the periodic cycle runs at it or at the first wake-up after
//!   its period, whichever comes first. Anything that can end quietness wakes the loop (a
//!   set-point, command, owner request or parameter rings the NRT → RT doorbell, an offered link
//!   the link port's, a link's bytes or hang-up its descriptor), and the next cycle is then kept
//!   at its period. The stop guarantees are those of the periodic cycle: a quiet robot has no
//!   watchdog armed and nothing to refresh, or cruises (moves at a steady set-point its last frame
//!   wrote, nothing ramping or filtered) and the wait's deadline is its next refresh or its
//!   watchdog's deadline if that comes first.
//!
//! A flooding link cannot spin the core: a link reads at most `read_budget` bytes per period
//! (then it is taken out of the wait until the next period), and after `period /
//! io_wake_spacing` wake-ups (at least 4) in a period the loop sleeps until the deadline.
//!
//! Nothing in a wake-up or cycle allocates, frees, locks or blocks; everything is preallocated
//! in [`RtLoop::new`] (NRT). Every zero speed (cmd_vel watchdog, a stop set-point, a robot
//! removed, the first write after its link came back, exit) also writes the robot's motor
//! targets directly (SET_VARIABLES, which a stopped VM cannot ignore) and reads them back; a
//! robot is re-sent its targets every `speed_refresh` while it moves (feeding the on-robot
//! watchdog of the driver script) and until its stop is read back. On exit (signal, shutdown
//! command, NRT gone) every robot is stopped so, flushed and confirmed within a bound
//! (`rtloop/exit.rs`).

mod budget;
mod drive;
mod exit;
mod io;
mod node_index;
mod owner;
mod quiet;
pub mod replay;
mod slots;
mod stats;
mod wait;

use crate::alloc;
use crate::clock::{monotonic_ns, sleep_until};
use crate::controllers::{Filter, RtControllers};
use crate::link_port::{LinkReturn, RtLinkPort};
use crate::robot::Robot;
use crate::sched::{self, RtSetup};
use crate::signals;
use handoff::{
    Doorbell, ExitReason, OdomSample, PassKind, RecInput, RobotId, RtEnds, RtEvent, RtStats,
    SetupSummary, MAX_LINKS,
};
use msgs::wire::MAX_FRAME;
use slots::Slots;
use stats::Stats;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use wait::{Ready, Waiter};

pub use exit::StopOutcome;
pub use stats::thread_faults;

/// Most commands and outgoing frames taken from NRT per wake-up (the rest wait for the next).
const MAX_INPUTS_PER_CYCLE: usize = 256;
/// I/O wake-ups allowed per period at least, whatever `io_wake_spacing`.
const MIN_IO_WAKES: u64 = 4;
/// Longest a quiet loop sleeps past its period (its next cycle comes at the statistics report, at
/// most this far).
pub const QUIET_WAIT_MAX: Duration = Duration::from_secs(1);

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
    /// Bytes read per link per period at most (a link that used them up is not read again
    /// before the next period).
    pub read_budget: usize,
    /// Least mean spacing of I/O wake-ups: at most `period / io_wake_spacing` (at least 4) per
    /// period; beyond that the loop sleeps until the next deadline (flood bound).
    pub io_wake_spacing: Duration,
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
    /// The longest a controller's `update` may take (timed on the RT thread); zero: no budget
    /// (timed only).
    pub controller_budget: Duration,
    /// Consecutive `update` calls over `controller_budget` on one robot that stop the
    /// controller there (zero speed, the wheels back to `ros`); at least 1.
    pub controller_overruns: u32,
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
            io_wake_spacing: Duration::from_micros(100),
            host_source: msgs::wire::HOST_SOURCE,
            min_speed_interval: Duration::from_millis(10),
            speed_refresh: Duration::ZERO,
            exit_flush_timeout: Duration::from_millis(200),
            honor_signals: true,
            max_cycles: None,
            setup: RtSetup::default(),
            stack_size: 2 * 1024 * 1024,
            wake_nrt: true,
            controller_budget: Duration::from_millis(1),
            controller_overruns: 5,
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
    /// The RT controllers, handed back for NRT to close ([`RtControllers::close_all`]).
    pub controllers: RtControllers,
}

// `RtLoop::touched` is a bit set of robots.
const _: () = assert!(handoff::MAX_ROBOTS <= 64);

/// The RT loop and all its preallocated state.
pub struct RtLoop {
    cfg: RtConfig,
    ends: RtEnds,
    port: RtLinkPort,
    slots: Slots,
    robots: Box<[Robot]>,
    /// The robots by node id, for the frames.
    node_index: node_index::NodeIndex,
    /// Robots that received frames since they were last driven (bit `i` = robot `i`; `MAX_ROBOTS` is 64).
    touched: u64,
    /// Per robot: who owns the wheels (the communication switch).
    owners: Box<[owner::OwnerState]>,
    /// Every robot slot's controller instances.
    controllers: RtControllers,
    /// Applied to every owner's command.
    filters: Vec<Box<dyn Filter>>,
    stats: Stats,
    stop: Arc<AtomicBool>,
    shutdown: bool,
    frame: Box<[u8; MAX_FRAME]>,
    waiter: Waiter,
    /// Earliest moment a wheel-target change held back by `min_speed_interval` may go.
    hold_until: Option<u64>,
    /// The clock of the pass running (the time of what the flight recorder records in it, and of the stops
    /// written outside the drive: removal, exit).
    pass_ns: u64,
    /// Robots whose running controller a replay stops in this pass as the recorded run's budget did (bit per
    /// robot; always 0 outside a replay).
    forced_stops: u64,
    /// NRT offered a link since the last periodic cycle, handed more commands or frames than one wake-up takes, or
    /// the loop just started: the next cycle runs at its period. What NRT rings for is read in the wake-up it rings.
    need_cycle: bool,
    /// Every wake-up a quiet loop relies on has its descriptor ([`Self::quiet_until`] is None otherwise).
    can_sleep: bool,
    /// The last drive's settings (its watchdog, read from a cell): what a cruising robot's deadlines use.
    pass: drive::PassSettings,
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
    /// The RT thread's wake doorbell: ringing it ends its wait.
    wake: Doorbell,
    thread: std::thread::JoinHandle<RtExit>,
}

impl RtHandle {
    /// Asks the thread to stop (it sends zero speeds first); wakes it at once.
    pub fn stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
        self.wake.ring();
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

/// Builds the loop and runs it on a new thread named `thymio-rt` (`controllers`: from
/// [`crate::controllers::Registry::instantiate`]; `filters`: applied to every owner's command).
pub fn spawn(
    cfg: RtConfig,
    ends: RtEnds,
    port: RtLinkPort,
    controllers: RtControllers,
    filters: Vec<Box<dyn Filter>>,
) -> std::io::Result<RtHandle> {
    let mut rt = RtLoop::new(cfg, ends, port, controllers, filters);
    let stop = rt.stop_flag();
    let wake = rt.ends.rt_params().rt_wake_bell().clone();
    let thread = std::thread::Builder::new()
        .name("thymio-rt".into())
        .stack_size(cfg.stack_size.max(cfg.setup.prefault_stack + 256 * 1024))
        .spawn(move || rt.run())?;
    Ok(RtHandle { stop, wake, thread })
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
    /// Preallocates everything (NRT side). `controllers`: every robot slot's controller
    /// instances ([`crate::controllers::Registry::instantiate`], or [`RtControllers::none`]);
    /// `filters`: applied to every owner's command, in order.
    pub fn new(
        cfg: RtConfig,
        mut ends: RtEnds,
        port: RtLinkPort,
        controllers: RtControllers,
        filters: Vec<Box<dyn Filter>>,
    ) -> Self {
        let robots: Box<[Robot]> = (0..ends.rt_params().robots())
            .map(|i| Robot::new(RobotId(i as u8)))
            .collect();
        let owners = vec![owner::OwnerState::default(); robots.len()].into_boxed_slice();
        let signal_fd = cfg.honor_signals.then(signals::stop_wake_fd).flatten();
        // Sleeping past the period relies on being woken: without the NRT wake, offer or (when signals are
        // honoured) stop-signal eventfd (a descriptor limit), only the periodic cycle sees set-points, offered
        // links or a stop signal, so the loop keeps its period.
        let can_sleep = ends.rt_wake_fd().is_some()
            && port.rt_offered_fd().is_some()
            && (!cfg.honor_signals || signal_fd.is_some());
        let waiter = Waiter::new(ends.rt_wake_fd(), signal_fd, port.rt_offered_fd());
        RtLoop {
            slots: Slots::new(
                cfg.max_links.clamp(1, MAX_LINKS),
                cfg.tx_buffer,
                cfg.read_budget,
            ),
            stats: Stats::new(
                ns(cfg.period),
                budget::ControllerClocks::new(
                    controllers.len(),
                    cfg.controller_budget,
                    cfg.controller_overruns,
                ),
            ),
            cfg,
            ends,
            port,
            robots,
            node_index: node_index::NodeIndex::default(),
            touched: 0,
            owners,
            controllers,
            filters,
            stop: Arc::new(AtomicBool::new(false)),
            shutdown: false,
            frame: touched_frame(),
            waiter,
            hold_until: None,
            pass_ns: 0,
            forced_stops: 0,
            need_cycle: true,
            can_sleep,
            pass: drive::PassSettings::default(),
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

    /// Hands a statistics report to NRT (its own ring; an [`RtEvent::Stats`] says so).
    fn push_stats(&mut self, s: handoff::RtStats) {
        if !self.ends.rt_push_stats(s) {
            self.stats.drops.events += 1;
        }
    }

    /// Runs on the calling thread until a stop condition; sends zero speeds before returning.
    pub fn run(mut self) -> RtExit {
        let (setup, _dma) = sched::setup_current_thread(&self.cfg.setup);
        // the flight recorder (off unless asked for) on this thread, before allocations count: every place the
        // thread takes an input records it there
        handoff::rt_install(self.ends.rt_take_recorder().unwrap_or_default());
        self.push_event(RtEvent::Started(setup));
        self.wake_nrt();
        alloc::mark_current_thread_rt(true);
        let start = monotonic_ns();
        self.stats.start(start, setup.mode());
        let period = ns(self.cfg.period);
        let reason = if period == 0 {
            self.run_free()
        } else {
            self.run_periodic(start, period)
        };
        self.stop_robots(reason);
        let stats = self.finish(reason);
        alloc::mark_current_thread_rt(false);
        // its rings abandoned: the recorder's NRT side takes what is left and closes the file
        drop(handoff::rt_uninstall());
        self.into_exit(reason, setup, stats)
    }

    /// Free-running (period zero: tests, benchmarks): one polling cycle after the other.
    fn run_free(&mut self) -> ExitReason {
        loop {
            let wake = monotonic_ns();
            self.begin_pass(PassKind::Free, wake, Ready::default());
            self.cycle(wake);
            self.stats.cycle.record(monotonic_ns().saturating_sub(wake));
            self.stats.cycles += 1;
            if let Some(r) = self.exit_reason() {
                self.stats.freeze();
                return r;
            }
        }
    }

    /// Waits for I/O or the next deadline, again and again: I/O wake-ups in between, the
    /// periodic cycle at each deadline; while quiet ([`Self::quiet_until`]) the deadline is the next
    /// statistics report's ([`Self::quiet_deadline`]) and the cycle runs at it or at the first
    /// wake-up past its period.
    fn run_periodic(&mut self, start: u64, period: u64) -> ExitReason {
        let max_wakes = (period / ns(self.cfg.io_wake_spacing).max(1)).max(MIN_IO_WAKES);
        let mut next = start + period;
        let mut wakes = 0u64;
        loop {
            let quiet = self.quiet_until();
            let due = quiet.map_or(next, |until| {
                self.quiet_deadline(next, period).min(until).max(next)
            });
            let ready = if wakes < max_wakes {
                let until = self.hold_until.map_or(due, |h| h.min(due));
                self.waiter.wait(until)
            } else {
                // Flood bound: the rest of the period waits for the periodic cycle.
                if wakes == max_wakes {
                    self.stats.io_wake_limited += 1;
                    wakes += 1;
                }
                Ready {
                    timer: sleep_until(next).is_ok(),
                    ..Ready::default()
                }
            };
            if ready.offer {
                // the periodic cycle takes offered links: the next one at its period
                self.port.rt_drain_offered();
                self.need_cycle = true;
            }
            let now = monotonic_ns();
            if now >= next {
                // a quiet cycle's wake-up latency is the one at its deadline (not its period's, slept through)
                if now >= due {
                    self.stats.wakeup.record(now - due);
                }
                self.begin_pass(PassKind::Periodic, now, ready);
                self.periodic(now, ready);
                let end = monotonic_ns();
                self.stats.cycle.record(end.saturating_sub(now));
                self.stats.cycles += 1;
                wakes = 0;
                next += period;
                if quiet.is_some() {
                    // slept through the periods up to this cycle: the next one is the first period after it,
                    // nothing overran
                    let slept = end.saturating_sub(next) / period + u64::from(end >= next);
                    self.stats.slept += slept;
                    next += slept * period;
                } else if end > next {
                    let missed = (end - next) / period + 1;
                    self.stats.overruns += 1;
                    self.stats.skipped += missed;
                    next += missed * period;
                }
            } else {
                wakes += 1;
                self.stats.io_wakes += 1;
                self.begin_pass(PassKind::Io, now, ready);
                self.io_wake(now, ready);
            }
            if let Some(r) = self.exit_reason() {
                self.stats.freeze();
                return r;
            }
        }
    }

    /// A pass begins at `now_ns` (the flight recorder's record of it; its inputs follow).
    fn begin_pass(&mut self, kind: PassKind, now_ns: u64, ready: Ready) {
        self.pass_ns = now_ns;
        handoff::rt_record(RecInput::Pass {
            kind,
            now_ns,
            wake: ready.wake,
            timer: ready.timer,
            signal: ready.signal,
        });
    }

    fn exit_reason(&self) -> Option<ExitReason> {
        if self.shutdown || self.stop.load(Ordering::Relaxed) {
            Some(ExitReason::Requested)
        } else if self.cfg.honor_signals && signals::stop_signalled() {
            Some(ExitReason::Signal)
        } else if self.ends.rt_peer_gone() {
            Some(ExitReason::NrtGone)
        } else if self
            .cfg
            .max_cycles
            .is_some_and(|m| self.stats.periods() >= m)
        {
            Some(ExitReason::CycleLimit)
        } else {
            None
        }
    }

    /// One polling cycle at time `now_ns`, as the loop ran before it woke on I/O (public for
    /// benchmarks and tests; free-running mode runs it): every live link is read whether its
    /// descriptor is readable or not, then the periodic duties.
    pub fn cycle(&mut self, now_ns: u64) {
        self.cycle_with(now_ns, |rt| {
            for i in 0..rt.slots.slots.len() {
                rt.read_link(i, usize::MAX, now_ns);
            }
        });
    }

    /// A free-running cycle whose link reads are `read` (the links, or a replay's frames).
    fn cycle_with(&mut self, now_ns: u64, read: impl FnOnce(&mut Self)) {
        self.accept_links();
        read(self);
        self.exchange(now_ns);
        self.periodic_duties(now_ns);
        self.wake_nrt();
    }

    /// The periodic cycle of the waiting loop at `now_ns` (`ready`: what its wait found).
    fn periodic(&mut self, now_ns: u64, ready: Ready) {
        self.need_cycle = false;
        self.periodic_with(now_ns, ready.wake, |rt| {
            rt.read_ready(ready.links, now_ns);
            for i in 0..rt.slots.slots.len() {
                if rt.waiter.polled(i) && !rt.waiter.muted(i) {
                    rt.read_link(i, usize::MAX, now_ns);
                }
            }
        });
    }

    /// The periodic cycle whose link reads are `read`.
    fn periodic_with(&mut self, now_ns: u64, wake: bool, read: impl FnOnce(&mut Self)) {
        self.accept_links();
        if wake {
            self.ends.rt_drain_wake();
        }
        read(self);
        self.exchange(now_ns);
        self.periodic_duties(now_ns);
        self.wake_nrt();
    }

    /// An I/O wake-up at `now_ns` between two deadlines.
    fn io_wake(&mut self, now_ns: u64, ready: Ready) {
        self.io_wake_with(now_ns, ready, |rt| rt.read_ready(ready.links, now_ns));
    }

    /// An I/O wake-up whose link reads are `read`.
    fn io_wake_with(&mut self, now_ns: u64, ready: Ready, read: impl FnOnce(&mut Self)) {
        if ready.wake {
            // Before the rings are read: a ring after this is a new wake-up.
            self.ends.rt_drain_wake();
        }
        read(self);
        if ready.wake || ready.timer || ready.signal {
            // NRT input (set-points, commands, owner requests: any robot), or a held-back change's deadline
            self.exchange(now_ns);
            if ready.wake {
                // the one NRT input otherwise read by the periodic cycle only (a quiet loop would sleep past it; a
                // cycle for it after each set-point was a third of a driven loop's wake-ups)
                self.publish_joint_states(now_ns);
            }
        } else {
            // frames only: the robots they concern (the others have nothing new until the periodic cycle;
            // driving every robot at every robot's frame made a period cost grow with the square of the robots)
            self.apply_commands();
            self.apply_outgoing();
            self.drive_touched(now_ns);
            self.flush_links();
        }
        self.forget_dead_links();
        self.wake_nrt();
    }

    /// NRT's commands and frames in, set-points and controllers to wheel targets, every link
    /// flushed.
    fn exchange(&mut self, now_ns: u64) {
        self.apply_commands();
        self.apply_outgoing();
        self.drive_robots(now_ns);
        self.flush_links();
    }

    /// What only the periodic cycle does: hand dead links back, resolve quiet links, start the
    /// next period's read budgets, report statistics.
    fn periodic_duties(&mut self, now_ns: u64) {
        self.forget_dead_links();
        self.retire_dead_links();
        let RtLoop {
            slots,
            ends,
            robots,
            node_index,
            touched,
            stats,
            ..
        } = self;
        slots.resolve_quiet(now_ns, |link, wire, t, frame| {
            io::handle_frame(
                ends, robots, node_index, touched, stats, link, wire, t, frame,
            )
        });
        self.slots.new_period();
        self.unmute_links();
        self.report_drops();
        self.publish_joint_states(now_ns);
        if now_ns.saturating_sub(self.stats.last_report_ns) >= ns(self.cfg.stats_period) {
            self.stats.last_report_ns = now_ns;
            let s =
                self.stats
                    .snapshot(now_ns, self.slots.totals(), self.ends.rt_odometry_dropped());
            self.push_stats(s);
            // Warm-up ends after enough cycles AND one report, so that the report path itself
            // has run once before page faults count.
            if !self.stats.warm() && self.stats.periods() >= self.cfg.warmup_cycles {
                self.stats.end_warmup();
            }
        }
    }

    fn wake_nrt(&mut self) {
        if self.cfg.wake_nrt {
            self.ends.rt_wake_nrt();
        }
    }
}

#[cfg(test)]
mod tests;
