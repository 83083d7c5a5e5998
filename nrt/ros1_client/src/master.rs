//! The ROS master and node XML-RPC calls the node makes: `getPid`, `getParam`, `setParam`,
//! `(un)register{Publisher,Subscriber,Service}`, `lookupService`, `requestTopic` to a publisher (through
//! [`Client::call`]), and `publisherUpdate` to a node (our own, so that it connects to the publishers a
//! re-registration found). Blocking calls over HTTP (ureq) with a short timeout; never called from the RT thread.
//! An answer's nesting is checked by a streaming scan before it is decoded (a hostile master or publisher cannot
//! overflow the caller's stack), and its size is bounded by ureq (10 MB).
//!
//! Every master call answers `[code, statusMessage, value]` (code 1 = success, ROS Master API).

use serde_xmlrpc::Value;
use std::time::Duration;

/// Longest wait for one XML-RPC call.
pub const CALL_TIMEOUT: Duration = Duration::from_secs(2);
/// Deepest nesting of an answer we decode.
pub const MAX_DEPTH: usize = 64;

/// A failed XML-RPC call.
#[derive(Debug, thiserror::Error)]
pub enum MasterError {
    /// The HTTP exchange failed (refused, timed out, not HTTP).
    #[error("{uri}: {method}: {source}")]
    Http {
        /// Whom we called.
        uri: String,
        /// What.
        method: String,
        /// Cause.
        #[source]
        source: Box<ureq::Error>,
    },
    /// The body could not be read.
    #[error("{uri}: {method}: cannot read the answer: {source}")]
    Read {
        /// Whom we called.
        uri: String,
        /// What.
        method: String,
        /// Cause.
        #[source]
        source: std::io::Error,
    },
    /// The request or the answer is not the XML-RPC we expect.
    #[error("{method}: XML-RPC: {source}")]
    XmlRpc {
        /// What.
        method: String,
        /// Cause.
        #[source]
        source: serde_xmlrpc::Error,
    },
    /// The answer nests deeper than we decode.
    #[error("{method}: answer refused: {source}")]
    Depth {
        /// What.
        method: String,
        /// Cause.
        #[source]
        source: crate::net::xml::XmlError,
    },
    /// The answer is not `[code, message, value]`.
    #[error("{method}: unexpected answer {answer:?}")]
    Shape {
        /// What.
        method: String,
        /// The answer.
        answer: String,
    },
    /// The master (or node) said no.
    #[error("{method}: refused (code {code}): {message}")]
    Refused {
        /// What.
        method: String,
        /// ROS API code (-1 caller error, 0 failure).
        code: i32,
        /// The status message.
        message: String,
    },
}

/// An XML-RPC endpoint of the ROS graph (the master, or a node's slave API), called as `caller_id`.
#[derive(Clone)]
pub struct Client {
    uri: String,
    caller_id: String,
    agent: ureq::Agent,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("uri", &self.uri)
            .field("caller_id", &self.caller_id)
            .finish()
    }
}

fn s(v: &str) -> Value {
    Value::String(v.to_owned())
}

impl Client {
    /// Calls `uri` (e.g. `http://127.0.0.1:11311`) as `caller_id` (our node's global name).
    pub fn new(uri: &str, caller_id: &str) -> Client {
        Client {
            uri: uri.to_owned(),
            caller_id: caller_id.to_owned(),
            agent: ureq::AgentBuilder::new().timeout(CALL_TIMEOUT).build(),
        }
    }

    /// The caller id the calls are made as.
    pub fn caller_id(&self) -> &str {
        &self.caller_id
    }

    /// The endpoint's URI.
    pub fn uri(&self) -> &str {
        &self.uri
    }

    /// Calls `method(caller_id, args…)` and returns the value of a successful answer.
    pub fn call(&self, method: &str, args: Vec<Value>) -> Result<Value, MasterError> {
        let mut all = vec![s(&self.caller_id)];
        all.extend(args);
        let xml_err = |source| MasterError::XmlRpc {
            method: method.to_owned(),
            source,
        };
        let body = serde_xmlrpc::request_to_string(method, all).map_err(xml_err)?;
        let answer = self
            .agent
            .post(&self.uri)
            .set("Content-Type", "text/xml")
            .send_string(&body)
            .map_err(|e| MasterError::Http {
                uri: self.uri.clone(),
                method: method.to_owned(),
                source: Box::new(e),
            })?
            .into_string()
            .map_err(|source| MasterError::Read {
                uri: self.uri.clone(),
                method: method.to_owned(),
                source,
            })?;
        crate::net::xml::check_depth(answer.as_bytes(), MAX_DEPTH).map_err(|source| {
            MasterError::Depth {
                method: method.to_owned(),
                source,
            }
        })?;
        let value: Value = serde_xmlrpc::response_from_str(&answer).map_err(xml_err)?;
        unpack(method, value)
    }

    /// The master's (or node's) process id: changes when the master is restarted.
    pub fn get_pid(&self) -> Result<i32, MasterError> {
        match self.call("getPid", vec![])? {
            Value::Int(pid) => Ok(pid),
            other => Err(shape("getPid", &other)),
        }
    }

    /// The parameter `key` (a whole tree for a namespace), `None` if it is not set.
    pub fn get_param(&self, key: &str) -> Result<Option<Value>, MasterError> {
        match self.call("getParam", vec![s(key)]) {
            Ok(v) => Ok(Some(v)),
            // "Parameter [...] is not set"
            Err(MasterError::Refused { code: -1, .. }) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Sets the parameter `key` (a struct sets a tree).
    pub fn set_param(&self, key: &str, value: Value) -> Result<(), MasterError> {
        self.call("setParam", vec![s(key), value]).map(drop)
    }

    /// Registers `caller_api` as a publisher of `topic` of `topic_type`.
    pub fn register_publisher(
        &self,
        topic: &str,
        topic_type: &str,
        caller_api: &str,
    ) -> Result<(), MasterError> {
        self.call(
            "registerPublisher",
            vec![s(topic), s(topic_type), s(caller_api)],
        )
        .map(drop)
    }

    /// Registers `caller_api` as a subscriber of `topic`; returns the publishers' XML-RPC URIs.
    pub fn register_subscriber(
        &self,
        topic: &str,
        topic_type: &str,
        caller_api: &str,
    ) -> Result<Vec<String>, MasterError> {
        let v = self.call(
            "registerSubscriber",
            vec![s(topic), s(topic_type), s(caller_api)],
        )?;
        strings("registerSubscriber", v)
    }

    /// Registers service `service` served at `service_api` (`rosrpc://host:port`).
    pub fn register_service(
        &self,
        service: &str,
        service_api: &str,
        caller_api: &str,
    ) -> Result<(), MasterError> {
        self.call(
            "registerService",
            vec![s(service), s(service_api), s(caller_api)],
        )
        .map(drop)
    }

    /// Unregisters `caller_api` as a publisher of `topic`.
    pub fn unregister_publisher(&self, topic: &str, caller_api: &str) -> Result<(), MasterError> {
        self.call("unregisterPublisher", vec![s(topic), s(caller_api)])
            .map(drop)
    }

    /// Unregisters `caller_api` as a subscriber of `topic`.
    pub fn unregister_subscriber(&self, topic: &str, caller_api: &str) -> Result<(), MasterError> {
        self.call("unregisterSubscriber", vec![s(topic), s(caller_api)])
            .map(drop)
    }

    /// Unregisters service `service` served at `service_api`.
    pub fn unregister_service(&self, service: &str, service_api: &str) -> Result<(), MasterError> {
        self.call("unregisterService", vec![s(service), s(service_api)])
            .map(drop)
    }

    /// Where service `service` is served (`rosrpc://host:port`).
    pub fn lookup_service(&self, service: &str) -> Result<String, MasterError> {
        match self.call("lookupService", vec![s(service)])? {
            Value::String(uri) => Ok(uri),
            other => Err(shape("lookupService", &other)),
        }
    }

    /// Tells a node (this client's endpoint) the publishers of `topic` (slave API `publisherUpdate`).
    pub fn publisher_update(&self, topic: &str, publishers: &[String]) -> Result<(), MasterError> {
        let list = Value::Array(publishers.iter().map(|p| s(p)).collect());
        self.call("publisherUpdate", vec![s(topic), list]).map(drop)
    }
}

fn shape(method: &str, v: &Value) -> MasterError {
    MasterError::Shape {
        method: method.to_owned(),
        answer: format!("{v:?}"),
    }
}

fn strings(method: &str, v: Value) -> Result<Vec<String>, MasterError> {
    match v {
        Value::Array(items) => items
            .into_iter()
            .map(|i| match i {
                Value::String(s) => Ok(s),
                other => Err(shape(method, &other)),
            })
            .collect(),
        other => Err(shape(method, &other)),
    }
}

/// `[code, message, value]` → value if code is 1.
fn unpack(method: &str, v: Value) -> Result<Value, MasterError> {
    let Value::Array(mut items) = v else {
        return Err(shape(method, &v));
    };
    if items.len() != 3 {
        return Err(shape(method, &Value::Array(items)));
    }
    let value = items.pop().unwrap_or(Value::Nil);
    let message = match items.pop() {
        Some(Value::String(m)) => m,
        _ => String::new(),
    };
    match items.pop() {
        Some(Value::Int(1)) => Ok(value),
        Some(Value::Int(code)) => Err(MasterError::Refused {
            method: method.to_owned(),
            code,
            message,
        }),
        other => Err(shape(method, &other.unwrap_or(Value::Nil))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_successful_answer_gives_its_value() {
        let v = Value::Array(vec![Value::Int(1), s("ok"), Value::Int(42)]);
        assert!(matches!(unpack("getPid", v), Ok(Value::Int(42))));
    }

    #[test]
    fn a_refusal_keeps_code_and_message() {
        let v = Value::Array(vec![
            Value::Int(-1),
            s("Parameter [/x] is not set"),
            Value::Int(0),
        ]);
        match unpack("getParam", v) {
            Err(MasterError::Refused { code, message, .. }) => {
                assert_eq!(code, -1);
                assert!(message.contains("not set"));
            }
            other => panic!("{other:?}"),
        }
    }

    /// A hostile endpoint (a publisher's slave API answering `requestTopic`, or a fake master) answering 5,000
    /// nested arrays: refused by the depth scan before serde_xmlrpc's recursive decoder sees it.
    #[test]
    fn a_deeply_nested_answer_is_refused_before_decoding() {
        use std::io::{BufRead, BufReader, Read, Write};
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let server = std::thread::spawn(move || {
            let (c, _) = l.accept().unwrap();
            // the whole request first (its head, then Content-Length bytes)
            let mut r = BufReader::new(c);
            let mut length = 0;
            loop {
                let mut line = String::new();
                r.read_line(&mut line).unwrap();
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    length = v.trim().parse().unwrap();
                }
                if line == "\r\n" {
                    break;
                }
            }
            let mut body = vec![0; length];
            r.read_exact(&mut body).unwrap();
            let mut answer = String::from("<?xml version=\"1.0\"?><methodResponse><params><param>");
            answer.push_str(&"<value><array><data>".repeat(5_000));
            answer.push_str(&"</data></array></value>".repeat(5_000));
            answer.push_str("</param></params></methodResponse>");
            let head = format!(
                "HTTP/1.0 200 OK\r\nContent-Type: text/xml\r\nContent-Length: {}\r\n\r\n",
                answer.len()
            );
            let mut c = r.into_inner();
            c.write_all(head.as_bytes()).unwrap();
            c.write_all(answer.as_bytes()).unwrap();
        });
        let c = Client::new(&format!("http://127.0.0.1:{port}/"), "/t");
        match c.call("requestTopic", vec![s("/odom")]) {
            Err(MasterError::Depth { method, .. }) => assert_eq!(method, "requestTopic"),
            other => panic!("{other:?}"),
        }
        server.join().unwrap();
    }

    #[test]
    fn a_malformed_answer_is_an_error() {
        assert!(matches!(
            unpack("getPid", Value::Int(3)),
            Err(MasterError::Shape { .. })
        ));
        assert!(matches!(
            strings("registerSubscriber", Value::Array(vec![Value::Int(1)])),
            Err(MasterError::Shape { .. })
        ));
    }
}
