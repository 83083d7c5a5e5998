//! The hot paths against real r2r nodes in this process: while the bridge node is held (its
//! lock taken, as the NRT loop holds it while it creates a robot's topics, and its spinner thus
//! stuck), odometry handed over by the RT half still gets published by the publisher thread, and
//! `cmd_vel` still reaches the RT set-point through the hot node, stamped and timed; so do the
//! extended joint states (publisher thread) and `joint_command` (hot node) of issue 17. The RT half hands
//! a robot's odometry over only while someone subscribes to what the publisher thread makes of it.

use super::hot::HotNode;
use super::joints::{self, JointTarget};
use super::odom_pub::{self, OdomPublisherConfig, OdomRobot, OdomTargets, Ros2Out};
use super::rclpy_peer::rerun_without_ld_library_path;
use super::smoke_tests::context;
use super::spinner::{SharedNode, Spinner};
use super::thymio_conv::Frames;
use super::thymio_endpoints::{cmd_vel_task, plain_command, reliable, CmdVelTarget};
use handoff::{live_params, monotonic_ns, odom_out, NodeId, OdomSample, RobotId, Twist2};
use handoff::{JointStateSample, OwnerNames};
use nrt_engine::thymio::calibration::Calibration;
use nrt_interface::hop_times::NrtHopTimers;
use nrt_interface::joints::JointCommandInput;
use nrt_interface::odometry::OdomSettings;
use r2r::geometry_msgs::msg::Twist;
use r2r::nav_msgs::msg::Odometry;
use r2r::sensor_msgs::msg::JointState as JointCommandMsg;
use r2r::thymio_rt_msgs::msg::JointState as ExtJointState;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::time::{Duration, Instant};

const TEST_TIMEOUT: Duration = Duration::from_secs(30);

fn test_path(name: &str) -> String {
    format!(
        "{}::{name}",
        module_path!().trim_start_matches("nrt_ros2::")
    )
}

#[test]
fn odometry_and_cmd_vel_pass_while_the_bridge_node_is_held() {
    if rerun_without_ld_library_path(
        &test_path("odometry_and_cmd_vel_pass_while_the_bridge_node_is_held"),
        TEST_TIMEOUT,
    ) {
        return;
    }
    let deadline = Instant::now() + TEST_TIMEOUT;
    let ns = format!("hot_path_{}", std::process::id());
    let mut node = r2r::Node::create(context(), "hot_path_bridge", &ns).expect("bridge node");
    let reporter = super::report::node_reporter(&mut node).expect("reporter");
    let qos = reliable(10);
    let odom = node
        .create_publisher::<Odometry>("odom", qos.clone())
        .unwrap();
    let joints = node.create_publisher("joint_states", qos.clone()).unwrap();
    let tf = node.create_publisher("/tf", qos.clone()).unwrap();
    let ext = node
        .create_publisher::<ExtJointState>("thymio_driver/joint_states", qos.clone())
        .unwrap();
    let cmd_vel_out = node
        .create_publisher::<r2r::geometry_msgs::msg::TwistStamped>(
            "thymio_driver/cmd_vel_out",
            qos.clone(),
        )
        .unwrap();
    let bridge = SharedNode::new(node);
    let spinner = Spinner::start(bridge.clone(), handoff::Doorbell::new()).unwrap();
    // The ROS client's side: another node, spun here.
    let mut client = r2r::Node::create(context(), "hot_path_client", &ns).expect("client");
    let mut odom_sub = client.subscribe::<Odometry>("odom", qos.clone()).unwrap();
    let cmd_pub = client
        .create_publisher::<Twist>("cmd_vel", qos.clone())
        .unwrap();
    let mut ext_sub = client
        .subscribe::<ExtJointState>("thymio_driver/joint_states", qos.clone())
        .unwrap();
    let joint_pub = client
        .create_publisher::<JointCommandMsg>("thymio_driver/joint_command", qos.clone())
        .unwrap();

    // the odometry publisher thread, fed by the RT half of its ring
    let timers = NrtHopTimers::default();
    let targets = OdomTargets::new(tf);
    let odom_probe = odom.clone();
    targets.insert(
        RobotId(0),
        OdomRobot {
            node: NodeId(1),
            out: Ros2Out {
                odom,
                joints,
                cmd_vel_out,
            },
            frames: Frames::new(&ns, "odom", "base_link", ["l", "r"]),
            settings: OdomSettings::new(&Calibration::simulation(), &Default::default()),
            max_rate: -1.0,
            limited_velocity: Default::default(),
            wheel_tf: true,
        },
    );
    let ext_probe = ext.clone();
    targets.insert_joints(
        RobotId(0),
        JointTarget {
            node: NodeId(1),
            publisher: ext,
            names: ["l".into(), "r".into()],
            owners: OwnerNames::new(vec!["go_to_pose"]),
        },
    );
    let (mut rt_out, mut nrt_out) = odom_out(16);
    nrt_out.nrt_activate();
    let publisher = odom_pub::start(OdomPublisherConfig {
        outs: vec![nrt_out],
        targets,
        reporter: reporter.clone(),
        timers: timers.clone(),
        placement: Default::default(),
    })
    .unwrap();

    // the hot node with one robot's cmd_vel
    let hot = HotNode::start("hot_path_bridge", &ns).unwrap();
    let (mut rt_params, params) = live_params(1);
    let joint_sub =
        joints::subscribe(hot.shared().access().get(), "thymio_driver/joint_command").unwrap();
    hot.shared().add_task(joints::joint_command_task(
        joint_sub,
        JointCommandInput::new(
            params.clone(),
            RobotId(0),
            NodeId(1),
            [["l".into(), "ns/l".into()], ["r".into(), "ns/r".into()]],
            Arc::new(AtomicU64::new(0)),
        ),
        reporter.clone(),
    ));
    let sub = hot
        .shared()
        .access()
        .get()
        .subscribe::<Twist>("cmd_vel", qos.clone())
        .unwrap();
    hot.shared().add_task(cmd_vel_task(
        Box::new(sub),
        plain_command,
        CmdVelTarget {
            gate: nrt_interface::cmd_vel::CmdVelGate::new(params, RobotId(0), NodeId(1), 0.0),
            reporter,
            timer: timers.cmd_vel_to_set_point.clone(),
        },
    ));
    // Let discovery match the client with both nodes before the bridge node is held.
    let matched = |n: Result<usize, r2r::Error>| n.unwrap_or(0) > 0;
    while !matched(cmd_pub.get_inter_process_subscription_count())
        || !matched(odom_probe.get_inter_process_subscription_count())
        || !matched(joint_pub.get_inter_process_subscription_count())
        || !matched(ext_probe.get_inter_process_subscription_count())
    {
        assert!(Instant::now() < deadline, "no discovery");
        client.spin_once(Duration::from_millis(20));
    }

    let mut held = bridge.access();
    held.get();
    // odometry: every sample handed over is published at once
    let mut received = Vec::new();
    let mut next = 0u32;
    while received.len() < 3 {
        assert!(Instant::now() < deadline, "odom received: {received:?}");
        if next < 3 {
            let s = OdomSample {
                robot: RobotId(0),
                node: NodeId(1),
                seq: next,
                t_ns: monotonic_ns(),
                ..OdomSample::default()
            };
            // refused until the publisher thread counted the client's subscription (odom_demand)
            if rt_out.rt_publish(s, Twist2::default(), monotonic_ns()) {
                next += 1;
            }
        }
        client.spin_once(Duration::from_millis(20));
        received.extend(super::drain(&mut odom_sub).map(|m| m.header.frame_id));
    }
    assert!(received.iter().all(|f| *f == format!("{ns}/odom")));
    // (timed once the publish calls returned: maybe just after the client got the message)
    let timed = |n: u64, what: fn(&handoff::RosHops) -> u64| loop {
        let hops = timers.summaries();
        if what(&hops) >= n {
            return hops;
        }
        assert!(Instant::now() < deadline, "{hops:?}");
        std::thread::sleep(Duration::from_millis(5));
    };
    let hops = timed(3, |h| h.publish.count);
    assert_eq!(hops.handed_to_publish.count, 3, "{hops:?}");
    // cmd_vel: through the hot node to the set-point, stamped when taken, rung
    let mut twist = Twist::default();
    twist.linear.x = 0.07;
    let before = monotonic_ns();
    let stored = loop {
        assert!(
            Instant::now() < deadline,
            "cmd_vel never reached the set-point"
        );
        cmd_pub.publish(&twist).unwrap();
        client.spin_once(Duration::from_millis(20));
        match rt_params.rt_cmd_vel_stamped(RobotId(0)) {
            Some((t, at, true)) => break (t, at),
            _ => continue,
        }
    };
    assert_eq!(
        stored.0,
        Twist2 {
            linear: 0.07,
            angular: 0.0
        }
    );
    assert!(
        stored.1 >= before && stored.1 <= monotonic_ns(),
        "{stored:?}"
    );
    assert!(
        rt_params.rt_wake_bell().drain(),
        "the RT thread was not rung"
    );
    timed(1, |h| h.cmd_vel_to_set_point.count);
    // extended joint states: published by the publisher thread as the RT half hands them over
    let sample = JointStateSample {
        robot: RobotId(0),
        node: NodeId(1),
        t_ns: monotonic_ns(),
        owner: handoff::OwnerId::controller(0),
        ..JointStateSample::default()
    };
    let owner = loop {
        assert!(Instant::now() < deadline, "no extended joint state");
        assert!(rt_out.rt_publish_joint(sample));
        client.spin_once(Duration::from_millis(20));
        if let Some(m) = super::drain(&mut ext_sub).last() {
            break m.owner;
        }
    };
    assert_eq!(owner, "go_to_pose");
    // joint_command: through the hot node to the RT joint set-point, by name
    let command = JointCommandMsg {
        name: vec!["r".into()],
        velocity: vec![2.5],
        ..JointCommandMsg::default()
    };
    let joint = loop {
        assert!(Instant::now() < deadline, "joint_command never reached RT");
        joint_pub.publish(&command).unwrap();
        client.spin_once(Duration::from_millis(20));
        match rt_params.rt_joint_command_stamped(RobotId(0)) {
            Some((c, _, true)) => break c,
            _ => continue,
        }
    };
    assert!(
        joint.velocity[0].is_nan() && joint.velocity[1] == 2.5,
        "{joint:?}"
    );
    drop(held);
    drop(publisher);
    drop(hot);
    drop(spinner);
}

/// A sample handed over to nobody is refused by the RT half (no push, no wake-up of the publisher thread):
/// at first (no subscriber), after a client subscribes to `odom` it is published, and after the client went
/// away it is refused again.
#[test]
fn odometry_is_handed_over_only_while_someone_listens() {
    if rerun_without_ld_library_path(
        &test_path("odometry_is_handed_over_only_while_someone_listens"),
        TEST_TIMEOUT,
    ) {
        return;
    }
    // inside the rerun's bound, so that a failure says which step
    let deadline = Instant::now() + TEST_TIMEOUT - Duration::from_secs(10);
    let ns = format!("odom_demand_{}", std::process::id());
    let mut node = r2r::Node::create(context(), "odom_demand_bridge", &ns).expect("node");
    let reporter = super::report::node_reporter(&mut node).expect("reporter");
    let qos = reliable(10);
    let odom = node
        .create_publisher::<Odometry>("odom", qos.clone())
        .unwrap();
    let targets = OdomTargets::new(node.create_publisher("tf_demand", qos.clone()).unwrap());
    targets.insert(
        RobotId(2),
        OdomRobot {
            node: NodeId(3),
            out: Ros2Out {
                odom,
                joints: node.create_publisher("joint_states", qos.clone()).unwrap(),
                cmd_vel_out: node
                    .create_publisher("thymio_driver/cmd_vel_out", qos.clone())
                    .unwrap(),
            },
            frames: Frames::new(&ns, "odom", "base_link", ["l", "r"]),
            settings: OdomSettings::new(&Calibration::simulation(), &Default::default()),
            max_rate: -1.0,
            limited_velocity: Default::default(),
            wheel_tf: true,
        },
    );
    let (mut rt_out, mut nrt_out) = odom_out(16);
    nrt_out.nrt_activate();
    let publisher = odom_pub::start(OdomPublisherConfig {
        outs: vec![nrt_out],
        targets,
        reporter,
        timers: NrtHopTimers::default(),
        placement: Default::default(),
    })
    .unwrap();
    let mut seq = 0;
    let mut hand = |rt_out: &mut handoff::RtOdomOut| {
        seq += 1;
        let s = OdomSample {
            robot: RobotId(2),
            node: NodeId(3),
            seq,
            t_ns: monotonic_ns(),
            ..OdomSample::default()
        };
        rt_out.rt_publish(s, Twist2::default(), monotonic_ns())
    };
    let poll = Duration::from_millis(10);
    while hand(&mut rt_out) {
        assert!(Instant::now() < deadline, "handed over to nobody");
        std::thread::sleep(poll);
    }
    let mut client = r2r::Node::create(context(), "odom_demand_client", &ns).expect("client");
    let mut sub = client.subscribe::<Odometry>("odom", qos.clone()).unwrap();
    let mut received = 0;
    while received == 0 {
        assert!(
            Instant::now() < deadline,
            "never handed over to the subscriber"
        );
        hand(&mut rt_out);
        client.spin_once(poll);
        received += super::drain(&mut sub).count();
    }
    drop(sub);
    drop(client);
    while hand(&mut rt_out) {
        assert!(
            Instant::now() < deadline,
            "still handed over after the subscriber left"
        );
        std::thread::sleep(poll);
    }
    assert_eq!(rt_out.rt_dropped(), 0);
    drop(publisher);
}
