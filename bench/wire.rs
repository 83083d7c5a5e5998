//! Micro benchmarks of the Aseba wire protocol: frame decode/encode and stream reassembly.
#[path = "quick.rs"]
mod quick;
use criterion::{black_box, criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use msgs::reassembler::Reassembler;
use msgs::wire::{Frame, Message, Words, MAX_FRAME};

/// A stream like a Thymio running the driver script for 1 s: odometry at 20 Hz, proximity and
/// ground at 10 Hz, accelerometer at 8 Hz, temperature at 1 Hz.
fn thymio_second() -> Vec<u8> {
    let mut s = Vec::new();
    for i in 0..100i16 {
        if i % 5 == 0 {
            s.extend(
                Message::UserEvent {
                    id: 2,
                    args: Words::from_slice(&[i, -i, i]),
                }
                .to_frame(1)
                .unwrap(),
            );
        }
        if i % 10 == 0 {
            s.extend(
                Message::UserEvent {
                    id: 9,
                    args: Words::from_slice(&[0, 1200, 3400, 0, 0, 0, 10]),
                }
                .to_frame(1)
                .unwrap(),
            );
            s.extend(
                Message::UserEvent {
                    id: 12,
                    args: Words::from_slice(&[700, 690]),
                }
                .to_frame(1)
                .unwrap(),
            );
        }
        if i % 12 == 0 {
            s.extend(
                Message::UserEvent {
                    id: 13,
                    args: Words::from_slice(&[1, -2, 22]),
                }
                .to_frame(1)
                .unwrap(),
            );
        }
    }
    s.extend(
        Message::UserEvent {
            id: 15,
            args: Words::from_slice(&[253]),
        }
        .to_frame(1)
        .unwrap(),
    );
    s
}

fn bench(c: &mut Criterion) {
    let odometry = Message::UserEvent {
        id: 2,
        args: Words::from_slice(&[120, -80, 3000]),
    }
    .to_frame(1)
    .unwrap();
    let variables = Message::Variables {
        start: 57,
        values: Words::from_slice(&[7; 47]),
    }
    .to_frame(1)
    .unwrap();

    let mut g = c.benchmark_group("wire");
    g.bench_function("decode_odometry_event", |b| {
        b.iter(|| {
            let (f, _) = Frame::parse(black_box(&odometry)).unwrap();
            black_box(f.message().unwrap());
        })
    });
    g.bench_function("decode_variables_47", |b| {
        b.iter(|| {
            let (f, _) = Frame::parse(black_box(&variables)).unwrap();
            black_box(f.message().unwrap());
        })
    });
    let args = [250i16, 250];
    let mut out = [0u8; MAX_FRAME];
    g.bench_function("encode_set_speed", |b| {
        b.iter(|| {
            let m = Message::UserEvent {
                id: 1,
                args: Words::from_slice(black_box(&args)),
            };
            black_box(m.encode(0, &mut out).unwrap());
        })
    });
    let set_vars = [100i16, 100];
    g.bench_function("encode_set_variables", |b| {
        b.iter(|| {
            let m = Message::SetVariables {
                dest: 1,
                start: 86,
                values: Words::from_slice(black_box(&set_vars)),
            };
            black_box(m.encode(0, &mut out).unwrap());
        })
    });
    g.finish();

    let stream = thymio_second();
    let mut g = c.benchmark_group("reassembly");
    g.throughput(Throughput::Bytes(stream.len() as u64));
    for chunk in [1usize, 64, 4096] {
        g.bench_function(format!("thymio_second_chunks_{chunk}"), |b| {
            b.iter_batched(
                Reassembler::new,
                |mut r| {
                    let mut frames = 0;
                    for c in stream.chunks(chunk) {
                        let mut input = c;
                        while let Some(f) = r.push(&mut input) {
                            frames += usize::from(f.is_ok());
                        }
                    }
                    black_box(frames)
                },
                BatchSize::SmallInput,
            )
        });
    }
    g.finish();
}

criterion_group! {
    name = benches;
    config = quick::criterion();
    targets = bench
}
criterion_main!(benches);
