//! Borrowed views over payload data: word arrays, strings, native parameters, changed-variable
//! blocks. Decoding produces views over the received bytes (no allocation); encoding accepts
//! views over native Rust data.

use crate::description::NativeParam;
use std::fmt;

/// A view of an array of little-endian i16 words.
#[derive(Clone, Copy)]
pub struct Words<'a>(WordsRepr<'a>);

#[derive(Clone, Copy)]
enum WordsRepr<'a> {
    Bytes(&'a [u8]),
    Slice(&'a [i16]),
}

impl<'a> Words<'a> {
    /// View over little-endian bytes; a trailing odd byte is ignored.
    pub fn from_le_bytes(bytes: &'a [u8]) -> Self {
        Words(WordsRepr::Bytes(&bytes[..bytes.len() & !1]))
    }

    /// View over native words.
    pub fn from_slice(words: &'a [i16]) -> Self {
        Words(WordsRepr::Slice(words))
    }

    /// An empty array.
    pub const fn empty() -> Self {
        Words(WordsRepr::Slice(&[]))
    }

    /// Number of words.
    pub fn len(&self) -> usize {
        match self.0 {
            WordsRepr::Bytes(b) => b.len() / 2,
            WordsRepr::Slice(s) => s.len(),
        }
    }

    /// Whether there is no word.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Word `i`, if in range.
    pub fn get(&self, i: usize) -> Option<i16> {
        match self.0 {
            WordsRepr::Bytes(b) => b
                .get(2 * i..2 * i + 2)
                .map(|w| i16::from_le_bytes([w[0], w[1]])),
            WordsRepr::Slice(s) => s.get(i).copied(),
        }
    }

    /// Iterates over the words.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = i16> + 'a {
        let w = *self;
        (0..w.len()).map(move |i| w.get(i).unwrap_or_default())
    }

    /// Copies the words into `out` (up to its length); returns how many were copied.
    pub fn copy_to(&self, out: &mut [i16]) -> usize {
        let n = self.len().min(out.len());
        for (i, o) in out.iter_mut().enumerate().take(n) {
            *o = self.get(i).unwrap_or_default();
        }
        n
    }

    /// Owned copy (NRT side).
    pub fn to_vec(&self) -> Vec<i16> {
        self.iter().collect()
    }

    /// Size in bytes on the wire.
    pub fn byte_len(&self) -> usize {
        2 * self.len()
    }

    pub(crate) fn write_le(&self, out: &mut [u8]) {
        match self.0 {
            WordsRepr::Bytes(b) => out[..b.len()].copy_from_slice(b),
            WordsRepr::Slice(s) => {
                for (chunk, w) in out.chunks_exact_mut(2).zip(s) {
                    chunk.copy_from_slice(&w.to_le_bytes());
                }
            }
        }
    }
}

impl PartialEq for Words<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}
impl Eq for Words<'_> {}

impl fmt::Debug for Words<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<'a> From<&'a [i16]> for Words<'a> {
    fn from(s: &'a [i16]) -> Self {
        Words::from_slice(s)
    }
}

/// A view of an Aseba string (u8 length + bytes on the wire; UTF-8 on hosts).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct AsebaStr<'a>(&'a [u8]);

impl<'a> AsebaStr<'a> {
    /// View over raw bytes.
    pub const fn from_bytes(bytes: &'a [u8]) -> Self {
        AsebaStr(bytes)
    }

    /// View over a Rust string.
    #[allow(clippy::should_implement_trait)]
    pub const fn from_str(s: &'a str) -> Self {
        AsebaStr(s.as_bytes())
    }

    /// The raw bytes.
    pub const fn as_bytes(&self) -> &'a [u8] {
        self.0
    }

    /// The string, if valid UTF-8.
    pub fn to_str(&self) -> Result<&'a str, std::str::Utf8Error> {
        std::str::from_utf8(self.0)
    }

    /// The string with invalid UTF-8 replaced (NRT side).
    pub fn to_string_lossy(&self) -> String {
        String::from_utf8_lossy(self.0).into_owned()
    }

    /// Length in bytes.
    pub const fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether the string is empty.
    pub const fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl fmt::Debug for AsebaStr<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&String::from_utf8_lossy(self.0), f)
    }
}

impl fmt::Display for AsebaStr<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&String::from_utf8_lossy(self.0), f)
    }
}

impl<'a> From<&'a str> for AsebaStr<'a> {
    fn from(s: &'a str) -> Self {
        AsebaStr::from_str(s)
    }
}

/// The parameters of a NATIVE_FUNCTION_DESCRIPTION: `(size: i16, name)` pairs.
#[derive(Clone, Copy)]
pub struct NativeParams<'a>(ParamsRepr<'a>);

#[derive(Clone, Copy)]
enum ParamsRepr<'a> {
    /// Validated wire bytes holding `count` parameters.
    Raw {
        count: u16,
        bytes: &'a [u8],
    },
    Described(&'a [NativeParam]),
}

impl<'a> NativeParams<'a> {
    /// View over description parameters (for encoding).
    pub fn from_params(params: &'a [NativeParam]) -> Self {
        NativeParams(ParamsRepr::Described(params))
    }

    /// Validates `count` parameters at the start of `bytes`; returns the view and the bytes used.
    pub(crate) fn parse(count: u16, bytes: &'a [u8]) -> Option<(Self, usize)> {
        let mut pos = 0;
        for _ in 0..count {
            let n = *bytes.get(pos + 2)? as usize;
            pos += 3 + n;
            if pos > bytes.len() {
                return None;
            }
        }
        Some((
            NativeParams(ParamsRepr::Raw {
                count,
                bytes: &bytes[..pos],
            }),
            pos,
        ))
    }

    /// Number of parameters.
    pub fn len(&self) -> usize {
        match self.0 {
            ParamsRepr::Raw { count, .. } => count as usize,
            ParamsRepr::Described(p) => p.len(),
        }
    }

    /// Whether there is no parameter.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Iterates over `(size, name)` pairs.
    pub fn iter(&self) -> impl Iterator<Item = (i16, AsebaStr<'a>)> + 'a {
        let (raw, described): (&'a [u8], &'a [NativeParam]) = match self.0 {
            ParamsRepr::Raw { bytes, .. } => (bytes, &[]),
            ParamsRepr::Described(p) => (&[], p),
        };
        let mut pos = 0usize;
        let raw_iter = std::iter::from_fn(move || {
            let head = raw.get(pos..pos + 3)?;
            let size = i16::from_le_bytes([head[0], head[1]]);
            let n = head[2] as usize;
            let name = raw.get(pos + 3..pos + 3 + n)?;
            pos += 3 + n;
            Some((size, AsebaStr::from_bytes(name)))
        });
        raw_iter.chain(
            described
                .iter()
                .map(|p| (p.size, AsebaStr::from_str(&p.name))),
        )
    }

    pub(crate) fn byte_len(&self) -> usize {
        self.iter().map(|(_, n)| 3 + n.len()).sum()
    }
}

impl PartialEq for NativeParams<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}
impl Eq for NativeParams<'_> {}

impl fmt::Debug for NativeParams<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// The blocks of a CHANGED_VARIABLES message: repeated `{start, count, count × i16}`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct ChangedBlocks<'a>(&'a [u8]);

impl<'a> ChangedBlocks<'a> {
    /// Validates the block structure of `bytes` (every block complete, nothing left over).
    pub fn from_bytes(bytes: &'a [u8]) -> Option<Self> {
        let mut pos = 0;
        while pos < bytes.len() {
            let head = bytes.get(pos..pos + 4)?;
            let count = u16::from_le_bytes([head[2], head[3]]) as usize;
            pos += 4 + 2 * count;
        }
        (pos == bytes.len()).then_some(ChangedBlocks(bytes))
    }

    /// Iterates over `(start, values)` blocks, skipping empty ones.
    pub fn iter(&self) -> impl Iterator<Item = (u16, Words<'a>)> + 'a {
        let bytes = self.0;
        let mut pos = 0usize;
        std::iter::from_fn(move || loop {
            let head = bytes.get(pos..pos + 4)?;
            let start = u16::from_le_bytes([head[0], head[1]]);
            let count = u16::from_le_bytes([head[2], head[3]]) as usize;
            let values = bytes.get(pos + 4..pos + 4 + 2 * count)?;
            pos += 4 + 2 * count;
            if count > 0 {
                return Some((start, Words::from_le_bytes(values)));
            }
        })
    }

    /// The raw bytes.
    pub fn as_bytes(&self) -> &'a [u8] {
        self.0
    }

    /// Appends one block to a buffer being built (sim/NRT side).
    pub fn push_block(buf: &mut Vec<u8>, start: u16, values: &[i16]) {
        buf.extend_from_slice(&start.to_le_bytes());
        buf.extend_from_slice(&(values.len() as u16).to_le_bytes());
        for v in values {
            buf.extend_from_slice(&v.to_le_bytes());
        }
    }
}

impl fmt::Debug for ChangedBlocks<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}
