//! Ground truth of a simulated robot, as Gazebo's `p3d` plugin gives it: `/<ns>/sim/ground_truth`
//! (`nav_msgs/Odometry`, frame `world`, child frame the robot's base frame) at [`GROUND_TRUTH_HZ`], the robot's true
//! pose in the simulated arena and its true velocity in its own frame, published only while someone subscribes on
//! some front end (an idle driver does not touch the simulation for it; subscribers are looked for every
//! [`IDLE_CHECK`] meanwhile).
//!
//! The source is a hook ([`GroundTruthSource`]) the process gives the layer when it runs the embedded simulator
//! (`src/embedded.rs`): one thread here ([`GroundTruthThread`]) calls it, never the RT thread, and it locks only the
//! simulation (between two simulation steps) while it copies the poses. Velocities are the change of the true pose
//! between two samples (over 1 / [`GROUND_TRUTH_HZ`]), expressed in the robot's frame (`linear.x` forward,
//! `linear.y` left, `angular.z`). Each front end is a [`GroundTruthSink`]: its publishers of the robots' topic.

use crate::report::Reporter;
use handoff::NodeId;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime};

/// Rate of `sim/ground_truth` (Hz).
pub const GROUND_TRUTH_HZ: f64 = 20.0;

/// How often subscribers are looked for while there are none.
pub const IDLE_CHECK: Duration = Duration::from_millis(250);

/// The frame of the true poses.
pub const WORLD_FRAME: &str = "world";

/// The leaf name of the topic under the robot's namespace.
pub const TOPIC: &str = "sim/ground_truth";

/// One robot's true planar pose.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct TruePose {
    /// The robot's Aseba node id.
    pub node: NodeId,
    /// Position (m) in the arena.
    pub x: f64,
    /// Position (m) in the arena.
    pub y: f64,
    /// Heading (rad).
    pub theta: f64,
}

/// Where the true poses come from (the embedded simulator). Called from the ground-truth thread only, at most
/// [`GROUND_TRUTH_HZ`] times a second and only while someone subscribes.
pub trait GroundTruthSource: Send + 'static {
    /// Replaces `out` with every simulated robot's true pose; returns the simulated time (ns) they hold at, `None`
    /// if the simulation is gone.
    fn read(&mut self, out: &mut Vec<TruePose>) -> Option<u64>;
}

/// The content of one ground-truth message (`nav_msgs/Odometry` in [`WORLD_FRAME`], child frame the robot's base
/// frame, which the front end knows; no covariance).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct GroundTruth {
    /// The robot's true pose.
    pub pose: TruePose,
    /// Position (x, y, z = 0) in the world frame.
    pub position: [f64; 3],
    /// Orientation quaternion (x, y, z, w): a rotation about z.
    pub orientation: [f64; 4],
    /// Velocity in the robot's frame: forward, left (m/s), turn rate (rad/s).
    pub twist: [f64; 3],
}

/// The message of pose `p` moving at `twist` (forward, left, turn rate).
pub fn ground_truth(p: &TruePose, twist: [f64; 3]) -> GroundTruth {
    let (s, c) = (p.theta / 2.0).sin_cos();
    GroundTruth {
        pose: *p,
        position: [p.x, p.y, 0.0],
        orientation: [0.0, 0.0, s, c],
        twist,
    }
}

/// The velocity (forward, left, turn rate) that took a robot from `a` to `b` in `dt_ns`, in its own frame at the
/// middle of the move; `None` if no time passed.
pub fn body_twist(a: &TruePose, b: &TruePose, dt_ns: u64) -> Option<[f64; 3]> {
    if dt_ns == 0 {
        return None;
    }
    let dt = dt_ns as f64 * 1e-9;
    let dtheta = wrap(b.theta - a.theta);
    let mid = a.theta + dtheta / 2.0;
    let (dx, dy) = (b.x - a.x, b.y - a.y);
    let (s, c) = mid.sin_cos();
    Some([(c * dx + s * dy) / dt, (-s * dx + c * dy) / dt, dtheta / dt])
}

/// An angle in (−π, π].
fn wrap(a: f64) -> f64 {
    use std::f64::consts::PI;
    let w = (a + PI).rem_euclid(2.0 * PI) - PI;
    if w <= -PI {
        w + 2.0 * PI
    } else {
        w
    }
}

/// A front end's `sim/ground_truth` publishers (one per driven robot, made and removed by the front end as robots
/// come and go). Called from the ground-truth thread.
pub trait GroundTruthSink: Send + Sync {
    /// Its name in reports (`ROS 2`, `ROS 1`).
    fn name(&self) -> &'static str;
    /// Adds to `out` the robots whose topic has subscribers on this front end.
    fn heard(&self, out: &mut Vec<NodeId>);
    /// Publishes `m` of robot `node`, stamped `stamp` (system time).
    fn publish(&self, node: NodeId, m: &GroundTruth, stamp: SystemTime) -> Result<(), String>;
}

/// The ground-truth thread; stopped and joined on drop.
pub struct GroundTruthThread {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl GroundTruthThread {
    /// Starts publishing to `sinks` from `source`.
    pub fn start(
        source: Box<dyn GroundTruthSource>,
        sinks: Vec<Arc<dyn GroundTruthSink>>,
        reporter: Reporter,
    ) -> std::io::Result<GroundTruthThread> {
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let stop = stop.clone();
            std::thread::Builder::new()
                .name("nrt-ground-truth".into())
                .spawn(move || run(source, &sinks, &reporter, &stop))?
        };
        Ok(GroundTruthThread {
            stop,
            thread: Some(thread),
        })
    }
}

impl Drop for GroundTruthThread {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The last true pose of a robot and its simulated time (ns).
type Previous = BTreeMap<NodeId, (TruePose, u64)>;

fn run(
    mut source: Box<dyn GroundTruthSource>,
    sinks: &[Arc<dyn GroundTruthSink>],
    reporter: &Reporter,
    stop: &AtomicBool,
) {
    let period = Duration::from_secs_f64(1.0 / GROUND_TRUTH_HZ);
    let mut poses = Vec::new();
    let mut previous = Previous::new();
    let mut next = Instant::now();
    // While nobody listens, subscribers are looked for at IDLE_CHECK only (idle CPU).
    let mut idle = true;
    let mut heard: Vec<Vec<NodeId>> = vec![Vec::new(); sinks.len()];
    while !stop.load(Ordering::Relaxed) {
        next += if idle { IDLE_CHECK } else { period };
        let now = Instant::now();
        if next > now {
            std::thread::sleep(next - now);
        } else {
            next = now;
        }
        for (s, h) in sinks.iter().zip(heard.iter_mut()) {
            h.clear();
            s.heard(h);
        }
        idle = heard.iter().all(Vec::is_empty);
        if idle {
            // Nobody listens: forget the poses, so that a new subscriber's first velocity is not computed over
            // the whole silence.
            previous.clear();
            continue;
        }
        let Some(t_ns) = source.read(&mut poses) else {
            return;
        };
        let stamp = SystemTime::now();
        for p in &poses {
            let listening = || {
                sinks
                    .iter()
                    .zip(&heard)
                    .filter(|(_, h)| h.contains(&p.node))
            };
            if listening().next().is_none() {
                continue;
            }
            let twist = previous
                .get(&p.node)
                .and_then(|(before, t0)| body_twist(before, p, t_ns.saturating_sub(*t0)));
            let m = ground_truth(p, twist.unwrap_or_default());
            for (s, _) in listening() {
                if let Err(e) = s.publish(p.node, &m, stamp) {
                    reporter.warn(&format!(
                        "{}: node {}: cannot publish {TOPIC}: {e}",
                        s.name(),
                        p.node
                    ));
                }
            }
        }
        previous.retain(|n, _| heard.iter().any(|h| h.contains(n)));
        for p in &poses {
            previous.insert(p.node, (*p, t_ns));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    fn pose(x: f64, y: f64, theta: f64) -> TruePose {
        TruePose {
            node: NodeId(1),
            x,
            y,
            theta,
        }
    }

    #[test]
    fn velocities_are_in_the_robots_frame() {
        // heading +y, moved 5 cm along +y in 50 ms: 1 m/s forward, nothing sideways
        let t = body_twist(
            &pose(0.0, 0.0, std::f64::consts::FRAC_PI_2),
            &pose(0.0, 0.05, std::f64::consts::FRAC_PI_2),
            50_000_000,
        )
        .unwrap();
        assert!((t[0] - 1.0).abs() < 1e-9 && t[1].abs() < 1e-9 && t[2].abs() < 1e-9);
        // turning through ±π: the short way round
        let t = body_twist(&pose(0.0, 0.0, 3.1), &pose(0.0, 0.0, -3.1), 1_000_000_000).unwrap();
        assert!((t[2] - (2.0 * std::f64::consts::PI - 6.2)).abs() < 1e-9);
        assert_eq!(
            body_twist(&pose(0.0, 0.0, 0.0), &pose(1.0, 0.0, 0.0), 0),
            None
        );
    }

    #[test]
    fn the_message_carries_the_true_pose() {
        let m = ground_truth(&pose(0.5, -0.25, std::f64::consts::PI), [0.1, 0.0, 0.2]);
        assert_eq!(m.position, [0.5, -0.25, 0.0]);
        assert!((m.orientation[2] - 1.0).abs() < 1e-12 && m.orientation[3].abs() < 1e-12);
        assert_eq!(m.twist, [0.1, 0.0, 0.2]);
    }

    /// A robot moving forward at 1 m/s of simulated time, 50 ms per read.
    struct Moving(u64);

    impl GroundTruthSource for Moving {
        fn read(&mut self, out: &mut Vec<TruePose>) -> Option<u64> {
            self.0 += 1;
            out.clear();
            out.push(pose(self.0 as f64 * 0.05, 0.0, 0.0));
            out.push(TruePose {
                node: NodeId(2),
                ..Default::default()
            });
            Some(self.0 * 50_000_000)
        }
    }

    #[derive(Default)]
    struct Sink(Mutex<Vec<(NodeId, GroundTruth)>>);

    impl GroundTruthSink for Sink {
        fn name(&self) -> &'static str {
            "test"
        }
        fn heard(&self, out: &mut Vec<NodeId>) {
            out.push(NodeId(1));
        }
        fn publish(&self, node: NodeId, m: &GroundTruth, _: SystemTime) -> Result<(), String> {
            self.0.lock().unwrap().push((node, *m));
            Ok(())
        }
    }

    #[test]
    fn the_thread_publishes_the_heard_robots_with_their_velocity() {
        let sink = Arc::new(Sink::default());
        let thread = GroundTruthThread::start(
            Box::new(Moving(0)),
            vec![sink.clone()],
            Reporter::new("asebaros"),
        )
        .unwrap();
        let deadline = Instant::now() + Duration::from_secs(20);
        while sink.0.lock().unwrap().len() < 3 {
            assert!(Instant::now() < deadline, "no ground truth published");
            std::thread::sleep(Duration::from_millis(10));
        }
        drop(thread);
        let got = sink.0.lock().unwrap();
        assert!(
            got.iter().all(|(n, _)| *n == NodeId(1)),
            "robot 2 is not heard"
        );
        let (_, last) = got.last().unwrap();
        assert!((last.twist[0] - 1.0).abs() < 1e-9, "{last:?}");
    }
}
