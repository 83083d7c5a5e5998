//! Tests of the report.
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
            refused_at_exit: 0,
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
    assert_eq!(lines.len(), 8, "{text}");
    assert!(lines[0].starts_with("hop") && lines[0].contains("p99 [µs]"));
    let cells: Vec<&str> = lines[1].split_whitespace().collect();
    assert_eq!(
        cells[cells.len() - 4..],
        ["2.0", "9.5", "30.0", "100"],
        "{text}"
    );
    assert!(lines[3].starts_with("odometry: publish -> returned") && lines[3].ends_with("no ROS"));
    assert!(
        lines[4].starts_with("odometry: wire -> odom published") && lines[4].ends_with("no ROS")
    );
    assert_eq!(lines[7], "odometry samples dropped (publisher behind): 2");

    let ros = plain.with_ros_hops(RosHops {
        handed_to_publish: summary(15_000, 60_000, 90_000, 99),
        publish: summary(30_000, 70_000, 120_000, 99),
        cmd_vel_to_set_point: LatencySummary::default(),
        ..RosHops::default()
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

#[test]
fn the_slowest_odometry_samples_are_split_into_their_hops() {
    let mut slowest = [handoff::OdomTrace::default(); handoff::SLOWEST_ODOM];
    slowest[0] = handoff::OdomTrace {
        wire_ns: 1_000,
        decoded_ns: 3_000,
        handed_ns: 4_000,
        publish_ns: 54_000,
        odom_ns: 94_000,
    };
    let r = Report::new(&stats(), None, None).with_ros_hops(RosHops {
        slowest,
        ..RosHops::default()
    });
    let v: serde_json::Value = serde_json::from_str(&r.to_json()).unwrap();
    // the unused places are left out
    let s = v["odom_slowest"].as_array().unwrap();
    assert_eq!(s.len(), 1, "{v}");
    assert_eq!(
        (
            &s[0]["decode_ns"],
            &s[0]["hand_ns"],
            &s[0]["wait_ns"],
            &s[0]["publish_ns"],
            &s[0]["total_ns"]
        ),
        (
            &serde_json::json!(2_000),
            &serde_json::json!(1_000),
            &serde_json::json!(50_000),
            &serde_json::json!(40_000),
            &serde_json::json!(93_000)
        )
    );
    // without ROS: an empty list
    let plain = Report::new(&stats(), None, None);
    let v: serde_json::Value = serde_json::from_str(&plain.to_json()).unwrap();
    assert_eq!(v["odom_slowest"], serde_json::json!([]));
}
