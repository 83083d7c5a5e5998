//! The r2r node spun on a thread of its own.
//!
//! `r2r::Node::spin_once` rebuilds the whole rcl wait set (every subscription, service and
//! publisher of the node: about 170 entities at 8 robots, 1 500 at 32) on each call, and
//! Fast DDS attaches and detaches each of them: about 0.5 ms per robot's interface per wait.
//! Called once per NRT iteration (1 kHz) it was most of the bridge's CPU. The spinner thread
//! instead waits in `spin_once` with a long timeout and only wakes when ROS has work (a message,
//! a service call), when someone wakes it ([`SharedNode::wake`]) or when the timeout ends. After
//! each wait it marks the node's streams worth draining ([`SharedNode::take_work`]: the NRT loop
//! drains them only then); when the wait ended before its timeout (ROS had work) it also rings
//! the NRT loop's doorbell (the one the RT thread rings too), and the loop serves the streams r2r
//! filled; a wait that ran out found nothing (rcl returns at once with nothing taken), so it
//! rings no one. Work that became ready in the last instant of a wait, returned just after the
//! timeout, is served at the NRT loop's next wake-up (at most its longest wait,
//! `nrt_engine::engine::IDLE_TICK`). The NRT loop itself only reads the rings and publishes
//! (publishing does not need the node).
//!
//! The node stays reachable from the NRT loop for what does need it (creating and destroying
//! topics and services when robots come and go) through [`SharedNode::access`]; the spinner
//! steps aside while someone waits for it. r2r's wait set has no guard condition to interrupt a
//! wait with, so the spinner's node subscribes to a hidden topic of its own
//! (`/_thymio_rt/wake_<random>`, unique per spinner: nobody else publishes on it) and whoever
//! finds the node held publishes an empty message there: the wait returns at once (the message
//! is level-triggered, so one published just before the wait starts wakes it too). The timeout
//! only bounds a lost wake-up, so it is long: a wait costs one rebuild of the node's wait set,
//! and at 100 ms the timeouts alone cost 13 % of a core at 32 robots. Once the wake-up topic is
//! matched no wake-up is lost, and the timeout grows from [`SPIN_TIMEOUT`] to
//! [`MATCHED_SPIN_TIMEOUT`].
//!
//! Latency-critical inputs skip the hop to the NRT loop: a [`SpinTask`] runs on the spinner
//! thread after every wait (the Thymio driver's `cmd_vel` goes straight to the RT thread's
//! set-point atomics this way).

use futures::Stream;
use handoff::Doorbell;
use r2r::std_msgs::msg::Empty;
use r2r::{Publisher, QosProfile};
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, TryLockError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Longest time the spinner waits in `spin_once`. Neither ROS messages nor those who want the
/// node (creating topics when a robot comes up) nor stopping wait for it: they wake the spinner.
/// It bounds only a lost wake-up (the wake topic not matched yet) and costs one rebuild of the
/// node's whole wait set per timeout while idle: it applies until the wake topic is matched, then
/// [`MATCHED_SPIN_TIMEOUT`].
pub const SPIN_TIMEOUT: Duration = Duration::from_secs(1);

/// Longest time the spinner waits once its wake-up publisher has matched its subscription: from
/// then on no wake-up is lost (the topic is reliable and its message level-triggered), so the
/// timeout bounds nothing anyone waits for, and each one is a wake-up and a rebuild of the node's
/// whole wait set for nothing (the idle driver's spinners woke once a second each for it).
pub const MATCHED_SPIN_TIMEOUT: Duration = Duration::from_secs(10);

/// The prefix of the spinners' hidden wake-up topics.
const WAKE_TOPIC_PREFIX: &str = "/_thymio_rt/wake_";

/// Work run on the spinner thread after every wait for ROS work: it must only drain streams and
/// hand their content to lock-free structures (never wait).
pub type SpinTask = Box<dyn FnMut() + Send>;

/// Names a registered [`SpinTask`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TaskId(u64);

/// The node shared by the spinner thread and the NRT loop.
pub struct SharedNode {
    node: Mutex<r2r::Node>,
    tasks: Mutex<(u64, Vec<(TaskId, SpinTask)>)>,
    /// Threads waiting for the node: the spinner lets them in before it waits again.
    waiting: AtomicUsize,
    stop: AtomicBool,
    /// Set by the spinner after each wait (r2r may have filled the node's streams), taken by
    /// the NRT loop ([`SharedNode::take_work`]).
    work: AtomicBool,
    /// Interrupts the spinner's wait (set when the spinner starts).
    /// (r2r's publisher is `Send`, not `Sync`: behind a mutex of its own.)
    wake: OnceLock<Mutex<Publisher<Empty>>>,
}

impl SharedNode {
    /// Wraps `node`.
    pub fn new(node: r2r::Node) -> Arc<SharedNode> {
        Arc::new(SharedNode {
            node: Mutex::new(node),
            tasks: Mutex::new((0, Vec::new())),
            waiting: AtomicUsize::new(0),
            stop: AtomicBool::new(false),
            work: AtomicBool::new(true),
            wake: OnceLock::new(),
        })
    }

    /// Whether the spinner has waited since the last call (then the node's streams may hold
    /// messages and calls: drain them; otherwise they are empty, and draining every stream of
    /// every robot on each NRT iteration would cost more than anything else the loop does).
    /// Also true after a wait that ran out, so that work r2r took in the last instant of a wait
    /// is never left behind.
    pub fn take_work(&self) -> bool {
        self.work.swap(false, Ordering::AcqRel)
    }

    /// Lazy access to the node: locks it on first use, for as long as the access lives.
    pub fn access(&self) -> NodeAccess<'_> {
        NodeAccess {
            shared: self,
            guard: None,
        }
    }

    /// Runs `task` on the spinner thread after every wait, until removed.
    pub fn add_task(&self, task: SpinTask) -> TaskId {
        let mut tasks = self.tasks.lock().unwrap_or_else(|e| e.into_inner());
        tasks.0 += 1;
        let id = TaskId(tasks.0);
        tasks.1.push((id, task));
        id
    }

    /// Removes (and drops) a task; it does not run again once this returns.
    pub fn remove_task(&self, id: TaskId) {
        let mut tasks = self.tasks.lock().unwrap_or_else(|e| e.into_inner());
        tasks.1.retain(|(t, _)| *t != id);
    }

    fn run_tasks(&self) {
        let mut tasks = self.tasks.lock().unwrap_or_else(|e| e.into_inner());
        for (_, task) in tasks.1.iter_mut() {
            task();
        }
    }

    fn lock(&self) -> MutexGuard<'_, r2r::Node> {
        self.waiting.fetch_add(1, Ordering::SeqCst);
        // A panic while holding the node (in r2r) leaves it usable: its state is rcl's.
        let guard = match self.node.try_lock() {
            Ok(g) => g,
            Err(TryLockError::Poisoned(e)) => e.into_inner(),
            Err(TryLockError::WouldBlock) => {
                // the spinner waits (or is about to): `waiting` keeps it from waiting again
                self.wake_spinner();
                self.node.lock().unwrap_or_else(|e| e.into_inner())
            }
        };
        self.waiting.fetch_sub(1, Ordering::SeqCst);
        guard
    }

    /// Ends the spinner's current (or next) wait, for what r2r does only between waits (the
    /// answers to accepted action cancels).
    pub fn wake(&self) {
        self.wake_spinner();
    }

    /// Ends the spinner's current (or next) wait; without a spinner, or if publishing fails,
    /// the wait ends at its timeout.
    fn wake_spinner(&self) {
        if let Some(p) = self.wake.get() {
            let p = p.lock().unwrap_or_else(|e| e.into_inner());
            let _ = p.publish(&Empty::default());
        }
    }

    /// Whether the wake-up publisher has matched its subscription (then [`SharedNode::wake_spinner`] always
    /// ends a wait); false without a spinner or if the count cannot be read.
    fn wake_matched(&self) -> bool {
        self.wake.get().is_some_and(|p| {
            let p = p.lock().unwrap_or_else(|e| e.into_inner());
            p.get_inter_process_subscription_count()
                .is_ok_and(|n| n > 0)
        })
    }

    /// Creates the spinner's wake-up topic on the node: the publisher is kept here, the
    /// subscription returned (the spinner drains it).
    fn make_wake(&self) -> Result<impl Stream<Item = Empty> + Unpin + Send + 'static, r2r::Error> {
        let topic = wake_topic();
        let qos = QosProfile::default().keep_last(1).reliable().volatile();
        let mut node = self.node.lock().unwrap_or_else(|e| e.into_inner());
        let sub = node.subscribe::<Empty>(&topic, qos.clone())?;
        let publisher = node.create_publisher::<Empty>(&topic, qos)?;
        let _ = self.wake.set(Mutex::new(publisher));
        Ok(sub)
    }

    /// One wait for ROS work (at most `timeout`), unless someone waits for the node; whether it
    /// waited and ended before `timeout` (ROS had work).
    fn spin_once(&self, timeout: Duration) -> bool {
        if self.waiting.load(Ordering::SeqCst) > 0 {
            std::thread::sleep(Duration::from_micros(50));
            return false;
        }
        let start = Instant::now();
        self.node
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .spin_once(timeout);
        let woke = start.elapsed() < timeout;
        self.work.store(true, Ordering::Release);
        self.run_tasks();
        woke
    }
}

/// The node, locked on demand (see [`SharedNode::access`]).
pub struct NodeAccess<'a> {
    shared: &'a SharedNode,
    guard: Option<MutexGuard<'a, r2r::Node>>,
}

impl NodeAccess<'_> {
    /// The node, waking the spinner and waiting for it to step aside the first time.
    pub fn get(&mut self) -> &mut r2r::Node {
        self.guard.get_or_insert_with(|| self.shared.lock())
    }

    /// The shared node (for its spinner tasks).
    pub fn shared(&self) -> &SharedNode {
        self.shared
    }
}

/// The spinner thread; stopped and joined on drop.
pub struct Spinner {
    shared: Arc<SharedNode>,
    thread: Option<JoinHandle<()>>,
}

impl Spinner {
    /// Starts spinning `shared`; every wait that ROS ended (before [`SPIN_TIMEOUT`]) rings `wake`.
    pub fn start(shared: Arc<SharedNode>, wake: Doorbell) -> std::io::Result<Spinner> {
        Self::start_named(shared, wake, "nrt-ros-spin")
    }

    /// As [`Spinner::start`], on a thread named `name`.
    pub fn start_named(
        shared: Arc<SharedNode>,
        wake: Doorbell,
        name: &str,
    ) -> std::io::Result<Spinner> {
        Self::start_with(shared, wake, name, None)
    }

    /// As [`Spinner::start_named`], with a stack of `stack` bytes (the default, 2 MiB, when
    /// `None`): under `mlockall(MCL_FUTURE)` each thread's whole stack is resident, so the
    /// spinners made per robot take a small one.
    pub fn start_with(
        shared: Arc<SharedNode>,
        wake: Doorbell,
        name: &str,
        stack: Option<usize>,
    ) -> std::io::Result<Spinner> {
        let mut woken = shared.make_wake().map_err(std::io::Error::other)?;
        let thread = {
            let shared = shared.clone();
            let mut builder = std::thread::Builder::new().name(name.into());
            if let Some(bytes) = stack {
                builder = builder.stack_size(bytes);
            }
            builder.spawn(move || spin(&shared, &wake, &mut woken))?
        };
        Ok(Spinner {
            shared,
            thread: Some(thread),
        })
    }
}

impl Spinner {
    /// Whether the spinner thread still runs (it ends only when dropped, or on a panic in r2r or
    /// in a task: then ROS input is no longer served).
    pub fn is_running(&self) -> bool {
        self.thread.as_ref().is_some_and(|t| !t.is_finished())
    }
}

/// A wake-up topic name of its own: nobody else's spinner, in this process or another, listens
/// to it.
fn wake_topic() -> String {
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u32(std::process::id());
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
    h.write_u128(now.map_or(0, |d| d.as_nanos()));
    format!("{WAKE_TOPIC_PREFIX}{:016x}", h.finish())
}

/// Spins until stopped, ringing `wake` after each wait ROS ended; drops the wake-up messages
/// (`woken`: they only ended a wait).
fn spin(shared: &SharedNode, wake: &Doorbell, woken: &mut (impl Stream<Item = Empty> + Unpin)) {
    let mut matched = false;
    while !shared.stop.load(Ordering::Relaxed) {
        // once matched, it stays so (both ends live as long as the node)
        matched = matched || shared.wake_matched();
        let timeout = if matched {
            MATCHED_SPIN_TIMEOUT
        } else {
            SPIN_TIMEOUT
        };
        if shared.spin_once(timeout) {
            wake.ring();
        }
        let _ = super::drain(woken).count();
    }
}

impl Drop for Spinner {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Relaxed);
        self.shared.wake_spinner();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
#[path = "spinner_tests.rs"]
mod tests;
