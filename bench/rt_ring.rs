//! Hops between the RT and NRT sides: the frame rings (same thread, and across threads as a
//! ping-pong whose half round trip is reported; waiting sides yield, so on a loaded machine the
//! figure includes scheduling), the cmd_vel seqlock, the triple-buffer
//! subscriber and the service ring pair.
#[path = "quick.rs"]
mod quick;
use criterion::{black_box, criterion_group, criterion_main, Criterion};
use msgs::handoff::{channels, ChannelConfig, LinkTarget, LiveParams, Twist2};
use msgs::wire::MAX_FRAME;
use rt::rosrt::{rt_service, rt_subscriber};
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
            rt.try_forward_frame(0, 1, black_box(&FRAME));
            black_box(nrt.recv_frame().map(|f| f.t_ns));
        })
    });
    let mut out = [0u8; MAX_FRAME];
    g.bench_function("frame_nrt_to_rt_same_thread", |b| {
        b.iter(|| {
            nrt.send_frame(LinkTarget::One(0), black_box(&FRAME))
                .unwrap();
            black_box(rt.try_pop_outgoing(&mut out));
        })
    });
    let p = LiveParams::new(4);
    g.bench_function("cmd_vel_seqlock_set_and_read", |b| {
        b.iter(|| {
            p.set_cmd_vel(
                1,
                Twist2 {
                    linear: 0.1,
                    angular: 0.2,
                },
            )
            .unwrap();
            black_box(p.cmd_vel(1));
        })
    });
    let (mut sub_rt, mut sub_nrt) = rt_subscriber([0.0f64; 4]);
    g.bench_function("triple_buffer_store_and_read", |b| {
        b.iter(|| {
            sub_nrt.store(black_box([1.0; 4]));
            black_box(sub_rt.read());
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
                match rt.try_pop_outgoing(&mut buf) {
                    Some(r) => {
                        // a lost frame would leave the ping-pong waiting forever
                        let (_, n) = r.expect("a valid record");
                        while !rt.try_forward_frame(0, 0, &buf[..n]) {}
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
                nrt.send_frame(LinkTarget::One(0), &FRAME).unwrap();
                while nrt.recv_frame().is_none() {
                    std::thread::yield_now();
                }
            }
            t.elapsed() / 2
        })
    });
    stop.store(true, Ordering::Relaxed);
    echo.join().unwrap();

    let (mut server, mut client) = rt_service::<u32, u32>(4);
    let stop = Arc::new(AtomicBool::new(false));
    let srv = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                if server.serve(|x| x + 1) == 0 {
                    std::thread::yield_now();
                }
            }
        })
    };
    g.bench_function("service_round_trip", |b| {
        b.iter(|| {
            client.try_call(7).unwrap();
            loop {
                if let Some(r) = client.poll_response() {
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
