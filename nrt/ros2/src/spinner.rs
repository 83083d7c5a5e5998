//! The r2r node spun on a thread of its own.
//!
//! `r2r::Node::spin_once` rebuilds the whole rcl wait set (every subscription, service and
//! publisher of the node: about 170 entities at 8 robots) on each call. Called once per NRT
//! iteration (1 kHz) it was most of the bridge's CPU. The spinner thread instead waits in
//! `spin_once` with a long timeout and only wakes when ROS has work (a message, a service call)
//! or the timeout ends. When the wait ended before its timeout (ROS had work) it rings the NRT
//! loop's doorbell (the one the RT thread rings too), and the loop serves the streams r2r filled;
//! a wait that ran out found nothing (rcl returns at once with nothing taken), so it rings no one.
//! Work that became ready in the last instant of a wait, returned just after the timeout, is
//! served at the NRT loop's next wake-up (at most its longest wait,
//! `nrt_engine::engine::IDLE_TICK`). The NRT loop itself only reads the rings and publishes
//! (publishing does not need the node).
//!
//! The node stays reachable from the NRT loop for what does need it (creating and destroying
//! topics and services when robots come and go) through [`SharedNode::access`]; the spinner
//! steps aside while someone waits for it, so such a wait lasts at most one spinner timeout.
//!
//! Latency-critical inputs skip the hop to the NRT loop: a [`SpinTask`] runs on the spinner
//! thread after every wait (the Thymio driver's `cmd_vel` goes straight to the RT thread's
//! set-point atomics this way).

use handoff::Doorbell;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Longest time the spinner waits in `spin_once`: bounds how long creating a topic waits for the
/// node (when a robot comes up: asebaros itself lets a node settle 200 ms first) and how long
/// stopping the spinner takes, not the latency of ROS messages (they wake it). Each wait rebuilds
/// the node's whole wait set, so an idle spinner costs one such rebuild per timeout.
pub const SPIN_TIMEOUT: Duration = Duration::from_millis(100);

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
}

impl SharedNode {
    /// Wraps `node`.
    pub fn new(node: r2r::Node) -> Arc<SharedNode> {
        Arc::new(SharedNode {
            node: Mutex::new(node),
            tasks: Mutex::new((0, Vec::new())),
            waiting: AtomicUsize::new(0),
            stop: AtomicBool::new(false),
        })
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
        let guard = self.node.lock().unwrap_or_else(|e| e.into_inner());
        self.waiting.fetch_sub(1, Ordering::SeqCst);
        guard
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
    /// The node, waiting for the spinner to step aside the first time (at most [`SPIN_TIMEOUT`]).
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
        let thread = {
            let shared = shared.clone();
            std::thread::Builder::new()
                .name(name.into())
                .spawn(move || spin(&shared, &wake))?
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

fn spin(shared: &SharedNode, wake: &Doorbell) {
    while !shared.stop.load(Ordering::Relaxed) {
        if shared.spin_once(SPIN_TIMEOUT) {
            wake.ring();
        }
    }
}

impl Drop for Spinner {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
