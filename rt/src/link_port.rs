//! Hand-off of open links between the NRT side (which opens and drops them) and the RT thread
//! (which polls them but never drops one: dead links go back through [`LinkReturn`]).

use crate::link::Link;
use handoff::{Doorbell, LinkDownReason, MAX_LINKS};
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
    fn kind(&self) -> handoff::LinkKind {
        handoff::LinkKind::Other
    }
}

/// NRT half: offers links, takes returned ones.
#[derive(Debug)]
pub struct NrtLinkPort {
    offers: Producer<LinkOffer>,
    returns: Consumer<LinkReturn>,
    /// Rung by the RT half when it gives a link back or goes away.
    returned: Doorbell,
    /// Rung by the NRT half when it offers a link (the RT loop waits on it: it may sleep past its period).
    offered: Doorbell,
}

/// RT half (the RT loop takes offers and gives links back through it).
#[derive(Debug)]
pub struct RtLinkPort {
    offers: Consumer<LinkOffer>,
    returns: Producer<LinkReturn>,
    returned: Doorbell,
    offered: Doorbell,
}

/// A link port: `(rt, nrt)` halves. The return ring holds every link the RT thread may own plus every offer in
/// flight, so that giving one back never fails.
///
/// # Example
///
/// ```
/// use handoff::LinkDownReason;
/// use rt::link_port::{link_port, LinkReturn};
/// use rt::link::PipeLink;
///
/// let (mut rt, mut nrt) = link_port();
/// let (ours, _peer) = PipeLink::pair(256);
/// nrt.nrt_offer(7, Box::new(ours)).unwrap(); // NRT opened it
/// let offer = rt.rt_take_offer().unwrap(); // the RT loop polls it from now on
/// assert_eq!(offer.target, 7);
/// // ... until it dies or is closed: the RT side gives it back, it never drops a link.
/// let back = LinkReturn { target: offer.target, link: offer.link, reason: LinkDownReason::Eof };
/// assert!(rt.rt_give_back(back).is_ok());
/// let back = nrt.nrt_take_returned().unwrap(); // dropped here, on the NRT side
/// assert_eq!((back.target, back.reason), (7, LinkDownReason::Eof));
/// ```
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
    let returned = Doorbell::new();
    let offered = Doorbell::new();
    (
        RtLinkPort {
            offers: oc,
            returns: rp,
            returned: returned.clone(),
            offered: offered.clone(),
        },
        NrtLinkPort {
            offers: op,
            returns: rc,
            returned,
            offered,
        },
    )
}

impl NrtLinkPort {
    /// Offers `link` to the RT thread (and wakes it); gives it back if the offer ring is full.
    pub fn nrt_offer(&mut self, target: u16, link: Box<dyn Link>) -> Result<(), Box<dyn Link>> {
        self.offers
            .push(LinkOffer { target, link })
            .map_err(|rtrb::PushError::Full(o)| o.link)?;
        self.offered.ring();
        Ok(())
    }

    /// A link the RT thread gave back, if any (drop it here, on the NRT side).
    pub fn nrt_take_returned(&mut self) -> Option<LinkReturn> {
        self.returns.pop().ok()
    }

    /// Whether the RT thread is gone (its half was dropped).
    pub fn nrt_peer_gone(&self) -> bool {
        self.offers.is_abandoned()
    }

    /// Waits until the RT half gives a link back or goes away (or someone calls
    /// [`Self::nrt_wake`]), at most `timeout`; whether it was woken. Consumes the wake-ups so far.
    pub fn nrt_wait_returned(&self, timeout: std::time::Duration) -> bool {
        self.returned.wait(timeout)
    }

    /// A doorbell that ends a [`Self::nrt_wait_returned`] when rung (e.g. to stop the thread that
    /// waits); silent (not live) if no eventfd was available, then waits sleep their whole timeout.
    pub fn nrt_waker(&self) -> Doorbell {
        self.returned.clone()
    }
}

impl RtLinkPort {
    /// The next link offered by the NRT side, if any (never blocks, never allocates).
    pub fn rt_take_offer(&mut self) -> Option<LinkOffer> {
        self.offers.pop().ok()
    }

    /// The descriptor readable while a link was offered since the last [`Self::rt_drain_offered`]
    /// (the RT loop's wait holds it); `None` if no eventfd was available (offers are then taken
    /// by the periodic cycle, which then runs every period).
    pub fn rt_offered_fd(&self) -> Option<std::os::fd::BorrowedFd<'_>> {
        self.offered.fd()
    }

    /// Consumes the offer wake-ups so far (one non-blocking read); whether there were any.
    pub fn rt_drain_offered(&self) -> bool {
        self.offered.drain()
    }

    /// Room left in the return ring (a link is taken only when it can be given back).
    pub fn rt_return_room(&self) -> usize {
        self.returns.slots()
    }

    /// Gives a link back to the NRT side; hands it back if the return ring is full (it holds
    /// every link the RT thread may own plus every offer in flight, so this does not happen
    /// while [`Self::rt_return_room`] was checked first).
    pub fn rt_give_back(&mut self, ret: LinkReturn) -> Result<(), LinkReturn> {
        self.returns
            .push(ret)
            .map_err(|rtrb::PushError::Full(r)| r)?;
        // One non-blocking eventfd write: the connector blocks until a link comes back.
        self.returned.ring();
        Ok(())
    }
}

impl Drop for RtLinkPort {
    fn drop(&mut self) {
        // The connector notices that the RT thread is gone without polling.
        self.returned.ring();
    }
}
