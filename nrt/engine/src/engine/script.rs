//! Scripts to load: an `.aesl` file (or text) with constant overrides, compiled per node by
//! `crate::compiler` against the node's own description.

use super::script_file::{read_script_file, ScriptFileError};
use crate::network::{LoadedScript, Node};
use handoff::NodeId;
use nrt_compiler as compiler;
use std::collections::BTreeMap;

/// A script ready to be compiled for nodes.
#[derive(Debug, Clone, PartialEq)]
pub struct ScriptSource {
    /// File path (or a label for scripts sent as text).
    pub origin: String,
    /// The `.aesl` text.
    pub text: String,
    /// Constant overrides.
    pub constants: BTreeMap<String, i16>,
}

/// Why a script could not be loaded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScriptError {
    /// The file cannot be read (or is not a regular file of a script's size).
    #[error("cannot read script {path}: {error}")]
    Read {
        /// Path.
        path: String,
        /// Cause.
        #[source]
        error: ScriptFileError,
    },
    /// The `.aesl` file is malformed.
    #[error("{origin}: {message}")]
    Aesl {
        /// File.
        origin: String,
        /// What is wrong.
        message: String,
    },
    /// A compilation error, with its position.
    #[error("{origin}:{line}:{col}: {message}")]
    Compile {
        /// File.
        origin: String,
        /// 1-based line.
        line: u32,
        /// 1-based column.
        col: u32,
        /// Message.
        message: String,
    },
    /// The node is not described yet.
    #[error("node {0} is not described yet")]
    NotDescribed(NodeId),
}

impl ScriptSource {
    /// Reads an `.aesl` file here and now (regular files only, size-bounded, opened without
    /// blocking: see [`read_script_file`]). The loop of a running driver reads through
    /// [`super::ScriptReader`] instead and builds the source with [`Self::from_read`].
    pub fn from_file(
        path: &str,
        constants: &BTreeMap<String, i16>,
    ) -> Result<ScriptSource, ScriptError> {
        Self::from_read(path, read_script_file(path), constants)
    }

    /// The source from the outcome of reading `path`.
    pub fn from_read(
        path: &str,
        read: Result<String, ScriptFileError>,
        constants: &BTreeMap<String, i16>,
    ) -> Result<ScriptSource, ScriptError> {
        let text = read.map_err(|error| ScriptError::Read {
            path: path.to_owned(),
            error,
        })?;
        Ok(ScriptSource {
            origin: path.to_owned(),
            text,
            constants: constants.clone(),
        })
    }

    /// Compiles the script for `node`; `Ok(None)` if it has no code for the node's type.
    pub fn compile_for(&self, node: &Node) -> Result<Option<LoadedScript>, ScriptError> {
        let description = node
            .description
            .as_ref()
            .ok_or(ScriptError::NotDescribed(node.id))?;
        let mut aesl = compiler::parse_aesl(&self.text).map_err(|e| ScriptError::Aesl {
            origin: self.origin.clone(),
            message: e.message,
        })?;
        for (name, value) in &self.constants {
            aesl.set_constant(name, i32::from(*value));
        }
        let Some(code) = aesl.source_for(&description.name, node.id.0) else {
            return Ok(None);
        };
        let program = compiler::compile(&code.code, description, &aesl.events, &aesl.constants)
            .map_err(|e| ScriptError::Compile {
                origin: self.origin.clone(),
                line: e.line,
                col: e.col,
                message: e.message,
            })?;
        Ok(Some(LoadedScript {
            events: aesl
                .events
                .iter()
                .map(|e| (e.name.clone(), e.size))
                .collect(),
            variables: program.variables,
            constants: aesl
                .constants
                .iter()
                .map(|(n, v)| (n.clone(), *v as i16))
                .collect(),
            bytecode: program.bytecode,
            origin: self.origin.clone(),
        }))
    }
}
