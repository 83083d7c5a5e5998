//! The communication switch of each robot, as XBotCore's `XBotCommunicationPlugin_switch`:
//! `/<ns>/switch_controller` (`thymio_rt_msgs/srv/SwitchController`: an owner's name → success,
//! message) gives the robot's wheels to `ros` (`cmd_vel`), `joint` (`~/joint_command`) or an RT
//! controller by name; `/<ns>/controller_owner` (`std_msgs/String`, reliable + transient-local:
//! a late subscriber gets the owner in effect) says who owns them.
//!
//! A request for an unknown name is refused at once with the list of valid names, and one for
//! `calibrate_motors` (its controller runs only for a goal of the `calibrate_motors` action). A valid one
//! is handed to the RT thread (`nrt_request_owner`), which switches at its next cycle and reports
//! the owner in effect ([`EngineEvent::Owner`]); the call is answered then — success once the RT
//! thread confirms the requested owner, failure with the owner it kept if it did not within
//! [`SWITCH_TIMEOUT`]. The call is held (r2r answers a service request whenever it is given
//! back), so neither the spinner nor the NRT loop waits for the RT thread.

use super::report::Reporter;
use super::thymio_endpoints::{latched, topic};
use super::{drain, Srv};
use msgs::handoff::{NodeId, NrtLiveParams, OwnerId, OwnerNames, RobotId};
use r2r::std_msgs::msg::String as RosString;
use r2r::thymio_rt_msgs::srv::SwitchController;
use r2r::{Publisher, QosProfile, ServiceRequest};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// Longest wait for the RT thread to confirm a switch.
pub const SWITCH_TIMEOUT: Duration = Duration::from_secs(1);

/// What the RT thread last reported of one robot slot.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OwnerReport {
    /// Owner in effect.
    pub owner: OwnerId,
    /// Commands from non-owners dropped so far.
    pub dropped: u32,
}

struct Pending {
    call: ServiceRequest<SwitchController::Service>,
    wanted: OwnerId,
    until: Instant,
}

struct RobotSwitch {
    robot: RobotId,
    service: Srv<SwitchController::Service>,
    owner_topic: Publisher<RosString>,
    pending: Vec<Pending>,
}

/// The switches of the driven robots.
pub struct Switches {
    names: OwnerNames,
    params: NrtLiveParams,
    reporter: Reporter,
    robots: BTreeMap<NodeId, RobotSwitch>,
    reports: BTreeMap<RobotId, OwnerReport>,
}

impl Switches {
    /// No robot yet; `names` are the owners, `params` the RT thread's live parameters.
    pub fn new(names: OwnerNames, params: NrtLiveParams, reporter: Reporter) -> Switches {
        Switches {
            names,
            params,
            reporter,
            robots: BTreeMap::new(),
            reports: BTreeMap::new(),
        }
    }

    /// The owner names.
    pub fn names(&self) -> &OwnerNames {
        &self.names
    }

    /// Replaces the owner names (before any robot is added).
    pub fn set_names(&mut self, names: OwnerNames) {
        self.names = names;
    }

    /// Creates robot `id`'s service and owner topic under `ns` (relative to `node`'s namespace)
    /// and publishes the owner in effect.
    pub fn add(
        &mut self,
        node: &mut r2r::Node,
        id: NodeId,
        robot: RobotId,
        ns: &str,
    ) -> Result<(), r2r::Error> {
        let service = Box::new(node.create_service::<SwitchController::Service>(
            &topic(ns, "switch_controller"),
            QosProfile::default(),
        )?);
        let owner_topic = node.create_publisher(&topic(ns, "controller_owner"), latched())?;
        self.robots.insert(
            id,
            RobotSwitch {
                robot,
                service,
                owner_topic,
                pending: Vec::new(),
            },
        );
        self.publish_owner(id);
        Ok(())
    }

    /// Destroys robot `id`'s service and topic (pending calls are answered: refused).
    pub fn remove(&mut self, node: &mut r2r::Node, id: NodeId) {
        let Some(r) = self.robots.remove(&id) else {
            return;
        };
        for p in r.pending {
            answer(p.call, false, "the robot is no longer driven".into());
        }
        node.destroy_publisher(r.owner_topic);
    }

    /// What the RT thread last reported of robot slot `robot`.
    pub fn report(&self, robot: RobotId) -> OwnerReport {
        self.reports.get(&robot).copied().unwrap_or_default()
    }

    /// The name of an owner (its number if the names do not know it).
    pub fn name(&self, owner: OwnerId) -> String {
        self.names
            .name(owner)
            .map_or_else(|| format!("owner {}", owner.0), str::to_owned)
    }

    /// The RT thread reported `owner` in effect on `robot` (with its dropped count): answers the
    /// calls it confirms, publishes a change.
    pub fn on_owner(&mut self, robot: RobotId, owner: OwnerId, dropped: u32) {
        let before = self.reports.insert(robot, OwnerReport { owner, dropped });
        let name = self.name(owner);
        let ids: Vec<NodeId> = self
            .robots
            .iter()
            .filter(|(_, r)| r.robot == robot)
            .map(|(id, _)| *id)
            .collect();
        for id in ids {
            if let Some(r) = self.robots.get_mut(&id) {
                let (done, waiting): (Vec<_>, Vec<_>) =
                    r.pending.drain(..).partition(|p| p.wanted == owner);
                r.pending = waiting;
                for p in done {
                    answer(p.call, true, format!("{name} owns the wheels"));
                }
            }
            if before.is_none_or(|b| b.owner != owner) {
                self.publish_owner(id);
            }
        }
    }

    fn publish_owner(&self, id: NodeId) {
        let Some(r) = self.robots.get(&id) else {
            return;
        };
        let data = self.name(self.report(r.robot).owner);
        if let Err(e) = r.owner_topic.publish(&RosString { data }) {
            self.reporter
                .warn(&format!("node {id}: cannot publish controller_owner: {e}"));
        }
    }

    /// Takes the switch calls (never waits) and answers those that timed out.
    pub fn serve(&mut self, now: Instant) {
        let names: Vec<&str> = self.names.all().collect();
        for (id, r) in self.robots.iter_mut() {
            for call in drain(&mut r.service).collect::<Vec<_>>() {
                let wanted = call.message.owner.clone();
                if wanted == nrt_interface::calibration::ACTION {
                    // its controller only works with a goal: owned through the action only
                    let msg = format!(
                        "{wanted} takes the wheels through its action (calibrate_motors) only"
                    );
                    answer(call, false, msg);
                    continue;
                }
                let Some(owner) = self.names.id(&wanted) else {
                    answer(
                        call,
                        false,
                        format!(
                            "unknown owner {wanted:?}: the owners are {}",
                            names.join(", ")
                        ),
                    );
                    continue;
                };
                if let Err(e) = self.params.nrt_request_owner(r.robot, owner) {
                    answer(call, false, format!("node {id}: {e}"));
                    continue;
                }
                r.pending.push(Pending {
                    call,
                    wanted: owner,
                    until: now + SWITCH_TIMEOUT,
                });
            }
            let kept = self.reports.get(&r.robot).map_or(OwnerId::ROS, |o| o.owner);
            let kept = self
                .names
                .name(kept)
                .map_or_else(|| format!("owner {}", kept.0), str::to_owned);
            let (late, waiting): (Vec<_>, Vec<_>) =
                r.pending.drain(..).partition(|p| p.until <= now);
            r.pending = waiting;
            for p in late {
                answer(
                    p.call,
                    false,
                    format!(
                        "the RT thread did not switch to {} within {} ms: {kept} still owns the wheels",
                        self.names.name(p.wanted).unwrap_or("?"),
                        SWITCH_TIMEOUT.as_millis()
                    ),
                );
            }
        }
    }
}

fn answer(call: ServiceRequest<SwitchController::Service>, success: bool, message: String) {
    // A client that left is not an error of the switch.
    let _ = call.respond(SwitchController::Response { success, message });
}
