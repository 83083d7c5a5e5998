//! The simulated Thymio-II: firmware 14 (or the Aseba Playground variant) on a simulated body.

pub mod addrs;
pub mod arena;
pub mod battery;
pub mod firmware;
pub mod ground;
pub mod lift;
pub mod robot;
pub mod wheels;

pub use arena::Arena;
pub use robot::{Pose, Robot};
pub use wheels::{WheelSpec, WheelSpecError, Wheels};

use crate::node::NodeConfig;
use msgs::description::{playground_thymio, thymio_ii_fw14, TargetDescription};

/// Which Thymio to simulate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Variant {
    /// Firmware 14 (protocol 9, 44 variables, 60 natives).
    #[default]
    Firmware14,
    /// The Thymio of Aseba Playground (30 variables, 52 natives).
    Playground,
}

impl Variant {
    /// The description the robot sends.
    pub fn description(self) -> TargetDescription {
        match self {
            Variant::Firmware14 => thymio_ii_fw14(),
            Variant::Playground => playground_thymio(),
        }
    }
}

/// A robot with node id `id`, protocol `protocol`, at `pose`.
pub fn robot(variant: Variant, id: u16, protocol: u16, pose: Pose, seed: u64) -> Robot {
    let mut uuid = [0u8; 16];
    for (i, b) in uuid.iter_mut().enumerate() {
        *b = (seed.rotate_left(i as u32 * 4) as u8) ^ (id as u8).wrapping_mul(i as u8 + 1);
    }
    let config = NodeConfig {
        id,
        protocol,
        variables_chunk: if variant == Variant::Firmware14 {
            47
        } else {
            0
        },
        name: format!("thymio-rt sim {id}"),
        uuid,
    };
    Robot::new(variant.description(), config, pose, seed)
}

#[cfg(test)]
mod tests;
