//! ROS 2 bridge (feature `ros2`): the NRT thread that owns the r2r node.
//!
//! Usage (the NRT thread of `thymio-rt run`):
//! 1. [`RosNode::new`] creates the node `asebaros` (the process's `--ros-args` apply);
//! 2. [`RosNode::parameter_overrides`] gives the parameters passed to it as dotted configuration entries, to merge
//!    over the YAML configuration (one naming scheme: `nodes.thymio.prefix` is YAML `nodes: {thymio: {prefix:}}`);
//! 3. the engine is built from the merged configuration, and [`RosNode::start`] serves the effective
//!    configuration as the node's parameters ([`bridge_params`]) and creates the ROS interface ([`aseba`],
//!    [`thymio`], and a `thymio_driver` node per driven robot: [`driver_node`]);
//! 4. the NRT loop drives the running bridge as one of its front ends ([`nrt_interface::FrontEnd`], one
//!    iteration: [`nrt_interface::front_end::step`]).
//!
//! Two threads skip the loop on the latency-critical paths: `cmd_vel` is taken by a hidden hot node spun by its own
//! thread ([`hot`]) and goes straight to the RT set-point; odometry comes from the RT thread through a ring of its
//! own to a publisher thread ([`odom_pub`]) that publishes it at once. Each hop is timed ([`nrt_interface::hop_times`]) and shown in
//! `/diagnostics` and `--report`.
//!
//! The r2r node is spun on a thread of its own ([`spinner`]); the loop never blocks on anything but the engine's
//! doorbell, rung by the RT thread and the spinner (at most `spin_period`): services and subscriptions are drained
//! without waiting, replies that need the Aseba network (`get_variable`) are answered when the engine reports them,
//! and the links are only reached through the engine and its rings to the RT thread.
//!
//! The crate is empty without its feature `ros2` (so the workspace builds without a ROS 2 toolchain); the feature
//! `ros2` of the root package enables it.
#![cfg(feature = "ros2")]
#![warn(missing_docs)]

pub mod action_cancels;
pub mod action_server;
pub mod aseba;
mod bridge;
pub mod bridge_params;
pub mod calibration_action;
pub mod control;
pub mod controllers;
pub mod convert;
pub mod dds_boundary;
pub mod diagnostics;
pub mod driver_node;
pub mod goal_actions;
pub mod ground_truth;
pub mod hot;
pub mod joints;
pub mod lifecycle;
pub mod msg_endpoints;
pub mod names;
mod node_name;
pub mod odom_pub;
pub mod owner_switch;
pub mod param_server;
pub mod params;
pub mod params_file;
mod qos;
pub mod replay_pub;
pub mod report;
mod sensor_publishers;
pub mod set_odometry;
pub mod spinner;
pub mod thymio;
pub mod thymio_conv;
mod thymio_endpoints;

pub use bridge::{RosBridge, RosNode};
/// The ROS 2 client library and the Stream trait its subscriptions need, for the zero-work floor program of the
/// latency benchmark (bench/latency/floor.rs), which may not declare them itself.
pub use {futures, r2r};

use futures::{FutureExt, Stream, StreamExt};
use std::time::Duration;

/// A subscription's stream.
pub(crate) type Sub<T> = Box<dyn Stream<Item = T> + Unpin>;
/// A service's stream of calls.
pub(crate) type Srv<T> = Box<dyn Stream<Item = r2r::ServiceRequest<T>> + Unpin>;

/// What is pending in `stream` now, without waiting.
pub(crate) fn drain<S: Stream + Unpin + ?Sized>(
    stream: &mut S,
) -> impl Iterator<Item = S::Item> + '_ {
    std::iter::from_fn(move || stream.next().now_or_never().flatten())
}

/// Options of the bridge node.
#[derive(Debug, Clone, PartialEq)]
pub struct RosOptions {
    /// Node name (`asebaros`, as the bridge it replaces).
    pub node_name: String,
    /// Node namespace (`""`); the interface's names are relative to it.
    pub namespace: String,
    /// Longest wait in one iteration while the engine needs polling (an Aseba switch client is connected, frames
    /// wait for the RT ring, or the RT thread does not ring); otherwise the engine's timers bound the wait
    /// ([`nrt_engine::engine::Engine::longest_wait`]). RT events and ROS messages wake the loop at once.
    pub spin_period: Duration,
    /// Period of `/diagnostics`.
    pub diagnostics_period: Duration,
}

impl Default for RosOptions {
    fn default() -> Self {
        Self {
            node_name: "asebaros".into(),
            namespace: String::new(),
            spin_period: Duration::from_millis(1),
            diagnostics_period: Duration::from_secs(1),
        }
    }
}

impl RosOptions {
    fn validate(&self) -> Result<(), RosError> {
        if !names::is_valid_token(&self.node_name) {
            return Err(RosError::Name(names::NameError(self.node_name.clone())));
        }
        let ns = self.namespace.strip_prefix('/').unwrap_or(&self.namespace);
        names::check_namespace(ns).map_err(RosError::Name)?;
        if self.spin_period.is_zero() {
            return Err(RosError::SpinPeriod);
        }
        Ok(())
    }
}

/// Errors of the ROS bridge.
#[derive(Debug, thiserror::Error)]
pub enum RosError {
    /// A node name or namespace that ROS refuses.
    #[error("ROS node: {0}")]
    Name(#[from] names::NameError),
    /// A zero spin period would make the loop spin without waiting.
    #[error("the spin period must be positive")]
    SpinPeriod,
    /// rcl could not start (context, node or clocks).
    #[error("cannot start ROS 2: {0}")]
    Init(r2r::Error),
    /// rcl refused a topic, service or parameter service.
    #[error("cannot create the ROS interface: {0}")]
    Interface(r2r::Error),
    /// A `--params-file` could not be read.
    #[error(transparent)]
    ParamsFile(#[from] params_file::ParamsFileError),
    /// The parameter service could not be started.
    #[error("cannot start the parameter service: {0}")]
    Spawn(String),
}

#[cfg(test)]
mod hot_path_tests;
#[cfg(test)]
#[path = "../../../tests/ros/rclpy_peer.rs"]
mod rclpy_peer;
#[cfg(test)]
mod smoke_tests;
