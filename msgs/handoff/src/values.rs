//! Values that cross between the RT and NRT domains: link facts, robot mapping, poses,
//! odometry samples and calibration (all `Copy`).

use super::ids::{LinkId, NodeId, RobotId};
use msgs::thymio::{
    AXIS_LENGTH, MOTOR_TARGET_LIMIT, NOMINAL_MAX_SPEED, NOMINAL_Q0, PROXIMITY_COUNT, WHEEL_RADIUS,
};
/// Transport of a link.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LinkKind {
    /// TCP client (Aseba Playground, asebaswitch, ...).
    Tcp,
    /// Serial port (USB Thymio, wireless dongle, pseudo-terminal).
    Serial,
    /// In-process pipe (the embedded simulator).
    Pipe,
    /// Anything else (tests, custom links).
    Other,
}

/// Why a link went down.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkDownReason {
    /// The peer closed the stream (end of file / abandoned pipe).
    Eof,
    /// An I/O error; `errno` is 0 when the error carried none.
    Io {
        /// Kind of the error.
        kind: std::io::ErrorKind,
        /// OS error number, 0 if none.
        errno: i32,
    },
    /// The NRT side asked to close it ([`super::RtCommand::CloseLink`]).
    Requested,
    /// The RT thread had no free slot for it.
    NoSlot,
    /// The RT thread stopped.
    Shutdown,
}

/// How the RT thread writes wheel targets to a robot: always both wheels in ONE frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum SpeedOutput {
    /// The robot script's `set_speed` user event: args `[left, right]`, or
    /// `[node, left, right]` when `node_prefix` (multi-robot scripts filter on the first word).
    Event {
        /// Event id of `set_speed` in the loaded script.
        id: u16,
        /// Prepend the node id to the arguments.
        node_prefix: bool,
    },
    /// One SET_VARIABLES of `[left, right]` at `address` (`motor.left.target`; the right target
    /// must follow it, as on every Thymio firmware and the Playground).
    Variables {
        /// Address of `motor.left.target`.
        address: u16,
    },
    /// No speed output (odometry only).
    None,
}

/// Which robot the RT thread drives in a robot slot, and where its script events are.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RobotConfig {
    /// Link of the node; `None`: the link the node was last heard on (all links until then).
    pub link: Option<LinkId>,
    /// Aseba node id.
    pub node: NodeId,
    /// Event id of the script's `odometry` event (`[left, right]` or `[left, right, ticks]`).
    pub odometry_event: Option<u16>,
    /// Event id of the script's `proximity` event (7 horizontal sensors), for RT controllers.
    pub proximity_event: Option<u16>,
    /// Event id of the script's `ground` event (`prox.ground.delta`, left and right), for RT
    /// controllers (the line follower).
    pub ground_event: Option<u16>,
    /// Event id of the script's `accelerometer` event (`acc` x, y, z; 1 g ≈ 23), for the pick-up reflex.
    pub acc_event: Option<u16>,
    /// How wheel targets are written.
    pub speed: SpeedOutput,
    /// On-robot tick rate of the third `odometry` word (Hz; the motor event runs at 100 Hz).
    pub tick_hz: f64,
    /// Address of `motor.left.target` in the node's description (`motor.right.target` follows
    /// it): the stop paths also write zero there directly and read it back, which works even
    /// when the node's VM is stopped. `None`: no such variables.
    pub motor_targets: Option<u16>,
}

impl RobotConfig {
    /// A robot running the driver script: odometry and `set_speed` events of that script.
    pub fn script(
        node: NodeId,
        odometry_event: u16,
        set_speed_event: u16,
        node_prefix: bool,
    ) -> Self {
        RobotConfig {
            link: None,
            node,
            odometry_event: Some(odometry_event),
            proximity_event: None,
            ground_event: None,
            acc_event: None,
            speed: SpeedOutput::Event {
                id: set_speed_event,
                node_prefix,
            },
            tick_hz: 100.0,
            motor_targets: None,
        }
    }
}

/// A planar pose (m, m, rad).
#[derive(Debug, Clone, Copy, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct Pose2 {
    /// x (m).
    pub x: f64,
    /// y (m).
    pub y: f64,
    /// Heading (rad, not wrapped).
    pub theta: f64,
}

/// A planar twist (m/s, rad/s).
#[derive(Debug, Clone, Copy, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct Twist2 {
    /// Forward speed (m/s).
    pub linear: f64,
    /// Yaw rate (rad/s).
    pub angular: f64,
}

/// One reading of a robot's horizontal proximity sensors (its script's `proximity` event, 7
/// words), decoded by the RT thread and handed to NRT as is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProximitySample {
    /// Robot slot.
    pub robot: RobotId,
    /// Node id.
    pub node: NodeId,
    /// Link the event arrived on.
    pub link: LinkId,
    /// RT receive time (CLOCK_MONOTONIC ns).
    pub t_ns: u64,
    /// `prox.horizontal`: front left to front right, then rear left, rear right.
    pub values: [i16; PROXIMITY_COUNT],
}

/// One odometry update of a robot (interface reference §3.5).
#[derive(Debug, Clone, Copy, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct OdomSample {
    /// Robot slot.
    pub robot: RobotId,
    /// Node id.
    pub node: NodeId,
    /// Link the event arrived on.
    pub link: LinkId,
    /// Counter of samples of this robot (restarts at 0 after a reset).
    pub seq: u32,
    /// When the RT thread found the bytes of its frame readable (CLOCK_MONOTONIC ns: the
    /// wake-up that read them): the start of the wire → decoded hop.
    pub wire_ns: u64,
    /// RT receive time: when its frame was decoded (CLOCK_MONOTONIC ns).
    pub t_ns: u64,
    /// On-robot tick counter of the event, if it carried one.
    pub robot_ticks: Option<u16>,
    /// Time step used for the twist (s): on-robot ticks if present, else receive times.
    pub dt: f64,
    /// Integrated pose.
    pub pose: Pose2,
    /// Twist over the last step.
    pub twist: Twist2,
    /// Wheel joint angles `[left, right]` (rad).
    pub wheel_pos: [f64; 2],
    /// Wheel joint velocities `[left, right]` (rad/s).
    pub wheel_vel: [f64; 2],
}

/// Why a value was refused by [`super::NrtLiveParams`].
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
pub enum ParamError {
    /// No such robot slot.
    #[error("no robot slot {0}")]
    NoSuchRobot(RobotId),
    /// NaN or infinite.
    #[error("{0} is not a finite number")]
    NotFinite(&'static str),
    /// Outside its valid range.
    #[error("{name} = {value} is out of range")]
    OutOfRange {
        /// Parameter.
        name: &'static str,
        /// Refused value.
        value: f64,
    },
}

/// Quadratic motor calibration `d = q0·r + q1·r·|r|` (r in motor units, d in m/s).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Quadratic {
    /// Linear coefficient (m/s per unit).
    pub q0: f64,
    /// Quadratic coefficient.
    pub q1: f64,
}

/// Calibration and limits of one robot.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RobotCalibration {
    /// Left motor.
    pub left: Quadratic,
    /// Right motor.
    pub right: Quadratic,
    /// Wheel separation (m).
    pub axis_length: f64,
    /// Wheel radius (m), for joint angles.
    pub wheel_radius: f64,
    /// Largest wheel target magnitude sent (units; the firmware's nominal maximum is
    /// [`NOMINAL_MAX_SPEED`]).
    pub max_units: f64,
}

impl Default for RobotCalibration {
    /// ROS-Thymio defaults for a real Thymio, from the robot profile (`msgs::thymio`): q0 =
    /// [`NOMINAL_Q0`], its axis length and wheel radius, a cap of [`NOMINAL_MAX_SPEED`] units.
    fn default() -> Self {
        let q = Quadratic {
            q0: NOMINAL_Q0,
            q1: 0.0,
        };
        RobotCalibration {
            left: q,
            right: q,
            axis_length: AXIS_LENGTH,
            wheel_radius: WHEEL_RADIUS,
            max_units: f64::from(NOMINAL_MAX_SPEED),
        }
    }
}

impl RobotCalibration {
    fn to_array(self) -> [f64; 7] {
        [
            self.left.q0,
            self.left.q1,
            self.right.q0,
            self.right.q1,
            self.axis_length,
            self.wheel_radius,
            self.max_units,
        ]
    }

    /// Checks every value is finite and in range (q0 > 0, lengths > 0, 0 < max ≤
    /// [`MOTOR_TARGET_LIMIT`]).
    pub fn validate(&self) -> Result<(), ParamError> {
        let names = [
            "q0",
            "q1",
            "q0",
            "q1",
            "axis_length",
            "wheel_radius",
            "max_units",
        ];
        for (v, n) in self.to_array().into_iter().zip(names) {
            if !v.is_finite() {
                return Err(ParamError::NotFinite(n));
            }
        }
        let positive = [
            ("left.q0", self.left.q0),
            ("right.q0", self.right.q0),
            ("axis_length", self.axis_length),
            ("wheel_radius", self.wheel_radius),
            ("max_units", self.max_units),
        ];
        for (name, value) in positive {
            if value <= 0.0 {
                return Err(ParamError::OutOfRange { name, value });
            }
        }
        if self.max_units > f64::from(MOTOR_TARGET_LIMIT) {
            return Err(ParamError::OutOfRange {
                name: "max_units",
                value: self.max_units,
            });
        }
        Ok(())
    }
}
