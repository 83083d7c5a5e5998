//! Each driven robot's own driver parameters (what its ROS `thymio_driver` node holds), over the
//! process's defaults ([`Engine::driver_params`]).
//!
//! The one calibration rule: a robot's calibration is the defaults (real or simulated robot),
//! then its parameters (`axis_length`, `motor.*`, `proximity.*`), then the robot's entry in its
//! calibration file, the most specific (what was measured on that robot). A parameter the entry
//! sets therefore cannot be changed at run time for that robot: such a set is refused
//! ([`LiveError::FixedByFile`]), and [`Engine::robot_effective`] shows the entry's value, the
//! one in effect.
//!
//! Only the parameters of one robot are per robot ([`DriverParams::is_per_robot`]); the
//! process-wide ones (`enabled`, `cmd_vel_timeout`, `lost_robot_timeout`, `restart_stopped_vm`,
//! `obstacle_stop.*`) stay on the bridge.

use super::live::LiveError;
use super::{Engine, EngineError};
use crate::schema::{self, SchemaError};
use crate::thymio::calibration::{
    self, Calibration, CalibrationError, CalibrationFile, MotorEntry, ProximityEntry, RobotEntry,
};
use crate::thymio::params::DriverParams;
use crate::thymio::PROXIMITY_NAMES;
use handoff::NodeId;
use std::collections::BTreeMap;
use yaml_serde::{Mapping, Value};

/// The parameters of the robots that have their own, with their calibration file (read again
/// only when a robot names another file than the process's).
#[derive(Debug, Default)]
pub(super) struct RobotParams {
    by_node: BTreeMap<NodeId, (DriverParams, Option<CalibrationFile>)>,
}

impl Engine {
    /// The driver parameters of robot `node`: its own if it has some, else the process's.
    pub fn robot_params(&self, node: NodeId) -> &DriverParams {
        self.robot_params
            .by_node
            .get(&node)
            .map_or(&self.driver, |(p, _)| p)
    }

    /// The calibration file that applies to robot `node`.
    fn robot_file(&self, node: NodeId) -> &CalibrationFile {
        match self.robot_params.by_node.get(&node) {
            Some((_, Some(file))) => file,
            _ => &self.calibration_file,
        }
    }

    /// Robot `node`'s parameters as nested maps with its calibration in effect (defaults,
    /// parameters, file entry) as `axis_length`, `motor.*` and `proximity.*`: the values in
    /// effect, as ROS-Thymio declares them from the calibration.
    pub fn robot_effective(&self, node: NodeId) -> Mapping {
        let params = self.robot_params(node);
        let mut tree = schema::tree(params).unwrap_or_default();
        let cal = match self.robots.of_node(node) {
            Some(slot) => Some(slot.calibration.clone()),
            None => self.calibration_of(node, params).ok().map(|(c, _)| c),
        };
        if let Some(c) = cal {
            for (name, value) in set_by(&entry_of(&c)) {
                // the entry's keys are the parameters'
                let _ = schema::insert(&mut tree, &name, value);
            }
        }
        tree
    }

    /// The process's driver parameters as nested maps with the calibration they give a robot
    /// without a calibration file entry (`axis_length`, `motor.*`, `proximity.*`): the
    /// defaults of every robot, as the bridge node shows them.
    pub fn defaults_effective(&self) -> Mapping {
        let mut tree = schema::tree(&self.driver).unwrap_or_default();
        if let Ok(c) = self.driver.calibration(&CalibrationFile::new(), NodeId(0)) {
            for (name, value) in set_by(&entry_of(&c)) {
                let _ = schema::insert(&mut tree, &name, value);
            }
        }
        tree
    }

    /// Starts robot `node`'s own parameters: the process's with `overrides` (dotted names, e.g.
    /// from its `thymio_driver` node) applied in order; start-only ones are accepted. Each
    /// refused override is left out and returned with why; the others apply, and the robot's
    /// calibration follows them.
    pub fn set_robot_params(
        &mut self,
        node: NodeId,
        overrides: &[(String, Value)],
    ) -> Vec<LiveError> {
        let mut errors = Vec::new();
        let mut params = self.driver.clone();
        for (name, value) in overrides {
            if !DriverParams::is_per_robot(name) {
                errors.push(LiveError::ProcessWide(name.clone()));
                continue;
            }
            let checked = schema::set(&params, name, value.clone())
                .map_err(LiveError::from)
                .and_then(|next| match self.calibration_of(node, &next) {
                    Ok(_) => Ok(next),
                    Err(source) => Err(LiveError::Calibration {
                        key: name.clone(),
                        source,
                    }),
                });
            match checked {
                Ok(next) => params = next,
                Err(e) => errors.push(e),
            }
        }
        if let Err(e) = self.apply_robot_params(node, params, "calibration_file") {
            errors.push(e);
        }
        errors
    }

    /// Sets robot `node`'s parameter `name` at run time: only live ones, not fixed by its
    /// calibration file entry, and with a usable resulting calibration; else nothing changes.
    pub fn set_robot_param(
        &mut self,
        node: NodeId,
        name: &str,
        value: Value,
    ) -> Result<(), LiveError> {
        if !DriverParams::is_per_robot(name) {
            return Err(LiveError::ProcessWide(name.to_owned()));
        }
        if !schema::is_live::<DriverParams>(name) {
            return Err(LiveError::StartOnly(name.to_owned()));
        }
        if self.fixed_by_file(node, name) {
            return Err(LiveError::FixedByFile {
                key: name.to_owned(),
                node,
                file: self.robot_params(node).calibration_file.clone(),
            });
        }
        let next = schema::set(self.robot_params(node), name, value)?;
        self.apply_robot_params(node, next, name)
    }

    /// Whether robot `node`'s calibration file entry sets (part of) parameter `name`: the
    /// entry then takes precedence over the parameter.
    pub fn fixed_by_file(&self, node: NodeId, name: &str) -> bool {
        self.robot_file(node)
            .get(&node.0)
            .is_some_and(|entry| set_by(entry).iter().any(|(k, _)| covers(name, k)))
    }

    /// Checks `params`' calibration for robot `node`, hands it to RT (if the robot is driven)
    /// and keeps the parameters; an error changes nothing (`key` names the cause).
    fn apply_robot_params(
        &mut self,
        node: NodeId,
        params: DriverParams,
        key: &str,
    ) -> Result<(), LiveError> {
        let (c, file) =
            self.calibration_of(node, &params)
                .map_err(|source| LiveError::Calibration {
                    key: key.to_owned(),
                    source,
                })?;
        if let Some(slot) = self.robots.of_node(node) {
            // limits first: they are checked again (by the RT side's rule), and a refusal
            // changes nothing
            self.ends
                .nrt_params()
                .nrt_set_motion_limits(slot.robot, params.motion_limits())
                .map_err(|source| LiveError::Engine {
                    key: key.to_owned(),
                    source: EngineError::param("motion limits", source),
                })?;
            self.set_calibration(node, c)
                .map_err(|source| LiveError::Engine {
                    key: key.to_owned(),
                    source,
                })?;
        }
        self.robot_params.by_node.insert(node, (params, file));
        Ok(())
    }

    /// Hands robot `node`'s motion limits (its parameters' `linear.x.*`, `angular.z.*`) to the
    /// RT limiter, if the robot is driven.
    pub(super) fn set_motion_limits(&mut self, node: NodeId) -> Result<(), EngineError> {
        let Some(robot) = self.robots.of_node(node).map(|s| s.robot) else {
            return Ok(());
        };
        let limits = self.robot_params(node).motion_limits();
        self.ends
            .nrt_params()
            .nrt_set_motion_limits(robot, limits)
            .map_err(|source| EngineError::param("motion limits", source))
    }

    /// Robot `node`'s calibration under `params`, and the calibration file `params` name when
    /// it is not the process's (read now).
    fn calibration_of(
        &self,
        node: NodeId,
        params: &DriverParams,
    ) -> Result<(Calibration, Option<CalibrationFile>), CalibrationError> {
        let file = if params.calibration_file == self.driver.calibration_file {
            None
        } else {
            Some(calibration::read_file(&params.calibration_file)?)
        };
        let c = params.calibration(file.as_ref().unwrap_or(&self.calibration_file), node)?;
        Ok((c, file))
    }

    /// Makes the calibration file at `path` (just written, e.g. by the calibration action)
    /// robot `node`'s and applies it live: the file is read again, robot `node`'s
    /// `calibration_file` becomes `path` if it named another, and its calibration in effect
    /// (RT thread, the values its driver node shows) follows the file's entry. An error
    /// changes nothing.
    pub fn reload_robot_calibration(&mut self, node: NodeId, path: &str) -> Result<(), LiveError> {
        let key = "calibration_file";
        let mut params = self.robot_params(node).clone();
        params.calibration_file = path.to_owned();
        if path == self.driver.calibration_file {
            let file = calibration::read_file(path).map_err(|source| LiveError::Calibration {
                key: key.to_owned(),
                source,
            })?;
            let previous = std::mem::replace(&mut self.calibration_file, file);
            let applied = self.apply_robot_params(node, params, key);
            if applied.is_err() {
                self.calibration_file = previous;
            }
            return applied;
        }
        self.apply_robot_params(node, params, key)
    }

    /// Forgets robot `node`'s own parameters (its `thymio_driver` node is gone).
    pub fn forget_robot_params(&mut self, node: NodeId) {
        self.robot_params.by_node.remove(&node);
    }

    /// Robots with their own parameters, and their parameters with `name` set to `value`: what
    /// a process-wide set makes of them ([`Engine::set_live_param`]).
    pub(super) fn robots_with(
        &self,
        name: &str,
        value: &Value,
    ) -> Result<BTreeMap<NodeId, DriverParams>, SchemaError> {
        self.robot_params
            .by_node
            .iter()
            .map(|(id, (p, _))| Ok((*id, schema::set(p, name, value.clone())?)))
            .collect()
    }

    /// Replaces the parameters of robots that have their own (the file is kept).
    pub(super) fn replace_robot_params(&mut self, next: BTreeMap<NodeId, DriverParams>) {
        for (id, p) in next {
            if let Some(entry) = self.robot_params.by_node.get_mut(&id) {
                entry.0 = p;
            }
        }
    }

    /// The calibration file that applies to robot `node` and its parameters (for
    /// [`Engine::set_live_param`]).
    pub(super) fn robot_calibration_file(&self, node: NodeId) -> &CalibrationFile {
        self.robot_file(node)
    }
}

/// Whether setting parameter `name` would set `fixed` (the same key, or a map holding it).
fn covers(name: &str, fixed: &str) -> bool {
    fixed == name
        || fixed
            .strip_prefix(name)
            .is_some_and(|rest| rest.starts_with('.'))
}

/// The parameters (dotted names) a calibration entry sets, with their values; the
/// calibration tool's `q` is `parameters`.
fn set_by(entry: &RobotEntry) -> Vec<(String, Value)> {
    let tree = schema::tree(entry).unwrap_or_default();
    schema::leaves(&tree)
        .into_iter()
        .filter(|(_, v)| !v.is_null())
        .map(|(name, v)| {
            let name = match name.strip_suffix(".q") {
                Some(motor) => format!("{motor}.parameters"),
                None => name,
            };
            (name, v.clone())
        })
        .collect()
}

/// A calibration as the entry that sets all of it.
fn entry_of(c: &Calibration) -> RobotEntry {
    let motor = |m: &calibration::MotorCalibration| MotorEntry {
        parameters: Some(m.parameters),
        kind: Some("quadratic".into()),
        deadband: Some(m.deadband),
        q: None,
    };
    let proximity = PROXIMITY_NAMES
        .iter()
        .zip(&c.proximity)
        .map(|(name, p)| {
            let entry = ProximityEntry {
                parameters: Some(p.parameters),
                kind: Some("power".into()),
                ..Default::default()
            };
            (name.to_string(), entry)
        })
        .collect();
    RobotEntry {
        motor: [
            ("left".into(), motor(&c.left)),
            ("right".into(), motor(&c.right)),
        ]
        .into(),
        proximity,
        axis_length: Some(c.axis_length),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::tests::{driven_robot, engine};
    use crate::thymio::calibration::AXIS_LENGTH;

    fn yaml(text: &str) -> Value {
        yaml_serde::from_str(text).unwrap()
    }

    #[test]
    fn a_robot_has_its_own_values_over_the_process_defaults() {
        let (mut e, mut rt) = engine(0);
        let robot = driven_robot(&mut e, &mut rt);
        let node = e.robots().iter().next().unwrap().node;
        let errors = e.set_robot_params(
            node,
            &[
                ("odom_frame".into(), yaml("odom_rt")),
                ("motor.left.parameters".into(), yaml("[0.0006, 0.0]")),
                ("cmd_vel_timeout".into(), yaml("3.0")),
                ("axis_length".into(), yaml("-1.0")),
            ],
        );
        // the process-wide one and the refused value are left out and said why
        assert_eq!(errors.len(), 2, "{errors:?}");
        assert!(matches!(&errors[0], LiveError::ProcessWide(k) if k == "cmd_vel_timeout"));
        assert_eq!(e.robot_params(node).odom_frame, "odom_rt");
        assert_eq!(e.driver_params().odom_frame, "odom");
        let cal = e.live_params().nrt_calibration(robot).unwrap();
        assert_eq!(cal.left.q0, 0.0006);
        // a start-only one is refused at run time, a live one applies to this robot
        let err = e
            .set_robot_param(node, "odom_frame", yaml("x"))
            .unwrap_err();
        assert!(matches!(err, LiveError::StartOnly(_)), "{err:?}");
        e.set_robot_param(node, "motor.left.parameters", yaml("[0.0004, 0.0]"))
            .unwrap();
        let cal = e.live_params().nrt_calibration(robot).unwrap();
        assert_eq!(cal.left.q0, 0.0004);
        // a physically meaningless one is refused with the range, and changes nothing
        let err = e
            .set_robot_param(node, "axis_length", yaml("1e9"))
            .unwrap_err();
        assert!(
            err.to_string()
                .contains("`axis_length`: 1000000000 is outside the allowed range [0.05, 0.15] m"),
            "{err}"
        );
        assert_eq!(e.robot_params(node).axis_length, AXIS_LENGTH);
        // a process-wide set reaches the robot's own parameters too
        e.set_live_param("ground.threshold", yaml("150")).unwrap();
        assert_eq!(e.robot_params(node).ground.threshold, 150);
        // the process's defaults show the calibration they give
        let defaults = e.defaults_effective();
        let left = schema::leaves(&defaults)
            .into_iter()
            .find(|(n, _)| n == "motor.left.parameters")
            .map(|(_, v)| v.clone());
        let real = Calibration::real().left.parameters;
        assert_eq!(left, Some(yaml(&format!("{real:?}"))));
    }

    #[test]
    fn the_calibration_file_entry_wins_and_a_set_of_what_it_fixes_is_refused() {
        let dir = std::env::temp_dir().join(format!("robot-params-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (mut e, mut rt) = engine(0);
        let robot = driven_robot(&mut e, &mut rt);
        let node = e.robots().iter().next().unwrap().node;
        let file = dir.join("cal.yaml");
        std::fs::write(
            &file,
            format!("{}: {{motor: {{left: {{q: [0.0005, 0.0]}}}}}}", node.0),
        )
        .unwrap();
        let path = file.display().to_string();
        let errors = e.set_robot_params(
            node,
            &[
                ("calibration_file".into(), Value::String(path.clone())),
                ("motor.left.parameters".into(), yaml("[0.0009, 0.0]")),
            ],
        );
        assert!(errors.is_empty(), "{errors:?}");
        let cal = e.live_params().nrt_calibration(robot).unwrap();
        assert_eq!(cal.left.q0, 0.0005, "the file entry is the most specific");
        let effective = e.robot_effective(node);
        let shown = |name: &str| {
            schema::leaves(&effective)
                .into_iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v.clone())
        };
        assert_eq!(shown("motor.left.parameters"), Some(yaml("[0.0005, 0.0]")));
        // the calibration in effect is shown whole, defaults included
        let real = Calibration::real().right.parameters;
        assert_eq!(
            shown("motor.right.parameters"),
            Some(yaml(&format!("{real:?}")))
        );
        assert_eq!(shown("proximity.center.kind"), Some(yaml("power")));
        for name in ["motor.left.parameters", "motor.left", "motor"] {
            let err = e.set_robot_param(node, name, yaml("{}")).unwrap_err();
            assert!(
                matches!(err, LiveError::FixedByFile { .. }),
                "{name}: {err:?}"
            );
            assert!(err.to_string().contains(&path), "{err}");
        }
        assert!(e.fixed_by_file(node, "motor.left.parameters"));
        assert!(!e.fixed_by_file(node, "motor.right.parameters"));
        e.set_robot_param(node, "motor.right.parameters", yaml("[0.0007, 0.0]"))
            .unwrap();
        let cal = e.live_params().nrt_calibration(robot).unwrap();
        assert_eq!((cal.left.q0, cal.right.q0), (0.0005, 0.0007));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn motion_limits_reach_the_rt_limiter_live_and_a_bad_one_changes_nothing() {
        let (mut e, mut rt) = engine(0);
        let robot = driven_robot(&mut e, &mut rt);
        let node = e.robots().iter().next().unwrap().node;
        let limits = |e: &Engine| e.live_params().nrt_motion_limits(robot).unwrap();
        assert!(limits(&e).is_off());
        e.set_robot_param(node, "linear.x.max_acceleration", yaml("0.2"))
            .unwrap();
        e.set_robot_param(node, "angular.z.max_velocity", yaml("1.5"))
            .unwrap();
        assert_eq!(limits(&e).linear.max_acceleration, 0.2);
        assert_eq!(limits(&e).angular.max_velocity, 1.5);
        let err = e
            .set_robot_param(node, "linear.x.min_velocity", yaml("0.1"))
            .unwrap_err();
        assert!(err.to_string().contains("linear.x.min_velocity"), "{err}");
        assert!(limits(&e).linear.min_velocity.is_nan());
        // NaN turns a limit off again
        e.set_robot_param(node, "linear.x.max_acceleration", yaml(".nan"))
            .unwrap();
        assert!(limits(&e).linear.max_acceleration.is_nan());
        e.set_robot_param(node, "publish_limited_velocity", yaml("true"))
            .unwrap();
        assert!(e.robot_params(node).publish_limited_velocity);
        // the bridge's (process-wide) set reaches the driven robots too
        e.set_live_param("linear.x.max_velocity", yaml("0.1"))
            .unwrap();
        assert_eq!(limits(&e).linear.max_velocity, 0.1);
    }

    #[test]
    fn a_rewritten_calibration_file_applies_live() {
        let dir = tempfile::tempdir().unwrap();
        let (mut e, mut rt) = engine(0);
        let robot = driven_robot(&mut e, &mut rt);
        let node = e.robots().iter().next().unwrap().node;
        let path = dir.path().join("cal.yaml").display().to_string();
        let left = crate::thymio::calibration_file::MotorResult {
            side: "left",
            parameters: [0.00036, 0.0],
            deadband: 5.0,
        };
        crate::thymio::calibration_file::write_motors(path.as_ref(), node.0, &[left]).unwrap();
        e.reload_robot_calibration(node, &path).unwrap();
        assert_eq!(
            e.live_params().nrt_calibration(robot).unwrap().left.q0,
            0.00036
        );
        let shown = schema::leaves(&e.robot_effective(node))
            .into_iter()
            .find(|(n, _)| n == "motor.left.deadband")
            .map(|(_, v)| v.clone());
        assert_eq!(shown, Some(yaml("5.0")));
        assert_eq!(e.robot_params(node).calibration_file, path);
        // a file that cannot be read changes nothing
        assert!(e
            .reload_robot_calibration(node, "/nonexistent/cal.yaml")
            .is_err());
        assert_eq!(e.robot_params(node).calibration_file, path);
    }
}
