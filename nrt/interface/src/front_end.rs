//! One run wiring over any list of front ends: the NRT loop owns the engine and one [`Interface`] (the layer's
//! state: held calls, controllers' ports, goals), and each iteration hands them to every [`FrontEnd`] in turn. With
//! ROS 1 and ROS 2 both on, both serve everything: a switch requested on ROS 1 is confirmed on both `controller_owner`
//! topics, a controller's output is published on both.
//!
//! One iteration ([`step`]): wait for the engine's doorbell (rung by the RT thread and the front ends' I/O threads),
//! let every front end [`FrontEnd::serve`] what its clients asked (into the layer or the engine), poll the engine,
//! hand each engine event to the layer, then to every front end, let the layer [`Interface::serve`] its timers and
//! RT outputs, and let every front end [`FrontEnd::publish`].

use crate::report::Reporter;
use msgs::handoff::RosHops;
use nrt_engine::engine::{Engine, EngineEvent};
use std::time::{Duration, Instant};

/// The layer's state, one per process, shared by every front end (see the module documentation).
pub struct Interface {
    /// The lines for ROS users (console and every front end's `/rosout`).
    pub reporter: Reporter,
}

impl Interface {
    /// The layer with nothing served yet.
    pub fn new(reporter: Reporter) -> Interface {
        Interface { reporter }
    }

    /// Reacts to one engine event (before the front ends do): robots coming and going, owner reports, scripts
    /// that failed to load (reported once, for every front end).
    pub fn on_engine_event(&mut self, engine: &Engine, event: &EngineEvent) {
        let _ = engine;
        if let EngineEvent::ScriptFailed { node, error } = event {
            self.reporter
                .error(&crate::aseba::script_failed(*node, error));
        }
    }

    /// Serves the layer's timers (held calls that timed out) and takes what the RT side produced for the front
    /// ends to publish in this iteration.
    pub fn serve(&mut self, engine: &mut Engine, now: Instant) {
        let _ = (engine, now);
    }

    /// Forgets what was published in this iteration.
    pub fn end_step(&mut self) {}
}

/// A ROS front end: a transport over the layer.
pub trait FrontEnd {
    /// Its name in reports (`ROS 2`, `ROS 1`).
    fn name(&self) -> &'static str;
    /// Serves what its clients asked since the last iteration (never waits): into the layer or the engine.
    fn serve(&mut self, engine: &mut Engine, iface: &mut Interface, now: Instant);
    /// Reacts to one engine event (after the layer did): makes and removes a robot's endpoints (and its own
    /// parameters in the engine), publishes events.
    fn on_engine_event(&mut self, engine: &mut Engine, iface: &mut Interface, event: &EngineEvent);
    /// Publishes what the layer and the engine have for it in this iteration (and its periodic topics when due).
    fn publish(&mut self, engine: &Engine, iface: &Interface, now: Instant);
    /// Whether it still serves its clients (its I/O threads run); when one stops, the loop ends.
    fn alive(&self) -> bool;
    /// The hops it timed, for `--report`.
    fn hop_times(&self) -> Option<RosHops> {
        None
    }
    /// What it says of its run when the driver stops (counters), if anything.
    fn summary(&self) -> Option<String> {
        None
    }
}

/// One iteration over `front_ends`: waits at most as long as the engine allows (`spin_period` when it needs
/// polling), then serves, polls, reacts and publishes (see the module documentation).
pub fn step(
    engine: &mut Engine,
    iface: &mut Interface,
    front_ends: &mut [Box<dyn FrontEnd>],
    spin_period: Duration,
) {
    engine.doorbell().wait(engine.longest_wait(spin_period));
    let now = Instant::now();
    for f in front_ends.iter_mut() {
        f.serve(engine, iface, now);
    }
    engine.poll(now);
    while let Some(event) = engine.next_event() {
        iface.on_engine_event(engine, &event);
        for f in front_ends.iter_mut() {
            f.on_engine_event(engine, iface, &event);
        }
    }
    iface.serve(engine, now);
    for f in front_ends.iter_mut() {
        f.publish(engine, iface, now);
    }
    iface.end_step();
}
