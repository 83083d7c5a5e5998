//! The parameter names asebaros and ROS-Thymio use, on ROS 1 and ROS 2, where they differ from ours: one table
//! ([`FOREIGN`]) read by every path that takes a parameter name (the YAML file, ROS 2's `-p`, parameter files and
//! parameter services, ROS 1's parameter server and `_param:=` arguments), so that a launch file of either project
//! starts the driver with the meaning it gives its parameters. Every other unknown name stays an error naming it.
//!
//! Names are dotted (ROS 1's `/` nesting is converted before); a `*` in a pattern is one name part (a node class).
//! The contextual rename of asebaros' older node-class scheme (`type` the node type, `name` the namespace) is in
//! [`canonical_tree`] and [`canonical_entries`].

use yaml_serde::{Mapping, Value};

/// What a foreign parameter name is to thymio-rt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Foreign {
    /// The same parameter under our name (`*` stands for the pattern's part).
    Alias(&'static str),
    /// A parameter without meaning here: accepted, logged with this reason, and ignored.
    Ignored(&'static str),
}

/// Every foreign name, with what it is to thymio-rt (see docs/configuration.md).
pub const FOREIGN: &[(&str, Foreign)] = &[
    // asebaros' ROS 1 code and every launch file (ROS 1 and ROS 2); its ROS 2 code reads the other name
    (
        "reload_script_on_reconnect",
        Foreign::Alias("script.reload_on_reconnect"),
    ),
    // an older asebaros ROS 2 version and some documentation examples: `type` is the node type
    ("nodes.*.type", Foreign::Alias("nodes.*.name")),
    // diff_drive_controller's names of ROS-Thymio's frame parameters (a Nav2 parameter file written for it)
    ("odom_frame_id", Foreign::Alias("odom_frame")),
    ("base_frame_id", Foreign::Alias("robot_frame")),
    // ROS-Thymio's driver parameters that thymio-rt has no use for
    (
        "launch_model",
        Foreign::Ignored(
            "thymio-rt publishes the robot model itself (`publish_model`): no model launch file is started",
        ),
    ),
    (
        "script",
        Foreign::Ignored(
            "the driver's fallback script; thymio-rt loads the script of `script.path` on every accepted node",
        ),
    ),
];

/// What a dotted parameter name is: ours, a foreign one under our name, or one to ignore.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resolved {
    /// Our name (or unknown: the schema says which).
    Ours(String),
    /// A foreign name: our name for it.
    Alias {
        /// Our name.
        ours: String,
    },
    /// A foreign name without meaning here, and why.
    Ignored(&'static str),
}

/// What the dotted `name` is (see [`FOREIGN`]).
pub fn resolve(name: &str) -> Resolved {
    let parts: Vec<&str> = name.split('.').collect();
    for (pattern, foreign) in FOREIGN {
        let p: Vec<&str> = pattern.split('.').collect();
        if p.len() != parts.len() || !p.iter().zip(&parts).all(|(a, b)| *a == "*" || a == b) {
            continue;
        }
        return match foreign {
            Foreign::Ignored(why) => Resolved::Ignored(why),
            Foreign::Alias(ours) => {
                // the pattern's `*` parts in their places
                let mut wild = p.iter().zip(&parts).filter(|(a, _)| **a == "*");
                let ours = ours
                    .split('.')
                    .map(|o| {
                        if o == "*" {
                            wild.next().map_or(o, |(_, n)| n)
                        } else {
                            o
                        }
                    })
                    .collect::<Vec<_>>()
                    .join(".");
                Resolved::Alias { ours }
            }
        };
    }
    Resolved::Ours(name.to_owned())
}

/// Our name for the dotted `name` (itself when it is ours or ignored).
pub fn canonical_name(name: &str) -> String {
    match resolve(name) {
        Resolved::Alias { ours } => ours,
        Resolved::Ours(n) => n,
        Resolved::Ignored(_) => name.to_owned(),
    }
}

/// What was done to a foreign name, for the log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Note {
    /// `from` was read as `to`.
    Renamed {
        /// The foreign name.
        from: String,
        /// Ours.
        to: String,
    },
    /// `name` was ignored, for this reason.
    Ignored {
        /// The foreign name.
        name: String,
        /// Why.
        why: &'static str,
    },
}

impl Note {
    /// Logs the note (info: a foreign name is expected from asebaros' and ROS-Thymio's launch files).
    pub fn log(&self) {
        match self {
            Note::Renamed { from, to } => {
                tracing::info!("parameter {from} (asebaros', ROS-Thymio's or diff_drive_controller's name) is read as {to}")
            }
            Note::Ignored { name, why } => {
                tracing::info!(
                    "parameter {name} (ROS-Thymio's) is not used by thymio-rt: {why}; ignored"
                )
            }
        }
    }
}

/// Dotted configuration entries (ROS parameters) with foreign names given ours, ignored ones left out, and what was
/// done. In a node class that has a `type` (asebaros' older scheme), `name` is the namespace.
pub fn canonical_entries(entries: &[(String, Value)]) -> (Vec<(String, Value)>, Vec<Note>) {
    let old_scheme: Vec<&str> = entries
        .iter()
        .filter_map(|(n, _)| n.strip_prefix("nodes.")?.strip_suffix(".type"))
        .filter(|class| !class.contains('.'))
        .collect();
    let mut out = Vec::new();
    let mut notes = Vec::new();
    for (name, value) in entries {
        let class_name = name
            .strip_prefix("nodes.")
            .and_then(|r| r.strip_suffix(".name"))
            .filter(|class| old_scheme.contains(class));
        if let Some(class) = class_name {
            let to = format!("nodes.{class}.namespace");
            notes.push(Note::Renamed {
                from: name.clone(),
                to: to.clone(),
            });
            out.push((to, value.clone()));
            continue;
        }
        match resolve(name) {
            Resolved::Ours(n) => out.push((n, value.clone())),
            Resolved::Alias { ours } => {
                notes.push(Note::Renamed {
                    from: name.clone(),
                    to: ours.clone(),
                });
                out.push((ours, value.clone()));
            }
            Resolved::Ignored(why) => notes.push(Note::Ignored {
                name: name.clone(),
                why,
            }),
        }
    }
    (out, notes)
}

/// The nested configuration `root` (the YAML file's shape) with foreign names given ours and ignored ones left
/// out, and what was done. Only leaves are foreign names: a map under a foreign name is left for the schema to
/// refuse. Our name wins over an alias given beside it.
pub fn canonical_tree(root: Mapping) -> (Mapping, Vec<Note>) {
    let mut notes = Vec::new();
    let mut root = root;
    // asebaros' older node-class scheme, in place: `type` the node type, `name` the namespace
    if let Some(Value::Mapping(classes)) = root.get_mut("nodes") {
        for (class, body) in classes.iter_mut() {
            let (Some(class), Value::Mapping(body)) = (class.as_str(), body) else {
                continue;
            };
            let Some(t) = body.remove("type") else {
                continue;
            };
            if let Some(ns) = body.remove("name") {
                notes.push(Note::Renamed {
                    from: format!("nodes.{class}.name"),
                    to: format!("nodes.{class}.namespace"),
                });
                body.entry("namespace".into()).or_insert(ns);
            }
            notes.push(Note::Renamed {
                from: format!("nodes.{class}.type"),
                to: format!("nodes.{class}.name"),
            });
            body.insert("name".into(), t);
        }
    }
    let mut moved = Vec::new();
    collect_foreign("", &mut root, &mut moved, &mut notes);
    for (ours, value) in moved {
        let mut at = &mut root;
        let mut parts = ours.split('.').peekable();
        while let Some(part) = parts.next() {
            if parts.peek().is_none() {
                at.entry(part.into()).or_insert(value);
                break;
            }
            let next = at
                .entry(part.into())
                .or_insert_with(|| Value::Mapping(Mapping::new()));
            let Value::Mapping(m) = next else { break };
            at = m;
        }
    }
    (root, notes)
}

/// Removes the foreign leaves below `map` (at dotted `prefix`), collecting the renamed ones as (our name, value).
fn collect_foreign(
    prefix: &str,
    map: &mut Mapping,
    moved: &mut Vec<(String, Value)>,
    notes: &mut Vec<Note>,
) {
    let keys: Vec<String> = map
        .keys()
        .filter_map(|k| k.as_str().map(str::to_owned))
        .collect();
    for key in keys {
        let name = super::join(prefix, &key);
        if let Some(Value::Mapping(inner)) = map.get_mut(key.as_str()) {
            collect_foreign(&name, inner, moved, notes);
            continue;
        }
        match resolve(&name) {
            Resolved::Ours(_) => {}
            Resolved::Alias { ours } => {
                if let Some(v) = map.remove(key.as_str()) {
                    notes.push(Note::Renamed {
                        from: name,
                        to: ours.clone(),
                    });
                    moved.push((ours, v));
                }
            }
            Resolved::Ignored(why) => {
                map.remove(key.as_str());
                notes.push(Note::Ignored { name, why });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn foreign_names_resolve_to_ours_with_their_class() {
        assert_eq!(
            resolve("reload_script_on_reconnect"),
            Resolved::Alias {
                ours: "script.reload_on_reconnect".into()
            }
        );
        assert_eq!(
            resolve("nodes.red.type"),
            Resolved::Alias {
                ours: "nodes.red.name".into()
            }
        );
        assert!(matches!(resolve("launch_model"), Resolved::Ignored(_)));
        assert_eq!(canonical_name("odom_frame_id"), "odom_frame");
        assert_eq!(canonical_name("base_frame_id"), "robot_frame");
        // only the names of the table: ours and unknown ones go to the schema as they are
        for n in [
            "script.path",
            "nodes.red.name",
            "type",
            "nodes.type",
            "launch_model.x",
        ] {
            assert_eq!(resolve(n), Resolved::Ours(n.into()), "{n}");
        }
    }

    #[test]
    fn ros_thymio_unused_names_are_the_ignored_ones() {
        for n in crate::thymio::params::ROS_THYMIO_UNUSED {
            assert!(matches!(resolve(n), Resolved::Ignored(_)), "{n}");
        }
    }

    #[test]
    fn entries_of_the_older_class_scheme() {
        let (out, notes) = canonical_entries(&[
            ("nodes.a.type".into(), Value::from("thymio-II")),
            ("nodes.a.name".into(), Value::from("red")),
            ("nodes.b.name".into(), Value::from("e-puck0")),
            ("launch_model".into(), Value::from("")),
        ]);
        let names: Vec<&str> = out.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["nodes.a.name", "nodes.a.namespace", "nodes.b.name"]);
        assert_eq!(out[0].1, Value::from("thymio-II"));
        assert_eq!(notes.len(), 3);
    }
}
