//! Command-line interface: one module per subcommand, each with its clap `Args` and a `main`.

use clap::{Parser, Subcommand};

mod common;
pub mod compile;
pub mod emit;
pub mod nodes;
pub mod run;
pub mod sim;
pub mod vars;

/// Real-time ROS 2 driver for Thymio-II robots and Aseba networks.
#[derive(Debug, Parser)]
#[command(name = "thymio-rt", version, about, max_term_width = 100)]
pub struct Cli {
    /// The subcommand.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the driver (ROS 2 bridge on when built with it; embedded simulated Thymio by default).
    Run(run::Args),
    /// Discover and print every node of an Aseba network.
    Nodes(nodes::Args),
    /// Get or set variables of a node.
    #[command(subcommand)]
    Vars(vars::Command),
    /// Send a user event to the network.
    Emit(emit::Args),
    /// Compile an Aseba script (.aesl or .aseba) to bytecode.
    Compile(compile::Args),
    /// Serve simulated Thymio-II robots over TCP and/or pseudo-terminals.
    Sim(sim::Args),
}

/// An error reported to the user as one line, with a non-zero exit status.
#[derive(Debug)]
pub struct CliError {
    /// The line printed on standard error.
    pub message: String,
    /// Process exit status.
    pub code: u8,
}

impl CliError {
    /// A failure (exit status 1).
    pub fn new(message: impl std::fmt::Display) -> Self {
        Self {
            message: message.to_string(),
            code: 1,
        }
    }
}

impl<E: std::error::Error> From<E> for CliError {
    fn from(e: E) -> Self {
        CliError::new(e)
    }
}

/// Result of a subcommand.
pub type CliResult = Result<(), CliError>;

/// Prints `text` and a newline on standard output; a closed pipe (`| head`) is not an error.
pub fn print_out(text: &str) -> CliResult {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match writeln!(out, "{text}").and_then(|_| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(CliError::new(format!("stdout: {e}")))
        }
        _ => Ok(()),
    }
}

impl Command {
    /// Default log level: the driver says what it does; the tools only report problems.
    pub fn default_log_level(&self) -> &'static str {
        match self {
            // roslibrust (ROS 1) logs every TCPROS connection at info
            Command::Run(_) | Command::Sim(_) => "info,roslibrust_ros1=warn",
            _ => "error",
        }
    }
}

/// Runs the parsed command line.
pub fn dispatch(cli: Cli) -> CliResult {
    match cli.command {
        Command::Run(a) => run::main(a),
        Command::Nodes(a) => nodes::main(a),
        Command::Vars(c) => vars::main(c),
        Command::Emit(a) => emit::main(a),
        Command::Compile(a) => compile::main(a),
        Command::Sim(a) => sim::main(a),
    }
}
