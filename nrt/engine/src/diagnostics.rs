//! `/diagnostics` content, the same for every ROS front end: the Aseba network, each node (as asebaros reports
//! them), the RT thread's statistics and the Aseba switch, as [`DiagnosticStatus`] entries with the fields of
//! `diagnostic_msgs/DiagnosticStatus` (each front end converts them to its message type and stamps the array).
//!
//! Status names are prefixed with the bridge node's name as diagnostic_updater does (`asebaros: Aseba Network`,
//! `asebaros: Aseba Node thymio-II 1`, `asebaros: RT thread`).
//!
//! ```
//! use nrt_engine::diagnostics::{kv, rt_thread, WARN};
//!
//! let s = rt_thread("asebaros", None, false);
//! assert_eq!((s.level, s.name.as_str()), (WARN, "asebaros: RT thread"));
//! assert_eq!(kv("Owner", "ros").value, "ros");
//! ```

use crate::engine::Engine;
use crate::network::{Node, NodeState};
use handoff::{LatencySummary, NodeId, RtStats, SchedulerMode};
use std::time::Instant;

/// `DiagnosticStatus.level` OK.
pub const OK: u8 = 0;
/// `DiagnosticStatus.level` WARN.
pub const WARN: u8 = 1;
/// `DiagnosticStatus.level` ERROR.
pub const ERROR: u8 = 2;

/// Key of a driven robot's count of stamped `cmd_vel` ignored as older than `cmd_vel_timeout`.
pub const STALE_CMD_VEL: &str = "Stale cmd_vel ignored";

/// `diagnostic_msgs/KeyValue`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct KeyValue {
    /// What is measured.
    pub key: String,
    /// Its value.
    pub value: String,
}

/// `diagnostic_msgs/DiagnosticStatus`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DiagnosticStatus {
    /// [`OK`], [`WARN`] or [`ERROR`].
    pub level: u8,
    /// `<prefix>: <component>`.
    pub name: String,
    /// What is wrong, or that all is well.
    pub message: String,
    /// The hardware (target, node id) when there is one.
    pub hardware_id: String,
    /// The figures.
    pub values: Vec<KeyValue>,
}

/// A key-value of a status.
pub fn kv(key: &str, value: impl ToString) -> KeyValue {
    KeyValue {
        key: key.to_owned(),
        value: value.to_string(),
    }
}

fn ids(ids: impl Iterator<Item = NodeId>) -> String {
    ids.map(|i| i.to_string()).collect::<Vec<_>>().join(", ")
}

/// Every status for `engine` now (network, nodes, RT thread, switch).
pub fn array(prefix: &str, engine: &Engine) -> Vec<DiagnosticStatus> {
    array_with(prefix, engine, &|_| Vec::new())
}

/// [`array`], with `robot_values(node)` added to each driven robot's status (the ROS side's own counters, such as
/// the stale `cmd_vel` ignored).
pub fn array_with(
    prefix: &str,
    engine: &Engine,
    robot_values: &dyn Fn(NodeId) -> Vec<KeyValue>,
) -> Vec<DiagnosticStatus> {
    let mut status = vec![network(prefix, engine)];
    status.extend(nodes_with(prefix, engine, robot_values));
    status.push(rt_thread(prefix, engine.rt_stats(), engine.rt_exited()));
    status.push(foreign(prefix, engine.foreign_commands(), Instant::now()));
    if let Some(sw) = engine.switch() {
        status.push(switch(prefix, &sw.report()));
    }
    status
}

/// The connected targets, as the configuration names them (`sim` for the embedded simulator).
fn connected_targets(engine: &Engine) -> String {
    let targets = &engine.params().targets;
    engine
        .links()
        .map(|(_, index)| {
            targets
                .get(usize::from(index))
                .cloned()
                .unwrap_or_else(|| "sim".to_owned())
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// "Foreign commands": ERROR while another client of a robot's link commands the wheels of a
/// robot this process drives (a second driver, `engine::Foreign`), OK otherwise.
pub fn foreign(prefix: &str, f: &crate::engine::Foreign, now: Instant) -> DiagnosticStatus {
    let active: Vec<_> = f.active(now).collect();
    let values = active
        .iter()
        .map(|(node, c)| {
            kv(
                &format!("Node {node}"),
                format!(
                    "{} from source {} ({} since the conflict started)",
                    c.what, c.source, c.count
                ),
            )
        })
        .collect();
    DiagnosticStatus {
        level: if active.is_empty() { OK } else { ERROR },
        name: format!("{prefix}: Foreign commands"),
        message: if active.is_empty() {
            "No other client commands the driven robots".to_owned()
        } else {
            format!(
                "Another client commands the wheels of node(s) {}: a second driver?",
                ids(active.iter().map(|(n, _)| *n))
            )
        },
        hardware_id: String::new(),
        values,
    }
}

/// "Aseba Network": OK once a target is connected, WARN while connecting.
pub fn network(prefix: &str, engine: &Engine) -> DiagnosticStatus {
    let net = engine.network();
    let connected = engine.connected();
    let bridged = net.nodes().filter(|n| n.is_bridged() && n.connected);
    let ignored = net
        .nodes()
        .filter(|n| matches!(n.state, NodeState::Ignored(_)));
    let unconnected = net.nodes().filter(|n| n.is_bridged() && !n.connected);
    DiagnosticStatus {
        level: if connected { OK } else { WARN },
        name: format!("{prefix}: Aseba Network"),
        message: if connected { "Connected" } else { "Connecting" }.to_owned(),
        hardware_id: connected_targets(engine),
        values: vec![
            kv("Connected nodes", ids(bridged.map(|n| n.id))),
            kv("Ignored nodes", ids(ignored.map(|n| n.id))),
            kv("Unconnected nodes", ids(unconnected.map(|n| n.id))),
            kv("Frames dropped to RT", engine.stats().frames_dropped_to_rt),
            kv("Script reloads", engine.stats().script_reloads),
        ],
    }
}

/// "Aseba Node <type> <id>" for each bridged node: OK connected, WARN not.
pub fn nodes<'a>(
    prefix: &'a str,
    engine: &'a Engine,
) -> impl Iterator<Item = DiagnosticStatus> + 'a {
    nodes_with(prefix, engine, &|_| Vec::new())
}

/// [`nodes`], with `robot_values(node)` added to each driven robot's status.
fn nodes_with<'a>(
    prefix: &'a str,
    engine: &'a Engine,
    robot_values: &'a dyn Fn(NodeId) -> Vec<KeyValue>,
) -> impl Iterator<Item = DiagnosticStatus> + 'a {
    engine
        .network()
        .nodes()
        .filter(|n| n.is_bridged())
        .map(move |n| {
            let (level, message) = node_level(engine, n);
            DiagnosticStatus {
                level,
                name: format!("{prefix}: Aseba Node {} {}", n.name(), n.id),
                message: message.to_owned(),
                hardware_id: n.id.to_string(),
                values: node_values(engine, n, robot_values),
            }
        })
}

/// A node's level and message: WARN when it is not connected, or when the VM of a robot the
/// driver drives is found stopped or paused (its script then ignores `set_speed`).
fn node_level(engine: &Engine, n: &Node) -> (u8, &'static str) {
    if !n.connected {
        (WARN, "Not Connected")
    } else if engine.vm_record(n.id).is_some_and(|r| r.halted) {
        (WARN, "Connected, VM stopped or paused")
    } else {
        (OK, "Connected")
    }
}

/// The key-values of a node's status; a driven robot's include its RT slot, the state of the
/// obstacle-stop and cliff reflexes (`off`, `armed`, `holding`) and `robot_values` of it.
fn node_values(
    engine: &Engine,
    n: &Node,
    robot_values: &dyn Fn(NodeId) -> Vec<KeyValue>,
) -> Vec<KeyValue> {
    let mut values = vec![
        kv("Type", n.name()),
        kv("Id", n.id),
        kv("ROS Namespace", n.namespace()),
        kv("Protocol version", n.protocol_version),
        kv(
            "Loaded script",
            n.script.as_ref().map_or("", |s| s.origin.as_str()),
        ),
    ];
    if let Some(slot) = engine.robots().of_node(n.id) {
        values.push(kv("RT robot", slot.robot));
        let reflex = if !engine.driver_params().obstacle_stop.enabled {
            "off"
        } else if engine.obstacle_stop_holds(n.id) {
            "holding"
        } else {
            "armed"
        };
        values.push(kv("Obstacle stop", reflex));
        let cliff = if !engine.driver_params().cliff_stop.enabled {
            "off"
        } else if engine.cliff_stop_holds(n.id) {
            "holding"
        } else {
            "armed"
        };
        values.push(kv("Cliff stop", cliff));
        let pickup = if !engine.driver_params().pickup_stop.enabled {
            "off"
        } else if engine.picked_up_holds(n.id) {
            "holding"
        } else {
            "armed"
        };
        values.push(kv("Pick-up stop", pickup));
        let estop = if engine.emergency_stop_holds(n.id) {
            "holding"
        } else {
            "released"
        };
        values.push(kv("Emergency stop", estop));
        values.extend(robot_values(n.id));
    }
    push_vm_state(&mut values, engine, n.id);
    values
}

/// A driven robot's VM state: `running`/`stopped` with the halts seen (STOP or PAUSE while
/// driven) and the restarts sent (`restart_stopped_vm`); absent before its first check.
fn push_vm_state(values: &mut Vec<KeyValue>, engine: &Engine, node: NodeId) {
    if let Some(r) = engine.vm_record(node) {
        values.push(kv("VM", r.summary()));
    }
}

fn latency(out: &mut Vec<KeyValue>, what: &str, l: &LatencySummary) {
    out.push(kv(
        &format!("{what} [µs] p50/p99/p99.9/max"),
        format!(
            "{:.1}/{:.1}/{:.1}/{:.1}",
            l.p50 as f64 / 1e3,
            l.p99 as f64 / 1e3,
            l.p999 as f64 / 1e3,
            l.max as f64 / 1e3
        ),
    ));
}

/// "RT thread": the latest statistics of the RT loop. WARN on overruns, allocations, page faults after warm-up,
/// drops or without SCHED_FIFO; ERROR once it stopped; WARN "No statistics yet" before the first report.
pub fn rt_thread(prefix: &str, stats: Option<&RtStats>, exited: bool) -> DiagnosticStatus {
    let name = format!("{prefix}: RT thread");
    let Some(s) = stats else {
        return DiagnosticStatus {
            level: if exited { ERROR } else { WARN },
            name,
            message: if exited {
                "Stopped"
            } else {
                "No statistics yet"
            }
            .to_owned(),
            hardware_id: String::new(),
            values: Vec::new(),
        };
    };
    let mut problems = Vec::new();
    if s.overruns > 0 {
        problems.push(format!("{} overruns", s.overruns));
    }
    if s.allocations > 0 {
        problems.push(format!("{} allocations", s.allocations));
    }
    if s.page_faults > 0 {
        problems.push(format!("{} page faults", s.page_faults));
    }
    if s.ring_drops.total() > 0 {
        problems.push(format!("{} ring drops", s.ring_drops.total()));
    }
    let scheduler = match s.scheduler {
        SchedulerMode::Fifo { priority } => format!("SCHED_FIFO {priority}"),
        SchedulerMode::Fallback => {
            problems.push("no SCHED_FIFO".to_owned());
            "SCHED_OTHER".to_owned()
        }
    };
    let (level, message) = if exited {
        (ERROR, "Stopped".to_owned())
    } else if problems.is_empty() {
        (OK, "Running".to_owned())
    } else {
        (WARN, problems.join(", "))
    };
    let mut values = vec![
        kv("Scheduler", scheduler),
        kv("Period [µs]", s.period_ns / 1000),
        kv("Cycles", s.cycles),
        kv("Overruns", s.overruns),
        kv("Skipped periods", s.skipped_periods),
        kv(
            "Allocations",
            if s.allocator_installed {
                s.allocations.to_string()
            } else {
                "not counted".to_owned()
            },
        ),
        kv(
            "Page faults (major)",
            format!("{} ({})", s.page_faults, s.page_faults_major),
        ),
    ];
    latency(&mut values, "Cycle", &s.cycle_ns);
    latency(&mut values, "Wake-up latency", &s.wakeup_latency_ns);
    values.extend([
        kv("Ring drops", s.ring_drops.total()),
        kv("Links connected", s.links.connected),
        kv("Frames received", s.links.frames_rx),
        kv("Frames rejected", s.links.frames_rejected),
        kv("Frames sent", s.links.frames_tx),
        kv("Watchdog stops", s.watchdog_stops),
        kv("Odometry samples", s.odometry_samples),
    ]);
    DiagnosticStatus {
        level,
        name,
        message,
        hardware_id: String::new(),
        values,
    }
}

// ---- Aseba switch (hostile input: refused, dropped and over-budget frames per client) --------

/// "Aseba switch": its totals and each client's counters (connected ones, then the last that
/// left). WARN while something was refused or dropped, saying what.
pub fn switch(prefix: &str, r: &crate::switch::SwitchReport) -> DiagnosticStatus {
    let t = &r.totals;
    let problems: Vec<String> = [
        (t.oversize, "oversize frames refused"),
        (t.over_budget, "frames over a link's budget"),
        (t.queue_drops, "frames dropped for clients that do not read"),
    ]
    .iter()
    .filter(|(n, _)| *n > 0)
    .map(|(n, what)| format!("{n} {what}"))
    .collect();
    let mut values = vec![
        kv("Clients connected", t.connected),
        kv("Clients accepted", t.accepted),
        kv("Frames from clients", t.frames_in),
        kv("Frames rejected", t.frames_rejected),
        kv("Oversize frames refused", t.oversize),
        kv("Frames over budget", t.over_budget),
        kv("Queue drops", t.queue_drops),
        kv("Largest payload [bytes]", r.max_payload),
        kv("Client queue [bytes]", r.client_queue),
    ];
    values.extend(r.clients.iter().map(|c| {
        kv(
            &format!("Client {} ({})", c.id, c.peer),
            format!(
                "{}; frames {}, rejected {}, oversize {}, over budget {}, queue drops {}",
                if c.connected { "connected" } else { "left" },
                c.frames_in,
                c.rejected,
                c.oversize,
                c.over_budget,
                c.queue_drops
            ),
        )
    }));
    DiagnosticStatus {
        level: if problems.is_empty() { OK } else { WARN },
        name: format!("{prefix}: Aseba switch"),
        message: if problems.is_empty() {
            "OK".to_owned()
        } else {
            problems.join(", ")
        },
        hardware_id: String::new(),
        values,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use handoff::{LinkTotals, RingDrops};

    fn stats() -> RtStats {
        RtStats {
            hops: Default::default(),
            elapsed_ns: 10_000_000_000,
            period_ns: 1_000_000,
            cycles: 10_000,
            overruns: 0,
            skipped_periods: 0,
            allocations: 0,
            allocator_installed: true,
            page_faults: 0,
            page_faults_major: 0,
            page_faults_warmup: 12,
            cycle_ns: LatencySummary {
                count: 10_000,
                p50: 2_500,
                p99: 9_000,
                p999: 15_000,
                max: 40_000,
                ..Default::default()
            },
            wakeup_latency_ns: LatencySummary::default(),
            ring_drops: RingDrops::default(),
            links: LinkTotals::default(),
            watchdog_stops: 1,
            speed_frames: 0,
            odometry_samples: 5,
            scheduler: SchedulerMode::Fifo { priority: 50 },
            controllers: Default::default(),
        }
    }

    fn value<'a>(s: &'a DiagnosticStatus, key: &str) -> &'a str {
        &s.values.iter().find(|kv| kv.key == key).unwrap().value
    }

    #[test]
    fn healthy_rt_thread_is_ok_with_its_figures() {
        let s = rt_thread("asebaros", Some(&stats()), false);
        assert_eq!((s.level, s.message.as_str()), (OK, "Running"));
        assert_eq!(s.name, "asebaros: RT thread");
        assert_eq!(value(&s, "Scheduler"), "SCHED_FIFO 50");
        assert_eq!(
            value(&s, "Cycle [µs] p50/p99/p99.9/max"),
            "2.5/9.0/15.0/40.0"
        );
        assert_eq!(value(&s, "Watchdog stops"), "1");
    }

    #[test]
    fn rt_problems_are_warnings_that_say_what() {
        let mut st = stats();
        st.overruns = 3;
        st.allocations = 2;
        st.ring_drops.frames_to_nrt = 4;
        st.scheduler = SchedulerMode::Fallback;
        let s = rt_thread("x", Some(&st), false);
        assert_eq!(s.level, WARN);
        assert_eq!(
            s.message,
            "3 overruns, 2 allocations, 4 ring drops, no SCHED_FIFO"
        );
        assert_eq!(rt_thread("x", Some(&st), true).level, ERROR);
        let none = rt_thread("x", None, false);
        assert_eq!(
            (none.level, none.message.as_str()),
            (WARN, "No statistics yet")
        );
        st.allocator_installed = false;
        assert_eq!(
            value(&rt_thread("x", Some(&st), false), "Allocations"),
            "not counted"
        );
    }

    #[test]
    fn the_switch_status_counts_per_client_and_warns_on_drops() {
        use crate::switch::{ClientStats, SwitchReport, SwitchStats};
        let client = |id, oversize, connected| ClientStats {
            id,
            peer: format!("127.0.0.1:{}", 40000 + id),
            connected,
            frames_in: 10,
            rejected: 0,
            oversize,
            over_budget: 0,
            queue_drops: 0,
        };
        let mut r = SwitchReport {
            totals: SwitchStats {
                accepted: 2,
                connected: 1,
                frames_in: 20,
                ..Default::default()
            },
            max_payload: 516,
            client_queue: 4096,
            clients: vec![client(2, 0, true), client(1, 0, false)],
        };
        let s = switch("asebaros", &r);
        assert_eq!((s.level, s.name.as_str()), (OK, "asebaros: Aseba switch"));
        assert_eq!(value(&s, "Largest payload [bytes]"), "516");
        r.totals.oversize = 1;
        r.totals.over_budget = 7;
        r.clients[1] = client(1, 1, false);
        let s = switch("asebaros", &r);
        assert_eq!(s.level, WARN);
        assert_eq!(
            s.message,
            "1 oversize frames refused, 7 frames over a link's budget"
        );
        assert_eq!(
            value(&s, "Client 1 (127.0.0.1:40001)"),
            "left; frames 10, rejected 0, oversize 1, over budget 0, queue drops 0"
        );
    }
}
