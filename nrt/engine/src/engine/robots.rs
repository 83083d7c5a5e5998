//! Robot slots of the RT thread: which bridged node drives which RT robot id, and the
//! calibration the RT side reads (live atomics).

use crate::thymio::calibration::Calibration;
use handoff::{LinkId, NodeId, RobotId, MAX_ROBOTS};
use std::collections::BTreeMap;

/// One robot driven by the RT thread.
#[derive(Debug, Clone, PartialEq)]
pub struct RobotSlot {
    /// RT robot id.
    pub robot: RobotId,
    /// Aseba node id.
    pub node: NodeId,
    /// Calibration in use.
    pub calibration: Calibration,
    /// The link the RT thread was told to write to (`None`: any, for a node behind the switch).
    pub link: Option<LinkId>,
    /// Ids of the script events the RT thread decodes and hands over typed (odometry,
    /// proximity): NRT does not decode them again.
    pub rt_events: [Option<u16>; 2],
}

impl RobotSlot {
    /// Whether script event `event` of this robot is decoded by the RT thread.
    pub fn decoded_by_rt(&self, event: u16) -> bool {
        self.rt_events.contains(&Some(event))
    }
}

/// Allocation of RT robot ids to nodes.
#[derive(Debug, Default)]
pub struct Robots {
    by_node: BTreeMap<NodeId, RobotSlot>,
}

impl Robots {
    /// The slot of a node.
    pub fn of_node(&self, node: NodeId) -> Option<&RobotSlot> {
        self.by_node.get(&node)
    }

    /// The node of an RT robot id.
    pub fn node_of(&self, robot: RobotId) -> Option<NodeId> {
        self.by_node
            .values()
            .find(|s| s.robot == robot)
            .map(|s| s.node)
    }

    /// Every slot.
    pub fn iter(&self) -> impl Iterator<Item = &RobotSlot> {
        self.by_node.values()
    }

    /// The node's slot, allocated if needed; `None` if every RT slot is taken.
    pub fn assign(&mut self, node: NodeId, calibration: Calibration) -> Option<&RobotSlot> {
        if let Some(s) = self.by_node.get_mut(&node) {
            s.calibration = calibration;
            return self.by_node.get(&node);
        }
        let used: Vec<RobotId> = self.by_node.values().map(|s| s.robot).collect();
        let robot = (0..MAX_ROBOTS as u8)
            .map(RobotId)
            .find(|r| !used.contains(r))?;
        self.by_node.insert(
            node,
            RobotSlot {
                robot,
                node,
                calibration,
                link: None,
                rt_events: [None; 2],
            },
        );
        self.by_node.get(&node)
    }

    /// Records the link the RT thread writes node `node`'s commands to.
    pub fn set_link(&mut self, node: NodeId, link: Option<LinkId>) {
        if let Some(s) = self.by_node.get_mut(&node) {
            s.link = link;
        }
    }

    /// Records which script events of node `node` the RT thread decodes.
    pub fn set_rt_events(&mut self, node: NodeId, events: [Option<u16>; 2]) {
        if let Some(s) = self.by_node.get_mut(&node) {
            s.rt_events = events;
        }
    }

    /// Frees a node's slot.
    pub fn release(&mut self, node: NodeId) -> Option<RobotSlot> {
        self.by_node.remove(&node)
    }
}
