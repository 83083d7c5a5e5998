//! A second driver on the same robot: two thymio-rt (or any tool) connected to one
//! asebaswitch or Playground robot both command its wheels, and the robot follows whichever
//! wrote last. Every client of an Aseba switch sees the other clients' frames, so the frames
//! from a robot link tell: a **wheel command** to a robot this process drives that this process
//! did not send — the driver script's `set_speed` event, or a `SetVariables` to the robot
//! touching `motor.left.target` / `motor.right.target` — comes from another client.
//!
//! The rule (no false alarm from the switch's legitimate clients): only wheel commands count;
//! reads (`GetVariables`), descriptions, pings, other events and writes of other variables (Studio
//! watching, asebamassloader, a user's tool) are not a conflict; frames of our own switch's
//! clients reach the robot through us and are never seen here (they become the robot's
//! set-point, `raw_motor`); the robot's own events (source = its node id) are its own; with
//! `include_id_in_events`, a `set_speed` naming another robot of a shared network is that
//! robot's. A
//! conflict is said once when it starts (an error log naming the node, the source and the
//! command) and shown in `/diagnostics` (`<prefix>: Foreign commands`, ERROR) until
//! [`FOREIGN_HOLD`] passes without one.

use super::raw_motor::MOTOR_TARGETS;
use super::Robots;
use crate::network::NetworkManager;
use handoff::NodeId;
use msgs::wire::{Frame, Message};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// How long a conflict is shown after the last foreign command.
pub const FOREIGN_HOLD: Duration = Duration::from_secs(5);

/// The latest foreign wheel command to one driven robot.
#[derive(Debug, Clone, PartialEq)]
pub struct ForeignCommand {
    /// The frame's source id.
    pub source: u16,
    /// What it did (`set_speed event`, `motor.*.target write`).
    pub what: &'static str,
    /// When the conflict started.
    pub since: Instant,
    /// The latest one.
    pub last: Instant,
    /// How many since it started.
    pub count: u64,
}

/// Foreign wheel commands by driven robot.
#[derive(Debug, Default)]
pub struct Foreign {
    by_node: BTreeMap<NodeId, ForeignCommand>,
}

impl Foreign {
    /// The conflicts still shown at `now`.
    pub fn active(&self, now: Instant) -> impl Iterator<Item = (NodeId, &ForeignCommand)> {
        self.by_node
            .iter()
            .filter(move |(_, c)| now.saturating_duration_since(c.last) < FOREIGN_HOLD)
            .map(|(n, c)| (*n, c))
    }

    /// Looks at one frame from a robot link; logs a conflict when it starts.
    pub(super) fn check(
        &mut self,
        robots: &Robots,
        net: &NetworkManager,
        frame: &Frame<'_>,
        now: Instant,
    ) {
        let is_event = frame.kind < 0x8000;
        if !is_event && frame.kind != msgs::wire::kind::SET_VARIABLES {
            return;
        }
        let Ok(msg) = frame.message() else { return };
        for slot in robots.iter() {
            let node = slot.node;
            if frame.source == node.0 {
                continue;
            }
            let Some(n) = net.node(node) else { continue };
            let what = match &msg {
                Message::UserEvent { id, args } => {
                    let event = n
                        .script
                        .as_ref()
                        .and_then(|s| s.events.get(usize::from(*id)));
                    let Some((name, size)) = event else { continue };
                    // with `include_id_in_events` (size 3) the first argument names the robot:
                    // a set_speed of another robot of a shared network is not ours
                    let addressed = *size != 3 || args.get(0) == Some(node.0 as i16);
                    if name != super::raw_motor::SET_SPEED || !addressed {
                        continue;
                    }
                    "set_speed event"
                }
                Message::SetVariables {
                    dest,
                    start,
                    values,
                } if *dest == node.0 => {
                    let end = usize::from(*start) + values.len();
                    let touches = MOTOR_TARGETS.iter().filter_map(|t| n.variable(t)).any(|v| {
                        let a = usize::from(v.address);
                        a < end && usize::from(*start) < a + usize::from(v.size)
                    });
                    if !touches {
                        continue;
                    }
                    "motor.*.target write"
                }
                _ => continue,
            };
            self.seen(node, frame.source, what, now);
        }
    }

    fn seen(&mut self, node: NodeId, source: u16, what: &'static str, now: Instant) {
        let started = self
            .by_node
            .get(&node)
            .is_none_or(|c| now.saturating_duration_since(c.last) >= FOREIGN_HOLD);
        if started {
            tracing::error!(
                "node {node}: another Aseba client (source {source}) commands its wheels \
                 ({what}) while thymio-rt drives it: a second driver on the same robot? \
                 The robot follows whichever wrote last; stop the other one"
            );
            self.by_node.insert(
                node,
                ForeignCommand {
                    source,
                    what,
                    since: now,
                    last: now,
                    count: 1,
                },
            );
        } else if let Some(c) = self.by_node.get_mut(&node) {
            c.source = source;
            c.what = what;
            c.last = now;
            c.count += 1;
        }
    }
}

#[cfg(test)]
#[path = "foreign_tests.rs"]
mod tests;
