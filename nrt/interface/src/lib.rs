//! The ROS interface of thymio-rt described once, front-end-agnostic: asebaros' and thymio_driver's topics,
//! services, actions and parameters and the control layer (communication switch, joint space, RT controllers'
//! endpoints, calibration action), with their behaviour — validation and refusal reasons, error reporting, event
//! routing, the state machines of held calls and goals with their timeouts — and the content of their messages as
//! neutral types.
//!
//! A front end (ROS 2 through r2r in `nrt-ros2`, ROS 1 through our own transport in `nrt-ros1`) is a transport: it
//! creates the endpoints this layer lists, maps the neutral types to its generated message types (one conversion per
//! message type), hands what it receives to the layer and sends what the layer gives back. Nothing here knows a ROS
//! client library.
//!
//! The pieces:
//! - [`names`]: how the interface's names are made (robot namespaces, relative names);
//! - [`reply`]: a held call (a service request or an action goal the front end answers later), whatever the
//!   transport;
//! - [`joints`]: the joint space (joint command validation, extended joint states, the joint state rate rule);
//! - [`ground_truth`]: the embedded simulator's true poses as odometry, published from one thread to every front
//!   end;
//! - [`hop_times`]: the hops the front ends time, and their `/diagnostics` status;
//! - [`params`]: the nodes' parameters (tables, verdicts of a set);
//! - [`report`]: the lines a ROS user reads (console and every front end's `/rosout`);
//! - [`owner_switch`]: each robot's communication switch (`switch_controller`, `controller_owner`);
//! - [`controllers`]: the RT controllers' endpoints and parameters;
//! - [`controller_budget`]: the RT controllers' time and budget (`/diagnostics`, the stop over budget);
//! - [`action`]: one state machine for the actions whose goal an RT controller runs (the goal actions, the
//!   calibration), generic over the kind of action;
//! - [`calibration`]: the motor calibration action's goals (every driven Thymio's `calibrate_motors`);
//! - [`goal_actions`]: the goal actions' goals (`drive_distance`, `rotate_angle`, `navigate_to_position`), one state
//!   machine for every goal controller;
//! - asebaros: [`aseba`] (node list, descriptions, event routing), [`load_script`];
//! - thymio_driver: [`frames`] (prefixes, URDF), [`odometry`] (`odom` with its covariances, `/tf`, wheel
//!   `joint_states`, rate limit), [`odom_demand`] (samples handed over only while someone listens),
//!   [`set_odometry`] (the pose reset),
//!   [`tf`] (the merged `/tf_static`), [`sensors`], [`actuators`], [`cmd_vel`] (the set-point, its stale-stamp rule
//!   and its refusals); [`geometry`] (stamps, headers, transforms) is shared by their messages.
#![warn(missing_docs)]

pub mod action;
pub mod actuators;
pub mod aseba;
pub mod battery;
pub mod calibration;
pub mod cmd_vel;
pub mod companion;
pub mod controller_budget;
pub mod controllers;
pub mod driver_events;
pub mod frames;
pub mod front_end;
pub mod geometry;
pub mod goal_actions;
pub mod ground_truth;
pub mod held_calls;
pub mod hop_times;
pub mod joints;
pub mod lifecycle;
pub mod load_script;
pub mod names;
pub mod odom_burst;
pub mod odom_demand;
pub mod odom_targets;
pub mod odom_thread;
pub mod odometry;
pub mod owner_switch;
pub mod params;
pub mod reply;
pub mod report;
pub mod sensor_topics;
pub mod sensors;
pub mod set_odometry;
pub mod tf;

pub use front_end::{FrontEnd, Interface};
