//! The odometry publisher threads, written once for every front end: the RT thread pushes each odometry sample into
//! a ring of its own ([`handoff::NrtOdomOut`]; per front end one ring per group of robots, robot index modulo the
//! groups, [`publisher_groups`] of them) and rings that ring's thread, which publishes `odom`, `/tf` (odom →
//! base_link and the two wheels) and `joint_states` of that robot at once, then waits again: robots of different
//! groups never wait for each other (one thread and one group for one robot). When several robots' samples wait on
//! one ring, the `odom` of every one of them goes first, then their `/tf` and `joint_states`
//! ([`crate::odom_burst`]); the extended joint states of the same ring follow. The RT thread hands a ring only the
//! samples of robots someone listens to (subscribers of its group's robots counted every 100 ms by its thread,
//! [`crate::odom_demand`]: with no sample the thread sleeps until the next count is due, so an unwatched driver's
//! thread wakes ten times a second, and stopping it rings it); each robot's `odom_max_rate` limits what is
//! published ([`RateLimit`](crate::odometry::RateLimit)); the hops handed → publish start and publish → returned
//! are timed ([`NrtHopTimers`]). Each hand-off's limited twist goes to the robot's `thymio_driver/cmd_vel_out`
//! while its `publish_limited_velocity` is true (a flag the NRT loop sets live), whatever `odom_max_rate`. The
//! threads never go through the NRT loop.
//!
//! The NRT loop adds and removes robots ([`OdomTargets`]: a mutex per robot, held only to change its entry or to
//! publish one of its samples). What a front end adds is an [`OdomSink`] (one per thread): its message conversion
//! and publish calls, nothing of the order, timing or rules. The threads are generic over their sink
//! (monomorphised: no dynamic dispatch, allocation, lock or channel of its own per sample).

use crate::companion::{self, Placed};
use crate::hop_times::NrtHopTimers;
use crate::odom_burst::Burst;
use crate::odom_demand::{DemandCheck, Listeners};
use crate::odom_targets::entry_of;
pub use crate::odom_targets::{OdomRobot, OdomTargets};
use handoff::{
    monotonic_ns, CompanionPlacement, JointStateSample, NodeId, NrtOdomOut, OdomHandoff,
    OdomSample, OdomTrace, RobotId,
};
use std::fmt::Display;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Instant;

/// A topic of one robot whose subscribers are counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Topic {
    /// `odom`.
    Odom,
    /// `joint_states`.
    JointStates,
    /// `~/cmd_vel_out`.
    CmdVelOut,
}

/// A front end's side of the thread: message conversion and publish calls. Called on the thread, with the robot's
/// entry locked (except [`OdomSink::publish_joint`] and [`OdomSink::warn`]), in this order per sample:
/// [`prepare`](OdomSink::prepare), [`publish_cmd_vel_out`](OdomSink::publish_cmd_vel_out) (while
/// `limited_velocity`), then, if the rate limit lets the sample through, [`fill`](OdomSink::fill),
/// [`publish_odom`](OdomSink::publish_odom) (timed), [`rest`](OdomSink::rest); after every sample of the burst
/// did so far, [`publish_tf`](OdomSink::publish_tf) and [`publish_joint_states`](OdomSink::publish_joint_states).
pub trait OdomSink {
    /// The publishers of one robot ([`OdomRobot::out`]).
    type Out: Send + 'static;
    /// What a sample whose `odom` went out keeps for its `/tf` and `joint_states`.
    type Rest;
    /// A publishing error.
    type Error: Display;

    /// The subscribers of `/tf` (`None`: could not be counted).
    fn count_tf(&self) -> Option<usize>;
    /// The subscribers of one robot's `topic` (`None`: could not be counted).
    fn count(&self, out: &Self::Out, topic: Topic) -> Option<usize>;
    /// A sample of `robot` is about to be published; `generation` changes whenever its entry does (inserted again,
    /// new settings): what the sink built from the entry is to be built again.
    fn prepare(&mut self, robot: RobotId, r: &OdomRobot<Self::Out>, generation: u64) {
        let _ = (robot, r, generation);
    }
    /// `robot` is no target (its samples are not published): what the sink keeps of it may go.
    fn forget(&mut self, robot: RobotId) {
        let _ = robot;
    }
    /// Publishes the limited twist of hand-off `h` on `~/cmd_vel_out`.
    fn publish_cmd_vel_out(
        &mut self,
        robot: RobotId,
        r: &mut OdomRobot<Self::Out>,
        h: &OdomHandoff,
    ) -> Result<(), Self::Error>;
    /// Prepares the messages of sample `s` before its publishing is timed (default: nothing).
    fn fill(&mut self, robot: RobotId, r: &OdomRobot<Self::Out>, s: &OdomSample) {
        let _ = (robot, r, s);
    }
    /// Publishes `odom` of sample `s`.
    fn publish_odom(
        &mut self,
        robot: RobotId,
        r: &mut OdomRobot<Self::Out>,
        s: &OdomSample,
    ) -> Result<(), Self::Error>;
    /// What is kept of sample `s` for its `/tf` and `joint_states` (after its `odom` went out, untimed).
    fn rest(&mut self, robot: RobotId, r: &OdomRobot<Self::Out>, s: &OdomSample) -> Self::Rest;
    /// Publishes the `/tf` of a sample.
    fn publish_tf(&mut self, robot: RobotId, rest: &mut Self::Rest) -> Result<(), Self::Error>;
    /// Publishes the `joint_states` of a sample.
    fn publish_joint_states(
        &mut self,
        robot: RobotId,
        r: &mut OdomRobot<Self::Out>,
        rest: &mut Self::Rest,
    ) -> Result<(), Self::Error>;
    /// Publishes an extended joint state (if its robot is a target of the sink's).
    fn publish_joint(&mut self, s: &JointStateSample);
    /// Reports that `what` of `node` could not be published.
    fn warn(&self, node: NodeId, what: &str, e: &Self::Error);
}

/// Most publisher threads per front end ([`publisher_groups`]).
pub const MAX_GROUPS: usize = 4;

/// How many publisher threads a front end runs for `robots` robots when its publishers may run on `cpus` CPUs (the
/// RT thread's among them; 1 when they share the RT thread's CPU, `rt.publisher_priority`): one per robot up to
/// those CPUs but one, at most [`MAX_GROUPS`]; one for one robot (or none known yet). Measured on 2 CPUs
/// (docs/performance.md, classroom rows), a second thread made the 32-robot odometry p99 no better, rather worse.
///
/// ```
/// use nrt_interface::odom_thread::{publisher_groups, MAX_GROUPS};
/// assert_eq!(publisher_groups(1, 8), 1);
/// assert_eq!(publisher_groups(32, 2), 1);
/// assert_eq!(publisher_groups(32, 4), 3);
/// assert_eq!(publisher_groups(3, 16), 3);
/// assert_eq!(publisher_groups(64, 64), MAX_GROUPS);
/// assert_eq!(publisher_groups(0, 0), 1);
/// ```
pub fn publisher_groups(robots: usize, cpus: usize) -> usize {
    robots.min(cpus.saturating_sub(1)).clamp(1, MAX_GROUPS)
}

/// The running threads (one per ring: a group of robots each); stopped and joined on drop.
pub struct OdomThread {
    stop: Arc<AtomicBool>,
    /// The threads' doorbells: rung to stop them at once (they may wait up to [`crate::odom_demand::DEMAND_CHECK`]).
    bells: Vec<handoff::Doorbell>,
    published: Arc<AtomicU64>,
    threads: Vec<JoinHandle<()>>,
    placed: Placed,
}

impl OdomThread {
    /// Starts the threads `name` (`name-<group>` when there are several) at `placement` ([`crate::companion`]),
    /// one on each ring of `outs` (the rings of one consumer, [`handoff::NrtEnds::nrt_take_odometry_groups`]: the
    /// thread on ring `g` of `k` publishes the robots whose index is `g` modulo `k`): the odometry of `targets`,
    /// published by a sink of each thread's own, made on that thread by what `sink_maker(g)` gives; hops timed in
    /// `timers`.
    pub fn start<S: OdomSink + 'static, M: FnOnce() -> S + Send + 'static>(
        name: &str,
        outs: Vec<NrtOdomOut>,
        targets: OdomTargets<S::Out>,
        timers: NrtHopTimers,
        placement: CompanionPlacement,
        mut sink_maker: impl FnMut(usize) -> std::io::Result<M>,
    ) -> std::io::Result<OdomThread> {
        let mut started = OdomThread {
            stop: Arc::new(AtomicBool::new(false)),
            bells: Vec::new(),
            published: Arc::new(AtomicU64::new(0)),
            threads: Vec::new(),
            placed: Placed {
                asked: placement,
                errors: Vec::new(),
            },
        };
        let groups = outs.len();
        for (index, mut out) in outs.into_iter().enumerate() {
            let name = match groups {
                1 => name.to_owned(),
                _ => format!("{name}-{index}"),
            };
            let group = Group { index, groups };
            let (stop, published) = (started.stop.clone(), started.published.clone());
            let (targets, timers, make_sink) =
                (targets.clone(), timers.clone(), sink_maker(index)?);
            started.bells.push(out.nrt_bell());
            // on an error, `started` stops the threads already running when dropped
            let (thread, placed) = companion::spawn(&name, placement, move || {
                let mut t = Thread {
                    sink: make_sink(),
                    targets,
                    timers,
                    published,
                    group,
                };
                let mut burst = Burst::new();
                let mut demand = DemandCheck::new(out.nrt_demand());
                while !stop.load(Ordering::Relaxed) {
                    // samples ring; else nothing is to be done before the next subscriber count (stopping rings)
                    out.nrt_wait(demand.until_due(Instant::now()));
                    let now = Instant::now();
                    if demand.due(now) {
                        t.check_listeners(&mut demand, now);
                    }
                    t.drain(&mut out, &mut burst);
                }
            })?;
            if index == 0 {
                started.placed = placed;
            }
            started.threads.push(thread);
        }
        Ok(started)
    }

    /// Whether every thread still runs.
    pub fn is_running(&self) -> bool {
        !self.threads.is_empty() && self.threads.iter().all(|t| !t.is_finished())
    }

    /// Where the threads run (all placed alike: the first one's), and what it could not obtain of its placement.
    pub fn placed(&self) -> &Placed {
        &self.placed
    }

    /// Samples whose `odom` was published so far (by every thread).
    pub fn published(&self) -> u64 {
        self.published.load(Ordering::Relaxed)
    }
}

impl Drop for OdomThread {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for bell in &self.bells {
            bell.ring();
        }
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

/// A thread's group of robots: those whose index is `index` modulo `groups`.
#[derive(Debug, Clone, Copy)]
struct Group {
    index: usize,
    groups: usize,
}

impl Group {
    fn owns(&self, robot: RobotId) -> bool {
        usize::from(robot.0) % self.groups.max(1) == self.index
    }
}

/// What the thread holds.
struct Thread<S: OdomSink> {
    sink: S,
    targets: OdomTargets<S::Out>,
    timers: NrtHopTimers,
    published: Arc<AtomicU64>,
    /// The robots this thread publishes (the RT thread hands it no other's samples).
    group: Group,
}

/// A sample whose `odom` went out: how long that publish took [ns], and what is left to publish.
type Started<R> = (u64, R);

impl<S: OdomSink> Thread<S> {
    /// Publishes what waits in `out`: bursts of odometry (every `odom` first, then the `/tf` and `joint_states`),
    /// then the extended joint states.
    fn drain(&mut self, out: &mut NrtOdomOut, burst: &mut Burst<Started<S::Rest>>) {
        while burst.take(|| out.nrt_pop()) {
            for (h, started) in burst.items_mut() {
                *started = self.publish_odom(h);
            }
            for (h, started) in burst.items_mut() {
                if let Some(started) = started.take() {
                    self.publish_rest(h, started);
                }
            }
        }
        while let Some(j) = out.nrt_pop_joint() {
            self.sink.publish_joint(&j);
        }
    }

    /// Asks the RT thread for the samples of the robots of its group someone listens to ([`crate::odom_demand`]).
    fn check_listeners(&self, demand: &mut DemandCheck, now: Instant) {
        let sink = &self.sink;
        let tf = sink.count_tf();
        demand.apply(
            now,
            OdomTargets::<S::Out>::ids().filter_map(|id| {
                if !self.group.owns(id) {
                    return None;
                }
                let slot = self.targets.slot(id)?;
                let r = &slot.as_ref()?.robot;
                let cmd_vel_out = if r.limited_velocity.load(Ordering::Relaxed) {
                    sink.count(&r.out, Topic::CmdVelOut)
                } else {
                    Some(0)
                };
                let listeners = Listeners {
                    odom: sink.count(&r.out, Topic::Odom),
                    tf,
                    joint_states: sink.count(&r.out, Topic::JointStates),
                    cmd_vel_out,
                };
                Some((id, listeners))
            }),
        );
    }

    /// Publishes one sample's `~/cmd_vel_out` and `odom` if its robot is a target and the rate limit lets it
    /// through; `Some`: its `/tf` and `joint_states` are to be published ([`Thread::publish_rest`]).
    fn publish_odom(&mut self, h: &OdomHandoff) -> Option<Started<S::Rest>> {
        let s = &h.sample;
        let mut slot = self.targets.slot(s.robot);
        let Some(e) = slot.as_mut().and_then(|slot| entry_of(slot, s)) else {
            drop(slot);
            self.sink.forget(s.robot);
            return None;
        };
        let r = &mut e.robot;
        self.sink.prepare(s.robot, r, e.generation);
        if r.limited_velocity.load(Ordering::Relaxed) {
            if let Err(err) = self.sink.publish_cmd_vel_out(s.robot, r, h) {
                self.sink.warn(s.node, "cmd_vel_out", &err);
            }
        }
        if !e.rate.admit(Instant::now()) {
            return None;
        }
        self.sink.fill(s.robot, r, s);
        let start = monotonic_ns();
        self.timers
            .handed_to_publish
            .record(start.saturating_sub(h.handed_ns));
        let published = self.sink.publish_odom(s.robot, r, s);
        let odom_ns = monotonic_ns();
        let rest = self.sink.rest(s.robot, r, s);
        drop(slot);
        self.published.fetch_add(1, Ordering::Relaxed);
        match published {
            Ok(()) if s.wire_ns != 0 => self.timers.record_odom(OdomTrace {
                wire_ns: s.wire_ns,
                decoded_ns: s.t_ns,
                handed_ns: h.handed_ns,
                publish_ns: start,
                odom_ns,
            }),
            Ok(()) => {}
            Err(err) => self.sink.warn(s.node, "odometry", &err),
        }
        Some((odom_ns.saturating_sub(start), rest))
    }

    /// Publishes the `/tf` and `joint_states` of sample `h` whose `odom` went out (if its robot is still a target).
    fn publish_rest(&mut self, h: &OdomHandoff, (odom_cost_ns, mut rest): Started<S::Rest>) {
        let s = &h.sample;
        let mut slot = self.targets.slot(s.robot);
        let Some(e) = slot.as_mut().and_then(|slot| entry_of(slot, s)) else {
            return;
        };
        let start = monotonic_ns();
        let results = [
            self.sink.publish_tf(s.robot, &mut rest),
            self.sink
                .publish_joint_states(s.robot, &mut e.robot, &mut rest),
        ];
        self.timers
            .publish
            .record(monotonic_ns().saturating_sub(start) + odom_cost_ns);
        drop(slot);
        for err in results.into_iter().filter_map(Result::err) {
            self.sink.warn(s.node, "odometry", &err);
        }
    }
}

#[cfg(test)]
#[path = "odom_thread_tests.rs"]
mod tests;
