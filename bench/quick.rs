//! Criterion settings shared by the benches of the workspace: `THYMIO_BENCH_QUICK=1` shortens
//! every measurement (warm-up 0.5 s, 1 s, 20 samples) so that the whole suite stays short.
use criterion::Criterion;
use std::time::Duration;

/// The Criterion configuration of every criterion bench.
pub fn criterion() -> Criterion {
    let c = Criterion::default();
    if std::env::var("THYMIO_BENCH_QUICK").is_ok_and(|v| v == "1") {
        c.warm_up_time(Duration::from_millis(500))
            .measurement_time(Duration::from_secs(1))
            .sample_size(20)
    } else {
        c
    }
}
