//! The wheel holds NRT asks of the RT loop, and the emergency stop. The RT loop has ONE hold per robot slot
//! (`handoff::NrtLiveParams::nrt_set_held`: the wheels at zero whatever the owner commands — `ros`, the joint
//! space, an RT controller, a goal, the calibration — as a `Stop`, never slowed by the motion limits); two
//! reasons ask for it and each releases only its own: a managed driver node that is not active
//! ([`Engine::set_wheels_held`]) and the emergency stop ([`Engine::set_emergency_stop`]). The slot is held while
//! either holds it. An emergency stop's edges are [`EngineEvent::EmergencyStop`]s (each front end's latched
//! `emergency_stop` topic); a robot removed forgets its emergency stop.

use super::{Engine, EngineError, EngineEvent};
use handoff::NodeId;
use std::collections::BTreeSet;

/// Why the RT loop holds a robot's wheels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Hold {
    /// A managed driver node that is not active.
    Lifecycle,
    /// The emergency stop.
    Emergency,
    /// The RT pick-up reflex (reported by the RT thread, only recorded here: it holds the wheels itself).
    PickedUp,
}

/// The holds asked for, per node.
#[derive(Debug, Default)]
pub(super) struct Holds {
    lifecycle: BTreeSet<NodeId>,
    emergency: BTreeSet<NodeId>,
    picked_up: BTreeSet<NodeId>,
}

impl Holds {
    fn set(&mut self, node: NodeId, hold: Hold, on: bool) -> bool {
        let set = match hold {
            Hold::Lifecycle => &mut self.lifecycle,
            Hold::Emergency => &mut self.emergency,
            Hold::PickedUp => &mut self.picked_up,
        };
        if on {
            set.insert(node)
        } else {
            set.remove(&node)
        }
    }

    /// Whether `hold` holds `node`.
    pub(super) fn holds(&self, node: NodeId, hold: Hold) -> bool {
        match hold {
            Hold::Lifecycle => self.lifecycle.contains(&node),
            Hold::Emergency => self.emergency.contains(&node),
            Hold::PickedUp => self.picked_up.contains(&node),
        }
    }

    /// Whether any reason holds `node`.
    fn any(&self, node: NodeId) -> bool {
        self.lifecycle.contains(&node) || self.emergency.contains(&node)
    }
}

impl Engine {
    /// Sets (`on`) or releases one reason to hold driven robot `node`'s wheels and hands the RT loop the
    /// union; whether this reason changed.
    pub(super) fn set_hold(
        &mut self,
        node: NodeId,
        hold: Hold,
        on: bool,
    ) -> Result<bool, EngineError> {
        let robot = self
            .robots
            .of_node(node)
            .ok_or(EngineError::NotARobot(node))?
            .robot;
        let changed = self.holds.set(node, hold, on);
        let held = self.holds.any(node);
        if let Err(source) = self.ends.nrt_params().nrt_set_held(robot, held) {
            // undo: what is recorded is what the RT loop was told
            self.holds.set(node, hold, !on);
            return Err(EngineError::param(
                &format!("wheel hold of node {node}"),
                source,
            ));
        }
        Ok(changed)
    }

    /// The emergency stop of driven robot `node`: `true` holds every wheel of the robot at zero in the RT loop
    /// whatever its owner commands, until `false` releases it (a managed node that is not active stays held).
    /// A goal running on the robot is aborted (`emergency_stop`) by the goal actions, new ones are refused.
    /// An edge is reported as an [`EngineEvent::EmergencyStop`]; setting the state it has is no edge.
    pub fn set_emergency_stop(&mut self, node: NodeId, on: bool) -> Result<(), EngineError> {
        if self.set_hold(node, Hold::Emergency, on)? {
            if on {
                tracing::warn!("node {node}: emergency stop: its wheels are held");
            } else {
                tracing::info!("node {node}: emergency stop released");
            }
            self.events
                .push_back(EngineEvent::EmergencyStop { node, engaged: on });
        }
        Ok(())
    }

    /// Whether the emergency stop holds driven robot `node`'s wheels now.
    pub fn emergency_stop_holds(&self, node: NodeId) -> bool {
        self.holds.holds(node, Hold::Emergency)
    }

    /// Reports an edge of the RT pick-up reflex for RT robot `robot` (as an [`EngineEvent::PickedUp`]; ignored if
    /// the slot is free by now).
    pub fn report_picked_up(&mut self, robot: handoff::RobotId, engaged: bool) {
        let Some(node) = self
            .robots
            .iter()
            .find(|s| s.robot == robot)
            .map(|s| s.node)
        else {
            return;
        };
        if engaged {
            tracing::warn!("node {node}: pick-up stop holds it (the robot left the floor)");
        } else {
            tracing::info!("node {node}: pick-up stop released (back on the floor)");
        }
        self.holds.set(node, Hold::PickedUp, engaged);
        self.events
            .push_back(EngineEvent::PickedUp { node, engaged });
    }

    /// Whether the RT pick-up reflex holds node `node` now.
    pub fn picked_up_holds(&self, node: NodeId) -> bool {
        self.holds.holds(node, Hold::PickedUp)
    }

    /// A robot removed: its emergency stop is forgotten (the slot's hold goes back to the lifecycle's).
    pub(super) fn forget_holds(&mut self, node: NodeId) {
        if self.holds.holds(node, Hold::Emergency) && self.robots.of_node(node).is_some() {
            let _ = self.set_hold(node, Hold::Emergency, false);
        }
        self.holds.set(node, Hold::Emergency, false);
        self.holds.set(node, Hold::PickedUp, false);
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{driven_robot, engine};
    use super::*;

    #[test]
    fn the_emergency_stop_and_the_lifecycle_hold_each_release_only_their_own() {
        let (mut e, mut rt) = engine(0);
        let robot = driven_robot(&mut e, &mut rt);
        let node = NodeId(3);
        let params = e.live_params();
        let rt_held = || params.nrt_held(robot).unwrap();
        e.set_emergency_stop(node, true).unwrap();
        assert!(rt_held() && e.emergency_stop_holds(node) && !e.wheels_held(node));
        e.set_wheels_held(node, true).unwrap();
        e.set_wheels_held(node, false).unwrap();
        assert!(
            rt_held(),
            "the lifecycle's release leaves the emergency stop"
        );
        e.set_emergency_stop(node, true).unwrap();
        e.set_wheels_held(node, true).unwrap();
        e.set_emergency_stop(node, false).unwrap();
        assert!(
            rt_held() && e.wheels_held(node),
            "the lifecycle's hold stays"
        );
        e.set_wheels_held(node, false).unwrap();
        assert!(!rt_held() && !e.emergency_stop_holds(node));
        // one edge each way, none for a repeated state
        let mut edges = Vec::new();
        while let Some(ev) = e.next_event() {
            if let EngineEvent::EmergencyStop { node, engaged } = ev {
                edges.push((node, engaged));
            }
        }
        assert_eq!(edges, [(node, true), (node, false)]);
        assert!(matches!(
            e.set_emergency_stop(NodeId(9), true),
            Err(EngineError::NotARobot(NodeId(9)))
        ));
    }
}
