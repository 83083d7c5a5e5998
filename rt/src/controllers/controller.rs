//! Code that runs inside the RT cycle: owner controllers ([`Controller`], one of which may own a
//! robot's wheels at a time, XBotCore's communication switch) and filters ([`Filter`], applied
//! to whatever the owner commands, e.g. the obstacle-stop reflex).

use handoff::{NodeId, OwnerId, Pose2, RobotCalibration, RobotId, Twist2, WheelCommand};
use msgs::thymio::{GROUND_COUNT, PROXIMITY_COUNT};

/// What a controller sees of one robot (a copy, built every cycle; `Default` for tests).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
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
    /// Wheel angles (rad) integrated by odometry, `[left, right]`.
    pub wheel_pos: [f64; 2],
    /// Measured wheel angular velocities (rad/s), `[left, right]` (× wheel radius: m/s).
    pub wheel_vel: [f64; 2],
    /// Last `proximity` event (7 horizontal sensors: 5 front left→right, 2 rear).
    pub proximity: [i16; PROXIMITY_COUNT],
    /// Receive time of `proximity`.
    pub proximity_t_ns: Option<u64>,
    /// Last `ground` event (`prox.ground.delta`, left and right; high = bright floor).
    pub ground: [i16; GROUND_COUNT],
    /// Receive time of `ground`.
    pub ground_t_ns: Option<u64>,
    /// Last `accelerometer` event (`acc`: x right→left, y front→back, z top→bottom; 1 g ≈ 23, on the floor
    /// z ≈ 22).
    pub acc: [i16; 3],
    /// Receive time of `acc`.
    pub acc_t_ns: Option<u64>,
    /// Whether the robot's link is up.
    pub link_up: bool,
    /// State is stale (link lost since the last odometry event).
    pub stale: bool,
    /// The `cmd_vel` set-point from NRT after the watchdog.
    pub set_point: Twist2,
    /// Owner of the wheels in effect this cycle.
    pub owner: OwnerId,
    /// The robot's calibration and limits in effect.
    pub calibration: RobotCalibration,
    /// The reflexes that changed the owner's command in the previous cycle.
    pub reflexes: Reflexes,
}

/// Which reflex a [`Filter`] is, so that controllers can tell why they were held.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reflex {
    /// The obstacle stop (proximity sensors).
    Obstacle,
    /// The cliff reflex (ground sensors).
    Cliff,
}

/// The reflexes that held a robot (changed its owner's command) in a cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Reflexes {
    /// The obstacle stop held it.
    pub obstacle: bool,
    /// The cliff reflex held it.
    pub cliff: bool,
}

impl Reflexes {
    /// Notes that `reflex` held the robot.
    pub fn set(&mut self, reflex: Reflex) {
        match reflex {
            Reflex::Obstacle => self.obstacle = true,
            Reflex::Cliff => self.cliff = true,
        }
    }
}

/// A controller that can own a robot's wheels: one instance per robot slot, made by its
/// registry factory at init (NRT side), run on the RT thread. Every method must not block,
/// allocate, free or panic.
///
/// Per cycle the RT loop calls [`Controller::serve`] on every instance (owner or not, so that its
/// services answer and its parameters apply), then [`Controller::update`] on the owner only.
/// [`Controller::start`] / [`Controller::stop`] bracket ownership, at cycle boundaries. The life of an
/// instance: made by its factory (NRT, the plugin's `init`), `start` / `serve` / `update` / `stop` (RT),
/// [`Controller::close`] (NRT, after the RT thread ended).
pub trait Controller: Send {
    /// It became the robot's owner.
    fn start(&mut self, _robot: &RobotView) {}
    /// It stopped owning the robot (another owner was chosen, or the robot went away).
    fn stop(&mut self, _robot: &RobotView) {}
    /// Every cycle, owner or not: take parameters, answer services, publish state.
    fn serve(&mut self, _robot: &RobotView, _owner: bool) {}
    /// The owner's command for this cycle.
    fn update(&mut self, robot: &RobotView) -> WheelCommand;
    /// The driver stops: called once on the NRT side after the RT thread ended (it may allocate, block, write
    /// files — e.g. save what it learned), before the instance is dropped. The XBotCore plugin's `close`.
    fn close(&mut self) {}
}

/// A filter on whatever the owner commands (the obstacle-stop reflex): called every cycle for
/// every configured robot, in order, on the owner's [`WheelCommand`] before it becomes wheel
/// targets; it may change `cmd`. Runs on the RT thread: it must not block, allocate, or free.
pub trait Filter: Send {
    /// Updates `cmd` for `robot`.
    fn update(&mut self, robot: &RobotView, cmd: &mut WheelCommand);
    /// The reflex it is, if it is one that goal controllers abort on (see [`Reflexes`]).
    fn reflex(&self) -> Option<Reflex> {
        None
    }
}
