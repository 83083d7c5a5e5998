//! The TCPROS wire format, bounded: a connection header (a little-endian `u32` length, then fields, each a `u32`
//! length and `key=value`) and the framed messages after it (a `u32` length and the serialised message). Every
//! length is checked against a maximum **before** anything is allocated, and a buffer only grows as bytes arrive:
//! a peer announcing 4 GB and sending nothing costs nothing.

use tokio::io::{AsyncRead, AsyncReadExt};

/// A failed or refused read or write on a TCPROS connection.
#[derive(Debug, thiserror::Error)]
pub enum WireError {
    /// The socket failed (or closed early).
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// The peer announced more than we accept.
    #[error("{what} of {len} bytes refused (at most {max})")]
    TooLong {
        /// Header or message.
        what: &'static str,
        /// What was announced.
        len: u64,
        /// Our maximum.
        max: usize,
    },
    /// The header is not a list of `key=value` fields.
    #[error("malformed connection header: {0}")]
    Malformed(String),
    /// We refused the peer (told it why in an `error` header), or it refused us.
    #[error("refused: {0}")]
    Refused(String),
    /// The peer did not finish in time.
    #[error("no {0} within the time allowed")]
    Timeout(&'static str),
}

/// A decoded connection header.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Header {
    fields: Vec<(String, String)>,
}

impl Header {
    /// The value of `key`, if present.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// Whether `key` is present and says yes (`1`).
    pub fn flag(&self, key: &str) -> bool {
        self.get(key) == Some("1")
    }

    /// Decodes the header body (without its own length prefix).
    pub fn decode(bytes: &[u8]) -> Result<Header, WireError> {
        let mut fields = Vec::new();
        let mut rest = bytes;
        while !rest.is_empty() {
            let Some((len, tail)) = rest.split_first_chunk::<4>() else {
                return Err(WireError::Malformed(format!(
                    "{} stray bytes after the last field",
                    rest.len()
                )));
            };
            let len = u32::from_le_bytes(*len) as usize;
            if len > tail.len() {
                return Err(WireError::Malformed(format!(
                    "a field of {len} bytes where {} remain",
                    tail.len()
                )));
            }
            let (field, tail) = tail.split_at(len);
            let field = std::str::from_utf8(field)
                .map_err(|e| WireError::Malformed(format!("a field is not UTF-8: {e}")))?;
            let Some((k, v)) = field.split_once('=') else {
                return Err(WireError::Malformed(format!("field {field:?} has no '='")));
            };
            fields.push((k.to_owned(), v.to_owned()));
            rest = tail;
        }
        Ok(Header { fields })
    }
}

/// Encodes a header with its length prefix.
pub fn encode(fields: &[(&str, &str)]) -> Vec<u8> {
    let mut out = vec![0; 4];
    for (k, v) in fields {
        let len = (k.len() + 1 + v.len()) as u32;
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(k.as_bytes());
        out.push(b'=');
        out.extend_from_slice(v.as_bytes());
    }
    let total = (out.len() - 4) as u32;
    out[..4].copy_from_slice(&total.to_le_bytes());
    out
}

/// Reads `len` bytes announced by the peer, growing the buffer only as they arrive.
async fn read_announced<R: AsyncRead + Unpin>(
    r: &mut R,
    len: usize,
    prefix: Option<[u8; 4]>,
) -> Result<Vec<u8>, WireError> {
    let extra = prefix.map_or(0, |_| 4);
    let mut buf = Vec::with_capacity(extra + len.min(16 * 1024));
    if let Some(p) = prefix {
        buf.extend_from_slice(&p);
    }
    let got = r.take(len as u64).read_to_end(&mut buf).await?;
    if got < len {
        return Err(WireError::Io(std::io::ErrorKind::UnexpectedEof.into()));
    }
    Ok(buf)
}

/// Reads a connection header of at most `max` bytes.
pub async fn read_header<R: AsyncRead + Unpin>(r: &mut R, max: usize) -> Result<Header, WireError> {
    let mut len = [0u8; 4];
    r.read_exact(&mut len).await?;
    let len = u32::from_le_bytes(len);
    if len as u64 > max as u64 {
        return Err(WireError::TooLong {
            what: "connection header",
            len: len.into(),
            max,
        });
    }
    let body = read_announced(r, len as usize, None).await?;
    Header::decode(&body)
}

/// Reads one framed message of at most `max` bytes; the result keeps its 4-byte length prefix (the form the ROS 1
/// deserialiser reads). `Ok(None)`: the peer closed the connection cleanly between messages.
pub async fn read_frame<R: AsyncRead + Unpin>(
    r: &mut R,
    max: usize,
) -> Result<Option<Vec<u8>>, WireError> {
    let mut len = [0u8; 4];
    match r.read_exact(&mut len).await {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(e.into()),
    }
    let n = u32::from_le_bytes(len);
    if n as u64 > max as u64 {
        return Err(WireError::TooLong {
            what: "message",
            len: n.into(),
            max,
        });
    }
    read_announced(r, n as usize, Some(len)).await.map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::net::block;

    #[test]
    fn a_header_round_trips() {
        let bytes = encode(&[("callerid", "/a"), ("topic", "/odom"), ("md5sum", "*")]);
        let h = block(read_header(&mut &bytes[..], 1024)).unwrap();
        assert_eq!(h.get("topic"), Some("/odom"));
        assert_eq!(h.get("md5sum"), Some("*"));
        assert_eq!(h.get("type"), None);
        // a value may hold '='
        let h = Header::decode(&encode(&[("message_definition", "a=b")])[4..]).unwrap();
        assert_eq!(h.get("message_definition"), Some("a=b"));
    }

    #[test]
    fn an_announced_length_over_the_maximum_is_refused_before_anything_is_read() {
        let mut bytes = 0xFFFF_FFF0u32.to_le_bytes().to_vec();
        bytes.extend_from_slice(b"rest");
        match block(read_header(&mut &bytes[..], 64 * 1024)) {
            Err(WireError::TooLong { len, max, .. }) => {
                assert_eq!(len, 0xFFFF_FFF0);
                assert_eq!(max, 64 * 1024);
            }
            other => panic!("{other:?}"),
        }
        match block(read_frame(&mut &bytes[..], 1 << 24)) {
            Err(WireError::TooLong {
                what: "message", ..
            }) => {}
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_short_or_malformed_header_is_an_error_naming_the_fault() {
        // announces 100 bytes, sends 3
        let mut bytes = 100u32.to_le_bytes().to_vec();
        bytes.extend_from_slice(b"abc");
        assert!(matches!(
            block(read_header(&mut &bytes[..], 1024)),
            Err(WireError::Io(_))
        ));
        let e = Header::decode(&[9, 0, 0, 0, b'x']).unwrap_err();
        assert!(e.to_string().contains("9 bytes"), "{e}");
        let mut noeq = 3u32.to_le_bytes().to_vec();
        noeq.extend_from_slice(b"abc");
        let e = Header::decode(&noeq).unwrap_err();
        assert!(e.to_string().contains("\"abc\""), "{e}");
    }

    #[test]
    fn frames_keep_their_length_prefix_and_a_clean_close_is_none() {
        let bytes = [2, 0, 0, 0, 7, 8];
        let f = block(read_frame(&mut &bytes[..], 16)).unwrap();
        assert_eq!(f, Some(bytes.to_vec()));
        assert!(block(read_frame(&mut &[][..], 16)).unwrap().is_none());
    }
}
