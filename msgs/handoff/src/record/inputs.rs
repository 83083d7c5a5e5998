//! What the flight recorder records of the RT thread's inputs: [`RecInput`], one value per input taken, in the
//! order and at the place it was taken (see the [module](super)).

use crate::cal_command::CalCommand;
use crate::control::{JointCommand, OwnerId};
use crate::events::RtCommand;
use crate::goal_command::GoalCommand;
use crate::ids::{LinkId, RobotId};
use crate::motion_limits::MotionLimits;
use crate::ros_value::{ParamBlock, RosValue};
use crate::values::{RobotCalibration, Twist2};
use serde::{Deserialize, Serialize};

/// What kind of pass of the RT loop a [`RecInput::Pass`] starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum PassKind {
    /// The periodic cycle at a deadline.
    Periodic,
    /// An I/O wake-up between two deadlines.
    Io,
    /// A free-running polling cycle (period zero: tests, benchmarks).
    Free,
}

/// One input the RT thread took, in the order it took them.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum RecInput {
    /// A pass of the loop begins at `now_ns`; `wake`, `timer`, `signal`: what its wait found (NRT's doorbell, the
    /// deadline timer, the stop signal).
    Pass {
        /// Which pass.
        kind: PassKind,
        /// The loop's clock for this pass.
        now_ns: u64,
        /// NRT's doorbell was rung.
        wake: bool,
        /// The deadline timer fired.
        timer: bool,
        /// A stop signal arrived.
        signal: bool,
    },
    /// A command popped from NRT's command ring.
    Command(RtCommand),
    /// A new cmd_vel set-point of `robot`, received by NRT at `received_ns`.
    CmdVel {
        /// Robot slot.
        robot: RobotId,
        /// The set-point.
        twist: Twist2,
        /// When NRT received it.
        received_ns: u64,
    },
    /// A new joint command of `robot`.
    JointCommand {
        /// Robot slot.
        robot: RobotId,
        /// The command.
        command: JointCommand,
        /// When NRT received it.
        received_ns: u64,
    },
    /// An owner request (the communication switch).
    OwnerRequest {
        /// Robot slot.
        robot: RobotId,
        /// Requested owner.
        owner: OwnerId,
    },
    /// A new calibration of `robot`.
    Calibration {
        /// Robot slot.
        robot: RobotId,
        /// Its calibration and limits.
        calibration: RobotCalibration,
    },
    /// New motion limits of `robot`.
    MotionLimits {
        /// Robot slot.
        robot: RobotId,
        /// The limits.
        limits: MotionLimits,
    },
    /// `robot`'s wheels held at zero (or released).
    Held {
        /// Robot slot.
        robot: RobotId,
        /// Held.
        held: bool,
    },
    /// The rate of `robot`'s extended joint states.
    JointStateHz {
        /// Robot slot.
        robot: RobotId,
        /// Hz (0: none).
        hz: f64,
    },
    /// The cmd_vel watchdog (s; 0: off).
    Watchdog {
        /// Seconds.
        seconds: f64,
    },
    /// A link was attached to slot `link` (offered by the connector for `target`).
    LinkAttached {
        /// Slot.
        link: LinkId,
        /// The connector's target index.
        target: u16,
    },
    /// The RT thread stopped `robot`'s running controller (index `controller` in the registry) because its
    /// `update` overran the budget too often: a decision made on this run's timings, which a replay repeats.
    BudgetStop {
        /// Robot slot.
        robot: RobotId,
        /// The controller's index.
        controller: u8,
    },
    /// A controller's subscriber (`endpoint`: its index among the controller's endpoints) took a new value.
    Topic {
        /// Robot slot.
        robot: RobotId,
        /// The controller's registry index.
        controller: u8,
        /// The endpoint's index.
        endpoint: u8,
        /// The value.
        value: RosValue,
    },
    /// A controller's service took a request.
    ServiceRequest {
        /// Robot slot.
        robot: RobotId,
        /// The controller's registry index.
        controller: u8,
        /// The endpoint's index.
        endpoint: u8,
        /// The request.
        request: RosValue,
    },
    /// A controller took new values of its parameters.
    Params {
        /// Robot slot.
        robot: RobotId,
        /// The controller's registry index.
        controller: u8,
        /// Every value, in declaration order.
        values: ParamBlock,
    },
    /// A goal controller took a command (a goal action's start or cancel).
    Goal {
        /// Robot slot.
        robot: RobotId,
        /// The controller's registry index.
        controller: u8,
        /// The command.
        command: GoalCommand,
    },
    /// The calibration controller took a command (a wheel run, an abort).
    CalibrationRun {
        /// Robot slot.
        robot: RobotId,
        /// The controller's registry index.
        controller: u8,
        /// The command.
        command: CalCommand,
    },
    /// A reflex (an RT filter) took new parameters: `reflex` 0 the obstacle stop, 1 the cliff stop, 2 the pick-up
    /// stop.
    ReflexParams {
        /// Which reflex.
        reflex: u8,
        /// On.
        enabled: bool,
        /// Its threshold (raw reading; the pick-up stop's `z_min`, accelerometer units).
        threshold: i16,
        /// The pick-up stop's off-the-floor samples that engage it; 0 for the others, and in recordings made
        /// before the pick-up stop's parameters were recorded (the field is absent there).
        #[serde(default)]
        samples: u8,
        /// Readings older than this are ignored (ns).
        max_age_ns: u64,
    },
    /// A controller's message endpoint took a value of a type of the controller's own (not `bool`, `f64`, `Pose2`
    /// or `Twist2`, which are recorded as [`RecInput::Topic`]): not recorded, so a replay can be exact only up to
    /// here.
    Unrecorded {
        /// Robot slot.
        robot: RobotId,
        /// The controller's registry index.
        controller: u8,
    },
    /// The loop ended at `now_ns`: the exit sequence follows (every robot stopped, flushed, read back).
    Exit {
        /// When it began.
        now_ns: u64,
    },
    /// The link in slot `link` was found dead (an error or the end of the stream) while the RT thread read or
    /// wrote it; it is handed back at the next periodic cycle.
    LinkLost {
        /// Slot.
        link: LinkId,
        /// It failed while written to (flushed at the end of a pass), not read.
        writing: bool,
    },
}
