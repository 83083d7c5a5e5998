//! Run-time resolution of ROS 1 message and service types by name ([`Ros1Types`]): the definition text is taken
//! from the definitions built into the binary (`msg/` and thymio_rt_msgs, embedded by build.rs), else from the
//! package directories of `ROS_PACKAGE_PATH` and `THYMIO_RT_ROS1_MSG_PATH`; the md5sum and the connection header's
//! `message_definition` follow the ROS 1 rules (genmsg: md5 of the constants, then the built-in fields as written
//! and each message field as its type's md5sum; the definition is the text, then each dependency once, depth
//! first, after a line of 80 `=` and `MSG: pkg/Type`). Resolved types are cached.

use super::parse::{self, Arity, Primitive, Spec};
use super::TypeError;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

pub(crate) mod embedded {
    include!(concat!(env!("OUT_DIR"), "/ros1_embedded.rs"));
}

/// The environment variable naming extra package roots (colon-separated), searched after `ROS_PACKAGE_PATH`.
pub const MSG_PATH_VAR: &str = "THYMIO_RT_ROS1_MSG_PATH";

/// What a field holds.
#[derive(Debug, Clone)]
pub enum FieldKind {
    /// A built-in type.
    Primitive(Primitive),
    /// A message.
    Message(Arc<MessageType>),
}

/// A field of a message, in wire order.
#[derive(Debug, Clone)]
pub struct Field {
    /// Its name.
    pub name: String,
    /// What it holds.
    pub kind: FieldKind,
    /// How many.
    pub arity: Arity,
}

/// A ROS 1 message type resolved at run time: its name, md5sum, full definition and field layout; it encodes and
/// decodes JSON values ([`MessageType::encode`], [`MessageType::decode`]).
#[derive(Debug)]
pub struct MessageType {
    pub(crate) name: String,
    pub(crate) md5sum: String,
    pub(crate) definition: String,
    pub(crate) text: String,
    pub(crate) fields: Vec<Field>,
}

impl MessageType {
    /// `package/Type`.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The ROS 1 md5sum.
    pub fn md5sum(&self) -> &str {
        &self.md5sum
    }

    /// The full definition (the connection header's `message_definition`).
    pub fn definition(&self) -> &str {
        &self.definition
    }

    /// The fields, in wire order (constants are not fields).
    pub fn fields(&self) -> &[Field] {
        &self.fields
    }

    /// Whether this is std_msgs/Header (whose `seq` the ROS 2 shape has not).
    pub fn is_header(&self) -> bool {
        self.name == "std_msgs/Header"
    }

    /// What the transport needs to publish or subscribe this type.
    pub fn descriptor(&self) -> crate::net::RawDescriptor {
        crate::net::RawDescriptor {
            ros_type: self.name.clone(),
            md5sum: self.md5sum.clone(),
            definition: self.definition.clone(),
        }
    }

    /// The message types this one depends on, each once, depth first (genmsg's order).
    fn dependencies(&self, out: &mut Vec<Arc<MessageType>>) {
        for f in &self.fields {
            if let FieldKind::Message(m) = &f.kind {
                if !out.iter().any(|d| d.name == m.name) {
                    out.push(m.clone());
                }
                m.dependencies(out);
            }
        }
    }
}

/// A ROS 1 service type resolved at run time.
#[derive(Debug)]
pub struct ServiceType {
    pub(crate) name: String,
    pub(crate) md5sum: String,
    /// `package/NameRequest`.
    pub request: Arc<MessageType>,
    /// `package/NameResponse`.
    pub response: Arc<MessageType>,
}

impl ServiceType {
    /// `package/Name`.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The ROS 1 md5sum (of the request's and the response's md5 texts).
    pub fn md5sum(&self) -> &str {
        &self.md5sum
    }

    /// What the transport needs to serve this type.
    pub fn descriptor(&self) -> crate::net::RawServiceDescriptor {
        crate::net::RawServiceDescriptor {
            ros_type: self.name.clone(),
            md5sum: self.md5sum.clone(),
            request_type: self.request.name.clone(),
            response_type: self.response.name.clone(),
        }
    }
}

/// `pkg/Type`, `pkg/msg/Type` (`kind` "msg") or `pkg/srv/Type` (`kind` "srv") → (pkg, Type).
fn split_name<'a>(name: &'a str, kind: &str) -> Result<(&'a str, &'a str), TypeError> {
    let parts: Vec<&str> = name.split('/').collect();
    let ok = |p: &str| !p.is_empty() && p.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    match parts[..] {
        [pkg, ty] if ok(pkg) && ok(ty) => Ok((pkg, ty)),
        [pkg, k, ty] if k == kind && ok(pkg) && ok(ty) => Ok((pkg, ty)),
        _ => Err(TypeError::BadName {
            name: name.to_owned(),
            expected: if kind == "msg" {
                "package/msg/Type or package/Type"
            } else {
                "package/srv/Name or package/Name"
            },
        }),
    }
}

/// Resolves ROS 1 types by name at run time (see the module documentation). Shared freely (`Arc`).
#[derive(Debug)]
pub struct Ros1Types {
    paths: Vec<PathBuf>,
    messages: Mutex<HashMap<String, Arc<MessageType>>>,
    services: Mutex<HashMap<String, Arc<ServiceType>>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Ros1Types {
    /// The built-in definitions, then the package roots of `ROS_PACKAGE_PATH`, then those of
    /// `THYMIO_RT_ROS1_MSG_PATH` (both colon-separated; a root is a package directory or a directory of them).
    pub fn from_env() -> Ros1Types {
        Ros1Types::with_paths(search_paths(
            std::env::var_os("ROS_PACKAGE_PATH"),
            std::env::var_os(MSG_PATH_VAR),
        ))
    }

    /// The built-in definitions, then the package roots `paths` (in order).
    pub fn with_paths(paths: Vec<PathBuf>) -> Ros1Types {
        Ros1Types {
            paths,
            messages: Mutex::default(),
            services: Mutex::default(),
        }
    }

    /// The package roots searched after the built-in definitions.
    pub fn search_paths(&self) -> &[PathBuf] {
        &self.paths
    }

    /// The message type `name` (`pkg/msg/Type` or `pkg/Type`), with every type it depends on.
    pub fn message(&self, name: &str) -> Result<Arc<MessageType>, TypeError> {
        let (pkg, ty) = split_name(name, "msg")?;
        self.resolve(pkg, ty, &mut Vec::new())
    }

    /// The service type `name` (`pkg/srv/Name` or `pkg/Name`).
    pub fn service(&self, name: &str) -> Result<Arc<ServiceType>, TypeError> {
        let (pkg, ty) = split_name(name, "srv")?;
        let full = format!("{pkg}/{ty}");
        if let Some(s) = lock(&self.services).get(&full) {
            return Ok(s.clone());
        }
        let text = self.text(pkg, "srv", ty)?;
        let (request, response) = parse::split_service(&text).ok_or_else(|| TypeError::Parse {
            name: full.clone(),
            reason: "no `---` line between the request and the response".into(),
        })?;
        let mut stack = vec![full.clone()];
        let request = self.build(pkg, &format!("{ty}Request"), &request, &mut stack)?;
        let response = self.build(pkg, &format!("{ty}Response"), &response, &mut stack)?;
        let md5sum = format!(
            "{:x}",
            md5::compute(format!("{}{}", md5_text(&request)?, md5_text(&response)?))
        );
        let s = Arc::new(ServiceType {
            name: full.clone(),
            md5sum,
            request,
            response,
        });
        lock(&self.services).insert(full, s.clone());
        Ok(s)
    }

    fn resolve(
        &self,
        pkg: &str,
        ty: &str,
        stack: &mut Vec<String>,
    ) -> Result<Arc<MessageType>, TypeError> {
        let full = format!("{pkg}/{ty}");
        if let Some(m) = lock(&self.messages).get(&full) {
            return Ok(m.clone());
        }
        if stack.contains(&full) {
            return Err(TypeError::Recursive(format!(
                "{} → {full}",
                stack.join(" → ")
            )));
        }
        let text = self.text(pkg, "msg", ty)?;
        stack.push(full.clone());
        let m = self.build(pkg, ty, &text, stack);
        stack.pop();
        let m = m?;
        lock(&self.messages).insert(full, m.clone());
        Ok(m)
    }

    /// The message `pkg/ty` of definition `text` (its dependencies resolved).
    fn build(
        &self,
        pkg: &str,
        ty: &str,
        text: &str,
        stack: &mut Vec<String>,
    ) -> Result<Arc<MessageType>, TypeError> {
        let name = format!("{pkg}/{ty}");
        let spec: Spec = parse::parse(text).map_err(|reason| TypeError::Parse {
            name: name.clone(),
            reason,
        })?;
        let mut fields = Vec::with_capacity(spec.fields.len());
        for f in &spec.fields {
            let kind = match Primitive::from_name(&f.ty) {
                Some(p) => FieldKind::Primitive(p),
                None => {
                    let dep = parse::qualify(&f.ty, pkg);
                    let (dpkg, dty) = dep.split_once('/').unwrap_or((pkg, &dep));
                    let m = self
                        .resolve(dpkg, dty, stack)
                        .map_err(|e| TypeError::Field {
                            name: name.clone(),
                            field: f.name.clone(),
                            source: Box::new(e),
                        })?;
                    FieldKind::Message(m)
                }
            };
            fields.push(Field {
                name: f.name.clone(),
                kind,
                arity: f.arity,
            });
        }
        let mut m = MessageType {
            name,
            md5sum: String::new(),
            definition: String::new(),
            text: text.to_owned(),
            fields,
        };
        let md5_text = spec_md5_text(&spec, &m);
        m.md5sum = format!("{:x}", md5::compute(md5_text));
        m.definition = full_definition(&m);
        Ok(Arc::new(m))
    }

    /// The text of `pkg/kind/ty.kind`: built in, else from the first package root that has it.
    fn text(&self, pkg: &str, kind: &str, ty: &str) -> Result<String, TypeError> {
        if let Some((_, _, _, text)) = embedded::EMBEDDED
            .iter()
            .find(|(p, k, n, _)| *p == pkg && *k == kind && *n == ty)
        {
            return Ok((*text).to_owned());
        }
        let file = format!("{ty}.{kind}");
        for root in &self.paths {
            for dir in package_dirs(root, pkg) {
                let path = dir.join(kind).join(&file);
                if path.is_file() {
                    return std::fs::read_to_string(&path)
                        .map_err(|source| TypeError::Io { path, source });
                }
            }
        }
        Err(TypeError::Unknown {
            name: format!("{pkg}/{kind}/{ty}"),
            searched: self.paths.clone(),
        })
    }
}

/// The package roots of `ROS_PACKAGE_PATH` (`ros`), then of `THYMIO_RT_ROS1_MSG_PATH` (`extra`), empty entries
/// left out.
pub(crate) fn search_paths(
    ros: Option<std::ffi::OsString>,
    extra: Option<std::ffi::OsString>,
) -> Vec<PathBuf> {
    [ros, extra]
        .iter()
        .flatten()
        .flat_map(std::env::split_paths)
        .filter(|p| !p.as_os_str().is_empty())
        .collect()
}

/// Where package `pkg` may be under `root`: `root` itself, `root/pkg`, `root/*/pkg` (a workspace's `src/`).
fn package_dirs(root: &Path, pkg: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if root.file_name().is_some_and(|n| n == pkg) {
        out.push(root.to_path_buf());
    }
    out.push(root.join(pkg));
    if let Ok(entries) = std::fs::read_dir(root) {
        out.extend(
            entries
                .flatten()
                .map(|e| e.path().join(pkg))
                .filter(|p| p.is_dir()),
        );
    }
    out
}

/// The md5 text of `spec` (the fields resolved in `m`): constants, then fields (genmsg's rule), trailing
/// whitespace trimmed.
fn spec_md5_text(spec: &Spec, m: &MessageType) -> String {
    let mut out = String::new();
    for c in &spec.constants {
        out.push_str(&format!("{} {}={}\n", c.ty, c.name, c.value));
    }
    for (w, f) in spec.fields.iter().zip(&m.fields) {
        match &f.kind {
            FieldKind::Primitive(_) => {
                let suffix = match f.arity {
                    Arity::One => String::new(),
                    Arity::Fixed(n) => format!("[{n}]"),
                    Arity::Variable => "[]".into(),
                };
                out.push_str(&format!("{}{suffix} {}\n", w.ty, f.name));
            }
            FieldKind::Message(d) => out.push_str(&format!("{} {}\n", d.md5sum, f.name)),
        }
    }
    out.trim_end().to_owned()
}

/// The md5 text of a resolved message (for a service's md5sum).
fn md5_text(m: &MessageType) -> Result<String, TypeError> {
    let spec = parse::parse(&m.text).map_err(|reason| TypeError::Parse {
        name: m.name.clone(),
        reason,
    })?;
    Ok(spec_md5_text(&spec, m))
}

/// genmsg's full text: the definition, then each dependency (80 `=`, `MSG: pkg/Type`, its text), the last
/// newline removed.
fn full_definition(m: &MessageType) -> String {
    let mut deps = Vec::new();
    m.dependencies(&mut deps);
    let mut out = format!("{}\n", m.text);
    for d in deps {
        out.push_str(&"=".repeat(80));
        out.push_str(&format!("\nMSG: {}\n{}\n", d.name, d.text));
    }
    out.pop();
    out
}
