//! The robots a frame can concern, by the Aseba node that sent it: a frame is offered to the robots configured
//! for its source node only, not to every robot, so that the work per frame stays constant as robots are added
//! (every robot sends its events each period: offering each frame to every robot made a cycle grow with the
//! square of the robot count). Fixed size, rebuilt in place when a robot is configured or removed: no
//! allocation on the RT thread.

use crate::robot::Robot;
use handoff::MAX_ROBOTS;

/// Configured robots sorted by node id (several robots may share a node id on different links).
#[derive(Debug, Clone)]
pub(super) struct NodeIndex {
    /// `(node id, robot index)`, sorted, the first `len` in use.
    entries: [(u16, u8); MAX_ROBOTS],
    len: usize,
}

impl Default for NodeIndex {
    fn default() -> Self {
        NodeIndex {
            entries: [(0, 0); MAX_ROBOTS],
            len: 0,
        }
    }
}

impl NodeIndex {
    /// Indexes the robots of `robots` that have a configuration (at most [`MAX_ROBOTS`]).
    pub(super) fn rebuild(&mut self, robots: &[Robot]) {
        self.len = 0;
        for (i, r) in robots.iter().enumerate().take(MAX_ROBOTS) {
            if let Some(c) = r.config() {
                self.entries[self.len] = (c.node.0, i as u8);
                self.len += 1;
            }
        }
        // in place, no allocation (sort_unstable never allocates)
        self.entries[..self.len].sort_unstable();
    }

    /// The indices of the robots configured for node `node`, in robot order.
    pub(super) fn robots_of(&self, node: u16) -> impl Iterator<Item = usize> + '_ {
        let used = &self.entries[..self.len];
        let first = used.partition_point(|e| e.0 < node);
        used[first..]
            .iter()
            .take_while(move |e| e.0 == node)
            .map(|e| usize::from(e.1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use handoff::{NodeId, RobotConfig, RobotId};

    fn robot(i: u8, node: Option<u16>) -> Robot {
        let mut r = Robot::new(RobotId(i));
        if let Some(n) = node {
            r.configure(RobotConfig::script(NodeId(n), 1, 2, false));
        }
        r
    }

    #[test]
    fn a_node_finds_its_robots_only() {
        let robots = [
            robot(0, Some(7)),
            robot(1, None),
            robot(2, Some(3)),
            robot(3, Some(7)),
            robot(4, Some(65535)),
        ];
        let mut ix = NodeIndex::default();
        ix.rebuild(&robots);
        let of = |ix: &NodeIndex, n| ix.robots_of(n).collect::<Vec<_>>();
        assert_eq!(of(&ix, 7), [0, 3]);
        assert_eq!(of(&ix, 3), [2]);
        assert_eq!(of(&ix, 65535), [4]);
        assert!(of(&ix, 1).is_empty() && of(&ix, 0).is_empty());
        // removed: rebuilt without it
        let robots = [robot(0, None), robot(1, Some(3))];
        ix.rebuild(&robots);
        assert_eq!((of(&ix, 7), of(&ix, 3)), (vec![], vec![1]));
    }
}
