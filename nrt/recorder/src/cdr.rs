//! ROS 2's message serialisation, written by hand: plain CDR (XCDR1) little endian as rmw's Fast CDR writes it.
//!
//! - A message starts with the 4-byte encapsulation header `00 01 00 00` (CDR_LE, no options).
//! - Every primitive is aligned to its size (8 for `float64`) counted from the end of that header.
//! - A string is a `u32` length counting its terminating NUL, its bytes, then the NUL (an empty string: `01 00 00
//!   00 00`).
//! - A sequence (`T[]`) is a `u32` element count then the elements; a fixed array (`T[N]`) is its elements inline.
//!
//! A length that does not fit a `u32` (4 GiB) is cut to the elements that fit, so that the message stays
//! well-formed.

/// Writes one CDR message at the end of a buffer (appended: the caller clears a reused buffer).
///
/// ```
/// use nrt_recorder::cdr::CdrWriter;
/// let mut buf = Vec::new();
/// let mut w = CdrWriter::begin(&mut buf);
/// w.u8(7);
/// w.f64(1.0); // aligned to 8 after the header
/// assert_eq!(buf, [0, 1, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f]);
/// ```
#[derive(Debug)]
pub struct CdrWriter<'a> {
    buf: &'a mut Vec<u8>,
    /// Where the message's body starts in `buf` (alignment origin).
    origin: usize,
}

impl<'a> CdrWriter<'a> {
    /// Starts a message at the end of `buf`: writes the encapsulation header.
    pub fn begin(buf: &'a mut Vec<u8>) -> CdrWriter<'a> {
        buf.extend_from_slice(&[0x00, 0x01, 0x00, 0x00]);
        let origin = buf.len();
        CdrWriter { buf, origin }
    }

    /// Pads with zeros to a multiple of `n` bytes from the body's start.
    fn align(&mut self, n: usize) {
        let pos = self.buf.len() - self.origin;
        let pad = (n - pos % n) % n;
        self.buf.resize(self.buf.len() + pad, 0);
    }

    /// A `uint8` / `byte` / `bool` (as 0 or 1).
    pub fn u8(&mut self, v: u8) {
        self.buf.push(v);
    }

    /// An `int8`.
    pub fn i8(&mut self, v: i8) {
        self.buf.push(v as u8);
    }

    /// An `int16`.
    pub fn i16(&mut self, v: i16) {
        self.align(2);
        self.buf.extend_from_slice(&v.to_le_bytes());
    }

    /// A `uint32`.
    pub fn u32(&mut self, v: u32) {
        self.align(4);
        self.buf.extend_from_slice(&v.to_le_bytes());
    }

    /// An `int32`.
    pub fn i32(&mut self, v: i32) {
        self.align(4);
        self.buf.extend_from_slice(&v.to_le_bytes());
    }

    /// A `float32`.
    pub fn f32(&mut self, v: f32) {
        self.align(4);
        self.buf.extend_from_slice(&v.to_le_bytes());
    }

    /// A `float64`.
    pub fn f64(&mut self, v: f64) {
        self.align(8);
        self.buf.extend_from_slice(&v.to_le_bytes());
    }

    /// A `string`: length with the NUL, bytes, NUL.
    pub fn string(&mut self, s: &str) {
        let bytes = &s.as_bytes()[..s.len().min(u32::MAX as usize - 1)];
        self.u32(bytes.len() as u32 + 1);
        self.buf.extend_from_slice(bytes);
        self.buf.push(0);
    }

    /// A sequence's element count, before its elements; the count written (`len` cut to `u32::MAX`): write that
    /// many elements.
    pub fn sequence_len(&mut self, len: usize) -> usize {
        let n = len.min(u32::MAX as usize);
        self.u32(n as u32);
        n
    }

    /// A `float64[]`.
    pub fn f64_sequence(&mut self, v: &[f64]) {
        let n = self.sequence_len(v.len());
        self.f64_array(&v[..n]);
    }

    /// A `float64[N]` (inline).
    pub fn f64_array(&mut self, v: &[f64]) {
        for &x in v {
            self.f64(x);
        }
    }

    /// A `float32[]`.
    pub fn f32_sequence(&mut self, v: &[f32]) {
        let n = self.sequence_len(v.len());
        for &x in &v[..n] {
            self.f32(x);
        }
    }

    /// An `int32[]`.
    pub fn i32_sequence(&mut self, v: &[i32]) {
        let n = self.sequence_len(v.len());
        for &x in &v[..n] {
            self.i32(x);
        }
    }

    /// An `int16[N]` (inline).
    pub fn i16_array(&mut self, v: &[i16]) {
        for &x in v {
            self.i16(x);
        }
    }

    /// A `string[]`.
    pub fn string_sequence<S: AsRef<str>>(&mut self, v: &[S]) {
        let n = self.sequence_len(v.len());
        for s in &v[..n] {
            self.string(s.as_ref());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(f: impl FnOnce(&mut CdrWriter)) -> Vec<u8> {
        let mut buf = Vec::new();
        f(&mut CdrWriter::begin(&mut buf));
        buf
    }

    #[test]
    fn header_then_primitives_aligned_from_the_body() {
        let b = message(|w| {
            w.u8(0xaa);
            w.i16(-2);
            w.u8(0xbb);
            w.u32(0x0102_0304);
            w.f32(1.5);
            w.f64(-2.0);
        });
        #[rustfmt::skip]
        let want = [
            0x00, 0x01, 0x00, 0x00, // CDR_LE
            0xaa, 0x00, 0xfe, 0xff, // u8, pad to 2, i16 -2
            0xbb, 0x00, 0x00, 0x00, // u8, pad to 4
            0x04, 0x03, 0x02, 0x01, // u32
            0x00, 0x00, 0xc0, 0x3f, // f32 1.5 (body offset 12)
            0, 0, 0, 0, 0, 0, 0x00, 0xc0, // f64 -2.0 at body offset 16: aligned (buffer offset 20 is not)
        ];
        assert_eq!(b, want);
    }

    #[test]
    fn strings_count_their_nul() {
        let b = message(|w| {
            w.string("ab");
            w.string("");
            w.i32(-1);
        });
        #[rustfmt::skip]
        let want = [
            0, 1, 0, 0,
            3, 0, 0, 0, b'a', b'b', 0, // "ab": length 3 with the NUL
            0, // pad to 4
            1, 0, 0, 0, 0, // "": length 1, the NUL
            0, 0, 0, // pad to 4
            0xff, 0xff, 0xff, 0xff,
        ];
        assert_eq!(b, want);
    }

    #[test]
    fn sequences_count_arrays_do_not() {
        let b = message(|w| {
            w.string_sequence(&["x"]);
            w.f64_sequence(&[1.0]);
            w.f64_array(&[2.0]);
        });
        #[rustfmt::skip]
        let want = [
            0, 1, 0, 0,
            1, 0, 0, 0, // one string
            2, 0, 0, 0, b'x', 0, // "x"
            0, 0, // pad to 4
            1, 0, 0, 0, // one double (body offset 12)
            0, 0, 0, 0, 0, 0, 0xf0, 0x3f, // 1.0 at body offset 16: aligned, no pad
            0, 0, 0, 0, 0, 0, 0, 0x40, // 2.0 inline, no count
        ];
        assert_eq!(b, want);
    }

    #[test]
    fn alignment_counts_from_the_header_not_the_buffer() {
        // a buffer holding something before: the message's alignment is its own
        let mut buf = vec![0xee; 3];
        let mut w = CdrWriter::begin(&mut buf);
        w.u8(1);
        w.u32(2);
        assert_eq!(buf, [0xee, 0xee, 0xee, 0, 1, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0]);
    }
}
