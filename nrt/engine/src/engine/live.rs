//! Driver parameters changed at run time (ROS `set_parameters`): which ones apply live is the
//! schema's ([`DriverParams`]' [`crate::schema::Section::LIVE`]); the value is checked by the same types and
//! validation as the file, then every robot's calibration is recomputed and handed to RT.

use super::{Engine, EngineError};
use crate::schema::{self, SchemaError};
use crate::thymio::calibration::CalibrationError;
use crate::thymio::params::DriverParams;

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
        value: serde_yaml::Value,
    ) -> Result<Vec<u16>, LiveError> {
        if !schema::is_live::<DriverParams>(name) {
            return Err(LiveError::StartOnly(name.to_owned()));
        }
        let next = schema::set(&self.driver, name, value)?;
        let calibration = |e| LiveError::Calibration {
            key: name.to_owned(),
            source: e,
        };
        // check every robot's calibration first: a bad value changes nothing
        let nodes: Vec<u16> = self.robots.iter().map(|s| s.node).collect();
        let mut cals = Vec::with_capacity(nodes.len());
        for id in &nodes {
            let c = next
                .calibration(&self.calibration_file, *id)
                .map_err(calibration)?;
            cals.push((*id, c));
        }
        if nodes.is_empty() {
            next.calibration(&self.calibration_file, 0)
                .map_err(calibration)?;
        }
        self.driver = next;
        for (id, c) in cals {
            self.set_calibration(id, c)
                .map_err(|source| LiveError::Engine {
                    key: name.to_owned(),
                    source,
                })?;
        }
        Ok(nodes)
    }
}
