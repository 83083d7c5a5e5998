//! Surviving a master restart, which roscpp and rospy do not: a thread asks the master for
//! its process id (`getPid`) every [`PERIOD`]; when the master was unreachable and comes back, or answers with
//! another pid (a new master on the same URI knows nothing of us), it registers again every publisher, subscriber
//! and service we have ([`super::graph::Registry`]), then tells our own node the publishers each subscription
//! has now (`publisherUpdate` to our slave API, which makes the node connect to them). The master calls our
//! node for later publishers itself.

use super::graph::{Registration, Registry};
use super::master::{Client, MasterError};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// How often the master is asked whether it is still the same.
pub const PERIOD: Duration = Duration::from_millis(500);

/// The watcher thread; stopped and joined on drop.
pub struct MasterWatch {
    stop: Arc<AtomicBool>,
    registrations: Arc<AtomicU64>,
    thread: Option<JoinHandle<()>>,
}

impl MasterWatch {
    /// Watches `master` for the node whose slave API is `caller_api`, redoing `registry`.
    pub fn start(
        master: Client,
        caller_api: String,
        registry: Registry,
    ) -> std::io::Result<MasterWatch> {
        let stop = Arc::new(AtomicBool::new(false));
        let registrations = Arc::new(AtomicU64::new(0));
        let thread = {
            let (stop, count) = (stop.clone(), registrations.clone());
            std::thread::Builder::new()
                .name("nrt-ros1-master".into())
                .spawn(move || {
                    let own = Client::new(&caller_api, master.caller_id());
                    let mut known = master.get_pid().ok();
                    let mut pending = false;
                    while !stop.load(Ordering::Relaxed) {
                        std::thread::sleep(PERIOD);
                        match master.get_pid() {
                            Ok(pid) => {
                                if known != Some(pid) || pending {
                                    tracing::warn!(
                                        "ROS 1: the master at {} is new (pid {pid}): registering again",
                                        master.uri()
                                    );
                                    match register_all(&master, &own, &caller_api, &registry) {
                                        Ok(()) => {
                                            pending = false;
                                            count.fetch_add(1, Ordering::Relaxed);
                                        }
                                        Err(e) => {
                                            pending = true;
                                            tracing::warn!(
                                                "ROS 1: registering again: {}",
                                                crate::net::clip(&e.to_string())
                                            );
                                        }
                                    }
                                    known = Some(pid);
                                }
                            }
                            Err(e) => {
                                if known.is_some() {
                                    tracing::warn!(
                                        "ROS 1: master lost: {}",
                                        crate::net::clip(&e.to_string())
                                    );
                                }
                                known = None;
                                pending = true;
                            }
                        }
                    }
                })?
        };
        Ok(MasterWatch {
            stop,
            registrations,
            thread: Some(thread),
        })
    }

    /// How many times everything was registered again.
    pub fn registrations(&self) -> u64 {
        self.registrations.load(Ordering::Relaxed)
    }

    /// Whether the thread still runs.
    pub fn is_running(&self) -> bool {
        self.thread.as_ref().is_some_and(|t| !t.is_finished())
    }
}

impl Drop for MasterWatch {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Registers everything in `registry` with `master` again.
fn register_all(
    master: &Client,
    own: &Client,
    caller_api: &str,
    registry: &Registry,
) -> Result<(), MasterError> {
    for r in registry.snapshot() {
        match &r {
            Registration::Publisher { topic, ty } => {
                master.register_publisher(topic, ty, caller_api)?
            }
            Registration::Subscriber { topic, ty } => {
                let publishers = master.register_subscriber(topic, ty, caller_api)?;
                if !publishers.is_empty() {
                    own.publisher_update(topic, &publishers)?;
                }
            }
            Registration::Service { name, uri } => {
                master.register_service(name, uri, caller_api)?
            }
            Registration::Param { key, value } => {
                master.set_param(key, serde_xmlrpc::Value::String(value.clone()))?
            }
        }
    }
    Ok(())
}
