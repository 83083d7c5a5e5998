//! "ROS from the RT layer" (the XBotCore pattern, ROS-free here): typed hand-offs whose RT half
//! never blocks or allocates and whose NRT half is driven from a poll loop (the ROS 2 bridge
//! publishes, subscribes and serves with it).
//!
//! - [`RtPublisher`] / [`PublisherNrt`]: the RT side pushes values, the NRT side drains and
//!   publishes them. A full queue drops and counts.
//! - [`RtSubscriber`] / [`SubscriberNrt`]: the NRT callback stores the latest value, the RT side
//!   reads it wait-free (triple buffer).
//! - [`RtServiceServer`] / [`ServiceClientNrt`]: requests and responses through a ring pair.
//! - [`Controller`]: code that runs inside the RT cycle with read access to a robot's state and
//!   write access to its velocity command; [`ObstacleStop`] is the shipped example.

mod controller;
mod latest;
mod obstacle;
mod publisher;
mod service;

pub use controller::{Controller, RobotView};
pub use latest::{rt_subscriber, RtSubscriber, SubscriberNrt};
pub use obstacle::{ObstacleStop, ObstacleStopParams, ReflexEvent};
pub use publisher::{rt_publisher, PublisherNrt, RtPublisher};
pub use service::{rt_service, RequestId, RtServiceServer, ServiceClientNrt, ServiceError};
