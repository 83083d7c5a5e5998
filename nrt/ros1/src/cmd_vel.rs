//! A robot's `cmd_vel` on ROS 1: `geometry_msgs/Twist`, or `geometry_msgs/TwistStamped` with the driver parameter
//! `cmd_vel_stamped` (a stamp older than `cmd_vel_timeout` is ignored and counted: the layer's
//! [`StaleFilter`]). Each message goes from the socket task that received it straight to the RT set-point (a
//! latest-value cell that rings the RT thread), stamped with the time it was taken; the hop taken → set-point stored
//! is timed ([`HopHistogram`]). A refused message (NaN, infinite) leaves the last good set-point in force; a run of
//! refusals is logged once.

use super::graph::{Graph, Task};
use super::net::Subscriber;
use super::ros1_msgs::geometry_msgs::{Twist, TwistStamped};
use super::Ros1Error;
use msgs::handoff::{monotonic_ns, NodeId, NrtLiveParams, RobotId, Twist2};
use nrt_interface::cmd_vel::{StaleFilter, Stamp};
use nrt_interface::hop_times::HopHistogram;
use roslibrust::RosMessageType;
use std::time::SystemTime;

/// Where one robot's `cmd_vel` goes.
pub struct CmdVelTarget {
    /// The RT thread's set-points.
    pub live: NrtLiveParams,
    /// The RT robot.
    pub robot: RobotId,
    /// Its Aseba node (for messages).
    pub id: NodeId,
    /// The stale-stamp rule (stamped commands only).
    pub filter: StaleFilter,
    /// Times the hop taken → set-point stored.
    pub timer: HopHistogram,
}

/// One command as received: the twist, and the stamp of a `TwistStamped`.
type Command = (Twist2, Option<Stamp>);

/// A `Twist` command.
pub fn plain(t: &Twist) -> (Twist2, Option<Stamp>) {
    (
        Twist2 {
            linear: t.linear.x,
            angular: t.angular.z,
        },
        None,
    )
}

/// A `TwistStamped` command.
pub fn stamped(t: &TwistStamped) -> (Twist2, Option<Stamp>) {
    let s = &t.header.stamp;
    (
        plain(&t.twist).0,
        Some(Stamp {
            sec: i64::from(s.secs),
            nanosec: u32::try_from(s.nsecs).unwrap_or(0),
        }),
    )
}

/// Subscribes `topic` (global; a `TwistStamped` one when `is_stamped`) with `queue` and hands each command to
/// `target` from the socket task.
pub fn subscribe(
    g: &Graph,
    topic: &str,
    queue: usize,
    is_stamped: bool,
    target: CmdVelTarget,
) -> Result<Task, Ros1Error> {
    if is_stamped {
        let sub = g.subscribe::<TwistStamped>(topic, queue)?;
        Ok(g.spawn(run(sub, stamped, target)))
    } else {
        let sub = g.subscribe::<Twist>(topic, queue)?;
        Ok(g.spawn(run(sub, plain, target)))
    }
}

async fn run<T: RosMessageType>(
    mut sub: Subscriber<T>,
    read: fn(&T) -> Command,
    mut target: CmdVelTarget,
) {
    let id = target.id;
    let mut refusing = false;
    while let Some(m) = sub.next().await {
        let taken = monotonic_ns();
        let (twist, stamp) = match m {
            Ok(m) => read(&m),
            Err(e) => {
                tracing::warn!("ROS 1: node {id}: cmd_vel: {e}");
                continue;
            }
        };
        if let Err(line) = target.filter.check(stamp, SystemTime::now()) {
            if let Some(line) = line {
                tracing::warn!("ROS 1: {line}");
            }
            continue;
        }
        match target.live.nrt_set_cmd_vel_at(target.robot, twist, taken) {
            Ok(()) => {
                target.timer.record(monotonic_ns().saturating_sub(taken));
                refusing = false;
            }
            Err(e) if !refusing => {
                refusing = true;
                tracing::error!(
                    "ROS 1: node {id}: cmd_vel refused: {e} (further refusals not logged until a valid one)"
                );
            }
            Err(_) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// geometry_msgs/TwistStamped as Debian's ROS 1 package has it
    /// (/usr/lib/python3/dist-packages/geometry_msgs/msg/_TwistStamped.py `_md5sum`).
    #[test]
    fn twist_stamped_is_ros1s() {
        assert_eq!(
            TwistStamped::DESCRIPTION.md5sum,
            "98d34b0043a2093cf9d9345ab6eef12e"
        );
    }

    #[test]
    fn stamped_and_plain_commands_read_the_same_twist() {
        let mut t = Twist::default();
        t.linear.x = 0.1;
        t.angular.z = -0.5;
        let (twist, none) = plain(&t);
        assert_eq!((twist.linear, twist.angular, none), (0.1, -0.5, None));
        let mut s = TwistStamped {
            twist: t,
            ..Default::default()
        };
        s.header.stamp.secs = 7;
        s.header.stamp.nsecs = 8;
        let (twist, stamp) = stamped(&s);
        assert_eq!((twist.linear, twist.angular), (0.1, -0.5));
        assert_eq!(stamp, Some(Stamp { sec: 7, nanosec: 8 }));
    }
}
