//! `thymio-rt nodes`.

use super::{CliError, CliResult};

/// Arguments of `thymio-rt nodes`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Entry point of `thymio-rt nodes`.
pub fn main(_args: Args) -> CliResult {
    Err(CliError::new("`nodes` is not available in this build yet"))
}
