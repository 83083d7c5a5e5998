//! The odometry publisher thread, written once for every front end: the RT thread pushes each odometry sample into
//! a ring of its own ([`handoff::NrtOdomOut`], one per front end) and rings this thread, which publishes `odom`,
//! `/tf` (odom → base_link and the two wheels) and `joint_states` of that robot at once, then waits again. When
//! several robots' samples wait, the `odom` of every one of them goes first, then their `/tf` and `joint_states`
//! ([`crate::odom_burst`]); the extended joint states of the same ring follow. The RT thread hands it only the
//! samples of robots someone listens to (subscribers counted every 100 ms, [`crate::odom_demand`]: with no sample
//! the thread sleeps until the next count is due, so an unwatched driver's thread wakes ten times a second, and
//! stopping it rings it); each robot's `odom_max_rate` limits what is published ([`RateLimit`]); the hops handed →
//! publish start and publish → returned are timed ([`NrtHopTimers`]). Each hand-off's limited twist goes to the
//! robot's `thymio_driver/cmd_vel_out` while its `publish_limited_velocity` is true (a flag the NRT loop sets
//! live), whatever `odom_max_rate`. The thread never goes through the NRT loop.
//!
//! The NRT loop adds and removes robots ([`OdomTargets`]: a mutex held only to change an entry or to publish one
//! sample). What a front end adds is an [`OdomSink`]: its message conversion and publish calls, nothing of the
//! order, timing or rules. The thread is generic over its sink (monomorphised: no dynamic dispatch, allocation,
//! lock or channel of its own per sample).

use crate::companion::{self, Placed};
use crate::frames::Frames;
use crate::hop_times::NrtHopTimers;
use crate::odom_burst::Burst;
use crate::odom_demand::{DemandCheck, Listeners};
use crate::odometry::{OdomSettings, RateLimit};
use handoff::{
    monotonic_ns, CompanionPlacement, JointStateSample, NodeId, NrtOdomOut, OdomHandoff,
    OdomSample, OdomTrace, RobotId,
};
use std::collections::BTreeMap;
use std::fmt::Display;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Instant;

/// What the thread needs of one robot (made by the NRT loop when the robot appears).
pub struct OdomRobot<P> {
    /// Its Aseba node (a sample of another node in the same RT slot is not published).
    pub node: NodeId,
    /// Its frames.
    pub frames: Frames,
    /// How its messages are made (covariances, `enable_odom_tf`, axis); updated live ([`OdomTargets::set_settings`]).
    pub settings: OdomSettings,
    /// Its `odom_max_rate` [Hz] (start-only): at most this many samples per second; ≤ 0: all.
    pub max_rate: f64,
    /// Whether `~/cmd_vel_out` is published (its `publish_limited_velocity`, set live by the NRT loop).
    pub limited_velocity: Arc<AtomicBool>,
    /// Whether the wheels (base_link → wheel links) go on `/tf`: the driver publishes the model (`publish_model`);
    /// without it they are the user's robot_state_publisher's (from `joint_states`, still published).
    pub wheel_tf: bool,
    /// The front end's publishers of this robot (`odom`, `joint_states`, `~/cmd_vel_out`, and what they need).
    pub out: P,
}

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

struct Entry<P> {
    robot: OdomRobot<P>,
    /// Changes whenever the entry does ([`OdomSink::prepare`]).
    generation: u64,
    rate: RateLimit,
}

struct Table<P> {
    robots: BTreeMap<RobotId, Entry<P>>,
    generations: u64,
}

impl<P> Table<P> {
    /// The entry sample `s` is published with: its robot's, if that robot is a target and still the same node.
    fn entry(&mut self, s: &OdomSample) -> Option<&mut Entry<P>> {
        self.robots
            .get_mut(&s.robot)
            .filter(|e| e.robot.node == s.node)
    }
}

/// The robots whose odometry is published, shared by the NRT loop and the thread.
pub struct OdomTargets<P>(Arc<Mutex<Table<P>>>);

impl<P> Clone for OdomTargets<P> {
    fn clone(&self) -> Self {
        OdomTargets(self.0.clone())
    }
}

impl<P> Default for OdomTargets<P> {
    fn default() -> Self {
        OdomTargets(Arc::new(Mutex::new(Table {
            robots: BTreeMap::new(),
            generations: 0,
        })))
    }
}

impl<P> OdomTargets<P> {
    fn lock(&self) -> MutexGuard<'_, Table<P>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Publishes the odometry of RT robot `robot` with `entry` from now on.
    pub fn insert(&self, robot: RobotId, entry: OdomRobot<P>) {
        let mut t = self.lock();
        t.generations += 1;
        let entry = Entry {
            rate: RateLimit::new(entry.max_rate),
            robot: entry,
            generation: t.generations,
        };
        t.robots.insert(robot, entry);
    }

    /// Stops publishing the odometry of `robot`; once this returns, no publish on its publishers is in flight (so
    /// they may be destroyed).
    pub fn remove(&self, robot: RobotId) {
        self.lock().robots.remove(&robot);
    }

    /// Applies new odometry settings of `robot` (calibration, covariances, `enable_odom_tf`; no-op when unchanged).
    pub fn set_settings(&self, robot: RobotId, settings: &OdomSettings) {
        let mut t = self.lock();
        let next = t.generations + 1;
        if let Some(e) = t.robots.get_mut(&robot) {
            if e.robot.settings != *settings {
                e.robot.settings = settings.clone();
                e.generation = next;
                t.generations = next;
            }
        }
    }
}

/// The running thread; stopped and joined on drop.
pub struct OdomThread {
    stop: Arc<AtomicBool>,
    /// The thread's doorbell: rung to stop it at once (it may wait up to [`crate::odom_demand::DEMAND_CHECK`]).
    bell: handoff::Doorbell,
    published: Arc<AtomicU64>,
    thread: Option<JoinHandle<()>>,
    placed: Placed,
}

impl OdomThread {
    /// Starts the thread `name` at `placement` ([`crate::companion`]) on the ring `out`: the odometry of
    /// `targets`, published by the sink `make_sink` makes on the thread, hops timed in `timers`.
    pub fn start<S: OdomSink + 'static>(
        name: &str,
        mut out: NrtOdomOut,
        targets: OdomTargets<S::Out>,
        timers: NrtHopTimers,
        placement: CompanionPlacement,
        make_sink: impl FnOnce() -> S + Send + 'static,
    ) -> std::io::Result<OdomThread> {
        let stop = Arc::new(AtomicBool::new(false));
        let published = Arc::new(AtomicU64::new(0));
        let bell = out.nrt_bell();
        let (thread, placed) = {
            let (stop, published) = (stop.clone(), published.clone());
            companion::spawn(name, placement, move || {
                let mut t = Thread {
                    sink: make_sink(),
                    targets,
                    timers,
                    published,
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
            })?
        };
        Ok(OdomThread {
            stop,
            bell,
            published,
            thread: Some(thread),
            placed,
        })
    }

    /// Whether the thread still runs.
    pub fn is_running(&self) -> bool {
        self.thread.as_ref().is_some_and(|t| !t.is_finished())
    }

    /// Where the thread runs, and what it could not obtain of its placement.
    pub fn placed(&self) -> &Placed {
        &self.placed
    }

    /// Samples whose `odom` was published so far.
    pub fn published(&self) -> u64 {
        self.published.load(Ordering::Relaxed)
    }
}

impl Drop for OdomThread {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        self.bell.ring();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// What the thread holds.
struct Thread<S: OdomSink> {
    sink: S,
    targets: OdomTargets<S::Out>,
    timers: NrtHopTimers,
    published: Arc<AtomicU64>,
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

    /// Asks the RT thread for the samples of the robots someone listens to ([`crate::odom_demand`]).
    fn check_listeners(&self, demand: &mut DemandCheck, now: Instant) {
        let sink = &self.sink;
        let tf = sink.count_tf();
        let table = self.targets.lock();
        demand.apply(
            now,
            table.robots.iter().map(|(id, e)| {
                let r = &e.robot;
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
                (*id, listeners)
            }),
        );
    }

    /// Publishes one sample's `~/cmd_vel_out` and `odom` if its robot is a target and the rate limit lets it
    /// through; `Some`: its `/tf` and `joint_states` are to be published ([`Thread::publish_rest`]).
    fn publish_odom(&mut self, h: &OdomHandoff) -> Option<Started<S::Rest>> {
        let s = &h.sample;
        let mut table = self.targets.lock();
        let Some(e) = table.entry(s) else {
            drop(table);
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
        drop(table);
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
        let mut table = self.targets.lock();
        let Some(e) = table.entry(s) else {
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
        drop(table);
        for err in results.into_iter().filter_map(Result::err) {
            self.sink.warn(s.node, "odometry", &err);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use handoff::{odom_out, Twist2};
    use nrt_engine::thymio::calibration::Calibration;
    use nrt_engine::thymio::params::DriverParams;
    use std::time::Duration;

    /// A sink that writes down what it is asked to do.
    struct Log(Arc<Mutex<Vec<String>>>);

    impl Log {
        fn push(&self, e: String) {
            self.0.lock().unwrap().push(e);
        }
    }

    impl OdomSink for Log {
        type Out = &'static str;
        type Rest = String;
        type Error = String;

        fn count_tf(&self) -> Option<usize> {
            Some(0)
        }
        fn count(&self, _: &&'static str, topic: Topic) -> Option<usize> {
            Some(usize::from(topic == Topic::Odom))
        }
        fn prepare(&mut self, _: RobotId, r: &OdomRobot<&'static str>, generation: u64) {
            self.push(format!("prepare {} {generation}", r.out));
        }
        fn forget(&mut self, robot: RobotId) {
            self.push(format!("forget {}", robot.0));
        }
        fn publish_cmd_vel_out(
            &mut self,
            _: RobotId,
            r: &mut OdomRobot<&'static str>,
            h: &OdomHandoff,
        ) -> Result<(), String> {
            self.push(format!("cmd_vel_out {} {}", r.out, h.commanded.linear));
            Ok(())
        }
        fn publish_odom(
            &mut self,
            _: RobotId,
            r: &mut OdomRobot<&'static str>,
            s: &OdomSample,
        ) -> Result<(), String> {
            self.push(format!("odom {} {}", r.out, s.seq));
            Err("refused".into())
        }
        fn rest(&mut self, _: RobotId, r: &OdomRobot<&'static str>, s: &OdomSample) -> String {
            format!("{} {}", r.out, s.seq)
        }
        fn publish_tf(&mut self, _: RobotId, rest: &mut String) -> Result<(), String> {
            self.push(format!("tf {rest}"));
            Ok(())
        }
        fn publish_joint_states(
            &mut self,
            _: RobotId,
            _: &mut OdomRobot<&'static str>,
            rest: &mut String,
        ) -> Result<(), String> {
            self.push(format!("joint_states {rest}"));
            Ok(())
        }
        fn publish_joint(&mut self, s: &JointStateSample) {
            self.push(format!("joint {}", s.robot.0));
        }
        fn warn(&self, node: NodeId, what: &str, e: &String) {
            self.push(format!("warn {} {what}: {e}", node.0));
        }
    }

    fn robot(
        node: u16,
        name: &'static str,
        max_rate: f64,
        cmd_vel_out: bool,
    ) -> OdomRobot<&'static str> {
        OdomRobot {
            node: NodeId(node),
            frames: Frames::new(name, "odom", "base_link", ["l", "r"]),
            settings: OdomSettings::new(&Calibration::real(), &DriverParams::default()),
            max_rate,
            limited_velocity: Arc::new(AtomicBool::new(cmd_vel_out)),
            wheel_tf: true,
            out: name,
        }
    }

    fn sample(robot: u8, node: u16, seq: u32) -> OdomSample {
        OdomSample {
            robot: RobotId(robot),
            node: NodeId(node),
            seq,
            ..OdomSample::default()
        }
    }

    /// Waits (bounded) until the log holds `e`, then returns the log.
    fn wait_for(log: &Mutex<Vec<String>>, e: &str) -> Vec<String> {
        let end = Instant::now() + Duration::from_secs(10);
        loop {
            let l = log.lock().unwrap().clone();
            if l.iter().any(|x| x == e) || Instant::now() > end {
                return l;
            }
            std::thread::yield_now();
        }
    }

    /// Every robot's `odom` of a burst first, then their `/tf` and `joint_states`; `~/cmd_vel_out` only while
    /// `limited_velocity`; samples of no target (or of another node in the slot) are not published;
    /// `odom_max_rate` holds back a sample too soon; publish errors are reported; settings changes rebuild.
    #[test]
    fn a_burst_publishes_every_odom_first_within_the_rules() {
        let targets = OdomTargets::default();
        targets.insert(RobotId(1), robot(10, "a", 0.0, true));
        targets.insert(RobotId(2), robot(20, "b", 0.001, false));
        let (mut rt, mut out) = odom_out(16);
        out.nrt_activate();
        let commanded = Twist2 {
            linear: 0.5,
            angular: 0.0,
        };
        for s in [sample(1, 10, 1), sample(2, 20, 1), sample(3, 30, 1)] {
            assert!(rt.rt_publish(s, commanded, 1));
        }
        let log = Arc::new(Mutex::new(Vec::new()));
        let sink = Log(log.clone());
        let thread = OdomThread::start(
            "odom-test",
            out,
            targets.clone(),
            NrtHopTimers::default(),
            Default::default(),
            move || sink,
        )
        .unwrap();
        let first = wait_for(&log, "joint_states b 1");
        assert_eq!(
            first,
            [
                "prepare a 1",
                "cmd_vel_out a 0.5",
                "odom a 1",
                "warn 10 odometry: refused",
                "prepare b 2",
                "odom b 1",
                "warn 20 odometry: refused",
                "forget 3",
                "tf a 1",
                "joint_states a 1",
                "tf b 1",
                "joint_states b 1",
            ]
        );
        assert_eq!(thread.published(), 2);
        log.lock().unwrap().clear();
        // same settings: the entry is unchanged; new ones: it is rebuilt
        let mut settings = OdomSettings::new(&Calibration::real(), &DriverParams::default());
        targets.set_settings(RobotId(1), &settings);
        settings.odom_tf = !settings.odom_tf;
        targets.set_settings(RobotId(2), &settings);
        assert!(rt.rt_publish(sample(2, 20, 2), commanded, 2)); // within b's 1000 s: held back
        assert!(rt.rt_publish(sample(1, 11, 2), commanded, 2)); // another node in a's slot
        assert!(rt.rt_publish_joint(JointStateSample {
            robot: RobotId(1),
            ..JointStateSample::default()
        }));
        let second = wait_for(&log, "joint 1");
        assert_eq!(second, ["prepare b 3", "forget 1", "joint 1"]);
        assert_eq!(thread.published(), 2);
        drop(thread);
        assert!(
            log.lock().unwrap().len() == 3,
            "nothing after the thread stopped"
        );
    }
}
