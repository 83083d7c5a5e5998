//! Messages of run-time types against real ROS 1 peers (issue 27, item 3): Debian's rosmaster and a rospy node
//! (`/usr/bin/python3`). Our node (a `Graph`, as the controllers use it) publishes a geometry_msgs/PointStamped encoded from JSON through
//! `advertise_raw`, subscribes a sensor_msgs/JointState that rospy publishes through `forward_raw` and decodes
//! it, serves std_srvs/SetBool through `serve_raw` (an answer and an error); and genpy's md5sums and full
//! definitions (`_md5sum`, `_full_text`) are those `Ros1Types` computes.

#[path = "../../../tests/common/missing.rs"]
#[allow(unused_macros)]
mod missing;

use nrt_ros1_client::dynamic::Ros1Types;
use nrt_ros1_client::graph::{Graph, Registration};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const PYTHON: &str = "/usr/bin/python3";

/// A child process killed on drop.
struct Proc(Child);

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Whether rosmaster and rospy are there (a missing one fails the test, unless the run opted out).
fn need_ros1() -> bool {
    let ok = std::path::Path::new("/usr/bin/rosmaster").exists()
        && Command::new(PYTHON)
            .args(["-c", "import rospy, genpy, geometry_msgs.msg, sensor_msgs.msg, nav_msgs.msg, std_srvs.srv"])
            .output()
            .is_ok_and(|o| o.status.success());
    if !ok {
        missing::peer_missing(
            "Debian's rosmaster and rospy (/usr/bin/python3)",
            missing::ROS1_SETUP,
        );
    }
    ok
}

/// rosmaster on 127.0.0.1:`port`, listening when this returns.
fn rosmaster(port: u16) -> Proc {
    let child = Command::new(PYTHON)
        .args(["/usr/bin/rosmaster", "--core", "-p", &port.to_string()])
        .env("ROS_IP", "127.0.0.1")
        .env("ROS_MASTER_URI", format!("http://127.0.0.1:{port}"))
        .env(
            "ROS_HOME",
            std::env::temp_dir().join(format!("ros1-home-{port}")),
        )
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("rosmaster starts");
    let p = Proc(child);
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            Instant::now() < deadline,
            "rosmaster does not listen on {port}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    p
}

/// The rospy side: genpy's md5sums and definitions, a latched JointState on /dyn/joints, the PointStamped of
/// /dyn/point with its connection header, two calls of /dyn/set_bool; one JSON line, then it waits for a line on
/// stdin (keeping its latched publisher) before leaving.
const PEER: &str = r#"
import json, sys, rospy
import geometry_msgs.msg, sensor_msgs.msg, nav_msgs.msg, std_msgs.msg, std_srvs.srv
rospy.init_node('dyn_peer', anonymous=True, disable_signals=True)
out = {'genpy': {}}
for name, c in [('geometry_msgs/PointStamped', geometry_msgs.msg.PointStamped),
                ('sensor_msgs/JointState', sensor_msgs.msg.JointState),
                ('nav_msgs/Odometry', nav_msgs.msg.Odometry),
                ('std_msgs/Header', std_msgs.msg.Header),
                ('sensor_msgs/Range', sensor_msgs.msg.Range)] + [
                ('geometry_msgs/' + n, getattr(geometry_msgs.msg, n))
                for n in ('PoseStamped', 'PoseArray', 'Vector3Stamped', 'Accel', 'Wrench', 'WrenchStamped',
                          'QuaternionStamped')]:
    out['genpy'][name] = [c._md5sum, c._full_text]
out['genpy']['std_srvs/SetBool'] = [std_srvs.srv.SetBool._md5sum, '']
js = sensor_msgs.msg.JointState()
js.header.seq = 3
js.header.stamp = rospy.Time(12, 345)
js.header.frame_id = 'base'
js.name = ['left', 'right']
js.position = [0.5, -1.5]
js.effort = [2.0]
joints = rospy.Publisher('/dyn/joints', sensor_msgs.msg.JointState, queue_size=1, latch=True)
joints.publish(js)
m = rospy.wait_for_message('/dyn/point', geometry_msgs.msg.PointStamped, timeout=30)
out['point'] = [m.header.stamp.secs, m.header.stamp.nsecs, m.header.frame_id, m.point.x, m.point.y, m.point.z]
out['header'] = {k: m._connection_header.get(k) for k in ('type', 'md5sum', 'message_definition')}
rospy.wait_for_service('/dyn/set_bool', timeout=30)
call = rospy.ServiceProxy('/dyn/set_bool', std_srvs.srv.SetBool)
r = call(True)
out['call'] = [r.success, r.message]
try:
    call(False)
    out['error'] = None
except rospy.ServiceException as e:
    out['error'] = str(e)
print(json.dumps(out))
sys.stdout.flush()
sys.stdin.readline()
"#;

/// The service URI among `registered`.
fn node_uri(registered: &[Registration]) -> String {
    registered
        .iter()
        .find_map(|r| match r {
            Registration::Service { uri, .. } => Some(uri.clone()),
            _ => None,
        })
        .expect("a service registered")
}

#[test]
fn run_time_types_talk_with_rospy() {
    if !need_ros1() {
        return;
    }
    let port = free_port();
    let _master = rosmaster(port);
    let master = format!("http://127.0.0.1:{port}");
    // the node listens on loopback (Graph reads ROS_IP); this binary's only test, set before any thread reads it
    std::env::set_var("ROS_IP", "127.0.0.1");
    std::env::remove_var("ROS_HOSTNAME");
    let node = Graph::start(&master, "/dyn_test").unwrap();
    let types = Ros1Types::with_paths(Vec::new());

    // ours → rospy: a PointStamped from JSON, latched so that the peer gets it whenever it subscribes
    let point_type = types.message("geometry_msgs/msg/PointStamped").unwrap();
    let point = node
        .advertise_raw("/dyn/point", &point_type.descriptor(), 1, true)
        .unwrap();
    let value = json!({"header": {"stamp": {"sec": 1_700_000_000, "nanosec": 5}, "frame_id": "odom"},
                       "point": {"x": 1.5, "y": -2.0, "z": 0.25}});
    point
        .publish_bytes(&point_type.encode(&value).unwrap())
        .unwrap();

    // rospy → ours
    let joints_type = types.message("sensor_msgs/JointState").unwrap();
    let (inbox, joints) = std::sync::mpsc::channel();
    let decode = joints_type.clone();
    let _forward = node
        .forward_raw(
            "/dyn/joints",
            &joints_type.descriptor(),
            4,
            inbox,
            move |bytes| Some(decode.decode(&bytes)),
        )
        .unwrap();

    // a service of a run-time type
    let set_bool = types.service("std_srvs/srv/SetBool").unwrap();
    let srv = set_bool.clone();
    let _server = node
        .serve_raw("/dyn/set_bool", &set_bool.descriptor(), move |req| {
            let req = srv.request.decode(&req).map_err(|e| e.to_string())?;
            if req["data"] != json!(true) {
                return Err("refused: data is false".into());
            }
            srv.response
                .encode(&json!({"success": true, "message": "set"}))
                .map_err(|e| e.to_string())
        })
        .unwrap();

    let mut peer = Proc(
        Command::new("timeout")
            .args(["60", PYTHON, "-c", PEER])
            .env("ROS_MASTER_URI", &master)
            .env("ROS_IP", "127.0.0.1")
            .env(
                "ROS_HOME",
                std::env::temp_dir().join(format!("ros1-home-{port}")),
            )
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("the rospy peer starts"),
    );
    let mut line = String::new();
    BufReader::new(peer.0.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let out: Value =
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("the rospy peer said {line:?}: {e}"));

    // the peer got our PointStamped, with genpy's own md5sum and full definition in our header
    assert_eq!(
        out["point"],
        json!([1_700_000_000, 5, "odom", 1.5, -2.0, 0.25])
    );
    assert_eq!(out["header"]["type"], "geometry_msgs/PointStamped");
    assert_eq!(
        out["header"]["md5sum"],
        out["genpy"]["geometry_msgs/PointStamped"][0]
    );
    assert_eq!(
        out["header"]["message_definition"],
        out["genpy"]["geometry_msgs/PointStamped"][1]
    );
    for (name, genpy) in out["genpy"].as_object().unwrap() {
        if name.contains("srv") {
            assert_eq!(set_bool.md5sum(), genpy[0], "{name}");
            continue;
        }
        let m = types.message(name).unwrap();
        assert_eq!(m.md5sum(), genpy[0], "{name}");
        assert_eq!(m.definition(), genpy[1], "{name}");
    }
    // the service answered, and its error reached the caller
    assert_eq!(out["call"], json!([true, "set"]));
    let error = out["error"]
        .as_str()
        .unwrap_or_else(|| panic!("no error: {out}"));
    assert!(error.contains("refused: data is false"), "{error}");

    // rospy's JointState, decoded in the ROS 2 shape (the header's seq dropped)
    let decoded = joints
        .recv_timeout(Duration::from_secs(30))
        .expect("the JointState arrives");
    assert_eq!(
        decoded.unwrap(),
        json!({"header": {"stamp": {"sec": 12, "nanosec": 345}, "frame_id": "base"},
               "name": ["left", "right"], "position": [0.5, -1.5], "velocity": [], "effort": [2.0]})
    );
    // what a restarted master gets again
    let registered = node.registry.snapshot();
    for r in [
        Registration::Publisher {
            topic: "/dyn/point".into(),
            ty: "geometry_msgs/PointStamped".into(),
        },
        Registration::Subscriber {
            topic: "/dyn/joints".into(),
            ty: "sensor_msgs/JointState".into(),
        },
        Registration::Service {
            name: "/dyn/set_bool".into(),
            uri: node_uri(&registered),
        },
    ] {
        assert!(registered.contains(&r), "{r:?} not in {registered:?}");
    }
    let mut stdin = peer.0.stdin.take().unwrap();
    let _ = stdin.write_all(b"done\n");
    drop(stdin);
    let deadline = Instant::now() + Duration::from_secs(10);
    while peer.0.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "the rospy peer does not leave");
        std::thread::sleep(Duration::from_millis(20));
    }
}
