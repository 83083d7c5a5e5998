//! Toolchain proof against a real rclpy process: r2r messages of the project's interface packages reach rclpy, from
//! a test executable running without `LD_LIBRARY_PATH` (its DT_RPATH and libpython NEEDED entry come from
//! `nrt/build.rs`).

use super::rclpy_peer::{rerun_without_ld_library_path, test_domain_id, RclpyPeer};
use r2r::asebaros_msgs::msg::{Node as AsebaNode, NodeList};
use r2r::builtin_interfaces::msg::Time;
use r2r::geometry_msgs::msg::{Quaternion, Transform, TransformStamped, Vector3};
use r2r::std_msgs::msg::Header;
use r2r::tf2_msgs::msg::TFMessage;
use r2r::QosProfile;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// Bound of one whole test (DDS discovery with rclpy sometimes takes ~3 s).
const TEST_TIMEOUT: Duration = Duration::from_secs(30);

/// The process's r2r context, on this test process's own DDS domain, confined to loopback.
pub(crate) fn context() -> r2r::Context {
    static DOMAIN: OnceLock<()> = OnceLock::new();
    DOMAIN.get_or_init(|| {
        // Set once, before rcl reads them in its init; no other thread of this crate's tests touches the
        // environment.
        std::env::set_var("ROS_DOMAIN_ID", test_domain_id().to_string());
        std::env::set_var("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST");
    });
    r2r::Context::create().expect("r2r context")
}

/// This test's name as libtest knows it (`smoke_tests::<name>`).
fn test_path(name: &str) -> String {
    format!(
        "{}::{name}",
        module_path!().trim_start_matches("nrt_ros2::")
    )
}

fn sample_node_list() -> NodeList {
    NodeList {
        nodes: vec![
            AsebaNode {
                id: 1,
                name: "thymio-II".into(),
                name_space: "thymio".into(),
                running: true,
                ignored: false,
                connected: true,
            },
            AsebaNode {
                id: 48069,
                name: "e-puck0".into(),
                name_space: String::new(),
                running: false,
                ignored: true,
                connected: false,
            },
        ],
    }
}

#[test]
fn node_list_transient_local_reaches_late_rclpy_subscriber() {
    if rerun_without_ld_library_path(
        &test_path("node_list_transient_local_reaches_late_rclpy_subscriber"),
        TEST_TIMEOUT,
    ) {
        return;
    }
    let deadline = Instant::now() + TEST_TIMEOUT;
    let topic = format!("/smoke_{}/aseba/nodes", std::process::id());
    let mut node = r2r::Node::create(context(), "smoke_node_list", "").expect("r2r node");
    let publisher = node
        .create_publisher::<NodeList>(
            &topic,
            QosProfile::default()
                .keep_last(1)
                .reliable()
                .transient_local(),
        )
        .expect("publisher");
    let sent = sample_node_list();
    // Published before the subscriber exists: only transient_local durability can deliver it.
    publisher.publish(&sent).expect("publish");

    let mut peer = RclpyPeer::spawn(
        test_domain_id(),
        &[
            "echo",
            "--topic",
            &topic,
            "--type",
            "asebaros_msgs/msg/NodeList",
            "--durability",
            "transient_local",
            "--depth",
            "1",
            "--timeout",
            "20",
        ],
    )
    .expect("spawn rclpy peer");
    let report = peer
        .wait_for("message", deadline)
        .expect("NodeList at rclpy");
    assert_eq!(report["data"], serde_json::to_value(&sent).unwrap());
    peer.wait_for("done", deadline).expect("peer done");
}

#[test]
fn tf_message_on_tf_reaches_rclpy() {
    if rerun_without_ld_library_path(&test_path("tf_message_on_tf_reaches_rclpy"), TEST_TIMEOUT) {
        return;
    }
    let deadline = Instant::now() + TEST_TIMEOUT;
    let mut node = r2r::Node::create(context(), "smoke_tf", "").expect("r2r node");
    // tf2's QoS for /tf: reliable, volatile, depth 100.
    let publisher = node
        .create_publisher::<TFMessage>("/tf", QosProfile::default().keep_last(100).reliable())
        .expect("publisher");
    let mut peer = RclpyPeer::spawn(
        test_domain_id(),
        &[
            "echo",
            "--topic",
            "/tf",
            "--type",
            "tf2_msgs/msg/TFMessage",
            "--depth",
            "100",
            "--timeout",
            "20",
        ],
    )
    .expect("spawn rclpy peer");
    peer.wait_for("ready", deadline).expect("rclpy subscribed");

    let sent = TFMessage {
        transforms: vec![TransformStamped {
            header: Header {
                stamp: Time {
                    sec: 1_700_000_000,
                    nanosec: 123_456_789,
                },
                frame_id: "odom".into(),
            },
            child_frame_id: "base_link".into(),
            transform: Transform {
                translation: Vector3 {
                    x: 0.25,
                    y: -0.5,
                    z: 0.0,
                },
                rotation: Quaternion {
                    x: 0.0,
                    y: 0.0,
                    z: 0.5,
                    w: 0.75f64.sqrt(),
                },
            },
        }],
    };
    // Volatile: keep publishing until rclpy reports the first one (it matches us a little after we match it).
    let report = loop {
        assert!(
            Instant::now() < deadline,
            "no TFMessage reached rclpy; stderr: {}",
            peer.stderr()
        );
        let matched = publisher
            .get_inter_process_subscription_count()
            .expect("subscription count")
            > 0;
        if matched {
            publisher.publish(&sent).expect("publish");
        }
        if let Some(report) = peer
            .poll_for("message", Instant::now() + Duration::from_millis(100))
            .expect("peer")
        {
            break report;
        }
    };
    assert_eq!(report["data"], serde_json::to_value(&sent).unwrap());
}

/// The spinner thread fills the node's streams and wakes the NRT loop, and lets the loop create topics while it
/// spins (each creation waits for the spinner to step aside; a deadlock would end in the test's time bound).
#[test]
fn spinner_wakes_the_loop_and_lets_topics_be_created() {
    use super::spinner::{SharedNode, Spinner};
    use r2r::std_msgs::msg::Int32;
    if rerun_without_ld_library_path(
        &test_path("spinner_wakes_the_loop_and_lets_topics_be_created"),
        TEST_TIMEOUT,
    ) {
        return;
    }
    let deadline = Instant::now() + TEST_TIMEOUT;
    let topic = format!("/smoke_{}/spinner", std::process::id());
    let mut node = r2r::Node::create(context(), "smoke_spinner", "").expect("r2r node");
    let qos = QosProfile::default().keep_last(10).reliable();
    let mut sub = node.subscribe::<Int32>(&topic, qos.clone()).expect("sub");
    let shared = SharedNode::new(node);
    let wake = handoff::Doorbell::new();
    let spinner = Spinner::start(shared.clone(), wake.clone()).expect("spinner");

    // Topics created while the spinner runs, one lock each.
    let publishers: Vec<_> = (0..20)
        .map(|i| {
            shared
                .access()
                .get()
                .create_publisher::<Int32>(&format!("{topic}_{i}"), qos.clone())
                .expect("publisher created while spinning")
        })
        .collect();
    let publisher = shared
        .access()
        .get()
        .create_publisher::<Int32>(&topic, qos.clone())
        .expect("publisher");

    // Messages reach the stream through the spinner; the loop is woken for them.
    let mut received = Vec::new();
    let mut next = 0;
    while received.len() < 5 {
        assert!(Instant::now() < deadline, "received only {received:?}");
        if next < 5 {
            publisher.publish(&Int32 { data: next }).expect("publish");
            next += 1;
        }
        wake.wait(Duration::from_millis(100));
        received.extend(super::drain(&mut sub).map(|m| m.data));
    }
    assert_eq!(received, [0, 1, 2, 3, 4]);

    // A spinner task drains its own subscription on the spinner thread, until removed.
    let task_topic = format!("{topic}_task");
    let mut task_sub = shared
        .access()
        .get()
        .subscribe::<Int32>(&task_topic, qos.clone())
        .expect("task sub");
    let task_pub = shared
        .access()
        .get()
        .create_publisher::<Int32>(&task_topic, qos.clone())
        .expect("task pub");
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let task = {
        let seen = seen.clone();
        shared.add_task(Box::new(move || {
            seen.lock()
                .unwrap()
                .extend(super::drain(&mut task_sub).map(|m| m.data));
        }))
    };
    let mut sent = 0;
    while seen.lock().unwrap().len() < 3 {
        assert!(
            Instant::now() < deadline,
            "the task saw {:?}",
            seen.lock().unwrap()
        );
        task_pub.publish(&Int32 { data: sent }).expect("publish");
        sent += 1;
        wake.wait(Duration::from_millis(100));
    }
    shared.remove_task(task);
    let after_removal = seen.lock().unwrap().len();
    // A removed task runs no more (the message goes nowhere: its stream is dropped).
    task_pub.publish(&Int32 { data: -1 }).expect("publish");
    for _ in 0..5 {
        wake.wait(Duration::from_millis(20));
    }
    assert_eq!(seen.lock().unwrap().len(), after_removal);
    assert!(!seen.lock().unwrap().contains(&-1));
    drop(task_pub);

    // A task that panics ends the spinner thread, and that can be seen.
    assert!(spinner.is_running());
    shared.add_task(Box::new(|| panic!("a task bug (expected by the test)")));
    while spinner.is_running() {
        assert!(
            Instant::now() < deadline,
            "the spinner survived a panicking task"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    drop(publishers);
    drop(spinner);
    // The spinner has let the node go: only this test holds it now.
    assert_eq!(std::sync::Arc::strong_count(&shared), 1);
}

/// A spinner whose waits run out rings no one (it used to ring the NRT loop after every wait, idle or not, 100 times
/// a second), rings at once for a message, and stops within about one wait.
#[test]
fn an_idle_spinner_rings_no_one_until_ros_has_work() {
    use super::spinner::{SharedNode, Spinner, SPIN_TIMEOUT};
    use r2r::std_msgs::msg::Int32;
    if rerun_without_ld_library_path(
        &test_path("an_idle_spinner_rings_no_one_until_ros_has_work"),
        TEST_TIMEOUT,
    ) {
        return;
    }
    let deadline = Instant::now() + TEST_TIMEOUT / 2;
    let topic = format!("/smoke_{}/idle_spinner", std::process::id());
    let mut node = r2r::Node::create(context(), "smoke_idle_spinner", "").expect("r2r node");
    let qos = QosProfile::default().keep_last(10).reliable();
    let mut sub = node.subscribe::<Int32>(&topic, qos.clone()).expect("sub");
    let publisher = node.create_publisher::<Int32>(&topic, qos).expect("pub");
    let shared = SharedNode::new(node);
    let wake = handoff::Doorbell::new();
    let spinner = Spinner::start(shared.clone(), wake.clone()).expect("spinner");
    // Whatever the start brought (matching of our own endpoints) is over within a few waits.
    while wake.wait(2 * SPIN_TIMEOUT) {
        assert!(Instant::now() < deadline, "the idle spinner keeps ringing");
    }
    assert!(
        !wake.wait(5 * SPIN_TIMEOUT),
        "an idle spinner rang the NRT loop"
    );
    // Published until received: the subscription may not be matched yet (then the message is lost).
    let mut got = Vec::new();
    while got.is_empty() {
        assert!(Instant::now() < deadline, "no ring for the message");
        publisher.publish(&Int32 { data: 7 }).expect("publish");
        // Far longer than the spinner's timeout: only a ring for the message ends it with true.
        if wake.wait(Duration::from_secs(1)) {
            got.extend(super::drain(&mut sub).map(|m| m.data));
        }
    }
    assert!(got.iter().all(|v| *v == 7), "{got:?}");
    let t0 = Instant::now();
    drop(spinner);
    assert!(
        t0.elapsed() < SPIN_TIMEOUT + Duration::from_secs(2),
        "stopping the spinner took {:?}",
        t0.elapsed()
    );
}
