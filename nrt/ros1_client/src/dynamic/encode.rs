//! JSON (the ROS 2 shape) → ROS 1 serialisation, in the field order of the definition. Missing fields take their
//! default (0, false, "", empty or zeroed arrays, default messages); `time` / `duration` take `{"sec","nanosec"}`
//! (ROS 2) or `{"secs","nsecs"}` (ROS 1); numbers are range-checked per type; `null` is NaN for floats (what JSON
//! makes of NaN); arrays of one-byte types may also be a base64 string. Errors name the field path.

use super::parse::{Arity, Primitive};
use super::types::{FieldKind, MessageType};
use super::{CodecError, FieldPath};
use base64::Engine as _;
use serde_json::{Map, Value};

impl MessageType {
    /// Serialises `value` (a JSON object in the ROS 2 shape) as a ROS 1 message of this type: the message body,
    /// without the 4-byte length prefix of a TCPROS frame.
    pub fn encode(&self, value: &Value) -> Result<Vec<u8>, CodecError> {
        let mut out = Vec::with_capacity(64);
        let mut path = FieldPath::default();
        message(self, Some(value), &mut path, &mut out).map_err(|reason| CodecError::Value {
            ty: self.name.clone(),
            path: path.to_string(),
            reason,
        })?;
        Ok(out)
    }
}

fn message(
    m: &MessageType,
    v: Option<&Value>,
    path: &mut FieldPath,
    out: &mut Vec<u8>,
) -> Result<(), String> {
    let obj: Option<&Map<String, Value>> = match v {
        None => None,
        Some(Value::Object(o)) => Some(o),
        Some(other) => {
            return Err(format!(
                "expected an object (a {}), got {}",
                m.name,
                kind_of(other)
            ))
        }
    };
    if let Some(o) = obj {
        if let Some(k) = o.keys().find(|k| !m.fields.iter().any(|f| &f.name == *k)) {
            path.push_field(k);
            return Err(format!("no such field in {}", m.name));
        }
    }
    for f in &m.fields {
        path.push_field(&f.name);
        let v = obj.and_then(|o| o.get(&f.name));
        field(&f.kind, f.arity, v, path, out)?;
        path.pop();
    }
    Ok(())
}

fn field(
    kind: &FieldKind,
    arity: Arity,
    v: Option<&Value>,
    path: &mut FieldPath,
    out: &mut Vec<u8>,
) -> Result<(), String> {
    match arity {
        Arity::One => one(kind, v, path, out),
        Arity::Fixed(n) => {
            let items = items(kind, v, Some(n))?;
            for i in 0..n {
                path.push_index(i);
                item(kind, &items, i, path, out)?;
                path.pop();
            }
            Ok(())
        }
        Arity::Variable => {
            let items = items(kind, v, None)?;
            let n = items.len();
            let count =
                u32::try_from(n).map_err(|_| format!("{n} values: more than a uint32 count"))?;
            out.extend_from_slice(&count.to_le_bytes());
            for i in 0..n {
                path.push_index(i);
                item(kind, &items, i, path, out)?;
                path.pop();
            }
            Ok(())
        }
    }
}

/// An array's values: JSON values, or the bytes of a base64 string (one-byte types).
enum Items<'a> {
    Json(&'a [Value]),
    Bytes(Vec<u8>),
    Absent,
}

impl Items<'_> {
    fn len(&self) -> usize {
        match self {
            Items::Json(v) => v.len(),
            Items::Bytes(b) => b.len(),
            Items::Absent => 0,
        }
    }
}

fn items<'a>(
    kind: &FieldKind,
    v: Option<&'a Value>,
    fixed: Option<usize>,
) -> Result<Items<'a>, String> {
    let items = match v {
        None => return Ok(Items::Absent),
        Some(Value::Array(a)) => Items::Json(a),
        Some(Value::String(s)) if matches!(kind, FieldKind::Primitive(p) if p.is_byte()) => {
            Items::Bytes(
                base64::engine::general_purpose::STANDARD
                    .decode(s)
                    .map_err(|e| format!("expected an array or a base64 string: {e}"))?,
            )
        }
        Some(other) => return Err(format!("expected an array, got {}", kind_of(other))),
    };
    match fixed {
        Some(n) if items.len() != n => Err(format!("expected {n} values, got {}", items.len())),
        _ => Ok(items),
    }
}

fn item(
    kind: &FieldKind,
    items: &Items,
    i: usize,
    path: &mut FieldPath,
    out: &mut Vec<u8>,
) -> Result<(), String> {
    match items {
        Items::Json(a) => one(kind, a.get(i), path, out),
        Items::Bytes(b) => {
            out.push(b[i]);
            Ok(())
        }
        Items::Absent => one(kind, None, path, out),
    }
}

fn one(
    kind: &FieldKind,
    v: Option<&Value>,
    path: &mut FieldPath,
    out: &mut Vec<u8>,
) -> Result<(), String> {
    match kind {
        FieldKind::Message(m) => message(m, v, path, out),
        FieldKind::Primitive(p) => primitive(*p, v, path, out),
    }
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a bool",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// An integer of `v` within `lo..=hi` (as i128: every ROS integer type fits).
fn int(v: Option<&Value>, lo: i128, hi: i128, ty: &str) -> Result<i128, String> {
    let Some(v) = v else { return Ok(0) };
    let n = match v {
        Value::Number(n) => n
            .as_i64()
            .map(i128::from)
            .or_else(|| n.as_u64().map(i128::from))
            .ok_or_else(|| format!("expected an integer ({ty}), got {n}"))?,
        other => {
            return Err(format!(
                "expected an integer ({ty}), got {}",
                kind_of(other)
            ))
        }
    };
    if n < lo || n > hi {
        return Err(format!("{n} is out of range for {ty} ({lo}..={hi})"));
    }
    Ok(n)
}

fn float(v: Option<&Value>, ty: &str) -> Result<f64, String> {
    match v {
        None => Ok(0.0),
        Some(Value::Null) => Ok(f64::NAN),
        Some(Value::Number(n)) => n.as_f64().ok_or_else(|| format!("{n} is not a {ty}")),
        Some(other) => Err(format!("expected a number ({ty}), got {}", kind_of(other))),
    }
}

fn primitive(
    p: Primitive,
    v: Option<&Value>,
    path: &mut FieldPath,
    out: &mut Vec<u8>,
) -> Result<(), String> {
    use Primitive::*;
    match p {
        Bool => match v {
            None => out.push(0),
            Some(Value::Bool(b)) => out.push(u8::from(*b)),
            Some(other) => return Err(format!("expected true or false, got {}", kind_of(other))),
        },
        Int8 => out.extend_from_slice(
            &(int(v, i8::MIN.into(), i8::MAX.into(), "int8")? as i8).to_le_bytes(),
        ),
        // byte: one byte, unsigned in the ROS 2 shape (octet), int8 in old ROS 1 code: both accepted
        Byte => out.push(int(v, i8::MIN.into(), u8::MAX.into(), "byte")? as u8),
        UInt8 | Char => out.push(int(
            v,
            0,
            u8::MAX.into(),
            if p == Char { "char" } else { "uint8" },
        )? as u8),
        Int16 => out.extend_from_slice(
            &(int(v, i16::MIN.into(), i16::MAX.into(), "int16")? as i16).to_le_bytes(),
        ),
        UInt16 => {
            out.extend_from_slice(&(int(v, 0, u16::MAX.into(), "uint16")? as u16).to_le_bytes())
        }
        Int32 => out.extend_from_slice(
            &(int(v, i32::MIN.into(), i32::MAX.into(), "int32")? as i32).to_le_bytes(),
        ),
        UInt32 => {
            out.extend_from_slice(&(int(v, 0, u32::MAX.into(), "uint32")? as u32).to_le_bytes())
        }
        Int64 => out.extend_from_slice(
            &(int(v, i64::MIN.into(), i64::MAX.into(), "int64")? as i64).to_le_bytes(),
        ),
        UInt64 => {
            out.extend_from_slice(&(int(v, 0, u64::MAX.into(), "uint64")? as u64).to_le_bytes())
        }
        Float32 => {
            let x = float(v, "float32")?;
            if x.is_finite() && x.abs() > f64::from(f32::MAX) {
                return Err(format!("{x} is out of range for float32"));
            }
            out.extend_from_slice(&(x as f32).to_le_bytes());
        }
        Float64 => out.extend_from_slice(&float(v, "float64")?.to_le_bytes()),
        String => {
            let s = match v {
                None => "",
                Some(Value::String(s)) => s.as_str(),
                Some(other) => return Err(format!("expected a string, got {}", kind_of(other))),
            };
            let n = u32::try_from(s.len())
                .map_err(|_| "a string longer than a uint32 length".to_owned())?;
            out.extend_from_slice(&n.to_le_bytes());
            out.extend_from_slice(s.as_bytes());
        }
        Time | Duration => stamp(p == Time, v, path, out)?,
    }
    Ok(())
}

/// `time` (uint32, uint32) or `duration` (int32, int32) from `{"sec","nanosec"}` or `{"secs","nsecs"}`.
fn stamp(
    time: bool,
    v: Option<&Value>,
    path: &mut FieldPath,
    out: &mut Vec<u8>,
) -> Result<(), String> {
    let what = if time { "time" } else { "duration" };
    let o = match v {
        None => None,
        Some(Value::Object(o)) => Some(o),
        Some(other) => {
            return Err(format!(
                "expected a {what} ({{\"sec\", \"nanosec\"}} or {{\"secs\", \"nsecs\"}}), got {}",
                kind_of(other)
            ))
        }
    };
    let (s_key, n_key) = match o {
        Some(o) if o.contains_key("secs") || o.contains_key("nsecs") => ("secs", "nsecs"),
        _ => ("sec", "nanosec"),
    };
    if let Some(k) = o.and_then(|o| o.keys().find(|k| *k != s_key && *k != n_key)) {
        path.push_field(k);
        return Err(format!(
            "no such field in a {what} (it has {s_key} and {n_key})"
        ));
    }
    let get = |k: &str| o.and_then(|o| o.get(k));
    let (s_range, n_range) = if time {
        ((0, u32::MAX.into()), (0, u32::MAX.into()))
    } else if n_key == "nanosec" {
        ((i32::MIN.into(), i32::MAX.into()), (0, i32::MAX.into()))
    } else {
        (
            (i32::MIN.into(), i32::MAX.into()),
            (i32::MIN.into(), i32::MAX.into()),
        )
    };
    let ty = if time { "uint32" } else { "int32" };
    path.push_field(s_key);
    let s = int(get(s_key), s_range.0, s_range.1, ty)?;
    path.pop();
    path.push_field(n_key);
    let n = int(get(n_key), n_range.0, n_range.1, ty)?;
    path.pop();
    if time {
        out.extend_from_slice(&(s as u32).to_le_bytes());
        out.extend_from_slice(&(n as u32).to_le_bytes());
    } else {
        out.extend_from_slice(&(s as i32).to_le_bytes());
        out.extend_from_slice(&(n as i32).to_le_bytes());
    }
    Ok(())
}
