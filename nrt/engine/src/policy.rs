//! Node acceptance policy: asebaros' `nodes` semantics (ros-aseba-interface.md §2.2).
//!
//! Each attribute is resolved on its own, over the classes that set it: for a node of type
//! `name` and id `id`, if some class of that type sets the attribute, the lookup is
//! (name, id) → (name, any id) → built-in default; otherwise ("", id) → ("", any id) →
//! built-in default.

use crate::params::NodeClass;
use handoff::NodeId;
use std::collections::BTreeMap;

/// One attribute: value per (type name, id), -1 = any id.
#[derive(Debug, Clone)]
struct Attribute<T> {
    values: BTreeMap<String, BTreeMap<i32, T>>,
    default: T,
}

impl<T: Clone> Attribute<T> {
    fn new(default: T) -> Self {
        Self {
            values: BTreeMap::new(),
            default,
        }
    }

    fn set(&mut self, name: &str, id: i32, value: Option<T>) {
        if let Some(v) = value {
            self.values
                .entry(name.to_owned())
                .or_default()
                .insert(id, v);
        }
    }

    fn get(&self, name: &str, id: i32) -> T {
        match self.values.get(name) {
            None if name.is_empty() => self.default.clone(),
            None => self.get("", id),
            Some(ids) => ids
                .get(&id)
                .or_else(|| ids.get(&-1))
                .cloned()
                .unwrap_or_else(|| self.default.clone()),
        }
    }
}

/// What the policy decided for one node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeSettings {
    /// Bridge the node.
    pub accept: bool,
    /// ROS namespace ("" for none).
    pub namespace: String,
    /// Variable holding the node id ("" for none).
    pub id_variable: String,
    /// Prepend the node id to ROS→Aseba events.
    pub include_id_in_events: bool,
}

/// Why a node is not bridged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Rejection {
    /// A node with the same id is already bridged.
    #[error("a node with this id is already bridged")]
    Duplicate,
    /// The configuration does not accept it.
    #[error("not accepted by the `nodes` configuration")]
    NotAccepted,
    /// `maximal_number` reached (for its type or for any type).
    #[error("maximal number of nodes reached")]
    MaximalNumber,
}

/// The resolved `nodes` configuration.
#[derive(Debug, Clone)]
pub struct NodesPolicy {
    accept: Attribute<bool>,
    maximal_number: Attribute<i32>,
    namespace: Attribute<String>,
    prefix: Attribute<String>,
    id_variable: Attribute<String>,
    include_id_in_events: Attribute<bool>,
}

impl Default for NodesPolicy {
    fn default() -> Self {
        Self::new(&BTreeMap::new())
    }
}

impl NodesPolicy {
    /// Builds the policy from the `nodes.*` classes.
    pub fn new(classes: &BTreeMap<String, NodeClass>) -> Self {
        Self::with_defaults(classes, false, -1)
    }

    /// Builds the policy from the bridge parameters: the `nodes.*` classes over the top-level
    /// `include_id_in_events` and `maximal_number_of_nodes` (an older asebaros' names: what no class decides).
    pub fn from_params(params: &crate::params::BridgeParams) -> Self {
        Self::with_defaults(
            &params.nodes,
            params.include_id_in_events,
            params.maximal_number_of_nodes,
        )
    }

    fn with_defaults(
        classes: &BTreeMap<String, NodeClass>,
        include_id_in_events: bool,
        maximal_number: i32,
    ) -> Self {
        let mut p = NodesPolicy {
            accept: Attribute::new(true),
            maximal_number: Attribute::new(maximal_number),
            namespace: Attribute::new(String::new()),
            prefix: Attribute::new(String::new()),
            id_variable: Attribute::new(String::new()),
            include_id_in_events: Attribute::new(include_id_in_events),
        };
        for c in classes.values() {
            let (n, id) = (c.name.as_str(), c.id);
            p.accept.set(n, id, c.accept);
            p.maximal_number.set(n, id, c.maximal_number);
            p.namespace.set(n, id, c.namespace.clone());
            p.prefix.set(n, id, c.prefix.clone());
            p.id_variable.set(n, id, c.id_variable.clone());
            p.include_id_in_events.set(n, id, c.include_id_in_events);
        }
        p
    }

    /// Settings of a node of type `name` and id `id`.
    pub fn settings(&self, name: &str, id: NodeId) -> NodeSettings {
        let id = i32::from(id.0);
        let namespace = {
            let ns = self.namespace.get(name, id);
            if !ns.is_empty() {
                ns
            } else {
                let prefix = self.prefix.get(name, id);
                if prefix.is_empty() {
                    String::new()
                } else {
                    format!("{prefix}{id}")
                }
            }
        };
        NodeSettings {
            accept: self.accept.get(name, id),
            namespace,
            id_variable: self.id_variable.get(name, id),
            include_id_in_events: self.include_id_in_events.get(name, id),
        }
    }

    /// Decides whether to bridge a new node, given the types of the nodes already bridged
    /// (`bridged` yields `(id, type name)`).
    pub fn decide<'a>(
        &self,
        name: &str,
        id: NodeId,
        bridged: impl Iterator<Item = (NodeId, &'a str)> + Clone,
    ) -> Result<NodeSettings, Rejection> {
        if bridged.clone().any(|(i, _)| i == id) {
            return Err(Rejection::Duplicate);
        }
        let settings = self.settings(name, id);
        if !settings.accept {
            return Err(Rejection::NotAccepted);
        }
        for t in [name, ""] {
            let max = self.maximal_number.get(t, i32::from(id.0));
            let count = bridged
                .clone()
                .filter(|(_, n)| t.is_empty() || *n == t)
                .count();
            if max > 0 && max as usize <= count {
                return Err(Rejection::MaximalNumber);
            }
        }
        Ok(settings)
    }
}

#[cfg(test)]
mod tests;
