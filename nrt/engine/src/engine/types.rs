//! What the engine takes and reports: its configuration, events, errors and counters.

use super::ScriptError;
use crate::network::{NetError, NetworkEvent};
use crate::params::BridgeParams;
use crate::thymio::calibration;
use crate::thymio::params::DriverParams;
use handoff::{LinkId, LinkKind, NodeId, ProximitySample, RobotId, RtStats, SetupSummary};

/// Configuration of the engine.
#[derive(Debug, Clone, Default)]
pub struct EngineConfig {
    /// Generic bridge parameters.
    pub bridge: BridgeParams,
    /// Thymio driver parameters.
    pub driver: DriverParams,
}

/// What the engine reports to its user (ROS bridge, CLI).
#[derive(Debug, Clone, PartialEq)]
pub enum EngineEvent {
    /// Something happened on the Aseba network.
    Network(NetworkEvent),
    /// The RT thread started, with what it obtained.
    RtStarted(SetupSummary),
    /// The RT thread stopped.
    RtExited(handoff::ExitReason),
    /// The owner of a robot's wheels in effect (the RT thread's report).
    Owner {
        /// RT robot id.
        robot: RobotId,
        /// Owner in effect.
        owner: handoff::OwnerId,
        /// Commands from non-owners dropped so far.
        dropped: u32,
    },
    /// A link came up.
    LinkUp {
        /// Slot.
        link: LinkId,
        /// Index in the target list.
        target: u16,
        /// Transport.
        kind: LinkKind,
    },
    /// A link went down.
    LinkDown {
        /// Slot.
        link: LinkId,
        /// Index in the target list.
        target: u16,
    },
    /// A script was loaded on a node.
    ScriptLoaded {
        /// Node id.
        node: NodeId,
    },
    /// Loading a script on a node failed.
    ScriptFailed {
        /// Node id.
        node: NodeId,
        /// Why.
        error: String,
    },
    /// A node runs the driver script and is driven by the RT thread as `robot`.
    RobotReady {
        /// Node id.
        node: NodeId,
        /// RT robot id.
        robot: RobotId,
    },
    /// A Thymio-II that is bridged but not driven (no driver script, or a script without the
    /// driver events): reported once per node.
    NotDriven {
        /// Node id.
        node: NodeId,
        /// What is wrong and what to do, naming the node and the missing events.
        message: String,
    },
    /// New proximity readings of a robot (decoded by the RT thread).
    Proximity {
        /// Node id.
        node: NodeId,
        /// The readings.
        sample: ProximitySample,
    },
    /// A robot's link went down: its state is stale.
    RobotStale {
        /// Node id.
        node: NodeId,
    },
    /// A robot is no longer driven (its node stayed lost for `lost_robot_timeout`, or it runs a
    /// script without the driver events): its RT slot is free and its interface must go.
    RobotRemoved {
        /// Node id.
        node: NodeId,
        /// The RT robot id it had.
        robot: RobotId,
    },
    /// The cmd_vel watchdog stopped a robot.
    WatchdogStop {
        /// Node id.
        node: NodeId,
    },
    /// The RT obstacle-stop reflex started (`engaged`) or stopped holding a robot.
    ObstacleStop {
        /// Node id.
        node: NodeId,
        /// Holding.
        engaged: bool,
    },
    /// The RT cliff reflex started (`engaged`) or stopped holding a robot.
    CliffStop {
        /// Node id.
        node: NodeId,
        /// Holding.
        engaged: bool,
    },
    /// The RT pick-up reflex started (`engaged`: the robot left the floor) or stopped holding a robot.
    PickedUp {
        /// Node id.
        node: NodeId,
        /// Holding.
        engaged: bool,
    },
    /// A driven robot's battery reading (`_vbat`, the firmware's ADC scale: 655 ≈ 3.3 V), every
    /// [`super::BATTERY_PERIOD`].
    Battery {
        /// Node id.
        node: NodeId,
        /// `_vbat`'s first word.
        vbat: i16,
    },
    /// The emergency stop started (`engaged`) or stopped holding a robot's wheels ([`super::Engine::set_emergency_stop`]).
    EmergencyStop {
        /// Node id.
        node: NodeId,
        /// Holding.
        engaged: bool,
    },
    /// Raw motor targets sent to a driven robot through the generic interface (`set_speed`,
    /// `motor.*.target`) were beyond the driver's cap and were capped; once per robot.
    RawMotorCapped {
        /// Node id.
        node: NodeId,
        /// The targets asked for.
        wheels: [i16; 2],
        /// The cap (motor units).
        cap: f64,
    },
    /// The RT thread stopped a controller owner that exceeded its budget too many times in a row
    /// (zero speed sent, the wheels back to `ros`: an [`EngineEvent::Owner`] follows).
    ControllerStopped {
        /// Node id.
        node: NodeId,
        /// Robot slot.
        robot: RobotId,
        /// Which controller, and its times.
        stop: handoff::OverBudget,
    },
    /// RT statistics.
    Stats(Box<RtStats>),
}

/// Errors of engine operations.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum EngineError {
    /// The switch could not be started.
    #[error("Aseba switch on {address}:{port}: {error}")]
    Switch {
        /// Address.
        address: String,
        /// Port.
        port: u16,
        /// Cause.
        error: String,
    },
    /// A script problem.
    #[error(transparent)]
    Script(#[from] ScriptError),
    /// A network problem.
    #[error(transparent)]
    Net(#[from] NetError),
    /// Bad calibration.
    #[error(transparent)]
    Calibration(#[from] calibration::CalibrationError),
    /// No such event in the node's script.
    #[error("node {node} has no event \"{name}\" (load a script that declares it)")]
    UnknownEvent {
        /// Node id.
        node: NodeId,
        /// Event name.
        name: String,
    },
    /// Wrong event size.
    #[error("event \"{name}\" has size {expected}, got {got} values")]
    EventSize {
        /// Event name.
        name: String,
        /// Declared size.
        expected: usize,
        /// Given.
        got: usize,
    },
    /// An anonymous event whose size is not the one a loaded script declares for its id.
    #[error("anonymous event {event} is \"{name}\" of size {expected} in the script of node {node}, got {got} values")]
    AnonymousEventSize {
        /// Event id.
        event: u16,
        /// Its name in the script.
        name: String,
        /// The node whose script declares it.
        node: NodeId,
        /// Declared size.
        expected: usize,
        /// Given.
        got: usize,
    },
    /// An anonymous event no script of the network declares (every node runs a script
    /// thymio-rt loaded).
    #[error("anonymous event {event}: no script on the network declares it (they declare {declared} events)")]
    AnonymousEventUnknown {
        /// Event id.
        event: u16,
        /// The most events a loaded script declares.
        declared: usize,
    },
    /// The node is not driven by the RT thread.
    #[error("node {0} is not a robot driven by thymio-rt (no driver script loaded)")]
    NotARobot(NodeId),
    /// The RT thread's live parameters refused a value.
    #[error("{what}: {source}")]
    Param {
        /// What was set (`cmd_vel`, `calibration of node 3`).
        what: String,
        /// Why.
        #[source]
        source: handoff::ParamError,
    },
    /// Every RT robot slot is taken.
    #[error("every RT robot slot is taken")]
    NoRobotSlot,
    /// The ring to the RT thread is full.
    #[error("the RT thread is not keeping up (ring full)")]
    RingFull,
}

impl EngineError {
    pub(super) fn param(what: &str, source: handoff::ParamError) -> Self {
        EngineError::Param {
            what: what.to_owned(),
            source,
        }
    }
}

/// Counters of the engine.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EngineStats {
    /// Frames dropped because the ring to RT stayed full.
    pub frames_dropped_to_rt: u64,
    /// Script reloads after a node lost its program or came back.
    pub script_reloads: u64,
}
