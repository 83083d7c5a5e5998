//! Code that runs inside the RT cycle, between the set-points from NRT and the wheel mapping.

use msgs::handoff::{NodeId, Pose2, RobotId, Twist2};

/// What a controller sees of one robot (a copy, built every cycle).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RobotView {
    /// Robot slot.
    pub robot: RobotId,
    /// Aseba node id.
    pub node: NodeId,
    /// Time of this cycle (CLOCK_MONOTONIC ns).
    pub now_ns: u64,
    /// Odometry pose.
    pub pose: Pose2,
    /// Odometry twist.
    pub twist: Twist2,
    /// Receive time of the last odometry event.
    pub odom_t_ns: Option<u64>,
    /// Last `proximity` event (7 horizontal sensors: 5 front left→right, 2 rear).
    pub proximity: [i16; 7],
    /// Receive time of `proximity`.
    pub proximity_t_ns: Option<u64>,
    /// Whether the robot's link is up.
    pub link_up: bool,
    /// State is stale (link lost since the last odometry event).
    pub stale: bool,
    /// The set-point from NRT after the watchdog (before any controller).
    pub set_point: Twist2,
}

/// A controller: called every cycle for every configured robot, in order; it may change
/// `cmd`. Runs on the RT thread: it must not block, allocate, or free.
pub trait Controller: Send {
    /// Updates `cmd` for `robot`.
    fn update(&mut self, robot: &RobotView, cmd: &mut Twist2);
}
