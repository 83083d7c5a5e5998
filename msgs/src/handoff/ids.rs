//! Ids of the RT thread's slots and where a frame goes.

/// Most links the RT thread owns at once (link ids are `0..MAX_LINKS`).
pub const MAX_LINKS: usize = 64;
/// Most robots the RT thread drives (robot ids are `0..MAX_ROBOTS`).
pub const MAX_ROBOTS: usize = 64;
/// Index of a link slot of the RT thread.
pub type LinkId = u8;
/// Index of a robot of the RT thread (the NRT side maps nodes/namespaces to robot ids).
pub type RobotId = u8;

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
    pub(crate) fn to_byte(self) -> u8 {
        match self {
            LinkTarget::One(l) => l,
            LinkTarget::All => ALL_LINKS,
        }
    }
    pub(crate) fn from_byte(b: u8) -> Self {
        if b == ALL_LINKS {
            LinkTarget::All
        } else {
            LinkTarget::One(b)
        }
    }
}
