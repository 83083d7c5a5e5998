//! Ids of the RT thread's slots and where a frame goes.

/// Most links the RT thread owns at once (link ids are `0..MAX_LINKS`).
pub const MAX_LINKS: usize = 64;
/// Most robots the RT thread drives (robot ids are `0..MAX_ROBOTS`).
pub const MAX_ROBOTS: usize = 64;
/// Index of a link slot of the RT thread (`0..MAX_LINKS`).
#[repr(transparent)]
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Default,
    serde::Serialize,
    serde::Deserialize,
)]
pub struct LinkId(pub u8);

/// Index of a robot slot of the RT thread (`0..MAX_ROBOTS`; the NRT side maps nodes and
/// namespaces to robot ids).
#[repr(transparent)]
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Default,
    serde::Serialize,
    serde::Deserialize,
)]
pub struct RobotId(pub u8);

/// Id of an Aseba node on the network (the source of its frames).
#[repr(transparent)]
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Default,
    serde::Serialize,
    serde::Deserialize,
)]
pub struct NodeId(pub u16);

macro_rules! id_impls {
    ($($t:ident),*) => {$(
        impl $t {
            /// As an index into a table of slots.
            pub const fn index(self) -> usize {
                self.0 as usize
            }
        }
        impl std::fmt::Display for $t {
            /// The bare number (as log messages and ROS names always printed it).
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                self.0.fmt(f)
            }
        }
    )*};
}
id_impls!(LinkId, RobotId, NodeId);

/// Target byte meaning "every link".
pub(crate) const ALL_LINKS: u8 = 0xFF;

/// Where a frame from NRT goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LinkTarget {
    /// One link.
    One(LinkId),
    /// Every connected link.
    All,
}

impl LinkTarget {
    /// Its one-byte form (the link slot, 0xFF for every link): ring records, the flight recorder.
    pub fn to_byte(self) -> u8 {
        match self {
            LinkTarget::One(l) => l.0,
            LinkTarget::All => ALL_LINKS,
        }
    }
    /// The target a byte of [`LinkTarget::to_byte`] names.
    pub fn from_byte(b: u8) -> Self {
        if b == ALL_LINKS {
            LinkTarget::All
        } else {
            LinkTarget::One(LinkId(b))
        }
    }
}
