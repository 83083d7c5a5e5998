//! The driver's entry point as a library function: what the `thymio-rt` binary runs, and what a crate of
//! one's own RT controllers runs with its registry ([`run`]; docs/control.md "Writing an RT controller").

use crate::cli::{dispatch_with, Cli};
use rt::controllers::Registry;
use std::process::ExitCode;

/// The whole driver — command line (`run`, `nodes`, `vars`, …), log (`THYMIO_LOG`), configuration, ROS front
/// ends, safety, exit status — with the RT controllers of `registry` in place of [`Registry::shipped`]:
/// `control.controllers` chooses among them. Call it from `main` and return its status.
///
/// `run --report` counts the RT thread's allocations only if the binary installs the counting allocator
/// (`#[global_allocator] static ALLOC: thymio_rt::rt::alloc::CountingAlloc = thymio_rt::rt::alloc::CountingAlloc;`);
/// without it everything works and the report says `allocation_counting: false`.
pub fn run(registry: Registry) -> ExitCode {
    let cli = Cli::parse_args(std::env::args_os()).unwrap_or_else(|e| e.exit());
    let filter = tracing_subscriber::EnvFilter::try_from_env("THYMIO_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(cli.command.default_log_level()));
    init_log(filter, cli.command.log_file());
    match dispatch_with(cli, registry) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("thymio-rt: {}", e.message);
            ExitCode::from(e.code)
        }
    }
}

/// The log on standard error, and in `file` too (roslaunch's `__log:=`) when given; a file that cannot be
/// opened is said on standard error and the log stays there.
fn init_log(filter: tracing_subscriber::EnvFilter, file: Option<&std::path::Path>) {
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    let opened = file.and_then(|path| {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            let _ = std::fs::create_dir_all(dir);
        }
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(|e| {
                eprintln!(
                    "thymio-rt: cannot open the log file {}: {e}",
                    path.display()
                )
            })
            .ok()
    });
    let to_file = opened.map(|f| {
        tracing_subscriber::fmt::layer()
            .with_ansi(false)
            .with_writer(std::sync::Mutex::new(f))
    });
    tracing_subscriber::registry()
        .with(filter)
        .with(tracing_subscriber::fmt::layer().with_writer(std::io::stderr))
        .with(to_file)
        .init();
}
