//! The RT loop's exit path: zero speed to every robot (the script's `set_speed` AND a direct
//! write of the motor targets, which a stopped VM cannot ignore), flushed, then read back
//! until every robot with readable targets confirms zero — all within
//! `RtConfig::exit_flush_timeout`, shortened by a further stop signal once the frames are
//! flushed. Stopped by a signal, the loop also waits (within the same bound) for NRT, told by the
//! same signal, to hand its closing frames (RESET with `reset_on_closing`) and its `Shutdown`;
//! of what NRT hands meanwhile only the frames that stop or reset a VM go out.

use super::{ns, RtExit, RtLoop, MAX_INPUTS_PER_CYCLE};
use crate::clock::{monotonic_ns, sleep_until};
use crate::controllers::RtControllers;
use crate::link_port::LinkReturn;
use crate::robot::Robot;
use crate::signals;
use handoff::{
    ExitReason, LinkDownReason, NodeId, RobotId, RtCommand, RtEvent, RtStats, SetupSummary,
};
use msgs::wire::{kind, read_header};

/// Interval between two read-backs of a robot's motor targets while the exit waits.
const READBACK_INTERVAL_NS: u64 = 20_000_000;

/// How the exit stop of one robot ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StopOutcome {
    /// RT robot slot.
    pub robot: RobotId,
    /// Its node id.
    pub node: NodeId,
    /// `Some(true)`: its motor targets were read back as zero; `Some(false)`: not within the
    /// exit bound; `None`: they cannot be read (no `motor.left.target` address).
    pub confirmed: Option<bool>,
}

impl RtLoop {
    /// Exit path (the loop ended for `reason`): stop every configured robot, flush, and wait
    /// (bounded) for the read-backs — and, after a signal, for NRT's closing frames.
    pub(super) fn stop_robots(&mut self, reason: ExitReason) {
        let start_ns = monotonic_ns;
        // the flight recorder: what follows is the exit sequence (not a pass; a replay ends here)
        self.pass_ns = start_ns();
        handoff::rt_record(handoff::RecInput::Exit {
            now_ns: self.pass_ns,
        });
        for i in 0..self.robots.len() {
            if self.robots[i].config().is_some() {
                self.stop_owner(i, start_ns());
                self.send_stop(i);
            }
        }
        let start = monotonic_ns();
        let deadline = start + ns(self.cfg.exit_flush_timeout);
        let mut last_readback = start;
        let mut flushed = false;
        // Stopped by NRT (Shutdown, its stop flag, gone) or a cycle limit, NRT has nothing more to hand.
        // Stopped by a signal, NRT heard it too and closes: its frames (RESET with `reset_on_closing`) come
        // before its Shutdown.
        let mut nrt_closed = reason != ExitReason::Signal;
        loop {
            if !nrt_closed {
                nrt_closed = self.take_closing_frames();
            }
            self.slots.flush_all(&mut self.stats.cmd_to_wire);
            let all_out = self.slots.all_flushed();
            if !flushed && all_out {
                flushed = true;
                if self.cfg.honor_signals {
                    signals::mark_zero_speed_flushed();
                }
            }
            let now = monotonic_ns();
            for i in 0..self.slots.slots.len() {
                self.read_link(i, usize::MAX, now);
            }
            self.slots.new_period();
            let confirmed = self
                .robots
                .iter()
                .all(|r| r.stop_confirmed() != Some(false));
            let hurried = self.cfg.honor_signals && signals::hurry_signalled();
            if (all_out && confirmed && nrt_closed) || (flushed && hurried) || now >= deadline {
                break;
            }
            if now.saturating_sub(last_readback) >= READBACK_INTERVAL_NS {
                last_readback = now;
                for i in 0..self.robots.len() {
                    if self.robots[i].stop_confirmed() == Some(false) {
                        self.queue_readback(i);
                    }
                }
            }
            let _ = sleep_until(now + 1_000_000);
        }
        if !flushed && self.cfg.honor_signals {
            // Nothing more can go out: let a further signal end the process.
            signals::mark_zero_speed_flushed();
        }
        self.forget_dead_links();
        self.retire_dead_links();
    }

    /// While the robots stop after a signal: takes what NRT hands. Of its frames only those that stop or
    /// reset a VM (RESET, STOP) are queued; anything else that raced with the stop (a `set_speed`, a variable
    /// write) is refused and counted (`refused_at_exit`), as are its other commands. Returns whether NRT is
    /// done: its `Shutdown` read (it hands its frames before) and its frames all taken, or NRT gone.
    fn take_closing_frames(&mut self) -> bool {
        let mut done = self.ends.rt_peer_gone();
        for _ in 0..MAX_INPUTS_PER_CYCLE {
            match self.ends.rt_pop_command() {
                Some(RtCommand::Shutdown) => done = true,
                // nothing else applies to robots being stopped
                Some(_) => {}
                None => break,
            }
        }
        // more frames than one round takes: the next round goes on
        self.apply_outgoing_where(stops_a_vm) && done
    }

    pub(super) fn finish(&mut self, reason: ExitReason) -> RtStats {
        let stats = self.stats.snapshot(
            monotonic_ns(),
            self.slots.totals(),
            self.ends.rt_odometry_dropped(),
        );
        self.push_stats(stats);
        self.push_event(RtEvent::Exiting { reason });
        self.wake_nrt();
        stats
    }

    pub(super) fn into_exit(
        mut self,
        reason: ExitReason,
        setup: SetupSummary,
        stats: RtStats,
    ) -> RtExit {
        let mut links = Vec::new();
        for i in 0..self.slots.slots.len() {
            if let Some((target, link)) = self.slots.detach(i) {
                let ret = LinkReturn {
                    target,
                    link,
                    reason: LinkDownReason::Shutdown,
                };
                if let Err(ret) = self.port.rt_give_back(ret) {
                    links.push(ret);
                }
            }
        }
        let stops = self
            .robots
            .iter()
            .enumerate()
            .filter_map(|(i, r)| {
                r.config().map(|c| StopOutcome {
                    robot: RobotId(i as u8),
                    node: c.node,
                    confirmed: r.stop_confirmed(),
                })
            })
            .collect();
        RtExit {
            reason,
            setup,
            stats,
            odometry: self
                .robots
                .iter()
                .filter_map(Robot::last_odometry)
                .collect(),
            links,
            stops,
            controllers: std::mem::replace(&mut self.controllers, RtControllers::none()),
        }
    }
}

/// The frames that may still go out while the robots stop: those that stop or reset a VM.
fn stops_a_vm(frame: &[u8]) -> bool {
    read_header(frame).is_some_and(|h| matches!(h.kind, kind::RESET | kind::STOP))
}
