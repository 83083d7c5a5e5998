//! How long the NRT loop may wait for its doorbell before the engine must be polled again.
//!
//! What wakes the loop at once needs no polling: the RT thread rings the doorbell for every event it hands over,
//! and for the frames it reads while NRT wants them at once ([`Engine::want_frames`]; else they wait for the
//! loop's next wake-up), the ROS spinner and the script reader ring it when they have work. What does need polling: the
//! engine's own timers (the shortest is the 200 ms settle after a node is accepted; pings, description retries,
//! request timeouts and liveness checks run at 1 s), sockets of the Aseba switch's clients and frames waiting for
//! room in the RT ring. While nothing but the timers needs it, the loop waits up to [`IDLE_TICK`] ([`ACCEPT_TICK`]
//! while a node is being accepted); otherwise (a switch client is connected, frames are held back, or the RT thread
//! does not ring) it waits the short poll period it is given.

use super::Engine;
use std::time::Duration;

/// Longest wait of the NRT loop while only the engine's timers need polling and no node is being accepted: a tenth
/// of the 1 s timers; also how long a new Aseba switch client may wait to be accepted, and the frames nobody wants at
/// once wait for the loop ([`Engine::want_frames`]). The layer's and front ends' checks (joint-state subscribers
/// every 100 ms, goal clients, held calls' timeouts) run at this resolution or finer.
pub const IDLE_TICK: Duration = Duration::from_millis(100);

/// Longest wait while a node is being accepted: a quarter of its 200 ms settle.
pub const ACCEPT_TICK: Duration = Duration::from_millis(50);

impl Engine {
    /// Tells the engine whether the RT thread rings the doorbell when it hands something over
    /// (`rt.wake_nrt`); when it does not, every wait is the short poll period.
    pub fn set_rt_rings(&mut self, rings: bool) {
        self.rt_rings = rings;
    }

    /// Whether the engine must be polled at the short period (see the module documentation).
    pub fn needs_polling(&self) -> bool {
        !self.rt_rings
            || !self.backlog.is_empty()
            || self.switch.as_ref().is_some_and(|s| s.has_clients())
    }

    /// Whether the engine wants the frames the RT thread reads as soon as they come (an Aseba switch client
    /// or several links to forward between, a node being accepted or described, a variable read waiting for
    /// its answer); otherwise they may wait for the loop's next wake-up of its own ([`IDLE_TICK`]).
    pub fn wants_frames(&self) -> bool {
        self.switch.as_ref().is_some_and(|s| s.has_clients())
            || self.links.len() > 1
            || !self.pending_accept.is_empty()
            || self.net.awaits_answers()
    }

    /// Tells the RT thread whether NRT wants its frames at once: the engine's own wants
    /// ([`Self::wants_frames`]) or `others` (the front ends and the layer: a subscriber to an event or sensor
    /// topic, a goal under way). When not, frames wait in their ring for the loop's next wake-up (at most
    /// [`IDLE_TICK`] away; the RT thread rings anyway when the ring is half full): an idle driver is not woken by
    /// every burst of a robot's periodic events.
    pub fn want_frames(&mut self, others: bool) {
        let wanted = others || self.wants_frames();
        if wanted != self.ends.nrt_frames_wanted() {
            tracing::trace!("frames wanted at once: {wanted}");
            self.ends.nrt_set_frames_wanted(wanted);
        }
    }

    /// The longest wait for the doorbell before the next [`Engine::poll`]: `poll` while the engine needs polling,
    /// else [`IDLE_TICK`], or [`ACCEPT_TICK`] while a node is being accepted (never shorter than `poll`).
    pub fn longest_wait(&self, poll: Duration) -> Duration {
        if self.needs_polling() {
            poll
        } else if self.pending_accept.is_empty() {
            IDLE_TICK.max(poll)
        } else {
            ACCEPT_TICK.max(poll)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::engine;
    use super::*;
    use std::time::Instant;

    #[test]
    fn an_idle_engine_waits_the_tick_and_a_silent_rt_makes_it_poll() {
        let (mut e, _rt) = engine(0);
        let poll = Duration::from_millis(1);
        assert_eq!(e.longest_wait(poll), IDLE_TICK);
        assert_eq!(
            e.longest_wait(Duration::from_secs(1)),
            Duration::from_secs(1)
        );
        e.set_rt_rings(false);
        assert_eq!(e.longest_wait(poll), poll);
    }

    #[test]
    fn a_switch_client_makes_the_engine_poll_until_it_leaves() {
        let free = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let (mut e, _rt) = engine(free);
        let poll = Duration::from_millis(1);
        assert_eq!(e.longest_wait(poll), IDLE_TICK, "a listening switch alone");
        let client = std::net::TcpStream::connect(("127.0.0.1", free)).unwrap();
        let deadline = Instant::now() + Duration::from_secs(5);
        while e.switch().unwrap().stats().connected == 0 {
            assert!(Instant::now() < deadline, "client not accepted");
            e.poll(Instant::now());
        }
        assert_eq!(e.longest_wait(poll), poll);
        assert!(e.wants_frames(), "a switch client gets the frames at once");
        drop(client);
        while e.switch().unwrap().stats().connected > 0 {
            assert!(Instant::now() < deadline, "client not seen leaving");
            e.poll(Instant::now());
        }
        assert_eq!(e.longest_wait(poll), IDLE_TICK);
        assert!(!e.wants_frames());
    }

    #[test]
    fn frames_nobody_wants_at_once_do_not_ring_until_someone_does() {
        let (mut e, mut rt) = engine(0);
        let bell = e.doorbell();
        let frame = [0u8, 2, 0, 0, 5, 0, 1, 0]; // a user event: length 2, source 0, type 5, one word
        let mut push_and_rang = |e: &mut Engine| {
            assert!(rt.rt_push_frame(handoff::LinkId(0), 1, &frame));
            rt.rt_wake_nrt();
            let rang = bell.wait(Duration::from_millis(20));
            e.poll(Instant::now());
            rang
        };
        assert!(
            push_and_rang(&mut e),
            "wanted until the loop says otherwise"
        );
        e.want_frames(false);
        assert!(!e.wants_frames());
        assert!(!push_and_rang(&mut e), "nobody wants them: no ring");
        e.want_frames(true);
        assert!(push_and_rang(&mut e), "a front end wants them");
    }
}
