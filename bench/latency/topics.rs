//! The `topics` section: checks that each same-work floor (floor_same.rs) publishes what thymio-rt at its defaults
//! publishes from the robot's frames, on ROS 2 and (when it can run here) ROS 1. Each of the four runs against a new
//! Playground robot loaded with the driver script; a listener (bench/latency/topics_check.py) subscribes to every
//! topic published, so that the driver publishes even the topics it skips without a subscriber, and counts their
//! messages for a few seconds. It fails, naming the topics, if
//! - a topic of the floor is not published by the driver, or with another type (the floor would do more);
//! - a topic that brought the driver's listener messages at the robot's rates (two or more in the window) is not one
//!   of the floor's, besides those of [`not_from_frames`] (the floor would do less);
//! - a topic of the floor is not advertised by it, or one the driver fed is not fed by the floor.
//!
//! Both listings, with the messages counted, go to target/bench-results/topics.json.

use crate::e2e::{self, Driver, Env};
use serde_json::json;
use std::collections::BTreeMap;
use std::process::Command;
use std::time::Duration;

/// Whether the driver's topic `t` is left out of the comparison: ROS's own topics and the driver's internal ones, what
/// it publishes at its own pace (diagnostics, the action servers' status) or once (latched state), and the extended
/// joint states (`thymio_driver/joint_states`: only while subscribed, at a rate the driver asks of the robot's RT
/// thread; no row of the bench subscribes to them).
fn not_from_frames(t: &str) -> bool {
    [
        "/rosout",
        "/rosout_agg",
        "/parameter_events",
        "/diagnostics",
        "/tf_static",
    ]
    .contains(&t)
        || t == "/thymio_driver/joint_states"
        || t.starts_with("/_thymio_rt/")
        || t.ends_with("/status")
}

/// How long the listener counts messages.
const WINDOW_S: u64 = 5;

/// A listing: topic → (type, messages in the window).
type Listing = BTreeMap<String, (String, u64)>;

/// The listing of `driver` against a new robot, with ROS 2 `domain` or its ROS 1 master.
fn listing(env: &Env, driver: &Driver, domain: u32) -> Result<Listing, String> {
    let pg = crate::playground::start(&env.out.join("playground"), 1)?;
    let port = pg.ports[0];
    let limit = Duration::from_secs(120);
    let mut p = e2e::start_driver(env, driver, port, port, domain, limit, None, None)?;
    let (mut c, ros) = match driver {
        Driver::ThymioRtRos1 { master } | Driver::FloorSameRos1 { master } => {
            let mut c = Command::new(crate::ros1::PYTHON);
            crate::ros1::env(&mut c, *master);
            (c, "1")
        }
        _ => {
            let mut c = Command::new(&env.python);
            e2e::ros_env(&mut c, domain);
            (c, "2")
        }
    };
    c.arg(env.root.join("bench/latency/topics_check.py"))
        .args([ros, &WINDOW_S.to_string()]);
    let out = c.output().map_err(|e| format!("topics_check.py: {e}"))?;
    p.interrupt();
    let _ = p.wait(Duration::from_secs(20));
    if !out.status.success() {
        return Err(format!(
            "topics_check.py: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let last = text.lines().last().unwrap_or_default();
    let raw: BTreeMap<String, (String, u64)> =
        serde_json::from_str(last).map_err(|e| format!("topics_check.py: {e}: {last}"))?;
    Ok(raw)
}

/// What is wrong with the floor's listing against the driver's (empty: the same topics).
fn compare(driver: &Listing, floor: &Listing, names: &[String]) -> Vec<String> {
    let mut problems = Vec::new();
    let expected = crate::floor_same::topics(names);
    for t in &expected {
        match (driver.get(t), floor.get(t)) {
            (None, _) => problems.push(format!("{t}: not published by the driver")),
            (_, None) => problems.push(format!("{t}: not advertised by the floor")),
            (Some(d), Some(f)) if d.0 != f.0 => problems.push(format!(
                "{t}: the driver's type {}, the floor's {}",
                d.0, f.0
            )),
            (Some(d), Some(f)) if d.1 >= 2 && f.1 == 0 => problems.push(format!(
                "{t}: the driver sent {} message(s), the floor none",
                d.1
            )),
            _ => {}
        }
    }
    for (t, (_, n)) in driver {
        if *n >= 2 && !expected.contains(t) && !not_from_frames(t) {
            problems.push(format!(
                "{t}: the driver sent {n} message(s) in {WINDOW_S} s, the floor has no such topic"
            ));
        }
    }
    problems
}

fn to_json(l: &Listing) -> serde_json::Value {
    json!(l
        .iter()
        .map(|(t, (ty, n))| (t.clone(), json!({"type": ty, "messages": n})))
        .collect::<serde_json::Map<_, _>>())
}

/// Runs the section; an error names every difference.
pub fn run(env: &Env) -> Result<(), String> {
    let domain = 91 + std::process::id() % 8;
    let ours = Driver::ThymioRt {
        extra: Vec::new(),
        record: false,
    };
    let mut pairs = vec![("ROS 2", ours, Driver::FloorSame, None)];
    if let Some(reason) = crate::ros1::missing() {
        eprintln!("topics: ROS 1 skipped: {reason}");
    } else {
        // a master of its own for each listing: nothing one leaves registered shows in the other's
        let (a, b) = (crate::free_port()?, crate::free_port()?);
        pairs.push((
            "ROS 1",
            Driver::ThymioRtRos1 { master: a },
            Driver::FloorSameRos1 { master: b },
            Some((a, b)),
        ));
    }
    let names = crate::floor_same::Ids::of_script()?.names;
    let mut problems = Vec::new();
    let mut report = serde_json::Map::new();
    for (ros, ours, floor, masters) in pairs {
        let _masters = match masters {
            Some((a, b)) => Some((
                crate::ros1::master(a, &e2e::thymio_rt_params())?,
                crate::ros1::master(b, &e2e::thymio_rt_params())?,
            )),
            None => None,
        };
        eprintln!("topics: {ros}: thymio-rt, then the same-work floor ({WINDOW_S} s each)");
        let d = listing(env, &ours, domain)?;
        let f = listing(env, &floor, domain)?;
        let found = compare(&d, &f, &names);
        eprintln!("  {ros}: topic, driver's messages, floor's messages ({WINDOW_S} s)");
        for t in d.keys().chain(f.keys().filter(|t| !d.contains_key(*t))) {
            let n = |l: &Listing| l.get(t).map_or("-".into(), |(_, n)| n.to_string());
            eprintln!("    {t}: {} / {}", n(&d), n(&f));
        }
        for p in &found {
            eprintln!("  {ros}: DIFFERENT: {p}");
        }
        report.insert(
            ros.into(),
            json!({"thymio_rt": to_json(&d), "floor_same": to_json(&f), "problems": found}),
        );
        problems.extend(found.into_iter().map(|p| format!("{ros}: {p}")));
    }
    crate::write_json("topics", &serde_json::Value::Object(report));
    if problems.is_empty() {
        eprintln!("topics: the same-work floors publish the driver's topics from the frames");
        Ok(())
    } else {
        Err(format!(
            "the same-work floors differ from the driver: {}",
            problems.join("; ")
        ))
    }
}
