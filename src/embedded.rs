//! The embedded simulated Thymio-II (target `sim`, and the default when no target is given).

use crate::config::Config;
use rt::link::PipeLink;

/// A running embedded simulator.
#[derive(Debug)]
pub struct EmbeddedSim {
    _private: (),
}

impl EmbeddedSim {
    /// The in-process link to the simulated robots (one shared bus).
    pub fn link(&mut self) -> Option<PipeLink> {
        None
    }

    /// Stops the simulation thread.
    pub fn stop(self) {}
}

/// Starts `robots` simulated robots as configured.
pub fn start_sim(_config: &Config, _robots: u16) -> Result<EmbeddedSim, String> {
    Err("the embedded simulator is not part of this build yet; give a target (tcp:, ser:)".into())
}
