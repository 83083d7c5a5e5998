//! The communication switch of each robot on ROS 2 (the behaviour is the layer's,
//! [`nrt_interface::owner_switch`]): `/<ns>/switch_controller` (`thymio_rt_msgs/srv/SwitchController`)
//! and `/<ns>/controller_owner` (`std_msgs/String`, reliable + transient-local: a late subscriber
//! gets the owner in effect). Each call is handed to the layer held (r2r answers a service request
//! whenever it is given back), so neither the spinner nor the NRT loop waits for the RT thread.

use super::report::Reporter;
use super::thymio_endpoints::{latched, topic};
use super::{drain, Srv};
use handoff::NodeId;
use nrt_engine::engine::Engine;
use nrt_interface::owner_switch::Switch;
use nrt_interface::reply::held;
use r2r::std_msgs::msg::String as RosString;
use r2r::thymio_rt_msgs::srv::SwitchController;
use r2r::{Publisher, QosProfile};
use std::collections::BTreeMap;
use std::time::Instant;

struct RobotSwitch {
    service: Srv<SwitchController::Service>,
    owner_topic: Publisher<RosString>,
    /// What `controller_owner` last said.
    published: Option<String>,
}

/// The switches' endpoints of the driven robots.
pub struct Switches {
    reporter: Reporter,
    robots: BTreeMap<NodeId, RobotSwitch>,
}

impl Switches {
    /// No robot yet.
    pub fn new(reporter: Reporter) -> Switches {
        Switches {
            reporter,
            robots: BTreeMap::new(),
        }
    }

    /// Creates robot `id`'s service and owner topic under `ns` (relative to `node`'s namespace);
    /// the owner in effect is published at the end of the iteration ([`Self::publish`]).
    pub fn add(&mut self, node: &mut r2r::Node, id: NodeId, ns: &str) -> Result<(), r2r::Error> {
        let service = Box::new(node.create_service::<SwitchController::Service>(
            &topic(ns, "switch_controller"),
            QosProfile::default(),
        )?);
        let owner_topic = node.create_publisher(&topic(ns, "controller_owner"), latched())?;
        self.robots.insert(
            id,
            RobotSwitch {
                service,
                owner_topic,
                published: None,
            },
        );
        Ok(())
    }

    /// Destroys robot `id`'s topic and service (the layer refused its held calls).
    pub fn remove(&mut self, node: &mut r2r::Node, id: NodeId) {
        if let Some(r) = self.robots.remove(&id) {
            node.destroy_publisher(r.owner_topic);
        }
    }

    /// Hands the switch calls to the layer (never waits).
    pub fn serve(&mut self, engine: &Engine, switch: &mut Switch, now: Instant) {
        let params = engine.live_params();
        for (id, r) in self.robots.iter_mut() {
            for call in drain(&mut r.service).collect::<Vec<_>>() {
                let owner = call.message.owner.clone();
                let reply = held(move |(success, message)| {
                    // a client that left is not an error of the switch
                    let _ = call.respond(SwitchController::Response { success, message });
                });
                switch.request(&params, *id, &owner, reply, now);
            }
        }
    }

    /// Publishes each robot's owner when it changed.
    pub fn publish(&mut self, switch: &Switch) {
        for (id, r) in self.robots.iter_mut() {
            let Some(data) = switch.owner_name(*id) else {
                continue;
            };
            if r.published.as_ref() == Some(&data) {
                continue;
            }
            // said once per change, as it is published once
            if let Err(e) = r.owner_topic.publish(&RosString { data: data.clone() }) {
                self.reporter
                    .warn(&format!("node {id}: cannot publish controller_owner: {e}"));
            }
            r.published = Some(data);
        }
    }
}
