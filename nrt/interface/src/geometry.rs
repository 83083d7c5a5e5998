//! The geometry every message of the interface shares, as neutral content: stamps (system time since the epoch),
//! headers, vectors, quaternions and stamped transforms. Each front end maps them to its `std_msgs/Header`,
//! `geometry_msgs/Vector3`, `Quaternion` and `TransformStamped` once.

use handoff::monotonic_ns;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// A stamp: system time since the Unix epoch (ROS time without `use_sim_time`).
pub type Stamp = Duration;

/// The system time now.
pub fn now() -> Stamp {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
}

/// A message's stamp (ROS `time`: seconds and nanoseconds since the epoch) as a [`Stamp`]; `None` before 1970
/// (a negative second); nanoseconds beyond a second are taken as the last nanosecond of that second.
pub fn since_epoch(sec: i64, nanosec: u32) -> Option<Stamp> {
    let sec = u64::try_from(sec).ok()?;
    Some(Duration::new(sec, nanosec.min(999_999_999)))
}

/// The system time at which something happened at steady (CLOCK_MONOTONIC) time `stamp`, given both clocks read
/// now: `system_now − (steady_now − stamp)`. A stamp from the future (clock reading order) counts as now.
pub fn steady_to_system(stamp: Duration, steady_now: Duration, system_now: Duration) -> Duration {
    system_now.saturating_sub(steady_now.saturating_sub(stamp))
}

/// The system time of an RT receive stamp (CLOCK_MONOTONIC ns; 0 = unknown, taken as now).
pub fn stamp(stamp_ns: u64) -> Stamp {
    let system_now = now();
    if stamp_ns == 0 {
        return system_now;
    }
    steady_to_system(
        Duration::from_nanos(stamp_ns),
        Duration::from_nanos(monotonic_ns()),
        system_now,
    )
}

/// A message header (ROS 1's `seq` is the ROS 1 front end's business).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Header {
    /// When.
    pub stamp: Stamp,
    /// In which frame ("" for none).
    pub frame_id: String,
}

impl Header {
    /// A header stamped `stamp` in frame `frame_id`.
    pub fn new(stamp: Stamp, frame_id: impl Into<String>) -> Header {
        Header {
            stamp,
            frame_id: frame_id.into(),
        }
    }
}

/// `x, y, z`.
pub type Vector3 = [f64; 3];
/// `x, y, z, w`.
pub type Quaternion = [f64; 4];

/// The rotation by `theta` about z.
pub fn yaw(theta: f64) -> Quaternion {
    let (s, c) = (theta / 2.0).sin_cos();
    [0.0, 0.0, s, c]
}

/// `geometry_msgs/TransformStamped`: `child_frame_id` in `header.frame_id`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Transform {
    /// Parent frame and stamp.
    pub header: Header,
    /// Child frame.
    pub child_frame_id: String,
    /// Translation \[m\].
    pub translation: Vector3,
    /// Rotation.
    pub rotation: Quaternion,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_stamps_since_the_epoch() {
        assert_eq!(since_epoch(7, 8), Some(Duration::new(7, 8)));
        assert_eq!(since_epoch(0, 0), Some(Duration::ZERO));
        // before 1970: none (as old as can be for the cmd_vel gate)
        assert_eq!(since_epoch(-1, 0), None);
        assert_eq!(
            since_epoch(1, 2_000_000_000),
            Some(Duration::new(1, 999_999_999))
        );
    }

    #[test]
    fn steady_stamps_map_to_system_time() {
        let s = Duration::from_secs;
        assert_eq!(steady_to_system(s(90), s(100), s(1_000)), s(990));
        assert_eq!(steady_to_system(s(100), s(100), s(1_000)), s(1_000));
        // stamp read after the steady clock: not in the future
        assert_eq!(steady_to_system(s(101), s(100), s(1_000)), s(1_000));
    }

    #[test]
    fn stamps_of_the_rt_clock_are_in_the_past_of_the_system_clock() {
        let t = stamp(monotonic_ns().saturating_sub(1_000_000_000));
        let d = now().saturating_sub(t);
        assert!(
            (Duration::from_millis(900)..Duration::from_millis(1200)).contains(&d),
            "{d:?}"
        );
        // unknown: now
        assert!(now().saturating_sub(stamp(0)) < Duration::from_millis(100));
    }

    #[test]
    fn yaw_is_a_rotation_about_z() {
        let q = yaw(std::f64::consts::FRAC_PI_2);
        assert_eq!((q[0], q[1]), (0.0, 0.0));
        assert!((q[2] - 0.5f64.sqrt()).abs() < 1e-12 && (q[3] - 0.5f64.sqrt()).abs() < 1e-12);
    }
}
