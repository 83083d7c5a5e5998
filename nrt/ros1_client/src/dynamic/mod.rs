//! ROS 1 messages of any type at run time (issue 27, item 3): [`Ros1Types`] resolves a type named
//! `pkg/msg/Type` / `pkg/Type` (services: `pkg/srv/Name` / `pkg/Name`) to its md5sum, full definition and field
//! layout ([`MessageType`], [`ServiceType`]); [`MessageType::encode`] and [`MessageType::decode`] convert between
//! the ROS 1 serialisation and JSON values in the ROS 2 shape (r2r's serde shape), so that one conversion function
//! serves both transports. The transport carries the bytes ([`crate::net::RawDescriptor`],
//! [`crate::graph::Graph::advertise_raw`], [`crate::graph::Graph::subscribe_raw`],
//! [`crate::graph::Graph::serve_raw`]).
//!
//! All of this is NRT: resolution reads files and allocates, the codec allocates.

mod decode;
mod encode;
pub mod parse;
mod types;

#[cfg(test)]
mod tests;

pub use parse::{Arity, Primitive};
pub use types::{Field, FieldKind, MessageType, Ros1Types, ServiceType, MSG_PATH_VAR};

use std::path::PathBuf;

/// Why a type could not be resolved.
#[derive(Debug, thiserror::Error)]
pub enum TypeError {
    /// The name is not a ROS type name.
    #[error("{name:?} is not a ROS type name ({expected})")]
    BadName {
        /// As given.
        name: String,
        /// The accepted forms.
        expected: &'static str,
    },
    /// No definition anywhere.
    #[error(
        "unknown ROS 1 type {name}: not among the definitions built in, nor under the package roots of \
         ROS_PACKAGE_PATH and THYMIO_RT_ROS1_MSG_PATH (searched: {})",
        if searched.is_empty() { "none set".to_owned() } else {
            searched.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
        }
    )]
    Unknown {
        /// `pkg/msg/Type` or `pkg/srv/Name`.
        name: String,
        /// The package roots searched after the built-in definitions.
        searched: Vec<PathBuf>,
    },
    /// A definition file could not be read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// Which.
        path: PathBuf,
        /// Cause.
        #[source]
        source: std::io::Error,
    },
    /// A definition is not valid.
    #[error("the definition of {name} is not valid: {reason}")]
    Parse {
        /// The type.
        name: String,
        /// Where and why.
        reason: String,
    },
    /// A field's type could not be resolved.
    #[error("{name}.{field}: {source}")]
    Field {
        /// The type having the field.
        name: String,
        /// The field.
        field: String,
        /// Why its type could not be resolved.
        #[source]
        source: Box<TypeError>,
    },
    /// A type contains itself.
    #[error("a ROS message cannot contain itself: {0}")]
    Recursive(String),
}

/// Why a value could not be encoded or bytes decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CodecError {
    /// A field's value (or bytes) is wrong.
    #[error("{path}: {reason} (a {ty})")]
    Value {
        /// The message type.
        ty: String,
        /// The field path (`pose.position.x`, `position[2]`; `.` for the message itself).
        path: String,
        /// Why.
        reason: String,
    },
    /// Bytes follow the end of the message.
    #[error("{extra} bytes after the end of the {ty}")]
    Trailing {
        /// The message type.
        ty: String,
        /// How many.
        extra: usize,
    },
}

/// The path of the field being converted (rendered only for an error).
#[derive(Debug, Default)]
pub(crate) struct FieldPath(Vec<Segment>);

#[derive(Debug)]
enum Segment {
    Field(String),
    Index(usize),
}

impl FieldPath {
    pub(crate) fn push_field(&mut self, name: &str) {
        self.0.push(Segment::Field(name.to_owned()));
    }

    pub(crate) fn push_index(&mut self, i: usize) {
        self.0.push(Segment::Index(i));
    }

    pub(crate) fn pop(&mut self) {
        self.0.pop();
    }
}

impl std::fmt::Display for FieldPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.0.is_empty() {
            return f.write_str(".");
        }
        for (i, s) in self.0.iter().enumerate() {
            match s {
                Segment::Field(n) if i == 0 => f.write_str(n)?,
                Segment::Field(n) => write!(f, ".{n}")?,
                Segment::Index(k) => write!(f, "[{k}]")?,
            }
        }
        Ok(())
    }
}
