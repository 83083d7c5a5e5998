//! The calls a layer service holds for the driven robots (the switch's pending switches, the controllers' forwarded
//! service calls): which robots are driven (node → RT slot), the calls waiting, and what happens to them when a
//! robot goes (refused, [`NO_LONGER_DRIVEN`]) or when they are answered or time out (taken out, the rest keeping
//! their order). One implementation for every such service, whatever the front end.

use crate::reply::Held;
use handoff::{NodeId, RobotId};
use nrt_engine::engine::EngineEvent;
use std::collections::BTreeMap;

/// The answer of a switch-like call: success and a message.
pub type Answer = (bool, String);

/// Why a held call of a robot that went is refused (the same text on every front end).
pub const NO_LONGER_DRIVEN: &str = "the robot is no longer driven";

/// A call held for one robot's node.
pub trait HeldForNode {
    /// The node the call was made for.
    fn node(&self) -> NodeId;
    /// The caller's handle, to answer it.
    fn into_call(self) -> Held<Answer>;
}

/// The driven robots and the calls held for them (see the module documentation).
///
/// ```
/// use handoff::{NodeId, RobotId};
/// use nrt_engine::engine::EngineEvent;
/// use nrt_interface::held_calls::{Answer, HeldCalls, HeldForNode, NO_LONGER_DRIVEN};
/// use nrt_interface::reply::{held, Held};
/// use std::sync::mpsc::sync_channel;
///
/// struct Call(NodeId, Held<Answer>);
/// impl HeldForNode for Call {
///     fn node(&self) -> NodeId { self.0 }
///     fn into_call(self) -> Held<Answer> { self.1 }
/// }
/// let mut calls = HeldCalls::default();
/// calls.follow(&EngineEvent::RobotReady { node: NodeId(1), robot: RobotId(0) });
/// assert_eq!(calls.robot(NodeId(1)), Some(RobotId(0)));
/// let (tx, rx) = sync_channel(1);
/// calls.hold(Call(NodeId(1), held(move |a| tx.send(a).unwrap())));
/// calls.follow(&EngineEvent::RobotRemoved { node: NodeId(1), robot: RobotId(0) });
/// assert_eq!(rx.recv().unwrap(), (false, NO_LONGER_DRIVEN.to_owned()));
/// assert!(calls.is_empty() && calls.robot(NodeId(1)).is_none());
/// ```
pub struct HeldCalls<P> {
    robots: BTreeMap<NodeId, RobotId>,
    calls: Vec<P>,
}

impl<P> Default for HeldCalls<P> {
    fn default() -> Self {
        HeldCalls {
            robots: BTreeMap::new(),
            calls: Vec::new(),
        }
    }
}

impl<P: HeldForNode> HeldCalls<P> {
    /// The RT slot of driven robot `node`.
    pub fn robot(&self, node: NodeId) -> Option<RobotId> {
        self.robots.get(&node).copied()
    }

    /// Holds `call` until [`Self::take`] gives it back or its robot goes.
    pub fn hold(&mut self, call: P) {
        self.calls.push(call);
    }

    /// No call is held.
    pub fn is_empty(&self) -> bool {
        self.calls.is_empty()
    }

    /// Follows the driven robots; the calls held for a robot that goes are refused now.
    pub fn follow(&mut self, event: &EngineEvent) {
        match event {
            EngineEvent::RobotReady { node, robot } => {
                self.robots.insert(*node, *robot);
            }
            EngineEvent::RobotRemoved { node, .. } => {
                self.robots.remove(node);
                for p in self.take(|p, _| p.node() == *node) {
                    p.into_call().reply((false, NO_LONGER_DRIVEN.into()));
                }
            }
            _ => {}
        }
    }

    /// The driven robots and the held calls at once, to answer calls while going over the robots (a call answered
    /// is removed from the list).
    pub fn parts_mut(&mut self) -> (&BTreeMap<NodeId, RobotId>, &mut Vec<P>) {
        (&self.robots, &mut self.calls)
    }

    /// Takes out the calls `pick` chooses (given the driven robots), in the order they were held; the others stay.
    pub fn take(&mut self, pick: impl Fn(&P, &BTreeMap<NodeId, RobotId>) -> bool) -> Vec<P> {
        let robots = &self.robots;
        let (taken, kept) = std::mem::take(&mut self.calls)
            .into_iter()
            .partition(|p| pick(p, robots));
        self.calls = kept;
        taken
    }
}
