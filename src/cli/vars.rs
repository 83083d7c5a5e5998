//! `thymio-rt vars get|set`.

use super::{CliError, CliResult};

/// `vars` subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Read a variable.
    Get {},
    /// Write a variable.
    Set {},
}

/// Entry point of `thymio-rt vars`.
pub fn main(_cmd: Command) -> CliResult {
    Err(CliError::new("`vars` is not available in this build yet"))
}
