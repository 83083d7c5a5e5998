//! The NRT engine: the network manager, the Aseba switch, script loading and the robot slots,
//! glued to the RT thread through the rings of `handoff`. The ROS 2 bridge and the command
//! line tools drive it with [`Engine::poll`] and react to its [`EngineEvent`]s; it never
//! blocks and never touches a link.

mod anonymous;
mod battery;
mod builtin;
mod controllers;
mod estop;
mod foreign;
mod forwarding;
mod lifecycle;
mod live;
mod multi;
mod raw_motor;
mod robot_params;
mod robots;
mod script;
mod script_file;
mod script_reader;
mod traffic;
mod types;
mod vm_halt;
mod wait;

pub use battery::BATTERY_PERIOD;
pub use builtin::{builtin_names, builtin_script, is_builtin, BUILTIN_PREFIX, BUILTIN_SCRIPTS};
pub use controllers::{ControllerPort, ControllerReport};
pub use foreign::{Foreign, ForeignCommand, FOREIGN_HOLD};
pub use live::LiveError;
pub use multi::multi_variant_path;
pub use raw_motor::{capped_message, wheels_to_twist, MOTOR_TARGETS};
pub use robots::{RobotSlot, Robots};
pub use script::{ScriptError, ScriptSource};
pub use script_file::{read_script_file, ScriptFileError, MAX_SCRIPT_BYTES};
pub use script_reader::{ReadDone, ReadTicket, ReaderError, ScriptReader};
pub use types::{EngineConfig, EngineError, EngineEvent, EngineStats};
pub use vm_halt::VmRecord;
pub use wait::{ACCEPT_TICK, IDLE_TICK};

use crate::network::{Dest, NetError, NetworkManager, Via};
use crate::params::BridgeParams;
use crate::switch::{LinkBudget, Switch, SwitchLimits};
use crate::thymio::calibration::{self, CalibrationFile};
use crate::thymio::params::DriverParams;
use handoff::{LinkId, LinkTarget, NodeId, NrtEnds, RobotId, RtCommand, RtStats, Twist2};
use std::collections::{BTreeMap, VecDeque};
use std::time::Instant;

/// A link that is up, as the engine knows it.
#[derive(Debug, Clone, Copy)]
struct LinkInfo {
    /// Index of its target in the target list.
    target: u16,
    /// What the switch's clients may still send toward this link.
    budget: LinkBudget,
}

/// The NRT engine (see the module documentation).
pub struct Engine {
    ends: NrtEnds,
    net: NetworkManager,
    switch: Option<Switch>,
    params: BridgeParams,
    driver: DriverParams,
    calibration_file: CalibrationFile,
    default_script: Option<ScriptSource>,
    /// The id-addressed variant of the default script, for robots that share a link (see `multi`).
    multi_script: Option<ScriptSource>,
    /// Nodes the engine gave the id-addressed variant: their events carry their id first.
    id_addressed: std::collections::BTreeSet<NodeId>,
    links: BTreeMap<LinkId, LinkInfo>,
    /// Where a frame read on one link goes among the others.
    forwarding: forwarding::Forwarding,
    robots: Robots,
    backlog: VecDeque<(LinkTarget, Vec<u8>)>,
    pending_accept: Vec<(NodeId, Instant)>,
    loaded_at: BTreeMap<NodeId, Instant>,
    /// Robots whose node is lost, since when.
    lost_since: BTreeMap<NodeId, Instant>,
    /// Thymio nodes already reported as not driven (see `report_not_driven`).
    not_driven: std::collections::BTreeSet<NodeId>,
    /// Nodes the RT obstacle-stop reflex holds now.
    reflex_holds: std::collections::BTreeSet<NodeId>,
    /// Nodes the RT cliff reflex holds now.
    cliff_holds: std::collections::BTreeSet<NodeId>,
    /// Wheel holds asked for, the RT loop's one hold being either (see `estop`).
    holds: estop::Holds,
    /// The battery reads (see `battery`).
    battery: battery::BatteryReads,
    last_liveness: Option<Instant>,
    vm_halts: vm_halt::VmHalts,
    events: VecDeque<EngineEvent>,
    last_stats: Option<RtStats>,
    stats: EngineStats,
    rt_exited: bool,
    /// The RT thread's setup, once it reported it.
    rt_setup: Option<handoff::SetupSummary>,
    /// Where the front ends' odometry publishers run (see [`Engine::companion_placement`]).
    companion: handoff::CompanionPlacement,
    /// Wheel commands to driven robots from other clients of their links (a second driver).
    foreign: foreign::Foreign,
    /// Raw motor commands of the generic interface (see `raw_motor`).
    raw: raw_motor::RawMotor,
    /// The NRT ends of the RT controllers, pumped by every poll.
    controllers: controllers::Controllers,
    /// Robots' own driver parameters (their `thymio_driver` nodes).
    robot_params: robot_params::RobotParams,
    /// Whether the RT thread rings the doorbell (see `wait`).
    rt_rings: bool,
    /// `shutdown` ran: a VM found stopped now is the driver's own doing (RESET with `reset_on_closing`
    /// leaves it stopped, as asebaros does) and is neither reported nor set running again.
    closing: bool,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("links", &self.links.len())
            .field("stats", &self.stats)
            .finish()
    }
}

impl Engine {
    /// Builds the engine: binds the switch (unless port 0 in the parameters... see
    /// [`BridgeParams::port`]: 0 disables it), reads the default script and the calibration
    /// file, and sets the watchdog of the RT thread.
    pub fn new(config: EngineConfig, ends: NrtEnds) -> Result<Engine, EngineError> {
        let EngineConfig { bridge, driver } = config;
        let switch = if bridge.port == 0 {
            None
        } else {
            let limits = SwitchLimits {
                max_payload: bridge.switch.max_payload as usize,
                client_queue: bridge.switch.client_queue as usize,
            };
            let s = Switch::bind_with(&bridge.address, bridge.port, bridge.loop_back, limits)
                .map_err(|e| EngineError::Switch {
                    address: bridge.address.clone(),
                    port: bridge.port,
                    error: e.to_string(),
                })?;
            Some(s)
        };
        let default_script = if bridge.script.path.is_empty() {
            None
        } else {
            Some(ScriptSource::from_file(
                &bridge.script.path,
                &bridge.script.constants,
            )?)
        };
        let multi_script = multi_variant_path(&bridge.script.path).and_then(|path| {
            ScriptSource::from_file(&path, &bridge.script.constants)
                .inspect_err(|e| {
                    tracing::info!("no id-addressed variant for robots sharing a link: {e}")
                })
                .ok()
        });
        let calibration_file = calibration::read_file(&driver.calibration_file)?;
        ends.nrt_params()
            .nrt_set_watchdog(driver.cmd_vel_timeout)
            .map_err(|source| EngineError::param("cmd_vel_timeout", source))?;
        Ok(Engine {
            net: NetworkManager::from_params(&bridge),
            ends,
            switch,
            params: bridge,
            driver,
            calibration_file,
            default_script,
            multi_script,
            id_addressed: Default::default(),
            links: BTreeMap::new(),
            forwarding: Default::default(),
            robots: Robots::default(),
            backlog: VecDeque::new(),
            pending_accept: Vec::new(),
            loaded_at: BTreeMap::new(),
            lost_since: BTreeMap::new(),
            reflex_holds: Default::default(),
            companion: Default::default(),
            cliff_holds: Default::default(),
            holds: Default::default(),
            battery: Default::default(),
            not_driven: Default::default(),
            last_liveness: None,
            vm_halts: Default::default(),
            events: VecDeque::new(),
            last_stats: None,
            stats: EngineStats::default(),
            rt_exited: false,
            rt_setup: None,
            foreign: foreign::Foreign::default(),
            raw: Default::default(),
            controllers: Default::default(),
            robot_params: Default::default(),
            rt_rings: true,
            closing: false,
        })
    }

    /// Does all pending work once, the RT controllers' included (see [`Self::attach_controller`]); never blocks.
    pub fn poll(&mut self, now: Instant) {
        self.pump_controllers();
        self.drain_rt_events(now);
        self.drain_frames(now);
        self.poll_switch(now);
        self.net.tick(now);
        self.after_accept(now);
        self.check_liveness(now);
        self.poll_battery(now);
        self.handle_network_events(now);
        self.expire_lost_robots(now);
        self.flush_outgoing();
    }

    /// Attaches the NRT end of a controller running in the RT cycle: from now on every [`Self::poll`] hands it the
    /// driver parameters it follows live (`obstacle_stop.*`) and reports its edges as [`EngineEvent`]s.
    pub fn attach_controller(&mut self, port: Box<dyn ControllerPort>) {
        self.controllers.attach(port);
    }

    fn pump_controllers(&mut self) {
        let mut controllers = std::mem::take(&mut self.controllers);
        for r in controllers.pump(&self.driver) {
            match *r {
                ControllerReport::ObstacleStop { robot, engaged } => {
                    self.report_obstacle_stop(robot, engaged)
                }
                ControllerReport::CliffStop { robot, engaged } => {
                    self.report_cliff_stop(robot, engaged)
                }
                ControllerReport::PickedUp { robot, engaged } => {
                    self.report_picked_up(robot, engaged)
                }
            }
        }
        self.controllers = controllers;
    }

    /// The doorbell the RT thread rings when it has pushed frames or events: wait on it (with the
    /// poll period as timeout) instead of sleeping between two [`Self::poll`]s.
    pub fn doorbell(&self) -> handoff::Doorbell {
        self.ends.nrt_doorbell().clone()
    }

    /// The doorbell that wakes the RT thread: ring it after a change the RT thread should see
    /// at once that does not ring it by itself (an RT controller's subscriber cell or
    /// parameters, written by a front end).
    pub fn rt_bell(&self) -> handoff::Doorbell {
        self.ends.nrt_rt_bell().clone()
    }

    /// The next event for the user.
    pub fn next_event(&mut self) -> Option<EngineEvent> {
        self.events.pop_front()
    }

    /// Whether events wait to be taken ([`Engine::next_event`]): a loop that left some for its next
    /// iteration does not wait for the doorbell before it.
    pub fn has_events(&self) -> bool {
        !self.events.is_empty()
    }

    /// The network manager (read-only view of nodes).
    pub fn network(&self) -> &NetworkManager {
        &self.net
    }

    /// The network manager, for requests (get/set variables, commands).
    pub fn network_mut(&mut self) -> &mut NetworkManager {
        &mut self.net
    }

    /// The switch, if enabled.
    pub fn switch(&self) -> Option<&Switch> {
        self.switch.as_ref()
    }

    /// The robot slots.
    pub fn robots(&self) -> &Robots {
        &self.robots
    }

    /// The bridge parameters.
    pub fn params(&self) -> &BridgeParams {
        &self.params
    }

    /// The driver parameters.
    pub fn driver_params(&self) -> &DriverParams {
        &self.driver
    }

    /// The latest RT statistics.
    pub fn rt_stats(&self) -> Option<&RtStats> {
        self.last_stats.as_ref()
    }

    /// Counters of the engine.
    pub fn stats(&self) -> EngineStats {
        self.stats
    }

    /// Wheel commands to driven robots that another client of their link sent (a second
    /// driver on the same robot).
    pub fn foreign_commands(&self) -> &Foreign {
        &self.foreign
    }

    /// The RT thread's setup (scheduler, memory lock), once it reported it.
    pub fn rt_setup(&self) -> Option<handoff::SetupSummary> {
        self.rt_setup
    }

    /// Whether the RT thread has exited (or its end of the rings is gone).
    pub fn rt_exited(&self) -> bool {
        self.rt_exited || self.ends.nrt_peer_gone()
    }

    /// Links up: slot and index of the target in the target list.
    pub fn links(&self) -> impl Iterator<Item = (LinkId, u16)> + '_ {
        self.links.iter().map(|(l, i)| (*l, i.target))
    }

    /// Whether any link is up.
    pub fn connected(&self) -> bool {
        !self.links.is_empty()
    }

    /// The default script, if any.
    pub fn default_script(&self) -> Option<&ScriptSource> {
        self.default_script.as_ref()
    }

    /// Sets a robot's velocity set-point (latest value wins; the RT watchdog stops it if no
    /// new one comes in time). Non-finite values are refused.
    pub fn set_cmd_vel(&self, node: NodeId, linear: f64, angular: f64) -> Result<(), EngineError> {
        let slot = self
            .robots
            .of_node(node)
            .ok_or(EngineError::NotARobot(node))?;
        self.ends
            .nrt_set_cmd_vel(slot.robot, Twist2 { linear, angular })
            .map_err(|source| EngineError::param("cmd_vel", source))
    }

    /// Reports an edge of the RT obstacle-stop reflex for RT robot `robot` (as an
    /// [`EngineEvent::ObstacleStop`]; ignored if the slot is free by now).
    pub fn report_obstacle_stop(&mut self, robot: RobotId, engaged: bool) {
        if let Some(node) = self.robots.node_of(robot) {
            tracing::info!(
                "node {node}: obstacle stop {}",
                if engaged { "holds it" } else { "released" }
            );
            if engaged {
                self.reflex_holds.insert(node);
            } else {
                self.reflex_holds.remove(&node);
            }
            self.events
                .push_back(EngineEvent::ObstacleStop { node, engaged });
        }
    }

    /// Reports an edge of the RT cliff reflex for RT robot `robot` (as an
    /// [`EngineEvent::CliffStop`]; ignored if the slot is free by now).
    pub fn report_cliff_stop(&mut self, robot: RobotId, engaged: bool) {
        if let Some(node) = self.robots.node_of(robot) {
            if engaged {
                tracing::warn!("node {node}: cliff stop holds it (a ground sensor sees no floor)");
                self.cliff_holds.insert(node);
            } else {
                tracing::info!("node {node}: cliff stop released");
                self.cliff_holds.remove(&node);
            }
            self.events
                .push_back(EngineEvent::CliffStop { node, engaged });
        }
    }

    /// Whether the RT cliff reflex holds node `node` now.
    pub fn cliff_stop_holds(&self, node: NodeId) -> bool {
        self.cliff_holds.contains(&node)
    }

    /// What is known of a driven node's VM: halts (stopped or paused while driven) and
    /// restarts (see `restart_stopped_vm`).
    pub fn vm_record(&self, node: NodeId) -> Option<VmRecord> {
        self.vm_halts.record(node)
    }

    /// Holds driven robot `node`'s wheels at zero in the RT loop whatever its owner commands (`true`: a managed
    /// driver node that is not active), or lets its owner's command through again (`false`; an emergency stop,
    /// [`Engine::set_emergency_stop`], still holds them).
    pub fn set_wheels_held(&mut self, node: NodeId, held: bool) -> Result<(), EngineError> {
        self.set_hold(node, estop::Hold::Lifecycle, held)
            .map(|_| ())
    }

    /// Whether a managed node that is not active holds driven robot `node`'s wheels at zero (false for a node
    /// that is not driven; an emergency stop is [`Engine::emergency_stop_holds`]).
    pub fn wheels_held(&self, node: NodeId) -> bool {
        self.robots.of_node(node).is_some() && self.holds.holds(node, estop::Hold::Lifecycle)
    }

    /// Whether `node` is a driven robot whose node is on the network (not lost).
    pub fn robot_link_up(&self, node: NodeId) -> bool {
        self.robots.of_node(node).is_some() && !self.lost_since.contains_key(&node)
    }

    /// Whether the RT obstacle-stop reflex holds node `node` now.
    pub fn obstacle_stop_holds(&self, node: NodeId) -> bool {
        self.reflex_holds.contains(&node)
    }

    /// The NRT half of the RT thread's live parameters (set-points, calibration); its
    /// writes never make the RT reader wait.
    pub fn live_params(&self) -> handoff::NrtLiveParams {
        self.ends.nrt_params().clone()
    }

    /// Sets where the threads the RT thread wakes on its hot path (the front ends' odometry
    /// publishers) should run: the RT thread's CPU and a SCHED_FIFO priority below its own
    /// (`rt.publisher_priority`); applied by each publisher thread as it starts
    /// (`nrt_interface::companion`).
    pub fn set_companion_placement(&mut self, p: handoff::CompanionPlacement) {
        self.companion = p;
    }

    /// Where the odometry publisher threads should run ([`Engine::set_companion_placement`];
    /// default: any CPU, SCHED_OTHER).
    pub fn companion_placement(&self) -> handoff::CompanionPlacement {
        self.companion
    }

    /// Takes one of the RT thread's odometry rings for a front end's publisher thread (once
    /// per ring, [`handoff::ChannelConfig::odometry_out_consumers`]; `None` after): from
    /// then on the RT thread hands every odometry sample to it at once. Odometry reaches ROS
    /// this way only: the engine does not see it.
    pub fn take_odometry_out(&mut self) -> Option<handoff::NrtOdomOut> {
        self.ends.nrt_take_odometry_out()
    }

    /// Takes one of the RT thread's odometry consumers as its rings, one per group of robots
    /// ([`handoff::ChannelConfig::odometry_out_groups`]), for a front end's publisher threads (as
    /// [`Engine::take_odometry_out`]).
    pub fn take_odometry_groups(&mut self) -> Option<Vec<handoff::NrtOdomOut>> {
        self.ends.nrt_take_odometry_groups()
    }

    /// Applies a new calibration to a robot live (the RT thread reads it at its next cycle).
    pub fn set_calibration(
        &mut self,
        node: NodeId,
        c: calibration::Calibration,
    ) -> Result<(), EngineError> {
        c.validate()?;
        let robot = self
            .robots
            .of_node(node)
            .ok_or(EngineError::NotARobot(node))?
            .robot;
        self.ends
            .nrt_params()
            .nrt_set_calibration(robot, c.to_rt())
            .map_err(|source| EngineError::param("calibration", source))?;
        self.robots.assign(node, c);
        Ok(())
    }

    /// Sets a driven robot's odometry pose (`set_odometry`, diff_drive_controller's service): the RT thread restarts
    /// its integration from `pose` at its next cycle boundary (the wheel angles and the speed are kept). A pose
    /// that is not finite is refused.
    pub fn reset_odometry(
        &mut self,
        node: NodeId,
        pose: handoff::Pose2,
    ) -> Result<(), EngineError> {
        for (name, v) in [("x", pose.x), ("y", pose.y), ("yaw", pose.theta)] {
            if !v.is_finite() {
                return Err(EngineError::param(
                    "set_odometry",
                    handoff::ParamError::NotFinite(name),
                ));
            }
        }
        let robot = self
            .robots
            .of_node(node)
            .ok_or(EngineError::NotARobot(node))?
            .robot;
        self.ends
            .nrt_push_command(RtCommand::ResetOdometry { robot, pose })
            .map_err(|_| EngineError::RingFull)
    }

    /// Sends a named event of the node's script to the network (with the node id first when
    /// the node's settings say `include_id_in_events`); the size must be the declared one.
    /// `set_speed` to a node the RT thread drives becomes its set-point instead (capped and
    /// watched like cmd_vel: see `raw_motor`).
    pub fn emit_script_event(
        &mut self,
        node: NodeId,
        name: &str,
        args: &[i16],
    ) -> Result<(), EngineError> {
        if name == raw_motor::SET_SPEED && self.raw_set_speed(node, args)? {
            return Ok(());
        }
        let n = self.net.node(node).ok_or(NetError::UnknownNode(node))?;
        let script = n.script.as_ref().ok_or_else(|| EngineError::UnknownEvent {
            node,
            name: name.to_owned(),
        })?;
        let (id, size) = script
            .events
            .iter()
            .enumerate()
            .find(|(_, (e, _))| e == name)
            .map(|(i, (_, s))| (i as u16, *s as usize))
            .ok_or_else(|| EngineError::UnknownEvent {
                node,
                name: name.to_owned(),
            })?;
        let with_id = self.with_id(node);
        let link = n.link;
        let mut payload = Vec::with_capacity(args.len() + 1);
        if with_id {
            payload.push(node.0 as i16);
        }
        payload.extend_from_slice(args);
        if payload.len() != size {
            return Err(EngineError::EventSize {
                name: name.to_owned(),
                expected: size - usize::from(with_id),
                got: args.len(),
            });
        }
        match link {
            // to the robot's own link only (robots on other links never see it), and to the
            // switch's clients, who watch the network's traffic
            Via::Link(_) => {
                self.net.emit_to(Dest::Link(link), id, &payload)?;
                if self.switch.is_some() {
                    self.net.emit_to(Dest::Link(Via::Switch), id, &payload)?;
                }
            }
            Via::Switch => self.net.emit_to(Dest::Link(Via::Switch), id, &payload)?,
        }
        self.flush_outgoing();
        Ok(())
    }

    /// Compiles `source` for each node of `nodes` (every bridged node if empty) and loads it.
    /// With `set_as_default`, it also becomes the script of nodes discovered later.
    pub fn load_script(
        &mut self,
        source: ScriptSource,
        nodes: &[NodeId],
        set_as_default: bool,
    ) -> Result<Vec<NodeId>, EngineError> {
        let targets: Vec<NodeId> = if nodes.is_empty() {
            self.net
                .nodes()
                .filter(|n| n.is_bridged() && n.connected)
                .map(|n| n.id)
                .collect()
        } else {
            nodes.to_vec()
        };
        let mut loaded = Vec::new();
        let mut first_error = None;
        for id in targets {
            // the user's script: its events are addressed as the node's settings say
            self.id_addressed.remove(&id);
            match self.load_on(&source, id, Instant::now()) {
                Ok(true) => loaded.push(id),
                Ok(false) => {}
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        if set_as_default {
            // (a file's variant would be read on the loop's thread: built-in scripts only)
            self.multi_script = multi_variant_path(&source.origin)
                .filter(|p| is_builtin(p))
                .and_then(|p| ScriptSource::from_file(&p, &source.constants).ok());
            self.params.script.path = source.origin.clone();
            self.default_script = Some(source);
        }
        self.flush_outgoing();
        match first_error {
            Some(e) => Err(e),
            None => Ok(loaded),
        }
    }

    /// Stops every robot and asks the RT thread to end (it writes zero speeds first). With
    /// `reset_on_closing`, RESET is sent to every bridged node too.
    pub fn shutdown(&mut self) {
        self.closing = true;
        if self.params.reset_on_closing {
            let ids: Vec<NodeId> = self
                .net
                .nodes()
                .filter(|n| n.is_bridged() && n.connected)
                .map(|n| n.id)
                .collect();
            for id in ids {
                let _ = self.net.command(id, crate::network::Command::Reset);
            }
        }
        // whatever is queued goes before the Shutdown (the RT thread takes the frames it lets out at exit)
        self.flush_outgoing();
        if self.ends.nrt_push_command(RtCommand::Shutdown).is_err() {
            tracing::warn!(
                "cannot queue the shutdown command: the RT thread is not reading its commands"
            );
        }
    }
}

#[cfg(test)]
mod tests;
