//! Our subscriptions: one task per publisher the master names (registerSubscriber's answer, then the slave API's
//! `publisherUpdate`, at most [`super::Limits::max_publishers`]): `requestTopic` to the publisher's slave API,
//! a TCP connection (TCP_NODELAY, `tcp_nodelay=1` asked), the header exchange within
//! [`super::Limits::handshake`] (each header at most [`super::Limits::max_header`]), then framed messages of at
//! most [`super::Limits::max_message`] into the subscription's bounded queue (oldest dropped when full), decoded
//! by [`Subscriber::next`]. A connection that cannot be made is tried again a few times while its publisher is
//! listed.
//!
//! **Commands delayed by an outage** ([`Node::subscribe_commands`], `cmd_vel`): a plain `Twist` has no stamp, so a
//! command is judged by how it arrives on its connection. A connection on which nothing arrived for longer than
//! its `stall` (the `cmd_vel_timeout` watchdog period) has stalled — a link that went away — and what comes next
//! may be the backlog TCP kept for it. The first message after a stall starts a **backlog** when at least
//! [`BURST_MIN`] more messages' worth of bytes are already there behind it or arrive within [`BURST_GAP`] (TCP
//! delivers what it kept during an outage at once; a reader that was only late — a loaded machine — finds one or
//! two messages behind the first, which are taken); a backlog goes on while, after each of its messages,
//! more bytes are there or arrive within [`BURST_GAP`], for at most [`BURST_MAX`]. Every message of a backlog is
//! dropped (counted; a log line when it starts and one when it ends); the first message after it — sent after the
//! link came back — is taken, as is everything after it. A message after a stall with nothing behind it within
//! [`BURST_GAP`] is taken, that much late (one message is not a backlog: a publisher that sends now and then is
//! obeyed). A publisher faster than 1 / [`BURST_GAP`] is taken again [`BURST_MAX`] after its link came back; an
//! outage that left fewer than [`BURST_MIN`] + 1 messages behind (a publisher slower than that many per stall) is
//! not recognised, and those few are taken. The
//! watchdog stopped the robot during the stall, so it stays stopped until a fresh command.

use super::header::{encode, read_frame, read_header, WireError};
use super::queue::Queue;
use super::{clip, lock, Limits, NetError, Node, RawDescriptor, Shared};
use crate::master::{Client, MasterError};
use roslibrust::RosMessageType;
use serde_xmlrpc::Value;
use std::collections::BTreeMap;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

/// Connection attempts to one publisher before giving up (until the master names it again).
const TRIES: u32 = 5;
/// Between attempts.
const RETRY: Duration = Duration::from_millis(500);
/// After a stall, messages arriving within this of the one before are a backlog (see the module documentation).
pub const BURST_GAP: Duration = Duration::from_millis(20);
/// A backlog is dropped for at most this long.
pub const BURST_MAX: Duration = Duration::from_secs(1);
/// After a stall, the first message starts a backlog only with at least this many more messages' worth of bytes
/// behind it (see the module documentation).
pub const BURST_MIN: usize = 4;

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
    /// Commands: the silence after which a connection has stalled (its backlog is dropped); `None`: all taken.
    stall: Option<Duration>,
    /// Messages dropped as the backlog of a stalled connection.
    pub backlog: AtomicU64,
}

impl Subscription {
    pub fn new(
        topic: &str,
        d: &RawDescriptor,
        queue: usize,
        stall: Option<Duration>,
    ) -> Arc<Subscription> {
        Arc::new(Subscription {
            topic: topic.to_owned(),
            ty: d.ros_type.clone(),
            md5: d.md5sum.clone(),
            definition: d.definition.clone(),
            queue: Queue::new(queue),
            links: Mutex::default(),
            next: AtomicU64::new(0),
            received: AtomicU64::new(0),
            stall,
            backlog: AtomicU64::new(0),
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
                    clip(&self.topic),
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
                if let Err(e) = receive(&s, stream, &limits, &uri).await {
                    tracing::warn!(
                        "ROS 1: {}: from {}: {}",
                        s.topic,
                        clip(&uri),
                        clip(&e.to_string())
                    );
                }
                break;
            }
            Err(e) => {
                tries += 1;
                if tries >= TRIES {
                    tracing::warn!(
                        "ROS 1: {}: cannot subscribe at {}: {}",
                        s.topic,
                        clip(&uri),
                        clip(&e.to_string())
                    );
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
    uri: &str,
) -> Result<(), WireError> {
    let mut last = Instant::now();
    // the backlog being dropped: when it started, how many so far
    let mut burst: Option<(Instant, u64)> = None;
    while let Some(frame) = read_frame(&mut stream, limits.max_message).await? {
        s.received.fetch_add(1, Ordering::Relaxed);
        if let Some(stall) = s.stall {
            let now = Instant::now();
            let silence = now.saturating_duration_since(last);
            last = now;
            if burst.is_none()
                && silence > stall
                && waiting_within(&stream, BURST_MIN * frame.len().max(1), BURST_GAP).await
            {
                tracing::warn!(
                    "ROS 1: {}: messages from {} arrive in a burst after {:.3} s of silence (what TCP kept \
                     during an outage): dropped until a fresh one, the robot stays stopped",
                    s.topic,
                    clip(uri),
                    silence.as_secs_f64()
                );
                burst = Some((now, 0));
            }
            if let Some((start, dropped)) = burst.as_mut() {
                *dropped += 1;
                s.backlog.fetch_add(1, Ordering::Relaxed);
                let goes_on = start.elapsed() < BURST_MAX && more_within(&stream, BURST_GAP).await;
                if !goes_on {
                    tracing::warn!(
                        "ROS 1: {}: {dropped} messages of the burst from {} dropped; taking fresh ones again",
                        s.topic,
                        clip(uri)
                    );
                    burst = None;
                }
                last = Instant::now();
                continue;
            }
        }
        if !s.queue.push(frame) {
            return Ok(());
        }
    }
    Ok(())
}

/// Whether bytes are waiting on `stream`, or arrive within `gap` (or it is closed: nothing more to judge).
async fn more_within(stream: &TcpStream, gap: Duration) -> bool {
    waiting_within(stream, 1, gap).await
}

/// Whether at least `bytes` (at most 64 KiB) are waiting on `stream`, or are by the end of `gap`.
async fn waiting_within(stream: &TcpStream, bytes: usize, gap: Duration) -> bool {
    let mut buf = vec![0u8; bytes.clamp(1, 64 * 1024)];
    let want = buf.len();
    let deadline = tokio::time::Instant::now() + gap;
    let mut seen = 0;
    loop {
        // peek returns at once while more than `seen` bytes are there; else it waits for more (or the deadline)
        match tokio::time::timeout_at(deadline, stream.peek(&mut buf)).await {
            Ok(Ok(n)) if n >= want => return true,
            Ok(Ok(0)) | Ok(Err(_)) | Err(_) => return false,
            Ok(Ok(n)) if n == seen => {
                // no more than last time: wait a little for the rest (peek would return the same at once)
                if tokio::time::Instant::now() >= deadline {
                    return false;
                }
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
            Ok(Ok(n)) => seen = n,
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::net::TcpListener;

    fn frame(n: u8) -> Vec<u8> {
        vec![1, 0, 0, 0, n]
    }

    /// What the subscription keeps of `script` (`(pause before, frames sent at once)`), sent on a connection with
    /// a stall of 300 ms.
    fn kept(script: Vec<(u64, Vec<u8>)>) -> (Vec<u8>, u64) {
        block_multi(async move {
            let d = RawDescriptor {
                ros_type: "std_msgs/UInt8".into(),
                md5sum: "*".into(),
                definition: String::new(),
            };
            let s = Subscription::new("/cmd", &d, 100, Some(Duration::from_millis(300)));
            let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
            let at = l.local_addr().unwrap();
            let writer = tokio::spawn(async move {
                let mut w = TcpStream::connect(at).await.unwrap();
                w.set_nodelay(true).unwrap();
                for (pause, bytes) in script {
                    tokio::time::sleep(Duration::from_millis(pause)).await;
                    w.write_all(&bytes).await.unwrap();
                }
            });
            let (r, _) = l.accept().await.unwrap();
            receive(&s, r, &Limits::default(), "test").await.unwrap();
            writer.await.unwrap();
            s.queue.close();
            let mut out = Vec::new();
            while let Some(f) = s.queue.pop().await {
                out.push(f[4]);
            }
            (out, s.backlog.load(Ordering::Relaxed))
        })
    }

    fn block_multi<F: std::future::Future>(f: F) -> F::Output {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap()
            .block_on(f)
    }

    #[test]
    fn the_backlog_after_a_stall_is_dropped_until_a_fresh_message() {
        let backlog: Vec<u8> = (10..40).flat_map(frame).collect();
        let (kept, dropped) = kept(vec![
            (0, frame(1)),
            (50, frame(2)),
            (600, backlog),
            (60, frame(3)),
            (50, frame(4)),
        ]);
        assert_eq!(kept, vec![1, 2, 3, 4]);
        assert_eq!(dropped, 30);
    }

    #[test]
    fn a_few_messages_behind_the_first_after_a_stall_are_a_late_reader_not_a_backlog() {
        // a publisher silent for long, then commands at 20 Hz read late on a loaded machine: the first two come
        // together; an outage's backlog is at least BURST_MIN more (a run of the ROS 1 calibration test dropped
        // a whole second of fresh commands)
        let two: Vec<u8> = [2, 3].into_iter().flat_map(frame).collect();
        let (kept, dropped) = kept(vec![
            (0, frame(1)),
            (600, two),
            (50, frame(4)),
            (50, frame(5)),
        ]);
        assert_eq!((kept, dropped), (vec![1, 2, 3, 4, 5], 0));
    }

    #[test]
    fn a_lone_message_after_a_stall_is_taken() {
        let (kept, dropped) = kept(vec![(0, frame(1)), (600, frame(2)), (60, frame(3))]);
        assert_eq!((kept, dropped), (vec![1, 2, 3], 0));
    }
}
