//! A link that floods cannot spin the RT core: a TCP peer writes junk as fast as it can on one
//! link while a robot on a second link sends odometry every 10 ms and is driven by set-points.
//! Measured inside the test: the RT thread's CPU time stays well below a core, the period is
//! kept (no overruns to speak of), and the other robot keeps being served (its odometry reaches
//! NRT, its set-points reach it).
//!
//! What bounds the work is the read budget per link and period (then the link is left out of
//! the wait until the next period) and the bounded wake-ups per period: the CPU a flood costs
//! is the cost of reassembling `read_budget` bytes of junk per period. The test uses 4 KiB per
//! 1 ms period (this is an unoptimised build); the default 16 KiB costs ~15 % of a core in a
//! release build.

use handoff::{
    channels, ChannelConfig, NodeId, NrtEnds, RobotConfig, RobotId, RtCommand, RtEvent, RtStats,
    Twist2,
};
use msgs::reassembler::Reassembler;
use msgs::wire::{encode_user_event, MAX_FRAME};
use rt::link::{Link, PipeLink, TcpLink};
use rt::link_port::link_port;
use rt::rtloop::{spawn, RtConfig};
use rt::sched::RtSetup;
use std::io::Write;
use std::net::TcpListener;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const NODE: u16 = 7;
const SET_SPEED: u16 = 1;
const ODOMETRY: u16 = 2;
/// How long the flood is measured.
const WINDOW: Duration = Duration::from_secs(3);
/// The RT thread's share of a core must stay below this during the flood: ~30 % on an idle
/// machine, 99 % with the read budget and wake bound lifted (the bug this test is for); 55 % was
/// seen once with a compiler busy on both cores (each byte costs more with the caches shared),
/// so the bound sits between that and a spinning core.
const CPU_BOUND: f64 = 0.75;
/// Bytes a link may read per period.
const READ_BUDGET: usize = 4096;

/// CPU time (ns) of this process's thread named `name`.
fn thread_cpu_ns(name: &str) -> Option<u64> {
    for task in std::fs::read_dir("/proc/self/task").ok()?.flatten() {
        let dir = task.path();
        let comm = std::fs::read_to_string(dir.join("comm")).unwrap_or_default();
        if comm.trim_end() != name {
            continue;
        }
        if let Ok(s) = std::fs::read_to_string(dir.join("schedstat")) {
            if let Some(ns) = s.split_whitespace().next().and_then(|v| v.parse().ok()) {
                return Some(ns);
            }
        }
        // utime + stime in clock ticks (100 Hz on Linux)
        let stat = std::fs::read_to_string(dir.join("stat")).ok()?;
        let after = stat.rsplit_once(')')?.1;
        let f: Vec<u64> = after
            .split_whitespace()
            .map(|v| v.parse().unwrap_or(0))
            .collect();
        return Some((f[11] + f[12]) * 10_000_000);
    }
    None
}

/// Junk as fast as the socket takes it, until `stop`.
fn flood(mut peer: std::net::TcpStream, stop: Arc<AtomicBool>, sent: Arc<AtomicU64>) {
    peer.set_write_timeout(Some(Duration::from_millis(50)))
        .unwrap();
    let mut junk = [0u8; 8192];
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    for b in junk.iter_mut() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        *b = x as u8;
    }
    while !stop.load(Ordering::Relaxed) {
        if let Ok(n) = peer.write(&junk) {
            sent.fetch_add(n as u64, Ordering::Relaxed);
        }
    }
}

/// The served robot: odometry every 10 ms (its pace), the last wheel targets it was sent.
fn robot(mut link: PipeLink, stop: Arc<AtomicBool>, last: Arc<AtomicU64>) -> u64 {
    let mut reasm = Reassembler::new();
    let mut buf = [0u8; 4096];
    let mut frame = [0u8; MAX_FRAME];
    let mut ticks = 0i16;
    let mut sent = 0;
    while !stop.load(Ordering::Relaxed) {
        ticks = ticks.wrapping_add(1);
        let n = encode_user_event(NODE, ODOMETRY, &[50, 50, ticks], &mut frame).unwrap();
        if link.write(&frame[..n]).unwrap() == n {
            sent += 1;
        }
        let n = link.read(&mut buf).unwrap();
        let mut input = &buf[..n];
        while let Some(f) = reasm.push(&mut input) {
            let f = f.unwrap();
            if f.kind == SET_SPEED && f.payload.len() >= 2 {
                let left = i16::from_le_bytes([f.payload[0], f.payload[1]]);
                last.store(left as u16 as u64, Ordering::Relaxed);
            }
        }
        std::thread::sleep(Duration::from_millis(10)); // the robot's pace, not a wait
    }
    sent
}

#[test]
fn a_flooding_link_cannot_spin_the_core_and_the_other_robot_is_served() {
    let (rt_ends, mut nrt) = channels(&ChannelConfig {
        robots: 2,
        ..Default::default()
    });
    let mut odometry_out = nrt.nrt_take_odometry_out().unwrap();
    let (rt_port, mut port) = link_port();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let tcp = TcpLink::connect_addr(addr, Duration::from_secs(5)).unwrap();
    let (flooder, _) = listener.accept().unwrap();
    let (ours, theirs) = PipeLink::pair(1 << 16);
    port.nrt_offer(0, Box::new(tcp)).unwrap();
    port.nrt_offer(1, Box::new(ours)).unwrap();
    let cfg = RtConfig {
        period: Duration::from_millis(1),
        stats_period: Duration::from_millis(100),
        read_budget: READ_BUDGET,
        honor_signals: false,
        // SCHED_FIFO as the driver runs it (where the machine grants it; else SCHED_OTHER): "the
        // period is kept" is then about the flood, not about other programs that preempt a plain
        // thread (188 overruns in 3128 cycles were seen with a compiler on both cores)
        setup: RtSetup {
            priority: Some(rt::sched::DEFAULT_PRIORITY),
            ..RtSetup::unprivileged()
        },
        ..Default::default()
    };
    let handle = spawn(
        cfg,
        rt_ends,
        rt_port,
        rt::controllers::RtControllers::none(),
        Vec::new(),
    )
    .unwrap();

    // Which link is the robot's (by target), then drive it there.
    let mut robot_link = None;
    let deadline = Instant::now() + Duration::from_secs(10);
    while robot_link.is_none() {
        assert!(Instant::now() < deadline, "links not up");
        while let Some(ev) = nrt.nrt_pop_event() {
            if let RtEvent::LinkUp {
                link, target: 1, ..
            } = ev
            {
                robot_link = Some(link);
            }
        }
        std::thread::yield_now();
    }
    let mut config = RobotConfig::script(NodeId(NODE), ODOMETRY, SET_SPEED, false);
    config.link = robot_link;
    nrt.nrt_push_command(RtCommand::ConfigureRobot {
        robot: RobotId(0),
        config,
    })
    .unwrap();

    let stop = Arc::new(AtomicBool::new(false));
    let flooded = Arc::new(AtomicU64::new(0));
    let last_targets = Arc::new(AtomicU64::new(u64::MAX));
    let flood_thread = {
        let (stop, flooded) = (stop.clone(), flooded.clone());
        std::thread::spawn(move || flood(flooder, stop, flooded))
    };
    let robot_thread = {
        let (stop, last) = (stop.clone(), last_targets.clone());
        std::thread::spawn(move || robot(theirs, stop, last))
    };

    // Let the flood settle, then measure a window.
    let mut odometry = 0u64;
    let mut stats: Option<RtStats> = None;
    let mut drain = |nrt: &mut NrtEnds, odometry: &mut u64, stats: &mut Option<RtStats>| {
        nrt.nrt_drain_frames(|_| ());
        while let Some(ev) = nrt.nrt_pop_event() {
            if let RtEvent::Stats = ev {
                *stats = nrt.nrt_take_stats().or(*stats);
            }
        }
        while let Some(h) = odometry_out.nrt_pop() {
            *odometry += u64::from(Some(h.sample.link) == robot_link);
        }
    };
    let settle = Instant::now() + Duration::from_millis(500);
    while Instant::now() < settle {
        drain(&mut nrt, &mut odometry, &mut stats);
        nrt.nrt_doorbell().wait(Duration::from_millis(20));
    }
    let cpu0 = thread_cpu_ns("thymio-rt").expect("the RT thread's CPU time");
    let cycles0 = stats.map_or(0, |s| s.cycles);
    let t0 = Instant::now();
    let odometry0 = odometry;
    let mut k = 0u32;
    let mut set = 0.0;
    while t0.elapsed() < WINDOW {
        k += 1;
        if k.is_multiple_of(5) {
            set = 0.01 * (k % 7 + 1) as f64;
            nrt.nrt_set_cmd_vel(
                RobotId(0),
                Twist2 {
                    linear: set,
                    angular: 0.0,
                },
            )
            .unwrap();
        }
        drain(&mut nrt, &mut odometry, &mut stats);
        nrt.nrt_doorbell().wait(Duration::from_millis(10));
    }
    let cpu = thread_cpu_ns("thymio-rt").unwrap() - cpu0;
    let wall = t0.elapsed();
    let share = cpu as f64 / wall.as_nanos() as f64;
    let window_odometry = odometry - odometry0;
    let window_cycles = stats.map_or(0, |s| s.cycles) - cycles0;

    // The last set-point reaches the robot despite the flood.
    let want = (set * 2930.0).round_ties_even() as i16 as u16 as u64;
    let deadline = Instant::now() + Duration::from_secs(10);
    while last_targets.load(Ordering::Relaxed) != want {
        assert!(Instant::now() < deadline, "the robot never got {want}");
        std::thread::sleep(Duration::from_millis(5));
    }
    stop.store(true, Ordering::Relaxed);
    flood_thread.join().unwrap();
    let odometry_sent = robot_thread.join().unwrap();
    handle.stop();
    let exit = handle.join().unwrap();
    drain(&mut nrt, &mut odometry, &mut stats);
    let s = stats.unwrap_or(exit.stats);
    let flooded = flooded.load(Ordering::Relaxed);
    eprintln!(
        "RT CPU {:.1} % over {wall:?}; flooded {flooded} B, read {} B; odometry {window_odometry} \
         in the window, {odometry} of {odometry_sent}; cycles {} ({window_cycles} in the window), \
         overruns {}",
        share * 100.0,
        s.links.bytes_rx,
        s.cycles,
        s.overruns
    );
    assert!(
        flooded > 1 << 20,
        "the peer flooded (only {flooded} B written)"
    );
    assert!(
        s.links.bytes_rx > 1 << 20,
        "the flood was read ({} B)",
        s.links.bytes_rx
    );
    assert!(
        share < CPU_BOUND,
        "the RT thread used {:.1} % of a core during the flood",
        share * 100.0
    );
    // The 1 ms period is kept: the window has its cycles (the last report may be up to 100 ms
    // old), and overruns stay a trace (a shared test machine preempts a non-RT thread now and
    // then, flood or not).
    assert!(
        window_cycles * 10 >= (WINDOW.as_millis() as u64 - 100) * 9,
        "{window_cycles} cycles in {WINDOW:?}"
    );
    assert!(
        s.overruns * 20 <= s.cycles,
        "{} overruns in {} cycles",
        s.overruns,
        s.cycles
    );
    // 100 Hz odometry: most of the window's samples were integrated and handed over.
    let expected = WINDOW.as_millis() as u64 / 10;
    assert!(
        window_odometry * 2 >= expected,
        "{window_odometry} odometry samples in {WINDOW:?}"
    );
    assert!(
        odometry * 10 >= odometry_sent * 9,
        "{odometry} of {odometry_sent}"
    );
    assert!(
        exit.stats.links.frames_rejected > 0 || exit.stats.links.bytes_discarded > 0,
        "junk was discarded"
    );
}
