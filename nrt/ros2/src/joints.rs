//! The joint-space interface of each robot on ROS 2 ([`nrt_interface::joints`] describes it: names, validation,
//! refusal texts, the rate rule): the extended joint states' message (published by the odometry publisher thread,
//! [`super::odom_pub`]) and the `joint_command` subscription on the hidden hot node ([`super::hot`]), whose task
//! hands each message to the layer's [`JointCommandInput`] on the hot node's thread.

use super::drain;
use super::report::Reporter;
use super::spinner::SpinTask;
use super::thymio_endpoints::{reliable, DEPTH};
use handoff::{monotonic_ns, NodeId, OwnerNames};
use nrt_interface::joints::{JointCommandInput, JointStateOut};
use r2r::sensor_msgs::msg::JointState as Command;
use r2r::thymio_rt_msgs::msg::JointState;
use r2r::Publisher;

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

/// The extended joint state message of `m`, stamped `stamp`.
pub fn message(m: JointStateOut, stamp: r2r::builtin_interfaces::msg::Time) -> JointState {
    let mut out = JointState::default();
    out.header.stamp = stamp;
    out.name = m.name;
    out.position = m.position;
    out.velocity = m.velocity;
    out.velocity_reference = m.velocity_reference;
    out.target = m.target;
    out.pwm = m.pwm;
    out.fault = m.fault;
    out.owner = m.owner;
    out
}

/// The task handing each joint command of `sub` to `input` (run on the hot node's thread after each wait); what
/// it refuses is reported with `reporter`.
pub fn joint_command_task(
    mut sub: CommandSub,
    mut input: JointCommandInput,
    reporter: Reporter,
) -> SpinTask {
    Box::new(move || {
        let taken = monotonic_ns();
        for m in drain(&mut sub) {
            if let Some(line) = input.take(&m.name, &m.velocity, taken) {
                reporter.warn(&line);
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
    use handoff::JointStateSample;

    #[test]
    fn the_message_carries_the_layers_content() {
        let s = JointStateSample {
            position: [1.0, 2.0],
            velocity: [0.5, 0.25],
            velocity_reference: [0.5, 0.3],
            target: [100, 120],
            pwm: Some([7, -7]),
            owner: handoff::OwnerId::JOINT,
            fault: JointStateSample::FAULT_WATCHDOG,
            ..Default::default()
        };
        let names = ["t1/l".to_owned(), "t1/r".to_owned()];
        let out = nrt_interface::joints::joint_state(&s, &names, &OwnerNames::default());
        let m = message(out, Default::default());
        assert_eq!(m.name, names);
        assert_eq!((m.position, m.velocity), (vec![1.0, 2.0], vec![0.5, 0.25]));
        assert_eq!(m.velocity_reference, vec![0.5, 0.3]);
        assert_eq!((m.target, m.pwm), (vec![100, 120], vec![7, -7]));
        assert_eq!(m.fault, vec![4, 4]);
        assert_eq!(m.owner, "joint");
    }
}
