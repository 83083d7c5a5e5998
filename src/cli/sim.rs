//! `thymio-rt sim`.

use super::{CliError, CliResult};

/// Arguments of `thymio-rt sim`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Entry point of `thymio-rt sim`.
pub fn main(_args: Args) -> CliResult {
    Err(CliError::new("`sim` is not available in this build yet"))
}
