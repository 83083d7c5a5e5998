//! Driven robots whose Aseba VM is found stopped or paused (Studio's "stop", any switch
//! client's STOP or PAUSE): such a VM ignores `set_speed` and stops emitting odometry. Each
//! halt is reported once (a warning, and [`VmRecord`] for `/diagnostics`) and, with
//! `restart_stopped_vm`, the VM is set running again (RUN). The RT stop paths do not depend
//! on it: they also write the motor targets directly.

use std::collections::BTreeMap;

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
    by_node: BTreeMap<u16, VmRecord>,
    /// Nodes a switch client just sent STOP or PAUSE to (attributed to the next halt seen).
    from_client: std::collections::BTreeSet<u16>,
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
    pub fn record(&self, node: u16) -> Option<VmRecord> {
        self.by_node.get(&node).copied()
    }

    /// A switch client sent STOP or PAUSE to `node`.
    pub fn client_halt(&mut self, node: u16) {
        self.from_client.insert(node);
    }

    /// An execution state of driven node `node`: `halted` if the VM is in step-by-step mode
    /// (stopped or paused).
    pub fn on_state(&mut self, node: u16, halted: bool, restart: bool) -> HaltAction {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_halt_is_reported_once_and_restarted_each_time_it_is_seen() {
        let mut h = VmHalts::default();
        assert_eq!(h.on_state(3, false, true), HaltAction::None);
        h.client_halt(3);
        assert_eq!(
            h.on_state(3, true, true),
            HaltAction::Report {
                restart: true,
                by_switch_client: true
            }
        );
        assert_eq!(h.on_state(3, true, true), HaltAction::Restart);
        assert_eq!(h.on_state(3, false, true), HaltAction::None);
        let r = h.record(3).unwrap();
        assert_eq!((r.halted, r.halts, r.restarts), (false, 1, 2));
        assert_eq!(r.summary(), "running (halts: 1, restarts: 2)");
        // a second halt, restart off: reported, never restarted
        assert_eq!(
            h.on_state(3, true, false),
            HaltAction::Report {
                restart: false,
                by_switch_client: false
            }
        );
        assert_eq!(h.on_state(3, true, false), HaltAction::None);
        assert!(h.record(3).unwrap().halted);
    }
}
