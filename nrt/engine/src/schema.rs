//! One schema for every parameter of thymio-rt: the typed serde sections (`#[serde(default,
//! deny_unknown_fields)]`, defaults in their `Default`) are the only source of truth, and
//! everything else is derived from them by serde's own machinery:
//!
//! - the keys: the section's default serialized to a value tree ([`keys`], [`leaves`]): the
//!   YAML keys and the dotted ROS parameter names (`nodes.thymio.prefix`) are the same tree;
//! - a dotted override: built into that tree and deserialized back ([`set`], [`insert`]), so
//!   an unknown key or a bad value is refused by the same types that read the file;
//! - the key path of an error: tracked by `serde_path_to_error` while deserializing ([`parse`]);
//! - which parameters apply at run time: [`Section::LIVE`], beside the struct ([`is_live`]);
//! - what the types cannot say (ranges, relations): [`Section::validate`], run by [`parse`].

pub mod aliases;

use serde::de::DeserializeOwned;
use serde::Serialize;
use yaml_serde::{Mapping, Value};

/// A section of parameters (see the module documentation).
pub trait Section: Serialize + DeserializeOwned + Default {
    /// Dotted names, relative to the section, of the parameters applied at run time; each
    /// covers the keys below it (`motor` covers `motor.left.parameters`). Every other
    /// parameter is read at start only.
    const LIVE: &'static [&'static str] = &[];

    /// Checks what the types cannot express; the error names the key (relative to the
    /// section).
    fn validate(&self) -> Result<(), Invalid> {
        Ok(())
    }
}

/// A value the types accept but the parameter does not (out of range, inconsistent).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{key}: {value} {rule}")]
pub struct Invalid {
    /// Dotted key of the refused parameter.
    pub key: String,
    /// The refused value, as written.
    pub value: String,
    /// What the parameter needs.
    pub rule: String,
}

impl Invalid {
    /// `key` = `value` refused because it breaks `rule`.
    pub fn new(key: &str, value: impl std::fmt::Display, rule: impl Into<String>) -> Self {
        Invalid {
            key: key.to_owned(),
            value: value.to_string(),
            rule: rule.into(),
        }
    }

    /// The same error for a section placed under `prefix` (`switch`, `rt`).
    pub fn under(mut self, prefix: &str) -> Self {
        self.key = join(prefix, &self.key);
        self
    }
}

/// Errors of the schema: each names the key it is about and keeps its cause.
#[derive(Debug, thiserror::Error)]
pub enum SchemaError {
    /// A key no section knows.
    #[error("unknown configuration key `{0}`")]
    UnknownKey(String),
    /// A value serde refused (wrong type, unknown field below a known key).
    #[error("configuration key `{key}`: {source}")]
    Value {
        /// Dotted path of the value (the section's name for the section itself).
        key: String,
        /// Serde's error.
        #[source]
        source: yaml_serde::Error,
    },
    /// A section that is not a map.
    #[error("configuration: {source}")]
    Section {
        /// Serde's error.
        #[source]
        source: yaml_serde::Error,
    },
    /// A value refused by a section's validation.
    #[error("configuration key `{}`: {} {}", .0.key, .0.value, .0.rule)]
    Invalid(#[from] Invalid),
}

/// `prefix.key` (either may be empty).
pub fn join(prefix: &str, key: &str) -> String {
    match (prefix.is_empty(), key.is_empty()) {
        (true, _) => key.to_owned(),
        (_, true) => prefix.to_owned(),
        _ => format!("{prefix}.{key}"),
    }
}

/// `value` as a tree of nested maps (the YAML file's shape).
pub fn tree<T: Serialize>(value: &T) -> Result<Mapping, SchemaError> {
    match yaml_serde::to_value(value) {
        Ok(Value::Mapping(m)) => Ok(m),
        Ok(other) => Err(SchemaError::Section {
            source: serde::de::Error::custom(format!("not a map of parameters: {other:?}")),
        }),
        Err(source) => Err(SchemaError::Section { source }),
    }
}

/// The top-level keys of section `T` (from its default, so every field is there).
pub fn keys<T: Section>() -> Vec<String> {
    tree(&T::default())
        .map(|m| m.keys().filter_map(key_text).collect())
        .unwrap_or_default()
}

/// Every leaf of `tree` as a dotted name and its value, in key order: the ROS parameters. An
/// empty map has no leaf.
pub fn leaves(tree: &Mapping) -> Vec<(String, &Value)> {
    let mut out = Vec::new();
    leaves_into("", tree, &mut out);
    out
}

fn leaves_into<'a>(prefix: &str, map: &'a Mapping, out: &mut Vec<(String, &'a Value)>) {
    for (key, value) in map {
        let Some(key) = key_text(key) else { continue };
        let name = join(prefix, &key);
        match value {
            Value::Mapping(m) => leaves_into(&name, m, out),
            other => out.push((name, other)),
        }
    }
}

fn key_text(key: &Value) -> Option<String> {
    match key {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// Sets the dotted `name` in `root`, creating (or replacing by) maps on the way.
pub fn insert(root: &mut Mapping, name: &str, value: Value) -> Result<(), SchemaError> {
    let mut parts = name.split('.').peekable();
    let mut map = root;
    while let Some(part) = parts.next() {
        if part.is_empty() {
            return Err(SchemaError::UnknownKey(name.to_owned()));
        }
        let key = Value::String(part.to_owned());
        if parts.peek().is_none() {
            map.insert(key, value);
            return Ok(());
        }
        let entry = map
            .entry(key)
            .or_insert_with(|| Value::Mapping(Mapping::new()));
        if !entry.is_mapping() {
            *entry = Value::Mapping(Mapping::new());
        }
        let Some(next) = entry.as_mapping_mut() else {
            return Err(SchemaError::UnknownKey(name.to_owned()));
        };
        map = next;
    }
    Ok(())
}

/// Reads section `T` placed under `prefix` ("" for the top level) from `value` (null: the
/// defaults) and validates it; an error names the key (`rt.period_us`, `nodes.a`).
pub fn parse<T: Section>(prefix: &str, value: Value) -> Result<T, SchemaError> {
    let value = if value.is_null() {
        Value::Mapping(Mapping::new())
    } else {
        value
    };
    let section: T = serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        let path = if path == "." { String::new() } else { path };
        let key = join(prefix, &path);
        let source = e.into_inner();
        if key.is_empty() {
            SchemaError::Section { source }
        } else {
            SchemaError::Value { key, source }
        }
    })?;
    section.validate().map_err(|e| e.under(prefix))?;
    Ok(section)
}

/// `current` with the dotted parameter `name` (relative to the section) set to `value`,
/// checked as the file would be.
pub fn set<T: Section>(current: &T, name: &str, value: Value) -> Result<T, SchemaError> {
    let mut m = tree(current)?;
    insert(&mut m, name, value)?;
    parse("", Value::Mapping(m))
}

/// Whether the dotted parameter `name` (relative to section `T`) applies at run time.
pub fn is_live<T: Section>(name: &str) -> bool {
    T::LIVE.iter().any(|live| {
        name.strip_prefix(live)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('.'))
    })
}

pub mod ranges;

#[cfg(test)]
mod tests;
