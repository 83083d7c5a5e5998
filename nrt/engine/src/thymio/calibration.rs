//! Calibration: motor quadratic model, proximity power model, axis length — defaults of
//! ROS-Thymio, and the per-robot YAML file keyed by robot id (ros-aseba-interface.md §3.2).
//!
//! Unlike ROS-Thymio, a file entry overrides field by field: a partial file keeps the
//! defaults of what it does not mention (defect §6.2 #15).

use super::PROXIMITY_NAMES;
use crate::schema::ranges;
use handoff::{NodeId, Quadratic, RobotCalibration};
use msgs::thymio::{NOMINAL_Q0, PROXIMITY_COUNT, PROXIMITY_MODEL, SIMULATION_Q0};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Quadratic wheel model: speed [m/s] = q0·u + q1·u·|u| for motor units u.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct MotorCalibration {
    /// `[q0, q1]`.
    pub parameters: [f64; 2],
    /// Dead band in motor units (used for the twist covariance).
    pub deadband: f64,
}

/// Power model of a proximity sensor: `[r_max, x0, c]`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ProximityCalibration {
    /// `[r_max, x0, c]`.
    pub parameters: [f64; 3],
}

/// Everything calibrated for one robot.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Calibration {
    /// Left wheel.
    pub left: MotorCalibration,
    /// Right wheel.
    pub right: MotorCalibration,
    /// The horizontal proximity sensors, in `prox.horizontal` order.
    pub proximity: [ProximityCalibration; PROXIMITY_COUNT],
    /// Distance between the wheels [m].
    pub axis_length: f64,
}

/// Default axis length [m] (the URDF's and ROS-Thymio main.launch's value) and wheel radius [m]:
/// the robot profile's.
pub use msgs::thymio::{AXIS_LENGTH, WHEEL_RADIUS};

impl Calibration {
    /// ROS-Thymio defaults for a real robot (q0 = [`NOMINAL_Q0`], dead band 10).
    pub fn real() -> Self {
        Self::with_motor(MotorCalibration {
            parameters: [NOMINAL_Q0, 0.0],
            deadband: 10.0,
        })
    }

    /// ROS-Thymio defaults for a simulated robot (q0 = [`SIMULATION_Q0`], dead band 0).
    pub fn simulation() -> Self {
        Self::with_motor(MotorCalibration {
            parameters: [SIMULATION_Q0, 0.0],
            deadband: 0.0,
        })
    }

    fn with_motor(m: MotorCalibration) -> Self {
        Calibration {
            left: m,
            right: m,
            proximity: [ProximityCalibration {
                parameters: PROXIMITY_MODEL,
            }; PROXIMITY_COUNT],
            axis_length: AXIS_LENGTH,
        }
    }

    /// The RT thread's form of this calibration (the motors' quadratic models and the axis
    /// length; the wheel radius and the wheel-target cap keep the RT defaults).
    pub fn to_rt(&self) -> RobotCalibration {
        let q = |m: &MotorCalibration| Quadratic {
            q0: m.parameters[0],
            q1: m.parameters[1],
        };
        RobotCalibration {
            left: q(&self.left),
            right: q(&self.right),
            axis_length: self.axis_length,
            ..RobotCalibration::default()
        }
    }

    /// Applies one robot's entry of a calibration file (field by field).
    pub fn apply(&mut self, entry: &RobotEntry) -> Result<(), CalibrationError> {
        for (side, m) in &entry.motor {
            let target = match side.as_str() {
                "left" => &mut self.left,
                "right" => &mut self.right,
                other => return Err(CalibrationError::UnknownMotor(other.to_owned())),
            };
            if let Some(kind) = &m.kind {
                if kind != "quadratic" {
                    return Err(CalibrationError::UnsupportedKind(kind.clone()));
                }
            }
            if let Some(p) = m.parameters.or(m.q) {
                target.parameters = p;
            }
            if let Some(d) = m.deadband {
                target.deadband = d;
            }
        }
        for (name, p) in &entry.proximity {
            let i = PROXIMITY_NAMES
                .iter()
                .position(|n| n == name)
                .ok_or_else(|| CalibrationError::UnknownSensor(name.clone()))?;
            if let Some(kind) = &p.kind {
                if kind != "power" {
                    return Err(CalibrationError::UnsupportedKind(kind.clone()));
                }
            }
            if let Some(params) = p.parameters {
                self.proximity[i].parameters = params;
            }
        }
        if let Some(a) = entry.axis_length {
            self.axis_length = a;
        }
        self.validate()
    }

    /// Checks that every value is usable: in its physically meaningful range
    /// ([`crate::schema::ranges`]); the error names the key, the value and the range.
    pub fn validate(&self) -> Result<(), CalibrationError> {
        use crate::schema::ranges::{check_proximity, check_quadratic};
        let invalid = |e: crate::schema::Invalid| CalibrationError::Invalid(e.to_string());
        for (side, m) in [("left", &self.left), ("right", &self.right)] {
            check_quadratic(&format!("motor.{side}.parameters"), m.parameters).map_err(invalid)?;
            ranges::MOTOR_DEADBAND
                .check(&format!("motor.{side}.deadband"), m.deadband)
                .map_err(invalid)?;
        }
        for (name, p) in PROXIMITY_NAMES.iter().zip(&self.proximity) {
            check_proximity(&format!("proximity.{name}.parameters"), p.parameters)
                .map_err(invalid)?;
        }
        ranges::AXIS_LENGTH
            .check("axis_length", self.axis_length)
            .map_err(invalid)
    }
}

/// One robot's entry of a calibration file; its `motor` and `proximity` maps are also the
/// driver's parameters of the same names (`motor.left.parameters`), in this one shape.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RobotEntry {
    /// `motor: {left: {...}, right: {...}}`.
    #[serde(default)]
    pub motor: BTreeMap<String, MotorEntry>,
    /// `proximity: {<sensor>: {...}}`.
    #[serde(default)]
    pub proximity: BTreeMap<String, ProximityEntry>,
    /// Axis length [m].
    pub axis_length: Option<f64>,
}

/// A motor entry (`parameters`, or `q` as written by the calibration tool).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MotorEntry {
    /// `[q0, q1]`.
    pub parameters: Option<[f64; 2]>,
    /// `[q0, q1]` (the calibration tool's name).
    pub q: Option<[f64; 2]>,
    /// Only `quadratic`.
    pub kind: Option<String>,
    /// Dead band.
    pub deadband: Option<f64>,
}

/// A proximity entry.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProximityEntry {
    /// `[r_max, x0, c]`.
    pub parameters: Option<[f64; 3]>,
    /// Only `power`.
    pub kind: Option<String>,
    /// Kept for compatibility; the range limits are fixed by the model.
    pub range_min: Option<f64>,
    /// Kept for compatibility.
    pub range_max: Option<f64>,
    /// Kept for compatibility.
    pub fov: Option<f64>,
}

/// A calibration file: robot id → entry.
pub type CalibrationFile = BTreeMap<u16, RobotEntry>;

/// Calibration errors.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CalibrationError {
    /// The file cannot be parsed.
    #[error("calibration file: {0}")]
    Parse(String),
    /// A motor other than left/right.
    #[error("unknown motor \"{0}\" (left or right)")]
    UnknownMotor(String),
    /// A sensor name not in the 7 proximity sensors.
    #[error("unknown proximity sensor \"{0}\"")]
    UnknownSensor(String),
    /// A model kind other than quadratic/power.
    #[error("unsupported calibration kind \"{0}\"")]
    UnsupportedKind(String),
    /// A value that cannot be used.
    #[error("invalid calibration: {0}")]
    Invalid(String),
}

/// Parses a calibration file.
pub fn parse_file(yaml: &str) -> Result<CalibrationFile, CalibrationError> {
    if yaml.trim().is_empty() {
        return Ok(CalibrationFile::new());
    }
    // bounded before the YAML parser (its time grows with the square of the nesting)
    msgs::yaml_guard::check(yaml, msgs::yaml_guard::YamlLimits::CONFIG)
        .map_err(|e| CalibrationError::Parse(e.to_string()))?;
    yaml_serde::from_str(yaml).map_err(|e| CalibrationError::Parse(e.to_string()))
}

/// The calibration of robot (node) `uid`: defaults (real or simulated), then its file entry if any.
pub fn for_robot(
    file: &CalibrationFile,
    uid: NodeId,
    simulation: bool,
) -> Result<Calibration, CalibrationError> {
    let mut c = if simulation {
        Calibration::simulation()
    } else {
        Calibration::real()
    };
    if let Some(entry) = file.get(&uid.0) {
        c.apply(entry)?;
    }
    Ok(c)
}

/// Reads the calibration file named by the parameters (`""` = none; a missing file is an
/// error, unlike ROS-Thymio which ignored it silently).
pub fn read_file(path: &str) -> Result<CalibrationFile, CalibrationError> {
    if path.is_empty() {
        return Ok(CalibrationFile::new());
    }
    let limits = msgs::yaml_guard::YamlLimits::CONFIG;
    let text = msgs::yaml_guard::read_to_string(std::path::Path::new(path), limits)
        .map_err(|e| CalibrationError::Parse(format!("cannot read {path}: {e}")))?;
    parse_file(&text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hostile_calibration_file_is_refused_by_the_yaml_guard() {
        let deep = format!("1: {{motor: {}}}\n", "[".repeat(400_000));
        assert_eq!(
            parse_file(&deep),
            Err(CalibrationError::Parse(
                "YAML nested deeper than the limit of 64 levels at line 1".into()
            ))
        );
    }

    #[test]
    fn defaults_are_ros_thymio_ones() {
        let r = Calibration::real();
        assert!((r.left.parameters[0] - 3.413e-4).abs() < 1e-7);
        assert_eq!(r.left.deadband, 10.0);
        assert_eq!(Calibration::simulation().right.parameters, [0.000332, 0.0]);
        assert_eq!(r.proximity[3].parameters, [4505.0, 0.0003, 0.0073]);
        r.validate().unwrap();
    }

    #[test]
    fn the_rt_form_carries_the_motor_models_and_the_axis() {
        let mut c = Calibration::simulation();
        c.left.parameters = [0.0004, 0.00001];
        c.axis_length = 0.1;
        let rt = c.to_rt();
        assert_eq!((rt.left.q0, rt.left.q1), (0.0004, 0.00001));
        assert_eq!((rt.right.q0, rt.right.q1), (0.000332, 0.0));
        assert_eq!(rt.axis_length, 0.1);
        assert_eq!(rt.max_units, RobotCalibration::default().max_units);
        rt.validate().unwrap();
    }

    #[test]
    fn partial_file_keeps_defaults() {
        let f = parse_file(
            "12345:\n  motor:\n    left: {parameters: [0.0004, 0.000001]}\n  proximity:\n    center: {parameters: [4000, 0.0002, 0.007]}\n77:\n  axis_length: 0.095\n",
        )
        .unwrap();
        let c = for_robot(&f, NodeId(12345), false).unwrap();
        assert_eq!(c.left.parameters, [0.0004, 0.000001]);
        assert_eq!(c.left.deadband, 10.0);
        assert_eq!(c.right, Calibration::real().right);
        assert_eq!(c.proximity[2].parameters, [4000.0, 0.0002, 0.007]);
        assert_eq!(c.proximity[0], Calibration::real().proximity[0]);
        assert_eq!(for_robot(&f, NodeId(77), true).unwrap().axis_length, 0.095);
        assert_eq!(
            for_robot(&f, NodeId(1), true).unwrap(),
            Calibration::simulation()
        );
    }

    #[test]
    fn calibration_tool_format_is_accepted() {
        let f = parse_file("5: {motor: {right: {kind: quadratic, q: [0.00035, 0.0]}}}").unwrap();
        assert_eq!(
            for_robot(&f, NodeId(5), false).unwrap().right.parameters,
            [0.00035, 0.0]
        );
    }

    #[test]
    fn bad_entries_are_errors() {
        let f = parse_file("5: {motor: {middle: {q: [1, 0]}}}").unwrap();
        assert_eq!(
            for_robot(&f, NodeId(5), false),
            Err(CalibrationError::UnknownMotor("middle".into()))
        );
        let f = parse_file("5: {motor: {left: {q: [-1, 0]}}}").unwrap();
        assert!(matches!(
            for_robot(&f, NodeId(5), false),
            Err(CalibrationError::Invalid(_))
        ));
        // physically meaningless values, said with the range (issue 23)
        for (entry, key) in [
            ("axis_length: 1.0e9", "axis_length: 1000000000 is outside"),
            ("axis_length: 1.0e-9", "axis_length: 0.000000001 is outside"),
            (
                "motor: {left: {q: [1.0, 0]}}",
                "motor.left.parameters: q0 = 1 is outside",
            ),
            (
                "motor: {right: {deadband: 400}}",
                "motor.right.deadband: 400 is outside",
            ),
            (
                "proximity: {center: {parameters: [4505, 0.0003, 50]}}",
                "proximity.center.parameters: c = 50 is outside",
            ),
        ] {
            let f = parse_file(&format!("5: {{{entry}}}")).unwrap();
            let e = for_robot(&f, NodeId(5), false).unwrap_err();
            assert!(e.to_string().contains(key), "{entry}: {e}");
        }
        let f = parse_file("5: {proximity: {nose: {parameters: [1, 0, 1]}}}").unwrap();
        assert_eq!(
            for_robot(&f, NodeId(5), false),
            Err(CalibrationError::UnknownSensor("nose".into()))
        );
        assert!(
            matches!(parse_file("5: {motr: {}}"), Err(CalibrationError::Parse(m)) if m.contains("motr"))
        );
        let f = parse_file("5: {motor: {left: {kind: linear, q: [1, 0]}}}").unwrap();
        assert_eq!(
            for_robot(&f, NodeId(5), false),
            Err(CalibrationError::UnsupportedKind("linear".into()))
        );
    }
}
