//! The NRT engine: the network manager, the Aseba switch, script loading and the robot slots,
//! glued to the RT thread through the rings of `msgs::handoff`. The ROS 2 bridge and the command
//! line tools drive it with [`Engine::poll`] and react to its [`EngineEvent`]s; it never
//! blocks and never touches a link.

mod raw_motor;
mod robots;
mod script;
mod script_file;
mod script_reader;
mod vm_halt;

pub use raw_motor::{capped_message, wheels_to_twist, MOTOR_TARGETS};
pub use robots::{rt_calibration, RobotSlot, Robots};
pub use script::{ScriptError, ScriptSource};
pub use script_file::{read_script_file, ScriptFileError, MAX_SCRIPT_BYTES};
pub use script_reader::{ReadDone, ReadTicket, ReaderError, ScriptReader};
pub use vm_halt::VmRecord;

use crate::network::{Dest, LoadedScript, NetError, NetworkEvent, NetworkManager, Via};
use crate::params::BridgeParams;
use crate::switch::{LinkBudget, Switch, SwitchLimits};
use crate::thymio::calibration::{self, CalibrationFile};
use crate::thymio::params::DriverParams;
use msgs::handoff::{
    LinkId, LinkKind, LinkTarget, NodeId, NrtEnds, OdomSample, ProximitySample, RobotConfig,
    RobotId, RtCommand, RtEvent, RtStats, SetupSummary, Twist2,
};
use msgs::wire::Frame;
use std::collections::{BTreeMap, VecDeque};
use std::time::{Duration, Instant};

/// Frames kept while the ring to RT is full, before dropping (and counting).
const MAX_BACKLOG: usize = 4096;
/// Delay between accepting a node and configuring it (asebaros waits 200 ms).
const ACCEPT_SETTLE: Duration = Duration::from_millis(200);
/// Period of the execution-state check of nodes running our script.
const LIVENESS_PERIOD: Duration = Duration::from_secs(1);

/// Configuration of the engine.
#[derive(Debug, Clone, Default)]
pub struct EngineConfig {
    /// Generic bridge parameters.
    pub bridge: BridgeParams,
    /// Thymio driver parameters.
    pub driver: DriverParams,
}

/// What the engine reports to its user (ROS bridge, CLI).
#[derive(Debug, Clone, PartialEq)]
pub enum EngineEvent {
    /// Something happened on the Aseba network.
    Network(NetworkEvent),
    /// The RT thread started, with what it obtained.
    RtStarted(SetupSummary),
    /// The RT thread stopped.
    RtExited(msgs::handoff::ExitReason),
    /// A link came up.
    LinkUp {
        /// Slot.
        link: LinkId,
        /// Index in the target list.
        target: u16,
        /// Transport.
        kind: LinkKind,
    },
    /// A link went down.
    LinkDown {
        /// Slot.
        link: LinkId,
        /// Index in the target list.
        target: u16,
    },
    /// A script was loaded on a node.
    ScriptLoaded {
        /// Node id.
        node: u16,
    },
    /// Loading a script on a node failed.
    ScriptFailed {
        /// Node id.
        node: u16,
        /// Why.
        error: String,
    },
    /// A node runs the driver script and is driven by the RT thread as `robot`.
    RobotReady {
        /// Node id.
        node: u16,
        /// RT robot id.
        robot: RobotId,
    },
    /// New odometry of a robot.
    Odometry {
        /// Node id.
        node: u16,
        /// The sample.
        sample: OdomSample,
    },
    /// New proximity readings of a robot (decoded by the RT thread).
    Proximity {
        /// Node id.
        node: u16,
        /// The readings.
        sample: ProximitySample,
    },
    /// A robot's link went down: its state is stale.
    RobotStale {
        /// Node id.
        node: u16,
    },
    /// A robot is no longer driven (its node stayed lost for `lost_robot_timeout`, or it runs a
    /// script without the driver events): its RT slot is free and its interface must go.
    RobotRemoved {
        /// Node id.
        node: u16,
        /// The RT robot id it had.
        robot: RobotId,
    },
    /// The cmd_vel watchdog stopped a robot.
    WatchdogStop {
        /// Node id.
        node: u16,
    },
    /// The RT obstacle-stop reflex started (`engaged`) or stopped holding a robot.
    ObstacleStop {
        /// Node id.
        node: u16,
        /// Holding.
        engaged: bool,
    },
    /// Raw motor targets sent to a driven robot through the generic interface (`set_speed`,
    /// `motor.*.target`) were beyond the driver's cap and were capped; once per robot.
    RawMotorCapped {
        /// Node id.
        node: u16,
        /// The targets asked for.
        wheels: [i16; 2],
        /// The cap (motor units).
        cap: f64,
    },
    /// RT statistics.
    Stats(Box<RtStats>),
}

/// Errors of engine operations.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum EngineError {
    /// The switch could not be started.
    #[error("Aseba switch on {address}:{port}: {error}")]
    Switch {
        /// Address.
        address: String,
        /// Port.
        port: u16,
        /// Cause.
        error: String,
    },
    /// A script problem.
    #[error(transparent)]
    Script(#[from] ScriptError),
    /// A network problem.
    #[error(transparent)]
    Net(#[from] NetError),
    /// Bad calibration.
    #[error(transparent)]
    Calibration(#[from] calibration::CalibrationError),
    /// No such event in the node's script.
    #[error("node {node} has no event \"{name}\" (load a script that declares it)")]
    UnknownEvent {
        /// Node id.
        node: u16,
        /// Event name.
        name: String,
    },
    /// Wrong event size.
    #[error("event \"{name}\" has size {expected}, got {got} values")]
    EventSize {
        /// Event name.
        name: String,
        /// Declared size.
        expected: usize,
        /// Given.
        got: usize,
    },
    /// The node is not driven by the RT thread.
    #[error("node {0} is not a robot driven by thymio-rt (no driver script loaded)")]
    NotARobot(u16),
    /// The RT thread refused a value.
    #[error("{0}")]
    Param(String),
    /// The ring to the RT thread is full.
    #[error("the RT thread is not keeping up (ring full)")]
    RingFull,
}

#[derive(Debug, Clone, Copy)]
struct LinkInfo {
    target: u16,
    /// What the switch's clients may still send toward this link.
    budget: LinkBudget,
}

/// Counters of the engine.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EngineStats {
    /// Frames dropped because the ring to RT stayed full.
    pub frames_dropped_to_rt: u64,
    /// Script reloads after a node lost its program or came back.
    pub script_reloads: u64,
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
    links: BTreeMap<LinkId, LinkInfo>,
    robots: Robots,
    backlog: VecDeque<(LinkTarget, Vec<u8>)>,
    pending_accept: Vec<(u16, Instant)>,
    loaded_at: BTreeMap<u16, Instant>,
    /// Robots whose node is lost, since when.
    lost_since: BTreeMap<u16, Instant>,
    /// Nodes the RT obstacle-stop reflex holds now.
    reflex_holds: std::collections::BTreeSet<u16>,
    last_liveness: Option<Instant>,
    vm_halts: vm_halt::VmHalts,
    events: VecDeque<EngineEvent>,
    last_stats: Option<RtStats>,
    stats: EngineStats,
    rt_exited: bool,
    /// Raw motor commands of the generic interface (see `raw_motor`).
    raw: raw_motor::RawMotor,
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
        let calibration_file = calibration::read_file(&driver.calibration_file)?;
        ends.nrt_params()
            .nrt_set_watchdog(driver.cmd_vel_timeout)
            .map_err(|e| EngineError::Param(format!("cmd_vel_timeout: {e}")))?;
        Ok(Engine {
            net: NetworkManager::from_params(&bridge),
            ends,
            switch,
            params: bridge,
            driver,
            calibration_file,
            default_script,
            links: BTreeMap::new(),
            robots: Robots::default(),
            backlog: VecDeque::new(),
            pending_accept: Vec::new(),
            loaded_at: BTreeMap::new(),
            lost_since: BTreeMap::new(),
            reflex_holds: Default::default(),
            last_liveness: None,
            vm_halts: Default::default(),
            events: VecDeque::new(),
            last_stats: None,
            stats: EngineStats::default(),
            rt_exited: false,
            raw: Default::default(),
        })
    }

    /// Does all pending work once; never blocks.
    pub fn poll(&mut self, now: Instant) {
        self.drain_rt_events(now);
        self.drain_frames(now);
        self.poll_switch(now);
        self.net.tick(now);
        self.after_accept(now);
        self.check_liveness(now);
        self.handle_network_events(now);
        self.expire_lost_robots(now);
        self.flush_outgoing();
    }

    /// The doorbell the RT thread rings when it has pushed frames or events: wait on it (with the
    /// poll period as timeout) instead of sleeping between two [`Self::poll`]s.
    pub fn doorbell(&self) -> msgs::handoff::Doorbell {
        self.ends.nrt_doorbell().clone()
    }

    /// The next event for the user.
    pub fn next_event(&mut self) -> Option<EngineEvent> {
        self.events.pop_front()
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

    /// Whether the RT thread has stopped.
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
    pub fn set_cmd_vel(&self, node: u16, linear: f64, angular: f64) -> Result<(), EngineError> {
        let slot = self
            .robots
            .of_node(node)
            .ok_or(EngineError::NotARobot(node))?;
        self.ends
            .nrt_set_cmd_vel(slot.robot, Twist2 { linear, angular })
            .map_err(|e| EngineError::Param(format!("cmd_vel: {e}")))
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

    /// What is known of a driven node's VM: halts (stopped or paused while driven) and
    /// restarts (see `restart_stopped_vm`).
    pub fn vm_record(&self, node: u16) -> Option<VmRecord> {
        self.vm_halts.record(node)
    }

    /// Whether the RT obstacle-stop reflex holds node `node` now.
    pub fn obstacle_stop_holds(&self, node: u16) -> bool {
        self.reflex_holds.contains(&node)
    }

    /// The NRT half of the RT thread's live parameters (set-points, calibration); its
    /// writes never make the RT reader wait.
    pub fn live_params(&self) -> msgs::handoff::NrtLiveParams {
        self.ends.nrt_params().clone()
    }

    /// Applies new driver parameters live: the calibration-related ones (`axis_length`,
    /// `motor.*`, `proximity.*`, `ground.threshold`) are recomputed for every robot (defaults,
    /// parameters, then the robot's calibration file entry) and given to the RT thread, and
    /// `obstacle_stop.*` is taken (the runtime hands it to the RT reflex); the others are kept
    /// as they were (they are read at start). Returns the robots updated.
    pub fn update_driver_params(&mut self, new: DriverParams) -> Result<Vec<u16>, EngineError> {
        let mut next = self.driver.clone();
        next.axis_length = new.axis_length;
        next.motor = new.motor;
        next.proximity = new.proximity;
        next.ground = new.ground;
        new.obstacle_stop.validate().map_err(EngineError::Param)?;
        next.obstacle_stop = new.obstacle_stop;
        // check every robot's calibration first: a bad value changes nothing
        let nodes: Vec<u16> = self.robots.iter().map(|s| s.node).collect();
        let mut cals = Vec::with_capacity(nodes.len());
        for id in &nodes {
            let c = next.calibration(&self.calibration_file, *id)?;
            c.validate()?;
            cals.push((*id, c));
        }
        if nodes.is_empty() {
            next.calibration(&self.calibration_file, 0)?.validate()?;
        }
        self.driver = next;
        for (id, c) in cals {
            self.set_calibration(id, c)?;
        }
        Ok(nodes)
    }

    /// Applies a new calibration to a robot live (the RT thread reads it at its next cycle).
    pub fn set_calibration(
        &mut self,
        node: u16,
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
            .nrt_set_calibration(robot, rt_calibration(&c))
            .map_err(|e| EngineError::Param(format!("calibration: {e}")))?;
        self.robots.assign(node, c);
        Ok(())
    }

    /// Sends a named event of the node's script to the network (with the node id first when
    /// the node's settings say `include_id_in_events`); the size must be the declared one.
    /// `set_speed` to a node the RT thread drives becomes its set-point instead (capped and
    /// watched like cmd_vel: see `raw_motor`).
    pub fn emit_script_event(
        &mut self,
        node: u16,
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
        let with_id = n.settings().is_some_and(|s| s.include_id_in_events);
        let mut payload = Vec::with_capacity(args.len() + 1);
        if with_id {
            payload.push(node as i16);
        }
        payload.extend_from_slice(args);
        if payload.len() != size {
            return Err(EngineError::EventSize {
                name: name.to_owned(),
                expected: size - usize::from(with_id),
                got: args.len(),
            });
        }
        self.net.emit(id, &payload)?;
        self.flush_outgoing();
        Ok(())
    }

    /// Compiles `source` for each node of `nodes` (every bridged node if empty) and loads it.
    /// With `set_as_default`, it also becomes the script of nodes discovered later.
    pub fn load_script(
        &mut self,
        source: ScriptSource,
        nodes: &[u16],
        set_as_default: bool,
    ) -> Result<Vec<u16>, EngineError> {
        let targets: Vec<u16> = if nodes.is_empty() {
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
            match self.load_on(&source, id, Instant::now()) {
                Ok(true) => loaded.push(id),
                Ok(false) => {}
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        if set_as_default {
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
        if self.params.reset_on_closing {
            let ids: Vec<u16> = self
                .net
                .nodes()
                .filter(|n| n.is_bridged() && n.connected)
                .map(|n| n.id)
                .collect();
            for id in ids {
                let _ = self.net.command(id, crate::network::Command::Reset);
            }
            self.flush_outgoing();
        }
        if self.ends.nrt_push_command(RtCommand::Shutdown).is_err() {
            tracing::warn!(
                "cannot queue the shutdown command: the RT thread is not reading its commands"
            );
        }
    }

    // ---- internals -------------------------------------------------------------------------

    fn drain_rt_events(&mut self, now: Instant) {
        while let Some(ev) = self.ends.nrt_pop_event() {
            match ev {
                RtEvent::Started(s) => {
                    for w in s.warnings() {
                        tracing::warn!("{w}");
                    }
                    self.events.push_back(EngineEvent::RtStarted(s));
                }
                RtEvent::LinkUp { link, target, kind } => {
                    let budget = self.link_budget(target, kind, now);
                    self.links.insert(link, LinkInfo { target, budget });
                    self.net.on_link_up(Via::Link(link), now);
                    self.events
                        .push_back(EngineEvent::LinkUp { link, target, kind });
                }
                RtEvent::LinkDown {
                    link,
                    target,
                    reason,
                } => {
                    tracing::warn!("link {link} (target {target}) down: {reason:?}");
                    self.links.remove(&link);
                    self.net.on_link_down(Via::Link(link), now);
                    self.events
                        .push_back(EngineEvent::LinkDown { link, target });
                }
                RtEvent::Odometry(sample) => {
                    if let Some(node) = self.robots.node_of(sample.robot) {
                        self.events
                            .push_back(EngineEvent::Odometry { node, sample });
                    }
                }
                RtEvent::Proximity(sample) => {
                    if let Some(node) = self.robots.node_of(sample.robot) {
                        self.events
                            .push_back(EngineEvent::Proximity { node, sample });
                    }
                }
                RtEvent::RobotStale { robot } => {
                    if let Some(node) = self.robots.node_of(robot) {
                        self.events.push_back(EngineEvent::RobotStale { node });
                    }
                }
                RtEvent::WatchdogStop { robot } => {
                    if let Some(node) = self.robots.node_of(robot) {
                        self.events.push_back(EngineEvent::WatchdogStop { node });
                    }
                }
                RtEvent::Stats(s) => {
                    self.last_stats = Some(s);
                    self.events.push_back(EngineEvent::Stats(Box::new(s)));
                }
                RtEvent::Exiting { reason } => {
                    self.rt_exited = true;
                    self.events.push_back(EngineEvent::RtExited(reason));
                }
            }
        }
    }

    fn drain_frames(&mut self, now: Instant) {
        let multi_link = self.links.len() > 1;
        let Engine {
            ends,
            net,
            switch,
            backlog,
            links,
            ..
        } = self;
        ends.nrt_drain_frames(|rf| {
            let Ok((frame, _)) = Frame::parse(rf.bytes) else {
                return;
            };
            net.on_frame(Via::Link(rf.link), &frame, rf.t_ns, now);
            if let Some(s) = switch.as_mut() {
                s.broadcast(rf.bytes, None);
            }
            if multi_link {
                // Several targets form one Aseba network, as in asebaros' hub.
                for l in links.keys().filter(|l| **l != rf.link) {
                    backlog.push_back((LinkTarget::One(*l), rf.bytes.to_vec()));
                }
            }
        });
    }

    /// The switch's forwarding budget toward a new link: 3/4 of a serial link's line rate,
    /// else `switch.tcp_budget`.
    fn link_budget(&self, target: u16, kind: LinkKind, now: Instant) -> LinkBudget {
        let baud = self
            .params
            .targets
            .get(target as usize)
            .and_then(|t| t.parse::<msgs::target::Target>().ok())
            .and_then(|t| match t {
                msgs::target::Target::Serial(s) => Some(s.baud),
                _ => None,
            });
        match (kind, baud) {
            (LinkKind::Serial, Some(baud)) => LinkBudget::serial(baud, now),
            (LinkKind::Serial, None) => LinkBudget::serial(115_200, now),
            _ => LinkBudget::new(self.params.switch.tcp_budget, now),
        }
    }

    /// Frames from the switch's clients go to every robot link within its budget (the rest
    /// is counted for the client by the switch) and, if a link took them, are seen by the
    /// network manager.
    fn poll_switch(&mut self, now: Instant) {
        let Engine {
            switch,
            net,
            links,
            backlog,
            ..
        } = self;
        let Some(switch) = switch.as_mut() else {
            return;
        };
        let mut halts: Vec<u16> = Vec::new();
        switch.poll(|_, frame| {
            if let Some(dest) = vm_halt::halt_request(frame) {
                halts.push(dest);
            }
            let (mut taken, mut refused) = (0, 0);
            for (l, info) in links.iter_mut() {
                if info.budget.take(frame.raw().len(), now) {
                    backlog.push_back((LinkTarget::One(*l), frame.raw().to_vec()));
                    taken += 1;
                } else {
                    refused += 1;
                }
            }
            // a frame no link took never reached the Aseba network: the ROS side does not see
            // it either (a flood costs the driver no more than the budget lets through)
            if taken > 0 || refused == 0 {
                net.on_frame(Via::Switch, frame, 0, now);
            }
            refused == 0
        });
        for dest in halts {
            self.watch_client_halt(dest);
        }
    }

    fn flush_outgoing(&mut self) {
        while let Some(out) = self.net.pop_outgoing() {
            match out.dest {
                Dest::Link(Via::Switch) => {
                    if let Some(s) = self.switch.as_mut() {
                        s.broadcast(&out.frame, None);
                    }
                }
                Dest::Link(Via::Link(l)) => self.backlog.push_back((LinkTarget::One(l), out.frame)),
                Dest::All => {
                    if let Some(s) = self.switch.as_mut() {
                        s.broadcast(&out.frame, None);
                    }
                    self.backlog.push_back((LinkTarget::All, out.frame));
                }
            }
        }
        while let Some((to, frame)) = self.backlog.front() {
            match self.ends.nrt_push_frame(*to, frame) {
                Ok(()) => {
                    self.backlog.pop_front();
                }
                Err(msgs::handoff::SendError::Full) => break,
                Err(e) => {
                    tracing::error!("dropping an invalid frame for the link: {e}");
                    self.backlog.pop_front();
                }
            }
        }
        while self.backlog.len() > MAX_BACKLOG {
            self.backlog.pop_front();
            self.stats.frames_dropped_to_rt += 1;
        }
    }

    fn handle_network_events(&mut self, now: Instant) {
        while let Some(ev) = self.net.poll_event() {
            match &ev {
                NetworkEvent::NodeAccepted { id } => {
                    let n = self.net.node(*id);
                    tracing::info!(
                        "node {id} ({}) accepted{}",
                        n.map_or("", |n| n.name()),
                        n.map(|n| n.namespace())
                            .filter(|ns| !ns.is_empty())
                            .map(|ns| format!(" in namespace /{ns}"))
                            .unwrap_or_default()
                    );
                    self.pending_accept.push((*id, now + ACCEPT_SETTLE));
                }
                NetworkEvent::NodeIgnored { id, reason } => {
                    tracing::info!("node {id} ignored: {reason}")
                }
                NetworkEvent::NodeLost { id } => {
                    tracing::warn!("node {id} lost");
                    if self.robots.of_node(*id).is_some() {
                        self.lost_since.insert(*id, now);
                    }
                }
                NetworkEvent::NodeBack { id } => {
                    tracing::info!("node {id} back");
                    self.lost_since.remove(id);
                    if self.params.script.reload_on_reconnect {
                        self.reload(*id, now);
                    }
                    self.readd_robot(*id);
                }
                NetworkEvent::ExecutionState { id, pc, flags } => {
                    let idle_reset = *pc == 0
                        && flags
                            & (msgs::opcodes::FLAG_EVENT_ACTIVE | msgs::opcodes::FLAG_STEP_BY_STEP)
                            == 0;
                    let settled = self
                        .loaded_at
                        .get(id)
                        .is_some_and(|t| now.duration_since(*t) > Duration::from_secs(2));
                    if idle_reset && settled {
                        tracing::warn!("node {id} lost its program (it rebooted?): reloading it");
                        self.reload(*id, now);
                    }
                    self.check_vm_halt(*id, *pc, *flags, now);
                }
                NetworkEvent::VmError { id, message } => tracing::warn!("node {id}: {message}"),
                _ => {}
            }
            self.events.push_back(EngineEvent::Network(ev));
        }
    }

    fn after_accept(&mut self, now: Instant) {
        let due: Vec<u16> = self
            .pending_accept
            .iter()
            .filter(|(_, t)| *t <= now)
            .map(|(id, _)| *id)
            .collect();
        self.pending_accept.retain(|(_, t)| *t > now);
        for id in due {
            let settings = self.net.node(id).and_then(|n| n.settings().cloned());
            let Some(settings) = settings else { continue };
            if self.params.set_id_variable && !settings.id_variable.is_empty() {
                if let Err(e) = self
                    .net
                    .set_variable(id, &settings.id_variable, &[id as i16])
                {
                    tracing::warn!("node {id}: cannot set its id variable: {e}");
                }
            }
            if let Some(source) = self.default_script.clone() {
                if let Err(e) = self.load_on(&source, id, now) {
                    tracing::error!("node {id}: {e}");
                    self.events.push_back(EngineEvent::ScriptFailed {
                        node: id,
                        error: e.to_string(),
                    });
                }
            }
        }
    }

    fn check_liveness(&mut self, now: Instant) {
        if self
            .last_liveness
            .is_some_and(|t| now.duration_since(t) < LIVENESS_PERIOD)
        {
            return;
        }
        self.last_liveness = Some(now);
        let ids: Vec<u16> = self
            .net
            .nodes()
            .filter(|n| n.connected && n.script.is_some() && self.loaded_at.contains_key(&n.id))
            .map(|n| n.id)
            .collect();
        for id in ids {
            let _ = self
                .net
                .command(id, crate::network::Command::GetExecutionState);
        }
    }

    /// Removes the robots whose node stayed lost longer than `lost_robot_timeout`.
    fn expire_lost_robots(&mut self, now: Instant) {
        let timeout = self.driver.lost_robot_timeout;
        if timeout.is_nan() || timeout <= 0.0 || self.lost_since.is_empty() {
            return;
        }
        let limit = Duration::from_secs_f64(timeout.min(1e9));
        let expired: Vec<u16> = self
            .lost_since
            .iter()
            .filter(|(_, t)| now.duration_since(**t) >= limit)
            .map(|(id, _)| *id)
            .collect();
        for id in expired {
            tracing::warn!("node {id} lost for {timeout} s: robot removed");
            self.remove_robot(id);
        }
    }

    /// Frees the RT slot of node `id` (the RT thread writes a zero speed first) and tells the user.
    fn remove_robot(&mut self, id: u16) {
        self.raw_forget(id);
        self.lost_since.remove(&id);
        self.reflex_holds.remove(&id);
        if let Some(slot) = self.robots.release(id) {
            let _ = self
                .ends
                .nrt_push_command(RtCommand::RemoveRobot { robot: slot.robot });
            self.events.push_back(EngineEvent::RobotRemoved {
                node: id,
                robot: slot.robot,
            });
        }
    }

    /// A node came back: drive it again if it runs a driver script (its robot may have been
    /// removed meanwhile, or it may be on another link now).
    fn readd_robot(&mut self, id: u16) {
        let Some(node) = self.net.node(id) else {
            return;
        };
        let link = rt_link(node.link);
        if self.robots.of_node(id).is_some_and(|s| s.link == link) {
            return;
        }
        let Some(script) = node.script.clone() else {
            return;
        };
        if let Err(e) = self.configure_robot(id, &script) {
            tracing::error!("node {id}: cannot drive it again: {e}");
        }
    }

    fn reload(&mut self, id: u16, now: Instant) {
        let Some(script) = self.net.node(id).and_then(|n| n.script.clone()) else {
            return;
        };
        self.stats.script_reloads += 1;
        let (origin, words) = (script.origin.clone(), script.bytecode.len());
        if let Err(e) = self.net.load_script(id, script) {
            tracing::error!("node {id}: reload failed: {e}");
            return;
        }
        tracing::info!("node {id}: script {origin} reloaded ({words} words)");
        self.loaded_at.insert(id, now);
        self.events
            .push_back(EngineEvent::ScriptLoaded { node: id });
    }

    /// Compiles and loads `source` on node `id`; Ok(false) if the script has no code for it.
    fn load_on(
        &mut self,
        source: &ScriptSource,
        id: u16,
        now: Instant,
    ) -> Result<bool, EngineError> {
        let node = self.net.node(id).ok_or(NetError::UnknownNode(id))?;
        let Some(loaded) = source.compile_for(node)? else {
            tracing::info!("node {id}: the script has no code for {}", node.name());
            return Ok(false);
        };
        self.net.load_script(id, loaded.clone())?;
        self.loaded_at.insert(id, now);
        tracing::info!(
            "node {id}: script {} loaded ({} words)",
            source.origin,
            loaded.bytecode.len()
        );
        self.events
            .push_back(EngineEvent::ScriptLoaded { node: id });
        self.configure_robot(id, &loaded)?;
        Ok(true)
    }

    /// Drives a node from the RT thread if its script is a driver script (has `odometry` and
    /// `set_speed` events).
    fn configure_robot(&mut self, id: u16, script: &LoadedScript) -> Result<(), EngineError> {
        let event = |name: &str| {
            script
                .events
                .iter()
                .position(|(n, _)| n == name)
                .map(|i| i as u16)
        };
        let (Some(odometry), Some(set_speed)) = (event("odometry"), event("set_speed")) else {
            self.remove_robot(id);
            return Ok(());
        };
        if !self.driver.enabled {
            return Ok(());
        }
        let node = self.net.node(id).ok_or(NetError::UnknownNode(id))?;
        let include_id = node.settings().is_some_and(|s| s.include_id_in_events);
        let link = rt_link(node.link);
        let cal = self.driver.calibration(&self.calibration_file, id)?;
        let slot = self
            .robots
            .assign(id, cal.clone())
            .ok_or(EngineError::Param("every RT robot slot is taken".into()))?;
        let robot = slot.robot;
        self.ends
            .nrt_params()
            .nrt_set_calibration(robot, rt_calibration(&cal))
            .map_err(|e| EngineError::Param(format!("calibration of node {id}: {e}")))?;
        let mut config = RobotConfig::script(NodeId(id), odometry, set_speed, include_id);
        config.link = link;
        self.robots.set_link(id, link);
        config.proximity_event = event("proximity");
        self.robots
            .set_rt_events(id, [config.odometry_event, config.proximity_event]);
        config.motor_targets = motor_targets(node);
        self.ends
            .nrt_push_command(RtCommand::ConfigureRobot { robot, config })
            .map_err(|_| EngineError::RingFull)?;
        tracing::info!("node {id} driven as RT robot {robot}");
        self.events
            .push_back(EngineEvent::RobotReady { node: id, robot });
        Ok(())
    }
}

/// The address of `motor.left.target` when `motor.right.target` follows it (the RT stop paths
/// write both in one SET_VARIABLES).
fn motor_targets(node: &crate::network::Node) -> Option<u16> {
    let left = node.variable("motor.left.target")?;
    let right = node.variable("motor.right.target")?;
    (left.size == 1 && right.size == 1 && right.address == left.address.checked_add(1)?)
        .then_some(left.address)
}

/// The link the RT thread writes a node's commands to (`None`: a node behind the switch).
fn rt_link(via: Via) -> Option<LinkId> {
    match via {
        Via::Link(l) => Some(l),
        Via::Switch => None,
    }
}

#[cfg(test)]
mod tests;
