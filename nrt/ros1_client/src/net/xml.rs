//! XML-RPC bodies before and after serde_xmlrpc: a streaming nesting-depth scan (quick-xml's pull parser, no
//! recursion: serde_xmlrpc decodes recursively, so an attacker's 5,000 nested `<array>`s would overflow the
//! thread's stack and abort the process) and the fault answer serde_xmlrpc cannot write.

use quick_xml::events::Event;
use quick_xml::Reader;

/// A body refused before decoding.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum XmlError {
    /// Nested deeper than we decode.
    #[error("XML nested deeper than {max} elements")]
    TooDeep {
        /// Our maximum.
        max: usize,
    },
    /// Not well-formed.
    #[error("malformed XML at byte {at}: {reason}")]
    Malformed {
        /// Where.
        at: usize,
        /// Why.
        reason: String,
    },
}

/// Checks that `xml` is well-formed as far as elements go and nests at most `max` elements deep.
pub fn check_depth(xml: &[u8], max: usize) -> Result<(), XmlError> {
    let mut reader = Reader::from_reader(xml);
    reader.check_end_names(true);
    let mut buf = Vec::new();
    let mut depth = 0usize;
    loop {
        let event = reader
            .read_event_into(&mut buf)
            .map_err(|e| XmlError::Malformed {
                at: reader.buffer_position(),
                reason: e.to_string(),
            })?;
        match event {
            Event::Start(_) => {
                depth += 1;
                if depth > max {
                    return Err(XmlError::TooDeep { max });
                }
            }
            Event::End(_) => depth = depth.saturating_sub(1),
            Event::Eof => return Ok(()),
            _ => {}
        }
        buf.clear();
    }
}

/// Escapes text for an XML element.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            c => out.push(c),
        }
    }
    out
}

/// An XML-RPC fault answer.
pub fn fault(code: i32, message: &str) -> String {
    format!(
        "<?xml version=\"1.0\"?><methodResponse><fault><value><struct>\
         <member><name>faultCode</name><value><int>{code}</int></value></member>\
         <member><name>faultString</name><value><string>{}</string></value></member>\
         </struct></value></fault></methodResponse>",
        escape(message)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nested(levels: usize) -> String {
        let mut s = String::from(
            "<?xml version=\"1.0\"?><methodCall><methodName>getPid</methodName><params><param>",
        );
        for _ in 0..levels {
            s.push_str("<value><array><data>");
        }
        for _ in 0..levels {
            s.push_str("</data></array></value>");
        }
        s.push_str("</param></params></methodCall>");
        s
    }

    #[test]
    fn a_deep_body_is_refused_without_recursion() {
        assert_eq!(
            check_depth(nested(5_000).as_bytes(), 64),
            Err(XmlError::TooDeep { max: 64 })
        );
        // an unclosed one too: refused at the depth, before its end is looked for
        let open = "<a>".repeat(100_000);
        assert_eq!(
            check_depth(open.as_bytes(), 64),
            Err(XmlError::TooDeep { max: 64 })
        );
    }

    #[test]
    fn ordinary_requests_pass_and_decode() {
        let body = serde_xmlrpc::request_to_string(
            "publisherUpdate",
            vec![
                serde_xmlrpc::Value::String("/master".into()),
                serde_xmlrpc::Value::String("/cmd_vel".into()),
                serde_xmlrpc::Value::Array(vec![serde_xmlrpc::Value::String("http://h:1/".into())]),
            ],
        )
        .unwrap();
        assert_eq!(check_depth(body.as_bytes(), 64), Ok(()));
        assert_eq!(check_depth(nested(10).as_bytes(), 64), Ok(()));
    }

    #[test]
    fn mismatched_tags_are_malformed() {
        assert!(matches!(
            check_depth(b"<a><b></a>", 64),
            Err(XmlError::Malformed { .. })
        ));
    }

    #[test]
    fn a_fault_is_valid_xml_rpc_with_the_message_escaped() {
        let f = fault(-1, "depth > 64 & <bad>");
        assert!(f.contains("&lt;bad&gt;") && f.contains("&amp;"));
        match serde_xmlrpc::response_from_str::<serde_xmlrpc::Value>(&f) {
            Err(serde_xmlrpc::Error::Fault(fault)) => {
                assert_eq!(fault.fault_code, -1);
                // (serde_xmlrpc leaves the entities as they are; rospy's decoder resolves them)
                assert!(fault.fault_string.starts_with("depth "), "{fault:?}");
            }
            other => panic!("{other:?}"),
        }
    }
}
