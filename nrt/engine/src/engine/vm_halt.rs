//! Driven robots whose Aseba VM is found stopped or paused (Studio's "stop", any switch
//! client's STOP or PAUSE): such a VM ignores `set_speed` and stops emitting odometry. Each
//! halt is reported once (a warning, and [`VmRecord`] for `/diagnostics`) and, with
//! `restart_stopped_vm`, the VM is set running again (RUN). The RT stop paths do not depend
//! on it: they also write the motor targets directly. The checks: every driven node's
//! execution state (periodic GET_EXECUTION_STATE, and at once after a switch client's STOP/PAUSE).

use super::Engine;
use handoff::NodeId;
use msgs::wire::Frame;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// What the engine knows about the VM of one driven node.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct VmRecord {
    /// The VM is stopped or paused now (as last seen).
    pub halted: bool,
    /// Halts seen since the node was first driven.
    pub halts: u32,
    /// RUN commands sent to restart it.
    pub restarts: u32,
    /// A switch client sent STOP or PAUSE to it (last halt).
    pub by_switch_client: bool,
}

impl VmRecord {
    /// One line for `/diagnostics`: `running`, `stopped` (or `paused`-like halts), with counts.
    pub fn summary(&self) -> String {
        let state = if self.halted { "stopped" } else { "running" };
        format!(
            "{state} (halts: {}, restarts: {})",
            self.halts, self.restarts
        )
    }
}

/// The VM records of driven nodes.
#[derive(Debug, Default)]
pub struct VmHalts {
    by_node: BTreeMap<NodeId, VmRecord>,
    /// Nodes a switch client just sent STOP or PAUSE to (attributed to the next halt seen).
    from_client: std::collections::BTreeSet<NodeId>,
}

/// What to do after an execution state of a driven node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HaltAction {
    /// Nothing (running, or a halt already reported and no restart wanted).
    None,
    /// A new halt: report it (and restart it when `restart` is set).
    Report {
        /// Send RUN.
        restart: bool,
        /// A switch client sent the STOP/PAUSE.
        by_switch_client: bool,
    },
    /// A halt already reported: send RUN again.
    Restart,
}

impl VmHalts {
    /// The record of `node`, if it was ever driven and checked.
    pub fn record(&self, node: NodeId) -> Option<VmRecord> {
        self.by_node.get(&node).copied()
    }

    /// A switch client sent STOP or PAUSE to `node`.
    pub fn client_halt(&mut self, node: NodeId) {
        self.from_client.insert(node);
    }

    /// An execution state of driven node `node`: `halted` if the VM is in step-by-step mode
    /// (stopped or paused).
    pub fn on_state(&mut self, node: NodeId, halted: bool, restart: bool) -> HaltAction {
        let r = self.by_node.entry(node).or_default();
        if !halted {
            r.halted = false;
            return HaltAction::None;
        }
        if r.halted {
            return if restart {
                r.restarts += 1;
                HaltAction::Restart
            } else {
                HaltAction::None
            };
        }
        r.halted = true;
        r.halts += 1;
        r.by_switch_client = self.from_client.remove(&node);
        if restart {
            r.restarts += 1;
        }
        HaltAction::Report {
            restart,
            by_switch_client: r.by_switch_client,
        }
    }
}

/// The node a switch client's frame stops or pauses, if it is a STOP or PAUSE.
pub(super) fn halt_request(frame: &Frame<'_>) -> Option<NodeId> {
    use msgs::wire::{kind, Message};
    // every client frame passes here: decode only the two kinds that halt a VM
    if frame.kind != kind::STOP && frame.kind != kind::PAUSE {
        return None;
    }
    match Message::decode(frame.kind, frame.payload) {
        Ok(Message::Stop { dest } | Message::Pause { dest }) => Some(NodeId(dest)),
        _ => None,
    }
}

impl Engine {
    /// A switch client sent STOP or PAUSE to a driven node: ask its state now (the answer goes
    /// through [`Self::check_vm_halt`]) instead of waiting for the periodic check.
    pub(super) fn watch_client_halt(&mut self, dest: NodeId) {
        if self.robots.of_node(dest).is_some() {
            tracing::warn!(
                "a switch client sent STOP/PAUSE to node {dest}, which the driver drives"
            );
            self.vm_halts.client_halt(dest);
            let _ = self
                .net
                .command(dest, crate::network::Command::GetExecutionState);
        }
    }

    /// An execution state of node `id`, said at `said` (its arrival): a driven robot's VM found stopped or paused
    /// is reported once and, with `restart_stopped_vm`, set running again.
    pub(super) fn check_vm_halt(&mut self, id: NodeId, pc: u16, flags: u16, said: Instant) {
        if self.robots.of_node(id).is_none() || self.closing {
            return;
        }
        // Right after a load the VM may not run yet: the loader sends RUN itself.
        if self
            .loaded_at
            .get(&id)
            .is_some_and(|t| said.saturating_duration_since(*t) < Duration::from_secs(1))
        {
            return;
        }
        let halted = flags & msgs::opcodes::FLAG_STEP_BY_STEP != 0;
        let restart = self.driver.restart_stopped_vm;
        match self.vm_halts.on_state(id, halted, restart) {
            HaltAction::None => return,
            HaltAction::Report {
                restart,
                by_switch_client,
            } => tracing::warn!(
                "node {id}: its Aseba VM is stopped or paused (pc {pc}, flags {flags:#x}{}) while the \
                 driver drives it: set_speed and odometry are dead (the stop paths still write the \
                 motor targets directly); {}",
                if by_switch_client { ", by a switch client" } else { "" },
                if restart {
                    "setting it running again (restart_stopped_vm)"
                } else {
                    "left stopped (restart_stopped_vm is off)"
                }
            ),
            HaltAction::Restart => {}
        }
        if restart {
            if let Err(e) = self.net.command(id, crate::network::Command::Run) {
                tracing::error!("node {id}: cannot send RUN: {e}");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_halt_is_reported_once_and_restarted_each_time_it_is_seen() {
        let mut h = VmHalts::default();
        assert_eq!(h.on_state(NodeId(3), false, true), HaltAction::None);
        h.client_halt(NodeId(3));
        assert_eq!(
            h.on_state(NodeId(3), true, true),
            HaltAction::Report {
                restart: true,
                by_switch_client: true
            }
        );
        assert_eq!(h.on_state(NodeId(3), true, true), HaltAction::Restart);
        assert_eq!(h.on_state(NodeId(3), false, true), HaltAction::None);
        let r = h.record(NodeId(3)).unwrap();
        assert_eq!((r.halted, r.halts, r.restarts), (false, 1, 2));
        assert_eq!(r.summary(), "running (halts: 1, restarts: 2)");
        // a second halt, restart off: reported, never restarted
        assert_eq!(
            h.on_state(NodeId(3), true, false),
            HaltAction::Report {
                restart: false,
                by_switch_client: false
            }
        );
        assert_eq!(h.on_state(NodeId(3), true, false), HaltAction::None);
        assert!(h.record(NodeId(3)).unwrap().halted);
    }
}
