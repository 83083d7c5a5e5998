//! Topics and services of a type known only at run time ([`crate::dynamic`]): the type is given by a descriptor
//! (what the connection header carries) and messages go as serialised bytes, through the same publications,
//! subscriptions and service entries as the typed ones.

use super::publisher::Publisher;
use super::service::ServiceEntry;
use super::subscriber::Subscriber;
use super::{NetError, Node, ServiceServer};
use roslibrust::RosMessageType;
use std::sync::Arc;

/// A message type as the transport needs it (the connection header's `type`, `md5sum`, `message_definition`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawDescriptor {
    /// `package/Type`.
    pub ros_type: String,
    /// The ROS 1 md5sum.
    pub md5sum: String,
    /// The full definition (with its dependencies).
    pub definition: String,
}

impl RawDescriptor {
    /// The descriptor of the generated type `T`.
    pub fn of<T: RosMessageType>() -> RawDescriptor {
        let d = &T::DESCRIPTION;
        RawDescriptor {
            ros_type: d.ros_type_name.to_owned(),
            md5sum: d.md5sum.to_owned(),
            definition: d.definition.to_owned(),
        }
    }
}

/// A service type as the transport needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawServiceDescriptor {
    /// `package/Name`.
    pub ros_type: String,
    /// The ROS 1 md5sum of the service.
    pub md5sum: String,
    /// `package/NameRequest`.
    pub request_type: String,
    /// `package/NameResponse`.
    pub response_type: String,
}

/// The message type of handles that carry serialised bytes ([`Publisher::publish_bytes`],
/// [`Subscriber::next_bytes`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RawMessage {}

/// `body` with its 4-byte little-endian length prefix (a TCPROS frame).
pub(super) fn frame(body: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(4 + body.len());
    out.extend_from_slice(&(body.len() as u32).to_le_bytes());
    out.extend_from_slice(body);
    out
}

impl Node {
    /// Advertises `topic` (global) of the type `d`, messages given as bytes ([`Publisher::publish_bytes`]); as
    /// [`Node::advertise`] otherwise (blocking: a master round trip).
    pub fn advertise_raw(
        &self,
        topic: &str,
        d: &RawDescriptor,
        queue: usize,
        latched: bool,
    ) -> Result<Publisher<RawMessage>, NetError> {
        self.advertise_as(topic, d, queue, latched)
    }

    /// Subscribes to `topic` (global) of the type `d`, messages taken as bytes ([`Subscriber::next_bytes`]); as
    /// [`Node::subscribe`] otherwise (blocking: a master round trip).
    pub fn subscribe_raw(
        &self,
        topic: &str,
        d: &RawDescriptor,
        queue: usize,
    ) -> Result<Subscriber<RawMessage>, NetError> {
        self.subscribe_as(topic, d, queue, None)
    }

    /// Serves `name` (global) of the type `d` with `f`, which takes the serialised request and gives the serialised
    /// response or the error message for the caller (called on the runtime's blocking pool); as [`Node::serve`]
    /// otherwise (blocking: a master round trip).
    pub fn serve_raw(
        &self,
        name: &str,
        d: &RawServiceDescriptor,
        f: impl Fn(Vec<u8>) -> Result<Vec<u8>, String> + Send + Sync + 'static,
    ) -> Result<ServiceServer, NetError> {
        self.serve_entry(name, ServiceEntry::raw(name, d, f))
    }
}

impl Publisher<RawMessage> {
    /// Queues the serialised message `body` (without length prefix) for every subscriber (never waits). The bytes
    /// are not checked against the type: encode them with [`crate::dynamic::MessageType::encode`].
    pub fn publish_bytes(&self, body: &[u8]) -> Result<(), NetError> {
        self.p.send(Arc::new(frame(body)));
        Ok(())
    }
}

impl Subscriber<RawMessage> {
    /// The next serialised message (without length prefix; `None` once the node is gone): decode it with
    /// [`crate::dynamic::MessageType::decode`].
    pub async fn next_bytes(&mut self) -> Option<Vec<u8>> {
        let mut frame = self.s.queue.pop().await?;
        frame.drain(..4.min(frame.len()));
        Some(frame)
    }
}
