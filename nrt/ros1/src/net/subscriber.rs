//! Our subscriptions: one task per publisher the master names (registerSubscriber's answer, then the slave API's
//! `publisherUpdate`, at most [`super::Limits::max_publishers`]): `requestTopic` to the publisher's slave API,
//! a TCP connection (TCP_NODELAY, `tcp_nodelay=1` asked), the header exchange within
//! [`super::Limits::handshake`] (each header at most [`super::Limits::max_header`]), then framed messages of at
//! most [`super::Limits::max_message`] into the subscription's bounded queue (oldest dropped when full), decoded
//! by [`Subscriber::next`]. A connection that cannot be made is tried again a few times while its publisher is
//! listed.

use super::header::{encode, read_frame, read_header, WireError};
use super::queue::Queue;
use super::{lock, Limits, NetError, Node, RawDescriptor, Shared};
use crate::master::{Client, MasterError};
use roslibrust::RosMessageType;
use serde_xmlrpc::Value;
use std::collections::BTreeMap;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

/// Connection attempts to one publisher before giving up (until the master names it again).
const TRIES: u32 = 5;
/// Between attempts.
const RETRY: Duration = Duration::from_millis(500);

/// Why a connection to a publisher failed.
#[derive(Debug, thiserror::Error)]
enum LinkError {
    #[error("requestTopic: {0}")]
    RequestTopic(#[from] MasterError),
    #[error("requestTopic answered {0}")]
    Answer(String),
    #[error("connect to {0}: {1}")]
    Connect(String, #[source] std::io::Error),
    #[error("connect to {0}: no answer in time")]
    ConnectTimeout(String),
    #[error(transparent)]
    Wire(#[from] WireError),
}

/// One topic we subscribe to (shared by its handle and its connection tasks).
pub(crate) struct Subscription {
    pub topic: String,
    pub ty: String,
    md5: String,
    definition: String,
    pub(super) queue: Queue<Vec<u8>>,
    /// Publisher (slave API URI) → its connection task (with the id that tells it apart from a later one).
    links: Mutex<BTreeMap<String, (u64, tokio::task::AbortHandle)>>,
    next: AtomicU64,
    /// Messages received.
    pub received: AtomicU64,
}

impl Subscription {
    pub fn new(topic: &str, d: &RawDescriptor, queue: usize) -> Arc<Subscription> {
        Arc::new(Subscription {
            topic: topic.to_owned(),
            ty: d.ros_type.clone(),
            md5: d.md5sum.clone(),
            definition: d.definition.clone(),
            queue: Queue::new(queue),
            links: Mutex::default(),
            next: AtomicU64::new(0),
            received: AtomicU64::new(0),
        })
    }

    /// Connects to the publishers in `uris` not connected yet; `replace` (publisherUpdate: the whole list)
    /// also drops those no longer listed.
    pub fn update(self: &Arc<Self>, node: &Shared, uris: &[String], replace: bool) {
        let mut links = lock(&self.links);
        if replace {
            links.retain(|uri, (_, task)| {
                let keep = uris.contains(uri);
                if !keep {
                    task.abort();
                }
                keep
            });
        }
        for uri in uris {
            if links.contains_key(uri) {
                continue;
            }
            if links.len() >= node.limits.max_publishers {
                tracing::warn!(
                    "ROS 1: {}: more than {} publishers: the others are ignored",
                    self.topic,
                    node.limits.max_publishers
                );
                break;
            }
            let id = self.next.fetch_add(1, Ordering::Relaxed);
            let task = node.rt.spawn(link(
                self.clone(),
                uri.clone(),
                id,
                node.name.clone(),
                node.limits.clone(),
            ));
            links.insert(uri.clone(), (id, task.abort_handle()));
        }
    }

    /// The publishers connected or being connected (with their connection ids).
    pub fn publishers(&self) -> Vec<(u64, String)> {
        lock(&self.links)
            .iter()
            .map(|(uri, (id, _))| (*id, uri.clone()))
            .collect()
    }

    /// Messages dropped because the queue was full (the oldest first).
    pub fn dropped(&self) -> u64 {
        self.queue.dropped()
    }

    /// Ends every connection.
    pub fn close(&self) {
        self.queue.close();
        for (_, (_, task)) in std::mem::take(&mut *lock(&self.links)) {
            task.abort();
        }
    }

    fn forget(&self, uri: &str, id: u64) {
        let mut links = lock(&self.links);
        if links.get(uri).is_some_and(|(i, _)| *i == id) {
            links.remove(uri);
        }
    }
}

/// The task of one publisher: connect (with retries), then receive until it closes.
async fn link(s: Arc<Subscription>, uri: String, id: u64, own: String, limits: Limits) {
    let mut tries = 0;
    loop {
        match connect(&s, &uri, &own, &limits).await {
            Ok(stream) => {
                if let Err(e) = receive(&s, stream, &limits).await {
                    tracing::warn!("ROS 1: {}: from {uri}: {e}", s.topic);
                }
                break;
            }
            Err(e) => {
                tries += 1;
                if tries >= TRIES {
                    tracing::warn!("ROS 1: {}: cannot subscribe at {uri}: {e}", s.topic);
                    break;
                }
                tokio::time::sleep(RETRY).await;
            }
        }
    }
    s.forget(&uri, id);
}

/// requestTopic, then the TCPROS handshake.
async fn connect(
    s: &Subscription,
    uri: &str,
    own: &str,
    limits: &Limits,
) -> Result<TcpStream, LinkError> {
    let (api, caller, topic) = (uri.to_owned(), own.to_owned(), s.topic.clone());
    let protocols = Value::Array(vec![Value::Array(vec![Value::String("TCPROS".into())])]);
    let answer = tokio::task::spawn_blocking(move || {
        Client::new(&api, &caller).call("requestTopic", vec![Value::String(topic), protocols])
    })
    .await
    .map_err(|e| LinkError::Answer(e.to_string()))??;
    let (host, port) = match &answer {
        Value::Array(p) => match (p.first(), p.get(1), p.get(2)) {
            (Some(Value::String(proto)), Some(Value::String(host)), Some(Value::Int(port)))
                if proto == "TCPROS" =>
            {
                let port =
                    u16::try_from(*port).map_err(|_| LinkError::Answer(format!("{answer:?}")))?;
                (host.clone(), port)
            }
            _ => return Err(LinkError::Answer(format!("{answer:?}"))),
        },
        _ => return Err(LinkError::Answer(format!("{answer:?}"))),
    };
    let at = format!("{host}:{port}");
    let mut stream =
        tokio::time::timeout(limits.handshake, TcpStream::connect((host.as_str(), port)))
            .await
            .map_err(|_| LinkError::ConnectTimeout(at.clone()))?
            .map_err(|e| LinkError::Connect(at.clone(), e))?;
    stream
        .set_nodelay(true)
        .map_err(|e| LinkError::Connect(at, e))?;
    let hello = encode(&[
        ("callerid", own),
        ("topic", &s.topic),
        ("type", &s.ty),
        ("md5sum", &s.md5),
        ("message_definition", &s.definition),
        ("tcp_nodelay", "1"),
    ]);
    let handshake = async {
        stream.write_all(&hello).await?;
        read_header(&mut stream, limits.max_header).await
    };
    let header = tokio::time::timeout(limits.handshake, handshake)
        .await
        .map_err(|_| WireError::Timeout("connection header from the publisher"))??;
    if let Some(e) = header.get("error") {
        return Err(WireError::Refused(e.to_owned()).into());
    }
    match header.get("md5sum") {
        Some(m) if m != "*" && m != s.md5 => Err(WireError::Refused(format!(
            "the publisher's md5sum {m} is not that of {} ({})",
            s.ty, s.md5
        ))
        .into()),
        _ => Ok(stream),
    }
}

async fn receive(
    s: &Subscription,
    mut stream: TcpStream,
    limits: &Limits,
) -> Result<(), WireError> {
    while let Some(frame) = read_frame(&mut stream, limits.max_message).await? {
        s.received.fetch_add(1, Ordering::Relaxed);
        if !s.queue.push(frame) {
            return Ok(());
        }
    }
    Ok(())
}

/// A handle on a topic we subscribe to; dropping it unsubscribes.
pub struct Subscriber<T> {
    node: Node,
    pub(super) s: Arc<Subscription>,
    _t: PhantomData<fn() -> T>,
}

impl<T> Subscriber<T> {
    pub(crate) fn new(node: Node, s: Arc<Subscription>) -> Subscriber<T> {
        Subscriber {
            node,
            s,
            _t: PhantomData,
        }
    }

    /// The topic's global name.
    pub fn topic(&self) -> &str {
        &self.s.topic
    }
}

impl<T: RosMessageType> Subscriber<T> {
    /// The next message (`None` once the node is gone).
    pub async fn next(&mut self) -> Option<Result<T, NetError>> {
        let frame = self.s.queue.pop().await?;
        Some(
            roslibrust_serde_rosmsg::from_slice(&frame).map_err(|e| NetError::Decode {
                ty: self.s.ty.clone(),
                reason: e.to_string(),
            }),
        )
    }
}

impl<T> Drop for Subscriber<T> {
    fn drop(&mut self) {
        self.node.unsubscribe(&self.s);
    }
}
