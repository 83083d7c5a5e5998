//! Live parameters: what the NRT side changes at run time (cmd_vel set-points, calibration and
//! limits, motion limits, the cmd_vel watchdog) and the RT thread reads every cycle, one [`latest`] cell each.
//!
//! [`live_params`] makes the two halves. The RT half ([`RtLiveParams`]) reads wait-free and
//! never allocates, each cell through an [`RtIntake`] (which records each new value it takes, one kind of value
//! per cell); the NRT half ([`NrtLiveParams`]) validates, is `Clone` (the engine and the
//! ROS subscription callbacks share it) and serialises its writers with a mutex that the RT side
//! never sees.
//!
//! Every set-point also rings the RT thread's wake doorbell ([`RtLiveParams::rt_wake_bell`]), so
//! that a loop waiting on I/O writes it to the wire at once, and carries the time it was
//! received (CLOCK_MONOTONIC ns) so the RT thread can time the hop to the wire.

use super::control::{JointCommand, OwnerId};
use super::doorbell::Doorbell;
use super::ids::{RobotId, MAX_ROBOTS};
use super::intake::{intake, intake_kinds, RtIntake};
use super::latest::NrtLatest;
use super::motion_limits::MotionLimits;
use super::record::RecInput;
use super::values::{ParamError, RobotCalibration, Twist2};
use std::sync::{Arc, Mutex, PoisonError};

/// Default cmd_vel watchdog (s).
pub const DEFAULT_WATCHDOG_S: f64 = 0.5;

/// The RT thread's half of the live parameters (`&mut self`: one reader).
#[derive(Debug)]
pub struct RtLiveParams {
    watchdog_s: RtIntake<WatchdogIn>,
    robots: Box<[RtRobotParams]>,
    wake: Doorbell,
}

#[derive(Debug)]
struct RtRobotParams {
    calibration: RtIntake<CalibrationIn>,
    cmd_vel: RtIntake<CmdVelIn>,
    joint: RtIntake<JointIn>,
    owner: RtIntake<OwnerIn>,
    joint_state_hz: RtIntake<JointStateHzIn>,
    motion_limits: RtIntake<MotionLimitsIn>,
    held: RtIntake<HeldIn>,
}

intake_kinds! {
    WatchdogIn((): (), seconds: f64) => RecInput::Watchdog { seconds };
    CalibrationIn(robot: RobotId, calibration: RobotCalibration) => RecInput::Calibration { robot, calibration };
    CmdVelIn(robot: RobotId, s: SetPoint) =>
        RecInput::CmdVel { robot, twist: s.twist, received_ns: s.received_ns };
    JointIn(robot: RobotId, s: JointSetPoint) =>
        RecInput::JointCommand { robot, command: s.command, received_ns: s.received_ns };
    OwnerIn(robot: RobotId, owner: OwnerId) => RecInput::OwnerRequest { robot, owner };
    JointStateHzIn(robot: RobotId, hz: f64) => RecInput::JointStateHz { robot, hz };
    MotionLimitsIn(robot: RobotId, limits: MotionLimits) => RecInput::MotionLimits { robot, limits };
    HeldIn(robot: RobotId, held: bool) => RecInput::Held { robot, held };
}

/// A joint command with the time NRT received it.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct JointSetPoint {
    command: JointCommand,
    received_ns: u64,
}

/// A set-point and when the NRT side received it (CLOCK_MONOTONIC ns).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct SetPoint {
    twist: Twist2,
    received_ns: u64,
}

/// Now on CLOCK_MONOTONIC (ns), the clock of every handoff time stamp.
pub fn monotonic_ns() -> u64 {
    match nix::time::clock_gettime(nix::time::ClockId::CLOCK_MONOTONIC) {
        Ok(t) => t.tv_sec() as u64 * 1_000_000_000 + t.tv_nsec() as u64,
        // CLOCK_MONOTONIC cannot fail on Linux; keep time from going backwards regardless.
        Err(_) => 0,
    }
}

/// The NRT side's half of the live parameters (clone it to share it between NRT threads).
#[derive(Debug, Clone)]
pub struct NrtLiveParams {
    inner: Arc<Mutex<NrtInner>>,
    robots: usize,
    wake: Doorbell,
}

#[derive(Debug)]
struct NrtInner {
    watchdog_s: NrtLatest<f64>,
    robots: Box<[NrtRobotParams]>,
}

#[derive(Debug)]
struct NrtRobotParams {
    calibration: NrtLatest<RobotCalibration>,
    cmd_vel: NrtLatest<SetPoint>,
    joint: NrtLatest<JointSetPoint>,
    owner: NrtLatest<OwnerId>,
    joint_state_hz: NrtLatest<f64>,
    motion_limits: NrtLatest<MotionLimits>,
    held: NrtLatest<bool>,
}

/// Live parameters for `robots` robot slots (at most [`MAX_ROBOTS`]), with default calibration,
/// zero set-points and the default watchdog: `(rt, nrt)` halves.
///
/// # Example
///
/// ```
/// use handoff::{live_params, RobotId, Twist2};
///
/// let (mut rt, nrt) = live_params(2);
/// let go = Twist2 { linear: 0.1, angular: 0.0 };
/// nrt.nrt_set_cmd_vel(RobotId(1), go).unwrap();
/// assert_eq!(rt.rt_cmd_vel(RobotId(1)), Some((go, true))); // new: re-arms the watchdog
/// assert_eq!(rt.rt_cmd_vel(RobotId(1)), Some((go, false)));
/// assert!(nrt.nrt_set_cmd_vel(RobotId(2), go).is_err()); // no such robot slot
/// ```
pub fn live_params(robots: usize) -> (RtLiveParams, NrtLiveParams) {
    let n = robots.min(MAX_ROBOTS);
    let (wd_rt, wd_nrt) = intake(DEFAULT_WATCHDOG_S, ());
    let mut rt_robots = Vec::with_capacity(n);
    let mut nrt_robots = Vec::with_capacity(n);
    for i in 0..n {
        let robot = RobotId(i as u8);
        let (cal_rt, cal_nrt) = intake(RobotCalibration::default(), robot);
        let (cmd_rt, cmd_nrt) = intake(SetPoint::default(), robot);
        let (joint_rt, joint_nrt) = intake(JointSetPoint::default(), robot);
        let (owner_rt, owner_nrt) = intake(OwnerId::ROS, robot);
        let (js_rt, js_nrt) = intake(0.0, robot);
        let (ml_rt, ml_nrt) = intake(MotionLimits::default(), robot);
        let (held_rt, held_nrt) = intake(false, robot);
        rt_robots.push(RtRobotParams {
            calibration: cal_rt,
            cmd_vel: cmd_rt,
            joint: joint_rt,
            owner: owner_rt,
            joint_state_hz: js_rt,
            motion_limits: ml_rt,
            held: held_rt,
        });
        nrt_robots.push(NrtRobotParams {
            calibration: cal_nrt,
            cmd_vel: cmd_nrt,
            joint: joint_nrt,
            owner: owner_nrt,
            joint_state_hz: js_nrt,
            motion_limits: ml_nrt,
            held: held_nrt,
        });
    }
    let wake = Doorbell::new();
    (
        RtLiveParams {
            watchdog_s: wd_rt,
            robots: rt_robots.into_boxed_slice(),
            wake: wake.clone(),
        },
        NrtLiveParams {
            inner: Arc::new(Mutex::new(NrtInner {
                watchdog_s: wd_nrt,
                robots: nrt_robots.into_boxed_slice(),
            })),
            robots: n,
            wake,
        },
    )
}

impl RtLiveParams {
    /// Number of robot slots.
    pub fn robots(&self) -> usize {
        self.robots.len()
    }

    /// The cmd_vel watchdog (s); 0 = disabled.
    pub fn rt_watchdog(&mut self) -> f64 {
        self.watchdog_s.rt_read().0
    }

    /// A robot's calibration and limits; `None` if no such robot.
    pub fn rt_calibration(&mut self, robot: RobotId) -> Option<RobotCalibration> {
        Some(self.robots.get_mut(robot.index())?.calibration.rt_read().0)
    }

    /// A robot's last set-point and whether it was set since the previous read (every set
    /// counts, even of the same value: it re-arms the watchdog); `None` if no such robot.
    pub fn rt_cmd_vel(&mut self, robot: RobotId) -> Option<(Twist2, bool)> {
        self.rt_cmd_vel_stamped(robot).map(|(t, _, new)| (t, new))
    }

    /// As [`RtLiveParams::rt_cmd_vel`], with the time the NRT side received the set-point
    /// (CLOCK_MONOTONIC ns; 0 for the initial zero).
    pub fn rt_cmd_vel_stamped(&mut self, robot: RobotId) -> Option<(Twist2, u64, bool)> {
        let (sp, new) = self.robots.get_mut(robot.index())?.cmd_vel.rt_read();
        Some((sp.twist, sp.received_ns, new))
    }

    /// The newest joint command of `robot`, its receive stamp (CLOCK_MONOTONIC ns, 0 before
    /// the first) and whether it is new since the last read.
    pub fn rt_joint_command_stamped(
        &mut self,
        robot: RobotId,
    ) -> Option<(JointCommand, u64, bool)> {
        let (sp, new) = self.robots.get_mut(robot.index())?.joint.rt_read();
        Some((sp.command, sp.received_ns, new))
    }

    /// The owner NRT requested for `robot`, if the request is new since the last read (the RT
    /// thread applies it at a cycle boundary and reports the owner in effect).
    pub fn rt_owner_request(&mut self, robot: RobotId) -> Option<OwnerId> {
        self.robots.get_mut(robot.index())?.owner.rt_read_new()
    }

    /// The rate (Hz) at which NRT wants `robot`'s extended joint states (0: none).
    pub fn rt_joint_state_hz(&mut self, robot: RobotId) -> f64 {
        let r = self.robots.get_mut(robot.index());
        r.map_or(0.0, |r| r.joint_state_hz.rt_read().0)
    }

    /// `robot`'s motion limits (all off until NRT sets them; `None` if no such robot).
    pub fn rt_motion_limits(&mut self, robot: RobotId) -> Option<MotionLimits> {
        Some(
            self.robots
                .get_mut(robot.index())?
                .motion_limits
                .rt_read()
                .0,
        )
    }

    /// Whether `robot`'s wheels are held at zero whatever its owner commands (a managed driver node that is not
    /// active); false for no such robot.
    pub fn rt_held(&mut self, robot: RobotId) -> bool {
        let r = self.robots.get_mut(robot.index());
        r.is_some_and(|r| r.held.rt_read().0)
    }

    /// The doorbell every NRT write to the RT thread rings (set-points here, frames and commands
    /// in [`super::NrtEnds`]): the RT loop waits on its fd beside its links' fds.
    pub fn rt_wake_bell(&self) -> &Doorbell {
        &self.wake
    }
}

impl NrtLiveParams {
    fn with<R>(&self, f: impl FnOnce(&mut NrtInner) -> R) -> R {
        // A writer that panicked left whole values behind (stores are single writes).
        let mut g = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        f(&mut g)
    }

    fn check(&self, robot: RobotId) -> Result<usize, ParamError> {
        let i = robot.index();
        if i < self.robots {
            Ok(i)
        } else {
            Err(ParamError::NoSuchRobot(robot))
        }
    }

    /// Number of robot slots.
    pub fn robots(&self) -> usize {
        self.robots
    }

    /// Sets the cmd_vel watchdog (s); 0 disables it.
    pub fn nrt_set_watchdog(&self, seconds: f64) -> Result<(), ParamError> {
        if !seconds.is_finite() {
            return Err(ParamError::NotFinite("watchdog"));
        }
        if seconds < 0.0 {
            return Err(ParamError::OutOfRange {
                name: "watchdog",
                value: seconds,
            });
        }
        self.with(|p| p.watchdog_s.nrt_store(seconds));
        Ok(())
    }

    /// The cmd_vel watchdog (s); 0 = disabled.
    pub fn nrt_watchdog(&self) -> f64 {
        self.with(|p| p.watchdog_s.nrt_last())
    }

    /// Sets a robot's calibration and limits (validated).
    pub fn nrt_set_calibration(
        &self,
        robot: RobotId,
        c: RobotCalibration,
    ) -> Result<(), ParamError> {
        c.validate()?;
        let i = self.check(robot)?;
        self.with(|p| p.robots[i].calibration.nrt_store(c));
        Ok(())
    }

    /// A robot's calibration; `None` if no such robot.
    pub fn nrt_calibration(&self, robot: RobotId) -> Option<RobotCalibration> {
        let i = self.check(robot).ok()?;
        Some(self.with(|p| p.robots[i].calibration.nrt_last()))
    }

    /// Sets a robot's velocity set-point (latest value wins; each call re-arms the watchdog),
    /// received now; rings the RT thread's wake doorbell.
    pub fn nrt_set_cmd_vel(&self, robot: RobotId, twist: Twist2) -> Result<(), ParamError> {
        self.nrt_set_cmd_vel_at(robot, twist, monotonic_ns())
    }

    /// As [`NrtLiveParams::nrt_set_cmd_vel`] for a set-point received at `received_ns`
    /// (CLOCK_MONOTONIC, e.g. when the ROS message was taken), the start of the cmd_vel → wire
    /// hop the RT thread times.
    pub fn nrt_set_cmd_vel_at(
        &self,
        robot: RobotId,
        twist: Twist2,
        received_ns: u64,
    ) -> Result<(), ParamError> {
        if !twist.linear.is_finite() {
            return Err(ParamError::NotFinite("linear"));
        }
        if !twist.angular.is_finite() {
            return Err(ParamError::NotFinite("angular"));
        }
        let i = self.check(robot)?;
        self.with(|p| {
            p.robots[i]
                .cmd_vel
                .nrt_store(SetPoint { twist, received_ns })
        });
        self.wake.ring();
        Ok(())
    }

    /// A robot's last set-point; `None` if no such robot.
    pub fn nrt_cmd_vel(&self, robot: RobotId) -> Option<Twist2> {
        let i = self.check(robot).ok()?;
        Some(self.with(|p| p.robots[i].cmd_vel.nrt_last().twist))
    }

    /// Stores a joint command (wheel velocities, rad/s; NaN: that wheel keeps its command)
    /// received at `received_ns` and rings the RT thread. Infinite values are refused.
    pub fn nrt_set_joint_command_at(
        &self,
        robot: RobotId,
        command: JointCommand,
        received_ns: u64,
    ) -> Result<(), ParamError> {
        if command.velocity.iter().any(|v| v.is_infinite()) {
            return Err(ParamError::NotFinite("joint velocity"));
        }
        let i = self.check(robot)?;
        self.with(|p| {
            p.robots[i].joint.nrt_store(JointSetPoint {
                command,
                received_ns,
            })
        });
        self.wake.ring();
        Ok(())
    }

    /// Requests `owner` for `robot`'s wheels (the RT thread switches at its next cycle and
    /// reports the owner in effect with [`RtEvent::Owner`](super::RtEvent::Owner)).
    pub fn nrt_request_owner(&self, robot: RobotId, owner: OwnerId) -> Result<(), ParamError> {
        let i = self.check(robot)?;
        self.with(|p| p.robots[i].owner.nrt_store(owner));
        self.wake.ring();
        Ok(())
    }

    /// Sets `robot`'s motion limits (validated: the error names the refused field, and the
    /// limits in effect stay); the RT thread applies them from its next cycle.
    pub fn nrt_set_motion_limits(
        &self,
        robot: RobotId,
        limits: MotionLimits,
    ) -> Result<(), ParamError> {
        limits.validate()?;
        let i = self.check(robot)?;
        self.with(|p| p.robots[i].motion_limits.nrt_store(limits));
        self.wake.ring();
        Ok(())
    }

    /// `robot`'s motion limits as last set; `None` if no such robot.
    pub fn nrt_motion_limits(&self, robot: RobotId) -> Option<MotionLimits> {
        let i = self.check(robot).ok()?;
        Some(self.with(|p| p.robots[i].motion_limits.nrt_last()))
    }

    /// Holds `robot`'s wheels at zero (`true`) whatever its owner commands, or lets its owner's command through
    /// again (`false`, the default); the RT thread applies it from its next cycle.
    pub fn nrt_set_held(&self, robot: RobotId, held: bool) -> Result<(), ParamError> {
        let i = self.check(robot)?;
        self.with(|p| p.robots[i].held.nrt_store(held));
        self.wake.ring();
        Ok(())
    }

    /// Whether `robot`'s wheels are held as last set; `None` if no such robot.
    pub fn nrt_held(&self, robot: RobotId) -> Option<bool> {
        let i = self.check(robot).ok()?;
        Some(self.with(|p| p.robots[i].held.nrt_last()))
    }

    /// Sets the rate (Hz, 0 = off) of `robot`'s extended joint states from the RT thread.
    pub fn nrt_set_joint_state_hz(&self, robot: RobotId, hz: f64) -> Result<(), ParamError> {
        if !hz.is_finite() {
            return Err(ParamError::NotFinite("joint_state_rate"));
        }
        if hz < 0.0 {
            return Err(ParamError::OutOfRange {
                name: "joint_state_rate",
                value: hz,
            });
        }
        let i = self.check(robot)?;
        self.with(|p| p.robots[i].joint_state_hz.nrt_store(hz));
        self.wake.ring();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_points_carry_their_stamp_and_ring_the_rt_bell() {
        let (mut rt, p) = live_params(1);
        assert_eq!(rt.rt_cmd_vel_stamped(RobotId(0)).unwrap().1, 0);
        assert!(!rt.rt_wake_bell().drain());
        let go = Twist2 {
            linear: 0.1,
            angular: 0.0,
        };
        p.nrt_set_cmd_vel_at(RobotId(0), go, 42).unwrap();
        assert!(rt.rt_wake_bell().drain());
        assert_eq!(rt.rt_cmd_vel_stamped(RobotId(0)), Some((go, 42, true)));
        let before = monotonic_ns();
        p.nrt_set_cmd_vel(RobotId(0), go).unwrap();
        let (_, t, new) = rt.rt_cmd_vel_stamped(RobotId(0)).unwrap();
        assert!(new && t >= before && t <= monotonic_ns());
        // A refused set-point does not ring.
        assert!(rt.rt_wake_bell().drain());
        assert!(p.nrt_set_cmd_vel(RobotId(1), go).is_err());
        assert!(!rt.rt_wake_bell().drain());
    }

    #[test]
    fn live_params_validate_and_report_new_set_points() {
        let (mut rt, p) = live_params(2);
        assert_eq!((rt.robots(), p.robots()), (2, 2));
        assert_eq!(rt.rt_cmd_vel(RobotId(0)), Some((Twist2::default(), false)));
        p.nrt_set_cmd_vel(
            RobotId(1),
            Twist2 {
                linear: 0.1,
                angular: -0.5,
            },
        )
        .unwrap();
        let (t, new) = rt.rt_cmd_vel(RobotId(1)).unwrap();
        assert_eq!((new, t.linear, t.angular), (true, 0.1, -0.5));
        assert!(!rt.rt_cmd_vel(RobotId(1)).unwrap().1);
        assert_eq!(
            p.nrt_set_cmd_vel(RobotId(2), Twist2::default()),
            Err(ParamError::NoSuchRobot(RobotId(2)))
        );
        assert_eq!(
            p.nrt_set_cmd_vel(
                RobotId(0),
                Twist2 {
                    linear: f64::NAN,
                    angular: 0.0
                }
            ),
            Err(ParamError::NotFinite("linear"))
        );
        let mut c = RobotCalibration {
            max_units: 2000.0,
            ..Default::default()
        };
        assert!(matches!(
            p.nrt_set_calibration(RobotId(0), c),
            Err(ParamError::OutOfRange { .. })
        ));
        c.max_units = 300.0;
        p.nrt_set_calibration(RobotId(0), c).unwrap();
        assert_eq!(p.nrt_calibration(RobotId(0)), Some(c));
        assert_eq!(rt.rt_calibration(RobotId(0)), Some(c));
        assert_eq!(
            rt.rt_calibration(RobotId(1)),
            Some(RobotCalibration::default())
        );
        assert_eq!(rt.rt_calibration(RobotId(2)), None);
        assert!(p.nrt_set_watchdog(-1.0).is_err());
        p.nrt_set_watchdog(0.25).unwrap();
        assert_eq!((p.nrt_watchdog(), rt.rt_watchdog()), (0.25, 0.25));
    }

    #[test]
    fn the_hold_reaches_rt_and_rings() {
        let (mut rt, p) = live_params(2);
        assert!(!rt.rt_held(RobotId(1)));
        p.nrt_set_held(RobotId(1), true).unwrap();
        assert!(rt.rt_wake_bell().drain());
        assert!(rt.rt_held(RobotId(1)) && !rt.rt_held(RobotId(0)));
        assert_eq!(p.nrt_held(RobotId(1)), Some(true));
        p.nrt_set_held(RobotId(1), false).unwrap();
        assert!(!rt.rt_held(RobotId(1)));
        assert!(p.nrt_set_held(RobotId(2), true).is_err());
        assert!(!rt.rt_held(RobotId(7)));
    }

    #[test]
    fn motion_limits_are_validated_and_reach_rt() {
        use crate::motion_limits::AxisLimits;
        let (mut rt, p) = live_params(2);
        assert!(rt.rt_motion_limits(RobotId(1)).unwrap().is_off());
        let mut l = MotionLimits::default();
        l.angular.max_acceleration = 2.0;
        p.nrt_set_motion_limits(RobotId(1), l).unwrap();
        assert_eq!(rt.rt_motion_limits(RobotId(1)), Some(l));
        assert_eq!(p.nrt_motion_limits(RobotId(1)), Some(l));
        let bad = MotionLimits {
            linear: AxisLimits {
                max_deceleration: -1.0,
                ..AxisLimits::OFF
            },
            ..l
        };
        assert_eq!(
            p.nrt_set_motion_limits(RobotId(1), bad),
            Err(ParamError::OutOfRange {
                name: "linear.max_deceleration",
                value: -1.0
            })
        );
        // The refused set loses nothing: the limits in effect stay.
        assert_eq!(rt.rt_motion_limits(RobotId(1)), Some(l));
        assert_eq!(
            p.nrt_set_motion_limits(RobotId(2), l),
            Err(ParamError::NoSuchRobot(RobotId(2)))
        );
        assert!(rt.rt_motion_limits(RobotId(0)).unwrap().is_off());
        assert_eq!(rt.rt_motion_limits(RobotId(2)), None);
    }

    #[test]
    fn the_same_set_point_twice_is_new_twice() {
        // The watchdog is re-armed by every set, not only by a change.
        let (mut rt, p) = live_params(1);
        let t = Twist2 {
            linear: 0.2,
            angular: 0.0,
        };
        p.nrt_set_cmd_vel(RobotId(0), t).unwrap();
        assert_eq!(rt.rt_cmd_vel(RobotId(0)), Some((t, true)));
        p.nrt_set_cmd_vel(RobotId(0), t).unwrap();
        assert_eq!(rt.rt_cmd_vel(RobotId(0)), Some((t, true)));
    }
}
