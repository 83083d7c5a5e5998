//! `asebaros`' parameters: the bridge's configuration at start, and the driver's process-wide
//! values in effect now (the defaults of every robot), served with the engine's verdict (see
//! [`super::param_server`]).

use super::param_server::ParamServices;
use super::report::Reporter;
use nrt_engine::engine::Engine;
use nrt_interface::params::{self as layer, Value};
use std::cell::RefCell;

/// The parameter services of the bridge node.
pub struct BridgeParams {
    services: ParamServices,
    /// The configuration in effect at start (the driver's part is read from the engine).
    effective: yaml_serde::Mapping,
    /// Whether a dotted parameter applies at run time (the configuration schema's).
    live: fn(&str) -> bool,
}

impl BridgeParams {
    /// The services of `node`, showing `effective` (nested maps) with the driver's values.
    pub fn new(
        node: &mut r2r::Node,
        effective: &yaml_serde::Mapping,
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
        let shown = || layer::bridge_table(&engine.borrow(), effective, live);
        let mut set = |name: &str, value: &Value| {
            let line = layer::set_bridge(&mut engine.borrow_mut(), name, value)?;
            reporter.info(&line);
            Ok(())
        };
        self.services.serve(&shown, &mut set);
    }
}
