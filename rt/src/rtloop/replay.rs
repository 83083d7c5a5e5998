//! Replaying a recorded run through the RT core (`thymio-rt replay`): the same loop, driven pass by pass on the
//! flight recorder's records instead of its links, its wait and its clock.
//!
//! A pass is replayed as it ran: the NRT side of the replay first puts back what the recorded pass took from NRT
//! (commands, frames, live values, offered links: through the same rings and cells), then [`RtLoop::replay_pass`]
//! runs the pass at the recorded time with the recorded frames in place of the link reads — decode, odometry,
//! mapping, watchdog, owners, controllers, filters and limits run unchanged — and the frames it queues and the
//! odometry it hands out are the outputs to compare. What is not replayed: the links' own bookkeeping (read
//! budgets, quiet-link resolution), the values of a controller's endpoints of its own message types (marked in the
//! recording) and the exit sequence (its waits read the clock).

use super::io::handle_frame;
use super::wait::Ready;
use super::RtLoop;
use handoff::{LinkDownReason, LinkId, PassKind};
use msgs::wire::Frame;

/// A recorded frame read from a link.
#[derive(Debug, Clone, Copy)]
pub struct ReplayFrame<'a> {
    /// Link slot.
    pub link: LinkId,
    /// The wake-up that read it (CLOCK_MONOTONIC ns).
    pub wire_ns: u64,
    /// When it was decoded.
    pub decoded_ns: u64,
    /// Header and payload.
    pub bytes: &'a [u8],
}

/// A recorded pass.
#[derive(Debug, Clone, Copy)]
pub struct ReplayPass {
    /// Which pass.
    pub kind: PassKind,
    /// Its clock.
    pub now_ns: u64,
    /// NRT's doorbell had rung.
    pub wake: bool,
    /// The deadline timer had fired.
    pub timer: bool,
    /// A stop signal had arrived.
    pub signal: bool,
    /// Robots whose controller the recorded run stopped over budget in this pass (bit per robot slot).
    pub budget_stops: u64,
}

impl RtLoop {
    /// Prepares the loop for a replay on the calling thread (instead of [`RtLoop::run`]): statistics start at
    /// `start_ns`, no thread setup.
    pub fn replay_begin(&mut self, start_ns: u64) {
        self.stats.start(start_ns, handoff::SchedulerMode::Fallback);
        // the replay records as the RT thread did (its outputs are what it compares)
        handoff::rt_install(self.ends.rt_take_recorder().unwrap_or_default());
    }

    /// Marks link slot `link` dead as the recorded run found it (between passes: it died writing).
    pub fn replay_link_lost(&mut self, link: LinkId) {
        if let Some(s) = self.slots.slots.get_mut(link.index()) {
            if s.live() {
                s.dead = Some(LinkDownReason::Eof);
            }
        }
    }

    /// Runs one recorded pass; `read` stands for its link reads: it hands the recorded frames, in the order they
    /// were read, to the [`FrameFeed`] (and may put back NRT's inputs between them, in the recorded order).
    pub fn replay_pass(&mut self, pass: &ReplayPass, read: impl FnOnce(&mut FrameFeed<'_>)) {
        let ready = Ready {
            wake: pass.wake,
            timer: pass.timer,
            signal: pass.signal,
            ..Ready::default()
        };
        self.begin_pass(pass.kind, pass.now_ns, ready);
        self.forced_stops = pass.budget_stops;
        let read = |rt: &mut RtLoop| read(&mut FrameFeed { rt });
        match pass.kind {
            PassKind::Periodic => self.periodic_with(pass.now_ns, pass.wake, read),
            PassKind::Io => self.io_wake_with(pass.now_ns, ready, read),
            PassKind::Free => self.cycle_with(pass.now_ns, read),
        }
        self.forced_stops = 0;
    }
}

/// The link reads of a replayed pass: each recorded frame is acted on as when it was read.
#[derive(Debug)]
pub struct FrameFeed<'a> {
    rt: &'a mut RtLoop,
}

impl FrameFeed<'_> {
    /// Marks link slot `link` dead (the recorded run's read of it failed here).
    pub fn link_lost(&mut self, link: LinkId) {
        self.rt.replay_link_lost(link);
    }

    /// Acts on one recorded frame (skipped if it does not parse: a recording holds whole frames only).
    pub fn frame(&mut self, f: &ReplayFrame<'_>) {
        let Ok((frame, _)) = Frame::parse(f.bytes) else {
            return;
        };
        let RtLoop {
            ends,
            robots,
            node_index,
            touched,
            stats,
            ..
        } = &mut *self.rt;
        handle_frame(
            ends,
            robots,
            node_index,
            touched,
            stats,
            f.link,
            f.wire_ns,
            f.decoded_ns,
            &frame,
        );
    }
}
