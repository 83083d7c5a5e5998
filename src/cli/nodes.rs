//! `thymio-rt nodes`: discover and print every node of a network.

use super::common::{tool_runtime, wait_for_nodes, TargetArgs};
use super::{print_out, CliResult};
use nrt_engine::network::Node;
use serde_json::json;

/// Arguments of `thymio-rt nodes`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    target: TargetArgs,
    /// Print a JSON array instead of text.
    #[arg(long)]
    json: bool,
}

/// Entry point of `thymio-rt nodes`.
pub fn main(args: Args) -> CliResult {
    let mut rt = tool_runtime(&args.target)?;
    let waited = wait_for_nodes(&mut rt, &args.target.target, args.target.timeout()?);
    let nodes: Vec<Node> = rt
        .engine
        .network()
        .nodes()
        .filter(|n| n.description.is_some())
        .cloned()
        .collect();
    rt.stop();
    waited?;
    let text = if args.json {
        let v: Vec<serde_json::Value> = nodes.iter().map(node_json).collect();
        serde_json::to_string_pretty(&v).expect("JSON values serialize")
    } else {
        nodes.iter().map(node_text).collect::<Vec<_>>().join("\n")
    };
    print_out(&text)
}

fn node_json(n: &Node) -> serde_json::Value {
    let d = n.description.as_ref().expect("described");
    json!({
        "id": n.id.0,
        "name": d.name,
        "protocol_version": d.protocol_version,
        "bytecode_size": d.bytecode_size,
        "stack_size": d.stack_size,
        "variables_size": d.variables_size,
        "variables": d.variables.iter().map(|v| json!({"name": v.name, "address": v.address, "size": v.size})).collect::<Vec<_>>(),
        "local_events": d.local_events.iter().map(|e| e.name.clone()).collect::<Vec<_>>(),
        // the whole description, as `thymio-rt compile --target desc.json` reads it
        "description": d,
        "natives": d.natives.iter().map(|f| json!({
            "name": f.name,
            "params": f.params.iter().map(|p| json!({"name": p.name, "size": p.size})).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
    })
}

fn node_text(n: &Node) -> String {
    use std::fmt::Write;
    let d = n.description.as_ref().expect("described");
    let mut s = format!(
        "node {} \"{}\" protocol {} (bytecode {}, stack {}, variables {})\n  variables:\n",
        n.id, d.name, d.protocol_version, d.bytecode_size, d.stack_size, d.variables_size
    );
    for v in &d.variables {
        let _ = writeln!(s, "    {:>4}  {}[{}]", v.address, v.name, v.size);
    }
    s.push_str("  local events:\n");
    for (i, e) in d.local_events.iter().enumerate() {
        let _ = writeln!(
            s,
            "    {:#06x}  {}",
            msgs::description::local_event_id(i),
            e.name
        );
    }
    s.push_str("  natives:");
    for (i, f) in d.natives.iter().enumerate() {
        let params: Vec<String> = f
            .params
            .iter()
            .map(|p| format!("{}[{}]", p.name, p.size))
            .collect();
        let _ = write!(s, "\n    {i:>3}  {}({})", f.name, params.join(", "));
    }
    s
}
