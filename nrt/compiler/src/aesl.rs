//! `.aesl` files (aseba.md §6): global events, constants and per-node programs, and the
//! selection of a node's program as asebaros does it.

use super::EventDef;
use quick_xml::events::Event;
use quick_xml::Reader;

/// One `<node>` program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AeslNode {
    /// Target name (`thymio-II`, …).
    pub name: String,
    /// The `nodeId` attribute as written (decimal in community files, a UUID in Mobsya ones).
    pub node_id: String,
    /// Program text.
    pub code: String,
}

impl AeslNode {
    /// The numeric node id, if the attribute is a decimal number.
    pub fn numeric_id(&self) -> Option<u16> {
        self.node_id.trim().parse().ok()
    }
}

/// A parsed `.aesl` file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Aesl {
    /// Global events; id = position.
    pub events: Vec<EventDef>,
    /// Constants.
    pub constants: Vec<(String, i32)>,
    /// Node programs in file order.
    pub nodes: Vec<AeslNode>,
}

/// A malformed `.aesl` file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct AeslError {
    /// What is wrong (with the byte offset when the XML is broken).
    pub message: String,
}

fn fail(message: impl Into<String>) -> AeslError {
    AeslError {
        message: message.into(),
    }
}

impl Aesl {
    /// The program for node `name` with id `id`: same name and id, else same name and id 0,
    /// else the first with the same name (asebaros).
    pub fn source_for(&self, name: &str, id: u16) -> Option<&AeslNode> {
        let same: Vec<&AeslNode> = self.nodes.iter().filter(|n| n.name == name).collect();
        same.iter()
            .find(|n| n.numeric_id() == Some(id))
            .or_else(|| same.iter().find(|n| n.numeric_id() == Some(0)))
            .or_else(|| same.first())
            .copied()
    }

    /// Replaces or adds a constant.
    pub fn set_constant(&mut self, name: &str, value: i32) {
        match self.constants.iter_mut().find(|(n, _)| n == name) {
            Some(c) => c.1 = value,
            None => self.constants.push((name.to_owned(), value)),
        }
    }

    /// Index of a global event by name.
    pub fn event_id(&self, name: &str) -> Option<u16> {
        self.events
            .iter()
            .position(|e| e.name == name)
            .map(|i| i as u16)
    }
}

fn attr(e: &quick_xml::events::BytesStart<'_>, key: &str) -> Result<Option<String>, AeslError> {
    for a in e.attributes() {
        let a = a.map_err(|err| fail(format!("bad attribute: {err}")))?;
        if a.key.as_ref() == key.as_bytes() {
            let v = a
                .unescape_value()
                .map_err(|err| fail(format!("bad attribute {key}: {err}")))?;
            return Ok(Some(v.into_owned()));
        }
    }
    Ok(None)
}

fn int_attr(
    e: &quick_xml::events::BytesStart<'_>,
    key: &str,
    what: &str,
) -> Result<Option<i64>, AeslError> {
    match attr(e, key)? {
        None => Ok(None),
        Some(v) => v
            .trim()
            .parse::<i64>()
            .map(Some)
            .map_err(|_| fail(format!("{what}: {key}=\"{v}\" is not an integer"))),
    }
}

/// Parses an `.aesl` document.
///
/// ```
/// use msgs::description::thymio_ii_fw14;
/// use nrt_compiler::{compile, parse_aesl};
///
/// let aesl = parse_aesl(
///     r#"<!DOCTYPE aesl-source>
/// <network>
///   <event size="2" name="pair"/>
///   <constant value="200" name="SPEED"/>
///   <node nodeId="1" name="thymio-II">onevent button.forward
///     motor.left.target = SPEED
///     emit pair [SPEED, 0]
///   </node>
/// </network>"#,
/// )
/// .expect("a well-formed file");
/// assert_eq!(aesl.event_id("pair"), Some(0));
/// let node = aesl.source_for("thymio-II", 1).expect("a program for node 1");
/// let program = compile(&node.code, &thymio_ii_fw14(), &aesl.events, &aesl.constants);
/// assert!(program.is_ok());
/// assert!(parse_aesl("<network><node").is_err());
/// ```
pub fn parse_aesl(text: &str) -> Result<Aesl, AeslError> {
    let mut reader = Reader::from_str(text);
    reader.config_mut().trim_text(false);
    let mut out = Aesl::default();
    let mut depth = 0usize;
    let mut seen_network = false;
    // the node being read and the depth of nested elements inside it
    let mut node: Option<(AeslNode, usize)> = None;
    loop {
        let pos = reader.buffer_position();
        let ev = reader
            .read_event()
            .map_err(|e| fail(format!("XML error at byte {pos}: {e}")))?;
        match ev {
            Event::Start(ref e) | Event::Empty(ref e) => {
                let empty = matches!(ev, Event::Empty(_));
                let tag = String::from_utf8_lossy(e.name().as_ref()).into_owned();
                if let Some((_, inner)) = node.as_mut() {
                    if !empty {
                        *inner += 1;
                    }
                    continue;
                }
                match (depth, tag.as_str()) {
                    (0, "network") => seen_network = true,
                    (0, other) => {
                        return Err(fail(format!(
                            "root element is <{other}>, expected <network>"
                        )))
                    }
                    (1, "event") => {
                        let name =
                            attr(e, "name")?.ok_or_else(|| fail("<event> without a name"))?;
                        let size = int_attr(e, "size", &format!("event {name}"))?.unwrap_or(0);
                        if !(0..=i64::from(u16::MAX)).contains(&size) {
                            return Err(fail(format!("event {name}: size {size} out of range")));
                        }
                        out.events.push(EventDef {
                            name,
                            size: size as u16,
                        });
                    }
                    (1, "constant") => {
                        let name =
                            attr(e, "name")?.ok_or_else(|| fail("<constant> without a name"))?;
                        let value = int_attr(e, "value", &format!("constant {name}"))?
                            .ok_or_else(|| fail(format!("constant {name} without a value")))?;
                        let value = i32::try_from(value)
                            .map_err(|_| fail(format!("constant {name}: value out of range")))?;
                        out.set_constant(&name, value);
                    }
                    (1, "node") => {
                        let name = attr(e, "name")?.unwrap_or_default();
                        let node_id = attr(e, "nodeId")?.unwrap_or_default();
                        let n = AeslNode {
                            name,
                            node_id,
                            code: String::new(),
                        };
                        if empty {
                            out.nodes.push(n);
                        } else {
                            node = Some((n, 0));
                        }
                        continue;
                    }
                    _ => {}
                }
                if !empty {
                    depth += 1;
                }
            }
            Event::End(_) => {
                if let Some((n, inner)) = node.take() {
                    if inner == 0 {
                        out.nodes.push(n);
                    } else {
                        node = Some((n, inner - 1));
                    }
                    continue;
                }
                depth = depth.saturating_sub(1);
            }
            Event::Text(t) => {
                if let Some((n, 0)) = node.as_mut() {
                    let s = t
                        .unescape()
                        .map_err(|e| fail(format!("bad text in node {}: {e}", n.name)))?;
                    n.code.push_str(&s);
                }
            }
            Event::CData(t) => {
                if let Some((n, 0)) = node.as_mut() {
                    n.code.push_str(&String::from_utf8_lossy(&t));
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    if node.is_some() {
        return Err(fail("unterminated <node> element"));
    }
    if !seen_network {
        return Err(fail("not an .aesl file: no <network> element"));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = r#"<!DOCTYPE aesl-source>
<network>
<!--list of global events-->
<event size="2" name="pair"/>
<event name="ping"/>
<constant value="200" name="SPEED"/>
<keywords flag="true"/>
<node nodeId="1" name="thymio-II">var a = 1 &lt; 2
onevent ping
<toolsPlugins><x>ignored text</x></toolsPlugins></node>
<node nodeId="0" name="thymio-II">var b</node>
<node nodeId="{abc}" name="other"><![CDATA[var c = 1 < 2]]></node>
</network>"#;

    #[test]
    fn parses_events_constants_nodes() {
        let a = parse_aesl(FILE).unwrap();
        assert_eq!(
            a.events,
            vec![
                EventDef {
                    name: "pair".into(),
                    size: 2
                },
                EventDef {
                    name: "ping".into(),
                    size: 0
                }
            ]
        );
        assert_eq!(a.constants, vec![("SPEED".to_string(), 200)]);
        assert_eq!(a.nodes.len(), 3);
        assert_eq!(a.nodes[0].code, "var a = 1 < 2\nonevent ping\n");
        assert_eq!(a.nodes[2].code, "var c = 1 < 2");
        assert_eq!(a.event_id("ping"), Some(1));
    }

    #[test]
    fn selects_like_asebaros() {
        let a = parse_aesl(FILE).unwrap();
        assert_eq!(a.source_for("thymio-II", 1).unwrap().node_id, "1");
        assert_eq!(a.source_for("thymio-II", 7).unwrap().node_id, "0");
        assert_eq!(a.source_for("other", 3).unwrap().node_id, "{abc}");
        assert!(a.source_for("nobody", 1).is_none());
    }

    #[test]
    fn rejects_bad_files() {
        assert!(parse_aesl("<foo/>").is_err());
        assert!(parse_aesl("<network><event name=\"e\" size=\"x\"/></network>").is_err());
        assert!(parse_aesl("<network><node name=\"a\">text").is_err());
        assert!(parse_aesl("").is_err());
    }
}
