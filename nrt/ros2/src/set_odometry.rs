//! `/<ns>/thymio_driver/set_odometry` (`thymio_rt_msgs/srv/SetOdometry`) of each driven robot on ROS 2: each call is
//! answered by the layer ([`nrt_interface::set_odometry`]) in the NRT loop's iteration that sees it.

use super::report::Reporter;
use super::thymio_endpoints::topic;
use super::{drain, Srv};
use handoff::NodeId;
use nrt_engine::engine::Engine;
use nrt_interface::set_odometry::{set_odometry, SetOdometryRequest, SET_ODOMETRY};
use r2r::thymio_rt_msgs::srv::SetOdometry;
use r2r::QosProfile;
use std::collections::BTreeMap;

/// The `set_odometry` services of the driven robots.
pub struct OdometryResets {
    reporter: Reporter,
    robots: BTreeMap<NodeId, Srv<SetOdometry::Service>>,
}

impl OdometryResets {
    /// No robot yet.
    pub fn new(reporter: Reporter) -> OdometryResets {
        OdometryResets {
            reporter,
            robots: BTreeMap::new(),
        }
    }

    /// Creates robot `id`'s service under `ns` (relative to `node`'s namespace).
    pub fn add(&mut self, node: &mut r2r::Node, id: NodeId, ns: &str) -> Result<(), r2r::Error> {
        let service = node.create_service::<SetOdometry::Service>(
            &topic(ns, SET_ODOMETRY),
            QosProfile::default(),
        )?;
        self.robots.insert(id, Box::new(service));
        Ok(())
    }

    /// Drops robot `id`'s service.
    pub fn remove(&mut self, id: NodeId) {
        self.robots.remove(&id);
    }

    /// Answers the calls that came (never waits).
    pub fn serve(&mut self, engine: &mut Engine) {
        for (id, service) in self.robots.iter_mut() {
            for call in drain(service).collect::<Vec<_>>() {
                let m = &call.message;
                let request = SetOdometryRequest {
                    x: m.x,
                    y: m.y,
                    z: m.z,
                    roll: m.roll,
                    pitch: m.pitch,
                    yaw: m.yaw,
                };
                let (success, message) = set_odometry(engine, *id, &request, &self.reporter);
                // a client that left is not an error of the driver
                let _ = call.respond(SetOdometry::Response { success, message });
            }
        }
    }
}
