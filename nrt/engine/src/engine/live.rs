//! Driver parameters changed at run time (ROS `set_parameters`): which ones apply live is the
//! schema's ([`DriverParams`]' [`crate::schema::Section::LIVE`]); the value is checked by the same types and
//! validation as the file, then every robot's calibration is recomputed and handed to RT.

use super::{Engine, EngineError};
use crate::schema::{self, SchemaError};
use crate::thymio::calibration::CalibrationError;
use crate::thymio::params::DriverParams;
use handoff::NodeId;

/// Why a parameter change was not applied; names the parameter and keeps the cause.
#[derive(Debug, thiserror::Error)]
pub enum LiveError {
    /// The parameter exists but is read at start only.
    #[error("parameter {0} changed: it is read at start only, restart to apply it")]
    StartOnly(String),
    /// Unknown key or a value the schema refuses.
    #[error(transparent)]
    Schema(#[from] SchemaError),
    /// The calibration the new value gives a robot is unusable.
    #[error("{key}: {source}")]
    Calibration {
        /// The parameter.
        key: String,
        /// Why.
        #[source]
        source: CalibrationError,
    },
    /// A process-wide parameter set on one robot (it belongs on the bridge node).
    #[error("parameter {0} applies to every robot: set it on the bridge node (asebaros)")]
    ProcessWide(String),
    /// The robot's calibration file entry sets this parameter, and it takes precedence.
    #[error("parameter {key}: the entry of node {node} in the calibration file {file:?} sets it, and the file takes precedence")]
    FixedByFile {
        /// The parameter.
        key: String,
        /// The robot.
        node: NodeId,
        /// The calibration file.
        file: String,
    },
    /// The RT thread refused the new calibration.
    #[error("{key}: {source}")]
    Engine {
        /// The parameter.
        key: String,
        /// Why.
        #[source]
        source: EngineError,
    },
}

impl Engine {
    /// Sets the driver parameter `name` (dotted) to `value` at run time. A live parameter
    /// (calibration: `axis_length`, `motor.*`, `proximity.*`, `ground.*`; the obstacle-stop
    /// reflex: `obstacle_stop.*`, which the runtime hands to RT) is checked, every robot's
    /// calibration recomputed (defaults, parameters, then the robot's calibration file entry)
    /// and given to the RT thread; a bad value changes nothing. Returns the robots updated.
    pub fn set_live_param(
        &mut self,
        name: &str,
        value: yaml_serde::Value,
    ) -> Result<Vec<NodeId>, LiveError> {
        if !schema::is_live::<DriverParams>(name) {
            return Err(LiveError::StartOnly(name.to_owned()));
        }
        let next = schema::set(&self.driver, name, value.clone())?;
        let calibration = |e| LiveError::Calibration {
            key: name.to_owned(),
            source: e,
        };
        // robots with their own parameters get the value too
        let own = self.robots_with(name, &value)?;
        // check every robot's calibration first: a bad value changes nothing
        let nodes: Vec<NodeId> = self.robots.iter().map(|s| s.node).collect();
        let mut cals = Vec::with_capacity(nodes.len());
        for id in &nodes {
            let params = own.get(id).unwrap_or(&next);
            let c = params
                .calibration(self.robot_calibration_file(*id), *id)
                .map_err(calibration)?;
            cals.push((*id, c));
        }
        if nodes.is_empty() {
            next.calibration(&self.calibration_file, NodeId(0))
                .map_err(calibration)?;
        }
        self.driver = next;
        self.replace_robot_params(own);
        for (id, c) in cals {
            self.set_calibration(id, c)
                .and_then(|()| self.set_motion_limits(id))
                .map_err(|source| LiveError::Engine {
                    key: name.to_owned(),
                    source,
                })?;
        }
        Ok(nodes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::tests::{driven_robot, engine};
    use crate::schema::Invalid;
    use std::error::Error as _;

    fn yaml(text: &str) -> yaml_serde::Value {
        yaml_serde::from_str(text).unwrap()
    }

    #[test]
    fn a_live_parameter_reaches_the_rt_calibration_of_every_robot() {
        let (mut e, mut rt) = engine(0);
        let robot = driven_robot(&mut e, &mut rt);
        let robots = e
            .set_live_param("motor.left.parameters", yaml("[0.0006, 0.0]"))
            .unwrap();
        assert_eq!(robots, [NodeId(3)]);
        let cal = e.live_params().nrt_calibration(robot).unwrap();
        assert_eq!((cal.left.q0, cal.left.q1), (0.0006, 0.0));
        assert_eq!(
            e.robots()
                .of_node(NodeId(3))
                .unwrap()
                .calibration
                .left
                .parameters,
            [0.0006, 0.0]
        );
        e.set_live_param("obstacle_stop.enabled", yaml("true"))
            .unwrap();
        assert!(e.driver_params().obstacle_stop.enabled);
    }

    #[test]
    fn a_start_only_parameter_changes_nothing() {
        let (mut e, _rt) = engine(0);
        let before = e.driver_params().clone();
        let err = e
            .set_live_param("cmd_vel_timeout", yaml("2.0"))
            .unwrap_err();
        assert!(
            matches!(&err, LiveError::StartOnly(k) if k == "cmd_vel_timeout"),
            "{err:?}"
        );
        assert!(err.to_string().contains("restart"), "{err}");
        assert_eq!(e.driver_params(), &before);
    }

    #[test]
    fn a_refused_value_changes_nothing_and_keeps_its_cause() {
        let (mut e, mut rt) = engine(0);
        let robot = driven_robot(&mut e, &mut rt);
        let before = (
            e.driver_params().clone(),
            e.live_params().nrt_calibration(robot),
        );
        // usable by the types, not by the model: refused with the range
        let err = e
            .set_live_param("motor.left.parameters", yaml("[-1.0, 0.0]"))
            .unwrap_err();
        assert!(
            matches!(&err, LiveError::Schema(SchemaError::Invalid(Invalid { key, .. })) if key == "motor.left.parameters"),
            "{err:?}"
        );
        assert!(
            err.to_string()
                .contains("q0 = -1 is outside the allowed range"),
            "{err}"
        );
        // physically meaningless: a 1000 km axis, a 1 nm one (issue 23)
        for bad in ["1e9", "1e-9", "5e-324"] {
            let err = e.set_live_param("axis_length", yaml(bad)).unwrap_err();
            assert!(err.to_string().contains("axis_length"), "{err}");
            assert!(err.to_string().contains("[0.05, 0.15] m"), "{err}");
        }
        // out of range
        let err = e
            .set_live_param("obstacle_stop.threshold", yaml("0"))
            .unwrap_err();
        assert!(
            matches!(&err, LiveError::Schema(SchemaError::Invalid(Invalid { key, .. })) if key == "obstacle_stop.threshold"),
            "{err:?}"
        );
        // the wrong type: serde's error is the cause, the key is named
        let err = e
            .set_live_param("obstacle_stop.enabled", yaml("often"))
            .unwrap_err();
        assert!(err.to_string().contains("obstacle_stop.enabled"), "{err}");
        assert!(
            err.source().is_some_and(|c| c.is::<yaml_serde::Error>()),
            "{err:?}"
        );
        // an unknown key below a live one
        let err = e.set_live_param("motor.left.q2", yaml("1")).unwrap_err();
        assert!(err.to_string().contains("q2"), "{err}");
        assert_eq!(
            (
                e.driver_params().clone(),
                e.live_params().nrt_calibration(robot)
            ),
            before
        );
    }
}
