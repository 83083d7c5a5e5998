//! What a Thymio driver interface (ROS-Thymio's `thymio_driver`) does on each engine event, once for every front
//! end: which events make or remove a robot's interface, which reach its sensor topics and which are left out. A
//! front end implements [`DriverEvents`] (making its endpoints and publishing through its transport) and hands every
//! engine event to [`on_engine_event`].
//!
//! - a robot ready makes its interface when the driver interface is enabled (`thymio_driver.enabled`) and it has
//!   none yet; a robot removed loses it;
//! - the RT thread's obstacle-stop and cliff-stop flags, the emergency stop, the battery readings and proximity
//!   samples go to the robot's topics;
//! - a script event of a robot with an interface is decoded by the layer ([`crate::sensors::robot_event`]: what the
//!   RT thread decodes already — odometry, proximity — and what is not the robot's are left out) and published
//!   stamped with its arrival time.

use crate::battery::{self, BatteryState};
use crate::geometry::{self, Stamp};
use crate::sensors::robot_event;
use handoff::{NodeId, ProximitySample, RobotId};
use nrt_engine::engine::{Engine, EngineEvent};
use nrt_engine::network::NetworkEvent;
use nrt_engine::thymio::events::RobotEvent;

/// A front end's driver interface, as [`on_engine_event`] drives it.
pub trait DriverEvents {
    /// Whether robot `id` has an interface (made by [`Self::add_robot`], not yet removed).
    fn has_robot(&self, id: NodeId) -> bool;
    /// Makes the interface of robot `id` (RT slot `robot`) and reports the outcome.
    fn add_robot(&mut self, engine: &Engine, id: NodeId, robot: RobotId);
    /// Removes the interface of robot `id`, if it has one.
    fn remove_robot(&mut self, id: NodeId);
    /// Publishes the obstacle-stop flag of robot `id`.
    fn obstacle_stop(&mut self, id: NodeId, engaged: bool);
    /// Publishes the cliff-stop flag of robot `id`.
    fn cliff_stop(&mut self, id: NodeId, engaged: bool);
    /// Publishes the emergency-stop flag of robot `id` (latched `emergency_stop`).
    fn emergency_stop(&mut self, id: NodeId, engaged: bool);
    /// Publishes the pick-up flag of robot `id` (latched `picked_up`).
    fn picked_up(&mut self, id: NodeId, engaged: bool);
    /// Publishes robot `id`'s `battery_state` ([`crate::battery`]).
    fn battery(&mut self, engine: &Engine, id: NodeId, state: &BatteryState);
    /// Publishes a proximity sample of robot `id` (range and laser topics).
    fn proximity(&mut self, engine: &Engine, id: NodeId, sample: &ProximitySample);
    /// Publishes a decoded script event of robot `id` (its `event` number, for reports).
    fn robot_event(
        &mut self,
        engine: &Engine,
        id: NodeId,
        event: u16,
        decoded: RobotEvent,
        stamp: Stamp,
    );
}

/// Routes `event` to `driver` (see the module documentation).
pub fn on_engine_event(driver: &mut impl DriverEvents, engine: &Engine, event: &EngineEvent) {
    match event {
        EngineEvent::RobotReady { node, robot }
            if engine.driver_params().enabled && !driver.has_robot(*node) =>
        {
            driver.add_robot(engine, *node, *robot)
        }
        EngineEvent::RobotRemoved { node, .. } => driver.remove_robot(*node),
        EngineEvent::ObstacleStop { node, engaged } => driver.obstacle_stop(*node, *engaged),
        EngineEvent::CliffStop { node, engaged } => driver.cliff_stop(*node, *engaged),
        EngineEvent::EmergencyStop { node, engaged } => driver.emergency_stop(*node, *engaged),
        EngineEvent::PickedUp { node, engaged } => driver.picked_up(*node, *engaged),
        EngineEvent::Battery { node, vbat } if driver.has_robot(*node) => {
            driver.battery(engine, *node, &battery::battery_state(*vbat))
        }
        EngineEvent::Proximity { node, sample } => driver.proximity(engine, *node, sample),
        EngineEvent::Network(NetworkEvent::UserEvent {
            source,
            id,
            args,
            stamp_ns,
        }) if driver.has_robot(*source) => {
            if let Some(decoded) = robot_event(engine, *source, *id, args) {
                driver.robot_event(engine, *source, *id, decoded, geometry::stamp(*stamp_ns));
            }
        }
        _ => {}
    }
}
