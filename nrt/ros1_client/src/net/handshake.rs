//! Refusing a TCPROS connection during its handshake (an `error` header), a wrong `md5sum` included: a leaf module
//! the listener ([`super::tcpros`]) and the publications and service entries it hands connections to use.

use super::header::{encode, WireError};
use super::Limits;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

/// Answers a refused connection with an `error` header (bounded in time) before it is closed.
pub(crate) async fn refuse(stream: &mut TcpStream, why: &str, limits: &Limits) {
    let _ = tokio::time::timeout(
        limits.handshake,
        stream.write_all(&encode(&[("error", why)])),
    )
    .await;
}

/// Refuses (with an `error` header) a connection whose `md5sum` (`*` accepts any) is not `md5`, that of `ty`
/// served as `name`.
pub(crate) async fn check_md5(
    header: &super::header::Header,
    (name, ty, md5): (&str, &str, &str),
    stream: &mut TcpStream,
    limits: &Limits,
) -> Result<(), WireError> {
    let asked = header.get("md5sum").unwrap_or("*");
    if asked == "*" || asked == md5 {
        return Ok(());
    }
    let why = format!("{name}: md5sum {asked} is not that of {ty} ({md5})");
    refuse(stream, &why, limits).await;
    Err(WireError::Refused(why))
}
