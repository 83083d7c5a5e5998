//! The communication switch of each driven robot, as XBotCore's `XBotCommunicationPlugin_switch`, described once
//! for every front end: `/<ns>/switch_controller` (`thymio_rt_msgs/SwitchController`: an owner's name → success,
//! message) gives the robot's wheels to `ros` (`cmd_vel`), `joint` (`~/joint_command`) or an RT controller by name;
//! the latched `/<ns>/controller_owner` (`std_msgs/String`) says who owns them.
//!
//! A request for a name that is not a loaded owner (`ros`, `joint`, the controllers `control.controllers` loads) is
//! refused at once with the list of loaded owners, and one for
//! [`ACTION_ONLY`] (its controller runs only for a goal of its action: `calibrate_motors`, the goal actions). A
//! valid one is handed to the RT thread (`nrt_request_owner`), which switches at its next cycle and reports the owner
//! in effect ([`EngineEvent::Owner`]); the call is held ([`Held`]) and answered then — success once the RT thread confirms
//! the requested owner (after every front end published the new owner: see [`Switch::end_step`]), failure with the
//! owner it kept if it did not within [`SWITCH_TIMEOUT`]. Neither a front end's threads nor the NRT loop wait for
//! the RT thread.
//!
//! A front end hands each call to [`Switch::request`] and publishes [`Switch::owner_name`] on its `controller_owner`
//! whenever it differs from what it last published there.

pub use crate::held_calls::{Answer, NO_LONGER_DRIVEN};
use crate::held_calls::{HeldCalls, HeldForNode};
use crate::reply::Held;
use handoff::{NodeId, NrtLiveParams, OwnerId, OwnerNames, RobotId};
use nrt_engine::diagnostics::{kv, KeyValue};
use nrt_engine::engine::EngineEvent;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// Longest wait for the RT thread to confirm a switch.
pub const SWITCH_TIMEOUT: Duration = Duration::from_secs(1);

/// `/diagnostics` key: the owner of the wheels.
pub const OWNER: &str = "Owner";
/// `/diagnostics` key: commands from non-owners dropped by the RT thread.
pub const DROPPED: &str = "Non-owner commands dropped";

/// The owners that take the wheels through their action only (`calibrate_motors` and the goal controllers, each
/// the name of its action), never through the switch: without a goal their controllers hold the robot still.
pub const ACTION_ONLY: [&str; 4] = [
    "calibrate_motors",
    "drive_distance",
    "rotate_angle",
    "navigate_to_position",
];

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

impl HeldForNode for Pending {
    fn node(&self) -> NodeId {
        self.node
    }
    fn into_call(self) -> Held<Answer> {
        self.call
    }
}

/// The switches of the driven robots (one per process, in [`crate::Interface`]).
#[derive(Default)]
pub struct Switch {
    names: OwnerNames,
    reports: BTreeMap<RobotId, OwnerReport>,
    /// The driven robots and the switch calls waiting for the RT thread.
    pending: HeldCalls<Pending>,
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

    /// What `/diagnostics` shows of driven robot slot `robot` on every front end: its owner ([`OWNER`]) and the
    /// commands from non-owners the RT thread dropped ([`DROPPED`]).
    pub fn diagnostics(&self, robot: RobotId) -> [KeyValue; 2] {
        let r = self.report(robot);
        [kv(OWNER, self.name(r.owner)), kv(DROPPED, r.dropped)]
    }

    /// The RT slot of driven robot `node`.
    pub fn robot(&self, node: NodeId) -> Option<RobotId> {
        self.pending.robot(node)
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
        // the loaded owners only (`control.controllers`): another is refused with their list
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
        if ACTION_ONLY.contains(&owner) {
            // its controller only works with a goal: owned through the action only
            return call.reply((
                false,
                format!("{owner} takes the wheels through its action ({owner}) only"),
            ));
        }
        if let Err(e) = params.nrt_request_owner(robot, wanted) {
            return call.reply((false, format!("node {node}: {e}")));
        }
        self.pending.hold(Pending {
            node,
            call,
            wanted,
            until: now + SWITCH_TIMEOUT,
        });
    }

    /// Follows the driven robots and the RT thread's owner reports (a confirmed call is answered at
    /// [`Self::end_step`]; the calls of a robot that goes are refused now).
    pub fn on_engine_event(&mut self, event: &EngineEvent) {
        self.pending.follow(event);
        let EngineEvent::Owner {
            robot,
            owner,
            dropped,
        } = event
        else {
            return;
        };
        self.reports.insert(
            *robot,
            OwnerReport {
                owner: *owner,
                dropped: *dropped,
            },
        );
        let message = format!("{} owns the wheels", self.name(*owner));
        let done = self
            .pending
            .take(|p, robots| p.wanted == *owner && robots.get(&p.node) == Some(robot));
        self.confirmed
            .extend(done.into_iter().map(|p: Pending| (p.call, message.clone())));
    }

    /// Refuses the calls the RT thread did not confirm in time, saying which owner kept the wheels.
    pub fn serve(&mut self, now: Instant) {
        for p in self.pending.take(|p, _| p.until <= now) {
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
