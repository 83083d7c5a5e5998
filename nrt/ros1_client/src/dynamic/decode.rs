//! ROS 1 serialisation → JSON in the ROS 2 shape: objects by field name, arrays as JSON arrays (uint8[] too),
//! `time` / `duration` as `{"sec", "nanosec"}` (a duration normalised to 0 <= nanosec < 1e9), std_msgs/Header
//! without its `seq` (the ROS 2 Header has none), NaN and infinities as `null`. Truncated input, trailing bytes
//! and invalid UTF-8 are errors naming the field path.

use super::parse::{Arity, Primitive};
use super::types::{FieldKind, MessageType};
use super::{CodecError, FieldPath};
use serde_json::{Map, Number, Value};

impl MessageType {
    /// Decodes the message body `bytes` (without the 4-byte length prefix of a TCPROS frame) of this type.
    pub fn decode(&self, bytes: &[u8]) -> Result<Value, CodecError> {
        let mut r = Reader { bytes, at: 0 };
        let mut path = FieldPath::default();
        let err = |path: &FieldPath, reason| CodecError::Value {
            ty: self.name.clone(),
            path: path.to_string(),
            reason,
        };
        let v = message(self, &mut r, &mut path).map_err(|reason| err(&path, reason))?;
        if r.at != bytes.len() {
            return Err(CodecError::Trailing {
                ty: self.name.clone(),
                extra: bytes.len() - r.at,
            });
        }
        Ok(v)
    }
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        let left = self.bytes.len() - self.at;
        if n > left {
            return Err(format!("truncated: {n} bytes needed, {left} left"));
        }
        let s = &self.bytes[self.at..self.at + n];
        self.at += n;
        Ok(s)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], String> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N)?);
        Ok(a)
    }

    fn u32(&mut self) -> Result<u32, String> {
        Ok(u32::from_le_bytes(self.array()?))
    }

    fn left(&self) -> usize {
        self.bytes.len() - self.at
    }
}

fn message(m: &MessageType, r: &mut Reader, path: &mut FieldPath) -> Result<Value, String> {
    let mut o = Map::new();
    for f in &m.fields {
        path.push_field(&f.name);
        let v = match f.arity {
            Arity::One => one(&f.kind, r, path)?,
            Arity::Fixed(n) => Value::Array(many(&f.kind, n, r, path)?),
            Arity::Variable => {
                let n = r.u32()? as usize;
                Value::Array(many(&f.kind, n, r, path)?)
            }
        };
        path.pop();
        if m.is_header() && f.name == "seq" {
            continue;
        }
        o.insert(f.name.clone(), v);
    }
    Ok(Value::Object(o))
}

fn many(
    kind: &FieldKind,
    n: usize,
    r: &mut Reader,
    path: &mut FieldPath,
) -> Result<Vec<Value>, String> {
    // an announced count allocates no more than the bytes that are there could hold
    let mut out = Vec::with_capacity(n.min(r.left()));
    for i in 0..n {
        path.push_index(i);
        out.push(one(kind, r, path)?);
        path.pop();
    }
    Ok(out)
}

fn one(kind: &FieldKind, r: &mut Reader, path: &mut FieldPath) -> Result<Value, String> {
    match kind {
        FieldKind::Message(m) => message(m, r, path),
        FieldKind::Primitive(p) => primitive(*p, r),
    }
}

fn float(x: f64) -> Value {
    Number::from_f64(x).map_or(Value::Null, Value::Number)
}

fn primitive(p: Primitive, r: &mut Reader) -> Result<Value, String> {
    use Primitive::*;
    Ok(match p {
        Bool => match r.array::<1>()?[0] {
            0 => Value::Bool(false),
            1 => Value::Bool(true),
            b => return Err(format!("{b} is not a bool (0 or 1)")),
        },
        Int8 => i8::from_le_bytes(r.array()?).into(),
        UInt8 | Byte | Char => r.array::<1>()?[0].into(),
        Int16 => i16::from_le_bytes(r.array()?).into(),
        UInt16 => u16::from_le_bytes(r.array()?).into(),
        Int32 => i32::from_le_bytes(r.array()?).into(),
        UInt32 => r.u32()?.into(),
        Int64 => i64::from_le_bytes(r.array()?).into(),
        UInt64 => u64::from_le_bytes(r.array()?).into(),
        Float32 => float(f32::from_le_bytes(r.array()?).into()),
        Float64 => float(f64::from_le_bytes(r.array()?)),
        String => {
            let n = r.u32()? as usize;
            let s = std::str::from_utf8(r.take(n)?).map_err(|e| format!("not UTF-8: {e}"))?;
            Value::String(s.to_owned())
        }
        Time => {
            let (s, n) = (r.u32()?, r.u32()?);
            stamp(i64::from(s), i64::from(n))
        }
        Duration => {
            let s = i32::from_le_bytes(r.array()?);
            let n = i32::from_le_bytes(r.array()?);
            let total = i64::from(s) * 1_000_000_000 + i64::from(n);
            stamp(
                total.div_euclid(1_000_000_000),
                total.rem_euclid(1_000_000_000),
            )
        }
    })
}

fn stamp(sec: i64, nanosec: i64) -> Value {
    let mut o = Map::new();
    o.insert("sec".into(), sec.into());
    o.insert("nanosec".into(), nanosec.into());
    Value::Object(o)
}
