//! Our publications: [`Publisher::publish`] serialises once and offers the bytes to each subscriber's bounded
//! queue (never waits: a full queue drops its oldest message, for that subscriber only); one task per subscriber
//! connection writes its queue to the socket (TCP_NODELAY set, each write bounded in time) and notices the
//! subscriber leaving. A latched topic hands its last message to each new subscriber first.

use super::header::{encode, Header, WireError};
use super::queue::Queue;
use super::{lock, Limits, NetError, Node, RawDescriptor};
use roslibrust::RosMessageType;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// A serialised message (with its length prefix), shared by every subscriber's queue.
type Bytes = Arc<Vec<u8>>;

struct Outlet {
    id: u64,
    caller_id: String,
    queue: Arc<Queue<Bytes>>,
}

#[derive(Default)]
struct State {
    outlets: Vec<Outlet>,
    last: Option<Bytes>,
    next_id: u64,
}

/// One topic we publish (shared by its handles and its connections).
pub(crate) struct Publication {
    pub topic: String,
    pub ty: String,
    md5: String,
    definition: String,
    latched: bool,
    queue: usize,
    state: Mutex<State>,
    /// Publisher handles (changed under the node's table lock).
    pub handles: AtomicUsize,
    /// Messages published.
    pub sent: AtomicU64,
    /// Bytes published (once per message, not per subscriber).
    pub bytes: AtomicU64,
}

impl Publication {
    pub fn new(topic: &str, d: &RawDescriptor, queue: usize, latched: bool) -> Publication {
        Publication {
            topic: topic.to_owned(),
            ty: d.ros_type.clone(),
            md5: d.md5sum.clone(),
            definition: d.definition.clone(),
            latched,
            queue: queue.max(1),
            state: Mutex::default(),
            handles: AtomicUsize::new(0),
            sent: AtomicU64::new(0),
            bytes: AtomicU64::new(0),
        }
    }

    /// The md5sum it is published with.
    pub fn md5(&self) -> &str {
        &self.md5
    }

    /// Offers `b` (a framed message) to every subscriber (and keeps it if latched).
    pub(super) fn send(&self, b: Bytes) {
        self.sent.fetch_add(1, Ordering::Relaxed);
        self.bytes.fetch_add(b.len() as u64, Ordering::Relaxed);
        let mut st = lock(&self.state);
        for o in &st.outlets {
            o.queue.push(b.clone());
        }
        if self.latched {
            st.last = Some(b);
        }
    }

    /// Ends every subscriber connection (the topic is no longer published).
    pub fn close(&self) {
        let mut st = lock(&self.state);
        for o in st.outlets.drain(..) {
            o.queue.close();
        }
        st.last = None;
    }

    /// The caller ids of the connected subscribers (with their connection ids).
    pub fn subscribers(&self) -> Vec<(u64, String)> {
        lock(&self.state)
            .outlets
            .iter()
            .map(|o| (o.id, o.caller_id.clone()))
            .collect()
    }

    fn attach(&self, caller_id: &str) -> (u64, Arc<Queue<Bytes>>) {
        let queue = Arc::new(Queue::new(self.queue));
        let mut st = lock(&self.state);
        if let Some(last) = &st.last {
            queue.push(last.clone());
        }
        st.next_id += 1;
        let id = st.next_id;
        st.outlets.push(Outlet {
            id,
            caller_id: caller_id.to_owned(),
            queue: queue.clone(),
        });
        (id, queue)
    }

    fn detach(&self, id: u64) {
        lock(&self.state).outlets.retain(|o| o.id != id);
    }
}

/// Serves one subscriber whose connection header (`header`) asked for `p`; `own` is our caller id.
pub(crate) async fn serve(
    p: Arc<Publication>,
    header: Header,
    mut stream: TcpStream,
    own: &str,
    limits: &Limits,
) -> Result<(), WireError> {
    super::handshake::check_md5(&header, (&p.topic, &p.ty, &p.md5), &mut stream, limits).await?;
    let reply = encode(&[
        ("callerid", own),
        ("topic", &p.topic),
        ("type", &p.ty),
        ("md5sum", &p.md5),
        ("message_definition", &p.definition),
        ("latching", if p.latched { "1" } else { "0" }),
    ]);
    tokio::time::timeout(limits.handshake, stream.write_all(&reply))
        .await
        .map_err(|_| WireError::Timeout("connection header written"))??;
    let caller = header.get("callerid").unwrap_or("?").to_owned();
    let (id, queue) = p.attach(&caller);
    let (mut rd, mut wr) = stream.into_split();
    let mut sink = [0u8; 256];
    let result = loop {
        tokio::select! {
            m = queue.pop() => match m {
                Some(b) => match tokio::time::timeout(limits.write_timeout, wr.write_all(&b)).await {
                    Ok(Ok(())) => {}
                    Ok(Err(e)) => break Err(e.into()),
                    Err(_) => break Err(WireError::Timeout("message written to a subscriber")),
                },
                // the topic is no longer published
                None => break Ok(()),
            },
            // subscribers send nothing after their header: this only sees them leave
            r = rd.read(&mut sink) => match r {
                Ok(0) | Err(_) => break Ok(()),
                Ok(_) => {}
            },
        }
    };
    p.detach(id);
    result
}

/// A handle on a topic we publish; dropping the last one of a topic unadvertises it.
pub struct Publisher<T> {
    node: Node,
    pub(super) p: Arc<Publication>,
    _t: PhantomData<fn(T)>,
}

impl<T> Publisher<T> {
    pub(crate) fn new(node: Node, p: Arc<Publication>) -> Publisher<T> {
        Publisher {
            node,
            p,
            _t: PhantomData,
        }
    }

    /// The topic's global name.
    pub fn topic(&self) -> &str {
        &self.p.topic
    }

    /// Connected subscribers now.
    pub fn subscriber_count(&self) -> usize {
        lock(&self.p.state).outlets.len()
    }
}

impl<T: RosMessageType> Publisher<T> {
    /// Queues `msg` for every subscriber (never waits).
    pub fn publish(&self, msg: &T) -> Result<(), NetError> {
        let bytes = roslibrust_serde_rosmsg::to_vec(msg).map_err(|e| NetError::Serialise {
            ty: self.p.ty.clone(),
            reason: e.to_string(),
        })?;
        self.p.send(Arc::new(bytes));
        Ok(())
    }
}

impl<T> Drop for Publisher<T> {
    fn drop(&mut self) {
        self.node.unadvertise(&self.p);
    }
}
