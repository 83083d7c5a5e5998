//! A robot's `cmd_vel` on ROS 1: `geometry_msgs/Twist`, or `geometry_msgs/TwistStamped` with the driver parameter
//! `cmd_vel_stamped`. Each message goes from the socket task that received it straight to the RT set-point through
//! the layer's [`CmdVelGate`] (a stamp older than `cmd_vel_timeout` is ignored and counted; a refused message —
//! NaN, infinite — leaves the last good set-point in force; a run of either is reported once), stamped with the
//! time it was taken; the hop taken → set-point stored is timed ([`HopHistogram`]).
//!
//! Commands delayed by an outage are not obeyed: with a watchdog (`cmd_vel_timeout` > 0), a publisher's connection
//! silent for longer than `cmd_vel_timeout` has its backlog — the messages TCP delivers in a burst when the link
//! comes back — dropped, and the robot (stopped by the watchdog meanwhile) stays stopped until a message arrives
//! that was sent after the link came back (the rule, to the millisecond, is in [`nrt_ros1_client::net`]'s subscriber).

use super::conv;
use super::Ros1Error;
use handoff::{monotonic_ns, NodeId, Twist2};
use nrt_interface::cmd_vel::{CmdVelGate, Verdict};
use nrt_interface::geometry::{self, Stamp};
use nrt_interface::hop_times::HopHistogram;
use nrt_interface::report::Reporter;
use nrt_ros1_client::graph::{Graph, Task};
use nrt_ros1_client::net::Subscriber;
use nrt_ros1_client::ros1_msgs::geometry_msgs::{Twist, TwistStamped};
use roslibrust::RosMessageType;

/// Where one robot's `cmd_vel` goes.
pub struct CmdVelTarget {
    /// Its Aseba node (for messages).
    pub id: NodeId,
    /// The set-point, its stale-stamp rule and its report latches.
    pub gate: CmdVelGate,
    /// Where the gate's reports go.
    pub reporter: Reporter,
    /// Times the hop taken → set-point stored.
    pub timer: HopHistogram,
}

/// One command as received: the twist, and the stamp of a `TwistStamped` (`Some(None)`: before 1970).
type Command = (Twist2, Option<Option<Stamp>>);

/// A `Twist` command.
pub fn plain(t: &Twist) -> Command {
    (
        Twist2 {
            linear: t.linear.x,
            angular: t.angular.z,
        },
        None,
    )
}

/// A `TwistStamped` command.
pub fn stamped(t: &TwistStamped) -> Command {
    (plain(&t.twist).0, Some(conv::since_epoch(&t.header.stamp)))
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
    let stall = target.gate.max_age();
    if is_stamped {
        let sub = g.subscribe_commands::<TwistStamped>(topic, queue, stall)?;
        Ok(g.spawn(run(sub, stamped, target)))
    } else {
        let sub = g.subscribe_commands::<Twist>(topic, queue, stall)?;
        Ok(g.spawn(run(sub, plain, target)))
    }
}

async fn run<T: RosMessageType>(
    mut sub: Subscriber<T>,
    read: fn(&T) -> Command,
    mut target: CmdVelTarget,
) {
    let id = target.id;
    while let Some(m) = sub.next().await {
        let taken = monotonic_ns();
        let (twist, stamp) = match m {
            Ok(m) => read(&m),
            Err(e) => {
                tracing::warn!(
                    "ROS 1: node {id}: cmd_vel: {}",
                    nrt_ros1_client::net::clip(&e.to_string())
                );
                continue;
            }
        };
        match target.gate.nrt_take(twist, stamp, taken, geometry::now()) {
            Verdict::Stored => target.timer.record(monotonic_ns().saturating_sub(taken)),
            Verdict::Dropped(Some((severity, text))) => target.reporter.report(severity, &text),
            Verdict::Dropped(None) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

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
        assert_eq!(stamp, Some(Some(Duration::new(7, 8))));
        s.header.stamp.secs = -1;
        assert_eq!(stamped(&s).1, Some(None), "before 1970");
    }
}
