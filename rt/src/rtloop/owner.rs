//! The communication switch in the RT loop: per robot, one owner of the wheels at a time
//! (`ros` = cmd_vel, `joint` = joint commands, or an RT controller), switched at a cycle
//! boundary on NRT's request; commands from non-owners dropped and counted; the owner's
//! command for the cycle (with the watchdog of `ros` and `joint`); the extended joint states.
//!
//! Semantics (RT level):
//! - A request naming no owner (a controller index beyond the registry) is refused: the owner
//!   stays, and is reported again ([`RtEvent::Owner`]), so the requester learns it.
//! - On a change, the old controller owner gets `stop`, the new one `start` (once its robot's
//!   state is fresh); the `cmd_vel` set-point and the joint command are discarded, so that a
//!   stale command never comes back with its source.
//! - A controller owner runs only while its robot's state is fresh: a link loss stops it
//!   (`stop`, zero speed) until odometry comes back (`start` again).
//! - A controller owner whose `update` exceeds `RtConfig::controller_budget` on
//!   `controller_overruns` consecutive calls is stopped in that very call's cycle (`stop`, zero
//!   speed, the wheels to `ros`: the same owner change as a request, [`RtEvent::Owner`]
//!   reported), and [`RtEvent::ControllerStopped`] says why. A request can make it the owner
//!   again (its run of overruns starts from zero). `update` and `serve` are timed per
//!   controller (`rtloop/budget.rs`).
//! - `joint`: rad/s × wheel radius → wheel speeds (each wheel through its own inverse
//!   calibration, capped on its own); NaN keeps that wheel's command; the cmd_vel watchdog
//!   applies to the joint command stream.
//! - The watchdogs of `ros` and `joint` arm on what the wheels are commanded after the motion
//!   limits as well as on the owner's command: a zero command the limiter is still
//!   decelerating to is stopped at the deadline, at once (`Robot::stop_limiter`).

use super::budget::Streak;
use super::RtLoop;
use crate::clock::monotonic_ns;
use crate::controllers::{Reflexes, RobotView};
use crate::mapping::units_to_si;
use handoff::{JointStateSample, OwnerId, RecInput, RobotId, RtEvent, WheelCommand};

/// One robot slot's owner state.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct OwnerState {
    /// Owner in effect.
    pub owner: OwnerId,
    /// The controller owner was started (and not stopped since).
    started: bool,
    /// Commands from non-owners dropped so far.
    dropped: u32,
    /// `dropped` as last reported.
    reported_dropped: u32,
    /// Joint command in effect (rad/s).
    joint: [f64; 2],
    /// When the last joint command arrived (RT time).
    joint_ns: u64,
    /// The watchdog stopped the joint command.
    joint_tripped: bool,
    /// A filter changed the owner's command in the last cycle.
    pub filtered: bool,
    /// The reflexes among those filters.
    pub reflexes: Reflexes,
    /// Next joint state due (RT time; 0: at once).
    js_due: u64,
    /// The controller owner's run of `update` calls over budget.
    streak: Streak,
}

impl OwnerState {
    /// The joint command as wheel speeds (m/s).
    fn joint_command(&self, radius: f64) -> WheelCommand {
        WheelCommand::WheelSpeeds(self.joint.map(|w| w * radius))
    }
}

impl RtLoop {
    /// Applies robot `i`'s owner request, if NRT made a new one (reported, even if refused).
    pub(super) fn apply_owner_request(&mut self, i: usize, now: u64) {
        let id = RobotId(i as u8);
        let Some(req) = self.ends.rt_params().rt_owner_request(id) else {
            return;
        };
        let count = self.controllers.robot(id).len();
        let valid = req.controller_index().is_none_or(|k| k < count);
        if valid && req != self.owners[i].owner {
            self.change_owner(i, req, now);
        }
        self.report_owner(i);
    }

    /// Gives robot `i`'s wheels to `owner` (the old controller owner gets `stop`).
    fn change_owner(&mut self, i: usize, owner: OwnerId, now: u64) {
        self.stop_owner(i, now);
        let st = &mut self.owners[i];
        st.owner = owner;
        st.joint = [0.0; 2];
        st.joint_tripped = false;
        st.joint_ns = now;
        self.robots[i].clear_set_point();
        // The old owner's motion stops at once; the new one's starts from rest.
        self.robots[i].stop_limiter();
    }

    /// Robot `i`'s controller owner exceeded its budget too many times in a row: it
    /// is stopped, the wheels go to `ros` (reported), and the stop is said with its times.
    fn stop_over_budget(&mut self, i: usize, last_ns: u64, now: u64) {
        let streak = self.owners[i].streak;
        let owner = self.owners[i].owner;
        self.change_owner(i, OwnerId::ROS, now);
        self.push_event(RtEvent::ControllerStopped {
            robot: RobotId(i as u8),
            stop: handoff::OverBudget {
                owner,
                budget_ns: self.stats.controllers.budget_ns(),
                overruns: streak.count,
                last_ns,
                max_ns: streak.max_ns,
            },
        });
        self.report_owner(i);
    }

    /// Reports robot `i`'s owner in effect and its dropped count.
    pub(super) fn report_owner(&mut self, i: usize) {
        let st = &mut self.owners[i];
        st.reported_dropped = st.dropped;
        let ev = RtEvent::Owner {
            robot: RobotId(i as u8),
            owner: st.owner,
            dropped: st.dropped,
        };
        self.push_event(ev);
    }

    /// Whether robot `i`'s owner state needs nothing of the periodic cycle: `ros` or `joint` own
    /// the wheels (no controller to update), the joint command is zero, every dropped command is
    /// reported and its extended joint states are off (as of the last periodic cycle).
    pub(super) fn owner_quiet(&self, i: usize) -> bool {
        let st = &self.owners[i];
        st.owner.controller_index().is_none()
            && !st.started
            && st.joint == [0.0; 2]
            && st.dropped == st.reported_dropped
            && st.js_due == 0
    }

    /// Periodic: reports every robot whose dropped count changed since its last report.
    pub(super) fn report_drops(&mut self) {
        for i in 0..self.robots.len() {
            let st = self.owners[i];
            if self.robots[i].config().is_some() && st.dropped != st.reported_dropped {
                self.report_owner(i);
            }
        }
    }

    /// Stops robot `i`'s controller owner if it runs (owner change, removal, stale state).
    pub(super) fn stop_owner(&mut self, i: usize, now: u64) {
        let st = &mut self.owners[i];
        // a run of overruns is counted within one start of the controller
        st.streak = Streak::default();
        let Some(k) = st.owner.controller_index().filter(|_| st.started) else {
            return;
        };
        st.started = false;
        let view = self.view(i, now);
        if let Some(c) = self.controllers.robot(RobotId(i as u8)).get_mut(k) {
            handoff::rt_set_context(RobotId(i as u8), k as u8);
            c.stop(&view);
        }
    }

    /// The robot's link went down: the joint command is discarded (as the set-point is).
    pub(super) fn owner_link_lost(&mut self, i: usize) {
        self.owners[i].joint = [0.0; 2];
    }

    /// What controllers see of robot `i` now.
    pub(super) fn view(&mut self, i: usize, now: u64) -> RobotView {
        let r = &self.robots[i];
        let link_up = r
            .link()
            .map_or(self.slots.any_live(), |l| self.slots.live(l));
        let mut view = r.view(now, link_up, self.owners[i].owner);
        view.reflexes = self.owners[i].reflexes;
        view
    }

    /// Takes robot `i`'s cmd_vel set-point and joint command: the owner's are applied (with the
    /// watchdog), the others dropped and counted.
    pub(super) fn poll_commands(&mut self, i: usize, now: u64, wd_ns: u64) {
        let id = RobotId(i as u8);
        let owner = self.owners[i].owner;
        let params = self.ends.rt_params();
        let mut watchdog = false;
        if owner == OwnerId::ROS {
            watchdog = self.robots[i].poll_set_point(params, now, wd_ns)
                == crate::robot::CmdUpdate::WatchdogStop;
        } else if let Some((_, _, true)) = params.rt_cmd_vel_stamped(id) {
            self.owners[i].dropped = self.owners[i].dropped.wrapping_add(1);
        }
        // what the wheels are commanded after the limits (a zero joint command may still be
        // decelerated to): the joint watchdog arms on it too
        let limiter_moving = self.robots[i].commanded() != handoff::Twist2::default();
        let st = &mut self.owners[i];
        match params.rt_joint_command_stamped(id) {
            Some((cmd, _, true)) if owner == OwnerId::JOINT => {
                for (w, v) in st.joint.iter_mut().zip(cmd.velocity) {
                    if v.is_finite() {
                        *w = v;
                    }
                }
                st.joint_ns = now;
                st.joint_tripped = false;
            }
            Some((_, _, true)) => st.dropped = st.dropped.wrapping_add(1),
            _ => {}
        }
        if owner == OwnerId::JOINT
            && wd_ns > 0
            && (st.joint != [0.0; 2] || limiter_moving)
            && !st.joint_tripped
            && now.saturating_sub(st.joint_ns) > wd_ns
        {
            st.joint = [0.0; 2];
            st.joint_tripped = true;
            watchdog = true;
        }
        if watchdog {
            self.robots[i].stop_limiter();
            self.stats.watchdog_stops += 1;
            self.push_event(RtEvent::WatchdogStop { robot: id });
        }
    }

    /// Serves every controller of robot `i` and returns its owner's command for this cycle
    /// (before the filters). Starts / stops a controller owner as its robot's state becomes
    /// fresh / stale.
    pub(super) fn owner_command(&mut self, i: usize, view: &RobotView) -> WheelCommand {
        let id = RobotId(i as u8);
        let owner = self.owners[i].owner;
        let run = owner.controller_index().filter(|_| !view.stale);
        if run.is_none() && self.owners[i].started {
            self.stop_owner(i, view.now_ns);
        }
        let ctrls = self.controllers.robot(id);
        if let Some(k) = run {
            if !self.owners[i].started {
                if let Some(c) = ctrls.get_mut(k) {
                    handoff::rt_set_context(id, k as u8);
                    c.start(view);
                }
                self.owners[i].started = true;
            }
        }
        // one clock read per serve: each one's end is the next one's start
        let mut t0 = monotonic_ns();
        for (k, c) in ctrls.iter_mut().enumerate() {
            // what its endpoints take is recorded as its
            handoff::rt_set_context(id, k as u8);
            c.serve(view, Some(k) == owner.controller_index());
            let t1 = monotonic_ns();
            self.stats
                .controllers
                .record_serve(k, t1.saturating_sub(t0));
            t0 = t1;
        }
        match owner {
            OwnerId::ROS => WheelCommand::Twist(self.robots[i].set_point()),
            OwnerId::JOINT => self.owners[i].joint_command(view.calibration.wheel_radius),
            _ => match run.and_then(|k| ctrls.get_mut(k).map(|c| (k, c))) {
                Some((k, c)) => {
                    handoff::rt_set_context(id, k as u8);
                    let t0 = monotonic_ns();
                    let cmd = c.update(view);
                    let dt = monotonic_ns().saturating_sub(t0);
                    let streak = &mut self.owners[i].streak;
                    let over = self.stats.controllers.record_update(k, dt, streak);
                    // a replay repeats the recorded run's decisions (its timings are not this run's)
                    let forced = self.forced_stops & (1 << i) != 0;
                    if over || forced {
                        self.forced_stops &= !(1 << i);
                        handoff::rt_record(RecInput::BudgetStop {
                            robot: id,
                            controller: k as u8,
                        });
                        self.stop_over_budget(i, dt, view.now_ns);
                        // zero speed in this very cycle
                        WheelCommand::Stop
                    } else {
                        cmd
                    }
                }
                None => WheelCommand::Stop,
            },
        }
    }

    /// Periodic: the extended joint state of every configured robot whose rate is set, at that
    /// rate at most once per period (a rate above `1/period` gives one sample per period). A
    /// sample is due within half a period of its time, so that a rate equal to the loop's
    /// is not halved by jitter.
    pub(super) fn publish_joint_states(&mut self, now: u64) {
        let half_period = super::ns(self.cfg.period) / 2;
        for i in 0..self.robots.len() {
            let Some(cfg) = self.robots[i].config().copied() else {
                continue;
            };
            let hz = self.ends.rt_params().rt_joint_state_hz(RobotId(i as u8));
            if hz.is_nan() || hz <= 0.0 {
                self.owners[i].js_due = 0;
                continue;
            }
            let interval = (1e9 / hz).min(u64::MAX as f64) as u64;
            let st = &mut self.owners[i];
            if now.saturating_add(half_period) < st.js_due {
                continue;
            }
            st.js_due = st.js_due.saturating_add(interval).max(now);
            let r = &self.robots[i];
            let cal = r.calibration();
            let target = r.last_sent().unwrap_or_default();
            let radius = cal.wheel_radius;
            let reference = [
                units_to_si(target[0] as f64, cal.left) / radius,
                units_to_si(target[1] as f64, cal.right) / radius,
            ];
            let odom = r.last_odometry();
            let mut fault = 0;
            if r.stale() {
                fault |= JointStateSample::FAULT_STALE;
            }
            if st.filtered {
                fault |= JointStateSample::FAULT_REFLEX;
            }
            let tripped = match st.owner {
                OwnerId::ROS => r.watchdog_tripped(),
                OwnerId::JOINT => st.joint_tripped,
                _ => false,
            };
            if tripped {
                fault |= JointStateSample::FAULT_WATCHDOG;
            }
            let sample = JointStateSample {
                robot: RobotId(i as u8),
                node: cfg.node,
                t_ns: now,
                position: odom.map(|o| o.wheel_pos).unwrap_or_default(),
                velocity: odom.map(|o| o.wheel_vel).unwrap_or_default(),
                velocity_reference: reference,
                target,
                // The driver script's odometry event does not carry the PWMs.
                pwm: None,
                owner: st.owner,
                fault,
            };
            // A full ring counts the drop (statistics: odometry drops); without a publisher
            // thread nobody wants it.
            let _ = self.ends.rt_publish_joint_state(sample);
        }
    }
}
