//! The life of a node on the engine's side: accepted, configured as a robot (script, RT slot), watched for
//! liveness, lost, expired, reloaded and added back.

use super::{Engine, EngineError, EngineEvent, ScriptSource};
use crate::network::{LoadedScript, NetError, NetworkEvent, Via};
use handoff::{LinkId, NodeId};
use handoff::{RobotConfig, RtCommand};
use std::time::{Duration, Instant};

/// Delay between accepting a node and configuring it (asebaros waits 200 ms).
const ACCEPT_SETTLE: Duration = Duration::from_millis(200);
/// Period of the execution-state check of nodes running our script.
const LIVENESS_PERIOD: Duration = Duration::from_secs(1);

impl Engine {
    pub(super) fn handle_network_events(&mut self, now: Instant) {
        while let Some(ev) = self.net.poll_event() {
            if self.take_battery_reading(&ev) {
                continue;
            }
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
                NetworkEvent::ExecutionState {
                    id,
                    pc,
                    flags,
                    stamp_ns,
                } => {
                    // The load's own states (step-by-step until its RUN) are told from later ones by when
                    // they arrived, not when the engine reads them: a loop held up for seconds (ROS endpoints
                    // of many robots made at once) reads them late.
                    let said = received_at(*stamp_ns, now);
                    let idle_reset = *pc == 0
                        && flags
                            & (msgs::opcodes::FLAG_EVENT_ACTIVE | msgs::opcodes::FLAG_STEP_BY_STEP)
                            == 0;
                    let settled = self.loaded_at.get(id).is_some_and(|t| {
                        said.saturating_duration_since(*t) > Duration::from_secs(2)
                    });
                    if idle_reset && settled {
                        tracing::warn!("node {id} lost its program (it rebooted?): reloading it");
                        self.reload(*id, now);
                    }
                    self.check_vm_halt(*id, *pc, *flags, said);
                }
                NetworkEvent::VmError { id, message } => tracing::warn!("node {id}: {message}"),
                _ => {}
            }
            self.events.push_back(EngineEvent::Network(ev));
        }
    }

    pub(super) fn after_accept(&mut self, now: Instant) {
        let due: Vec<(NodeId, Instant)> = self
            .pending_accept
            .iter()
            .filter(|(_, t)| *t <= now)
            .copied()
            .collect();
        self.pending_accept.retain(|(_, t)| *t > now);
        for (id, settled) in due {
            let settings = self.net.node(id).and_then(|n| n.settings().cloned());
            let Some(settings) = settings else { continue };
            if self.params.set_id_variable && !settings.id_variable.is_empty() {
                if let Err(e) = self
                    .net
                    .set_variable(id, &settings.id_variable, &[id.0 as i16])
                {
                    tracing::warn!("node {id}: cannot set its id variable: {e}");
                }
            }
            // A script loaded on it since it was accepted (`load_script` during the settle) is the user's last word:
            // the default would overwrite it.
            if self
                .loaded_at
                .get(&id)
                .is_some_and(|t| *t + ACCEPT_SETTLE >= settled)
            {
                tracing::info!(
                    "node {id}: a script was loaded on it since it was accepted: the default script is not loaded"
                );
                continue;
            }
            let Some(source) = self.script_for_new(id, now) else {
                self.report_not_driven(id, "there is no script to load (`script.path` is empty)");
                continue;
            };
            if let Err(e) = self.load_on(&source, id, now) {
                tracing::error!("node {id}: {e}");
                self.events.push_back(EngineEvent::ScriptFailed {
                    node: id,
                    error: e.to_string(),
                });
            }
        }
    }

    pub(super) fn check_liveness(&mut self, now: Instant) {
        if self
            .last_liveness
            .is_some_and(|t| now.duration_since(t) < LIVENESS_PERIOD)
        {
            return;
        }
        self.last_liveness = Some(now);
        let ids: Vec<NodeId> = self
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
    pub(super) fn expire_lost_robots(&mut self, now: Instant) {
        let timeout = self.driver.lost_robot_timeout;
        if timeout.is_nan() || timeout <= 0.0 || self.lost_since.is_empty() {
            return;
        }
        let limit = Duration::from_secs_f64(timeout.min(1e9));
        let expired: Vec<NodeId> = self
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
    pub(super) fn remove_robot(&mut self, id: NodeId) {
        self.raw_forget(id);
        self.lost_since.remove(&id);
        self.reflex_holds.remove(&id);
        self.cliff_holds.remove(&id);
        self.forget_holds(id);
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
    pub(super) fn readd_robot(&mut self, id: NodeId) {
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

    pub(super) fn reload(&mut self, id: NodeId, now: Instant) {
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
    pub(super) fn load_on(
        &mut self,
        source: &ScriptSource,
        id: NodeId,
        now: Instant,
    ) -> Result<bool, EngineError> {
        let node = self.net.node(id).ok_or(NetError::UnknownNode(id))?;
        let Some(loaded) = source.compile_for(node)? else {
            let why = format!(
                "its script {} has no code for {}",
                source.origin,
                node.name()
            );
            tracing::info!("node {id}: {why}");
            self.report_not_driven(id, &why);
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
    pub(super) fn configure_robot(
        &mut self,
        id: NodeId,
        script: &LoadedScript,
    ) -> Result<(), EngineError> {
        let event = |name: &str| {
            script
                .events
                .iter()
                .position(|(n, _)| n == name)
                .map(|i| i as u16)
        };
        let (Some(odometry), Some(set_speed)) = (event("odometry"), event("set_speed")) else {
            let missing: Vec<&str> = DRIVER_EVENTS
                .into_iter()
                .filter(|e| event(e).is_none())
                .collect();
            self.report_not_driven(
                id,
                &format!(
                    "its script {} lacks the driver events {}",
                    script.origin,
                    missing.join(", ")
                ),
            );
            self.remove_robot(id);
            return Ok(());
        };
        if !self.driver.enabled {
            return Ok(());
        }
        let node = self.net.node(id).ok_or(NetError::UnknownNode(id))?;
        let include_id = self.with_id(id);
        let link = rt_link(node.link);
        // a robot that comes back keeps its own parameters (see `robot_params`)
        let cal = self
            .robot_params(id)
            .calibration(self.robot_calibration_file(id), id)?;
        let slot = self
            .robots
            .assign(id, cal.clone())
            .ok_or(EngineError::NoRobotSlot)?;
        let robot = slot.robot;
        self.ends
            .nrt_params()
            .nrt_set_calibration(robot, cal.to_rt())
            .map_err(|source| EngineError::param(&format!("calibration of node {id}"), source))?;
        self.ends
            .nrt_params()
            .nrt_set_motion_limits(robot, self.robot_params(id).motion_limits())
            .map_err(|source| EngineError::param(&format!("motion limits of node {id}"), source))?;
        // a managed driver node starts unconfigured: its wheels held until it is active (with an emergency stop
        // still set, if any: see `estop`)
        self.set_hold(id, super::estop::Hold::Lifecycle, self.driver.managed)?;
        let node = self.net.node(id).ok_or(NetError::UnknownNode(id))?;
        let mut config = RobotConfig::script(id, odometry, set_speed, include_id);
        self.robots
            .set_rt_events(id, [config.odometry_event, config.proximity_event]);
        config.link = link;
        self.robots.set_link(id, link);
        config.proximity_event = event("proximity");
        config.ground_event = event("ground");
        config.acc_event = event("accelerometer");
        config.motor_targets = motor_targets(node);
        self.ends
            .nrt_push_command(RtCommand::ConfigureRobot { robot, config })
            .map_err(|_| EngineError::RingFull)?;
        tracing::info!("node {id} driven as RT robot {robot}");
        // a later script without the driver events is reported again
        self.not_driven.remove(&id);
        self.events
            .push_back(EngineEvent::RobotReady { node: id, robot });
        Ok(())
    }
}

/// The events that make a script a driver script (the RT thread drives the robot through them).
const DRIVER_EVENTS: [&str; 2] = ["odometry", "set_speed"];

/// The Aseba node type of a Thymio-II (real, simulated, or Aseba Playground's).
const THYMIO_TYPE: &str = "thymio-II";

impl Engine {
    /// Says once per node, as a warning and an [`EngineEvent::NotDriven`], that a Thymio-II will
    /// not be driven (no `cmd_vel`, no odometry) and why. Other node types are bridged without
    /// comment: a script of theirs is not expected to be a driver script.
    fn report_not_driven(&mut self, id: NodeId, why: &str) {
        let is_thymio = self.net.node(id).is_some_and(|n| n.name() == THYMIO_TYPE);
        if !is_thymio || !self.driver.enabled || !self.not_driven.insert(id) {
            return;
        }
        let message = format!(
            "node {id} ({THYMIO_TYPE}) is not driven: {why}; no cmd_vel, no odometry (load a \
             driver script, e.g. {}aseba/thymio_ros.aesl)",
            super::BUILTIN_PREFIX
        );
        tracing::warn!("{message}");
        self.events
            .push_back(EngineEvent::NotDriven { node: id, message });
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

/// The instant at which a frame stamped `stamp_ns` (the RT's CLOCK_MONOTONIC receive time) arrived: its age on
/// that clock taken from the present; `now` (the loop's time) when the stamp is unknown (0).
fn received_at(stamp_ns: u64, now: Instant) -> Instant {
    if stamp_ns == 0 {
        return now;
    }
    let age = handoff::monotonic_ns().saturating_sub(stamp_ns);
    let present = Instant::now();
    present
        .checked_sub(Duration::from_nanos(age))
        .unwrap_or(present)
}
