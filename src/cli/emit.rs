//! `thymio-rt emit`.

use super::{CliError, CliResult};

/// Arguments of `thymio-rt emit`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Entry point of `thymio-rt emit`.
pub fn main(_args: Args) -> CliResult {
    Err(CliError::new("`emit` is not available in this build yet"))
}
