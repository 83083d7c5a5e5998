//! `~/set_odometry` of each robot's driver node (diff_drive_controller's service, `control_msgs/srv/SetOdometry`
//! on newer distributions; here `thymio_rt_msgs/srv/SetOdometry`, the same fields): sets the pose the RT odometry
//! integrates from, at the RT thread's next cycle boundary (the wheel angles and the speed are kept). The odometry
//! is planar: `z`, `roll` and `pitch` are 0 or the call is refused with the reason, as is a value that is not
//! finite, an `x` or `y` beyond ±[`handoff::MAX_POSE_COORDINATE`] (10 km: beyond it a double's steps grow until a
//! goal's progress no longer registers) or a `yaw` beyond ±[`handoff::MAX_POSE_YAW`]; the yaw is normalised to
//! (-π, π]; nothing changes on a refusal. Both front ends answer with [`set_odometry`].

use crate::report::Reporter;
use handoff::{check_angle, check_coordinate, normalize_yaw, NodeId, Pose2};
use nrt_engine::engine::Engine;

/// The service under the robot's namespace (on its driver node, as `~/cmd_vel_out`).
pub const SET_ODOMETRY: &str = "thymio_driver/set_odometry";

/// A request: the new pose of `base_link` in `odom`.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct SetOdometryRequest {
    /// x \[m\].
    pub x: f64,
    /// y \[m\].
    pub y: f64,
    /// z \[m\] (0: planar odometry).
    pub z: f64,
    /// Roll \[rad\] (0).
    pub roll: f64,
    /// Pitch \[rad\] (0).
    pub pitch: f64,
    /// Yaw \[rad\].
    pub yaw: f64,
}

/// Answers a `set_odometry` call to driven robot `node`: `(success, message)`, the message saying what was set or
/// why nothing was (a refusal is also reported as a warning through `reporter`; a reset, on the console).
///
/// # Example
///
/// ```no_run
/// # fn demo(engine: &mut nrt_engine::engine::Engine, reporter: &nrt_interface::report::Reporter) {
/// use handoff::NodeId;
/// use nrt_interface::set_odometry::{set_odometry, SetOdometryRequest};
///
/// let tilted = SetOdometryRequest { pitch: 0.1, ..Default::default() };
/// let (success, message) = set_odometry(engine, NodeId(1), &tilted, reporter);
/// assert!(!success && message.contains("pitch"));
/// # }
/// ```
pub fn set_odometry(
    engine: &mut Engine,
    node: NodeId,
    req: &SetOdometryRequest,
    reporter: &Reporter,
) -> (bool, String) {
    let answer = answer(engine, node, req);
    if !answer.0 {
        reporter.warn(&format!("node {node}: set_odometry refused: {}", answer.1));
    }
    answer
}

fn answer(engine: &mut Engine, node: NodeId, req: &SetOdometryRequest) -> (bool, String) {
    let fields = [
        ("x", req.x),
        ("y", req.y),
        ("z", req.z),
        ("roll", req.roll),
        ("pitch", req.pitch),
        ("yaw", req.yaw),
    ];
    if let Some((name, v)) = fields.iter().find(|(_, v)| !v.is_finite()) {
        return (
            false,
            format!("{name} = {v} is not a finite number; odometry unchanged"),
        );
    }
    if let Some((name, v)) = fields[2..5].iter().find(|(_, v)| *v != 0.0) {
        return (
            false,
            format!("{name} = {v}: the odometry is planar, z, roll and pitch must be 0; odometry unchanged"),
        );
    }
    let in_range = check_coordinate("x", req.x)
        .and_then(|()| check_coordinate("y", req.y))
        .and_then(|()| check_angle("yaw", req.yaw));
    if let Err(e) = in_range {
        return (false, format!("{e}; odometry unchanged"));
    }
    let pose = Pose2 {
        x: req.x,
        y: req.y,
        theta: normalize_yaw(req.yaw),
    };
    match engine.reset_odometry(node, pose) {
        Ok(()) => {
            let message = format!(
                "odometry of node {node} set to x = {} m, y = {} m, yaw = {} rad",
                pose.x, pose.y, pose.theta
            );
            tracing::info!("{message}");
            (true, message)
        }
        Err(e) => (false, format!("{e}; odometry unchanged")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use handoff::{channels, ChannelConfig, RtCommand};
    use nrt_engine::engine::EngineConfig;
    use nrt_engine::params::BridgeParams;

    #[test]
    fn refusals_name_the_field_and_send_nothing_to_the_rt_thread() {
        let (mut rt, nrt) = channels(&ChannelConfig::default());
        let config = EngineConfig {
            bridge: BridgeParams {
                port: 0,
                ..Default::default()
            },
            driver: Default::default(),
        };
        let mut engine = Engine::new(config, nrt).unwrap();
        let reporter = Reporter::new("test");
        let call =
            |e: &mut Engine, r: SetOdometryRequest| set_odometry(e, NodeId(3), &r, &reporter);
        for (field, request) in [
            (
                "z",
                SetOdometryRequest {
                    z: 0.1,
                    ..Default::default()
                },
            ),
            (
                "roll",
                SetOdometryRequest {
                    roll: -0.1,
                    ..Default::default()
                },
            ),
            (
                "pitch",
                SetOdometryRequest {
                    pitch: 1.0,
                    ..Default::default()
                },
            ),
            (
                "x",
                SetOdometryRequest {
                    x: f64::NAN,
                    ..Default::default()
                },
            ),
            (
                "yaw",
                SetOdometryRequest {
                    yaw: f64::INFINITY,
                    ..Default::default()
                },
            ),
            // the red team's: a double's step at 1e17 is 16 m, a goal's progress never registered
            (
                "x",
                SetOdometryRequest {
                    x: 1e17,
                    ..Default::default()
                },
            ),
            (
                "y",
                SetOdometryRequest {
                    y: -1e308,
                    ..Default::default()
                },
            ),
            (
                "yaw",
                SetOdometryRequest {
                    yaw: 1e17,
                    ..Default::default()
                },
            ),
            (
                "x",
                SetOdometryRequest {
                    x: 10_000.001,
                    ..Default::default()
                },
            ),
        ] {
            let (success, message) = call(&mut engine, request);
            assert!(!success, "{field}");
            assert!(
                (message.starts_with(field) || message.contains(&format!(": {field} = ")))
                    && message.ends_with("odometry unchanged"),
                "{message}"
            );
            if !message.contains("finite") && !message.contains("planar") {
                assert!(message.contains("out of range: |"), "{message}");
                assert!(
                    message.contains("at most 10000 m") || message.contains("at most 1000 rad")
                );
            }
        }
        // a node that is not a driven robot
        let (success, message) = call(
            &mut engine,
            SetOdometryRequest {
                x: 1.0,
                ..Default::default()
            },
        );
        assert!(
            !success && message.contains("not a robot driven"),
            "{message}"
        );
        let mut commands = Vec::new();
        while let Some(c) = rt.rt_pop_command() {
            commands.push(c);
        }
        assert!(
            !commands
                .iter()
                .any(|c| matches!(c, RtCommand::ResetOdometry { .. })),
            "{commands:?}"
        );
    }
}
