//! Command-line interface: one module per subcommand, each with its clap `Args` and a `main`.

use clap::{Parser, Subcommand};

mod common;
pub mod compile;
pub mod doctor;
pub mod emit;
mod front_ends;
pub mod nodes;
pub mod replay;
pub mod ros_args;
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

impl Cli {
    /// Parses the process's command line (`args`, the program's name first). Every argument clap does not
    /// understand is refused, naming it; `thymio-rt run`'s ROS 2 arguments (`--ros-args` segments, which rcl
    /// reads from the process's command line itself) are kept apart first ([`ros_args::split_ros2`]).
    pub fn parse_args(
        args: impl IntoIterator<Item = std::ffi::OsString>,
    ) -> Result<Cli, clap::Error> {
        use clap::{CommandFactory, FromArgMatches};
        let mut args: Vec<std::ffi::OsString> = args.into_iter().collect();
        let is_run = args.get(1).is_some_and(|a| a == "run");
        if !is_run {
            return Cli::try_parse_from(args);
        }
        let rest = args.split_off(2);
        let mut command = Cli::command();
        let checked = ros_args::split_ros2(rest)
            .map_err(|e| e.to_string())
            .and_then(|s| ros_args::check_ros2(&s.ros).map(|()| s));
        let split = match checked {
            Ok(s) => s,
            Err(e) => {
                // built, so that the usage names the program
                command.build();
                let run = command
                    .find_subcommand_mut("run")
                    .expect("the run subcommand");
                return Err(run.error(clap::error::ErrorKind::UnknownArgument, e));
            }
        };
        args.extend(split.ours);
        let matches = command.try_get_matches_from_mut(args)?;
        let mut cli = Cli::from_arg_matches(&matches).map_err(|e| e.format(&mut command))?;
        if let Command::Run(run) = &mut cli.command {
            run.ros_args = split.ros;
        }
        Ok(cli)
    }
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
    /// Run the RT core again on a flight recording (`run --record`), no robot needed; --check compares its
    /// outputs with the recorded ones bit for bit.
    Replay(replay::Args),
    /// Bring-up check of a real robot: USB, port holders and permission (udev rule), firmware,
    /// battery, sensors against the reflexes' thresholds, wheels (--wheels); exit 0 when healthy.
    Doctor(doctor::Args),
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
            Command::Run(_) | Command::Sim(_) | Command::Replay(_) => "info",
            _ => "error",
        }
    }
}

impl Command {
    /// The file roslaunch's `__log:=` names for `thymio-rt run --ros1`: the log is written there too.
    pub fn log_file(&self) -> Option<&std::path::Path> {
        match self {
            Command::Run(a) => a.log_file(),
            _ => None,
        }
    }
}

/// Runs the parsed command line with the shipped RT controllers.
pub fn dispatch(cli: Cli) -> CliResult {
    dispatch_with(cli, rt::controllers::Registry::shipped())
}

/// Runs the parsed command line; `thymio-rt run` loads its RT controllers from `registry`.
pub fn dispatch_with(cli: Cli, registry: rt::controllers::Registry) -> CliResult {
    match cli.command {
        Command::Run(a) => run::main(a, registry),
        Command::Nodes(a) => nodes::main(a),
        Command::Vars(c) => vars::main(c),
        Command::Emit(a) => emit::main(a),
        Command::Compile(a) => compile::main(a),
        Command::Sim(a) => sim::main(a),
        Command::Replay(a) => replay::main(a, registry),
        Command::Doctor(a) => doctor::main(a),
    }
}
