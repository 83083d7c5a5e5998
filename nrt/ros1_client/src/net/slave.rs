//! The XML-RPC slave API (ROS 1's node API): `getBusStats`, `getBusInfo`, `getMasterUri`, `shutdown`, `getPid`,
//! `getSubscriptions`, `getPublications`, `paramUpdate`, `publisherUpdate`, `requestTopic`. The accept loop only
//! accepts; each connection is served by a task of its own, let in by the [`super::door`] (a newcomer is never
//! refused for slow or idle connections: the oldest still sending its request is dropped instead), and must send
//! its whole request (head and body) within [`super::Limits::xmlrpc_timeout`]; the answer is written within that
//! time again. The request is read bounded ([`super::http`]), its nesting checked by a streaming scan
//! ([`super::xml::check_depth`]) before serde_xmlrpc decodes it, and answered `[code, statusMessage, value]` — or a
//! fault for a body that is not a call we can read. What a peer sent is [`super::clip`]ped before it is logged.

use super::door::{Admission, Door, Pass};
use super::http::{read_request, write_response};
use super::xml::{check_depth, fault};
use super::{clip, lock, Limits, Shared};
use serde_xmlrpc::Value;
use std::sync::atomic::Ordering;
use std::sync::Weak;
use tokio::net::{TcpListener, TcpStream};

/// Accepts connections until the node is gone.
pub(crate) async fn accept(listener: TcpListener, node: Weak<Shared>) {
    let Some(limits) = node.upgrade().map(|n| n.limits.clone()) else {
        return;
    };
    let door = Door::new(
        limits.max_xmlrpc,
        limits.max_xmlrpc_per_peer,
        limits.xmlrpc_grace,
    );
    loop {
        let (stream, peer) = match listener.accept().await {
            Ok(s) => s,
            Err(e) => {
                tracing::warn!("ROS 1: XML-RPC accept: {e}");
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                continue;
            }
        };
        let Some(pass) = admit(&door, peer, &limits).await else {
            continue;
        };
        let (node, limits) = (node.clone(), limits.clone());
        tokio::spawn(async move {
            if let Err(e) = serve(stream, &node, &limits, &pass).await {
                tracing::debug!(
                    "ROS 1: XML-RPC connection from {peer}: {}",
                    clip(&e.to_string())
                );
            }
        });
        // the new connection's task reads what it already sent before the next newcomer can drop it
        tokio::task::yield_now().await;
    }
}

/// Lets the connection from `peer` in (see [`super::door`]): at once, or once a place is freed or a slow
/// connection is past its grace; `None` when every place is being answered or no place came within
/// [`Limits::xmlrpc_timeout`] (the connection is then closed). Newer connections wait in the listen backlog meanwhile.
async fn admit(
    door: &std::sync::Arc<Door>,
    peer: std::net::SocketAddr,
    limits: &Limits,
) -> Option<Pass> {
    let deadline = tokio::time::Instant::now() + limits.xmlrpc_timeout;
    loop {
        let (admission, dropped) = door.enter(peer.ip());
        if dropped > 0 {
            tracing::debug!(
                "ROS 1: XML-RPC: {dropped} connection(s) still sending their request dropped for one from {peer}"
            );
        }
        let wait = match admission {
            Admission::In(pass) => return Some(pass),
            Admission::Full => {
                tracing::debug!(
                    "ROS 1: XML-RPC connection from {peer} refused: every place is being answered"
                );
                return None;
            }
            Admission::Wait(d) => d,
        };
        let until = (tokio::time::Instant::now() + wait).min(deadline);
        tokio::select! {
            _ = door.freed() => {}
            _ = tokio::time::sleep_until(until) => {}
        }
        if tokio::time::Instant::now() >= deadline {
            tracing::debug!(
                "ROS 1: XML-RPC connection from {peer} closed: no place within {:?}",
                limits.xmlrpc_timeout
            );
            return None;
        }
    }
}

/// Reads one request (within [`Limits::xmlrpc_timeout`], unless `pass` is dropped for a newcomer first) and
/// answers it (within the same time again).
async fn serve(
    mut stream: TcpStream,
    node: &Weak<Shared>,
    limits: &Limits,
    pass: &Pass,
) -> std::io::Result<()> {
    let _ = stream.set_nodelay(true);
    let read = tokio::time::timeout(
        limits.xmlrpc_timeout,
        read_request(&mut stream, limits.max_body),
    );
    let body = tokio::select! {
        r = read => r,
        _ = pass.evicted.notified() => {
            return Err(std::io::Error::other("dropped for a newer connection (the door was full)"));
        }
    };
    pass.answering();
    let body = match body {
        Ok(Ok(b)) => b,
        Ok(Err(e)) => {
            let Some(status) = e.status() else {
                return Err(std::io::Error::other(e.to_string()));
            };
            let text = clip(&e.to_string()).into_owned();
            tracing::debug!("ROS 1: XML-RPC request refused: {text}");
            return write(
                &mut stream,
                limits,
                status,
                "text/plain",
                format!("{text}\n").as_bytes(),
            )
            .await;
        }
        Err(_) => {
            return Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                format!("no whole request within {:?}", limits.xmlrpc_timeout),
            ))
        }
    };
    let xml = match answer(&body, node, limits) {
        Ok(v) => serde_xmlrpc::response_to_string(std::iter::once(v))
            .unwrap_or_else(|e| fault(-1, &format!("cannot encode the answer: {e}"))),
        Err(why) => {
            let why = clip(&why).into_owned();
            tracing::debug!("ROS 1: XML-RPC fault: {why}");
            fault(-1, &why)
        }
    };
    write(&mut stream, limits, (200, "OK"), "text/xml", xml.as_bytes()).await
}

/// Writes an answer within [`Limits::xmlrpc_timeout`].
async fn write(
    stream: &mut TcpStream,
    limits: &Limits,
    status: (u16, &str),
    content_type: &str,
    body: &[u8],
) -> std::io::Result<()> {
    tokio::time::timeout(
        limits.xmlrpc_timeout,
        write_response(stream, status, content_type, body),
    )
    .await
    .map_err(|_| std::io::Error::new(std::io::ErrorKind::TimedOut, "answer not taken in time"))?
}

/// The answer to one request body (`Err`: the fault's message).
fn answer(body: &[u8], node: &Weak<Shared>, limits: &Limits) -> Result<Value, String> {
    check_depth(body, limits.max_depth).map_err(|e| e.to_string())?;
    let text = std::str::from_utf8(body).map_err(|e| format!("the body is not UTF-8: {e}"))?;
    let (method, params) =
        serde_xmlrpc::request_from_str(text).map_err(|e| format!("not an XML-RPC call: {e}"))?;
    let node = node.upgrade().ok_or("the node is stopping")?;
    Ok(call(&node, &method, &params))
}

fn reply(code: i32, message: &str, value: Value) -> Value {
    Value::Array(vec![
        Value::Int(code),
        Value::String(message.to_owned()),
        value,
    ])
}

fn string(v: Option<&Value>) -> Option<&str> {
    match v {
        Some(Value::String(s)) => Some(s),
        _ => None,
    }
}

fn strings(v: Option<&Value>) -> Option<Vec<String>> {
    match v {
        Some(Value::Array(items)) => items
            .iter()
            .map(|i| string(Some(i)).map(str::to_owned))
            .collect(),
        _ => None,
    }
}

/// Runs slave API `method` with `params` (the first is the caller id).
fn call(node: &Shared, method: &str, params: &[Value]) -> Value {
    let Some(caller) = string(params.first()) else {
        return reply(
            -1,
            &format!("{method}: the first argument must be the caller id"),
            Value::Int(0),
        );
    };
    let s = |v: &str| Value::String(v.to_owned());
    let bad = |what: &str| reply(-1, &format!("{method}: {what}"), Value::Int(0));
    match method {
        "getPid" => reply(1, "", Value::Int(std::process::id() as i32)),
        "getMasterUri" => reply(1, "", s(node.master.uri())),
        "getPublications" => {
            let list = lock(&node.pubs)
                .values()
                .map(|p| Value::Array(vec![s(&p.topic), s(&p.ty)]))
                .collect();
            reply(1, "publications", Value::Array(list))
        }
        "getSubscriptions" => {
            let list = lock(&node.subs)
                .values()
                .map(|x| Value::Array(vec![s(&x.topic), s(&x.ty)]))
                .collect();
            reply(1, "subscriptions", Value::Array(list))
        }
        "getBusStats" => reply(1, "bus stats", bus_stats(node)),
        "getBusInfo" => reply(1, "bus info", bus_info(node)),
        // parameters are read once at start (docs/ros1.md): an update is acknowledged, not applied
        "paramUpdate" => reply(1, "", Value::Int(0)),
        "shutdown" => {
            let why = string(params.get(1)).unwrap_or("");
            tracing::warn!(
                "ROS 1: {} asked this node to shut down ({})",
                clip(caller),
                clip(why)
            );
            node.shutdown.store(true, Ordering::Relaxed);
            reply(1, "shutdown", Value::Int(0))
        }
        "publisherUpdate" => {
            let (Some(topic), Some(uris)) = (string(params.get(1)), strings(params.get(2))) else {
                return bad("expects (caller_id, topic, [publisher URIs])");
            };
            let sub = lock(&node.subs).get(topic).cloned();
            match sub {
                Some(sub) => {
                    sub.update(node, &uris, true);
                    reply(1, "", Value::Int(0))
                }
                None => reply(
                    1,
                    &format!("not subscribed to {}", clip(topic)),
                    Value::Int(0),
                ),
            }
        }
        "requestTopic" => {
            let Some(topic) = string(params.get(1)) else {
                return bad("expects (caller_id, topic, protocols)");
            };
            let tcpros = matches!(params.get(2), Some(Value::Array(protocols))
                if protocols.iter().any(|p| matches!(p, Value::Array(p) if string(p.first()) == Some("TCPROS"))));
            if !lock(&node.pubs).contains_key(topic) {
                return reply(
                    -1,
                    &format!("{} is not published here", clip(topic)),
                    Value::Int(0),
                );
            }
            if !tcpros {
                return reply(0, "only TCPROS is served", Value::Array(vec![]));
            }
            let answer = vec![
                s("TCPROS"),
                s(&node.addr.host),
                Value::Int(i32::from(node.tcpros_port)),
            ];
            reply(1, "ready", Value::Array(answer))
        }
        _ => reply(
            -1,
            &format!("unknown method {}", clip(method)),
            Value::Int(0),
        ),
    }
}

fn int(n: u64) -> Value {
    Value::Int(i32::try_from(n).unwrap_or(i32::MAX))
}

/// `[publishStats, subscribeStats, serviceStats]` (ROS 1 slave API).
fn bus_stats(node: &Shared) -> Value {
    let pubs = lock(&node.pubs)
        .values()
        .map(|p| {
            let conns = p
                .subscribers()
                .into_iter()
                .map(|(id, _)| {
                    Value::Array(vec![
                        int(id),
                        Value::Int(0),
                        Value::Int(0),
                        Value::Bool(true),
                    ])
                })
                .collect();
            Value::Array(vec![
                Value::String(p.topic.clone()),
                int(p.bytes.load(Ordering::Relaxed)),
                Value::Array(conns),
            ])
        })
        .collect();
    let subs = lock(&node.subs)
        .values()
        .map(|x| {
            // drops are counted per subscription: the estimate of its first connection carries them
            let dropped = x.dropped();
            let conns = x
                .publishers()
                .into_iter()
                .enumerate()
                .map(|(i, (id, _))| {
                    Value::Array(vec![
                        int(id),
                        Value::Int(0),
                        int(if i == 0 { dropped } else { 0 }),
                        Value::Bool(true),
                    ])
                })
                .collect();
            Value::Array(vec![Value::String(x.topic.clone()), Value::Array(conns)])
        })
        .collect();
    let calls: u64 = lock(&node.services)
        .values()
        .map(|e| e.calls.load(Ordering::Relaxed))
        .sum();
    Value::Array(vec![
        Value::Array(pubs),
        Value::Array(subs),
        Value::Array(vec![int(calls), Value::Int(0), Value::Int(0)]),
    ])
}

/// `[[connectionId, destinationId, direction, transport, topic, connected], …]`.
fn bus_info(node: &Shared) -> Value {
    let row = |id: u64, peer: String, dir: &str, topic: &str| {
        Value::Array(vec![
            int(id),
            Value::String(peer),
            Value::String(dir.into()),
            Value::String("TCPROS".into()),
            Value::String(topic.into()),
            Value::Bool(true),
        ])
    };
    let mut rows = Vec::new();
    for p in lock(&node.pubs).values() {
        rows.extend(
            p.subscribers()
                .into_iter()
                .map(|(id, c)| row(id, c, "o", &p.topic)),
        );
    }
    for x in lock(&node.subs).values() {
        rows.extend(
            x.publishers()
                .into_iter()
                .map(|(id, u)| row(id, u, "i", &x.topic)),
        );
    }
    Value::Array(rows)
}
