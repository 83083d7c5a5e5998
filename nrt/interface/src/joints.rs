//! The joint space of each driven robot (XBotCore's joint state and joint command), on its driver node's names:
//! - `/<ns>/thymio_driver/joint_states` (`thymio_rt_msgs/JointState`, the extended state: position, velocity,
//!   velocity reference, target, PWM where reported, fault flags, owner), built by the RT thread at the driver
//!   parameter `joint_state_rate` (Hz) and published by each front end's odometry publisher thread as it pops
//!   them ([`JointStateOut`]). The RT thread is asked for that rate only while the topic has subscribers on some
//!   front end (0 otherwise: an idle driver builds none): [`JointRates`]. The RT thread builds at most one sample
//!   per RT period: the rate is bounded by `1 / rt.period_us` (100 Hz at the default 10 ms period).
//! - `/<ns>/thymio_driver/joint_command` (`sensor_msgs/JointState`, wheel velocities in rad/s): each message goes
//!   from the thread that received it to the RT set-point ([`JointCommandInput::take`]), as `cmd_vel` does. Its
//!   `name`s select the wheels (the driver's `left_wheel_joint` / `right_wheel_joint`, bare or with the robot's
//!   frame prefix; a wheel not named keeps its command); without names, `velocity` is `[left, right]`. Bad input
//!   (unknown names, lengths that differ, a non-finite velocity) is dropped, counted ([`BAD_JOINT`] in
//!   `/diagnostics`) and logged once per run of bad messages. It drives the wheels only while `joint` owns them.

use handoff::{JointCommand, JointStateSample, NodeId, NrtLiveParams, OwnerNames, RobotId};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Default of `joint_state_rate` (Hz): the default RT period's rate.
pub const DEFAULT_RATE: f64 = 100.0;

/// How often the joint states' subscribers are counted (the rate asked of the RT thread follows within this).
pub const RATE_CHECK: Duration = Duration::from_millis(100);

/// `/diagnostics` key: bad joint commands dropped.
pub const BAD_JOINT: &str = "Bad joint commands dropped";

/// The leaf of the joint states under the robot's namespace.
pub const JOINT_STATES: &str = "thymio_driver/joint_states";
/// The leaf of the joint commands under the robot's namespace.
pub const JOINT_COMMAND: &str = "thymio_driver/joint_command";

/// The content of one extended joint state message (`thymio_rt_msgs/JointState` without its header).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct JointStateOut {
    /// CLOCK_MONOTONIC ns of the RT cycle that built it (each front end stamps it with its clock).
    pub t_ns: u64,
    /// The wheel joints' names (prefixed), left then right.
    pub name: Vec<String>,
    /// Wheel angles (rad).
    pub position: Vec<f64>,
    /// Measured wheel velocities (rad/s).
    pub velocity: Vec<f64>,
    /// Velocity references (rad/s).
    pub velocity_reference: Vec<f64>,
    /// The last targets written (motor units).
    pub target: Vec<i16>,
    /// Motor PWM; empty where the robot does not report it.
    pub pwm: Vec<i16>,
    /// Fault flags, per wheel.
    pub fault: Vec<u16>,
    /// The owner of the wheels (`ros`, `joint`, a controller's name).
    pub owner: String,
}

/// The extended joint state of `s` for wheel joints `names`.
pub fn joint_state(
    s: &JointStateSample,
    names: &[String; 2],
    owners: &OwnerNames,
) -> JointStateOut {
    JointStateOut {
        t_ns: s.t_ns,
        name: names.to_vec(),
        position: s.position.to_vec(),
        velocity: s.velocity.to_vec(),
        velocity_reference: s.velocity_reference.to_vec(),
        target: s.target.to_vec(),
        pwm: s.pwm.map(|p| p.to_vec()).unwrap_or_default(),
        fault: vec![s.fault; 2],
        owner: owners
            .name(s.owner)
            .map_or_else(|| format!("owner {}", s.owner.0), str::to_owned),
    }
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

/// The wheel velocities (rad/s, NaN: keep) a joint command of `name`s and `velocity` gives; `joints` are the wheel
/// joints' names (bare, prefixed) left then right.
pub fn command(
    name: &[String],
    velocity: &[f64],
    joints: &[[String; 2]; 2],
) -> Result<JointCommand, JointCommandError> {
    if let Some(v) = velocity.iter().find(|v| !v.is_finite()) {
        return Err(JointCommandError::NotFinite(*v));
    }
    if name.is_empty() {
        return match velocity {
            [l, r] => Ok(JointCommand { velocity: [*l, *r] }),
            _ => Err(JointCommandError::Length {
                velocities: velocity.len(),
                names: 0,
            }),
        };
    }
    if name.len() != velocity.len() {
        return Err(JointCommandError::Length {
            velocities: velocity.len(),
            names: name.len(),
        });
    }
    let mut out = [f64::NAN; 2];
    for (n, v) in name.iter().zip(velocity) {
        let wheel = (0..2)
            .find(|w| joints[*w].iter().any(|j| j == n))
            .ok_or_else(|| {
                JointCommandError::UnknownJoint(
                    n.clone(),
                    joints[0][0].clone(),
                    joints[1][0].clone(),
                )
            })?;
        out[wheel] = *v;
    }
    Ok(JointCommand { velocity: out })
}

/// Where one robot's joint commands go, whatever front end received them (one per robot and front end, moved to
/// the thread or task that receives them).
pub struct JointCommandInput {
    /// The RT thread's set-points.
    pub params: NrtLiveParams,
    /// Its RT slot.
    pub robot: RobotId,
    /// Its node (for messages).
    pub id: NodeId,
    /// The wheel joints' names: `[[left bare, left prefixed], [right bare, right prefixed]]`.
    pub joints: [[String; 2]; 2],
    /// Commands dropped as bad input (shown in `/diagnostics`, [`BAD_JOINT`]).
    pub dropped: Arc<AtomicU64>,
    /// Whether the current run of bad commands was reported.
    warned: bool,
}

impl JointCommandInput {
    /// The input of robot `robot` (node `id`) with wheel joints `joints`, counting its bad commands in `dropped`.
    pub fn new(
        params: NrtLiveParams,
        robot: RobotId,
        id: NodeId,
        joints: [[String; 2]; 2],
        dropped: Arc<AtomicU64>,
    ) -> JointCommandInput {
        JointCommandInput {
            params,
            robot,
            id,
            joints,
            dropped,
            warned: false,
        }
    }

    /// Hands the command of `name`s and `velocity`, taken at `taken_ns` (CLOCK_MONOTONIC), to the RT set-point; a
    /// bad one is dropped and counted; returns the line to report for the first of a run (the front end reports it).
    pub fn take(&mut self, name: &[String], velocity: &[f64], taken_ns: u64) -> Option<String> {
        let r = command(name, velocity, &self.joints)
            .map_err(|e| e.to_string())
            .and_then(|c| {
                self.params
                    .nrt_set_joint_command_at(self.robot, c, taken_ns)
                    .map_err(|e| e.to_string())
            });
        match r {
            Ok(()) => {
                self.warned = false;
                None
            }
            Err(e) => {
                self.dropped.fetch_add(1, Ordering::Relaxed);
                (!std::mem::replace(&mut self.warned, true)).then(|| dropped_line(self.id, &e))
            }
        }
    }
}

/// The line reporting a dropped joint command of node `id`.
pub fn dropped_line(id: NodeId, reason: &str) -> String {
    format!(
        "node {id}: joint_command dropped: {reason} (further bad ones counted in /diagnostics, not logged until \
         a good one)"
    )
}

struct RateRobot {
    robot: RobotId,
    /// Subscribers of its joint states, per front end.
    subscribers: BTreeMap<&'static str, usize>,
    /// The rate asked of the RT thread now.
    rate: f64,
}

/// The rule "ask the RT thread for joint states at `joint_state_rate` only while someone subscribes": each front
/// end reports its subscriber count of each robot's joint states when [`JointRates::due`]; the layer sums them
/// over front ends and sets the RT rate ([`JointRates::apply`]).
#[derive(Default)]
pub struct JointRates {
    robots: BTreeMap<NodeId, RateRobot>,
    last_check: Option<Instant>,
}

impl JointRates {
    /// Robot `robot` (node `id`) is driven: nobody subscribes yet.
    pub fn add(&mut self, id: NodeId, robot: RobotId) {
        self.robots.insert(
            id,
            RateRobot {
                robot,
                subscribers: BTreeMap::new(),
                rate: 0.0,
            },
        );
    }

    /// Robot `id` is gone: the RT thread builds no more of its joint states.
    pub fn remove(&mut self, id: NodeId, params: &NrtLiveParams) {
        if let Some(r) = self.robots.remove(&id) {
            let _ = params.nrt_set_joint_state_hz(r.robot, 0.0);
        }
    }

    /// Whether the front ends count their subscribers at `now` (every [`RATE_CHECK`]).
    pub fn due(&self, now: Instant) -> bool {
        self.last_check
            .is_none_or(|t| now.duration_since(t) >= RATE_CHECK)
    }

    /// Front end `front_end` has `subscribers` to robot `id`'s joint states.
    pub fn report(&mut self, front_end: &'static str, id: NodeId, subscribers: usize) {
        if let Some(r) = self.robots.get_mut(&id) {
            r.subscribers.insert(front_end, subscribers);
        }
    }

    /// The rate asked of the RT thread for robot `id` now.
    pub fn rate(&self, id: NodeId) -> Option<f64> {
        self.robots.get(&id).map(|r| r.rate)
    }

    /// When due at `now`: asks the RT thread (`params`) for each robot's `rate_of(node)` while some front end has
    /// subscribers, 0 otherwise; returns the lines to report (a rate the RT side refused).
    pub fn apply(
        &mut self,
        now: Instant,
        params: &NrtLiveParams,
        rate_of: impl Fn(NodeId) -> f64,
    ) -> Vec<String> {
        if !self.due(now) {
            return Vec::new();
        }
        self.last_check = Some(now);
        let mut lines = Vec::new();
        for (id, r) in self.robots.iter_mut() {
            let heard = r.subscribers.values().sum::<usize>() > 0;
            let rate = if heard { rate_of(*id) } else { 0.0 };
            if rate != r.rate {
                match params.nrt_set_joint_state_hz(r.robot, rate) {
                    Ok(()) => r.rate = rate,
                    Err(e) => lines.push(format!("node {id}: joint_state_rate {rate}: {e}")),
                }
            }
        }
        lines
    }
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

    fn cmd(names: &[&str], v: &[f64]) -> Result<JointCommand, JointCommandError> {
        let names: Vec<String> = names.iter().map(|s| s.to_string()).collect();
        command(&names, v, &joints())
    }

    #[test]
    fn names_select_the_wheels_and_bad_input_is_refused() {
        let c = cmd(&["right_wheel_joint", "t1/left_wheel_joint"], &[2.0, 1.0]);
        assert_eq!(c.unwrap().velocity, [1.0, 2.0]);
        let one = cmd(&["right_wheel_joint"], &[3.0]).unwrap();
        assert!(
            one.velocity[0].is_nan() && one.velocity[1] == 3.0,
            "left kept"
        );
        assert_eq!(cmd(&[], &[1.0, -1.0]).unwrap().velocity, [1.0, -1.0]);
        assert!(matches!(
            cmd(&[], &[1.0]),
            Err(JointCommandError::Length { .. })
        ));
        assert!(matches!(
            cmd(&["left_wheel_joint"], &[1.0, 2.0]),
            Err(JointCommandError::Length { .. })
        ));
        assert!(matches!(
            cmd(&["caster"], &[1.0]),
            Err(JointCommandError::UnknownJoint(..))
        ));
        assert!(matches!(
            cmd(&[], &[f64::NAN, 1.0]),
            Err(JointCommandError::NotFinite(_))
        ));
    }

    #[test]
    fn refusals_name_the_offending_input() {
        assert_eq!(
            cmd(&["caster"], &[1.0]).unwrap_err().to_string(),
            "unknown joint \"caster\" (the wheels are \"left_wheel_joint\" and \"right_wheel_joint\")"
        );
        assert_eq!(
            cmd(&[], &[1.0]).unwrap_err().to_string(),
            "1 velocities for 0 names (without names: exactly 2, left and right)"
        );
        assert_eq!(
            cmd(&[], &[f64::INFINITY, 0.0]).unwrap_err().to_string(),
            "velocity inf is not finite"
        );
    }

    #[test]
    fn bad_commands_are_counted_and_reported_once_per_run() {
        let (_rt, params) = handoff::live_params(1);
        let dropped = Arc::new(AtomicU64::new(0));
        let mut input =
            JointCommandInput::new(params, RobotId(0), NodeId(3), joints(), dropped.clone());
        let caster = ["caster".to_owned()];
        let line = input.take(&caster, &[1.0], 1).expect("reported");
        assert!(
            line.starts_with("node 3: joint_command dropped: unknown joint \"caster\""),
            "{line}"
        );
        assert_eq!(input.take(&caster, &[1.0], 2), None, "once per run");
        assert_eq!(dropped.load(Ordering::Relaxed), 2);
        assert_eq!(input.take(&[], &[0.5, 0.5], 3), None);
        assert!(
            input.take(&caster, &[1.0], 4).is_some(),
            "a good one ended the run"
        );
        assert_eq!(dropped.load(Ordering::Relaxed), 3);
    }

    #[test]
    fn the_extended_state_names_its_owner_and_wheels() {
        let s = JointStateSample {
            position: [1.0, 2.0],
            velocity: [0.5, 0.25],
            velocity_reference: [0.5, 0.3],
            target: [100, 120],
            owner: handoff::OwnerId::controller(1),
            fault: JointStateSample::FAULT_WATCHDOG,
            ..Default::default()
        };
        let owners = OwnerNames::new(vec!["line_follower", "go_to_pose"]);
        let names = ["t1/l".to_owned(), "t1/r".to_owned()];
        let m = joint_state(&s, &names, &owners);
        assert_eq!(m.name, names);
        assert_eq!((m.position, m.velocity), (vec![1.0, 2.0], vec![0.5, 0.25]));
        assert_eq!(m.velocity_reference, vec![0.5, 0.3]);
        assert_eq!(m.target, vec![100, 120]);
        assert!(m.pwm.is_empty(), "not reported: empty");
        assert_eq!(m.fault, vec![4, 4]);
        assert_eq!(m.owner, "go_to_pose");
    }

    #[test]
    fn the_rate_follows_the_subscribers_of_every_front_end() {
        let (_rt, params) = handoff::live_params(1);
        let mut rates = JointRates::default();
        let t0 = Instant::now();
        rates.add(NodeId(3), RobotId(0));
        assert!(rates.due(t0));
        assert!(rates.apply(t0, &params, |_| 50.0).is_empty());
        assert_eq!(rates.rate(NodeId(3)), Some(0.0), "nobody listens");
        let t1 = t0 + RATE_CHECK;
        rates.report("ROS 2", NodeId(3), 0);
        rates.report("ROS 1", NodeId(3), 2);
        rates.apply(t1, &params, |_| 50.0);
        assert_eq!(rates.rate(NodeId(3)), Some(50.0), "ROS 1 listens");
        let early = t1 + RATE_CHECK / 2;
        assert!(!rates.due(early));
        rates.report("ROS 1", NodeId(3), 0);
        rates.apply(early, &params, |_| 50.0);
        assert_eq!(
            rates.rate(NodeId(3)),
            Some(50.0),
            "not counted before RATE_CHECK"
        );
        rates.apply(t1 + RATE_CHECK, &params, |_| 50.0);
        assert_eq!(rates.rate(NodeId(3)), Some(0.0), "nobody listens any more");
        rates.report("ROS 2", NodeId(3), 1);
        let lines = rates.apply(t1 + RATE_CHECK * 2, &params, |_| f64::NAN);
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(
            lines[0].starts_with("node 3: joint_state_rate NaN:"),
            "{lines:?}"
        );
        rates.remove(NodeId(3), &params);
        assert_eq!(rates.rate(NodeId(3)), None);
    }
}
