//! Pure RT computations: one odometry step (wrap, calibration, arc, twist, joints), the arc
//! alone, and the velocity mapping (twist → capped wheel targets).
#[path = "quick.rs"]
mod quick;
use criterion::{black_box, criterion_group, criterion_main, Criterion};
use handoff::{Quadratic, RobotCalibration, Twist2};
use rt::mapping::map_twist;
use rt::odometry::{arc_step, Integrator, OdomInput};

fn odometry(c: &mut Criterion) {
    let mut g = c.benchmark_group("rt_odometry");
    let cal = RobotCalibration {
        left: Quadratic {
            q0: 0.001 / 2.93,
            q1: 1e-7,
        },
        ..Default::default()
    };
    let mut o = Integrator::default();
    let mut k: i16 = 0;
    g.bench_function("odometry_step", |b| {
        b.iter(|| {
            k = k.wrapping_add(7);
            let input = OdomInput {
                counts: [k, k.wrapping_add(3)],
                ticks: Some((k as u16).wrapping_mul(5)),
                t_ns: 0,
            };
            black_box(o.step(black_box(input), &cal, 100.0))
        })
    });
    g.bench_function("arc_step", |b| {
        b.iter(|| arc_step(black_box(0.010), black_box(0.012), black_box(0.0935)))
    });
    g.bench_function("map_twist_capped", |b| {
        b.iter(|| {
            map_twist(
                black_box(Twist2 {
                    linear: 0.15,
                    angular: 2.0,
                }),
                &cal,
            )
        })
    });
    g.finish();
}

criterion_group! {
    name = benches;
    config = quick::criterion();
    targets = odometry
}
criterion_main!(benches);
