//! Robots stepping together: one arena, millisecond steps in real time (or as fast as
//! possible), and in-process links: rtrb byte rings carrying exactly the bytes of a serial or
//! TCP Aseba link. A link serves one robot, or several as a bus (like the Thymio wireless
//! dongle network): host frames reach every robot on it, each robot's frames reach the host
//! and the other robots.

use crate::rx::{NodeRx, NodeRxStats};
use crate::thymio::{self, Arena, Pose, Robot, Variant};
use msgs::wire::read_header;
use rtrb::{Consumer, Producer, RingBuffer};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Configuration of a world.
#[derive(Debug, Clone, PartialEq)]
pub struct WorldConfig {
    /// Number of robots (node ids `first_id`, `first_id + 1`, …).
    pub robots: usize,
    /// Node id of the first robot.
    pub first_id: u16,
    /// Seed of every random choice.
    pub seed: u64,
    /// The arena.
    pub arena: Arena,
    /// Protocol version the robots announce (9 like firmware 14, 5 for the community tools).
    pub protocol: u16,
    /// Which Thymio.
    pub variant: Variant,
    /// Step in real time (else as fast as possible).
    pub realtime: bool,
    /// How the robots' wheels differ from ideal ones (drawn per robot from `seed`).
    pub wheels: thymio::WheelSpec,
}

impl Default for WorldConfig {
    fn default() -> Self {
        WorldConfig {
            robots: 1,
            first_id: 1,
            seed: 1,
            arena: Arena::default(),
            protocol: 9,
            variant: Variant::Firmware14,
            realtime: true,
            wheels: thymio::WheelSpec::IDEAL,
        }
    }
}

/// Host side of an in-process link: what the host writes, what it reads.
pub type HostEnds = (Producer<u8>, Consumer<u8>);

/// What the world calls after a step that wrote bytes for a link's host, and when the link goes
/// away (the world is dropped), so that the host can wait on its own wake-up (the driver's
/// eventfd doorbell) instead of polling the ring. Called from the simulation's thread, at most
/// once per link and step.
pub type HostWake = Box<dyn Fn() + Send>;

struct Link {
    robots: Vec<usize>,
    from_host: Consumer<u8>,
    to_host: Producer<u8>,
    /// Frames the host's bytes as the firmware does (oversize frames dropped whole).
    rx: NodeRx,
    /// Frames dropped because the host did not read fast enough.
    dropped: u64,
    /// Called after a step that wrote bytes for the host (none for [`World::attach`]).
    wake: Option<HostWake>,
    /// This step wrote bytes for the host.
    wrote: bool,
}

impl Drop for Link {
    fn drop(&mut self) {
        // the host must wake to see the end of the link
        if let Some(wake) = &self.wake {
            wake();
        }
    }
}

/// Robots in an arena.
pub struct World {
    /// The robots.
    pub robots: Vec<Robot>,
    /// The arena.
    pub arena: Arena,
    links: Vec<Link>,
    /// Milliseconds simulated.
    pub time_ms: u64,
    scratch: Vec<u8>,
    positions: Vec<(f64, f64, Option<i16>)>,
    realtime: bool,
}

impl World {
    /// A world as configured; robots start with no program.
    pub fn new(config: &WorldConfig) -> World {
        let robots = (0..config.robots)
            .map(|i| {
                let [x, y, theta] = config.arena.start_pose(i, config.robots);
                let seed = config.seed.wrapping_mul(1_000_003).wrapping_add(i as u64);
                let mut robot = thymio::robot(
                    config.variant,
                    config.first_id + i as u16,
                    config.protocol,
                    Pose { x, y, theta },
                    seed,
                );
                robot.wheel_model = config.wheels.draw(seed);
                robot
            })
            .collect();
        World {
            robots,
            arena: config.arena.clone(),
            links: Vec::new(),
            time_ms: 0,
            scratch: Vec::with_capacity(8192),
            positions: Vec::new(),
            realtime: config.realtime,
        }
    }

    /// Attaches a link to `robots` (indices); returns its host ends. `capacity` bytes each way.
    pub fn attach(&mut self, robots: Vec<usize>, capacity: usize) -> HostEnds {
        self.attach_with(robots, capacity, None)
    }

    /// As [`World::attach`], calling `wake` after every step that wrote bytes for the host and
    /// when the link ends (see [`HostWake`]).
    ///
    /// ```
    /// use sim::world::{World, WorldConfig};
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// use std::sync::Arc;
    ///
    /// let mut world = World::new(&WorldConfig { realtime: false, ..WorldConfig::default() });
    /// let rung = Arc::new(AtomicUsize::new(0));
    /// let counter = rung.clone();
    /// let (_tx, rx) = world.attach_rung(vec![0], 1 << 12, move || {
    ///     counter.fetch_add(1, Ordering::Relaxed);
    /// });
    /// drop(world);
    /// assert!(rx.is_abandoned() && rung.load(Ordering::Relaxed) == 1, "the end of the link wakes the host");
    /// ```
    pub fn attach_rung(
        &mut self,
        robots: Vec<usize>,
        capacity: usize,
        wake: impl Fn() + Send + 'static,
    ) -> HostEnds {
        self.attach_with(robots, capacity, Some(Box::new(wake)))
    }

    fn attach_with(
        &mut self,
        robots: Vec<usize>,
        capacity: usize,
        wake: Option<HostWake>,
    ) -> HostEnds {
        let (host_tx, from_host) = RingBuffer::new(capacity);
        let (to_host, host_rx) = RingBuffer::new(capacity);
        let robots = robots
            .into_iter()
            .filter(|r| *r < self.robots.len())
            .collect();
        self.links.push(Link {
            robots,
            from_host,
            to_host,
            rx: NodeRx::new(),
            dropped: 0,
            wake,
            wrote: false,
        });
        (host_tx, host_rx)
    }

    /// Frames dropped on the links because their hosts did not read.
    pub fn dropped_frames(&self) -> u64 {
        self.links.iter().map(|l| l.dropped).sum()
    }

    /// Counters of the robots' receivers, summed over the links (oversize frames dropped,
    /// partial frames given up).
    pub fn rx_stats(&self) -> NodeRxStats {
        self.links.iter().fold(NodeRxStats::default(), |a, l| {
            let s = l.rx.stats();
            NodeRxStats {
                frames: a.frames + s.frames,
                oversize: a.oversize + s.oversize,
                abandoned: a.abandoned + s.abandoned,
                bytes_dropped: a.bytes_dropped + s.bytes_dropped,
            }
        })
    }

    /// Advances one millisecond.
    pub fn step(&mut self) {
        self.time_ms += 1;
        // host → robots
        let now = self.time_ms;
        for link in &mut self.links {
            link.rx.tick(now);
            let n = link.from_host.slots();
            if n == 0 {
                continue;
            }
            self.scratch.clear();
            if let Ok(chunk) = link.from_host.read_chunk(n) {
                let (a, b) = chunk.as_slices();
                self.scratch.extend_from_slice(a);
                self.scratch.extend_from_slice(b);
                chunk.commit_all();
            }
            let robots = &mut self.robots;
            link.rx.push(now, &self.scratch, |frame| {
                for r in &link.robots {
                    robots[*r].deliver(frame);
                }
            });
        }
        // robots
        self.positions.clear();
        self.positions.extend(
            self.robots
                .iter()
                .map(|r| (r.pose.x, r.pose.y, r.comm_tx())),
        );
        for i in 0..self.robots.len() {
            let mut others = std::mem::take(&mut self.positions);
            let me = others.remove(i);
            self.robots[i].tick(&self.arena, &others);
            others.insert(i, me);
            self.positions = others;
        }
        // robots → host and the other robots of the bus
        for i in 0..self.robots.len() {
            self.scratch.clear();
            self.robots[i].take_output(&mut self.scratch);
            if self.scratch.is_empty() {
                continue;
            }
            let mut at = 0;
            while let Some(h) = read_header(&self.scratch[at..]) {
                let end = at + 6 + h.len;
                if end > self.scratch.len() {
                    break;
                }
                for link in self.links.iter_mut().filter(|l| l.robots.contains(&i)) {
                    let frame = &self.scratch[at..end];
                    match link.to_host.write_chunk_uninit(frame.len()) {
                        Ok(chunk) => {
                            chunk.fill_from_iter(frame.iter().copied());
                            link.wrote = true;
                        }
                        Err(_) => link.dropped += 1,
                    }
                    for r in link.robots.iter().filter(|r| **r != i) {
                        self.robots[*r].deliver(frame);
                    }
                }
                at = end;
            }
        }
        // one ring per link and step, after all its bytes are in
        for link in self.links.iter_mut().filter(|l| l.wrote) {
            link.wrote = false;
            if let Some(wake) = &link.wake {
                wake();
            }
        }
    }

    /// Runs `ms` milliseconds as fast as possible.
    pub fn run_for(&mut self, ms: u64) {
        for _ in 0..ms {
            self.step();
        }
    }

    /// Starts the stepping thread (real time or as fast as possible, as configured).
    pub fn spawn(self) -> std::io::Result<WorldHandle> {
        let realtime = self.realtime;
        let robots = self.robots.len();
        let world = Arc::new(Mutex::new(self));
        let stop = Arc::new(AtomicBool::new(false));
        let (w, s) = (world.clone(), stop.clone());
        let thread = std::thread::Builder::new()
            .name("sim-world".into())
            .spawn(move || run(w, s, realtime))?;
        Ok(WorldHandle {
            world,
            stop,
            thread: Some(thread),
            robots,
        })
    }
}

/// How far behind real time the simulation may fall and still catch up (the steps run back to back until it is
/// on time again). A loaded machine delays the thread by tens of milliseconds now and then; time lost for good
/// there would make the robots slower than their models in wall-clock time, which any timing measurement (the
/// motor calibration, speed checks) would see. Beyond it (a suspended process) the simulation resumes from now.
const MAX_CATCH_UP: Duration = Duration::from_secs(1);

fn run(world: Arc<Mutex<World>>, stop: Arc<AtomicBool>, realtime: bool) {
    let tick = Duration::from_millis(1);
    let mut next = Instant::now();
    while !stop.load(Ordering::Relaxed) {
        if let Ok(mut w) = world.lock() {
            w.step();
        }
        if realtime {
            next += tick;
            let now = Instant::now();
            if next > now {
                std::thread::sleep(next - now);
            } else if now - next > MAX_CATCH_UP {
                // far behind (suspended): do not try to catch up
                next = now;
            }
        } else {
            std::thread::yield_now();
        }
    }
}

/// A world stepping in its thread.
pub struct WorldHandle {
    world: Arc<Mutex<World>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
    robots: usize,
}

/// Bytes each way of the links made by [`WorldHandle::pipe`] and [`WorldHandle::bus`].
pub const PIPE_CAPACITY: usize = 1 << 16;

impl WorldHandle {
    /// Locks the world (between two steps) to read or change it.
    pub fn lock(&self) -> MutexGuard<'_, World> {
        self.world.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Attaches a link to `robots`; returns its host ends.
    pub fn attach(&self, robots: Vec<usize>, capacity: usize) -> HostEnds {
        self.lock().attach(robots, capacity)
    }

    /// Attaches a link to `robots` that wakes its host when bytes arrive ([`World::attach_rung`]).
    pub fn attach_rung(
        &self,
        robots: Vec<usize>,
        capacity: usize,
        wake: impl Fn() + Send + 'static,
    ) -> HostEnds {
        self.lock().attach_rung(robots, capacity, wake)
    }

    /// Number of robots.
    pub fn robots(&self) -> usize {
        self.robots
    }

    /// An in-process link to robot `i` alone: (host→robot bytes in, robot→host bytes out).
    pub fn pipe(&self, i: usize) -> HostEnds {
        self.attach(vec![i], PIPE_CAPACITY)
    }

    /// An in-process link to every robot, as a bus (like the wireless dongle network).
    pub fn bus(&self) -> HostEnds {
        self.attach((0..self.robots).collect(), PIPE_CAPACITY)
    }

    /// A snapshot of robot `i`.
    pub fn snapshot(&self, i: usize) -> Option<RobotSnapshot> {
        let w = self.lock();
        w.robots.get(i).map(RobotSnapshot::of)
    }

    /// Runs `f` on robot `i` between two steps (press buttons, tap, move it…).
    pub fn with_robot<R>(&self, i: usize, f: impl FnOnce(&mut Robot) -> R) -> Option<R> {
        let mut w = self.lock();
        w.robots.get_mut(i).map(f)
    }

    /// Milliseconds simulated so far.
    pub fn time_ms(&self) -> u64 {
        self.lock().time_ms
    }

    /// A cheap read-only view of the world for another thread (ground truth): it locks the
    /// world between two steps only while it copies the poses.
    pub fn view(&self) -> WorldView {
        WorldView {
            world: self.world.clone(),
        }
    }

    /// Stops the thread.
    pub fn stop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for WorldHandle {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A read-only view of a running world (see [`WorldHandle::view`]); cloneable, `Send`.
#[derive(Clone)]
pub struct WorldView {
    world: Arc<Mutex<World>>,
}

impl std::fmt::Debug for WorldView {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WorldView").finish_non_exhaustive()
    }
}

impl WorldView {
    /// Replaces `out` with every robot's node id and true pose, and returns the simulated time
    /// (ms) they hold at; one lock of the world, no allocation once `out` has grown.
    pub fn poses(&self, out: &mut Vec<(u16, Pose)>) -> u64 {
        let w = self.world.lock().unwrap_or_else(|e| e.into_inner());
        out.clear();
        out.extend(w.robots.iter().map(|r| (r.id(), r.pose)));
        w.time_ms
    }
}

/// What a test wants to know about a robot.
#[derive(Debug, Clone, PartialEq)]
pub struct RobotSnapshot {
    /// Node id.
    pub id: u16,
    /// Pose.
    pub pose: Pose,
    /// Actual wheel speeds (motor units).
    pub wheels: [f64; 2],
    /// Applied motor targets.
    pub targets: [i16; 2],
    /// Variable memory.
    pub variables: Vec<i16>,
    /// VM pc and flags.
    pub pc_flags: (u16, u16),
    /// Whether a program is loaded (event table not empty).
    pub has_program: bool,
    /// LEDs.
    pub leds: thymio::firmware::Leds,
    /// Sound.
    pub sound: thymio::firmware::Sound,
    /// Powered.
    pub powered: bool,
    /// Milliseconds since power-on.
    pub clock_ms: u64,
}

impl RobotSnapshot {
    fn of(r: &Robot) -> RobotSnapshot {
        RobotSnapshot {
            id: r.id(),
            pose: r.pose,
            wheels: r.wheels,
            targets: r.targets,
            variables: r.variables().to_vec(),
            pc_flags: (r.node.vm.pc(), r.node.vm.flags()),
            has_program: r.node.vm.bytecode()[0] > 1,
            leds: r.fw.leds.clone(),
            sound: r.fw.sound.clone(),
            powered: r.powered,
            clock_ms: r.clock_ms,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use msgs::reassembler::Reassembler;
    use msgs::wire::Message;
    use std::time::Instant;

    /// Sources of the NODE_PRESENT replies to one LIST_NODES on `ends`, within 2 s.
    fn list_nodes(ends: &mut HostEnds, expect: usize) -> Vec<u16> {
        for b in (Message::ListNodes { version: 9 }).to_frame(0).unwrap() {
            ends.0.push(b).unwrap();
        }
        let mut reasm = Reassembler::new();
        let mut sources = Vec::new();
        let deadline = Instant::now() + Duration::from_secs(2);
        while sources.len() < expect && Instant::now() < deadline {
            let mut bytes = Vec::new();
            while let Ok(b) = ends.1.pop() {
                bytes.push(b);
            }
            let mut input = &bytes[..];
            while let Some(Ok(f)) = reasm.push(&mut input) {
                if f.kind == msgs::wire::kind::NODE_PRESENT {
                    sources.push(f.source);
                }
            }
            std::thread::yield_now();
        }
        sources.sort();
        sources
    }

    #[test]
    fn a_view_reads_every_robots_true_pose_from_another_thread() {
        let world = World::new(&WorldConfig {
            robots: 2,
            realtime: false,
            ..WorldConfig::default()
        });
        let expected: Vec<(u16, Pose)> = world.robots.iter().map(|r| (r.id(), r.pose)).collect();
        let handle = world.spawn().unwrap();
        let view = handle.view();
        let reader = std::thread::spawn(move || {
            let mut poses = Vec::new();
            let t = view.poses(&mut poses);
            (t, poses)
        });
        let (_, poses) = reader.join().unwrap();
        assert_eq!(poses, expected, "robots at rest keep their start poses");
        let mut poses = Vec::new();
        let t0 = handle.view().poses(&mut poses);
        while handle.view().poses(&mut poses) == t0 {
            std::thread::yield_now();
        }
    }

    #[test]
    fn a_rung_link_rings_its_host_when_bytes_arrive_and_when_it_ends() {
        let mut world = World::new(&WorldConfig {
            realtime: false,
            ..WorldConfig::default()
        });
        let rings = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counter = rings.clone();
        let (mut tx, rx) = world.attach_rung(vec![0], 1 << 12, move || {
            counter.fetch_add(1, Ordering::Relaxed);
        });
        let rung =
            |rings: &Arc<std::sync::atomic::AtomicUsize>| rings.swap(0, Ordering::Relaxed) > 0;
        world.run_for(5);
        assert!(!rung(&rings), "nothing written, nothing rung");
        for b in (Message::ListNodes { version: 9 }).to_frame(0).unwrap() {
            tx.push(b).unwrap();
        }
        let mut answered_with_ring = false;
        for _ in 0..50 {
            world.step();
            answered_with_ring |= rung(&rings);
            if !rx.is_empty() {
                break;
            }
        }
        assert!(
            !rx.is_empty() && answered_with_ring,
            "the answer came with a ring"
        );
        drop(world);
        assert!(rung(&rings) && rx.is_abandoned());
    }

    #[test]
    fn pipes_reach_one_robot_and_the_bus_all() {
        let world = World::new(&WorldConfig {
            robots: 3,
            first_id: 10,
            realtime: false,
            ..WorldConfig::default()
        })
        .spawn()
        .unwrap();
        assert_eq!(world.robots(), 3);
        assert_eq!(list_nodes(&mut world.pipe(1), 1), vec![11]);
        assert_eq!(list_nodes(&mut world.bus(), 3), vec![10, 11, 12]);
        let t = world.time_ms();
        assert!(t > 0);
        world.with_robot(2, |r| r.buttons[2] = true).unwrap();
        let deadline = Instant::now() + Duration::from_secs(2);
        while world.snapshot(2).unwrap().variables[44] != 1 && Instant::now() < deadline {
            std::thread::yield_now();
        }
        assert_eq!(world.snapshot(2).unwrap().variables[44], 1, "button.center");
        assert!(world.snapshot(3).is_none());
    }

    #[test]
    fn same_seed_same_world_other_seed_other_noise() {
        let run = |seed| {
            let mut w = World::new(&WorldConfig {
                seed,
                realtime: false,
                ..WorldConfig::default()
            });
            w.robots[0].targets = [0, 0];
            w.run_for(1000);
            w.robots[0].variables().to_vec()
        };
        assert_eq!(run(3), run(3));
        assert_ne!(run(3), run(4));
    }
}
