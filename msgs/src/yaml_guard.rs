//! A linear pre-parser guard for untrusted YAML: bounds on size, nesting and anchors/aliases,
//! checked before the YAML parser sees the text.
//!
//! The YAML parser takes time quadratic in the nesting depth to refuse deeply nested text
//! (seconds for a few hundred kilobytes of `[[[[…` or of ever deeper indentation), and expands
//! aliases. [`check`] scans the text once, in time linear in its length, with a light lexer
//! that follows YAML's own rules for where a node starts (quoted scalars, comments, block
//! scalars, flow collections, block sequences and indentation), and refuses it with the limit it
//! exceeds and the line where. Its depth is an upper bound of the parser's in well-formed text
//! (a continuation line of a plain scalar that starts with `[` counts as flow, say); the limits
//! are set far above what a configuration needs, so that only hostile text meets them.

/// The bounds [`check`] enforces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct YamlLimits {
    /// Largest text, in bytes.
    pub max_bytes: usize,
    /// Deepest nesting: block levels (indentation, `- ` entries) plus flow levels (`[`, `{`).
    pub max_depth: usize,
    /// Most anchors (`&a`) and aliases (`*a`) together.
    pub max_anchors_aliases: usize,
}

impl YamlLimits {
    /// Limits for configuration files and ROS parameter files: 1 MiB, 64 levels, 1024
    /// anchors and aliases (a configuration needs about 6 levels and none).
    pub const CONFIG: YamlLimits = YamlLimits {
        max_bytes: 1 << 20,
        max_depth: 64,
        max_anchors_aliases: 1024,
    };
}

impl Default for YamlLimits {
    fn default() -> Self {
        Self::CONFIG
    }
}

/// Why [`check`] refused a text: the limit it exceeds, and where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum YamlGuardError {
    /// The text is larger than [`YamlLimits::max_bytes`].
    #[error("YAML text of {bytes} bytes exceeds the limit of {max} bytes")]
    TooLarge {
        /// Its size.
        bytes: usize,
        /// The limit.
        max: usize,
    },
    /// Nested deeper than [`YamlLimits::max_depth`].
    #[error("YAML nested deeper than the limit of {max} levels at line {line}")]
    TooDeep {
        /// Line (from 1) where the limit is exceeded.
        line: usize,
        /// The limit.
        max: usize,
    },
    /// More anchors and aliases than [`YamlLimits::max_anchors_aliases`].
    #[error("YAML has more anchors and aliases than the limit of {max} at line {line}")]
    TooManyAliases {
        /// Line (from 1) of the first one over the limit.
        line: usize,
        /// The limit.
        max: usize,
    },
}

/// Checks `text` against `limits` in one linear scan, before it is given to a YAML parser.
pub fn check(text: &str, limits: YamlLimits) -> Result<(), YamlGuardError> {
    if text.len() > limits.max_bytes {
        return Err(YamlGuardError::TooLarge {
            bytes: text.len(),
            max: limits.max_bytes,
        });
    }
    let mut s = Scanner {
        limits,
        blocks: Vec::new(),
        flow: 0,
        quote: None,
        scalar_parent: None,
        plain_parent: None,
        flow_expect: true,
        refs: 0,
        line: 0,
    };
    for (i, line) in text.split('\n').enumerate() {
        s.line = i + 1;
        let line = line.strip_suffix('\r').unwrap_or(line);
        s.scan_line(line.as_bytes())?;
    }
    Ok(())
}

/// Reads the file `path` as text, at most one byte more than [`YamlLimits::max_bytes`] (so that
/// [`check`] refuses a larger one as [`YamlGuardError::TooLarge`] without reading it whole).
pub fn read_to_string(path: &std::path::Path, limits: YamlLimits) -> std::io::Result<String> {
    use std::io::Read;
    let mut bytes = Vec::new();
    std::fs::File::open(path)?
        .take(limits.max_bytes as u64 + 1)
        .read_to_end(&mut bytes)?;
    if bytes.len() > limits.max_bytes {
        // cut anywhere, maybe inside a character: only its size matters now
        return Ok(String::from_utf8_lossy(&bytes).into_owned());
    }
    String::from_utf8(bytes).map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))
}

/// The lexer's state between lines. Columns are `isize` so that -1 is "above the top level".
struct Scanner {
    limits: YamlLimits,
    /// Columns of the open block collections, innermost last (strictly increasing).
    blocks: Vec<isize>,
    /// Open flow collections.
    flow: usize,
    /// The quote of an open quoted scalar.
    quote: Option<u8>,
    /// Inside a block scalar (`|`, `>`) whose parent collection is at this column: lines more
    /// indented than it (and blank lines) are its content.
    scalar_parent: Option<isize>,
    /// A block plain scalar was open at the end of the previous line, its parent collection at
    /// this column: more indented lines continue it.
    plain_parent: Option<isize>,
    /// Inside a flow collection, whether a node may start at the end of the previous line.
    flow_expect: bool,
    /// Anchors and aliases seen.
    refs: usize,
    /// Current line, from 1.
    line: usize,
}

fn is_blank(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

fn is_flow_indicator(b: u8) -> bool {
    matches!(b, b',' | b'[' | b']' | b'{' | b'}')
}

impl Scanner {
    fn depth_check(&self) -> Result<(), YamlGuardError> {
        if self.blocks.len() + self.flow > self.limits.max_depth {
            return Err(YamlGuardError::TooDeep {
                line: self.line,
                max: self.limits.max_depth,
            });
        }
        Ok(())
    }

    /// Opens a block collection at column `col` if it is deeper than the innermost one.
    fn push_block(&mut self, col: isize) -> Result<(), YamlGuardError> {
        if self.blocks.last().is_none_or(|&top| col > top) {
            self.blocks.push(col);
            self.depth_check()?;
        }
        Ok(())
    }

    fn scan_line(&mut self, l: &[u8]) -> Result<(), YamlGuardError> {
        let indent = l.iter().take_while(|&&b| b == b' ').count();
        let rest = &l[indent..];
        let blank = rest.iter().all(|&b| is_blank(b));
        let col = indent as isize;
        if let Some(parent) = self.scalar_parent {
            if blank || col > parent {
                return Ok(());
            }
            self.scalar_parent = None;
        }
        // Where the current node's parent collection is (for a block scalar's content).
        let mut owner: isize = -1;
        // Whether a node may start here (so that a quote, `[`, `*`, `|` are indicators).
        let mut expect_node = true;
        let mut i = indent;
        // The column of the node starting the line or a `- ` entry's content: a block mapping
        // opens there if a key follows.
        let mut entry_col: Option<isize> = None;
        if self.quote.is_none() && self.flow == 0 {
            let continues_plain = self
                .plain_parent
                .is_some_and(|p| col > p && !blank && rest[0] != b'#');
            self.plain_parent = None;
            if blank || rest[0] == b'#' || rest[0] == b'%' {
                return Ok(());
            }
            if continues_plain {
                expect_node = false;
            } else if indent == 0 && (rest.starts_with(b"---") || rest.starts_with(b"...")) {
                if rest.len() == 3 || is_blank(rest[3]) {
                    self.blocks.clear();
                    i = 3;
                }
            } else {
                while self.blocks.last().is_some_and(|&top| top > col) {
                    self.blocks.pop();
                }
                // the line opens a block mapping at its column if a key follows
                entry_col = Some(col);
                owner = match self.blocks.as_slice() {
                    [.., below, top] if *top == col => *below,
                    [.., top] if *top < col => *top,
                    _ => -1,
                };
                // Block sequence entries, possibly several on one line (`- - a`); an entry
                // that is a mapping (`- k: v`) opens it at its key's column.
                while i < l.len()
                    && (l[i] == b'-' || l[i] == b'?')
                    && l.get(i + 1).is_none_or(|&b| is_blank(b))
                {
                    self.push_block(i as isize)?;
                    owner = i as isize;
                    i += 1 + l[i + 1..].iter().take_while(|&&b| is_blank(b)).count();
                    entry_col = Some(i as isize);
                }
            }
        } else if self.quote.is_none() {
            // Inside a flow collection: indentation means nothing, a plain scalar may go on.
            self.plain_parent = None;
            expect_node = self.flow_expect;
        }
        let mut plain_start: Option<isize> = None;
        let mut after_quoted = false;
        while i < l.len() {
            let b = l[i];
            if let Some(q) = self.quote {
                match b {
                    b'\\' if q == b'"' => i += 1,
                    b'\'' if q == b'\'' && l.get(i + 1) == Some(&b'\'') => i += 1,
                    _ if b == q => {
                        self.quote = None;
                        after_quoted = true;
                        expect_node = false;
                    }
                    _ => {}
                }
                i += 1;
                continue;
            }
            let prev_blank = i == 0 || is_blank(l[i - 1]);
            let next = l.get(i + 1).copied();
            let next_ends =
                next.is_none_or(|n| is_blank(n) || (self.flow > 0 && is_flow_indicator(n)));
            match b {
                b' ' | b'\t' => {}
                b'#' if prev_blank => {
                    // a comment ends a plain scalar
                    plain_start = None;
                    break;
                }
                b'"' | b'\'' if expect_node => {
                    self.quote = Some(b);
                    plain_start = None;
                }
                b'[' | b'{' if expect_node || self.flow > 0 => {
                    self.flow += 1;
                    self.depth_check()?;
                    expect_node = true;
                    plain_start = None;
                }
                b']' | b'}' if self.flow > 0 => {
                    self.flow -= 1;
                    expect_node = false;
                    plain_start = None;
                }
                b',' if self.flow > 0 => {
                    expect_node = true;
                    plain_start = None;
                }
                b':' if next_ends || (self.flow > 0 && after_quoted) => {
                    if self.flow == 0 {
                        if let Some(c) = entry_col.take() {
                            self.push_block(c)?;
                        }
                        owner = plain_start.unwrap_or(owner);
                    }
                    expect_node = true;
                    plain_start = None;
                }
                b'*' | b'&' | b'!' if expect_node => {
                    if b != b'!' {
                        self.refs += 1;
                        if self.refs > self.limits.max_anchors_aliases {
                            return Err(YamlGuardError::TooManyAliases {
                                line: self.line,
                                max: self.limits.max_anchors_aliases,
                            });
                        }
                    }
                    // the name runs to a blank (or, in a flow collection, an indicator)
                    while i + 1 < l.len()
                        && !is_blank(l[i + 1])
                        && !(self.flow > 0 && is_flow_indicator(l[i + 1]))
                    {
                        i += 1;
                    }
                    // after an anchor or a tag comes the node; an alias is the node
                    expect_node = b != b'*';
                }
                b'|' | b'>' if expect_node && self.flow == 0 => {
                    self.scalar_parent = Some(owner);
                    return Ok(());
                }
                _ => {
                    if expect_node {
                        plain_start = Some(i as isize);
                    }
                    expect_node = false;
                }
            }
            if !is_blank(b) && b != b'"' && b != b'\'' {
                after_quoted = false;
            }
            i += 1;
        }
        self.flow_expect = expect_node;
        if self.quote.is_none() && self.flow == 0 && plain_start.is_some() {
            // a plain scalar may go on, on more indented lines
            self.plain_parent = Some(owner);
        }
        Ok(())
    }
}

#[cfg(test)]
#[path = "yaml_guard_tests.rs"]
mod tests;
