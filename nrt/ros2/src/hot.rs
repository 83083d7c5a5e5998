//! The ROS hot path for `cmd_vel`: a second r2r node, hidden (its name starts with an
//! underscore, so `ros2 node list` leaves it out), that holds only the robots' `cmd_vel`
//! subscriptions and is spun by a thread of its own. Its wait covers those few subscriptions
//! instead of the whole interface of the bridge node (about 170 entities at 8 robots), and
//! right after each wait the robots' `cmd_vel` tasks
//! ([`super::thymio_endpoints::cmd_vel_task`]) store the set-points, stamped with the time the
//! wait returned, which rings the RT thread's wake-up doorbell; then the thread waits again. It
//! never waits for the bridge node, the NRT engine loop or its spinner.
//!
//! The subscriptions keep the topic names and QoS they had on the bridge node: the hot node has
//! the bridge node's namespace, and the process's `--ros-args` remappings apply to it too. They
//! are created and removed by the NRT loop as robots come and go, through
//! [`SharedNode::access`] (which wakes the hot thread and waits for it to step aside, as for the
//! bridge node).

use super::spinner::{SharedNode, Spinner};
use super::RosError;
use handoff::Doorbell;
use std::sync::Arc;

/// The name of the hot node of a bridge node named `node_name`.
pub fn hot_node_name(node_name: &str) -> String {
    format!("_{node_name}_hot")
}

/// The hot node and its thread; stopped and joined on drop.
pub struct HotNode {
    /// First field: stops the thread before the node goes.
    spinner: Spinner,
    shared: Arc<SharedNode>,
}

impl HotNode {
    /// Creates the hot node of the bridge node `node_name` in `namespace` (in the process's
    /// ROS context) and starts its thread.
    pub fn start(node_name: &str, namespace: &str) -> Result<HotNode, RosError> {
        let ctx = r2r::Context::create().map_err(RosError::Init)?;
        let node =
            r2r::Node::create(ctx, &hot_node_name(node_name), namespace).map_err(RosError::Init)?;
        let shared = SharedNode::new(node);
        // Nobody needs to hear that it woke: its tasks hand their result to the RT thread.
        let spinner = Spinner::start_named(shared.clone(), Doorbell::silent(), "nrt-ros-hot")
            .map_err(|e| RosError::Spawn(e.to_string()))?;
        Ok(HotNode { spinner, shared })
    }

    /// The node (to subscribe to a robot's `cmd_vel` and register its task).
    pub fn shared(&self) -> &Arc<SharedNode> {
        &self.shared
    }

    /// Whether its thread still runs (it ends only when dropped, or on a panic in r2r or a
    /// task: then `cmd_vel` is no longer served and the RT watchdog stops the robots).
    pub fn is_running(&self) -> bool {
        self.spinner.is_running()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hot_node_is_hidden_and_named_after_the_bridge() {
        assert_eq!(hot_node_name("asebaros"), "_asebaros_hot");
        assert!(hot_node_name("asebaros").starts_with('_'));
        assert!(crate::names::is_valid_token(&hot_node_name("asebaros")));
    }
}
