//! actionlib's server-side protocol, without I/O: the status list of an action server (every goal it tracks with
//! its `actionlib_msgs/GoalStatus`), the transitions of each goal (PENDING → ACTIVE → SUCCEEDED / ABORTED /
//! PREEMPTED, PENDING → REJECTED / RECALLED, cancel requests through RECALLING / PREEMPTING), the cancel rules (by
//! id, every goal, every goal stamped at or before a time, and a goal cancelled before it arrived), and how long an
//! ended goal stays listed. The facts are actionlib's (`action_server.py`, `server_goal_handle.py`); the transport
//! ([`super::actionlib`]) publishes what this decides.

use crate::ros1_msgs::actionlib_msgs::{GoalID, GoalStatus};
use roslibrust::codegen::integral_types::Time;
use std::time::{Duration, Instant};

/// How long an ended goal stays in the status list (actionlib's `status_list_timeout`).
pub const STATUS_LIST_TIMEOUT: Duration = Duration::from_secs(5);

/// The text of a goal stamped at or before the last cancel-before-time request (actionlib's).
pub const CANCELED_BEFORE: &str =
    "This goal handle was canceled by the action server because its timestamp is before \
                                   the timestamp of the last cancel request";

/// How a goal ends (its terminal status follows from where it is).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Terminal {
    /// SUCCEEDED.
    Succeeded,
    /// ABORTED.
    Aborted,
    /// PREEMPTED (an active goal) or RECALLED (a pending one).
    Canceled,
    /// REJECTED (a pending goal only).
    Rejected,
}

/// What a message from a client asks of the server's user.
#[derive(Debug, Clone, PartialEq)]
pub enum Asked<G> {
    /// A new goal (PENDING): accept or reject it.
    Goal(String, G),
    /// Cancel this goal (it went from PENDING to RECALLING or from ACTIVE to PREEMPTING).
    Cancel(String),
}

struct Tracked {
    status: GoalStatus,
    /// When it ended (or was listed without a goal): dropped from the list [`STATUS_LIST_TIMEOUT`] later.
    ended: Option<Instant>,
}

fn zero(t: &Time) -> bool {
    t.secs == 0 && t.nsecs == 0
}

fn at_or_before(a: &Time, b: &Time) -> bool {
    (a.secs, a.nsecs) <= (b.secs, b.nsecs)
}

fn terminal(status: u8) -> bool {
    !matches!(
        status,
        GoalStatus::PENDING | GoalStatus::ACTIVE | GoalStatus::RECALLING | GoalStatus::PREEMPTING
    )
}

/// The status list and the rules (see the module documentation).
#[derive(Default)]
pub struct Goals {
    list: Vec<Tracked>,
    last_cancel: Time,
    /// Goals given without an id (numbered as actionlib's id generator does).
    generated: u64,
    /// The list changed since [`Goals::take_changed`].
    changed: bool,
}

fn find<'a>(list: &'a mut [Tracked], id: &str) -> Option<&'a mut Tracked> {
    list.iter_mut().find(|t| t.status.goal_id.id == id)
}

impl Goals {
    /// A goal arrived (`caller` names it when its id is empty); the goal for the user, or the ended goal's status
    /// to publish as its result (a duplicate, or a goal cancelled before it came).
    pub fn on_goal<G>(
        &mut self,
        mut goal_id: GoalID,
        goal: G,
        caller: &str,
        now: Instant,
    ) -> Result<Asked<G>, Option<GoalStatus>> {
        if goal_id.id.is_empty() {
            self.generated += 1;
            let t = &goal_id.stamp;
            goal_id.id = format!("{caller}-{}-{}.{:09}", self.generated, t.secs, t.nsecs);
        }
        if let Some(t) = find(&mut self.list, &goal_id.id) {
            // known: a goal cancelled before it came ends now; any other is a duplicate, ignored
            if t.status.status == GoalStatus::RECALLING {
                t.status.status = GoalStatus::RECALLED;
                t.ended = Some(now);
                self.changed = true;
                return Err(Some(t.status.clone()));
            }
            return Err(None);
        }
        let before_cancel =
            !zero(&goal_id.stamp) && at_or_before(&goal_id.stamp, &self.last_cancel);
        let id = goal_id.id.clone();
        let mut status = GoalStatus {
            goal_id,
            status: GoalStatus::PENDING,
            text: String::new(),
        };
        self.changed = true;
        if before_cancel {
            status.status = GoalStatus::RECALLED;
            status.text = CANCELED_BEFORE.to_owned();
            self.list.push(Tracked {
                status: status.clone(),
                ended: Some(now),
            });
            return Err(Some(status));
        }
        self.list.push(Tracked {
            status,
            ended: None,
        });
        Ok(Asked::Goal(id, goal))
    }

    /// A cancel request arrived: the goals whose cancel the user must act on.
    pub fn on_cancel(&mut self, cancel: &GoalID, now: Instant) -> Vec<String> {
        let everything = cancel.id.is_empty() && zero(&cancel.stamp);
        let mut out = Vec::new();
        let mut found = false;
        for t in self.list.iter_mut() {
            let this_one = !cancel.id.is_empty() && t.status.goal_id.id == cancel.id;
            let before =
                !zero(&cancel.stamp) && at_or_before(&t.status.goal_id.stamp, &cancel.stamp);
            if !(everything || this_one || before) {
                continue;
            }
            found |= this_one;
            let next = match t.status.status {
                GoalStatus::PENDING => GoalStatus::RECALLING,
                GoalStatus::ACTIVE => GoalStatus::PREEMPTING,
                _ => continue,
            };
            t.status.status = next;
            self.changed = true;
            out.push(t.status.goal_id.id.clone());
        }
        if !cancel.id.is_empty() && !found {
            // cancelled before it came: recalled when it does
            self.list.push(Tracked {
                status: GoalStatus {
                    goal_id: cancel.clone(),
                    status: GoalStatus::RECALLING,
                    text: String::new(),
                },
                ended: Some(now),
            });
            self.changed = true;
        }
        if !at_or_before(&cancel.stamp, &self.last_cancel) {
            self.last_cancel = cancel.stamp.clone();
        }
        out
    }

    /// The user accepts goal `id` (PENDING → ACTIVE, RECALLING → PREEMPTING); false if it cannot be.
    pub fn accept(&mut self, id: &str) -> bool {
        let Some(t) = find(&mut self.list, id) else {
            return false;
        };
        let next = match t.status.status {
            GoalStatus::PENDING => GoalStatus::ACTIVE,
            GoalStatus::RECALLING => GoalStatus::PREEMPTING,
            _ => return false,
        };
        t.status.status = next;
        self.changed = true;
        true
    }

    /// The status of goal `id` now (for its feedback), if it is listed and not ended.
    pub fn running(&mut self, id: &str) -> Option<GoalStatus> {
        find(&mut self.list, id)
            .filter(|t| !terminal(t.status.status))
            .map(|t| t.status.clone())
    }

    /// Ends goal `id` as `how`, saying `text`: its status, to publish with its result; `None` if the transition
    /// is not one of actionlib's (an ended goal, a rejection of an active one).
    pub fn end(&mut self, id: &str, how: Terminal, text: &str, now: Instant) -> Option<GoalStatus> {
        let t = find(&mut self.list, id)?;
        use GoalStatus as S;
        let next = match (how, t.status.status) {
            (Terminal::Succeeded, S::ACTIVE | S::PREEMPTING) => S::SUCCEEDED,
            (Terminal::Aborted, S::ACTIVE | S::PREEMPTING) => S::ABORTED,
            (Terminal::Canceled, S::ACTIVE | S::PREEMPTING) => S::PREEMPTED,
            (Terminal::Canceled | Terminal::Aborted, S::PENDING | S::RECALLING) => S::RECALLED,
            (Terminal::Rejected, S::PENDING | S::RECALLING) => S::REJECTED,
            _ => return None,
        };
        t.status.status = next;
        t.status.text = text.to_owned();
        t.ended = Some(now);
        self.changed = true;
        Some(t.status.clone())
    }

    /// The status list now, without the goals ended more than [`STATUS_LIST_TIMEOUT`] ago.
    pub fn status_list(&mut self, now: Instant) -> Vec<GoalStatus> {
        self.list.retain(|t| {
            t.ended
                .is_none_or(|e| now.duration_since(e) <= STATUS_LIST_TIMEOUT)
        });
        self.list.iter().map(|t| t.status.clone()).collect()
    }

    /// Whether the list changed since the last call (the status is published then, besides its period).
    pub fn take_changed(&mut self) -> bool {
        std::mem::take(&mut self.changed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(id: &str, secs: i32) -> GoalID {
        GoalID {
            stamp: Time { secs, nsecs: 0 },
            id: id.into(),
        }
    }

    fn status_of(g: &mut Goals, goal: &str) -> u8 {
        let now = Instant::now();
        g.status_list(now)
            .into_iter()
            .find(|s| s.goal_id.id == goal)
            .map(|s| s.status)
            .unwrap()
    }

    #[test]
    fn a_goal_goes_pending_active_succeeded_and_leaves_the_list_later() {
        let mut g = Goals::default();
        let t0 = Instant::now();
        assert_eq!(
            g.on_goal(id("a", 1), 7, "/c", t0),
            Ok(Asked::Goal("a".into(), 7))
        );
        assert!(g.take_changed() && !g.take_changed());
        assert_eq!(status_of(&mut g, "a"), GoalStatus::PENDING);
        assert!(g.accept("a"));
        assert_eq!(g.running("a").unwrap().status, GoalStatus::ACTIVE);
        let s = g.end("a", Terminal::Succeeded, "done", t0).unwrap();
        assert_eq!((s.status, s.text.as_str()), (GoalStatus::SUCCEEDED, "done"));
        assert!(g.running("a").is_none());
        // ended once only
        assert_eq!(g.end("a", Terminal::Aborted, "", t0), None);
        assert_eq!(g.status_list(t0 + Duration::from_secs(4)).len(), 1);
        assert!(g.status_list(t0 + Duration::from_secs(6)).is_empty());
        // a duplicate of a listed goal is ignored
        let mut g = Goals::default();
        assert!(g.on_goal(id("a", 1), 7, "/c", t0).is_ok());
        assert_eq!(g.on_goal(id("a", 1), 7, "/c", t0), Err(None));
    }

    #[test]
    fn rejected_aborted_and_the_transitions_actionlib_refuses() {
        let mut g = Goals::default();
        let now = Instant::now();
        g.on_goal(id("r", 1), (), "/c", now).unwrap();
        let s = g
            .end("r", Terminal::Rejected, "motor_speeds: 0", now)
            .unwrap();
        assert_eq!(
            (s.status, s.text.as_str()),
            (GoalStatus::REJECTED, "motor_speeds: 0")
        );
        g.on_goal(id("b", 1), (), "/c", now).unwrap();
        assert!(g.accept("b"));
        // an active goal cannot be rejected, nor accepted twice
        assert_eq!(g.end("b", Terminal::Rejected, "", now), None);
        assert!(!g.accept("b"));
        assert_eq!(
            g.end("b", Terminal::Aborted, "x", now).unwrap().status,
            GoalStatus::ABORTED
        );
        assert!(!g.accept("nobody"));
    }

    #[test]
    fn cancels_by_id_everything_and_stamp() {
        let mut g = Goals::default();
        let now = Instant::now();
        for (name, secs) in [("a", 1), ("b", 2), ("c", 3)] {
            g.on_goal(id(name, secs), (), "/c", now).unwrap();
            assert!(g.accept(name));
        }
        // by id: PREEMPTING, then PREEMPTED when the user cancels it
        assert_eq!(g.on_cancel(&id("b", 0), now), ["b"]);
        assert_eq!(status_of(&mut g, "b"), GoalStatus::PREEMPTING);
        assert_eq!(
            g.end("b", Terminal::Canceled, "", now).unwrap().status,
            GoalStatus::PREEMPTED
        );
        // at and before a stamp
        assert_eq!(g.on_cancel(&id("", 1), now), ["a"]);
        // everything still running
        assert_eq!(g.on_cancel(&id("", 0), now), ["c"]);
        // nothing left to cancel
        assert!(g.on_cancel(&id("", 0), now).is_empty());
        // a goal stamped at or before the last cancel-before-stamp is recalled as it comes
        let s = g.on_goal(id("old", 1), (), "/c", now).unwrap_err().unwrap();
        assert_eq!(
            (s.status, s.text.as_str()),
            (GoalStatus::RECALLED, CANCELED_BEFORE)
        );
        assert!(g.on_goal(id("new", 9), (), "/c", now).is_ok());
        // a pending goal cancelled is RECALLING, then RECALLED
        assert_eq!(g.on_cancel(&id("new", 0), now), ["new"]);
        assert_eq!(status_of(&mut g, "new"), GoalStatus::RECALLING);
        assert_eq!(
            g.end("new", Terminal::Canceled, "", now).unwrap().status,
            GoalStatus::RECALLED
        );
    }

    #[test]
    fn a_goal_cancelled_before_it_came_is_recalled_and_ids_are_made_for_anonymous_goals() {
        let mut g = Goals::default();
        let now = Instant::now();
        assert!(g.on_cancel(&id("early", 0), now).is_empty());
        let s = g
            .on_goal(id("early", 5), (), "/c", now)
            .unwrap_err()
            .unwrap();
        assert_eq!(s.status, GoalStatus::RECALLED);
        match g.on_goal(id("", 5), (), "/client", now) {
            Ok(Asked::Goal(made, ())) => assert!(made.starts_with("/client-1-5."), "{made}"),
            other => panic!("{other:?}"),
        }
    }
}
