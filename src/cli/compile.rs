//! `thymio-rt compile`.

use super::{CliError, CliResult};

/// Arguments of `thymio-rt compile`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Entry point of `thymio-rt compile`.
pub fn main(_args: Args) -> CliResult {
    Err(CliError::new(
        "`compile` is not available in this build yet",
    ))
}
