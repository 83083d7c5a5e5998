//! What names a channel of a recording: its schema ([`SchemaDef`]) and its key ([`ChannelKey`]), shared by the
//! writer, its size accounting and its errors (a leaf module).

/// A channel's schema: `name` (e.g. `nav_msgs/msg/Odometry`), `encoding` (`ros2msg`, `jsonschema`, or "" for
/// none) and its text. A schema of encoding "" must have no data (its name still tells what the bytes are).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SchemaDef {
    /// The type's name.
    pub name: String,
    /// The schema's encoding ("" for none).
    pub encoding: String,
    /// The schema (empty with encoding "").
    pub data: Vec<u8>,
}

/// A channel of a [`Recording`], from [`Recording::channel`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ChannelKey(pub(crate) u16);
