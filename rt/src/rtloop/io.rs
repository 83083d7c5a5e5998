//! The RT loop's link and NRT inputs: taking offered links (into the wait), reading links and
//! acting on their frames, NRT commands and outgoing frames, handing dead links back.

use super::node_index::NodeIndex;
use super::slots::QueueError;
use super::{RtLoop, Stats, MAX_INPUTS_PER_CYCLE};
use crate::clock::monotonic_ns;
use crate::link_port::LinkReturn;
use crate::robot::Robot;
use handoff::{
    FrameDir, LinkDownReason, LinkId, LinkTarget, RecInput, RobotId, RtCommand, RtEnds, RtEvent,
};
use msgs::wire::{kind, Frame, Words};

/// Acts on one received frame of `link`, read at the wake-up `wire_ns` and decoded at `t_ns`:
/// forwards it to NRT, confirms stops (VARIABLES), integrates odometry (handed to the publisher
/// ring and to NRT) and takes proximity readings.
#[allow(clippy::too_many_arguments)]
pub(super) fn handle_frame(
    ends: &mut RtEnds,
    robots: &mut [Robot],
    index: &NodeIndex,
    touched: &mut u64,
    stats: &mut Stats,
    link: LinkId,
    wire_ns: u64,
    t_ns: u64,
    frame: &Frame<'_>,
) {
    handoff::rt_record_frame(FrameDir::In, link.0, wire_ns, t_ns, frame.raw());
    handle_frame_inner(
        ends, robots, index, touched, stats, link, wire_ns, t_ns, frame,
    );
    // The hop ends once the frame was acted on (handed over, integrated).
    stats
        .wire_to_decoded
        .record(monotonic_ns().saturating_sub(wire_ns));
}

#[allow(clippy::too_many_arguments)]
fn handle_frame_inner(
    ends: &mut RtEnds,
    robots: &mut [Robot],
    index: &NodeIndex,
    touched: &mut u64,
    stats: &mut Stats,
    link: LinkId,
    wire_ns: u64,
    t_ns: u64,
    frame: &Frame<'_>,
) {
    if !ends.rt_push_frame(link, t_ns, frame.raw()) {
        stats.drops.frames_to_nrt += 1;
    }
    if frame.kind == kind::VARIABLES && frame.payload.len() >= 2 {
        let start = u16::from_le_bytes([frame.payload[0], frame.payload[1]]);
        let values = Words::from_le_bytes(&frame.payload[2..]);
        for i in index.robots_of(frame.source) {
            if robots[i].on_variables(link, frame.source, start, values) {
                *touched |= 1 << i;
            }
        }
        return;
    }
    if !frame.is_user_event() {
        return;
    }
    let args = Words::from_le_bytes(frame.payload);
    for i in index.robots_of(frame.source) {
        // its state (odometry, sensors, the link it is heard on) may have changed: driven at this wake-up
        *touched |= 1 << i;
        let r = &mut robots[i];
        if let Some(s) = r.on_user_event(
            link,
            wire_ns,
            t_ns,
            frame.source,
            frame.kind,
            args,
            ends.rt_params(),
        ) {
            stats.odometry_samples += 1;
            // To the front ends' publisher threads only (each on its own ring): the NRT engine has no use for it.
            ends.rt_publish_odometry(s, r.commanded(), monotonic_ns());
        }
        if let Some(p) = r.take_proximity() {
            if !ends.rt_push_event(RtEvent::Proximity(p)) {
                stats.drops.events += 1;
            }
        }
    }
}

impl RtLoop {
    pub(super) fn accept_links(&mut self) {
        // Only take an offer when its return is guaranteed to fit.
        while self.port.rt_return_room() > 0 {
            let Some(offer) = self.port.rt_take_offer() else {
                break;
            };
            match self.slots.attach(offer.target, offer.link) {
                Ok(link) => {
                    handoff::rt_record(RecInput::LinkAttached {
                        link,
                        target: offer.target,
                    });
                    let s = &self.slots.slots[link.index()];
                    let kind = s.kind;
                    self.waiter
                        .add(link.index(), s.link.as_deref().and_then(|l| l.rt_fd()));
                    self.push_event(RtEvent::LinkUp {
                        link,
                        target: offer.target,
                        kind,
                    });
                }
                Err(link) => {
                    let _ = self.port.rt_give_back(LinkReturn {
                        target: offer.target,
                        link,
                        reason: LinkDownReason::NoSlot,
                    });
                }
            }
        }
    }

    /// Reads link slot `i` (at most `reads` reads, within its period budget) at the wake-up
    /// `wake_ns`; true if it used up its period budget.
    pub(super) fn read_link(&mut self, i: usize, reads: usize, wake_ns: u64) -> bool {
        let RtLoop {
            slots,
            ends,
            robots,
            node_index,
            touched,
            stats,
            ..
        } = self;
        let was_dead = slots.slots.get(i).is_some_and(|s| s.dead.is_some());
        let used_up = slots.read(i, reads, wake_ns, |link, wire, t, frame| {
            handle_frame(
                ends, robots, node_index, touched, stats, link, wire, t, frame,
            )
        });
        if !was_dead && slots.slots.get(i).is_some_and(|s| s.dead.is_some()) {
            // the flight recorder: the moment the link died (a replay marks it dead at the same point)
            handoff::rt_record(RecInput::LinkLost {
                link: LinkId(i as u8),
                writing: false,
            });
        }
        used_up
    }

    /// Reads the links a wait found readable, once each; a link that used up its period budget
    /// is taken out of the wait until the next period.
    pub(super) fn read_ready(&mut self, mut links: u64, wake_ns: u64) {
        while links != 0 {
            let i = links.trailing_zeros() as usize;
            links &= links - 1;
            if self.read_link(i, 1, wake_ns) {
                self.waiter.mute(i, self.slots.slots[i].fd());
            }
        }
    }

    /// Takes dead links out of the wait at once (a hung-up descriptor stays readable).
    pub(super) fn forget_dead_links(&mut self) {
        for i in 0..self.slots.slots.len() {
            let s = &self.slots.slots[i];
            if s.dead.is_some() && !self.waiter.polled(i) {
                self.waiter.remove(i, s.fd());
            }
        }
    }

    /// A new period: links muted for using up their budget are waited on again.
    pub(super) fn unmute_links(&mut self) {
        for i in 0..self.slots.slots.len() {
            if self.waiter.muted(i) {
                let s = &self.slots.slots[i];
                if s.live() {
                    self.waiter.unmute(i, s.fd());
                } else {
                    self.waiter.remove(i, s.fd());
                }
            }
        }
    }

    pub(super) fn apply_commands(&mut self) {
        for _ in 0..MAX_INPUTS_PER_CYCLE {
            let Some(cmd) = self.ends.rt_pop_command() else {
                return;
            };
            match cmd {
                RtCommand::ConfigureRobot { robot, config } => {
                    if let Some(r) = self.robots.get_mut(robot.index()) {
                        r.configure(config);
                        self.node_index.rebuild(&self.robots);
                        // The owner in effect for the robot now driven.
                        self.report_owner(robot.index());
                    }
                }
                RtCommand::RemoveRobot { robot } => {
                    if (robot.index()) < self.robots.len() {
                        self.stop_owner(robot.index(), self.pass_ns);
                        self.send_stop(robot.index());
                        self.robots[robot.index()].clear();
                        self.node_index.rebuild(&self.robots);
                    }
                }
                RtCommand::ResetOdometry { robot, pose } => {
                    if let Some(r) = self.robots.get_mut(robot.index()) {
                        r.reset_odometry(pose);
                    }
                }
                RtCommand::CloseLink { link } => {
                    if let Some(s) = self.slots.slots.get_mut(link.index()) {
                        if s.live() {
                            s.dead = Some(LinkDownReason::Requested);
                        }
                    }
                }
                RtCommand::Shutdown => self.shutdown = true,
            }
        }
        // more than one round: the rest at the next period (its ring is not rung again)
        self.need_cycle = true;
    }

    pub(super) fn apply_outgoing(&mut self) {
        if !self.apply_outgoing_where(|_| true) {
            // more than one round: the rest at the next period (its ring is not rung again)
            self.need_cycle = true;
        }
    }

    /// Takes up to one round of the frames NRT handed and queues those `keep` accepts (the
    /// others are counted as `refused_at_exit`: only the exit filters). Returns whether the ring is now empty.
    pub(super) fn apply_outgoing_where(&mut self, keep: impl Fn(&[u8]) -> bool) -> bool {
        for _ in 0..MAX_INPUTS_PER_CYCLE {
            let (target, n) = match self.ends.rt_pop_frame(&mut self.frame) {
                None => return true,
                Some(Err(_)) => {
                    self.stats.drops.invalid_from_nrt += 1;
                    continue;
                }
                Some(Ok(x)) => x,
            };
            if keep(&self.frame[..n]) {
                self.queue_nrt_frame(target, n);
            } else {
                self.stats.drops.refused_at_exit += 1;
            }
        }
        false
    }

    /// Queues the frame NRT handed (`self.frame[..n]`) on its link or on all links, recorded.
    pub(super) fn queue_nrt_frame(&mut self, target: LinkTarget, n: usize) {
        let frame = &self.frame[..n];
        handoff::rt_record_frame(
            FrameDir::FromNrt,
            target.to_byte(),
            self.pass_ns,
            self.pass_ns,
            frame,
        );
        match target {
            LinkTarget::One(l) => match self.slots.queue(l, frame) {
                Ok(()) => {}
                Err(QueueError::Full) => self.stats.drops.tx_overflow += 1,
                Err(QueueError::NoLink) => self.stats.drops.invalid_from_nrt += 1,
            },
            LinkTarget::All => {
                let (_, full) = self.slots.queue_all(frame);
                self.stats.drops.tx_overflow += full as u64;
            }
        }
    }

    /// Flushes every link; a link that dies writing is recorded (the flight recorder: a replay marks it dead
    /// after the same pass).
    pub(super) fn flush_links(&mut self) {
        if !handoff::rt_recording() {
            // nothing to record: the flush alone (every I/O wake-up and cycle comes here)
            self.slots.flush_all(&mut self.stats.cmd_to_wire);
            return;
        }
        let mut alive = 0u64;
        for (i, s) in self.slots.slots.iter().enumerate() {
            alive |= u64::from(s.live()) << i;
        }
        self.slots.flush_all(&mut self.stats.cmd_to_wire);
        for (i, s) in self.slots.slots.iter().enumerate() {
            if alive & (1 << i) != 0 && s.dead.is_some() {
                handoff::rt_record(RecInput::LinkLost {
                    link: LinkId(i as u8),
                    writing: true,
                });
            }
        }
    }

    pub(super) fn retire_dead_links(&mut self) {
        for i in 0..self.slots.slots.len() {
            let Some(reason) = self.slots.slots[i].dead else {
                continue;
            };
            if self.port.rt_return_room() == 0 {
                return; // retried next cycle; the slot is not polled meanwhile
            }
            self.waiter.remove(i, self.slots.slots[i].fd());
            let Some((target, link)) = self.slots.detach(i) else {
                continue;
            };
            let _ = self.port.rt_give_back(LinkReturn {
                target,
                link,
                reason,
            });
            self.push_event(RtEvent::LinkDown {
                link: LinkId(i as u8),
                target,
                reason,
            });
            for r in 0..self.robots.len() {
                if self.robots[r].link_lost(LinkId(i as u8)) {
                    self.owner_link_lost(r);
                    self.push_event(RtEvent::RobotStale {
                        robot: RobotId(r as u8),
                    });
                }
            }
        }
    }
}
