//! Simulator and compiler speed: VM instructions per second, the cost of one simulated
//! millisecond of a world of 1, 8, 64 and 256 Thymios running the driver script with the host
//! reading their messages (how many robots one core runs in real time: while it stays under
//! 1 ms), and the compile time of the driver script.
#[path = "quick.rs"]
mod quick;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use msgs::description::thymio_ii_fw14;
use msgs::wire::{Message, Words};
use nrt_compiler::{compile, parse_aesl};
use sim::world::{HostEnds, World, WorldConfig};
use std::hint::black_box;

const DRIVER: &str = include_str!("../config/aseba/thymio_ros.aesl");

/// A world of `n` robots running the driver script, warmed up, with the host end that reads
/// what they send (odometry, buttons, prox…).
fn world_with_driver(n: usize) -> (World, HostEnds) {
    let aesl = parse_aesl(DRIVER).unwrap();
    let code = &aesl.source_for("thymio-II", 1).unwrap().code;
    let program = compile(code, &thymio_ii_fw14(), &aesl.events, &aesl.constants).unwrap();
    let mut w = World::new(&WorldConfig {
        robots: n,
        realtime: false,
        ..WorldConfig::default()
    });
    let mut host = w.attach((0..n).collect(), 1 << 20);
    let words: Vec<i16> = program.bytecode.iter().map(|w| *w as i16).collect();
    for id in 1..=n as u16 {
        for (i, chunk) in words.chunks(256).enumerate() {
            let f = Message::SetBytecode {
                dest: id,
                start: (i * 256) as u16,
                words: Words::from_slice(chunk),
            }
            .to_frame(0)
            .unwrap();
            for b in f {
                host.0.push(b).unwrap();
            }
        }
        for b in (Message::Run { dest: id }).to_frame(0).unwrap() {
            host.0.push(b).unwrap();
        }
        // let the firmware take the upload before the next robot's frames fill the ring
        w.run_for(5);
        drain(&mut host);
    }
    let mut received = 0;
    for _ in 0..200 {
        w.step();
        received += drain(&mut host);
    }
    // the driver runs on every robot and talks to the host
    assert!(w
        .robots
        .iter()
        .all(|r| r.node.vm.bytecode()[0] > 1 && !r.node.vm.step_by_step()));
    assert!(received > 100 * n, "{received} bytes from {n} robots");
    (w, host)
}

/// Reads everything the robots sent; returns the byte count.
fn drain(host: &mut HostEnds) -> usize {
    let n = host.1.slots();
    if let Ok(chunk) = host.1.read_chunk(n) {
        chunk.commit_all();
    }
    n
}

struct Null;

impl sim::vm::Outbox for Null {
    fn send(&mut self, _: &Message<'_>) {}
}

/// Aseba instructions per second: a loop of 10 000 iterations compiled by thymio-rt's
/// compiler, run on a simulated Thymio's VM (with its firmware as the native target).
fn vm_speed(c: &mut Criterion) {
    let src = "var i\nvar s\nonevent timer0\ns = 0\nfor i in 1:10000 do\ns = s + i\nend\n";
    let program = compile(src, &thymio_ii_fw14(), &[], &[]).unwrap();
    let mut w = World::new(&WorldConfig {
        realtime: false,
        ..WorldConfig::default()
    });
    let r = &mut w.robots[0];
    r.node
        .vm
        .write_bytecode(0, program.bytecode.iter().copied())
        .unwrap();
    assert!(r.node.vm.event_address(0xFFEF) != 0);
    // count the instructions of one run, step by step
    r.node.vm.cmd_run(&mut Null);
    r.node.vm.setup_event(0xFFEF, &mut Null);
    let mut steps = 0u64;
    while r.node.vm.event_active() {
        r.node.vm.step(&mut r.fw, &mut Null);
        steps += 1;
    }
    assert!(!r.node.vm.step_by_step(), "the loop ran without error");
    assert!(steps > 50_000, "{steps} instructions");
    let mut g = c.benchmark_group("vm");
    g.throughput(Throughput::Elements(steps));
    g.bench_function("instructions", |b| {
        b.iter(|| {
            let r = &mut w.robots[0];
            r.node.vm.setup_event(0xFFEF, &mut Null);
            r.node.vm.run(0, &mut r.fw, &mut Null);
            black_box(r.node.vm.pc());
        })
    });
    g.finish();
}

/// One simulated millisecond of n robots running the driver script, the host reading their
/// messages: real time on one core holds while this stays under 1 ms.
fn world_speed(c: &mut Criterion) {
    let mut g = c.benchmark_group("world_ms");
    for n in [1usize, 8, 64, 256] {
        let (mut w, mut host) = world_with_driver(n);
        g.throughput(Throughput::Elements(n as u64));
        g.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, _| {
            b.iter(|| {
                w.step();
                drain(&mut host)
            })
        });
        assert_eq!(w.dropped_frames(), 0);
    }
    g.finish();
}

fn compile_driver(c: &mut Criterion) {
    let aesl = parse_aesl(DRIVER).unwrap();
    let code = aesl.source_for("thymio-II", 1).unwrap().code.clone();
    let target = thymio_ii_fw14();
    c.bench_function("compile_driver_script", |b| {
        b.iter(|| black_box(compile(&code, &target, &aesl.events, &aesl.constants).unwrap()))
    });
}

criterion_group! {
    name = benches;
    config = quick::criterion();
    targets = vm_speed, world_speed, compile_driver
}
criterion_main!(benches);
