//! Helpers shared by the unit tests of the crate.

use msgs::description::TargetDescription;

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
    d.messages().map(|m| m.to_frame(id).unwrap()).collect()
}
