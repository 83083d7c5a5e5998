//! Our node on the ROS 1 graph: the transport of [`super::net`] (its XML-RPC slave server, TCPROS publishers,
//! subscribers and service servers, on a tokio runtime of its own: two worker threads) and the bookkeeping of
//! re-registration: every registration is recorded ([`Registry`]) so that [`super::watch`] can redo it with a
//! restarted master.
//!
//! Threads: the runtime's workers read and write the sockets; the `cmd_vel` subscription tasks run there too and
//! store the set-point straight into the RT thread's cell. Service callbacks run on tokio's blocking pool and
//! hand their request to the NRT loop (an inbox channel, [`Graph::forward`]). Publishing never waits: the serialised message is queued for
//! each subscriber's socket task. Registering takes master round trips: the NRT loop hands that work to a
//! registrar thread ([`Graph::submit`]) and takes the result back when it is ready.

use super::master::Client;
use super::net::{
    Address, Limits, NetError, Node, Publisher, RawDescriptor, RawMessage, RawServiceDescriptor,
    ServiceServer, Subscriber,
};
use super::Bell;
use roslibrust::{RosMessageType, RosServiceType};
use std::future::Future;
use std::sync::{Arc, Mutex};

/// Errors of the graph: starting the node, registering with the master, publishing.
#[derive(Debug, thiserror::Error)]
pub enum GraphError {
    /// The tokio runtime (or the registrar thread) could not start.
    #[error("cannot start the ROS 1 runtime: {0}")]
    Runtime(#[source] std::io::Error),
    /// The node could not be made (address, listening sockets).
    #[error("cannot create the ROS 1 node {0}: {1}")]
    Node(String, #[source] anyhow::Error),
    /// A topic or service could not be registered.
    #[error("cannot register {0}: {1}")]
    Register(String, #[source] anyhow::Error),
    /// A message could not be queued.
    #[error("cannot publish: {0}")]
    Publish(#[source] NetError),
}

/// One registration with the master, to redo after a master restart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Registration {
    /// We publish `topic` of `ty`.
    Publisher {
        /// Global name.
        topic: String,
        /// ROS type.
        ty: String,
    },
    /// We subscribe to `topic` of `ty`.
    Subscriber {
        /// Global name.
        topic: String,
        /// ROS type.
        ty: String,
    },
    /// We serve `name` at `uri` (`rosrpc://host:port`).
    Service {
        /// Global name.
        name: String,
        /// Where.
        uri: String,
    },
    /// We set the parameter `key` to the string `value` (a new master has none of the old one's parameters: e.g.
    /// `robot_description`, which ROS 1's tools read from the parameter server).
    Param {
        /// Global name.
        key: String,
        /// Its value.
        value: String,
    },
}

impl Registration {
    fn name(&self) -> &str {
        match self {
            Registration::Publisher { topic, .. } | Registration::Subscriber { topic, .. } => topic,
            Registration::Service { name, .. } => name,
            Registration::Param { key, .. } => key,
        }
    }
}

/// The registrations in force, shared with the master watcher.
#[derive(Debug, Clone, Default)]
pub struct Registry(Arc<Mutex<Vec<Registration>>>);

impl Registry {
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Registration>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Records `r` (a parameter's new value replaces its old one).
    pub fn add(&self, r: Registration) {
        let mut v = self.lock();
        if let Registration::Param { key, .. } = &r {
            v.retain(|o| !matches!(o, Registration::Param { key: k, .. } if k == key));
        }
        if !v.contains(&r) {
            v.push(r);
        }
    }

    /// Forgets the registrations of `name` (topic or service).
    pub fn remove(&self, name: &str) {
        self.lock().retain(|r| r.name() != name);
    }

    /// All of them now.
    pub fn snapshot(&self) -> Vec<Registration> {
        self.lock().clone()
    }
}

/// A global ROS name from a namespace and relative parts (empty parts left out).
pub fn global(parts: &[&str]) -> String {
    let mut out = String::new();
    for p in parts
        .iter()
        .map(|p| p.trim_matches('/'))
        .filter(|p| !p.is_empty())
    {
        out.push('/');
        out.push_str(p);
    }
    if out.is_empty() {
        out.push('/');
    }
    out
}

/// Work for the registrar thread: creating publishers, subscriptions and services takes master round trips
/// (milliseconds each, seconds for a whole node's interface), which the NRT loop must not wait for.
pub type Job = Box<dyn FnOnce(&Graph) + Send>;

/// The node and its runtime (see the module documentation). Cloned freely.
#[derive(Clone)]
pub struct Graph {
    /// To the registrar thread (`None` in the registrar's own copy, so that it ends when every other copy is
    /// gone).
    jobs: Option<std::sync::mpsc::Sender<Job>>,
    rt: Arc<tokio::runtime::Runtime>,
    node: Node,
    /// The master, called as this node.
    pub master: Client,
    /// Our own slave API URI (`http://host:port`).
    pub caller_api: String,
    /// Our global node name.
    pub name: String,
    /// What to redo after a master restart.
    pub registry: Registry,
    /// Rung when a request waits for the NRT loop.
    pub bell: Bell,
}

impl Graph {
    /// Starts the runtime and the node `name` (global) with the master at `master_uri`, listening at the address
    /// of `ROS_IP` / `ROS_HOSTNAME` ([`Address::from_env`]); requests are not rung until [`Graph::set_bell`].
    pub fn start(master_uri: &str, name: &str) -> Result<Graph, GraphError> {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("nrt-ros1")
            .enable_all()
            .build()
            .map_err(GraphError::Runtime)?;
        let node_err = |e: NetError| GraphError::Node(name.to_owned(), e.into());
        let address = Address::from_env().map_err(|e| node_err(e.into()))?;
        let node = Node::start(
            rt.handle().clone(),
            master_uri,
            name,
            address,
            Limits::default(),
        )
        .map_err(node_err)?;
        let caller_api = node.caller_api().to_owned();
        let mut graph = Graph {
            jobs: None,
            rt: Arc::new(rt),
            master: node.master().clone(),
            node,
            caller_api,
            name: name.to_owned(),
            registry: Registry::default(),
            bell: Bell::silent(),
        };
        let (tx, rx) = std::sync::mpsc::channel::<Job>();
        let own = graph.clone();
        std::thread::Builder::new()
            .name("nrt-ros1-register".into())
            .spawn(move || {
                while let Ok(job) = rx.recv() {
                    job(&own);
                }
            })
            .map_err(GraphError::Runtime)?;
        graph.jobs = Some(tx);
        Ok(graph)
    }

    /// Runs `job` on the registrar thread (in order of submission); it hands its result back itself.
    pub fn submit(&self, job: impl FnOnce(&Graph) + Send + 'static) {
        if let Some(tx) = &self.jobs {
            let _ = tx.send(Box::new(job));
        }
    }

    /// Rings `bell` (the NRT loop's) when a request waits for the loop.
    pub fn set_bell(&mut self, bell: Bell) {
        self.bell = bell;
    }

    /// Where the node listens and what it advertises.
    pub fn address(&self) -> &Address {
        self.node.address()
    }

    /// Advertises `topic` (global), latched or not.
    pub fn advertise<T: RosMessageType>(
        &self,
        topic: &str,
        queue: usize,
        latched: bool,
    ) -> Result<Publisher<T>, GraphError> {
        let topic: &str = &super::remap::apply(topic);
        let p = self
            .node
            .advertise::<T>(topic, queue, latched)
            .map_err(|e| GraphError::Register(topic.to_owned(), e.into()))?;
        self.registry.add(Registration::Publisher {
            topic: topic.to_owned(),
            ty: T::DESCRIPTION.ros_type_name.to_owned(),
        });
        Ok(p)
    }

    /// Subscribes to `topic` (global).
    pub fn subscribe<T: RosMessageType>(
        &self,
        topic: &str,
        queue: usize,
    ) -> Result<Subscriber<T>, GraphError> {
        self.subscribe_commands(topic, queue, None)
    }

    /// Subscribes to `topic` (global) of commands: with `stall` (the watchdog period), what a connection silent
    /// for longer delivers in a burst is dropped ([`crate::net::Node::subscribe_commands`]).
    pub fn subscribe_commands<T: RosMessageType>(
        &self,
        topic: &str,
        queue: usize,
        stall: Option<std::time::Duration>,
    ) -> Result<Subscriber<T>, GraphError> {
        let topic: &str = &super::remap::apply(topic);
        let s = match stall {
            Some(stall) => self.node.subscribe_commands::<T>(topic, queue, stall),
            None => self.node.subscribe::<T>(topic, queue),
        }
        .map_err(|e| GraphError::Register(topic.to_owned(), e.into()))?;
        self.registry.add(Registration::Subscriber {
            topic: topic.to_owned(),
            ty: T::DESCRIPTION.ros_type_name.to_owned(),
        });
        Ok(s)
    }

    /// Serves `name` (global) with `f` (called on tokio's blocking pool).
    pub fn serve<S: RosServiceType>(
        &self,
        name: &str,
        f: impl Fn(S::Request) -> Result<S::Response, anyhow::Error> + Send + Sync + 'static,
    ) -> Result<ServiceServer, GraphError> {
        let name: &str = &super::remap::apply(name);
        let server = self
            .node
            .serve::<S>(name, f)
            .map_err(|e| GraphError::Register(name.to_owned(), e.into()))?;
        self.registry.add(Registration::Service {
            name: name.to_owned(),
            uri: self.node.service_uri(),
        });
        Ok(server)
    }

    /// Queues `msg` on `p` (never waits for a subscriber).
    pub fn publish<T: RosMessageType>(&self, p: &Publisher<T>, msg: &T) -> Result<(), GraphError> {
        p.publish(msg).map_err(GraphError::Publish)
    }

    /// Subscribes `topic` (global) and hands what `convert` makes of each message to the NRT loop (`inbox`,
    /// ringing its bell); `None` hands nothing. The task ends when the loop is gone, or when the handle is dropped.
    pub fn forward<T: RosMessageType, C: Send + 'static>(
        &self,
        topic: &str,
        queue: usize,
        inbox: std::sync::mpsc::Sender<C>,
        convert: impl Fn(T) -> Option<C> + Send + 'static,
    ) -> Result<Task, GraphError> {
        let mut sub = self.subscribe::<T>(topic, queue)?;
        let (bell, topic) = (self.bell.clone(), topic.to_owned());
        Ok(self.spawn(async move {
            while let Some(m) = sub.next().await {
                match m.map(&convert) {
                    Ok(Some(call)) => {
                        if inbox.send(call).is_err() {
                            return;
                        }
                        bell.ring();
                    }
                    Ok(None) => {}
                    Err(e) => {
                        tracing::warn!("ROS 1: {topic}: {}", super::net::clip(&e.to_string()))
                    }
                }
            }
        }))
    }

    /// Advertises `topic` (global) of the run-time type `d` (messages as bytes: [`Publisher::publish_bytes`]).
    pub fn advertise_raw(
        &self,
        topic: &str,
        d: &RawDescriptor,
        queue: usize,
        latched: bool,
    ) -> Result<Publisher<RawMessage>, GraphError> {
        let topic: &str = &super::remap::apply(topic);
        let p = self
            .node
            .advertise_raw(topic, d, queue, latched)
            .map_err(|e| GraphError::Register(topic.to_owned(), e.into()))?;
        self.registry.add(Registration::Publisher {
            topic: topic.to_owned(),
            ty: d.ros_type.clone(),
        });
        Ok(p)
    }

    /// Subscribes to `topic` (global) of the run-time type `d` (messages as bytes: [`Subscriber::next_bytes`]).
    pub fn subscribe_raw(
        &self,
        topic: &str,
        d: &RawDescriptor,
        queue: usize,
    ) -> Result<Subscriber<RawMessage>, GraphError> {
        let topic: &str = &super::remap::apply(topic);
        let s = self
            .node
            .subscribe_raw(topic, d, queue)
            .map_err(|e| GraphError::Register(topic.to_owned(), e.into()))?;
        self.registry.add(Registration::Subscriber {
            topic: topic.to_owned(),
            ty: d.ros_type.clone(),
        });
        Ok(s)
    }

    /// Serves `name` (global) of the run-time type `d` with `f` (serialised request → serialised response or the
    /// caller's error message; called on tokio's blocking pool).
    pub fn serve_raw(
        &self,
        name: &str,
        d: &RawServiceDescriptor,
        f: impl Fn(Vec<u8>) -> Result<Vec<u8>, String> + Send + Sync + 'static,
    ) -> Result<ServiceServer, GraphError> {
        let name: &str = &super::remap::apply(name);
        let server = self
            .node
            .serve_raw(name, d, f)
            .map_err(|e| GraphError::Register(name.to_owned(), e.into()))?;
        self.registry.add(Registration::Service {
            name: name.to_owned(),
            uri: self.node.service_uri(),
        });
        Ok(server)
    }

    /// [`Graph::forward`] for the run-time type `d`: what `convert` makes of each serialised message goes to the
    /// NRT loop (`inbox`, ringing its bell).
    pub fn forward_raw<C: Send + 'static>(
        &self,
        topic: &str,
        d: &RawDescriptor,
        queue: usize,
        inbox: std::sync::mpsc::Sender<C>,
        convert: impl Fn(Vec<u8>) -> Option<C> + Send + 'static,
    ) -> Result<Task, GraphError> {
        let mut sub = self.subscribe_raw(topic, d, queue)?;
        let bell = self.bell.clone();
        Ok(self.spawn(async move {
            while let Some(bytes) = sub.next_bytes().await {
                if let Some(call) = convert(bytes) {
                    if inbox.send(call).is_err() {
                        return;
                    }
                    bell.ring();
                }
            }
        }))
    }

    /// Runs `f` on the runtime (subscription tasks); aborted when the handle is dropped.
    pub fn spawn(&self, f: impl Future<Output = ()> + Send + 'static) -> Task {
        Task(self.rt.spawn(f))
    }

    /// Sets the string parameter `key` (global, after remapping) on the master, and again on every new master
    /// after a restart ([`Registration::Param`]) until [`Graph::forget`].
    pub fn set_param(&self, key: &str, value: String) -> Result<(), super::master::MasterError> {
        self.master
            .set_param(key, serde_xmlrpc::Value::String(value.clone()))?;
        self.registry.add(Registration::Param {
            key: key.to_owned(),
            value,
        });
        Ok(())
    }

    /// Forgets the registration of `name` (its publisher, subscriber, service or parameter was dropped): not
    /// registered again with a new master.
    pub fn forget(&self, name: &str) {
        self.registry.remove(&super::remap::apply(name));
    }

    /// Whether the node still runs (no peer asked it to shut down).
    pub fn is_ok(&self) -> bool {
        self.node.is_ok()
    }
}

/// A task on the runtime, aborted on drop.
#[derive(Debug)]
pub struct Task(tokio::task::JoinHandle<()>);

impl Drop for Task {
    fn drop(&mut self) {
        self.0.abort();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn global_names_join_namespaces_and_leaves() {
        assert_eq!(global(&["", "thymio_3", "cmd_vel"]), "/thymio_3/cmd_vel");
        assert_eq!(global(&["/lab/", "", "aseba/nodes"]), "/lab/aseba/nodes");
        assert_eq!(global(&["", ""]), "/");
    }

    #[test]
    fn the_registry_forgets_by_name_and_keeps_no_duplicates() {
        let r = Registry::default();
        let p = Registration::Publisher {
            topic: "/odom".into(),
            ty: "nav_msgs/Odometry".into(),
        };
        r.add(p.clone());
        r.add(p.clone());
        r.add(Registration::Service {
            name: "/s".into(),
            uri: "rosrpc://h:1".into(),
        });
        assert_eq!(r.snapshot().len(), 2);
        r.remove("/odom");
        assert_eq!(r.snapshot().len(), 1);
    }

    #[test]
    fn a_parameter_set_again_replaces_its_value() {
        let r = Registry::default();
        let param = |v: &str| Registration::Param {
            key: "/robot_description".into(),
            value: v.into(),
        };
        r.add(param("<robot name=\"a\"/>"));
        r.add(param("<robot name=\"b\"/>"));
        assert_eq!(r.snapshot(), vec![param("<robot name=\"b\"/>")]);
        r.remove("/robot_description");
        assert!(r.snapshot().is_empty());
    }
}
