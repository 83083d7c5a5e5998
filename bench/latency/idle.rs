//! The idle rows (issue 45): thymio-rt at its defaults with the robot connected, ROS 2 on and nobody subscribed,
//! at the shipped odometry rate (20 Hz) and at the benchmark's 100 Hz: CPU of a core, and per thread its share
//! and its wake-ups a second (context switches, voluntary or not), which is where idle time goes. Each point
//! runs against a new Aseba Playground robot, connected directly (no relay: nothing is timed).

use crate::e2e::{ros_env, thymio_rt, thymio_rt_params, Env};
use crate::procs::{thread_groups, thread_shares, thread_switches, Proc};
use serde_json::json;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// The odometry rates measured: (label, the driver script's MOTOR_PERIOD: odometry every n-th motor event of 100 Hz).
pub const RATES: [(&str, &str); 2] = [("20hz", "5"), ("100hz", crate::playground::MOTOR_PERIOD)];

/// One idle point: CPU of the process and, per thread group, (share of a core, wake-ups a second).
pub struct Point {
    pub cpu: f64,
    pub threads: BTreeMap<String, (f64, f64)>,
}

impl Point {
    /// The point's JSON for summary.json.
    pub fn to_json(&self) -> serde_json::Value {
        let threads: serde_json::Map<_, _> = self
            .threads
            .iter()
            .map(|(k, (cpu, wakes))| (k.clone(), json!({"cpu": cpu, "wakeups_per_s": wakes})))
            .collect();
        json!({"cpu": self.cpu, "threads": threads})
    }
}

/// thymio-rt at its defaults with `motor_period`, idle on a new Playground robot for `window` (after 3 s settled).
pub fn point(
    env: &Env,
    motor_period: &str,
    window: Duration,
    domain: u32,
) -> Result<Point, String> {
    let pg = crate::playground::start(&env.out.join("playground-idle"), 1)?;
    let mut params = thymio_rt_params();
    params.push(format!("script.constants.MOTOR_PERIOD:={motor_period}"));
    let mut c = thymio_rt(
        env,
        &pg.ports,
        &params,
        window + Duration::from_secs(60),
        None,
        None,
    )?;
    ros_env(&mut c, domain);
    let mut p = Proc::spawn("thymio-rt", c);
    p.wait_for("driver interface ready", Duration::from_secs(90))?;
    std::thread::sleep(Duration::from_secs(3));
    let pid = p.child.id();
    let (cpu0, threads0, switches0, t0) = (
        p.tree_cpu_seconds(),
        thread_groups(pid),
        thread_switches(pid),
        Instant::now(),
    );
    std::thread::sleep(window);
    let (cpu1, threads1, switches1) = (
        p.tree_cpu_seconds(),
        thread_groups(pid),
        thread_switches(pid),
    );
    let wall = t0.elapsed().as_secs_f64();
    p.interrupt();
    let _ = p.wait(Duration::from_secs(20));
    drop(pg);
    let shares = thread_shares(&threads0, &threads1, wall);
    let threads = shares
        .into_iter()
        .map(|(k, share)| {
            let n = |m: &BTreeMap<String, u64>| m.get(&k).copied().unwrap_or(0);
            let wakes = n(&switches1).saturating_sub(n(&switches0));
            (k, (share, wakes as f64 / wall))
        })
        .collect();
    Ok(Point {
        cpu: (cpu1 - cpu0) / wall,
        threads,
    })
}

/// Runs both rates, prints them and merges `"idle": {"20hz": …, "100hz": …}` into summary.json.
pub fn run(env: &Env, window: Duration) -> Result<(), String> {
    // domains above the scale section's (50..89), below the tests' (100..199)
    let domain = 90 + std::process::id() % 8;
    let mut out = serde_json::Map::new();
    for (i, (label, period)) in RATES.into_iter().enumerate() {
        eprintln!(
            "idle: thymio-rt at its defaults, odometry {label} (MOTOR_PERIOD {period}), ROS 2 on, no subscriber, for {} s",
            window.as_secs()
        );
        let p = point(env, period, window, domain + i as u32)?;
        let mut busiest: Vec<_> = p
            .threads
            .iter()
            .filter(|(_, (c, w))| *c > 0.0 || *w > 0.0)
            .collect();
        busiest.sort_by(|a, b| b.1 .0.total_cmp(&a.1 .0));
        eprintln!(
            "  idle {label}: CPU {:.2}% of a core ({})",
            p.cpu * 100.0,
            busiest
                .iter()
                .map(|(k, (c, w))| format!("{k} {:.2}% {w:.0}/s", c * 100.0))
                .collect::<Vec<_>>()
                .join(", ")
        );
        out.insert(label.to_owned(), p.to_json());
    }
    crate::update_summary(json!({ "idle": out }));
    Ok(())
}
