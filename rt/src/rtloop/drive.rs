//! The RT loop's outputs: the owner's command (`rtloop/owner.rs`), filtered, to wheel targets,
//! speed frames, the direct writes and read-backs of stops, each set-point's stamp carried to the
//! wire for the cmd → wire hop.

use super::slots::QueueError;
use super::{ns, RtLoop};
use crate::controllers::Reflexes;
use handoff::{FrameDir, LinkId, LinkTarget, RobotId, WheelCommand};

/// The settings of one pass's drive (see [`RtLoop::pass_settings`]; the last one's are kept for
/// [`RtLoop::quiet_until`]).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct PassSettings {
    pub watchdog_ns: u64,
    min_gap_ns: u64,
    pub refresh_ns: u64,
}

impl RtLoop {
    /// Queues `frame[..n]` on `link` (or on every live link); true if at least one took it.
    fn queue_robot_frame(&mut self, link: Option<LinkId>, n: usize) -> bool {
        let frame = &self.frame[..n];
        let to = link.map_or(LinkTarget::All, LinkTarget::One).to_byte();
        handoff::rt_record_frame(FrameDir::Out, to, self.pass_ns, self.pass_ns, frame);
        match link {
            Some(l) => match self.slots.queue(l, frame) {
                Ok(()) => true,
                Err(QueueError::Full) => {
                    self.stats.drops.tx_overflow += 1;
                    false
                }
                Err(QueueError::NoLink) => false,
            },
            None => {
                let (ok, full) = self.slots.queue_all(frame);
                self.stats.drops.tx_overflow += full as u64;
                ok > 0
            }
        }
    }

    /// For every configured robot: applies a new owner request, takes the commands (the
    /// owner's, with the watchdog; the others dropped), runs the controllers, filters the
    /// owner's command, holds it at zero while the robot is held (a managed driver node not active) and writes the
    /// wheel targets that changed; notes when a change held back
    /// by `min_speed_interval` may go (`hold_until`), for the wait's deadline.
    pub(super) fn drive_robots(&mut self, now: u64) {
        self.hold_until = None;
        self.touched = 0;
        let pass = self.pass_settings();
        for i in 0..self.robots.len() {
            self.drive_robot(i, now, pass);
        }
    }

    /// What every robot's drive in this pass uses: the cmd_vel watchdog (read once: a cell), the least interval
    /// between speed frames and the refresh period (ns).
    fn pass_settings(&mut self) -> PassSettings {
        let wd = self.ends.rt_params().rt_watchdog();
        self.pass = PassSettings {
            watchdog_ns: if wd > 0.0 { (wd * 1e9) as u64 } else { 0 },
            min_gap_ns: ns(self.cfg.min_speed_interval),
            refresh_ns: ns(self.cfg.speed_refresh),
        };
        self.pass
    }

    /// [`Self::drive_robots`] for the robots that received frames since the last drive only (an I/O wake-up
    /// without NRT input: the others have nothing new until the periodic cycle). A change held back keeps its
    /// deadline: `hold_until` only comes earlier here (a deadline already passed makes a full drive).
    pub(super) fn drive_touched(&mut self, now: u64) {
        let mut touched = std::mem::take(&mut self.touched);
        if touched == 0 {
            return;
        }
        let pass = self.pass_settings();
        while touched != 0 {
            let i = touched.trailing_zeros() as usize;
            touched &= touched - 1;
            if i < self.robots.len() {
                self.drive_robot(i, now, pass);
            }
        }
    }

    /// Drives configured robot `i` (see [`Self::drive_robots`]).
    fn drive_robot(&mut self, i: usize, now: u64, pass: PassSettings) {
        if self.robots[i].config().is_none() {
            return;
        }
        self.apply_owner_request(i, now);
        self.poll_commands(i, now, pass.watchdog_ns);
        self.robots[i].refresh_calibration(self.ends.rt_params());
        let view = self.view(i, now);
        let owned = self.owner_command(i, &view);
        let mut cmd = owned;
        let mut reflexes = Reflexes::default();
        for f in self.filters.iter_mut() {
            let before = cmd;
            f.update(&view, &mut cmd);
            if let Some(r) = f.reflex().filter(|_| cmd != before) {
                reflexes.set(r);
            }
        }
        // Seen by the controllers next cycle (a goal aborts when a reflex held it).
        self.owners[i].reflexes = reflexes;
        self.owners[i].filtered = cmd != owned;
        // A managed driver node that is not active: the wheels stay at zero whatever the owner commands (a
        // Stop, so the limiter is reset at once and the stop is never slowed).
        if self.ends.rt_params().rt_held(RobotId(i as u8)) {
            cmd = WheelCommand::Stop;
        }
        // The motion limits: after the filters, before the wheel mapping.
        let cmd = self.robots[i].limit(self.ends.rt_params(), owned, cmd, now);
        let targets = self.robots[i].targets(self.ends.rt_params(), cmd);
        match self.robots[i].send_due(targets, now, pass.min_gap_ns, pass.refresh_ns) {
            Some(t) if t <= now => {
                self.write_targets(i, targets, now);
            }
            Some(t) => self.hold_until = Some(self.hold_until.map_or(t, |h| h.min(t))),
            None => {}
        }
    }

    /// Writes `targets` to robot `i`: its speed frame and, for a stop, the direct write of its
    /// motor targets (SET_VARIABLES, obeyed even by a stopped VM) and their read-back.
    /// Returns true if the speed frame was queued.
    pub(super) fn write_targets(&mut self, i: usize, targets: [i16; 2], now: u64) -> bool {
        let source = self.cfg.host_source;
        let link = self.robots[i].link();
        let Some(n) = self.robots[i].speed_frame(source, targets, &mut self.frame) else {
            return false;
        };
        if !self.queue_robot_frame(link, n) {
            return false;
        }
        // The newest set-point rides with this frame (a broadcast to a robot whose link is not
        // known yet is not timed).
        if let (Some(stamp), Some(l)) = (self.robots[i].take_cmd_stamp(), link) {
            self.slots.mark_cmd(l, stamp);
        }
        self.stats.speed_frames += 1;
        if targets == [0, 0] {
            if let Some(n) = self.robots[i].direct_targets_frame(source, targets, &mut self.frame) {
                self.queue_robot_frame(link, n);
            }
            self.queue_readback(i);
        }
        self.robots[i].sent(targets, now);
        true
    }

    /// Queues a read-back of robot `i`'s motor targets (if it has their address).
    pub(super) fn queue_readback(&mut self, i: usize) {
        let link = self.robots[i].link();
        if let Some(n) = self.robots[i].readback_frame(self.cfg.host_source, &mut self.frame) {
            self.queue_robot_frame(link, n);
        }
    }

    /// Queues a stop for robot `i` (removal and exit paths; no rate limit): zero speed, the
    /// direct zero write of its motor targets and their read-back.
    pub(super) fn send_stop(&mut self, i: usize) {
        self.robots[i].request_stop();
        self.write_targets(i, [0, 0], self.pass_ns);
    }
}
