//! A ROS 1 client library (no ROS install needed): the node transport ([`net`]: the XML-RPC slave API, TCPROS
//! publishers, subscribers and service servers), the master client ([`master`]), the node on the graph
//! ([`graph`]: advertise, subscribe, serve, with remapping by [`remap`] and re-registration with a restarted
//! master by [`watch`]), messages of types known only at run time ([`dynamic`]), actionlib's server protocol
//! ([`actionlib`], [`actionlib_state`]), `/rosout` ([`rosout`]), dynamic_reconfigure's messages
//! ([`reconfigure`]), and the message types roslibrust generates at build time from the definitions vendored in
//! `msg/` ([`ros1_msgs`], with their ROS 1 MD5 sums).
//!
//! It knows nothing of thymio-rt's layer: the ROS 1 front end (`nrt-ros1`) maps the driver's interface onto it.
//! What it hands to an event loop goes through channels, announced by a [`Bell`].
#![warn(missing_docs)]

pub mod actionlib;
pub mod actionlib_state;
pub mod dynamic;
pub mod graph;
pub mod master;
pub mod net;
pub mod reconfigure;
pub mod remap;
pub mod rosout;
pub mod watch;

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

/// The ROS 1 message and service types (generated from `msg/` at build time).
#[allow(
    missing_docs,
    clippy::all,
    non_snake_case,
    non_camel_case_types,
    unused
)]
pub mod ros1_msgs {
    include!(concat!(env!("OUT_DIR"), "/ros1_msgs.rs"));
}

/// Rung when a request (a service call, a goal, a message forwarded to a loop) waits for the user's event loop:
/// the user's wake-up, e.g. a write to its eventfd. Cloned freely; [`Bell::silent`] rings nothing.
#[derive(Clone, Default)]
pub struct Bell(Option<Arc<dyn Fn() + Send + Sync>>);

impl Bell {
    /// A bell that calls `ring` (from any thread; it must not block).
    pub fn new(ring: impl Fn() + Send + Sync + 'static) -> Bell {
        Bell(Some(Arc::new(ring)))
    }

    /// A bell that rings nothing (the loop polls).
    pub fn silent() -> Bell {
        Bell(None)
    }

    /// Rings.
    pub fn ring(&self) {
        if let Some(ring) = &self.0 {
            ring();
        }
    }
}

impl std::fmt::Debug for Bell {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "Bell"
        } else {
            "Bell(silent)"
        })
    }
}

/// The ROS 1 `time` of a system time (0 before 1970; seconds saturate at `i32::MAX`).
pub fn time(at: SystemTime) -> roslibrust::codegen::integral_types::Time {
    let since_epoch = at.duration_since(UNIX_EPOCH).unwrap_or_default();
    roslibrust::codegen::integral_types::Time {
        secs: i32::try_from(since_epoch.as_secs()).unwrap_or(i32::MAX),
        nsecs: since_epoch.subsec_nanos() as i32,
    }
}

/// The ROS 1 `time` of the system clock now.
pub fn now() -> roslibrust::codegen::integral_types::Time {
    time(SystemTime::now())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};

    #[test]
    fn a_bell_calls_its_ring_and_a_silent_one_nothing() {
        let rung = Arc::new(AtomicU32::new(0));
        let r = rung.clone();
        let bell = Bell::new(move || {
            r.fetch_add(1, Ordering::Relaxed);
        });
        bell.clone().ring();
        bell.ring();
        Bell::silent().ring();
        assert_eq!(rung.load(Ordering::Relaxed), 2);
    }

    #[test]
    fn now_is_after_2020() {
        assert!(now().secs > 1_577_836_800);
    }

    #[test]
    fn times_before_1970_are_0_and_late_ones_saturate() {
        use std::time::Duration;
        let t = time(UNIX_EPOCH + Duration::new(12, 345));
        assert_eq!((t.secs, t.nsecs), (12, 345));
        assert_eq!(time(UNIX_EPOCH - Duration::from_secs(1)).secs, 0);
        assert_eq!(
            time(UNIX_EPOCH + Duration::from_secs(1 << 40)).secs,
            i32::MAX
        );
    }
}
