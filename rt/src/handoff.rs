//! Hand-off of open links between the NRT side (which opens and drops them) and the RT thread
//! (which polls them but never drops one: dead links go back through [`LinkReturn`]).

use crate::link::Link;
use msgs::handoff::{LinkDownReason, MAX_LINKS};
use rtrb::{Consumer, Producer, RingBuffer};

/// An open link offered to the RT thread.
pub struct LinkOffer {
    /// Index of the target it was opened for (reported in `LinkUp`/`LinkDown`).
    pub target: u16,
    /// The link.
    pub link: Box<dyn Link>,
}

/// A link the RT thread gave back (dead, closed on request, no free slot, or shutdown).
pub struct LinkReturn {
    /// Its target index.
    pub target: u16,
    /// The link, to be dropped on the NRT side.
    pub link: Box<dyn Link>,
    /// Why.
    pub reason: LinkDownReason,
}

impl std::fmt::Debug for LinkOffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "LinkOffer(target {}, {:?})",
            self.target,
            self.link.kind()
        )
    }
}

impl std::fmt::Debug for LinkReturn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "LinkReturn(target {}, {:?}, {:?})",
            self.target,
            self.link.kind(),
            self.reason
        )
    }
}

/// A link that is never connected (fills rings without allocating).
struct NoLink;

impl Link for NoLink {
    fn read(&mut self, _: &mut [u8]) -> Result<usize, crate::link::LinkError> {
        Err(crate::link::LinkError::Eof)
    }
    fn write(&mut self, _: &[u8]) -> Result<usize, crate::link::LinkError> {
        Err(crate::link::LinkError::Eof)
    }
    fn kind(&self) -> msgs::handoff::LinkKind {
        msgs::handoff::LinkKind::Other
    }
}

/// NRT half: offers links, takes returned ones.
#[derive(Debug)]
pub struct NrtLinkPort {
    offers: Producer<LinkOffer>,
    returns: Consumer<LinkReturn>,
}

/// RT half (the RT loop takes offers and gives links back through it).
#[derive(Debug)]
pub struct RtLinkPort {
    pub(crate) offers: Consumer<LinkOffer>,
    pub(crate) returns: Producer<LinkReturn>,
}

/// A link port: `(rt, nrt)` halves. The return ring holds every link the RT thread may own plus every offer in
/// flight, so that giving one back never fails.
pub fn link_port() -> (RtLinkPort, NrtLinkPort) {
    let (mut op, mut oc) = RingBuffer::new(MAX_LINKS);
    let (mut rp, mut rc) = RingBuffer::new(2 * MAX_LINKS);
    // Touch every slot once (a zero-sized link: no allocation behind the boxes).
    while op
        .push(LinkOffer {
            target: 0,
            link: Box::new(NoLink),
        })
        .is_ok()
    {}
    while oc.pop().is_ok() {}
    while rp
        .push(LinkReturn {
            target: 0,
            link: Box::new(NoLink),
            reason: LinkDownReason::Shutdown,
        })
        .is_ok()
    {}
    while rc.pop().is_ok() {}
    (
        RtLinkPort {
            offers: oc,
            returns: rp,
        },
        NrtLinkPort {
            offers: op,
            returns: rc,
        },
    )
}

impl NrtLinkPort {
    /// Offers `link` to the RT thread; gives it back if the offer ring is full.
    pub fn nrt_offer(&mut self, target: u16, link: Box<dyn Link>) -> Result<(), Box<dyn Link>> {
        self.offers
            .push(LinkOffer { target, link })
            .map_err(|rtrb::PushError::Full(o)| o.link)
    }

    /// A link the RT thread gave back, if any (drop it here, on the NRT side).
    pub fn nrt_take_returned(&mut self) -> Option<LinkReturn> {
        self.returns.pop().ok()
    }

    /// Whether the RT thread is gone (its half was dropped).
    pub fn nrt_peer_gone(&self) -> bool {
        self.offers.is_abandoned()
    }
}
