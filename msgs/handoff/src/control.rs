//! Closed-loop control vocabulary shared by the RT loop and the NRT front ends: who owns a
//! robot's wheels ([`OwnerId`], the communication switch), what an owner commands
//! ([`WheelCommand`], [`JointCommand`]) and the joint-space state the RT thread hands out
//! ([`JointStateSample`]).
//!
//! Owners, as XBotCore's communication switch: exactly one source commands a robot's wheels at a
//! time — ROS `cmd_vel` ([`OwnerId::ROS`], the default), the joint-command topic
//! ([`OwnerId::JOINT`]) or an RT controller ([`OwnerId::controller`], by its index in the
//! controller registry). The NRT side requests an owner
//! ([`NrtLiveParams::nrt_request_owner`](super::NrtLiveParams::nrt_request_owner)); the RT thread
//! applies it at a cycle boundary and reports the owner in effect ([`RtEvent::Owner`](super::RtEvent)).

use super::ids::{NodeId, RobotId};
use super::values::Twist2;

/// Most RT controllers one registry holds (owner ids 2 ..= 2 + MAX_CONTROLLERS − 1).
pub const MAX_CONTROLLERS: usize = 16;

/// Who commands a robot's wheels.
///
/// # Example
///
/// ```
/// use handoff::OwnerId;
///
/// assert_eq!(OwnerId::default(), OwnerId::ROS);
/// assert_eq!(OwnerId::controller(3).controller_index(), Some(3));
/// assert_eq!(OwnerId::JOINT.controller_index(), None);
/// ```
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Default,
    serde::Serialize,
    serde::Deserialize,
)]
pub struct OwnerId(pub u8);

impl OwnerId {
    /// ROS `cmd_vel` (the default owner).
    pub const ROS: OwnerId = OwnerId(0);
    /// The joint-command topic (wheel velocities, bypassing cmd_vel's mapping).
    pub const JOINT: OwnerId = OwnerId(1);

    /// The RT controller at `index` in the registry.
    pub const fn controller(index: u8) -> OwnerId {
        OwnerId(2 + index)
    }

    /// The registry index of a controller owner; `None` for ROS and joint.
    pub fn controller_index(self) -> Option<usize> {
        (self.0 >= 2).then(|| (self.0 - 2) as usize)
    }
}

/// What the owner of a robot's wheels commands for this cycle. Converted to wheel targets by
/// the RT thread (calibration, caps), then filtered (obstacle-stop reflex).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum WheelCommand {
    /// Zero speed.
    #[default]
    Stop,
    /// A body twist, mapped as `cmd_vel` is (curvature-preserving cap).
    Twist(Twist2),
    /// Wheel surface speeds `[left, right]` (m/s), each through its own inverse calibration and
    /// capped on its own.
    WheelSpeeds([f64; 2]),
    /// Raw motor targets `[left, right]` (motor units), capped to the robot's `max_units`.
    Targets([i16; 2]),
}

/// A joint command: wheel angular velocities (rad/s, `[left, right]`). A wheel given NaN keeps
/// its previous command (a joint command may name one wheel only).
#[derive(Debug, Clone, Copy, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct JointCommand {
    /// Wheel velocities (rad/s).
    pub velocity: [f64; 2],
}

/// The extended joint state of one robot's two wheels (XBotCore's extended joint state),
/// handed out by the RT thread at a fixed rate.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct JointStateSample {
    /// Robot slot.
    pub robot: RobotId,
    /// Aseba node id.
    pub node: NodeId,
    /// CLOCK_MONOTONIC ns of the RT cycle that built the sample.
    pub t_ns: u64,
    /// Wheel angles (rad), integrated from odometry.
    pub position: [f64; 2],
    /// Measured wheel velocities (rad/s).
    pub velocity: [f64; 2],
    /// Velocity references (rad/s): the last targets written, through the calibration.
    pub velocity_reference: [f64; 2],
    /// The last targets written (motor units).
    pub target: [i16; 2],
    /// Motor PWM (−500 … 500) where the robot reports it.
    pub pwm: Option<[i16; 2]>,
    /// Owner of the wheels when the sample was built.
    pub owner: OwnerId,
    /// Fault flags ([`JointStateSample::FAULT_STALE`], …).
    pub fault: u16,
}

impl JointStateSample {
    /// The robot's state is stale (link lost since its last odometry).
    pub const FAULT_STALE: u16 = 1;
    /// The obstacle-stop reflex holds the robot.
    pub const FAULT_REFLEX: u16 = 2;
    /// The active owner's command stream timed out (watchdog).
    pub const FAULT_WATCHDOG: u16 = 4;
}

/// The owner names of one driver: `ros`, `joint`, then the registry's controllers in order.
///
/// # Example
///
/// ```
/// use handoff::{OwnerId, OwnerNames};
///
/// let names = OwnerNames::new(vec!["line_follower", "go_to_pose"]);
/// assert_eq!(names.id("go_to_pose"), Some(OwnerId::controller(1)));
/// assert_eq!(names.name(OwnerId::JOINT), Some("joint"));
/// assert_eq!(names.id("nope"), None);
/// assert_eq!(names.all().collect::<Vec<_>>(), ["ros", "joint", "line_follower", "go_to_pose"]);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct OwnerNames {
    controllers: Vec<&'static str>,
}

impl OwnerNames {
    /// `ros`, `joint` and `controllers` (registry order, at most [`MAX_CONTROLLERS`]).
    pub fn new(mut controllers: Vec<&'static str>) -> Self {
        controllers.truncate(MAX_CONTROLLERS);
        OwnerNames { controllers }
    }

    /// The owner called `name`.
    pub fn id(&self, name: &str) -> Option<OwnerId> {
        match name {
            "ros" => Some(OwnerId::ROS),
            "joint" => Some(OwnerId::JOINT),
            _ => self
                .controllers
                .iter()
                .position(|c| *c == name)
                .map(|i| OwnerId::controller(i as u8)),
        }
    }

    /// The name of `owner`.
    pub fn name(&self, owner: OwnerId) -> Option<&'static str> {
        match owner {
            OwnerId::ROS => Some("ros"),
            OwnerId::JOINT => Some("joint"),
            o => self.controllers.get(o.controller_index()?).copied(),
        }
    }

    /// Every owner name, in id order.
    pub fn all(&self) -> impl Iterator<Item = &'static str> + '_ {
        ["ros", "joint"]
            .into_iter()
            .chain(self.controllers.iter().copied())
    }
}
