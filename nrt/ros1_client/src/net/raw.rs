//! Topics and services of a type known only at run time ([`crate::dynamic`]): the type is given by a descriptor
//! (what the connection header carries) and messages go as serialised bytes, through the same publications,
//! subscriptions and service entries as the typed ones.

use super::descriptor::{frame, RawDescriptor, RawMessage, RawServiceDescriptor};
use super::publisher::Publisher;
use super::service::ServiceEntry;
use super::subscriber::Subscriber;
use super::{NetError, Node, ServiceServer};
use std::sync::Arc;

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
