//! The embedded simulated Thymio-II (target `sim`, and the default when no target is given):
//! a `sim::World` stepping in real time in its own thread, reached through an in-process
//! link that carries the same bytes as a USB or TCP link. Several robots share that link as a
//! bus (like the wireless dongle network), with node ids 1, 2, …

use crate::config::Config;
use handoff::Doorbell;
use rt::link::PipeLink;
use sim::thymio::Arena;
use sim::world::{HostEnds, World, WorldConfig, WorldHandle};
use std::path::Path;

/// Bytes each way of the in-process link.
const LINK_CAPACITY: usize = 1 << 16;

/// A running embedded simulator.
pub struct EmbeddedSim {
    world: WorldHandle,
    /// The host's ends of the link and the doorbell the simulation rings when it wrote to them.
    ends: Option<(HostEnds, Doorbell)>,
}

impl std::fmt::Debug for EmbeddedSim {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EmbeddedSim").finish_non_exhaustive()
    }
}

impl EmbeddedSim {
    /// The in-process link to the simulated robots (one shared bus); `None` once taken. The
    /// simulation rings its readiness doorbell whenever it wrote bytes, so the RT thread waits
    /// on it rather than polling; the simulation polls the host's bytes every step (1 ms).
    pub fn link(&mut self) -> Option<PipeLink> {
        self.ends
            .take()
            .map(|((tx, rx), readable)| PipeLink::with_doorbells(tx, rx, readable, None))
    }

    /// The simulation, for tests and tools (poses, LEDs, variables).
    pub fn world(&self) -> &WorldHandle {
        &self.world
    }

    /// The simulated robots' true poses for the ROS bridge's `sim/ground_truth` (read from the
    /// bridge's ground-truth thread; the RT thread never takes the simulation's lock).
    pub fn ground_truth(&self) -> SimGroundTruth {
        SimGroundTruth {
            view: self.world.view(),
            poses: Vec::new(),
        }
    }

    /// Stops the simulation thread.
    pub fn stop(mut self) {
        self.world.stop();
    }
}

/// Reads the configured arena (`sim.arena`, empty = the default 2 m × 2 m walled arena).
pub fn arena_of(config: &Config) -> Result<Arena, String> {
    if config.sim.arena.is_empty() {
        return Ok(Arena::default());
    }
    Arena::load(Path::new(&config.sim.arena)).map_err(|e| e.to_string())
}

/// Starts `robots` simulated robots as configured (seed, arena), in real time.
pub fn start_sim(config: &Config, robots: u16) -> Result<EmbeddedSim, String> {
    let world_config = WorldConfig {
        robots: robots.max(1) as usize,
        seed: config.sim.seed,
        arena: arena_of(config)?,
        wheels: config.sim.wheels.spec().map_err(|e| format!("sim.{e}"))?,
        ..WorldConfig::default()
    };
    let mut world = World::new(&world_config);
    let readable = Doorbell::new();
    let bell = readable.clone();
    let ends = world.attach_rung(
        (0..world_config.robots).collect(),
        LINK_CAPACITY,
        move || bell.ring(),
    );
    Ok(EmbeddedSim {
        world: world
            .spawn()
            .map_err(|e| format!("cannot start the simulation thread: {e}"))?,
        ends: Some((ends, readable)),
    })
}

/// The true poses of the embedded simulator's robots (see [`EmbeddedSim::ground_truth`]).
#[derive(Debug)]
pub struct SimGroundTruth {
    view: sim::world::WorldView,
    poses: Vec<(u16, sim::thymio::Pose)>,
}

impl SimGroundTruth {
    /// Every robot's node id and true pose `(x, y, theta)`, and the simulated time (ms).
    pub fn read(&mut self) -> (u64, impl Iterator<Item = (u16, [f64; 3])> + '_) {
        let t = self.view.poses(&mut self.poses);
        (
            t,
            self.poses.iter().map(|(id, p)| (*id, [p.x, p.y, p.theta])),
        )
    }
}

impl nrt_interface::ground_truth::GroundTruthSource for SimGroundTruth {
    fn read(&mut self, out: &mut Vec<nrt_interface::ground_truth::TruePose>) -> Option<u64> {
        let (t_ms, poses) = SimGroundTruth::read(self);
        out.clear();
        out.extend(poses.map(
            |(id, [x, y, theta])| nrt_interface::ground_truth::TruePose {
                node: handoff::NodeId(id),
                x,
                y,
                theta,
            },
        ));
        Some(t_ms * 1_000_000)
    }
}
