//! What the transport needs of a type known only at run time: a message type's or a service type's descriptor (the
//! connection header's `type`, `md5sum`, `message_definition`), the bytes-carrying message type and a TCPROS frame
//! (a leaf module: the publications, subscriptions and service entries use it, [`super::raw`] builds on them).

use roslibrust::RosMessageType;

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
pub(crate) fn frame(body: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(4 + body.len());
    out.extend_from_slice(&(body.len() as u32).to_le_bytes());
    out.extend_from_slice(body);
    out
}
