//! Our service servers: after the connection header, each request (a framed message) is decoded and handed to
//! the handler on the runtime's blocking pool; the answer is the `ok` byte, then the framed response, or on error
//! the `u32` length and the error message as plain UTF-8 (what rospy and roscpp show the caller). A one-shot
//! connection (`persistent` not `1`) sends its request within [`super::Limits::handshake`] and is closed after the
//! answer; a persistent one may wait between requests. `probe=1` (rosservice's type lookup) gets the header only.

use super::header::{encode, read_frame, Header, WireError};
use super::{Limits, Node};
use roslibrust::{RosMessageType, RosServiceType};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

/// Decodes a request, runs the service, encodes the response; `Err`: the message for the caller.
type Handler = dyn Fn(&[u8]) -> Result<Vec<u8>, String> + Send + Sync;

/// One service we serve.
pub(crate) struct ServiceEntry {
    pub name: String,
    pub ty: String,
    md5: String,
    request_type: String,
    response_type: String,
    handler: Arc<Handler>,
    /// Requests answered.
    pub calls: AtomicU64,
}

impl ServiceEntry {
    pub fn new<S: RosServiceType>(
        name: &str,
        f: impl Fn(S::Request) -> Result<S::Response, anyhow::Error> + Send + Sync + 'static,
    ) -> ServiceEntry {
        let handler = move |bytes: &[u8]| {
            let req: S::Request = roslibrust_serde_rosmsg::from_slice(bytes).map_err(|e| {
                format!(
                    "cannot decode the request as {}: {e}",
                    S::Request::DESCRIPTION.ros_type_name
                )
            })?;
            // the cause chain, never a backtrace
            let resp = f(req).map_err(|e| format!("{e:#}"))?;
            roslibrust_serde_rosmsg::to_vec(&resp)
                .map_err(|e| format!("cannot encode the response: {e}"))
        };
        ServiceEntry {
            name: name.to_owned(),
            ty: S::ROS_SERVICE_NAME.to_owned(),
            md5: S::MD5SUM.to_owned(),
            request_type: S::Request::DESCRIPTION.ros_type_name.to_owned(),
            response_type: S::Response::DESCRIPTION.ros_type_name.to_owned(),
            handler: Arc::new(handler),
            calls: AtomicU64::new(0),
        }
    }

    /// A service of the type `d` whose handler `f` takes the serialised request and gives the serialised
    /// response (message bodies, without their length prefixes).
    pub fn raw(
        name: &str,
        d: &super::RawServiceDescriptor,
        f: impl Fn(Vec<u8>) -> Result<Vec<u8>, String> + Send + Sync + 'static,
    ) -> ServiceEntry {
        let handler = move |framed: &[u8]| {
            // read_frame keeps the length prefix
            let body = framed.get(4..).unwrap_or_default().to_vec();
            let resp = f(body)?;
            Ok(super::descriptor::frame(&resp))
        };
        ServiceEntry {
            name: name.to_owned(),
            ty: d.ros_type.clone(),
            md5: d.md5sum.clone(),
            request_type: d.request_type.clone(),
            response_type: d.response_type.clone(),
            handler: Arc::new(handler),
            calls: AtomicU64::new(0),
        }
    }
}

/// The bytes of an answer: `ok` byte, then the framed response or the error message.
fn answer(result: Result<Vec<u8>, String>) -> Vec<u8> {
    match result {
        Ok(framed) => {
            let mut out = Vec::with_capacity(1 + framed.len());
            out.push(1);
            out.extend_from_slice(&framed);
            out
        }
        Err(message) => {
            let mut out = Vec::with_capacity(5 + message.len());
            out.push(0);
            out.extend_from_slice(&(message.len() as u32).to_le_bytes());
            out.extend_from_slice(message.as_bytes());
            out
        }
    }
}

/// Serves one client whose connection header (`header`) asked for `e`; `own` is our caller id.
pub(crate) async fn serve(
    e: Arc<ServiceEntry>,
    header: Header,
    mut stream: TcpStream,
    own: &str,
    limits: &Limits,
) -> Result<(), WireError> {
    super::handshake::check_md5(&header, (&e.name, &e.ty, &e.md5), &mut stream, limits).await?;
    let reply = encode(&[
        ("callerid", own),
        ("type", &e.ty),
        ("md5sum", &e.md5),
        ("request_type", &e.request_type),
        ("response_type", &e.response_type),
    ]);
    tokio::time::timeout(limits.handshake, stream.write_all(&reply))
        .await
        .map_err(|_| WireError::Timeout("connection header written"))??;
    if header.flag("probe") {
        return Ok(());
    }
    let persistent = header.flag("persistent");
    loop {
        let next = read_frame(&mut stream, limits.max_message);
        let request = if persistent {
            next.await?
        } else {
            tokio::time::timeout(limits.handshake, next)
                .await
                .map_err(|_| WireError::Timeout("service request"))??
        };
        let Some(request) = request else {
            return Ok(());
        };
        let h = e.handler.clone();
        let result = tokio::task::spawn_blocking(move || h(&request))
            .await
            .unwrap_or_else(|j| Err(format!("the service failed: {j}")));
        e.calls.fetch_add(1, Ordering::Relaxed);
        tokio::time::timeout(limits.write_timeout, stream.write_all(&answer(result)))
            .await
            .map_err(|_| WireError::Timeout("service answer written"))??;
        if !persistent {
            return Ok(());
        }
    }
}

/// A service we serve; dropping it unregisters it.
pub struct ServiceServer {
    node: Node,
    e: Arc<ServiceEntry>,
}

impl ServiceServer {
    pub(crate) fn new(node: Node, e: Arc<ServiceEntry>) -> ServiceServer {
        ServiceServer { node, e }
    }

    /// The service's global name.
    pub fn name(&self) -> &str {
        &self.e.name
    }
}

impl Drop for ServiceServer {
    fn drop(&mut self) {
        self.node.unserve(&self.e);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_is_the_ok_byte_its_length_and_the_plain_message() {
        let a = answer(Err("set_variable x: no such variable".into()));
        assert_eq!(a[0], 0);
        assert_eq!(
            u32::from_le_bytes([a[1], a[2], a[3], a[4]]) as usize,
            a.len() - 5
        );
        assert_eq!(&a[5..], b"set_variable x: no such variable");
        let ok = answer(Ok(vec![2, 0, 0, 0, 9, 9]));
        assert_eq!(ok, vec![1, 2, 0, 0, 0, 9, 9]);
    }
}
