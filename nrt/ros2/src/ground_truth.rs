//! Ground truth of a simulated robot, as Gazebo's `p3d` plugin gives it: `/<ns>/sim/ground_truth`
//! (`nav_msgs/Odometry`, frame `world`, child frame the robot's base frame) at
//! [`GROUND_TRUTH_HZ`], the robot's true pose in the simulated arena and its true velocity in its
//! own frame, published only while someone subscribes (an idle driver does not touch the
//! simulation for it).
//!
//! The source is a hook ([`GroundTruthSource`]) the process gives the bridge when it runs the
//! embedded simulator (`src/embedded.rs`): the thread here calls it, never the RT thread, and it
//! locks only the simulation (between two simulation steps) while it copies the poses. Velocities
//! are the change of the true pose between two samples (over 1 / [`GROUND_TRUTH_HZ`]), expressed
//! in the robot's frame (`linear.x` forward, `linear.y` left, `angular.z`).

use super::report::Reporter;
use super::thymio_endpoints::{reliable, topic};
use msgs::handoff::NodeId;
use r2r::nav_msgs::msg::Odometry;
use r2r::Publisher;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Rate of `sim/ground_truth` (Hz).
pub const GROUND_TRUTH_HZ: f64 = 20.0;

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

/// Where the true poses come from (the embedded simulator). Called from the ground-truth
/// thread only, at most [`GROUND_TRUTH_HZ`] times a second and only while someone subscribes.
pub trait GroundTruthSource: Send + 'static {
    /// Replaces `out` with every simulated robot's true pose; returns the simulated time (ns)
    /// they hold at, `None` if the simulation is gone.
    fn read(&mut self, out: &mut Vec<TruePose>) -> Option<u64>;
}

struct Target {
    publisher: Publisher<Odometry>,
    child_frame: String,
}

/// The robots whose ground truth is published (made by the NRT loop as robots come and go).
#[derive(Clone, Default)]
pub struct GroundTruthTargets {
    table: Arc<Mutex<BTreeMap<NodeId, Target>>>,
}

impl GroundTruthTargets {
    fn lock(&self) -> MutexGuard<'_, BTreeMap<NodeId, Target>> {
        self.table.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Creates robot `node`'s `sim/ground_truth` publisher under `ns` (relative to `ros`'s
    /// namespace), child frame `child_frame`.
    pub fn add(
        &self,
        ros: &mut r2r::Node,
        node: NodeId,
        ns: &str,
        child_frame: &str,
    ) -> Result<(), r2r::Error> {
        let publisher = ros.create_publisher(&topic(ns, TOPIC), reliable(1))?;
        self.lock().insert(
            node,
            Target {
                publisher,
                child_frame: child_frame.to_owned(),
            },
        );
        Ok(())
    }

    /// Stops publishing robot `node`'s ground truth and destroys its publisher.
    pub fn remove(&self, ros: &mut r2r::Node, node: NodeId) {
        if let Some(t) = self.lock().remove(&node) {
            ros.destroy_publisher(t.publisher);
        }
    }
}

/// The ground-truth thread; stopped and joined on drop.
pub struct GroundTruthPublisher {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl GroundTruthPublisher {
    /// Starts publishing `targets` from `source`.
    pub fn start(
        source: Box<dyn GroundTruthSource>,
        targets: GroundTruthTargets,
        reporter: Reporter,
    ) -> std::io::Result<GroundTruthPublisher> {
        let mut clocks = super::convert::Clocks::new().map_err(std::io::Error::other)?;
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let stop = stop.clone();
            std::thread::Builder::new()
                .name("nrt-ground-truth".into())
                .spawn(move || run(source, &targets, &reporter, &mut clocks, &stop))?
        };
        Ok(GroundTruthPublisher {
            stop,
            thread: Some(thread),
        })
    }
}

impl Drop for GroundTruthPublisher {
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
    targets: &GroundTruthTargets,
    reporter: &Reporter,
    clocks: &mut super::convert::Clocks,
    stop: &AtomicBool,
) {
    let period = Duration::from_secs_f64(1.0 / GROUND_TRUTH_HZ);
    let mut poses = Vec::new();
    let mut previous = Previous::new();
    let mut next = Instant::now();
    while !stop.load(Ordering::Relaxed) {
        next += period;
        let now = Instant::now();
        if next > now {
            std::thread::sleep(next - now);
        } else {
            next = now;
        }
        let table = targets.lock();
        let heard: Vec<NodeId> = table
            .iter()
            .filter(|(_, t)| {
                t.publisher
                    .get_inter_process_subscription_count()
                    .is_ok_and(|n| n > 0)
            })
            .map(|(n, _)| *n)
            .collect();
        if heard.is_empty() {
            // Nobody listens: forget the poses, so that a new subscriber's first velocity is
            // not computed over the whole silence.
            previous.clear();
            continue;
        }
        let Some(t_ns) = source.read(&mut poses) else {
            return;
        };
        let stamp = clocks.now();
        for p in poses.iter().filter(|p| heard.contains(&p.node)) {
            let Some(target) = table.get(&p.node) else {
                continue;
            };
            let twist = previous
                .get(&p.node)
                .and_then(|(before, t0)| body_twist(before, p, t_ns.saturating_sub(*t0)));
            let msg = odometry(p, twist.unwrap_or_default(), &stamp, &target.child_frame);
            if let Err(e) = target.publisher.publish(&msg) {
                reporter.warn(&format!("node {}: cannot publish {TOPIC}: {e}", p.node));
            }
        }
        previous.retain(|n, _| heard.contains(n));
        for p in &poses {
            previous.insert(p.node, (*p, t_ns));
        }
    }
}

/// The velocity (forward, left, turn rate) that took a robot from `a` to `b` in `dt_ns`, in
/// its own frame at the middle of the move; `None` if no time passed.
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

/// The message of one robot's ground truth.
pub fn odometry(
    p: &TruePose,
    twist: [f64; 3],
    stamp: &r2r::builtin_interfaces::msg::Time,
    child_frame: &str,
) -> Odometry {
    let mut m = Odometry::default();
    m.header.stamp = stamp.clone();
    m.header.frame_id = WORLD_FRAME.to_owned();
    m.child_frame_id = child_frame.to_owned();
    m.pose.pose.position.x = p.x;
    m.pose.pose.position.y = p.y;
    let (s, c) = (p.theta / 2.0).sin_cos();
    m.pose.pose.orientation.z = s;
    m.pose.pose.orientation.w = c;
    m.twist.twist.linear.x = twist[0];
    m.twist.twist.linear.y = twist[1];
    m.twist.twist.angular.z = twist[2];
    m
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn the_message_carries_the_true_pose_in_the_world_frame() {
        let m = odometry(
            &pose(0.5, -0.25, std::f64::consts::PI),
            [0.1, 0.0, 0.2],
            &Default::default(),
            "thymio_1/base_link",
        );
        assert_eq!(m.header.frame_id, "world");
        assert_eq!(m.child_frame_id, "thymio_1/base_link");
        assert_eq!(
            (m.pose.pose.position.x, m.pose.pose.position.y),
            (0.5, -0.25)
        );
        assert!((m.pose.pose.orientation.z - 1.0).abs() < 1e-12);
        assert_eq!(
            (m.twist.twist.linear.x, m.twist.twist.angular.z),
            (0.1, 0.2)
        );
    }
}
