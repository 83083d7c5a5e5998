//! The JSON run report (`thymio-rt run … --duration S --report FILE.json`): RT statistics, the
//! final odometry and link counters. Built from [`RtStats`] alone, so it works with the ROS 2
//! bridge disabled.

use crate::controller_report::ControllersSection;
use crate::nrt_connector::ConnectorStats;
use handoff::{LatencySummary, OdomSample, RingDrops, RosHops, RtStats, SchedulerMode};
use serde::Serialize;

/// The whole report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    /// RT thread.
    pub rt: RtSection,
    /// Final odometry of the reported robot (zeros if none).
    pub odom: OdomSection,
    /// Links.
    pub link: LinkSection,
    /// Every hop the driver times between the wire and ROS.
    pub hops: HopsSection,
    /// The RT controllers' time, overruns and stops over budget (named with
    /// [`Report::with_controller_names`]).
    pub controllers: ControllersSection,
    /// Aseba switch counters, totals and per client (`nrt_engine::switch::SwitchReport`), when the
    /// switch runs; set with [`Report::with_switch`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub switch: Option<serde_json::Value>,
    /// The flight recorder's account (files, messages per topic, bytes, records the RT thread dropped, the error
    /// that stopped it), when the run recorded; set with [`Report::with_recording`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recording: Option<serde_json::Value>,
    /// The slowest odometry samples from the wire to `odom` published, slowest first, each hop by hop (empty
    /// without ROS; set with [`Report::with_ros_hops`]): where the tail's time went.
    pub odom_slowest: Vec<SlowOdom>,
}

/// One odometry sample's path through the driver (`odom_slowest`): when the RT thread found its bytes
/// readable (CLOCK_MONOTONIC ns) and the time of each hop after it (ns). Read back by the latency benchmark.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct SlowOdom {
    /// The RT thread found its bytes readable (CLOCK_MONOTONIC ns).
    pub wire_ns: u64,
    /// Wire → decoded and integrated (RT thread).
    pub decode_ns: u64,
    /// Decoded → handed to the publisher thread (RT thread).
    pub hand_ns: u64,
    /// Handed → the publisher thread starts publishing it (its wake-up and any sample before it).
    pub wait_ns: u64,
    /// Publish start → `odom` published.
    pub publish_ns: u64,
    /// Wire → `odom` published.
    pub total_ns: u64,
}

impl From<&handoff::OdomTrace> for SlowOdom {
    fn from(t: &handoff::OdomTrace) -> Self {
        SlowOdom {
            wire_ns: t.wire_ns,
            decode_ns: t.decoded_ns.saturating_sub(t.wire_ns),
            hand_ns: t.handed_ns.saturating_sub(t.decoded_ns),
            wait_ns: t.publish_ns.saturating_sub(t.handed_ns),
            publish_ns: t.odom_ns.saturating_sub(t.publish_ns),
            total_ns: t.total_ns(),
        }
    }
}

/// Percentiles of a latency histogram (ns).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Quantiles {
    /// Samples.
    pub count: u64,
    /// Smallest.
    pub min: u64,
    /// Mean.
    pub mean: u64,
    /// Median.
    pub p50: u64,
    /// 90th percentile.
    pub p90: u64,
    /// 99th percentile.
    pub p99: u64,
    /// 99.9th percentile.
    pub p999: u64,
    /// Largest.
    pub max: u64,
}

impl From<LatencySummary> for Quantiles {
    fn from(s: LatencySummary) -> Self {
        Quantiles {
            count: s.count,
            min: if s.count == 0 { 0 } else { s.min },
            mean: s.mean,
            p50: s.p50,
            p90: s.p90,
            p99: s.p99,
            p999: s.p999,
            max: s.max,
        }
    }
}

/// `hops` object: the latency of every hop the driver times (ns), in path order, so that a
/// user sees where time goes between the wire and ROS on their machine. The ROS side's hops are
/// `null` without the ROS 2 bridge (set with [`Report::with_ros_hops`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct HopsSection {
    /// Odometry: bytes found readable → frame decoded and acted on (RT thread).
    pub odom_wire_to_decoded_ns: Quantiles,
    /// Odometry: handed over by the RT thread → publish start (publisher thread).
    pub odom_handed_to_publish_ns: Option<Quantiles>,
    /// Odometry: publish start → `odom`, `/tf` and `joint_states` returned (publisher thread).
    pub odom_publish_ns: Option<Quantiles>,
    /// Odometry: bytes found readable (RT thread) → `odom` publish returned: the driver's whole part of the
    /// wire → `odom` hop.
    pub odom_wire_to_published_ns: Option<Quantiles>,
    /// Odometry samples dropped because the publisher thread was behind.
    pub odom_out_drops: u64,
    /// cmd_vel: taken from ROS → set-point stored (hot thread).
    pub cmd_vel_to_set_point_ns: Option<Quantiles>,
    /// cmd_vel: set-point stored → speed frame written to the link (RT thread).
    pub cmd_set_point_to_wire_ns: Quantiles,
}

impl HopsSection {
    /// The hops as a text table (µs), one line per hop in path order, then the drops.
    pub fn to_text(&self) -> String {
        let rows: [(&str, Option<Quantiles>); 6] = [
            (
                "odometry: wire -> decoded (RT)",
                Some(self.odom_wire_to_decoded_ns),
            ),
            (
                "odometry: handed -> publish start",
                self.odom_handed_to_publish_ns,
            ),
            ("odometry: publish -> returned", self.odom_publish_ns),
            (
                "odometry: wire -> odom published",
                self.odom_wire_to_published_ns,
            ),
            (
                "cmd_vel: taken -> set-point stored",
                self.cmd_vel_to_set_point_ns,
            ),
            (
                "cmd_vel: set-point -> wire (RT)",
                Some(self.cmd_set_point_to_wire_ns),
            ),
        ];
        let mut out = format!(
            "{:<36} {:>10} {:>10} {:>10} {:>8}\n",
            "hop", "p50 [µs]", "p99 [µs]", "max [µs]", "samples"
        );
        let us = |ns: u64| format!("{:.1}", ns as f64 / 1e3);
        for (name, q) in rows {
            match q {
                Some(q) if q.count > 0 => out.push_str(&format!(
                    "{name:<36} {:>10} {:>10} {:>10} {:>8}\n",
                    us(q.p50),
                    us(q.p99),
                    us(q.max),
                    q.count
                )),
                Some(_) => out.push_str(&format!("{name:<36} {:>10}\n", "no samples")),
                None => out.push_str(&format!("{name:<36} {:>10}\n", "no ROS")),
            }
        }
        out.push_str(&format!(
            "odometry samples dropped (publisher behind): {}\n",
            self.odom_out_drops
        ));
        out
    }
}

/// Ring drops by cause.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct DropsDetail {
    /// Received frames not forwarded to NRT.
    pub frames_to_nrt: u64,
    /// Events not delivered to NRT.
    pub events: u64,
    /// Frames not written (transmit buffer full).
    pub tx_overflow: u64,
    /// Invalid records from NRT.
    pub invalid_from_nrt: u64,
    /// Frames from NRT refused while the robots were being stopped.
    pub refused_at_exit: u64,
}

impl From<RingDrops> for DropsDetail {
    fn from(d: RingDrops) -> Self {
        DropsDetail {
            frames_to_nrt: d.frames_to_nrt,
            events: d.events,
            tx_overflow: d.tx_overflow,
            invalid_from_nrt: d.invalid_from_nrt,
            refused_at_exit: d.refused_at_exit,
        }
    }
}

/// `rt` object.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RtSection {
    /// Cycles run.
    pub cycles: u64,
    /// Cycles that ended past their next deadline.
    pub overruns: u64,
    /// Periods skipped to recover.
    pub skipped_periods: u64,
    /// Whether allocations on the RT thread were counted (the counting allocator,
    /// `rt::alloc::CountingAlloc`, is the binary's global allocator).
    pub allocation_counting: bool,
    /// Heap allocations on the RT thread after warm-up; `None` (JSON `null`) when they were
    /// not counted: never a 0 that measures nothing.
    pub allocations: Option<u64>,
    /// Page faults of the RT thread after warm-up.
    pub page_faults: u64,
    /// Of which major.
    pub page_faults_major: u64,
    /// Page faults during warm-up.
    pub page_faults_warmup: u64,
    /// Cycle work time.
    pub cycle_ns: Quantiles,
    /// Wake-up latency.
    pub wakeup_latency_ns: Quantiles,
    /// All ring drops.
    pub ring_drops: u64,
    /// Ring drops by cause.
    pub ring_drops_detail: DropsDetail,
    /// `"FIFO"` or `"fallback"`.
    pub scheduler: &'static str,
    /// SCHED_FIFO priority, if obtained.
    pub priority: Option<u8>,
    /// Period (ns; 0 = free-running).
    pub period_ns: u64,
    /// Run time (s).
    pub elapsed_s: f64,
    /// Speed frames written.
    pub speed_frames: u64,
    /// Odometry samples.
    pub odometry_samples: u64,
}

/// `odom` object.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OdomSection {
    /// x (m).
    pub x: f64,
    /// y (m).
    pub y: f64,
    /// Heading (rad).
    pub theta: f64,
    /// Robot slot reported, if any had odometry.
    pub robot: Option<u8>,
    /// Samples of that robot (sequence number + 1).
    pub samples: u64,
}

/// `link` object.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LinkSection {
    /// Re-connections after a loss.
    pub reconnects: u64,
    /// Frames rejected by the reassemblers.
    pub frames_rejected: u64,
    /// Bytes dropped while resynchronising.
    pub bytes_discarded: u64,
    /// Whether at least one link is connected at the end.
    pub connected: bool,
    /// Links connected at the end.
    pub links_connected: u8,
    /// cmd_vel watchdog stops.
    pub watchdog_stops: u64,
    /// Frames received.
    pub frames_rx: u64,
    /// Frames queued for writing.
    pub frames_tx: u64,
    /// Bytes received.
    pub bytes_rx: u64,
    /// Bytes written.
    pub bytes_tx: u64,
}

impl Report {
    /// Builds the report from RT statistics, the final odometry sample of the robot to report
    /// (if any) and the connector's counters (reconnections; 0 without a connector).
    pub fn new(
        stats: &RtStats,
        odom: Option<&OdomSample>,
        connector: Option<ConnectorStats>,
    ) -> Self {
        let (scheduler, priority) = match stats.scheduler {
            SchedulerMode::Fifo { priority } => ("FIFO", Some(priority)),
            SchedulerMode::Fallback => ("fallback", None),
        };
        let l = stats.links;
        Report {
            rt: RtSection {
                cycles: stats.cycles,
                overruns: stats.overruns,
                skipped_periods: stats.skipped_periods,
                allocation_counting: stats.allocator_installed,
                allocations: stats.allocator_installed.then_some(stats.allocations),
                page_faults: stats.page_faults,
                page_faults_major: stats.page_faults_major,
                page_faults_warmup: stats.page_faults_warmup,
                cycle_ns: stats.cycle_ns.into(),
                wakeup_latency_ns: stats.wakeup_latency_ns.into(),
                ring_drops: stats.ring_drops.total(),
                ring_drops_detail: stats.ring_drops.into(),
                scheduler,
                priority,
                period_ns: stats.period_ns,
                elapsed_s: stats.elapsed_ns as f64 / 1e9,
                speed_frames: stats.speed_frames,
                odometry_samples: stats.odometry_samples,
            },
            odom: OdomSection {
                x: odom.map_or(0.0, |o| o.pose.x),
                y: odom.map_or(0.0, |o| o.pose.y),
                theta: odom.map_or(0.0, |o| o.pose.theta),
                robot: odom.map(|o| o.robot.0),
                samples: odom.map_or(0, |o| o.seq as u64 + 1),
            },
            link: LinkSection {
                reconnects: connector.map_or(0, |c| c.reconnects),
                frames_rejected: l.frames_rejected,
                bytes_discarded: l.bytes_discarded,
                connected: l.connected > 0,
                links_connected: l.connected,
                watchdog_stops: stats.watchdog_stops,
                frames_rx: l.frames_rx,
                frames_tx: l.frames_tx,
                bytes_rx: l.bytes_rx,
                bytes_tx: l.bytes_tx,
            },
            hops: HopsSection {
                odom_wire_to_decoded_ns: stats.hops.wire_to_decoded.into(),
                odom_handed_to_publish_ns: None,
                odom_publish_ns: None,
                odom_wire_to_published_ns: None,
                odom_out_drops: stats.hops.odometry_out_drops,
                cmd_vel_to_set_point_ns: None,
                cmd_set_point_to_wire_ns: stats.hops.cmd_to_wire.into(),
            },
            controllers: (&stats.controllers).into(),
            switch: None,
            recording: None,
            odom_slowest: Vec::new(),
        }
    }

    /// Adds the hops the ROS side timed.
    pub fn with_ros_hops(mut self, h: RosHops) -> Self {
        self.hops.odom_handed_to_publish_ns = Some(h.handed_to_publish.into());
        self.hops.odom_publish_ns = Some(h.publish.into());
        self.hops.cmd_vel_to_set_point_ns = Some(h.cmd_vel_to_set_point.into());
        self.hops.odom_wire_to_published_ns = Some(h.wire_to_odom.into());
        self.odom_slowest = h
            .slowest
            .iter()
            .filter(|t| t.wire_ns != 0)
            .map(SlowOdom::from)
            .collect();
        self
    }

    /// Names the controllers' rows (the registry's names, in order).
    pub fn with_controller_names(mut self, names: &[&str]) -> Self {
        self.controllers.name(names);
        self
    }

    /// Adds the Aseba switch's counters (any serializable value; the run reports
    /// `nrt_engine::switch::SwitchReport`).
    pub fn with_switch(mut self, switch: impl Serialize) -> Self {
        self.switch = serde_json::to_value(switch).ok();
        self
    }

    /// Adds the flight recorder's account (any serializable value; the run reports
    /// `nrt_recorder::flight::FlightSummary::report`).
    pub fn with_recording(mut self, recording: impl Serialize) -> Self {
        self.recording = serde_json::to_value(recording).ok();
        self
    }

    /// Pretty JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
    }

    /// Writes the JSON to `path`.
    pub fn write(&self, path: &std::path::Path) -> std::io::Result<()> {
        std::fs::write(path, self.to_json() + "\n")
    }
}

#[cfg(test)]
mod tests;
