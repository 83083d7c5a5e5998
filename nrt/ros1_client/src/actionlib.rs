//! A ROS 1 actionlib action server over our transport ([`super::net`]), for any action: it subscribes
//! `<action>/goal` and `<action>/cancel` and publishes `<action>/status` (`actionlib_msgs/GoalStatusArray`, every
//! [`STATUS_PERIOD`] as actionlib's default `status_frequency` of 5 Hz, and at each change), `<action>/feedback` and
//! `<action>/result`, following actionlib's protocol ([`super::actionlib_state`]). Debian's `python3-actionlib`
//! (`SimpleActionClient`, `ActionClient`) is its peer.
//!
//! Threads: the subscriptions run on the node's runtime and hand goals and cancels to the NRT loop (ringing its
//! bell); the NRT loop takes them with [`ActionServer::next`], answers each goal ([`ActionServer::accept`] or
//! [`ActionServer::reject`]), and an accepted goal's [`ServerGoal`] publishes its feedback and result from wherever
//! the goal is served; [`ActionServer::publish_status`] is called at every iteration of the loop. Creating a server
//! takes master round trips: make it on the registrar thread ([`super::graph::Graph::submit`]).

use super::actionlib_state::{Asked, Goals, Terminal};
use super::graph::{global, Graph, GraphError, Task};
use super::net::Publisher;
use super::ros1_msgs::actionlib_msgs::{GoalID, GoalStatus, GoalStatusArray};
use super::ros1_msgs::std_msgs::Header;
use roslibrust::RosMessageType;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::mpsc::{channel, Receiver};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Period of `<action>/status` (actionlib's default `status_frequency`, 5 Hz).
pub const STATUS_PERIOD: Duration = Duration::from_millis(200);
/// Goals, cancels, feedback and results queued per connection (actionlib's Python server: 50 for its publishers).
const QUEUE: usize = 50;

/// An action's ROS 1 types (genmsg's `<Action>ActionGoal`, `…ActionFeedback`, `…ActionResult` around the user's
/// goal, feedback and result).
pub trait ActionTypes: 'static {
    /// The user's goal.
    type Goal: Send + 'static;
    /// The user's feedback.
    type Feedback;
    /// The user's result (its default goes with a rejected or recalled goal).
    type Result: Default;
    /// `<Action>ActionGoal`.
    type ActionGoal: RosMessageType + Send + 'static;
    /// `<Action>ActionFeedback`.
    type ActionFeedback: RosMessageType;
    /// `<Action>ActionResult`.
    type ActionResult: RosMessageType;
    /// The goal's id and content.
    fn split(goal: Self::ActionGoal) -> (GoalID, Self::Goal);
    /// The feedback message.
    fn feedback(
        header: Header,
        status: GoalStatus,
        feedback: Self::Feedback,
    ) -> Self::ActionFeedback;
    /// The result message.
    fn result(header: Header, status: GoalStatus, result: Self::Result) -> Self::ActionResult;
}

/// What the clients sent, for the NRT loop.
enum Input<G> {
    Goal(GoalID, G, String),
    Cancel(GoalID),
}

struct Shared<A: ActionTypes> {
    goals: Mutex<Goals>,
    status: Publisher<GoalStatusArray>,
    feedback: Publisher<A::ActionFeedback>,
    result: Publisher<A::ActionResult>,
    seq: AtomicU32,
    /// The action's global name (in reports).
    name: String,
}

impl<A: ActionTypes> Shared<A> {
    fn goals(&self) -> MutexGuard<'_, Goals> {
        self.goals.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn header(&self) -> Header {
        Header {
            seq: self.seq.fetch_add(1, Ordering::Relaxed),
            stamp: super::now(),
            frame_id: String::new(),
        }
    }

    fn publish_result(&self, status: GoalStatus, result: A::Result) {
        let msg = A::result(self.header(), status, result);
        if let Err(e) = self.result.publish(&msg) {
            tracing::warn!("ROS 1: {}: cannot publish a result: {e}", self.name);
        }
    }
}

/// One action server (see the module documentation); dropping it unregisters its topics.
pub struct ActionServer<A: ActionTypes> {
    shared: Arc<Shared<A>>,
    inbox: Receiver<Input<A::Goal>>,
    last_status: Option<Instant>,
    /// Cancels of several goals by one request, handed out one by one.
    pending: VecDeque<Asked<A::Goal>>,
    _goal: Task,
    _cancel: Task,
}

/// The topics of the action `name` (global), to forget when it goes.
pub fn topics(name: &str) -> [String; 5] {
    ["goal", "cancel", "status", "feedback", "result"].map(|leaf| global(&[name, leaf]))
}

impl<A: ActionTypes> ActionServer<A> {
    /// Serves the action `name` (global) on `graph` (blocking: master round trips).
    pub fn new(graph: &Graph, name: &str) -> Result<ActionServer<A>, GraphError> {
        let t = |leaf: &str| global(&[name, leaf]);
        let shared = Arc::new(Shared::<A> {
            goals: Mutex::default(),
            status: graph.advertise(&t("status"), QUEUE, false)?,
            feedback: graph.advertise(&t("feedback"), QUEUE, false)?,
            result: graph.advertise(&t("result"), QUEUE, false)?,
            seq: AtomicU32::new(0),
            name: name.to_owned(),
        });
        let (tx, inbox) = channel();
        let mut goals = graph.subscribe::<A::ActionGoal>(&t("goal"), QUEUE)?;
        let (bell, to, topic, action) =
            (graph.bell.clone(), tx.clone(), t("goal"), name.to_owned());
        let goal = graph.spawn(async move {
            while let Some(m) = goals.next().await {
                match m {
                    Ok(g) => {
                        let (id, goal) = A::split(g);
                        if to.send(Input::Goal(id, goal, action.clone())).is_err() {
                            return;
                        }
                        bell.ring();
                    }
                    Err(e) => tracing::warn!("ROS 1: {topic}: {e}"),
                }
            }
        });
        let mut cancels = graph.subscribe::<GoalID>(&t("cancel"), QUEUE)?;
        let (bell, topic) = (graph.bell.clone(), t("cancel"));
        let cancel = graph.spawn(async move {
            while let Some(m) = cancels.next().await {
                match m {
                    Ok(id) => {
                        if tx.send(Input::Cancel(id)).is_err() {
                            return;
                        }
                        bell.ring();
                    }
                    Err(e) => tracing::warn!("ROS 1: {topic}: {e}"),
                }
            }
        });
        Ok(ActionServer {
            shared,
            inbox,
            last_status: None,
            pending: VecDeque::new(),
            _goal: goal,
            _cancel: cancel,
        })
    }

    /// The next goal or cancel request for the user (never waits); what the protocol answers by itself (a
    /// duplicate goal, a goal cancelled before it came) is done here.
    pub fn next(&mut self, now: Instant) -> Option<Asked<A::Goal>> {
        loop {
            if let Some(asked) = self.pending.pop_front() {
                return Some(asked);
            }
            match self.inbox.try_recv().ok()? {
                Input::Goal(id, goal, caller) => {
                    let asked = self.shared.goals().on_goal(id, goal, &caller, now);
                    match asked {
                        Ok(asked) => return Some(asked),
                        Err(Some(ended)) => self.shared.publish_result(ended, A::Result::default()),
                        Err(None) => {}
                    }
                }
                Input::Cancel(id) => {
                    let cancelled = self.shared.goals().on_cancel(&id, now);
                    self.pending
                        .extend(cancelled.into_iter().map(Asked::Cancel));
                }
            }
        }
    }

    /// Accepts goal `id` (ACTIVE): its handle, for feedback and the result.
    pub fn accept(&mut self, id: &str) -> Option<ServerGoal<A>> {
        self.shared.goals().accept(id).then(|| ServerGoal {
            shared: self.shared.clone(),
            id: id.to_owned(),
        })
    }

    /// Rejects goal `id`, saying `why` (its status text).
    pub fn reject(&mut self, id: &str, why: &str) {
        let ended = self
            .shared
            .goals()
            .end(id, Terminal::Rejected, why, Instant::now());
        if let Some(status) = ended {
            self.shared.publish_result(status, A::Result::default());
        }
    }

    /// Whether anyone listens to the action: a subscriber connected to its `status` or `feedback` (every actionlib
    /// client subscribes to both; a client whose process died has its connections closed).
    pub fn listened(&self) -> bool {
        self.shared.status.subscriber_count() + self.shared.feedback.subscriber_count() > 0
    }

    /// Publishes `<action>/status` when it changed or is due.
    pub fn publish_status(&mut self, now: Instant) {
        let (changed, list) = {
            let mut goals = self.shared.goals();
            (goals.take_changed(), goals.status_list(now))
        };
        let due = self
            .last_status
            .is_none_or(|t| now.duration_since(t) >= STATUS_PERIOD);
        if !(changed || due) {
            return;
        }
        self.last_status = Some(now);
        let msg = GoalStatusArray {
            header: self.shared.header(),
            status_list: list,
        };
        if let Err(e) = self.shared.status.publish(&msg) {
            tracing::warn!(
                "ROS 1: {}: cannot publish its status: {e}",
                self.shared.name
            );
        }
    }
}

/// An accepted goal: publishes its feedback and its result (usable from any thread).
pub struct ServerGoal<A: ActionTypes> {
    shared: Arc<Shared<A>>,
    id: String,
}

impl<A: ActionTypes> ServerGoal<A> {
    /// The goal's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Publishes `feedback` (nothing once the goal ended).
    pub fn feedback(&self, feedback: A::Feedback) -> Result<(), GraphError> {
        let Some(status) = self.shared.goals().running(&self.id) else {
            return Ok(());
        };
        let msg = A::feedback(self.shared.header(), status, feedback);
        self.shared
            .feedback
            .publish(&msg)
            .map_err(GraphError::Publish)
    }

    /// Ends the goal as `how`, saying `text`, with `result`; false if it had ended already.
    pub fn finish(self, how: Terminal, text: &str, result: A::Result) -> bool {
        let ended = self.shared.goals().end(&self.id, how, text, Instant::now());
        match ended {
            Some(status) => {
                self.shared.publish_result(status, result);
                true
            }
            None => false,
        }
    }
}
