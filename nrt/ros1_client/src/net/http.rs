//! The HTTP/1.0–1.1 of the XML-RPC slave API, bounded: a `POST` whose head fits in [`MAX_HEAD`] bytes and whose
//! `Content-Length` is at most the body limit, refused (413) from the head alone, before any of the body is read.
//! One request per connection: the answer says `Connection: close`.

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// Longest request head (request line and headers).
pub const MAX_HEAD: usize = 16 * 1024;

/// A request refused, with the HTTP status to answer.
#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    /// The socket failed or closed early (nothing to answer).
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// The body is larger than we read (413).
    #[error("request body of {len} bytes refused (at most {max})")]
    TooLarge {
        /// Announced length.
        len: u64,
        /// Our maximum.
        max: usize,
    },
    /// The head is longer than [`MAX_HEAD`] (431).
    #[error("request head longer than {MAX_HEAD} bytes")]
    HeadTooLarge,
    /// Not a `POST` (405).
    #[error("method {0:?} not allowed (XML-RPC is POST)")]
    Method(String),
    /// No usable `Content-Length` (411), or a transfer coding we do not read (501).
    #[error("{0}")]
    Length(String),
    /// Not an HTTP request (400).
    #[error("bad request: {0}")]
    Bad(String),
}

impl HttpError {
    /// The status line's code and reason for this refusal (`None`: nothing can be answered).
    pub fn status(&self) -> Option<(u16, &'static str)> {
        match self {
            HttpError::Io(_) => None,
            HttpError::TooLarge { .. } => Some((413, "Payload Too Large")),
            HttpError::HeadTooLarge => Some((431, "Request Header Fields Too Large")),
            HttpError::Method(_) => Some((405, "Method Not Allowed")),
            HttpError::Length(m) if m.contains("Transfer-Encoding") => {
                Some((501, "Not Implemented"))
            }
            HttpError::Length(_) => Some((411, "Length Required")),
            HttpError::Bad(_) => Some((400, "Bad Request")),
        }
    }
}

fn find_end(buf: &[u8]) -> Option<usize> {
    buf.windows(4).position(|w| w == b"\r\n\r\n").map(|p| p + 4)
}

/// Reads one request and returns its body (at most `max_body` bytes).
pub async fn read_request<S: AsyncRead + Unpin>(
    s: &mut S,
    max_body: usize,
) -> Result<Vec<u8>, HttpError> {
    let mut buf = Vec::with_capacity(4096);
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(end) = find_end(&buf) {
            break end;
        }
        if buf.len() > MAX_HEAD {
            return Err(HttpError::HeadTooLarge);
        }
        let n = s.read(&mut chunk).await?;
        if n == 0 {
            return Err(HttpError::Io(std::io::ErrorKind::UnexpectedEof.into()));
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    if head_end > MAX_HEAD {
        return Err(HttpError::HeadTooLarge);
    }
    let head = std::str::from_utf8(&buf[..head_end])
        .map_err(|_| HttpError::Bad("the head is not UTF-8".into()))?;
    let mut lines = head.split("\r\n");
    let request = lines.next().unwrap_or_default();
    let mut parts = request.split(' ');
    let method = parts.next().unwrap_or_default();
    if parts.next().is_none() || !request.contains(" HTTP/1.") {
        return Err(HttpError::Bad(format!("request line {request:?}")));
    }
    if method != "POST" {
        return Err(HttpError::Method(method.to_owned()));
    }
    let mut length = None;
    for line in lines.filter(|l| !l.is_empty()) {
        let Some((name, value)) = line.split_once(':') else {
            return Err(HttpError::Bad(format!("header line {line:?}")));
        };
        let (name, value) = (name.trim(), value.trim());
        if name.eq_ignore_ascii_case("content-length") {
            let n: u64 = value
                .parse()
                .map_err(|_| HttpError::Length(format!("Content-Length {value:?}")))?;
            length = Some(n);
        } else if name.eq_ignore_ascii_case("transfer-encoding")
            && !value.eq_ignore_ascii_case("identity")
        {
            return Err(HttpError::Length(format!(
                "Transfer-Encoding {value:?} not read: send a Content-Length"
            )));
        }
    }
    let len = length.ok_or_else(|| HttpError::Length("no Content-Length".into()))?;
    if len > max_body as u64 {
        return Err(HttpError::TooLarge { len, max: max_body });
    }
    let len = len as usize;
    let mut body = buf.split_off(head_end);
    if body.len() > len {
        return Err(HttpError::Bad("more bytes than Content-Length".into()));
    }
    let missing = len - body.len();
    let got = s.take(missing as u64).read_to_end(&mut body).await?;
    if got < missing {
        return Err(HttpError::Io(std::io::ErrorKind::UnexpectedEof.into()));
    }
    Ok(body)
}

/// Writes an answer and flushes it.
pub async fn write_response<S: AsyncWrite + Unpin>(
    s: &mut S,
    (code, reason): (u16, &str),
    content_type: &str,
    body: &[u8],
) -> std::io::Result<()> {
    let head = format!(
        "HTTP/1.1 {code} {reason}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    s.write_all(head.as_bytes()).await?;
    s.write_all(body).await?;
    s.flush().await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(req: &[u8], max: usize) -> Result<Vec<u8>, HttpError> {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(read_request(&mut &req[..], max))
    }

    #[test]
    fn a_post_gives_its_body() {
        let r = b"POST /RPC2 HTTP/1.1\r\nHost: x\r\ncontent-length: 5\r\nContent-Type: text/xml\r\n\r\nhello";
        assert_eq!(read(r, 100).unwrap(), b"hello");
    }

    #[test]
    fn an_oversized_body_is_refused_from_its_head() {
        // the body itself is not there: the refusal comes before reading it
        let r = b"POST / HTTP/1.0\r\nContent-Length: 200000000\r\n\r\n";
        let e = read(r, 1 << 20).unwrap_err();
        assert_eq!(e.status(), Some((413, "Payload Too Large")));
        assert!(e.to_string().contains("200000000"), "{e}");
    }

    #[test]
    fn other_refusals_have_their_status() {
        let status = |r: &[u8]| read(r, 100).unwrap_err().status();
        assert_eq!(
            status(b"GET / HTTP/1.1\r\n\r\n"),
            Some((405, "Method Not Allowed"))
        );
        assert_eq!(
            status(b"POST / HTTP/1.1\r\n\r\n"),
            Some((411, "Length Required"))
        );
        assert_eq!(
            status(b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"),
            Some((501, "Not Implemented"))
        );
        assert_eq!(status(b"hello\r\n\r\n"), Some((400, "Bad Request")));
        let long = [b"POST / HTTP/1.1\r\nX: ".as_slice(), &[b'a'; 20_000]].concat();
        assert_eq!(
            status(&long),
            Some((431, "Request Header Fields Too Large"))
        );
        // announced 10, sent 3, closed
        assert!(
            read(b"POST / HTTP/1.1\r\nContent-Length: 10\r\n\r\nabc", 100)
                .unwrap_err()
                .status()
                .is_none()
        );
    }
}
