//! The node's one TCPROS listener (as roscpp's: every topic and service on one port). The accept loop only
//! accepts: each connection gets a task of its own (at most [`super::Limits::max_connections`] at once; beyond,
//! it is closed at once), which reads the connection header within [`super::Limits::handshake`] and hands the
//! connection to the publication or service the header names.

use super::handshake::refuse;
use super::header::{read_header, WireError};
use super::{lock, publisher, service, Limits, Shared};
use std::sync::Weak;
use tokio::net::{TcpListener, TcpStream};

/// Accepts connections until the node is gone.
pub(crate) async fn accept(listener: TcpListener, node: Weak<Shared>) {
    loop {
        let stream = match listener.accept().await {
            Ok((s, _)) => s,
            Err(e) => {
                // out of descriptors, most likely: let connections end
                tracing::warn!("ROS 1: TCPROS accept: {e}");
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                continue;
            }
        };
        let Some(n) = node.upgrade() else { return };
        let Ok(permit) = n.conns.clone().try_acquire_owned() else {
            tracing::debug!("ROS 1: TCPROS connection refused: too many at once");
            continue;
        };
        let (weak, limits, own) = (node.clone(), n.limits.clone(), n.name.clone());
        drop(n);
        tokio::spawn(async move {
            let _permit = permit;
            if let Err(e) = connection(stream, weak, &limits, &own).await {
                tracing::debug!("ROS 1: TCPROS connection: {}", super::clip(&e.to_string()));
            }
        });
    }
}

async fn connection(
    mut stream: TcpStream,
    node: Weak<Shared>,
    limits: &Limits,
    own: &str,
) -> Result<(), WireError> {
    stream.set_nodelay(true)?;
    let header = tokio::time::timeout(
        limits.handshake,
        read_header(&mut stream, limits.max_header),
    )
    .await
    .map_err(|_| WireError::Timeout("connection header"))??;
    let Some(n) = node.upgrade() else {
        return Ok(());
    };
    if let Some(name) = header.get("service") {
        let entry = lock(&n.services).get(name).cloned();
        drop(n);
        match entry {
            Some(e) => service::serve(e, header, stream, own, limits).await,
            None => {
                let why = format!("no service {name} here");
                refuse(&mut stream, &why, limits).await;
                Err(WireError::Refused(why))
            }
        }
    } else if let Some(topic) = header.get("topic") {
        let p = lock(&n.pubs).get(topic).cloned();
        drop(n);
        match p {
            Some(p) => publisher::serve(p, header, stream, own, limits).await,
            None => {
                let why = format!("{topic} is not published here");
                refuse(&mut stream, &why, limits).await;
                Err(WireError::Refused(why))
            }
        }
    } else {
        let why = "the connection header names neither a topic nor a service".to_owned();
        refuse(&mut stream, &why, limits).await;
        Err(WireError::Refused(why))
    }
}
