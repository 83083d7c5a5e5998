//! The joint-space interface of each robot, on its driver node's names (XBotCore's joint
//! state and joint command):
//! - `/<ns>/thymio_driver/joint_states` (`thymio_rt_msgs/JointState`, the extended state:
//!   position, velocity, velocity reference, target, PWM where reported, fault flags, owner),
//!   built by the RT thread at the driver parameter `joint_state_rate` (Hz) and published by the
//!   odometry publisher thread ([`super::odom_pub`]) as it pops them. The NRT loop asks the RT
//!   thread for that rate only while the topic has subscribers (0 otherwise: an idle driver
//!   builds none). The RT thread builds at most one sample per RT period: the rate is bounded
//!   by `1 / rt.period_us` (100 Hz at the default 10 ms period).
//! - `/<ns>/thymio_driver/joint_command` (`sensor_msgs/JointState`, wheel velocities in rad/s)
//!   on the hidden hot node ([`super::hot`]): each message goes from the receiving thread to the
//!   RT set-point (`nrt_set_joint_command_at`), as `cmd_vel` does. Its `name`s select the wheels
//!   (the driver's `left_wheel_joint` / `right_wheel_joint`, bare or with the robot's frame
//!   prefix; a wheel not named keeps its command); without names, `velocity` is `[left, right]`.
//!   Bad input (unknown names, lengths that differ, a non-finite velocity) is dropped, counted
//!   (`/diagnostics`) and logged once per run of bad messages. It drives the wheels only while
//!   `joint` owns them ([`super::switch`]).

use super::drain;
use super::report::Reporter;
use super::spinner::SpinTask;
use super::thymio_endpoints::{reliable, DEPTH};
use msgs::handoff::{
    monotonic_ns, JointCommand, JointStateSample, NodeId, NrtLiveParams, OwnerNames, RobotId,
};
use r2r::sensor_msgs::msg::JointState as Command;
use r2r::thymio_rt_msgs::msg::JointState;
use r2r::Publisher;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Default of `joint_state_rate` (Hz): the default RT period's rate.
pub const DEFAULT_RATE: f64 = 100.0;

/// What the odometry publisher thread needs to publish one robot's joint states.
pub struct JointTarget {
    /// Its Aseba node (a sample of another node in the same RT slot is not published).
    pub node: NodeId,
    /// `~/joint_states`.
    pub publisher: Publisher<JointState>,
    /// The wheel joints' names (prefixed), left then right.
    pub names: [String; 2],
    /// The owner names (for `owner`).
    pub owners: OwnerNames,
}

/// The extended joint state message of `s`, stamped `stamp`, for wheel joints `names`.
pub fn message(
    s: &JointStateSample,
    stamp: r2r::builtin_interfaces::msg::Time,
    names: &[String; 2],
    owners: &OwnerNames,
) -> JointState {
    let mut m = JointState::default();
    m.header.stamp = stamp;
    m.name = names.to_vec();
    m.position = s.position.to_vec();
    m.velocity = s.velocity.to_vec();
    m.velocity_reference = s.velocity_reference.to_vec();
    m.target = s.target.to_vec();
    m.pwm = s.pwm.map(|p| p.to_vec()).unwrap_or_default();
    m.fault = vec![s.fault; 2];
    m.owner = owners
        .name(s.owner)
        .map_or_else(|| format!("owner {}", s.owner.0), str::to_owned);
    m
}

/// Why a joint command was dropped.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum JointCommandError {
    /// A name that is neither wheel joint.
    #[error("unknown joint {0:?} (the wheels are {1:?} and {2:?})")]
    UnknownJoint(String, String, String),
    /// `velocity` does not match `name` (or is not `[left, right]` without names).
    #[error(
        "{velocities} velocities for {names} names (without names: exactly 2, left and right)"
    )]
    Length {
        /// Velocities given.
        velocities: usize,
        /// Names given.
        names: usize,
    },
    /// NaN or infinite.
    #[error("velocity {0} is not finite")]
    NotFinite(f64),
}

/// The wheel velocities (rad/s, NaN: keep) a joint command gives; `joints` are the wheel
/// joints' names (bare, prefixed) left then right.
pub fn command(m: &Command, joints: &[[String; 2]; 2]) -> Result<JointCommand, JointCommandError> {
    if let Some(v) = m.velocity.iter().find(|v| !v.is_finite()) {
        return Err(JointCommandError::NotFinite(*v));
    }
    if m.name.is_empty() {
        return match m.velocity[..] {
            [l, r] => Ok(JointCommand { velocity: [l, r] }),
            _ => Err(JointCommandError::Length {
                velocities: m.velocity.len(),
                names: 0,
            }),
        };
    }
    if m.name.len() != m.velocity.len() {
        return Err(JointCommandError::Length {
            velocities: m.velocity.len(),
            names: m.name.len(),
        });
    }
    let mut velocity = [f64::NAN; 2];
    for (name, v) in m.name.iter().zip(&m.velocity) {
        let wheel = (0..2)
            .find(|w| joints[*w].iter().any(|j| j == name))
            .ok_or_else(|| {
                JointCommandError::UnknownJoint(
                    name.clone(),
                    joints[0][0].clone(),
                    joints[1][0].clone(),
                )
            })?;
        velocity[wheel] = *v;
    }
    Ok(JointCommand { velocity })
}

/// The `joint_command` task of one robot, run on the hot node's thread after each wait.
pub struct JointCommandTarget {
    /// The RT thread's set-points.
    pub params: NrtLiveParams,
    /// Its RT slot.
    pub robot: RobotId,
    /// Its node (for messages).
    pub id: NodeId,
    /// The wheel joints' names: `[[left bare, left prefixed], [right bare, right prefixed]]`.
    pub joints: [[String; 2]; 2],
    /// `/rosout`.
    pub reporter: Reporter,
    /// Commands dropped as bad input (shown in `/diagnostics`).
    pub dropped: Arc<AtomicU64>,
}

/// The task handing each joint command of `sub` to the RT set-point (see the module doc).
pub fn joint_command_task(mut sub: CommandSub, target: JointCommandTarget) -> SpinTask {
    let mut warned = false;
    Box::new(move || {
        let taken = monotonic_ns();
        for m in drain(&mut sub) {
            let t = &target;
            let r = command(&m, &t.joints)
                .map_err(|e| e.to_string())
                .and_then(|c| {
                    t.params
                        .nrt_set_joint_command_at(t.robot, c, taken)
                        .map_err(|e| e.to_string())
                });
            match r {
                Ok(()) => warned = false,
                Err(e) => {
                    t.dropped.fetch_add(1, Ordering::Relaxed);
                    if !warned {
                        warned = true;
                        t.reporter.warn(&format!(
                            "node {}: joint_command dropped: {e} (further bad ones counted in \
                             /diagnostics, not logged until a good one)",
                            t.id
                        ));
                    }
                }
            }
        }
    })
}

/// A robot's `joint_command` subscription (named `name`) on the hot node.
pub type CommandSub = Box<dyn futures::Stream<Item = Command> + Unpin + Send>;

/// Subscribes a robot's `joint_command` (named `name`) on the hot node.
pub fn subscribe(hot: &mut r2r::Node, name: &str) -> Result<CommandSub, r2r::Error> {
    Ok(Box::new(hot.subscribe::<Command>(name, reliable(DEPTH))?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn joints() -> [[String; 2]; 2] {
        [
            ["left_wheel_joint".into(), "t1/left_wheel_joint".into()],
            ["right_wheel_joint".into(), "t1/right_wheel_joint".into()],
        ]
    }

    fn cmd(names: &[&str], v: &[f64]) -> Command {
        Command {
            name: names.iter().map(|s| s.to_string()).collect(),
            velocity: v.to_vec(),
            ..Default::default()
        }
    }

    #[test]
    fn names_select_the_wheels_and_bad_input_is_refused() {
        let j = joints();
        let c = command(
            &cmd(&["right_wheel_joint", "t1/left_wheel_joint"], &[2.0, 1.0]),
            &j,
        );
        assert_eq!(c.unwrap().velocity, [1.0, 2.0]);
        let one = command(&cmd(&["right_wheel_joint"], &[3.0]), &j).unwrap();
        assert!(
            one.velocity[0].is_nan() && one.velocity[1] == 3.0,
            "left kept"
        );
        assert_eq!(
            command(&cmd(&[], &[1.0, -1.0]), &j).unwrap().velocity,
            [1.0, -1.0]
        );
        assert!(matches!(
            command(&cmd(&[], &[1.0]), &j),
            Err(JointCommandError::Length { .. })
        ));
        assert!(matches!(
            command(&cmd(&["left_wheel_joint"], &[1.0, 2.0]), &j),
            Err(JointCommandError::Length { .. })
        ));
        assert!(matches!(
            command(&cmd(&["caster"], &[1.0]), &j),
            Err(JointCommandError::UnknownJoint(..))
        ));
        assert!(matches!(
            command(&cmd(&[], &[f64::NAN, 1.0]), &j),
            Err(JointCommandError::NotFinite(_))
        ));
    }

    #[test]
    fn the_extended_state_names_its_owner_and_wheels() {
        let s = JointStateSample {
            position: [1.0, 2.0],
            velocity: [0.5, 0.25],
            velocity_reference: [0.5, 0.3],
            target: [100, 120],
            owner: msgs::handoff::OwnerId::controller(1),
            fault: JointStateSample::FAULT_WATCHDOG,
            ..Default::default()
        };
        let owners = OwnerNames::new(vec!["line_follower", "go_to_pose"]);
        let names = ["t1/l".to_owned(), "t1/r".to_owned()];
        let m = message(&s, Default::default(), &names, &owners);
        assert_eq!(m.name, names);
        assert_eq!((m.position, m.velocity), (vec![1.0, 2.0], vec![0.5, 0.25]));
        assert_eq!(m.velocity_reference, vec![0.5, 0.3]);
        assert_eq!(m.target, vec![100, 120]);
        assert!(m.pwm.is_empty(), "not reported: empty");
        assert_eq!(m.fault, vec![4, 4]);
        assert_eq!(m.owner, "go_to_pose");
    }
}
