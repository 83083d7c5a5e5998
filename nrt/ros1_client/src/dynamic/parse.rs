//! The ROS 1 `.msg` / `.srv` syntax (ROS wiki "msg"): one field (`type name`) or constant (`type NAME=value`) per
//! line, `#` starts a comment (except in a string constant, whose value is the rest of the line), a type is a
//! built-in, `Header` (std_msgs/Header), `Type` (same package) or `package/Type`, with `[]` (variable length) or
//! `[N]` (fixed length) for arrays. A service is its request and response separated by a `---` line.

/// A ROS 1 built-in type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Primitive {
    /// `bool` (one byte, 0 or 1).
    Bool,
    /// `int8`.
    Int8,
    /// `uint8`.
    UInt8,
    /// `byte` (deprecated alias: one byte, unsigned in the ROS 2 shape).
    Byte,
    /// `char` (deprecated alias of uint8).
    Char,
    /// `int16`.
    Int16,
    /// `uint16`.
    UInt16,
    /// `int32`.
    Int32,
    /// `uint32`.
    UInt32,
    /// `int64`.
    Int64,
    /// `uint64`.
    UInt64,
    /// `float32`.
    Float32,
    /// `float64`.
    Float64,
    /// `string` (UTF-8, length-prefixed).
    String,
    /// `time` (uint32 secs, uint32 nsecs).
    Time,
    /// `duration` (int32 secs, int32 nsecs).
    Duration,
}

impl Primitive {
    /// The built-in type written `name`, if it is one.
    pub fn from_name(name: &str) -> Option<Primitive> {
        use Primitive::*;
        Some(match name {
            "bool" => Bool,
            "int8" => Int8,
            "uint8" => UInt8,
            "byte" => Byte,
            "char" => Char,
            "int16" => Int16,
            "uint16" => UInt16,
            "int32" => Int32,
            "uint32" => UInt32,
            "int64" => Int64,
            "uint64" => UInt64,
            "float32" => Float32,
            "float64" => Float64,
            "string" => String,
            "time" => Time,
            "duration" => Duration,
            _ => return None,
        })
    }

    /// A one-byte integer type (its arrays may also be given as a base64 string).
    pub fn is_byte(self) -> bool {
        matches!(self, Primitive::UInt8 | Primitive::Byte | Primitive::Char)
    }
}

/// How many values a field holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arity {
    /// One value.
    One,
    /// `type[N]`: exactly N values, no length on the wire.
    Fixed(usize),
    /// `type[]`: a uint32 count, then the values.
    Variable,
}

/// A field as written (its type not resolved yet).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct WrittenField {
    /// The base type as written (`float64`, `Header`, `Point`, `geometry_msgs/Point`).
    pub ty: String,
    pub arity: Arity,
    pub name: String,
}

/// A constant as written (not a field: not on the wire, but in the md5sum).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Constant {
    pub ty: String,
    pub name: String,
    pub value: String,
}

/// A parsed definition.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Spec {
    pub fields: Vec<WrittenField>,
    pub constants: Vec<Constant>,
}

fn valid_name(n: &str) -> bool {
    let mut chars = n.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn valid_type(t: &str) -> bool {
    let mut parts = t.split('/');
    let ok = parts.all(|p| {
        let mut c = p.chars();
        c.next().is_some_and(|c| c.is_ascii_alphabetic())
            && c.all(|c| c.is_ascii_alphanumeric() || c == '_')
    });
    ok && t.matches('/').count() <= 1
}

/// The type (with its array suffix) and the rest of `line`, comments removed; `None` for a blank line.
fn significant(line: &str) -> Option<(&str, &str)> {
    let trimmed = line.trim();
    let (ty, rest) = trimmed.split_once(char::is_whitespace)?;
    // a string constant's value runs to the end of the line, '#' included
    let rest = if ty == "string" && rest.split('#').next().is_some_and(|r| r.contains('=')) {
        rest
    } else {
        rest.split('#').next().unwrap_or("")
    };
    Some((ty, rest.trim()))
}

/// Parses the text of a `.msg` (or one half of a `.srv`); the error says which line is wrong and why.
pub(crate) fn parse(text: &str) -> Result<Spec, String> {
    let mut spec = Spec::default();
    for (n, line) in text.lines().enumerate() {
        let bare = line.split('#').next().unwrap_or("").trim();
        if bare.is_empty() {
            continue;
        }
        let bad = |why: &str| format!("line {}: {why}: {:?}", n + 1, line.trim());
        let Some((ty, rest)) = significant(line) else {
            return Err(bad("a type without a name"));
        };
        if let Some((name, value)) = rest.split_once('=') {
            let (name, value) = (name.trim(), value.trim());
            if !valid_name(name) {
                return Err(bad("not a constant name"));
            }
            if Primitive::from_name(ty)
                .is_none_or(|p| matches!(p, Primitive::Time | Primitive::Duration))
            {
                return Err(bad(
                    "a constant must be of a built-in numeric, bool or string type",
                ));
            }
            spec.constants.push(Constant {
                ty: ty.to_owned(),
                name: name.to_owned(),
                value: value.to_owned(),
            });
            continue;
        }
        if !valid_name(rest) {
            return Err(bad("not a field name"));
        }
        let (base, arity) = match ty.split_once('[') {
            None => (ty, Arity::One),
            Some((base, "]")) => (base, Arity::Variable),
            Some((base, n)) => match n.strip_suffix(']').and_then(|n| n.parse().ok()) {
                Some(n) => (base, Arity::Fixed(n)),
                None => return Err(bad("not an array size")),
            },
        };
        if !valid_type(base) {
            return Err(bad("not a type"));
        }
        spec.fields.push(WrittenField {
            ty: base.to_owned(),
            arity,
            name: rest.to_owned(),
        });
    }
    Ok(spec)
}

/// The request and response texts of a `.srv`.
pub(crate) fn split_service(text: &str) -> Option<(String, String)> {
    let mut request = String::new();
    let mut lines = text.split_inclusive('\n');
    for line in lines.by_ref() {
        if line.trim() == "---" {
            return Some((request, lines.collect()));
        }
        request.push_str(line);
    }
    None
}

/// The full name of a field's message type written `ty` in package `pkg` (`Header` is std_msgs/Header).
pub(crate) fn qualify(ty: &str, pkg: &str) -> String {
    if ty.contains('/') {
        ty.to_owned()
    } else if ty == "Header" {
        "std_msgs/Header".to_owned()
    } else {
        format!("{pkg}/{ty}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_constants_arrays_and_comments_parse() {
        let s = parse(
            "# a comment\nHeader header # trailing\nuint8 OK=1 # c\nstring S=a # kept\nfloat64[36] covariance\n\
             geometry_msgs/Point[] points\n\n",
        )
        .unwrap();
        assert_eq!(s.fields.len(), 3);
        assert_eq!(s.fields[1].arity, Arity::Fixed(36));
        assert_eq!(s.fields[2].ty, "geometry_msgs/Point");
        assert_eq!(s.fields[2].arity, Arity::Variable);
        assert_eq!(s.constants[0].value, "1");
        assert_eq!(s.constants[1].value, "a # kept");
    }

    #[test]
    fn bad_lines_are_named() {
        let e = parse("float64 x\nfloat64\n").unwrap_err();
        assert!(e.starts_with("line 2:"), "{e}");
        assert!(parse("float64[x] a\n").unwrap_err().contains("array size"));
        assert!(parse("float64 a b\n").unwrap_err().contains("field name"));
        assert!(parse("Point P=1\n").unwrap_err().contains("constant"));
    }

    #[test]
    fn services_split_at_the_dashes() {
        let (q, a) = split_service("bool data\n---\nbool success\nstring message\n").unwrap();
        assert_eq!(q, "bool data\n");
        assert_eq!(a, "bool success\nstring message\n");
        assert!(split_service("bool data\n").is_none());
        assert_eq!(qualify("Header", "geometry_msgs"), "std_msgs/Header");
        assert_eq!(qualify("Point", "geometry_msgs"), "geometry_msgs/Point");
    }
}
