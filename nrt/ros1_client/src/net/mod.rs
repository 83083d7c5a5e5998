//! Our ROS 1 node transport: the XML-RPC slave API ([`slave`]), TCPROS publishers ([`publisher`]), subscriptions
//! ([`subscriber`]) and service servers ([`service`]) behind one TCPROS listener ([`tcpros`]), every socket bound
//! to the address of `ROS_IP` / `ROS_HOSTNAME` ([`addr`]), every input bounded ([`Limits`]). The master is called
//! through [`super::master::Client`]; messages are roslibrust's generated types with their serde ROS 1
//! serialisation.
//!
//! Why not roslibrust's node: it binds 0.0.0.0 whatever `ROS_IP` says, decodes XML-RPC recursively (a deep body
//! overflowed the thread's stack and aborted the process), allocates any announced TCPROS header length, reads
//! headers inside its accept loops (one idle connection blocked every new subscriber), never sets TCP_NODELAY and
//! prefixes service errors with an extra length.
//!
//! API (all blocking calls are master round trips: never from the RT thread, nor from inside the runtime):
//! [`Node::start`], [`Node::advertise`] → [`Publisher::publish`] (never waits: a bounded queue per subscriber,
//! oldest dropped when full; latched topics keep their last message for new subscribers), [`Node::subscribe`] →
//! [`Subscriber::next`], [`Node::serve`] (the handler runs on the runtime's blocking pool). Dropping a handle
//! unregisters it with the master. Types known only at run time ([`crate::dynamic`]) go through the same
//! machinery as serialised bytes ([`raw`]): [`Node::advertise_raw`] → [`Publisher::publish_bytes`],
//! [`Node::subscribe_raw`] → [`Subscriber::next_bytes`], [`Node::serve_raw`].
//!
//! Threads: the tokio runtime given to [`Node::start`] runs the accept loops and one task per connection.

pub mod addr;
mod descriptor;
mod door;
mod handshake;
pub mod header;
pub mod http;
mod publisher;
mod queue;
mod raw;
mod service;
mod slave;
mod subscriber;
mod tcpros;
pub mod xml;

pub use addr::{AddrError, Address};
pub use descriptor::{RawDescriptor, RawMessage, RawServiceDescriptor};
pub use publisher::Publisher;
pub use service::ServiceServer;
pub use subscriber::Subscriber;

use super::master::{Client, MasterError};
use publisher::Publication;
use roslibrust::{RosMessageType, RosServiceType};
use service::ServiceEntry;
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;
use subscriber::Subscription;
use tokio::sync::Semaphore;

/// Characters of a string a peer sent (a caller id, topic, path, header) kept by [`clip`].
pub const CLIP_CHARS: usize = 200;

/// Cuts a string a peer sent to [`CLIP_CHARS`] characters, then `…(N bytes)` (N its whole length) when longer,
/// before it goes to a log line or `/rosout` (every log site that echoes peer data uses it).
pub fn clip(s: &str) -> Cow<'_, str> {
    match s.char_indices().nth(CLIP_CHARS) {
        None => Cow::Borrowed(s),
        Some((at, _)) => Cow::Owned(format!("{}…({} bytes)", &s[..at], s.len())),
    }
}

/// The bounds of what a peer may make the node do (the defaults are documented in docs/ros1.md and docs/safety.md).
#[derive(Debug, Clone, PartialEq)]
pub struct Limits {
    /// Longest TCPROS connection header.
    pub max_header: usize,
    /// Longest TCPROS message (a frame announcing more closes its connection).
    pub max_message: usize,
    /// Longest XML-RPC request body (more: answered 413 from the head alone).
    pub max_body: usize,
    /// Deepest XML-RPC element nesting (deeper: a fault, before decoding).
    pub max_depth: usize,
    /// A TCPROS handshake (header in, header out; a one-shot service request) must complete within this.
    pub handshake: Duration,
    /// An XML-RPC connection sends its whole request (head and body) within this, and takes the answer within
    /// this again (else it is closed).
    pub xmlrpc_timeout: Duration,
    /// A write to a subscriber or service client must complete within this (else the connection is closed).
    pub write_timeout: Duration,
    /// Inbound TCPROS connections at once (subscribers of our topics, service clients, handshakes).
    pub max_connections: usize,
    /// XML-RPC connections at once; a newcomer beyond drops the oldest one still sending its request past
    /// [`Limits::xmlrpc_grace`], or waits for a place.
    pub max_xmlrpc: usize,
    /// XML-RPC connections at once from one address; a newcomer beyond drops that address's oldest one still
    /// sending its request.
    pub max_xmlrpc_per_peer: usize,
    /// How long a connection still sending its request keeps its place whatever newcomers come: a prompt
    /// caller sends its request well within it, a burst of them (roscpp's `rosbag record -a`) waits for places
    /// instead of dropping one another; a slow or idle one is dropped for a newcomer once past it.
    pub xmlrpc_grace: Duration,
    /// Publishers one subscription connects to.
    pub max_publishers: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_header: 64 * 1024,
            max_message: 16 * 1024 * 1024,
            max_body: 1024 * 1024,
            max_depth: 64,
            handshake: Duration::from_secs(2),
            xmlrpc_timeout: Duration::from_secs(2),
            write_timeout: Duration::from_secs(5),
            max_connections: 256,
            max_xmlrpc: 64,
            max_xmlrpc_per_peer: 48,
            xmlrpc_grace: Duration::from_millis(100),
            max_publishers: 64,
        }
    }
}

/// Errors of the transport.
#[derive(Debug, thiserror::Error)]
pub enum NetError {
    /// `ROS_IP` / `ROS_HOSTNAME` unusable.
    #[error(transparent)]
    Addr(#[from] AddrError),
    /// A listening socket could not be made.
    #[error("cannot listen on {addr} (the address of ROS_HOSTNAME / ROS_IP): {source}")]
    Bind {
        /// Where.
        addr: std::net::IpAddr,
        /// Cause.
        #[source]
        source: std::io::Error,
    },
    /// The master refused or did not answer.
    #[error(transparent)]
    Master(#[from] MasterError),
    /// The name is already advertised (another type), subscribed or served by this node.
    #[error("{0} is already {1} by this node")]
    Duplicate(String, &'static str),
    /// A message could not be serialised.
    #[error("cannot serialise a {ty}: {reason}")]
    Serialise {
        /// ROS type.
        ty: String,
        /// Why.
        reason: String,
    },
    /// A received message could not be decoded.
    #[error("cannot decode a {ty}: {reason}")]
    Decode {
        /// ROS type.
        ty: String,
        /// Why.
        reason: String,
    },
}

/// What the node's tasks share.
pub(crate) struct Shared {
    name: String,
    master: Client,
    addr: Address,
    caller_api: String,
    tcpros_port: u16,
    rt: tokio::runtime::Handle,
    limits: Limits,
    pubs: Mutex<BTreeMap<String, Arc<Publication>>>,
    subs: Mutex<BTreeMap<String, Arc<Subscription>>>,
    services: Mutex<BTreeMap<String, Arc<ServiceEntry>>>,
    shutdown: AtomicBool,
    conns: Arc<Semaphore>,
    listeners: Mutex<Vec<tokio::task::AbortHandle>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Drop for Shared {
    fn drop(&mut self) {
        for l in lock(&self.listeners).drain(..) {
            l.abort();
        }
    }
}

/// A node on the ROS 1 graph (see the module documentation). Cloned freely.
#[derive(Clone)]
pub struct Node(Arc<Shared>);

fn bind(ip: std::net::IpAddr) -> Result<tokio::net::TcpListener, NetError> {
    let err = |source| NetError::Bind { addr: ip, source };
    let l = std::net::TcpListener::bind((ip, 0)).map_err(err)?;
    l.set_nonblocking(true).map_err(err)?;
    tokio::net::TcpListener::from_std(l).map_err(err)
}

/// `host` as it goes in a URI (an IPv6 address in brackets).
fn uri_host(host: &str) -> String {
    if host.contains(':') {
        format!("[{host}]")
    } else {
        host.to_owned()
    }
}

impl Node {
    /// Makes the node `name` (global) of the master at `master_uri`, listening at `address` with `limits`; its
    /// tasks run on `rt`. Nothing is registered yet.
    pub fn start(
        rt: tokio::runtime::Handle,
        master_uri: &str,
        name: &str,
        address: Address,
        limits: Limits,
    ) -> Result<Node, NetError> {
        let _in = rt.enter();
        let xmlrpc = bind(address.bind)?;
        let tcpros = bind(address.bind)?;
        let port = |l: &tokio::net::TcpListener| {
            l.local_addr()
                .map(|a| a.port())
                .map_err(|source| NetError::Bind {
                    addr: address.bind,
                    source,
                })
        };
        let caller_api = format!("http://{}:{}/", uri_host(&address.host), port(&xmlrpc)?);
        let tcpros_port = port(&tcpros)?;
        let shared = Arc::new(Shared {
            name: name.to_owned(),
            master: Client::new(master_uri, name),
            addr: address,
            caller_api,
            tcpros_port,
            conns: Arc::new(Semaphore::new(limits.max_connections)),
            limits,
            rt: rt.clone(),
            pubs: Mutex::default(),
            subs: Mutex::default(),
            services: Mutex::default(),
            shutdown: AtomicBool::new(false),
            listeners: Mutex::default(),
        });
        let weak = Arc::downgrade(&shared);
        let a = rt.spawn(slave::accept(xmlrpc, weak.clone()));
        let b = rt.spawn(tcpros::accept(tcpros, weak));
        lock(&shared.listeners).extend([a.abort_handle(), b.abort_handle()]);
        Ok(Node(shared))
    }

    /// Our global name (the caller id of every call and header).
    pub fn name(&self) -> &str {
        &self.0.name
    }

    /// Our slave API's URI (`http://host:port/`).
    pub fn caller_api(&self) -> &str {
        &self.0.caller_api
    }

    /// Where our services are served (`rosrpc://host:port`).
    pub fn service_uri(&self) -> String {
        format!(
            "rosrpc://{}:{}",
            uri_host(&self.0.addr.host),
            self.0.tcpros_port
        )
    }

    /// Where the node listens and what it advertises.
    pub fn address(&self) -> &Address {
        &self.0.addr
    }

    /// The master, called as this node.
    pub fn master(&self) -> &Client {
        &self.0.master
    }

    /// False once a peer called the slave API's `shutdown` (as `rosnode kill` does).
    pub fn is_ok(&self) -> bool {
        !self.0.shutdown.load(Ordering::Relaxed)
    }

    /// Advertises `topic` (global) of `T` with a queue of `queue` messages per subscriber; registers it with the
    /// master (blocking). A second advertisement of the same topic and type shares the first.
    pub fn advertise<T: RosMessageType>(
        &self,
        topic: &str,
        queue: usize,
        latched: bool,
    ) -> Result<Publisher<T>, NetError> {
        self.advertise_as(topic, &RawDescriptor::of::<T>(), queue, latched)
    }

    /// [`Node::advertise`] with the type given by `d`; the handle's `T` says how messages are given to it.
    fn advertise_as<T>(
        &self,
        topic: &str,
        d: &RawDescriptor,
        queue: usize,
        latched: bool,
    ) -> Result<Publisher<T>, NetError> {
        let p = {
            let mut pubs = lock(&self.0.pubs);
            match pubs.get(topic) {
                Some(p) if p.ty == d.ros_type && p.md5() == d.md5sum => p.clone(),
                Some(_) => return Err(NetError::Duplicate(topic.to_owned(), "advertised")),
                None => {
                    let p = Arc::new(Publication::new(topic, d, queue, latched));
                    pubs.insert(topic.to_owned(), p.clone());
                    p
                }
            }
        };
        // counted under the table's lock, as in unadvertise
        p.handles.fetch_add(1, Ordering::Relaxed);
        let handle = Publisher::new(self.clone(), p);
        // on failure, dropping the handle takes the topic back out
        self.0
            .master
            .register_publisher(topic, &d.ros_type, &self.0.caller_api)?;
        Ok(handle)
    }

    /// Subscribes to `topic` (global) of `T` with a queue of `queue` messages; registers with the master and
    /// connects to the publishers it names (blocking).
    pub fn subscribe<T: RosMessageType>(
        &self,
        topic: &str,
        queue: usize,
    ) -> Result<Subscriber<T>, NetError> {
        self.subscribe_as(topic, &RawDescriptor::of::<T>(), queue, None)
    }

    /// [`Node::subscribe`] for commands (`cmd_vel`): a connection silent for longer than `stall` (the watchdog
    /// period) has its backlog dropped when it comes back (the outage rule of [`subscriber`]).
    pub fn subscribe_commands<T: RosMessageType>(
        &self,
        topic: &str,
        queue: usize,
        stall: Duration,
    ) -> Result<Subscriber<T>, NetError> {
        self.subscribe_as(topic, &RawDescriptor::of::<T>(), queue, Some(stall))
    }

    /// [`Node::subscribe`] with the type given by `d`; the handle's `T` says how messages are taken from it.
    fn subscribe_as<T>(
        &self,
        topic: &str,
        d: &RawDescriptor,
        queue: usize,
        stall: Option<Duration>,
    ) -> Result<Subscriber<T>, NetError> {
        let s = Subscription::new(topic, d, queue, stall);
        {
            let mut subs = lock(&self.0.subs);
            if subs.contains_key(topic) {
                return Err(NetError::Duplicate(topic.to_owned(), "subscribed"));
            }
            subs.insert(topic.to_owned(), s.clone());
        }
        let handle = Subscriber::new(self.clone(), s.clone());
        let publishers =
            self.0
                .master
                .register_subscriber(topic, &d.ros_type, &self.0.caller_api)?;
        s.update(&self.0, &publishers, false);
        Ok(handle)
    }

    /// Serves `name` (global) with `f` (called on the runtime's blocking pool; an error goes to the caller as the
    /// service's error message); registers it with the master (blocking).
    pub fn serve<S: RosServiceType>(
        &self,
        name: &str,
        f: impl Fn(S::Request) -> Result<S::Response, anyhow::Error> + Send + Sync + 'static,
    ) -> Result<ServiceServer, NetError> {
        self.serve_entry(name, ServiceEntry::new::<S>(name, f))
    }

    /// Serves `e` as `name` (see [`Node::serve`]).
    fn serve_entry(&self, name: &str, e: ServiceEntry) -> Result<ServiceServer, NetError> {
        let e = Arc::new(e);
        {
            let mut services = lock(&self.0.services);
            if services.contains_key(name) {
                return Err(NetError::Duplicate(name.to_owned(), "served"));
            }
            services.insert(name.to_owned(), e.clone());
        }
        let handle = ServiceServer::new(self.clone(), e);
        self.0
            .master
            .register_service(name, &self.service_uri(), &self.0.caller_api)?;
        Ok(handle)
    }

    /// Runs a master call in the background (unregistering a dropped handle must not block its owner).
    fn in_background(&self, f: impl FnOnce(&Client) -> Result<(), MasterError> + Send + 'static) {
        let master = self.0.master.clone();
        drop(self.0.rt.spawn_blocking(move || {
            if let Err(e) = f(&master) {
                tracing::debug!("ROS 1: {e}");
            }
        }));
    }

    fn unadvertise(&self, p: &Arc<Publication>) {
        let mut pubs = lock(&self.0.pubs);
        let last = p.handles.fetch_sub(1, Ordering::Relaxed) == 1;
        if last && pubs.get(&p.topic).is_some_and(|e| Arc::ptr_eq(e, p)) {
            pubs.remove(&p.topic);
            drop(pubs);
            p.close();
            let (topic, api) = (p.topic.clone(), self.0.caller_api.clone());
            self.in_background(move |m| m.unregister_publisher(&topic, &api));
        }
    }

    fn unsubscribe(&self, s: &Arc<Subscription>) {
        let mut subs = lock(&self.0.subs);
        if subs.get(&s.topic).is_some_and(|e| Arc::ptr_eq(e, s)) {
            subs.remove(&s.topic);
        }
        drop(subs);
        s.close();
        let (topic, api) = (s.topic.clone(), self.0.caller_api.clone());
        self.in_background(move |m| m.unregister_subscriber(&topic, &api));
    }

    fn unserve(&self, e: &Arc<ServiceEntry>) {
        let mut services = lock(&self.0.services);
        if services.get(&e.name).is_some_and(|x| Arc::ptr_eq(x, e)) {
            services.remove(&e.name);
        }
        drop(services);
        let (name, uri) = (e.name.clone(), self.service_uri());
        self.in_background(move |m| m.unregister_service(&name, &uri));
    }
}

/// Runs `f` to completion on a current-thread runtime (the unit tests of the async parts).
#[cfg(test)]
pub(crate) fn block<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clip_bounds_what_a_peer_sent() {
        assert_eq!(clip("short"), "short");
        let long = "é".repeat(CLIP_CHARS + 5);
        let clipped = clip(&long);
        assert!(clipped.starts_with(&"é".repeat(CLIP_CHARS)));
        assert!(clipped.ends_with(&format!("…({} bytes)", long.len())));
        assert_eq!(
            clipped.chars().count(),
            CLIP_CHARS + format!("…({} bytes)", long.len()).chars().count()
        );
    }

    #[test]
    fn uris_bracket_ipv6_hosts() {
        assert_eq!(uri_host("::1"), "[::1]");
        assert_eq!(uri_host("robot.local"), "robot.local");
    }

    #[test]
    fn the_node_listens_only_where_it_is_told() {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let address = Address::from_vars(Some("127.0.0.1".into()), None).unwrap();
        let node = Node::start(
            rt.handle().clone(),
            "http://127.0.0.1:9",
            "/t",
            address,
            Limits::default(),
        )
        .unwrap();
        assert!(node.caller_api().starts_with("http://127.0.0.1:"));
        assert!(node.service_uri().starts_with("rosrpc://127.0.0.1:"));
        let port: u16 = node.caller_api()[17..]
            .trim_end_matches('/')
            .parse()
            .unwrap();
        // the slave API answers on loopback
        let c = Client::new(node.caller_api(), "/caller");
        assert_eq!(c.get_pid().unwrap(), std::process::id() as i32);
        drop(node);
        drop(rt);
        // and the port is closed once the node is gone
        assert!(std::net::TcpStream::connect(("127.0.0.1", port)).is_err());
    }
}
