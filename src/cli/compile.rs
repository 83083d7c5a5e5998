//! `thymio-rt compile`: compile an `.aesl` (or plain Aseba) file with thymio-rt's compiler.

use super::{print_out, CliError, CliResult};
use msgs::description::{playground_thymio, thymio_ii_fw14, TargetDescription};
use nrt_compiler::{self as compiler, disasm, Aesl, EventDef};
use std::path::{Path, PathBuf};

/// Arguments of `thymio-rt compile`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// `.aesl` file, or plain Aseba source (`.aseba`, events from --event).
    #[arg(required_unless_present = "describe_target")]
    file: Option<PathBuf>,
    /// Target: `thymio-II` (firmware 14), `playground`, or a description JSON file.
    #[arg(long, default_value = "thymio-II")]
    target: String,
    /// Node whose program to compile, `NAME[:ID]` (default: the target's name, id 1).
    #[arg(long, value_name = "NAME[:ID]")]
    node: Option<String>,
    /// Constant override, `NAME=VALUE` (repeatable).
    #[arg(long = "constant", value_name = "NAME=VALUE")]
    constants: Vec<String>,
    /// Global event for plain sources, `NAME:SIZE` (repeatable, id = order).
    #[arg(long = "event", value_name = "NAME:SIZE")]
    events: Vec<String>,
    /// Print one JSON object (result or error).
    #[arg(long)]
    json: bool,
    /// Print the disassembly.
    #[arg(long)]
    dump: bool,
    /// Print the target description as JSON and exit.
    #[arg(long)]
    describe_target: bool,
}

/// A failure before or during compilation, with a position when the compiler gives one.
struct Failure {
    line: u32,
    col: u32,
    message: String,
}

impl Failure {
    fn plain(message: impl Into<String>) -> Self {
        Failure {
            line: 0,
            col: 0,
            message: message.into(),
        }
    }
}

/// Entry point of `thymio-rt compile`.
pub fn main(args: Args) -> CliResult {
    match run(&args) {
        Ok(()) => Ok(()),
        Err(f) => {
            if args.json {
                let v = serde_json::json!({"error": {"line": f.line, "col": f.col, "message": f.message}});
                print_out(&v.to_string())?;
            }
            let at = match &args.file {
                Some(file) if f.line > 0 => format!("{}:{}:{}: ", file.display(), f.line, f.col),
                _ => String::new(),
            };
            Err(CliError::new(format!("{at}{}", f.message)))
        }
    }
}

fn load_target(spec: &str) -> Result<TargetDescription, Failure> {
    match spec {
        "thymio-II" | "thymio" | "thymio2" => Ok(thymio_ii_fw14()),
        "playground" => Ok(playground_thymio()),
        path => {
            let text = std::fs::read_to_string(path).map_err(|e| {
                Failure::plain(format!(
                    "target {path}: not thymio-II, playground, or a readable file: {e}"
                ))
            })?;
            serde_json::from_str(&text)
                .map_err(|e| Failure::plain(format!("target {path}: bad description JSON: {e}")))
        }
    }
}

fn parse_pair<'a>(s: &'a str, sep: char, what: &str) -> Result<(&'a str, i64), Failure> {
    let (name, value) = s
        .split_once(sep)
        .ok_or_else(|| Failure::plain(format!("{what} \"{s}\": expected NAME{sep}VALUE")))?;
    let value = value
        .trim()
        .parse::<i64>()
        .map_err(|_| Failure::plain(format!("{what} \"{s}\": value is not an integer")))?;
    if name.is_empty() {
        return Err(Failure::plain(format!("{what} \"{s}\": empty name")));
    }
    Ok((name, value))
}

fn read_source(
    path: &Path,
    args: &Args,
    target: &TargetDescription,
) -> Result<(String, Aesl), Failure> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Failure::plain(format!("cannot read {}: {e}", path.display())))?;
    let is_xml = text.trim_start().starts_with('<');
    let mut aesl = if is_xml {
        compiler::parse_aesl(&text)
            .map_err(|e| Failure::plain(format!("{}: {e}", path.display())))?
    } else {
        Aesl::default()
    };
    for e in &args.events {
        let (name, size) = parse_pair(e, ':', "event")?;
        let size = u16::try_from(size)
            .map_err(|_| Failure::plain(format!("event \"{e}\": size out of range")))?;
        aesl.events.push(EventDef {
            name: name.to_owned(),
            size,
        });
    }
    for c in &args.constants {
        let (name, value) = parse_pair(c, '=', "constant")?;
        if !(-32768..=32767).contains(&value) {
            return Err(Failure::plain(format!(
                "constant \"{c}\": value out of [-32768;32767]"
            )));
        }
        aesl.set_constant(name, value as i32);
    }
    if !is_xml {
        return Ok((text, aesl));
    }
    let (name, id) = match &args.node {
        None => (target.name.clone(), 1u16),
        Some(spec) => match spec.split_once(':') {
            Some((n, i)) => (
                n.to_owned(),
                i.parse()
                    .map_err(|_| Failure::plain(format!("--node {spec}: id is not a number")))?,
            ),
            None => (spec.clone(), 1),
        },
    };
    let code = aesl
        .source_for(&name, id)
        .ok_or_else(|| {
            Failure::plain(format!(
                "{}: no program for a node named {name}",
                path.display()
            ))
        })?
        .code
        .clone();
    Ok((code, aesl))
}

fn run(args: &Args) -> Result<(), Failure> {
    let target = load_target(&args.target)?;
    let out = |s: &str| print_out(s).map_err(|e| Failure::plain(e.message));
    if args.describe_target {
        let json =
            serde_json::to_string_pretty(&target).map_err(|e| Failure::plain(e.to_string()))?;
        return out(&json);
    }
    let Some(file) = &args.file else {
        return Err(Failure::plain("no file to compile"));
    };
    let (source, aesl) = read_source(file, args, &target)?;
    let program =
        compiler::compile(&source, &target, &aesl.events, &aesl.constants).map_err(|e| {
            Failure {
                line: e.line,
                col: e.col,
                message: e.message,
            }
        })?;
    let out = |s: &str| print_out(s).map_err(|e| Failure::plain(e.message));
    if args.json {
        let v = serde_json::json!({
            "target": target.name,
            "bytecode": program.bytecode,
            "events": aesl.events.iter().map(|e| serde_json::json!({"name": e.name, "size": e.size})).collect::<Vec<_>>(),
            "constants": aesl.constants.iter().map(|(n, v)| serde_json::json!({"name": n, "value": v})).collect::<Vec<_>>(),
            "variables": program.variables.iter().map(|v| serde_json::json!({"name": v.name, "address": v.address, "size": v.size})).collect::<Vec<_>>(),
            "allocated_variables": program.allocated_variables,
        });
        out(&v.to_string())?;
    }
    if args.dump {
        out(&disasm::disassemble(
            &program.bytecode,
            &target,
            &aesl.events,
        ))?;
    }
    if !args.json && !args.dump {
        out(&format!(
            "{}: {} words of bytecode on {}, {} words of variables on {}",
            file.display(),
            program.bytecode.len(),
            target.bytecode_size,
            program.allocated_variables,
            target.variables_size
        ))?;
    }
    Ok(())
}
