//! ROS 1 front end (feature `ros1`): asebaros' and ROS-Thymio's ROS 1 interface, the mapping of the layer
//! (`nrt_interface`) onto the ROS 1 client library of `nrt_ros1_client` (our own TCPROS and XML-RPC node transport,
//! [`net`]; no ROS install: the message types are roslibrust's, generated at build time from the definitions
//! vendored in `nrt/ros1_client/msg/`, with their ROS 1 MD5 sums), registered with the master of
//! `ROS_MASTER_URI`.
//!
//! Usage (the NRT thread of `thymio-rt run --ros1`):
//! 1. [`Ros1Node::new`] makes the node `/asebaros` (in `ROS_NAMESPACE`), listening on and advertising the address
//!    of `ROS_HOSTNAME` / `ROS_IP` ([`net::addr`]);
//! 2. [`Ros1Node::parameter_overrides`] reads the parameter server (ROS-Thymio's ROS 1 names, at start only);
//! 3. the engine is built from the merged configuration, and [`Ros1Node::start`] creates the interface
//!    ([`aseba`], [`thymio`], [`joints`], [`control`]; [`ground_truth`] when a simulator runs) and the odometry
//!    publisher ([`odom_pub`]) and master watcher ([`nrt_ros1_client::watch`]) threads;
//! 4. the NRT loop drives the running bridge as one of its front ends ([`nrt_interface::FrontEnd`]).
//!
//! Hot paths as in ROS 2: `cmd_vel` goes to the RT set-point from the socket task that received it; odometry is
//! published by a thread of its own on its own RT ring. [`nrt_ros1_client::master`] calls the master
//! (registration, parameters) and [`nrt_ros1_client::watch`] registers everything again with a restarted master.
#![cfg(feature = "ros1")]
#![warn(missing_docs)]

pub mod action_server;
pub mod aseba;
mod bridge;
pub mod calibration;
pub mod cmd_vel;
pub mod control;
mod control_inbox;
pub mod controllers;
pub mod conv;
pub mod goal_actions;
pub mod ground_truth;
pub mod joints;
pub mod lifecycle;
pub mod odom_pub;
pub mod params;
pub mod reconfigure;
pub mod rivals;
pub mod rosout;
pub mod thymio;
pub mod thymio_inputs;
pub mod thymio_outputs;

pub use bridge::{Ros1Bridge, Ros1Node};

/// The ROS 1 client library the front end is made on (its transport, graph and message types), under the names
/// the driver's tests and benches use.
pub use nrt_ros1_client::{net, remap, ros1_msgs};

/// Options of the ROS 1 node.
#[derive(Debug, Clone, PartialEq)]
pub struct Ros1Options {
    /// The master (`ROS_MASTER_URI`).
    pub master_uri: String,
    /// Node name (`asebaros`, as the bridge it replaces).
    pub node_name: String,
    /// Namespace of the node and its interface (`ROS_NAMESPACE`, "" by default).
    pub namespace: String,
    /// Remappings `(from, to)` as given (`from:=to`), resolved for the node when it is made ([`remap`]).
    pub remaps: Vec<(String, String)>,
}

impl Ros1Options {
    /// From the environment: `ROS_MASTER_URI` (required), `ROS_NAMESPACE` (optional).
    pub fn from_env() -> Result<Ros1Options, Ros1Error> {
        let master_uri = std::env::var("ROS_MASTER_URI")
            .ok()
            .filter(|u| !u.is_empty())
            .ok_or(Ros1Error::NoMaster)?;
        Ok(Ros1Options {
            master_uri,
            node_name: "asebaros".into(),
            namespace: std::env::var("ROS_NAMESPACE").unwrap_or_default(),
            remaps: Vec::new(),
        })
    }

    fn validate(&self) -> Result<(), Ros1Error> {
        if !self.master_uri.starts_with("http://") {
            return Err(Ros1Error::MasterUri(self.master_uri.clone()));
        }
        let ok = |s: &str| {
            s.split('/')
                .filter(|p| !p.is_empty())
                .all(|p| p.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
        };
        if self.node_name.is_empty() || self.node_name.contains('/') || !ok(&self.node_name) {
            return Err(Ros1Error::Name(self.node_name.clone()));
        }
        if !ok(&self.namespace) {
            return Err(Ros1Error::Name(self.namespace.clone()));
        }
        Ok(())
    }
}

/// Errors of the ROS 1 front end.
#[derive(Debug, thiserror::Error)]
pub enum Ros1Error {
    /// No master given.
    #[error("ROS_MASTER_URI is not set (e.g. export ROS_MASTER_URI=http://127.0.0.1:11311)")]
    NoMaster,
    /// Not an http URI.
    #[error("ROS_MASTER_URI {0:?} is not an http:// URI")]
    MasterUri(String),
    /// A node name or namespace ROS refuses.
    #[error("{0:?} is not a valid ROS name")]
    Name(String),
    /// A remapping argument that cannot be honoured.
    #[error(transparent)]
    Remap(#[from] remap::RemapError),
    /// The node could not start, a registration or a publication failed.
    #[error(transparent)]
    Graph(#[from] nrt_ros1_client::graph::GraphError),
    /// The master did not answer in time.
    #[error("no answer from the ROS master in time ({0})")]
    Timeout(String),
    /// A topic or service could not be registered.
    #[error("cannot register {0}: {1}")]
    Register(String, #[source] anyhow::Error),
    /// The parameter server could not be read.
    #[error("parameters {0}: {1}")]
    Params(String, #[source] anyhow::Error),
    /// The engine's odometry ring for this front end is already taken.
    #[error("no RT odometry ring left for ROS 1 (set ChannelConfig::odometry_out_consumers)")]
    OdometryRing,
    /// A thread could not start.
    #[error("cannot start the ROS 1 {0} thread: {1}")]
    Thread(&'static str, #[source] std::io::Error),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_are_checked() {
        let o = Ros1Options {
            master_uri: "http://127.0.0.1:11311".into(),
            node_name: "asebaros".into(),
            namespace: "/lab".into(),
            remaps: Vec::new(),
        };
        assert!(o.validate().is_ok());
        let bad_uri = Ros1Options {
            master_uri: "127.0.0.1:11311".into(),
            ..o.clone()
        };
        assert!(matches!(bad_uri.validate(), Err(Ros1Error::MasterUri(_))));
        let bad_name = Ros1Options {
            node_name: "a b".into(),
            ..o
        };
        assert!(matches!(bad_name.validate(), Err(Ros1Error::Name(_))));
    }
}
