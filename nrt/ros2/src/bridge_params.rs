//! `asebaros`' parameters: the bridge's configuration at start, and the driver's process-wide
//! values in effect now (the defaults of every robot), served with the engine's verdict (see
//! [`super::param_server`]).

use super::param_server::{driver_ranges, ParamServices, Shown};
use super::params;
use super::report::Reporter;
use nrt_engine::engine::Engine;
use r2r::ParameterValue;
use std::cell::RefCell;

/// The parameter services of the bridge node.
pub struct BridgeParams {
    services: ParamServices,
    /// The configuration in effect at start (the driver's part is read from the engine).
    effective: serde_yaml::Mapping,
    /// Whether a dotted parameter applies at run time (the configuration schema's).
    live: fn(&str) -> bool,
}

impl BridgeParams {
    /// The services of `node`, showing `effective` (nested maps) with the driver's values.
    pub fn new(
        node: &mut r2r::Node,
        effective: &serde_yaml::Mapping,
        live: fn(&str) -> bool,
    ) -> Result<BridgeParams, r2r::Error> {
        Ok(BridgeParams {
            services: ParamServices::new(node)?,
            effective: effective.clone(),
            live,
        })
    }

    /// Answers the pending calls: the values shown are the configuration at start with the
    /// driver's process-wide values in effect now (the calibration they give a robot without a
    /// file entry included); a set of a live driver parameter (calibration, `obstacle_stop.*`:
    /// the schema says which) is applied by the engine to every robot and answered with its
    /// verdict (reported on `/rosout` when applied); the others are read-only (read at start).
    pub fn serve(&mut self, engine: &mut Engine, reporter: &Reporter) {
        let engine = RefCell::new(engine);
        let (effective, live) = (&self.effective, self.live);
        let shown = || {
            let mut tree = effective.clone();
            tree.extend(engine.borrow().defaults_effective());
            params::flatten(&tree)
                .into_iter()
                .map(|(name, value)| {
                    let (range, int_range) = driver_ranges(&name, &value);
                    Shown {
                        description: params::description(live(&name)).to_owned(),
                        read_only: !live(&name),
                        range,
                        int_range,
                        name,
                        value,
                    }
                })
                .collect()
        };
        let mut set = |name: &str, value: &ParameterValue| {
            let yaml = params::to_yaml(value).ok_or("unsupported value")?;
            let robots = engine
                .borrow_mut()
                .set_live_param(name, yaml)
                .map_err(|e| e.to_string())?;
            let e = engine.borrow();
            let kept: Vec<u16> = robots
                .iter()
                .filter(|n| e.fixed_by_file(**n, name))
                .map(|n| n.0)
                .collect();
            let ids: Vec<u16> = robots.iter().map(|n| n.0).collect();
            if kept.is_empty() {
                reporter.info(&format!("{name} applied live to robots {ids:?}"));
            } else {
                reporter.info(&format!(
                    "{name} applied live to robots {ids:?}; nodes {kept:?} keep the value of \
                     their calibration file entry, which takes precedence"
                ));
            }
            Ok(())
        };
        self.services.serve(&shown, &mut set);
    }
}
