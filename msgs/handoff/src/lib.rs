//! The RT ↔ NRT handoff: fixed-size messages exchanged between the RT and NRT domains (all
//! `Copy`), the rings that carry them, and the latest-value cells through which the NRT side
//! sets what the RT thread reads every cycle.
//!
//! One file per job: ids (`LinkId`, `RobotId`, `NodeId`, where a frame goes), values (link
//! facts, robot mapping, poses, odometry and proximity samples, calibration), stats, events and
//! commands, the latest-value cell, the intake that reads and records it ([`RtIntake`]) and the live
//! parameters built on them, the ring framing, the publisher and service ring pairs, and the doorbell.
//!
//! **Halves.** Every constructor that makes both halves of something returns `(rt, nrt)`:
//! [`channels`], [`latest`], [`intake`], [`live_params`], [`publisher`], [`service`] (and `rt::link_port::
//! link_port`). Every method says which side may call it, as realtime_tools' `readFromRT` /
//! `writeFromNonRT` do: `rt_*` on the RT half (never blocks, never allocates), `nrt_*` on the
//! NRT half. Each constructor's documentation has an example.
//!
//! [`channels`] builds the whole bundle once (the only allocation) and returns the two halves:
//! [`RtEnds`] for the RT thread (crate `rt`) and [`NrtEnds`] for the NRT side (network manager,
//! switch, ROS bridge). Every operation of both halves returns immediately: a full ring drops
//! the item and says so (the RT side counts the drop), an empty ring returns `None`.
//!
//! | path | carries | semantics |
//! |---|---|---|
//! | RT → NRT byte ring | every received frame: `(link, t_ns, raw bytes)` | FIFO, drop + count when full |
//! | NRT → RT byte ring | frames to write to one link or to all links | FIFO, `Err(Full)` when full |
//! | RT → NRT [`RtEvent`] ring | link up/down, odometry, proximity, watchdog stops, stats | FIFO, drop + count when full |
//! | NRT → RT [`RtCommand`] ring | robot mapping, odometry reset, link close, shutdown | FIFO, `Err(Full)` when full |
//! | [`RtLiveParams`] / [`NrtLiveParams`] ([`latest`] cells) | cmd_vel set-points, calibration, limits, motion limits, watchdog | latest value wins |
//! | RT → NRT [`record_rings`] (optional) | the flight recorder: every input the RT thread took, every frame it read and wrote | FIFO, drop + count when full |
//!
//! Times are nanoseconds of `CLOCK_MONOTONIC` as read by the RT thread.
// Unsafe code only in `latest` (the triple buffer) and `thread_setup` (two pthread scheduling calls nix does not
// wrap), each use with its SAFETY line.
#![deny(unsafe_code)]
#![warn(missing_docs)]

mod cal_command;
mod calibration;
mod companion;
mod control;
mod controller_params;
mod doorbell;
mod endpoints;
mod events;
mod goal;
mod goal_command;
mod ids;
mod intake;
mod latest;
mod motion_limits;
pub mod msg_endpoints;
mod msg_port;
mod odom_groups;
mod odom_out;
mod params;
mod prefault;
mod publisher;
mod record;
mod ring;
mod ros_value;
mod service;
mod stats;
pub mod thread_setup;
mod values;

pub use cal_command::{CalCommand, Wheel, WheelRun, MAX_SWEEP};
pub use calibration::{
    calibration_port, CalFailure, CalPortFull, CalReport, NrtCalibrationPort, RtCalibrationPort,
    CAL_RING,
};
pub use companion::CompanionPlacement;
pub use control::{
    JointCommand, JointStateSample, OwnerId, OwnerNames, WheelCommand, MAX_CONTROLLERS,
};
pub use controller_params::{NrtParams, ParamDecl, ParamId, ParamSetError, RtParams};
pub use doorbell::Doorbell;
pub use endpoints::{
    ControllerInit, DeclareError, NrtControl, NrtControllerPorts, NrtEndpoint, PrivatePort,
    RtServiceEndpoint, RtTopicPublisher, RtTopicSubscriber,
};
pub use events::{ExitReason, OverBudget, RtCommand, RtEvent};
pub use goal::{
    goal_port, GoalAbort, GoalPortFull, GoalReport, NrtGoalPort, RtGoalPort, GOAL_RING,
};
pub use goal_command::{
    check_angle, check_coordinate, check_pose, normalize_yaw, Goal, GoalCommand, GoalId,
    RangeError, MAX_POSE_COORDINATE, MAX_POSE_YAW, MIN_GOAL_ROTATION_SPEED,
    MIN_GOAL_TRANSLATION_SPEED,
};
pub use ids::{LinkId, LinkTarget, NodeId, RobotId, MAX_LINKS, MAX_ROBOTS};
pub use intake::{intake, Intake, RtIntake};
pub use latest::{latest, NrtLatest, RtLatest};
pub use motion_limits::{Axis, AxisLimits, MotionLimits};
pub use msg_endpoints::{
    FromMsg, MsgCallError, MsgCtx, MsgValue, NrtMessageCall, NrtMessageDrain, NrtMessagePort,
    NrtMessageStore, RtMessagePublisher, RtMessageService, RtMessageSubscriber, ToMsg,
};
pub use odom_out::{odom_out, NrtOdomOut, OdomDemand, OdomHandoff, RtOdomOut};
pub use params::{live_params, monotonic_ns, NrtLiveParams, RtLiveParams, DEFAULT_WATCHDOG_S};
pub use prefault::prefault_ring;
pub use publisher::{publisher, NrtPublisher, RtPublisher};
pub use record::{
    record_rings, rt_context, rt_install, rt_record, rt_record_frame, rt_recording, rt_set_context,
    rt_uninstall, FrameDir, NrtRecording, PassKind, RecEntry, RecFrame, RecInput, Record,
    RecordRings, RtRecorder,
};
pub use ring::{channels, ChannelConfig, InvalidRecord, NrtEnds, ReceivedFrame, RtEnds, SendError};
pub use ros_value::{Outcome, ParamBlock, RosKind, RosType, RosValue, MAX_PARAMS};
pub use service::{service, NrtServiceClient, RequestId, RtServiceServer, ServiceError};
pub use stats::{
    ControllerTimes, ControllerTimesTable, LatencySummary, LinkTotals, OdomTrace, RingDrops,
    RosHops, RtHops, RtStats, SchedulerMode, SetupStatus, SetupSummary, TimeSummary, SLOWEST_ODOM,
};
pub use values::{
    LinkDownReason, LinkKind, OdomSample, ParamError, Pose2, ProximitySample, Quadratic,
    RobotCalibration, RobotConfig, SpeedOutput, Twist2,
};
