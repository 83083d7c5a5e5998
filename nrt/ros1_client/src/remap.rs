//! ROS 1 remapping arguments (`from:=to`, roslaunch's `<remap from=… to=…/>`), with ROS's own semantics (ROS wiki
//! "Names", roscpp's `ros::names`): both sides are resolved first — a global name (`/a/b`) as it is, a relative one
//! (`a/b`) in the node's namespace, a private one (`~a`) under the node's name — and a name the node uses is
//! remapped when its resolved form is a resolved `from`; the result is not remapped again.
//!
//! The node's names are global by the time they reach the graph ([`super::graph::global`]), so the table maps global
//! names to global names; [`super::graph::Graph`] applies it to every topic and service it registers ([`apply`]).
//! The table is the process's, as roscpp's and rospy's (command-line remappings belong to the process): set once by
//! [`install`] when the node is made.

use std::borrow::Cow;
use std::sync::{Arc, RwLock};

/// A remapping that cannot be honoured.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RemapError {
    /// One side is not a ROS name.
    #[error(
        "remapping {from}:={to}: '{name}' is not a ROS name (letters, digits, '_' and '/', starting with a \
         letter, '/' or '~')"
    )]
    Name {
        /// The left side as given.
        from: String,
        /// The right side as given.
        to: String,
        /// The side at fault.
        name: String,
    },
}

/// Whether `name` is a ROS 1 name as roscpp validates it: not empty; first character a letter, `/` or `~`; the
/// others letters, digits, `_` or `/`.
pub fn is_name(name: &str) -> bool {
    let mut chars = name.chars();
    let Some(first) = chars.next() else {
        return false;
    };
    (first.is_ascii_alphabetic() || first == '/' || first == '~')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '/')
}

/// `name` with repeated `/` collapsed and no trailing `/` (but `/` itself).
fn canonical(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 1);
    for part in name.split('/').filter(|p| !p.is_empty()) {
        out.push('/');
        out.push_str(part);
    }
    if out.is_empty() {
        out.push('/');
    }
    out
}

/// Resolves `name` as ROS 1 does for a node whose global name is `node` (e.g. `/lab/asebaros`), in `namespace`
/// (e.g. `/lab`, `""` or `/` for the root): `/a` stays, `~a` is `node/a`, `a` is `namespace/a`.
pub fn resolve(name: &str, namespace: &str, node: &str) -> String {
    if name.starts_with('/') {
        canonical(name)
    } else if let Some(private) = name.strip_prefix('~') {
        canonical(&format!("{node}/{private}"))
    } else {
        canonical(&format!("{namespace}/{name}"))
    }
}

/// The remappings of a node: resolved `from` → resolved `to`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Remaps {
    pairs: Vec<(String, String)>,
}

impl Remaps {
    /// Resolves the remappings `pairs` (`from`, `to` as given) for the node `node` in `namespace` (see
    /// [`resolve`]); a later remapping of the same name wins, as in roscpp.
    pub fn new(
        pairs: &[(String, String)],
        namespace: &str,
        node: &str,
    ) -> Result<Remaps, RemapError> {
        let mut out = Remaps::default();
        for (from, to) in pairs {
            for name in [from, to] {
                if !is_name(name) || name[1..].contains('~') {
                    return Err(RemapError::Name {
                        from: from.clone(),
                        to: to.clone(),
                        name: name.clone(),
                    });
                }
            }
            let from = resolve(from, namespace, node);
            let to = resolve(to, namespace, node);
            out.pairs.retain(|(f, _)| *f != from);
            out.pairs.push((from, to));
        }
        Ok(out)
    }

    /// The name the node uses for the global name `name`: its remapping, or `name` itself.
    pub fn apply<'a>(&self, name: &'a str) -> Cow<'a, str> {
        match self.pairs.iter().find(|(from, _)| from == name) {
            Some((_, to)) => Cow::Owned(to.clone()),
            None => Cow::Borrowed(name),
        }
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }

    /// The resolved pairs, `from` → `to`.
    pub fn pairs(&self) -> &[(String, String)] {
        &self.pairs
    }
}

/// The process's remappings.
static INSTALLED: RwLock<Option<Arc<Remaps>>> = RwLock::new(None);

/// Makes `remaps` the process's remappings (those of the node being made).
pub fn install(remaps: Remaps) {
    let mut slot = INSTALLED.write().unwrap_or_else(|e| e.into_inner());
    *slot = Some(Arc::new(remaps));
}

/// The name the node registers for the global name `name` (the process's remappings applied).
pub fn apply(name: &str) -> Cow<'_, str> {
    let slot = INSTALLED.read().unwrap_or_else(|e| e.into_inner());
    match slot.as_deref() {
        Some(r) => match r.apply(name) {
            Cow::Owned(s) => Cow::Owned(s),
            Cow::Borrowed(_) => Cow::Borrowed(name),
        },
        None => Cow::Borrowed(name),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(p: &[(&str, &str)]) -> Vec<(String, String)> {
        p.iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    }

    #[test]
    fn names_resolve_as_the_ros_wiki_says() {
        // the wiki's table: node /wg/node1
        assert_eq!(resolve("bar", "/wg", "/wg/node1"), "/wg/bar");
        assert_eq!(resolve("/bar", "/wg", "/wg/node1"), "/bar");
        assert_eq!(resolve("~bar", "/wg", "/wg/node1"), "/wg/node1/bar");
        // node /node3 in the root namespace
        assert_eq!(resolve("bar", "", "/node3"), "/bar");
        assert_eq!(resolve("bar", "/", "/node3"), "/bar");
        assert_eq!(resolve("~bar", "/", "/node3"), "/node3/bar");
        // nested relative names, and slashes canonicalised
        assert_eq!(resolve("a/b/", "/ns/", "/ns/n"), "/ns/a/b");
        assert_eq!(resolve("//x", "/ns", "/ns/n"), "/x");
    }

    #[test]
    fn both_sides_are_resolved_before_matching() {
        let r = Remaps::new(
            &pairs(&[
                ("cmd_vel", "teleop/cmd_vel"),
                ("/tf", "tf_robot"),
                ("~set_parameters", "/reconf"),
                ("odom", "/global_odom"),
            ]),
            "/thymio",
            "/thymio/asebaros",
        )
        .unwrap();
        assert_eq!(r.apply("/thymio/cmd_vel"), "/thymio/teleop/cmd_vel");
        assert_eq!(r.apply("/tf"), "/thymio/tf_robot");
        assert_eq!(r.apply("/thymio/asebaros/set_parameters"), "/reconf");
        assert_eq!(r.apply("/thymio/odom"), "/global_odom");
        // a name that resolves otherwise is left alone (a relative `from` is the namespace's, not any)
        assert_eq!(r.apply("/cmd_vel"), "/cmd_vel");
        assert_eq!(r.apply("/thymio/robot2/cmd_vel"), "/thymio/robot2/cmd_vel");
        // the target is not remapped again
        let chain = Remaps::new(&pairs(&[("a", "b"), ("b", "c")]), "", "/n").unwrap();
        assert_eq!(chain.apply("/a"), "/b");
        assert_eq!(chain.apply("/b"), "/c");
    }

    #[test]
    fn the_last_remapping_of_a_name_wins() {
        let r = Remaps::new(&pairs(&[("x", "y"), ("/ns/x", "z")]), "/ns", "/ns/n").unwrap();
        assert_eq!(r.pairs().len(), 1);
        assert_eq!(r.apply("/ns/x"), "/ns/z");
    }

    #[test]
    fn sides_that_are_not_ros_names_are_refused_naming_them() {
        for (from, to, bad) in [
            ("cmd vel", "x", "cmd vel"),
            ("x", "", ""),
            ("1x", "y", "1x"),
            ("x", "a~b", "a~b"),
            ("x", "y-z", "y-z"),
        ] {
            let e = Remaps::new(&pairs(&[(from, to)]), "", "/n").unwrap_err();
            assert_eq!(
                e,
                RemapError::Name {
                    from: from.into(),
                    to: to.into(),
                    name: bad.into()
                }
            );
            assert!(e.to_string().contains(&format!("'{bad}'")), "{e}");
        }
    }

    #[test]
    fn without_remappings_names_are_borrowed_unchanged() {
        let r = Remaps::default();
        assert!(r.is_empty());
        assert!(matches!(r.apply("/odom"), Cow::Borrowed("/odom")));
    }
}
