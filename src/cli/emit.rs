//! `thymio-rt emit`: send a user event to the network.

use super::common::{tool_runtime, wait_for_nodes, TargetArgs};
use super::{CliError, CliResult};

/// Arguments of `thymio-rt emit`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    target: TargetArgs,
    /// `.aesl` file whose global events name the events (needed to emit by name).
    #[arg(long, value_name = "FILE.aesl")]
    script: Option<std::path::PathBuf>,
    /// Event id (0..32767), or its name in --script.
    event: String,
    /// Arguments.
    #[arg(allow_negative_numbers = true)]
    args: Vec<i16>,
}

/// Entry point of `thymio-rt emit`.
pub fn main(args: Args) -> CliResult {
    let (id, size) = resolve(&args)?;
    if let Some(size) = size {
        if args.args.len() != size {
            return Err(CliError::new(format!(
                "event \"{}\" has size {size}, got {} arguments",
                args.event,
                args.args.len()
            )));
        }
    }
    let mut rt = tool_runtime(&args.target)?;
    let result = (|| {
        wait_for_nodes(&mut rt, &args.target.target, args.target.timeout()?)?;
        rt.engine
            .network_mut()
            .emit(id, &args.args)
            .map_err(CliError::new)?;
        Ok(())
    })();
    // stopping flushes the link: the event is written before the RT thread ends
    rt.stop();
    result
}

/// The event id, and its declared size when it comes from a script.
fn resolve(args: &Args) -> Result<(u16, Option<usize>), CliError> {
    if let Ok(id) = args.event.parse::<u16>() {
        if id >= 0x8000 {
            return Err(CliError::new(format!("event id {id} is not below 32768")));
        }
        return Ok((id, None));
    }
    let Some(path) = &args.script else {
        return Err(CliError::new(format!(
            "\"{}\" is not an event id; give --script FILE.aesl to emit by name",
            args.event
        )));
    };
    let text = std::fs::read_to_string(path)
        .map_err(|e| CliError::new(format!("cannot read {}: {e}", path.display())))?;
    let aesl = nrt_compiler::parse_aesl(&text)
        .map_err(|e| CliError::new(format!("{}: {e}", path.display())))?;
    match aesl.event_id(&args.event) {
        Some(id) => Ok((id, Some(aesl.events[id as usize].size as usize))),
        None => {
            let known: Vec<&str> = aesl.events.iter().map(|e| e.name.as_str()).collect();
            Err(CliError::new(format!(
                "{}: no global event \"{}\" (events: {})",
                path.display(),
                args.event,
                known.join(", ")
            )))
        }
    }
}
