//! Wake-up latency of the RT loop's timing (cyclictest method, rt-practice.md §3.2): a thread
//! set up as the RT thread (affinity, SCHED_FIFO or SCHED_OTHER, mlockall) sleeps to absolute
//! 1 kHz deadlines on CLOCK_MONOTONIC with `rt::clock::sleep_until`, exactly as the RT loop does,
//! and records actual − planned wake-up. Optionally with a CPU-stress load on the other cores.

use hdrhistogram::Histogram;
use rt::clock::{monotonic_ns, sleep_until};
use rt::sched::{setup_current_thread, RtSetup};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// One configuration's result.
#[derive(Debug, Clone, serde::Serialize)]
pub struct WakeupResult {
    pub name: String,
    pub scheduler: String,
    pub stress: bool,
    pub period_us: u64,
    pub samples: u64,
    pub p50_us: f64,
    pub p99_us: f64,
    pub p999_us: f64,
    pub p9999_us: f64,
    pub max_us: f64,
    /// Wake-ups later than one period (overruns).
    pub overruns: u64,
    /// Histogram points (µs, cumulative fraction) for plots.
    pub cdf: Vec<(f64, f64)>,
}

/// Spins on every CPU but `rt_cpu` until `stop`.
fn stress(rt_cpu: usize, stop: Arc<AtomicBool>) -> Vec<std::thread::JoinHandle<()>> {
    let n = std::thread::available_parallelism().map_or(2, |n| n.get());
    (0..n)
        .filter(|c| *c != rt_cpu)
        .map(|cpu| {
            let stop = stop.clone();
            std::thread::spawn(move || {
                let _ = rt::sched::pin_current_thread(cpu);
                let mut x = 1u64;
                while !stop.load(Ordering::Relaxed) {
                    for _ in 0..10_000 {
                        x = std::hint::black_box(
                            x.wrapping_mul(6364136223846793005).wrapping_add(1),
                        );
                    }
                }
            })
        })
        .collect()
}

/// Runs one configuration for `duration`.
pub fn run(name: &str, fifo: bool, with_stress: bool, duration: Duration) -> WakeupResult {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    // THYMIO_RT_CPU selects the (isolated) core of the loop; the last one by default
    let rt_cpu = std::env::var("THYMIO_RT_CPU")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .filter(|c| *c < cpus)
        .unwrap_or(cpus - 1);
    let stop = Arc::new(AtomicBool::new(false));
    let loaders = if with_stress {
        stress(rt_cpu, stop.clone())
    } else {
        Vec::new()
    };
    let period = 1_000_000u64;
    let cycles = duration.as_nanos() as u64 / period;
    let (hist, scheduler, overruns) = std::thread::spawn(move || {
        let setup = RtSetup {
            cpu: Some(rt_cpu),
            priority: fifo.then_some(rt::sched::DEFAULT_PRIORITY),
            lock_memory: true,
            ..RtSetup::unprivileged()
        };
        let (summary, _dma) = setup_current_thread(&setup);
        let scheduler = format!("{:?}", summary.mode());
        let mut hist =
            Histogram::<u64>::new_with_bounds(1, 10_000_000_000, 3).expect("histogram bounds");
        let mut overruns = 0u64;
        let mut next = monotonic_ns() + period;
        for _ in 0..cycles {
            let _ = sleep_until(next);
            let now = monotonic_ns();
            let late = now.saturating_sub(next);
            hist.saturating_record(late.max(1));
            next += period;
            if now > next {
                // skip missed periods, never a burst
                overruns += 1;
                next += (now - next) / period * period + period;
            }
        }
        (hist, scheduler, overruns)
    })
    .join()
    .expect("timing thread");
    stop.store(true, Ordering::Relaxed);
    for l in loaders {
        let _ = l.join();
    }
    let us = |v: u64| v as f64 / 1000.0;
    let cdf = hist
        .iter_quantiles(2)
        .map(|it| (us(it.value_iterated_to()), it.quantile_iterated_to()))
        .collect();
    WakeupResult {
        name: name.into(),
        scheduler,
        stress: with_stress,
        period_us: period / 1000,
        samples: hist.len(),
        p50_us: us(hist.value_at_quantile(0.5)),
        p99_us: us(hist.value_at_quantile(0.99)),
        p999_us: us(hist.value_at_quantile(0.999)),
        p9999_us: us(hist.value_at_quantile(0.9999)),
        max_us: us(hist.max()),
        overruns,
        cdf,
    }
}
