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
        let rows: [(&str, Option<Quantiles>); 5] = [
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
}

impl From<RingDrops> for DropsDetail {
    fn from(d: RingDrops) -> Self {
        DropsDetail {
            frames_to_nrt: d.frames_to_nrt,
            events: d.events,
            tx_overflow: d.tx_overflow,
            invalid_from_nrt: d.invalid_from_nrt,
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
                odom_out_drops: stats.hops.odometry_out_drops,
                cmd_vel_to_set_point_ns: None,
                cmd_set_point_to_wire_ns: stats.hops.cmd_to_wire.into(),
            },
            controllers: (&stats.controllers).into(),
            switch: None,
            recording: None,
        }
    }

    /// Adds the hops the ROS side timed.
    pub fn with_ros_hops(mut self, h: RosHops) -> Self {
        self.hops.odom_handed_to_publish_ns = Some(h.handed_to_publish.into());
        self.hops.odom_publish_ns = Some(h.publish.into());
        self.hops.cmd_vel_to_set_point_ns = Some(h.cmd_vel_to_set_point.into());
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
mod tests {
    use super::*;
    use handoff::{LinkId, LinkTotals, NodeId, Pose2, RobotId, Twist2};

    fn stats() -> RtStats {
        RtStats {
            hops: Default::default(),
            elapsed_ns: 2_500_000_000,
            period_ns: 1_000_000,
            cycles: 2500,
            overruns: 3,
            skipped_periods: 4,
            allocations: 0,
            allocator_installed: true,
            page_faults: 0,
            page_faults_major: 0,
            page_faults_warmup: 12,
            cycle_ns: LatencySummary {
                count: 2500,
                min: 900,
                mean: 1500,
                p50: 1400,
                p90: 2000,
                p99: 5000,
                p999: 9000,
                max: 20_000,
            },
            wakeup_latency_ns: LatencySummary::default(),
            ring_drops: RingDrops {
                frames_to_nrt: 1,
                events: 2,
                tx_overflow: 0,
                invalid_from_nrt: 0,
            },
            links: LinkTotals {
                connected: 1,
                frames_rejected: 5,
                bytes_discarded: 17,
                ..Default::default()
            },
            watchdog_stops: 2,
            speed_frames: 10,
            odometry_samples: 50,
            scheduler: SchedulerMode::Fifo { priority: 50 },
            controllers: Default::default(),
        }
    }

    #[test]
    fn allocations_not_counted_are_null_not_zero() {
        let s = RtStats {
            allocator_installed: false,
            ..stats()
        };
        let v: serde_json::Value =
            serde_json::from_str(&Report::new(&s, None, None).to_json()).unwrap();
        assert_eq!(v["rt"]["allocation_counting"], false);
        assert!(v["rt"]["allocations"].is_null(), "{}", v["rt"]);
        let s = RtStats {
            allocations: 3,
            ..stats()
        };
        let v: serde_json::Value =
            serde_json::from_str(&Report::new(&s, None, None).to_json()).unwrap();
        assert_eq!(v["rt"]["allocations"], 3);
    }

    #[test]
    fn json_has_every_required_field() {
        let odom = OdomSample {
            robot: RobotId(0),
            node: NodeId(1),
            link: LinkId(0),
            seq: 49,
            wire_ns: 0,
            t_ns: 0,
            robot_ticks: None,
            dt: 0.05,
            pose: Pose2 {
                x: 1.5,
                y: -0.25,
                theta: 0.5,
            },
            twist: Twist2::default(),
            wheel_pos: [0.0; 2],
            wheel_vel: [0.0; 2],
        };
        let conn = ConnectorStats {
            reconnects: 1,
            ..Default::default()
        };
        let r = Report::new(&stats(), Some(&odom), Some(conn));
        let v: serde_json::Value = serde_json::from_str(&r.to_json()).unwrap();
        assert_eq!(v["rt"]["cycles"], 2500);
        assert_eq!(v["rt"]["overruns"], 3);
        assert_eq!(v["rt"]["allocations"], 0);
        assert_eq!(v["rt"]["allocation_counting"], true);
        assert_eq!(v["rt"]["page_faults"], 0);
        assert_eq!(v["rt"]["ring_drops"], 3);
        assert_eq!(v["rt"]["scheduler"], "FIFO");
        for k in ["p50", "p99", "p999", "max"] {
            assert!(v["rt"]["cycle_ns"][k].is_u64(), "{k}");
            assert!(v["rt"]["wakeup_latency_ns"][k].is_u64(), "{k}");
        }
        assert_eq!(v["rt"]["cycle_ns"]["p999"], 9000);
        assert_eq!(
            (v["odom"]["x"].as_f64(), v["odom"]["y"].as_f64()),
            (Some(1.5), Some(-0.25))
        );
        assert_eq!(v["odom"]["theta"], 0.5);
        assert_eq!(v["odom"]["samples"], 50);
        let l = &v["link"];
        assert_eq!(
            (l["reconnects"].as_u64(), l["frames_rejected"].as_u64()),
            (Some(1), Some(5))
        );
        assert_eq!(
            (l["bytes_discarded"].as_u64(), l["connected"].as_bool()),
            (Some(17), Some(true))
        );
        assert_eq!(l["watchdog_stops"], 2);
    }

    #[test]
    fn without_odometry_or_connector_the_report_is_still_complete() {
        let mut s = stats();
        s.scheduler = SchedulerMode::Fallback;
        let r = Report::new(&s, None, None);
        assert_eq!(r.rt.scheduler, "fallback");
        assert_eq!(
            (r.odom.x, r.odom.y, r.odom.theta, r.odom.robot),
            (0.0, 0.0, 0.0, None)
        );
        assert_eq!(r.link.reconnects, 0);
        let dir = std::env::temp_dir().join(format!("rt-report-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("r.json");
        r.write(&path).unwrap();
        let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        assert_eq!(v["rt"]["cycle_ns"]["max"], 20_000);
        std::fs::remove_dir_all(dir).unwrap();
    }

    fn summary(p50: u64, p99: u64, max: u64, count: u64) -> LatencySummary {
        LatencySummary {
            count,
            p50,
            p99,
            max,
            ..Default::default()
        }
    }

    #[test]
    fn every_hop_is_in_the_json_and_the_text() {
        let mut s = stats();
        s.hops.wire_to_decoded = summary(2_000, 9_500, 30_000, 100);
        s.hops.cmd_to_wire = summary(4_000, 8_000, 12_000, 20);
        s.hops.odometry_out_drops = 2;
        let plain = Report::new(&s, None, None);
        let v: serde_json::Value = serde_json::from_str(&plain.to_json()).unwrap();
        let h = &v["hops"];
        assert_eq!(h["odom_wire_to_decoded_ns"]["p99"], 9_500);
        assert_eq!(h["cmd_set_point_to_wire_ns"]["max"], 12_000);
        assert_eq!(h["odom_out_drops"], 2);
        assert!(
            h["odom_publish_ns"].is_null(),
            "without ROS: null, not zero"
        );
        let text = plain.hops.to_text();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 7, "{text}");
        assert!(lines[0].starts_with("hop") && lines[0].contains("p99 [µs]"));
        let cells: Vec<&str> = lines[1].split_whitespace().collect();
        assert_eq!(
            cells[cells.len() - 4..],
            ["2.0", "9.5", "30.0", "100"],
            "{text}"
        );
        assert!(
            lines[3].starts_with("odometry: publish -> returned") && lines[3].ends_with("no ROS")
        );
        assert_eq!(lines[6], "odometry samples dropped (publisher behind): 2");

        let ros = plain.with_ros_hops(RosHops {
            handed_to_publish: summary(15_000, 60_000, 90_000, 99),
            publish: summary(30_000, 70_000, 120_000, 99),
            cmd_vel_to_set_point: LatencySummary::default(),
        });
        let v: serde_json::Value = serde_json::from_str(&ros.to_json()).unwrap();
        assert_eq!(v["hops"]["odom_handed_to_publish_ns"]["p50"], 15_000);
        assert_eq!(v["hops"]["odom_publish_ns"]["max"], 120_000);
        assert_eq!(v["hops"]["cmd_vel_to_set_point_ns"]["count"], 0);
        let text = ros.hops.to_text();
        let lines: Vec<&str> = text.lines().collect();
        let cells: Vec<&str> = lines[2].split_whitespace().collect();
        assert_eq!(
            cells[cells.len() - 4..],
            ["15.0", "60.0", "90.0", "99"],
            "{text}"
        );
        assert!(lines[4].ends_with("no samples"), "{text}");
    }

    #[test]
    fn the_switch_section_is_there_only_when_given() {
        let r = Report::new(&stats(), None, None);
        let v: serde_json::Value = serde_json::from_str(&r.to_json()).unwrap();
        assert!(v.get("switch").is_none());
        let r = r.with_switch(serde_json::json!({"oversize": 3, "clients": [{"id": 1}]}));
        let v: serde_json::Value = serde_json::from_str(&r.to_json()).unwrap();
        assert_eq!(v["switch"]["oversize"], 3);
        assert_eq!(v["switch"]["clients"][0]["id"], 1);
    }
}
