//! Hops between the RT and NRT sides: the frame rings (same thread, and across threads as a
//! ping-pong whose half round trip is reported; waiting sides yield, so on a loaded machine the
//! figure includes scheduling), the cmd_vel live parameter and the
//! latest-value cell (triple buffer) under it, and the service ring pair.
#[path = "quick.rs"]
mod quick;
use criterion::{black_box, criterion_group, criterion_main, Criterion};
use handoff::{
    channels, latest, live_params, service, ChannelConfig, LinkId, LinkTarget, RobotId, Twist2,
};
use msgs::wire::MAX_FRAME;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// An odometry event frame from node 1.
const FRAME: [u8; 12] = [6, 0, 1, 0, 2, 0, 10, 0, 11, 0, 50, 0];

fn same_thread(c: &mut Criterion) {
    let mut g = c.benchmark_group("rt_ring");
    let (mut rt, mut nrt) = channels(&ChannelConfig::default());
    g.bench_function("frame_rt_to_nrt_same_thread", |b| {
        b.iter(|| {
            rt.rt_push_frame(LinkId(0), 1, black_box(&FRAME));
            black_box(nrt.nrt_pop_frame().map(|f| f.t_ns));
        })
    });
    let mut out = [0u8; MAX_FRAME];
    g.bench_function("frame_nrt_to_rt_same_thread", |b| {
        b.iter(|| {
            nrt.nrt_push_frame(LinkTarget::One(LinkId(0)), black_box(&FRAME))
                .unwrap();
            black_box(rt.rt_pop_frame(&mut out));
        })
    });
    let (mut p_rt, p) = live_params(4);
    g.bench_function("cmd_vel_set_and_read", |b| {
        b.iter(|| {
            p.nrt_set_cmd_vel(
                RobotId(1),
                Twist2 {
                    linear: 0.1,
                    angular: 0.2,
                },
            )
            .unwrap();
            black_box(p_rt.rt_cmd_vel(RobotId(1)));
        })
    });
    let (mut sub_rt, mut sub_nrt) = latest([0.0f64; 4]);
    g.bench_function("triple_buffer_store_and_read", |b| {
        b.iter(|| {
            sub_nrt.nrt_store(black_box([1.0; 4]));
            black_box(sub_rt.rt_read());
        })
    });
    g.finish();
}

/// Frame ping-pong: NRT sends to RT, an echo thread (the RT side) forwards it back.
fn cross_thread(c: &mut Criterion) {
    let mut g = c.benchmark_group("rt_ring_cross_thread");
    g.measurement_time(Duration::from_secs(3));
    let (mut rt, mut nrt) = channels(&ChannelConfig::default());
    let stop = Arc::new(AtomicBool::new(false));
    let echo = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; MAX_FRAME];
            while !stop.load(Ordering::Relaxed) {
                match rt.rt_pop_frame(&mut buf) {
                    Some(r) => {
                        // a lost frame would leave the ping-pong waiting forever
                        let (_, n) = r.expect("a valid record");
                        while !rt.rt_push_frame(LinkId(0), 0, &buf[..n]) {}
                    }
                    None => std::thread::yield_now(),
                }
            }
        })
    };
    g.bench_function("frame_hop_half_round_trip", |b| {
        b.iter_custom(|n| {
            let t = Instant::now();
            for _ in 0..n {
                nrt.nrt_push_frame(LinkTarget::One(LinkId(0)), &FRAME)
                    .unwrap();
                while nrt.nrt_pop_frame().is_none() {
                    std::thread::yield_now();
                }
            }
            t.elapsed() / 2
        })
    });
    stop.store(true, Ordering::Relaxed);
    echo.join().unwrap();

    let (mut server, mut client) = service::<u32, u32>(4);
    let stop = Arc::new(AtomicBool::new(false));
    let srv = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                if server.rt_serve(|x| x + 1) == 0 {
                    std::thread::yield_now();
                }
            }
        })
    };
    g.bench_function("service_round_trip", |b| {
        b.iter(|| {
            client.nrt_call(7).unwrap();
            loop {
                if let Some(r) = client.nrt_poll_response() {
                    break black_box(r);
                }
                std::thread::yield_now();
            }
        })
    });
    stop.store(true, Ordering::Relaxed);
    srv.join().unwrap();
    g.finish();
}

criterion_group! {
    name = benches;
    config = quick::criterion();
    targets = same_thread, cross_thread
}
criterion_main!(benches);
