//! `aseba/load_script` (asebaros): the request's file, compiled with the request's constants, loaded on the nodes
//! it names (every node when none), as the default script on request; and what the caller is told. The service
//! has no error field: ROS 2 answers empty and reports the outcome on `/rosout`; ROS 1 reports it the same way and
//! also fails the call when the script was refused (rospy's `ServiceException` carries the same text).

use crate::report::Severity;
use handoff::NodeId;
use nrt_engine::engine::{Engine, ScriptFileError, ScriptSource};
use std::collections::BTreeMap;
use std::fmt::Display;

/// `asebaros_msgs/LoadScript` request.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LoadScriptRequest {
    /// The `.aesl` file (or a built-in script's name).
    pub file_name: String,
    /// Constants set over the file's.
    pub constants: Vec<(String, i16)>,
    /// The nodes to load it on (none: every node the file has code for).
    pub node_ids: Vec<u16>,
    /// Load it again when the nodes come back, and as `script.path`.
    pub set_as_default: bool,
}

impl LoadScriptRequest {
    /// The request's constants by name (the last of a repeated name wins).
    pub fn constants(&self) -> BTreeMap<String, i16> {
        self.constants.iter().cloned().collect()
    }
}

/// What came of a `load_script` call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoadScriptOutcome {
    /// Loaded on these nodes.
    Loaded {
        /// The request's file.
        file: String,
        /// Where.
        nodes: Vec<NodeId>,
    },
    /// The file has code for none of the nodes asked (or present): nothing loaded, nothing wrong with the file.
    NoNode {
        /// The request's file.
        file: String,
    },
    /// Not loaded: why (the file could not be read, did not compile, a node refused it).
    Refused(String),
}

impl LoadScriptOutcome {
    /// The file of a request could not even be handed to the reader.
    pub fn unreadable(file: &str, e: impl Display) -> LoadScriptOutcome {
        LoadScriptOutcome::Refused(format!("load_script: cannot read {file}: {e}"))
    }

    /// How it is reported.
    pub fn severity(&self) -> Severity {
        match self {
            LoadScriptOutcome::Loaded { .. } => Severity::Info,
            LoadScriptOutcome::NoNode { .. } => Severity::Warn,
            LoadScriptOutcome::Refused(_) => Severity::Error,
        }
    }

    /// The line reported.
    pub fn text(&self) -> String {
        match self {
            LoadScriptOutcome::Loaded { file, nodes } => format!(
                "load_script: {file} loaded on nodes {:?}",
                nodes.iter().map(|n| n.0).collect::<Vec<_>>()
            ),
            LoadScriptOutcome::NoNode { file } => {
                format!("load_script: {file} has code for none of the nodes")
            }
            LoadScriptOutcome::Refused(why) => why.clone(),
        }
    }

    /// Whether the script was refused (a ROS 1 call then fails with [`Self::text`]).
    pub fn is_refused(&self) -> bool {
        matches!(self, LoadScriptOutcome::Refused(_))
    }
}

/// Serves a `load_script` request whose file read gave `text`.
pub fn load_script(
    engine: &mut Engine,
    req: &LoadScriptRequest,
    text: Result<String, ScriptFileError>,
) -> LoadScriptOutcome {
    let file = &req.file_name;
    let source = match ScriptSource::from_read(file, text, &req.constants()) {
        Ok(s) => s,
        Err(e) => return LoadScriptOutcome::Refused(format!("load_script: {e}")),
    };
    let nodes: Vec<NodeId> = req.node_ids.iter().copied().map(NodeId).collect();
    match engine.load_script(source, &nodes, req.set_as_default) {
        Ok(loaded) if loaded.is_empty() => LoadScriptOutcome::NoNode { file: file.clone() },
        Ok(nodes) => LoadScriptOutcome::Loaded {
            file: file.clone(),
            nodes,
        },
        Err(e) => LoadScriptOutcome::Refused(format!("load_script: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcomes_are_reported_with_their_severity() {
        let loaded = LoadScriptOutcome::Loaded {
            file: "a.aesl".into(),
            nodes: vec![NodeId(1), NodeId(3)],
        };
        assert_eq!(loaded.severity(), Severity::Info);
        assert_eq!(loaded.text(), "load_script: a.aesl loaded on nodes [1, 3]");
        assert!(!loaded.is_refused());
        // nothing failed: a warning, the call succeeds (ROS 2's behaviour, ROS 1's since)
        let none = LoadScriptOutcome::NoNode {
            file: "a.aesl".into(),
        };
        assert_eq!(none.severity(), Severity::Warn);
        assert_eq!(
            none.text(),
            "load_script: a.aesl has code for none of the nodes"
        );
        assert!(!none.is_refused());
        let unreadable = LoadScriptOutcome::unreadable("a.aesl", "busy");
        assert_eq!(unreadable.severity(), Severity::Error);
        assert_eq!(unreadable.text(), "load_script: cannot read a.aesl: busy");
        assert!(unreadable.is_refused());
        let req = LoadScriptRequest {
            constants: vec![("A".into(), 1), ("B".into(), 2), ("A".into(), 3)],
            ..Default::default()
        };
        assert_eq!(req.constants(), [("A".into(), 3), ("B".into(), 2)].into());
    }
}
