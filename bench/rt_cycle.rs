//! One RT cycle (`rt::rtloop::RtLoop::cycle`) with a typical frame mix: idle, one odometry
//! event, the mix of one 10 ms slice of a Thymio running the driver script (odometry,
//! proximity, ground, a variables reply) forwarded to NRT, and a new cmd_vel mapped and written.
//! Only the cycle is timed; feeding the link and draining NRT happen outside the timing.
#[path = "quick.rs"]
mod quick;
use criterion::{criterion_group, criterion_main, Criterion};
use handoff::{channels, ChannelConfig, NodeId, NrtEnds, RobotConfig, RobotId, RtCommand, Twist2};
use msgs::wire::{Message, Words, MAX_FRAME};
use rt::clock::monotonic_ns;
use rt::controllers::RtControllers;
use rt::link::{Link, PipeLink};
use rt::link_port::{link_port, NrtLinkPort};
use rt::rtloop::{RtConfig, RtLoop};
use rt::sched::RtSetup;
use std::time::{Duration, Instant};

const NODE: u16 = 1;

fn frame(out: &mut Vec<u8>, m: Message<'_>) {
    let mut buf = [0u8; MAX_FRAME];
    let n = m.encode(NODE, &mut buf).unwrap();
    out.extend_from_slice(&buf[..n]);
}

/// 10 ms of a Thymio's output: odometry (20 Hz), proximity + ground (10 Hz), a reply.
fn slice(k: i16) -> Vec<u8> {
    let mut s = Vec::new();
    frame(
        &mut s,
        Message::UserEvent {
            id: 2,
            args: Words::from_slice(&[k, k, 5 * k]),
        },
    );
    frame(
        &mut s,
        Message::UserEvent {
            id: 9,
            args: Words::from_slice(&[0, 1200, 3400, 0, 0, 0, 10]),
        },
    );
    frame(
        &mut s,
        Message::UserEvent {
            id: 12,
            args: Words::from_slice(&[700, 690]),
        },
    );
    frame(
        &mut s,
        Message::Variables {
            start: 0,
            values: Words::from_slice(&[k; 20]),
        },
    );
    s
}

struct Bench {
    rt: RtLoop,
    nrt: NrtEnds,
    peer: PipeLink,
    _port: NrtLinkPort,
    sink: [u8; 4096],
}

impl Bench {
    fn new() -> Self {
        let (rt_ends, mut nrt) = channels(&ChannelConfig::default());
        let (rt_port, mut port) = link_port();
        let (ours, peer) = PipeLink::pair(1 << 16);
        port.nrt_offer(0, Box::new(ours)).unwrap();
        let cfg = RtConfig {
            setup: RtSetup::unprivileged(),
            stats_period: Duration::from_secs(3600),
            min_speed_interval: Duration::ZERO,
            ..Default::default()
        };
        let mut config = RobotConfig::script(NodeId(NODE), 2, 1, false);
        config.proximity_event = Some(9);
        nrt.nrt_push_command(RtCommand::ConfigureRobot {
            robot: RobotId(0),
            config,
        })
        .unwrap();
        let mut rt = RtLoop::new(cfg, rt_ends, rt_port, RtControllers::none(), Vec::new());
        rt.cycle(monotonic_ns());
        Bench {
            rt,
            nrt,
            peer,
            _port: port,
            sink: [0; 4096],
        }
    }

    /// Runs `iters` cycles, calling `feed` before each; returns the time spent in the cycles.
    fn run(&mut self, iters: u64, mut feed: impl FnMut(&mut Self, u64)) -> Duration {
        let mut total = Duration::ZERO;
        for i in 0..iters {
            feed(self, i);
            let t = Instant::now();
            self.rt.cycle(monotonic_ns());
            total += t.elapsed();
            self.nrt.nrt_drain_frames(|_| {});
            while self.nrt.nrt_pop_event().is_some() {}
            while self.peer.read(&mut self.sink).unwrap_or(0) > 0 {}
        }
        total
    }
}

fn cycle(c: &mut Criterion) {
    let mut g = c.benchmark_group("rt_cycle");
    let mut b = Bench::new();
    g.bench_function("idle", |bn| bn.iter_custom(|n| b.run(n, |_, _| {})));
    let mut b = Bench::new();
    g.bench_function("one_odometry_event", |bn| {
        bn.iter_custom(|n| {
            b.run(n, |b, i| {
                let mut f = Vec::new();
                frame(
                    &mut f,
                    Message::UserEvent {
                        id: 2,
                        args: Words::from_slice(&[i as i16, i as i16, 5 * i as i16]),
                    },
                );
                b.peer.write(&f).unwrap();
            })
        })
    });
    let mut b = Bench::new();
    g.bench_function("thymio_mix_10ms", |bn| {
        bn.iter_custom(|n| {
            b.run(n, |b, i| {
                b.peer.write(&slice(i as i16)).unwrap();
            })
        })
    });
    let mut b = Bench::new();
    g.bench_function("new_cmd_vel_mapped_and_written", |bn| {
        bn.iter_custom(|n| {
            b.run(n, |b, i| {
                let v = 0.01 * (i % 20) as f64;
                b.nrt
                    .nrt_set_cmd_vel(
                        RobotId(0),
                        Twist2 {
                            linear: v,
                            angular: 0.5,
                        },
                    )
                    .unwrap();
            })
        })
    });
    g.finish();
}

criterion_group! {
    name = benches;
    config = quick::criterion();
    targets = cycle
}
criterion_main!(benches);
