//! The communication switch of each driven robot, as XBotCore's `XBotCommunicationPlugin_switch`, described once
//! for every front end: `/<ns>/switch_controller` (`thymio_rt_msgs/SwitchController`: an owner's name → success,
//! message) gives the robot's wheels to `ros` (`cmd_vel`), `joint` (`~/joint_command`) or an RT controller by name;
//! the latched `/<ns>/controller_owner` (`std_msgs/String`) says who owns them.
//!
//! A request for an unknown name is refused at once with the list of valid names, and one for
//! [`ACTION_ONLY`] (its controller runs only for a goal of the `calibrate_motors` action). A valid one is handed to
//! the RT thread (`nrt_request_owner`), which switches at its next cycle and reports the owner in effect
//! ([`EngineEvent::Owner`]); the call is held ([`Held`]) and answered then — success once the RT thread confirms
//! the requested owner (after every front end published the new owner: see [`Switch::end_step`]), failure with the
//! owner it kept if it did not within [`SWITCH_TIMEOUT`]. Neither a front end's threads nor the NRT loop wait for
//! the RT thread.
//!
//! A front end hands each call to [`Switch::request`] and publishes [`Switch::owner_name`] on its `controller_owner`
//! whenever it differs from what it last published there.

use crate::reply::Held;
use msgs::handoff::{NodeId, NrtLiveParams, OwnerId, OwnerNames, RobotId};
use nrt_engine::engine::EngineEvent;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// Longest wait for the RT thread to confirm a switch.
pub const SWITCH_TIMEOUT: Duration = Duration::from_secs(1);

/// The owner that takes the wheels through its action only (`calibrate_motors`), never through the switch.
pub const ACTION_ONLY: &str = "calibrate_motors";

/// Why a held call of a robot that went is refused.
pub const NO_LONGER_DRIVEN: &str = "the robot is no longer driven";

/// The answer of a switch call (and of an RT controller's service call): `(success, message)`.
pub type Answer = (bool, String);

/// What the RT thread last reported of one robot slot.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OwnerReport {
    /// Owner in effect.
    pub owner: OwnerId,
    /// Commands from non-owners dropped so far.
    pub dropped: u32,
}

struct Pending {
    node: NodeId,
    call: Held<Answer>,
    wanted: OwnerId,
    until: Instant,
}

/// The switches of the driven robots (one per process, in [`crate::Interface`]).
#[derive(Default)]
pub struct Switch {
    names: OwnerNames,
    /// The driven robots: node → RT slot.
    robots: BTreeMap<NodeId, RobotId>,
    reports: BTreeMap<RobotId, OwnerReport>,
    pending: Vec<Pending>,
    /// Confirmed calls, answered at the end of the iteration (once the new owner is published).
    confirmed: Vec<(Held<Answer>, String)>,
}

impl Switch {
    /// No robot yet; `names` are the owners (`ros`, `joint`, then the RT controllers).
    pub fn new(names: OwnerNames) -> Switch {
        Switch {
            names,
            ..Switch::default()
        }
    }

    /// The owner names.
    pub fn names(&self) -> &OwnerNames {
        &self.names
    }

    /// Replaces the owner names (before any robot is driven).
    pub fn set_names(&mut self, names: OwnerNames) {
        self.names = names;
    }

    /// The name of an owner (`owner N` if the names do not know it).
    pub fn name(&self, owner: OwnerId) -> String {
        self.names
            .name(owner)
            .map_or_else(|| format!("owner {}", owner.0), str::to_owned)
    }

    /// What the RT thread last reported of robot slot `robot` (`ros`, none dropped, before any report).
    pub fn report(&self, robot: RobotId) -> OwnerReport {
        self.reports.get(&robot).copied().unwrap_or_default()
    }

    /// The RT slot of driven robot `node`.
    pub fn robot(&self, node: NodeId) -> Option<RobotId> {
        self.robots.get(&node).copied()
    }

    /// What robot `node`'s `controller_owner` says now (`None`: not driven). A front end publishes it when it
    /// differs from what it last published there (and first when it made the topic).
    pub fn owner_name(&self, node: NodeId) -> Option<String> {
        let robot = self.robot(node)?;
        Some(self.name(self.report(robot).owner))
    }

    /// A `switch_controller` call of robot `node` for `owner`, answered through `call` (at once when refused, else
    /// once the RT thread confirms or [`SWITCH_TIMEOUT`] after `now`); `params` are the RT thread's live
    /// parameters (`Engine::live_params`).
    pub fn request(
        &mut self,
        params: &NrtLiveParams,
        node: NodeId,
        owner: &str,
        call: Held<Answer>,
        now: Instant,
    ) {
        let Some(robot) = self.robot(node) else {
            return call.reply((false, NO_LONGER_DRIVEN.into()));
        };
        if owner == ACTION_ONLY {
            // its controller only works with a goal: owned through the action only
            return call.reply((
                false,
                format!("{owner} takes the wheels through its action (calibrate_motors) only"),
            ));
        }
        let Some(wanted) = self.names.id(owner) else {
            let names: Vec<&str> = self.names.all().collect();
            return call.reply((
                false,
                format!(
                    "unknown owner {owner:?}: the owners are {}",
                    names.join(", ")
                ),
            ));
        };
        if let Err(e) = params.nrt_request_owner(robot, wanted) {
            return call.reply((false, format!("node {node}: {e}")));
        }
        self.pending.push(Pending {
            node,
            call,
            wanted,
            until: now + SWITCH_TIMEOUT,
        });
    }

    /// Follows the driven robots and the RT thread's owner reports (a confirmed call is answered at
    /// [`Self::end_step`]; the calls of a robot that goes are refused now).
    pub fn on_engine_event(&mut self, event: &EngineEvent) {
        match event {
            EngineEvent::RobotReady { node, robot } => {
                self.robots.insert(*node, *robot);
            }
            EngineEvent::RobotRemoved { node, .. } => {
                self.robots.remove(node);
                let (gone, kept) = std::mem::take(&mut self.pending)
                    .into_iter()
                    .partition(|p| p.node == *node);
                self.pending = kept;
                for p in gone {
                    p.call.reply((false, NO_LONGER_DRIVEN.into()));
                }
            }
            EngineEvent::Owner {
                robot,
                owner,
                dropped,
            } => {
                self.reports.insert(
                    *robot,
                    OwnerReport {
                        owner: *owner,
                        dropped: *dropped,
                    },
                );
                let message = format!("{} owns the wheels", self.name(*owner));
                let robots = &self.robots;
                let (done, waiting) = std::mem::take(&mut self.pending)
                    .into_iter()
                    .partition(|p| p.wanted == *owner && robots.get(&p.node) == Some(robot));
                self.pending = waiting;
                self.confirmed
                    .extend(done.into_iter().map(|p: Pending| (p.call, message.clone())));
            }
            _ => {}
        }
    }

    /// Refuses the calls the RT thread did not confirm in time, saying which owner kept the wheels.
    pub fn serve(&mut self, now: Instant) {
        let (late, waiting): (Vec<_>, Vec<_>) = std::mem::take(&mut self.pending)
            .into_iter()
            .partition(|p| p.until <= now);
        self.pending = waiting;
        for p in late {
            let kept = self
                .robot(p.node)
                .map_or(OwnerId::ROS, |r| self.report(r).owner);
            p.call.reply((
                false,
                format!(
                    "the RT thread did not switch to {} within {} ms: {} still owns the wheels",
                    self.names.name(p.wanted).unwrap_or("?"),
                    SWITCH_TIMEOUT.as_millis(),
                    self.name(kept)
                ),
            ));
        }
    }

    /// Answers the confirmed calls: called after every front end published the owner of this iteration, so that a
    /// caller that then subscribes to `controller_owner` reads the owner it asked for.
    pub fn end_step(&mut self) {
        for (call, message) in self.confirmed.drain(..) {
            call.reply((true, message));
        }
    }
}

#[cfg(test)]
#[path = "owner_switch_tests.rs"]
mod tests;
