//! `thymio-rt run`.

use super::{CliError, CliResult};

/// Arguments of `thymio-rt run`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Entry point of `thymio-rt run`.
pub fn main(_args: Args) -> CliResult {
    Err(CliError::new("`run` is not available in this build yet"))
}
