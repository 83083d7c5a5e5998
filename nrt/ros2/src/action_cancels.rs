//! The cancel requests of the goals an action server accepted: r2r hands one stream of them per accepted goal.
//! Shared by every action server of the ROS 2 front end (the motor calibration and the goal actions): each accepted
//! cancel is answered at once and handed to the layer's state machine, which ends the goal.

use futures::{FutureExt, Stream, StreamExt};
use r2r::ActionServerCancelRequest;
use std::collections::BTreeMap;

/// A cancel request that can be accepted (r2r's [`ActionServerCancelRequest`]; a stand-in in tests).
pub trait CancelRequest {
    /// Accepts the request (r2r sends the answer at its spinner's next wait).
    fn accept(self);
}

impl CancelRequest for ActionServerCancelRequest {
    fn accept(self) {
        ActionServerCancelRequest::accept(self);
    }
}

type Requests<C> = Box<dyn Stream<Item = C> + Unpin>;

/// The cancel requests of the running goals, by the layer's goal id `Id`.
///
/// ```
/// use futures::channel::mpsc;
/// use nrt_ros2::action_cancels::{ActionCancels, CancelRequest};
///
/// struct Request;
/// impl CancelRequest for Request {
///     fn accept(self) {}
/// }
/// let mut cancels = ActionCancels::<u64, Request>::new();
/// let (tx, rx) = mpsc::unbounded();
/// cancels.insert(7, rx);
/// tx.unbounded_send(Request).unwrap();
/// assert_eq!(cancels.accept_all(|_| true), [7]);
/// ```
pub struct ActionCancels<Id, C = ActionServerCancelRequest> {
    requests: BTreeMap<Id, Requests<C>>,
}

impl<Id: Ord + Copy, C> Default for ActionCancels<Id, C> {
    fn default() -> Self {
        ActionCancels {
            requests: BTreeMap::new(),
        }
    }
}

impl<Id: Ord + Copy, C: CancelRequest> ActionCancels<Id, C> {
    /// No goal yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// The cancel requests of the goal the layer started as `id`.
    pub fn insert(&mut self, id: Id, requests: impl Stream<Item = C> + Unpin + 'static) {
        self.requests.insert(id, Box::new(requests));
    }

    /// Forgets the goals that ended (`running` false), then accepts every cancel request that came (never blocks)
    /// and returns their goals, for the layer to end. One accepted: the caller wakes the spinner, which sends the
    /// answers.
    pub fn accept_all(&mut self, running: impl Fn(Id) -> bool) -> Vec<Id> {
        let mut cancelled = Vec::new();
        self.requests.retain(|id, requests| {
            if !running(*id) {
                return false;
            }
            let Some(Some(request)) = requests.next().now_or_never() else {
                return true;
            };
            request.accept();
            cancelled.push(*id);
            false
        });
        cancelled
    }

    /// The goals whose cancel requests are watched.
    pub fn len(&self) -> usize {
        self.requests.len()
    }

    /// Whether no goal's cancel requests are watched.
    pub fn is_empty(&self) -> bool {
        self.requests.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::channel::mpsc;
    use std::cell::Cell;
    use std::rc::Rc;

    /// A request that counts its acceptance.
    struct Counted(Rc<Cell<u32>>);

    impl CancelRequest for Counted {
        fn accept(self) {
            self.0.set(self.0.get() + 1);
        }
    }

    #[test]
    fn a_cancel_is_accepted_once_and_its_goal_handed_and_forgotten() {
        let accepted = Rc::new(Cell::new(0));
        let mut c = ActionCancels::<u64, Counted>::new();
        let (tx1, rx1) = mpsc::unbounded();
        let (_tx2, rx2) = mpsc::unbounded();
        c.insert(1, rx1);
        c.insert(2, rx2);
        assert!(c.accept_all(|_| true).is_empty(), "nothing came");
        tx1.unbounded_send(Counted(accepted.clone())).unwrap();
        assert_eq!(c.accept_all(|_| true), [1]);
        assert_eq!(accepted.get(), 1);
        assert_eq!(c.len(), 1, "goal 1's requests are no longer watched");
        // a second request for goal 1 finds nobody: the goal is ending
        let _ = tx1.unbounded_send(Counted(accepted.clone()));
        assert!(c.accept_all(|_| true).is_empty());
        assert_eq!(accepted.get(), 1);
    }

    #[test]
    fn the_requests_of_goals_that_ended_are_dropped_unanswered() {
        let accepted = Rc::new(Cell::new(0));
        let mut c = ActionCancels::<u64, Counted>::new();
        let (tx, rx) = mpsc::unbounded();
        c.insert(3, rx);
        tx.unbounded_send(Counted(accepted.clone())).unwrap();
        assert!(c.accept_all(|id| id != 3).is_empty());
        assert_eq!(accepted.get(), 0);
        assert!(c.is_empty());
    }
}
