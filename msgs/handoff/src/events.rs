//! RT → NRT events and NRT → RT commands (fixed-size `Copy` records carried by the rings).

use super::control::OwnerId;
use super::ids::{LinkId, RobotId};
use super::stats::SetupSummary;
use super::values::{LinkDownReason, LinkKind, Pose2, ProximitySample, RobotConfig};
/// Why the RT thread stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitReason {
    /// SIGINT or SIGTERM.
    Signal,
    /// [`RtCommand::Shutdown`].
    Requested,
    /// The NRT side dropped its end of the rings.
    NrtGone,
    /// The configured cycle count was reached.
    CycleLimit,
}

/// RT → NRT notifications.
// Fixed-size `Copy` records by design: a ring slot holds the largest (statistics) variant.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RtEvent {
    /// The RT thread is running (first event).
    Started(SetupSummary),
    /// A link was attached to slot `link`; `target` is the connector's target index.
    LinkUp {
        /// Slot.
        link: LinkId,
        /// Connector target index.
        target: u16,
        /// Transport.
        kind: LinkKind,
    },
    /// A link was detached from slot `link`.
    LinkDown {
        /// Slot.
        link: LinkId,
        /// Connector target index.
        target: u16,
        /// Why.
        reason: LinkDownReason,
    },
    /// New proximity readings of a robot (NRT publishes them; it does not decode the event).
    Proximity(ProximitySample),
    /// The robot's link went down: its state is stale until its next odometry event.
    RobotStale {
        /// Robot.
        robot: RobotId,
    },
    /// The cmd_vel watchdog stopped a robot.
    WatchdogStop {
        /// Robot.
        robot: RobotId,
    },
    /// The owner of a robot's wheels in effect (sent when it changes, and when commands from
    /// non-owners were dropped since the last report).
    Owner {
        /// Robot.
        robot: RobotId,
        /// Owner in effect.
        owner: OwnerId,
        /// Commands (cmd_vel, joint commands) from non-owners dropped so far for this robot.
        dropped: u32,
    },
    /// A controller owner's `update` exceeded its budget on `overruns` consecutive calls: the
    /// RT thread stopped it (`stop` called, zero speed in that cycle) and gave the wheels to
    /// `ros` (reported by the [`RtEvent::Owner`] that follows).
    ControllerStopped {
        /// Robot.
        robot: RobotId,
        /// Which controller, and its times.
        stop: OverBudget,
    },
    /// Periodic statistics: the report is taken with [`crate::NrtEnds::nrt_pop_stats`] (the
    /// reports travel apart: they are much larger than the events).
    Stats,
    /// Last event: the RT thread stopped (robots were sent zero speed).
    Exiting {
        /// Why.
        reason: ExitReason,
    },
}

/// An RT controller stopped because its `update` overran its budget too often in a row: which one, and its times.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OverBudget {
    /// The controller stopped.
    pub owner: OwnerId,
    /// The budget per `update` (ns).
    pub budget_ns: u64,
    /// Consecutive calls over it.
    pub overruns: u32,
    /// The last call's time (ns).
    pub last_ns: u64,
    /// The longest call of the run over budget (ns).
    pub max_ns: u64,
}

/// NRT → RT commands.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum RtCommand {
    /// Drive a robot slot (replaces its previous configuration, keeps its pose).
    ConfigureRobot {
        /// Slot.
        robot: RobotId,
        /// Mapping.
        config: RobotConfig,
    },
    /// Stop a robot (zero speed) and free its slot.
    RemoveRobot {
        /// Slot.
        robot: RobotId,
    },
    /// Set a robot's pose (odometry restarts from it).
    ResetOdometry {
        /// Slot.
        robot: RobotId,
        /// New pose.
        pose: Pose2,
    },
    /// Close a link (handed back to the connector, which may reconnect it).
    CloseLink {
        /// Slot.
        link: LinkId,
    },
    /// Stop every robot and end the RT thread.
    Shutdown,
}

#[cfg(test)]
mod tests {
    #[test]
    fn events_stay_small_the_reports_travel_apart() {
        // every slot of the event ring is an event's size: a statistics report (with its table of
        // controllers) would make each several times larger
        let (event, report) = (
            std::mem::size_of::<super::RtEvent>(),
            std::mem::size_of::<crate::RtStats>(),
        );
        assert!(
            event * 4 < report,
            "RtEvent {event} bytes, RtStats {report}"
        );
    }
}
