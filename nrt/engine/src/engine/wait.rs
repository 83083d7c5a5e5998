//! How long the NRT loop may wait for its doorbell before the engine must be polled again.
//!
//! What wakes the loop at once needs no polling: the RT thread rings the doorbell for every frame and event it
//! hands over, the ROS spinner and the script reader ring it when they have work. What does need polling: the
//! engine's own timers (the shortest is the 200 ms settle after a node is accepted; pings, description retries,
//! request timeouts and liveness checks run at 1 s), sockets of the Aseba switch's clients and frames waiting for
//! room in the RT ring. While nothing but the timers needs it, the loop waits up to [`IDLE_TICK`]; otherwise (a
//! switch client is connected, frames are held back, or the RT thread does not ring) it waits the short poll
//! period it is given.

use super::Engine;
use std::time::Duration;

/// Longest wait of the NRT loop while only the engine's timers need polling: their resolution (a quarter of the
/// shortest, the 200 ms accept settle); also how long a new Aseba switch client may wait to be accepted.
pub const IDLE_TICK: Duration = Duration::from_millis(50);

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

    /// The longest wait for the doorbell before the next [`Engine::poll`]: `poll` while the engine needs polling,
    /// else [`IDLE_TICK`] (never shorter than `poll`).
    pub fn longest_wait(&self, poll: Duration) -> Duration {
        if self.needs_polling() {
            poll
        } else {
            IDLE_TICK.max(poll)
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
        drop(client);
        while e.switch().unwrap().stats().connected > 0 {
            assert!(Instant::now() < deadline, "client not seen leaving");
            e.poll(Instant::now());
        }
        assert_eq!(e.longest_wait(poll), IDLE_TICK);
    }
}
