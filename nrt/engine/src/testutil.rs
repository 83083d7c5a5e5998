//! Helpers shared by the unit tests of the crate.

use msgs::description::TargetDescription;
use msgs::wire::{AsebaStr, Message, NativeParams};

/// A small Thymio-like description.
pub fn small_target(version: u16) -> TargetDescription {
    let mut d = TargetDescription::new("thymio-II", version, 1534, 32, 640);
    d.push_variable("_id", 1);
    d.push_variable("event.source", 1);
    d.push_variable("event.args", 32);
    d.push_variable("prox.horizontal", 7);
    d.push_variable("big", 100);
    d.push_local_event("button.center", "Center button status changed");
    d.push_native("math.copy", "copy", &[("dest", -1), ("src", -1)]);
    d
}

/// The frames a node sends for GET_NODE_DESCRIPTION.
pub fn description_frames(d: &TargetDescription, id: u16) -> Vec<Vec<u8>> {
    let mut out = vec![Message::Description {
        name: AsebaStr::from_str(&d.name),
        protocol_version: d.protocol_version,
        bytecode_size: d.bytecode_size,
        stack_size: d.stack_size,
        variables_size: d.variables_size,
        named_variables: d.variables.len() as u16,
        local_events: d.local_events.len() as u16,
        native_functions: d.natives.len() as u16,
    }
    .to_frame(id)
    .unwrap()];
    out.extend(d.variables.iter().map(|v| {
        Message::NamedVariableDescription {
            size: v.size,
            name: AsebaStr::from_str(&v.name),
        }
        .to_frame(id)
        .unwrap()
    }));
    out.extend(d.local_events.iter().map(|e| {
        Message::LocalEventDescription {
            name: AsebaStr::from_str(&e.name),
            description: AsebaStr::from_str(&e.description),
        }
        .to_frame(id)
        .unwrap()
    }));
    out.extend(d.natives.iter().map(|n| {
        Message::NativeFunctionDescription {
            name: AsebaStr::from_str(&n.name),
            description: AsebaStr::from_str(&n.description),
            params: NativeParams::from_params(&n.params),
        }
        .to_frame(id)
        .unwrap()
    }));
    out
}
