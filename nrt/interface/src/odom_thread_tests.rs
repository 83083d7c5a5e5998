//! Tests of the odometry publisher threads.

use super::*;
use crate::frames::Frames;
use crate::odometry::OdomSettings;
use handoff::{odom_out, Twist2};
use nrt_engine::thymio::calibration::Calibration;
use nrt_engine::thymio::params::DriverParams;
use std::sync::Mutex;
use std::time::Duration;

/// A sink that writes down what it is asked to do.
#[derive(Clone)]
struct Log(Arc<Mutex<Vec<String>>>);

impl Log {
    fn push(&self, e: String) {
        self.0.lock().unwrap().push(e);
    }
}

impl OdomSink for Log {
    type Out = &'static str;
    type Rest = String;
    type Error = String;

    fn count_tf(&self) -> Option<usize> {
        Some(0)
    }
    fn count(&self, _: &&'static str, topic: Topic) -> Option<usize> {
        Some(usize::from(topic == Topic::Odom))
    }
    fn prepare(&mut self, _: RobotId, r: &OdomRobot<&'static str>, generation: u64) {
        self.push(format!("prepare {} {generation}", r.out));
    }
    fn forget(&mut self, robot: RobotId) {
        self.push(format!("forget {}", robot.0));
    }
    fn publish_cmd_vel_out(
        &mut self,
        _: RobotId,
        r: &mut OdomRobot<&'static str>,
        h: &OdomHandoff,
    ) -> Result<(), String> {
        self.push(format!("cmd_vel_out {} {}", r.out, h.commanded.linear));
        Ok(())
    }
    fn publish_odom(
        &mut self,
        _: RobotId,
        r: &mut OdomRobot<&'static str>,
        s: &OdomSample,
    ) -> Result<(), String> {
        self.push(format!("odom {} {}", r.out, s.seq));
        Err("refused".into())
    }
    fn rest(&mut self, _: RobotId, r: &OdomRobot<&'static str>, s: &OdomSample) -> String {
        format!("{} {}", r.out, s.seq)
    }
    fn publish_tf(&mut self, _: RobotId, rest: &mut String) -> Result<(), String> {
        self.push(format!("tf {rest}"));
        Ok(())
    }
    fn publish_joint_states(
        &mut self,
        _: RobotId,
        _: &mut OdomRobot<&'static str>,
        rest: &mut String,
    ) -> Result<(), String> {
        self.push(format!("joint_states {rest}"));
        Ok(())
    }
    fn publish_joint(&mut self, s: &JointStateSample) {
        self.push(format!("joint {}", s.robot.0));
    }
    fn warn(&self, node: NodeId, what: &str, e: &String) {
        self.push(format!("warn {} {what}: {e}", node.0));
    }
}

fn robot(
    node: u16,
    name: &'static str,
    max_rate: f64,
    cmd_vel_out: bool,
) -> OdomRobot<&'static str> {
    OdomRobot {
        node: NodeId(node),
        frames: Frames::new(name, "odom", "base_link", ["l", "r"]),
        settings: OdomSettings::new(&Calibration::real(), &DriverParams::default()),
        max_rate,
        limited_velocity: Arc::new(AtomicBool::new(cmd_vel_out)),
        wheel_tf: true,
        out: name,
    }
}

fn sample(robot: u8, node: u16, seq: u32) -> OdomSample {
    OdomSample {
        robot: RobotId(robot),
        node: NodeId(node),
        seq,
        ..OdomSample::default()
    }
}

/// A publisher thread named `name` on `rings` for `targets`, whose every sink writes into the returned log.
fn logging_thread(
    name: &'static str,
    rings: Vec<handoff::NrtOdomOut>,
    targets: &OdomTargets<&'static str>,
) -> (OdomThread, Arc<Mutex<Vec<String>>>) {
    let log = Arc::new(Mutex::new(Vec::new()));
    let sink = Log(log.clone());
    let thread = OdomThread::start(
        name,
        rings,
        targets.clone(),
        NrtHopTimers::default(),
        Default::default(),
        move |_| {
            Ok({
                let sink = sink.clone();
                move || sink
            })
        },
    )
    .unwrap();
    (thread, log)
}

/// Waits (bounded) until the log holds `e`, then returns the log.
fn wait_for(log: &Mutex<Vec<String>>, e: &str) -> Vec<String> {
    let end = Instant::now() + Duration::from_secs(10);
    loop {
        let l = log.lock().unwrap().clone();
        if l.iter().any(|x| x == e) || Instant::now() > end {
            return l;
        }
        std::thread::yield_now();
    }
}

/// Every robot's `odom` of a burst first, then their `/tf` and `joint_states`; `~/cmd_vel_out` only while
/// `limited_velocity`; samples of no target (or of another node in the slot) are not published;
/// `odom_max_rate` holds back a sample too soon; publish errors are reported; settings changes rebuild.
#[test]
fn a_burst_publishes_every_odom_first_within_the_rules() {
    let targets = OdomTargets::default();
    targets.insert(RobotId(1), robot(10, "a", 0.0, true));
    targets.insert(RobotId(2), robot(20, "b", 0.001, false));
    let (mut rt, mut out) = odom_out(16);
    out.nrt_activate();
    let commanded = Twist2 {
        linear: 0.5,
        angular: 0.0,
    };
    for s in [sample(1, 10, 1), sample(2, 20, 1), sample(3, 30, 1)] {
        assert!(rt.rt_publish(s, commanded, 1));
    }
    let (thread, log) = logging_thread("odom-test", vec![out], &targets);
    let first = wait_for(&log, "joint_states b 1");
    assert_eq!(
        first,
        [
            "prepare a 1",
            "cmd_vel_out a 0.5",
            "odom a 1",
            "warn 10 odometry: refused",
            "prepare b 2",
            "odom b 1",
            "warn 20 odometry: refused",
            "forget 3",
            "tf a 1",
            "joint_states a 1",
            "tf b 1",
            "joint_states b 1",
        ]
    );
    assert_eq!(thread.published(), 2);
    log.lock().unwrap().clear();
    // same settings: the entry is unchanged; new ones: it is rebuilt
    let mut settings = OdomSettings::new(&Calibration::real(), &DriverParams::default());
    targets.set_settings(RobotId(1), &settings);
    settings.odom_tf = !settings.odom_tf;
    targets.set_settings(RobotId(2), &settings);
    assert!(rt.rt_publish(sample(2, 20, 2), commanded, 2)); // within b's 1000 s: held back
    assert!(rt.rt_publish(sample(1, 11, 2), commanded, 2)); // another node in a's slot
    assert!(rt.rt_publish_joint(JointStateSample {
        robot: RobotId(1),
        ..JointStateSample::default()
    }));
    let second = wait_for(&log, "joint 1");
    assert_eq!(second, ["prepare b 3", "forget 1", "joint 1"]);
    assert_eq!(thread.published(), 2);
    drop(thread);
    assert!(
        log.lock().unwrap().len() == 3,
        "nothing after the thread stopped"
    );
}

/// With two groups, each ring's thread publishes its own robots (robot index modulo 2) and both go on at once.
#[test]
fn groups_publish_their_own_robots_on_threads_of_their_own() {
    let targets = OdomTargets::default();
    targets.insert(RobotId(1), robot(10, "a", 0.0, false));
    targets.insert(RobotId(2), robot(20, "b", 0.0, false));
    let (mut rt, mut nrt) = handoff::channels(&handoff::ChannelConfig {
        odometry_out_groups: 2,
        ..Default::default()
    });
    let rings = nrt.nrt_take_odometry_groups().unwrap();
    assert_eq!(rings.len(), 2);
    let (thread, log) = logging_thread("odom-groups", rings, &targets);
    assert!(thread.is_running());
    for s in [sample(1, 10, 1), sample(2, 20, 1)] {
        assert!(rt.rt_publish_odometry(s, Twist2::default(), 1));
    }
    wait_for(&log, "joint_states a 1");
    let got = wait_for(&log, "joint_states b 1");
    for robot in ["a", "b"] {
        let of_robot: Vec<String> = got
            .iter()
            .filter(|e| !e.starts_with("prepare") && e.split(' ').nth(1) == Some(robot))
            .cloned()
            .collect();
        assert_eq!(
            of_robot,
            [
                format!("odom {robot} 1"),
                format!("tf {robot} 1"),
                format!("joint_states {robot} 1")
            ],
            "{got:?}"
        );
    }
    assert_eq!(thread.published(), 2);
    targets.remove(RobotId(2));
    assert!(rt.rt_publish_odometry(sample(2, 20, 2), Twist2::default(), 2));
    wait_for(&log, "forget 2");
    drop(thread);
}
