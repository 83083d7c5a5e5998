//! Another driver on our names, seen from the ROS 1 master ([`nrt_engine::rivals`]): a thread asks the master every
//! [`CHECK_PERIOD`] for its publishers (`getSystemState`) and for where our node's name is served (`lookupNode`),
//! and hands the latest answer to the NRT loop, which never waits for the master.

pub use nrt_engine::rivals::CHECK_PERIOD;
use nrt_ros1_client::master::Client;
use serde_xmlrpc::Value;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, TrySendError};
use std::sync::Arc;
use std::thread::JoinHandle;

/// What the master said in one look.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Sighting {
    /// Every published topic and its publishers' node names.
    pub publishers: BTreeMap<String, Vec<String>>,
    /// Where the master serves our node's name, when it is not our own address.
    pub name_elsewhere: Option<String>,
}

/// The publishers part of a `getSystemState` answer (`[[topic, [node…]]…]`).
pub fn publishers(state: &Value) -> BTreeMap<String, Vec<String>> {
    let mut out = BTreeMap::new();
    let Value::Array(parts) = state else {
        return out;
    };
    let Some(Value::Array(pubs)) = parts.first() else {
        return out;
    };
    for entry in pubs {
        if let Value::Array(pair) = entry {
            if let [Value::String(topic), Value::Array(nodes)] = pair.as_slice() {
                let nodes = nodes
                    .iter()
                    .filter_map(|n| match n {
                        Value::String(n) => Some(n.clone()),
                        _ => None,
                    })
                    .collect();
                out.insert(topic.clone(), nodes);
            }
        }
    }
    out
}

/// The thread that looks; stopped and joined on drop.
pub struct RivalLookout {
    stop: Arc<AtomicBool>,
    seen: Receiver<Sighting>,
    thread: Option<JoinHandle<()>>,
}

impl RivalLookout {
    /// Looks at `master` for the node `master.caller_id()` served at `caller_api`.
    pub fn start(master: Client, caller_api: String) -> std::io::Result<RivalLookout> {
        let stop = Arc::new(AtomicBool::new(false));
        let (tx, seen) = sync_channel(1);
        let thread = {
            let stop = stop.clone();
            std::thread::Builder::new()
                .name("nrt-ros1-rivals".into())
                .spawn(move || {
                    let name = master.caller_id().to_owned();
                    while !stop.load(Ordering::Relaxed) {
                        // a master that does not answer is the master watcher's business
                        if let Ok(state) = master.call("getSystemState", vec![]) {
                            let name_elsewhere = match master
                                .call("lookupNode", vec![Value::String(name.clone())])
                            {
                                Ok(Value::String(uri)) if !same_uri(&uri, &caller_api) => Some(uri),
                                _ => None,
                            };
                            let s = Sighting {
                                publishers: publishers(&state),
                                name_elsewhere,
                            };
                            if let Err(TrySendError::Disconnected(_)) = tx.try_send(s) {
                                return;
                            }
                        }
                        let mut left = CHECK_PERIOD;
                        while !left.is_zero() && !stop.load(Ordering::Relaxed) {
                            let step = left.min(std::time::Duration::from_millis(100));
                            std::thread::sleep(step);
                            left -= step;
                        }
                    }
                })?
        };
        Ok(RivalLookout {
            stop,
            seen,
            thread: Some(thread),
        })
    }

    /// The newest sighting since the last call, if any (never waits).
    pub fn latest(&self) -> Option<Sighting> {
        self.seen.try_iter().last()
    }
}

/// Whether two slave API URIs are the same (a trailing `/` or not).
fn same_uri(a: &str, b: &str) -> bool {
    a.trim_end_matches('/') == b.trim_end_matches('/')
}

impl Drop for RivalLookout {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &str) -> Value {
        Value::String(v.into())
    }

    #[test]
    fn the_publishers_are_read_from_the_system_state() {
        let state = Value::Array(vec![
            Value::Array(vec![
                Value::Array(vec![
                    s("/odom"),
                    Value::Array(vec![s("/asebaros"), s("/other")]),
                ]),
                Value::Array(vec![s("/rosout"), Value::Array(vec![s("/asebaros")])]),
            ]),
            Value::Array(vec![]),
            Value::Array(vec![]),
        ]);
        let p = publishers(&state);
        assert_eq!(p["/odom"], vec!["/asebaros", "/other"]);
        assert_eq!(p.len(), 2);
        assert!(publishers(&s("nonsense")).is_empty());
    }

    #[test]
    fn uris_compare_without_the_trailing_slash() {
        assert!(same_uri("http://h:1/", "http://h:1"));
        assert!(!same_uri("http://h:1/", "http://h:2/"));
    }
}
