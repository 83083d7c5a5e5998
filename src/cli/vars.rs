//! `thymio-rt vars get|set`: read or write a node's variable by name.

use super::common::{read_variable, tool_runtime, wait_for_nodes, TargetArgs};
use super::{print_out, CliError, CliResult};
use handoff::NodeId;

/// `vars` subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Read a variable; prints its values separated by spaces.
    Get {
        #[command(flatten)]
        target: TargetArgs,
        /// Node id.
        #[arg(long, value_parser = clap::builder::TypedValueParser::map(clap::value_parser!(u16), NodeId))]
        node: NodeId,
        /// Variable name.
        name: String,
    },
    /// Write a variable (exactly as many values as its size).
    Set {
        #[command(flatten)]
        target: TargetArgs,
        /// Node id.
        #[arg(long, value_parser = clap::builder::TypedValueParser::map(clap::value_parser!(u16), NodeId))]
        node: NodeId,
        /// Variable name.
        name: String,
        /// Values.
        #[arg(required = true, allow_negative_numbers = true)]
        values: Vec<i16>,
    },
}

/// Entry point of `thymio-rt vars`.
pub fn main(cmd: Command) -> CliResult {
    match cmd {
        Command::Get { target, node, name } => {
            let mut rt = tool_runtime(&target)?;
            let result = (|| {
                wait_for_nodes(&mut rt, &target.target, target.timeout()?)?;
                read_variable(&mut rt, node, &name, target.timeout()?)
            })();
            rt.stop();
            let values = result?;
            print_out(
                &values
                    .iter()
                    .map(|v| v.to_string())
                    .collect::<Vec<_>>()
                    .join(" "),
            )
        }
        Command::Set {
            target,
            node,
            name,
            values,
        } => {
            let mut rt = tool_runtime(&target)?;
            let result = (|| {
                wait_for_nodes(&mut rt, &target.target, target.timeout()?)?;
                rt.engine
                    .network_mut()
                    .set_variable(node, &name, &values)
                    .map_err(CliError::new)?;
                // The node handles messages in order: the answer to a read sent after the
                // write proves the write was applied.
                read_variable(&mut rt, node, &name, target.timeout()?).map(|_| ())
            })();
            rt.stop();
            result
        }
    }
}
