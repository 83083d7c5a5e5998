//! The run-time types against roslibrust's generated ones (md5sums, definitions, serialisation) and the codec's
//! errors.

use super::*;
use crate::ros1_msgs::{
    geometry_msgs, nav_msgs, sensor_msgs, std_msgs, std_srvs, MESSAGE_REGISTRY, SERVICE_REGISTRY,
};
use roslibrust::codegen::integral_types::Time;
use serde_json::{json, Value};
use std::collections::BTreeMap;

fn types() -> Ros1Types {
    Ros1Types::with_paths(Vec::new())
}

/// `(main text, {dependency: text})`, texts trimmed: the content of a full definition whatever the order and
/// repetition of its dependencies (roslibrust repeats nested ones and sorts them; genmsg lists each once, depth
/// first).
fn sections(definition: &str) -> (String, BTreeMap<String, String>) {
    let sep = format!("\n{}\n", "=".repeat(80));
    let mut parts = definition.split(sep.as_str());
    let main = parts.next().unwrap_or("").trim().to_owned();
    let deps = parts
        .map(|p| {
            let (head, text) = p.split_once('\n').unwrap_or((p, ""));
            let name = head.strip_prefix("MSG: ").expect("a MSG: line").to_owned();
            (name, text.trim().to_owned())
        })
        .collect();
    (main, deps)
}

#[test]
fn every_built_in_message_has_the_generated_md5sum_and_definition() {
    let t = types();
    let mut checked = 0;
    for d in MESSAGE_REGISTRY.descriptors() {
        let package = d.ros_type_name.split('/').next().unwrap();
        if !super::types::embedded::EMBEDDED
            .iter()
            .any(|(p, ..)| *p == package)
        {
            // the ROS 2 interfaces roslibrust adds of its own (builtin_interfaces, service_msgs)
            continue;
        }
        let m = match t.message(d.ros_type_name) {
            Ok(m) => m,
            // the messages roslibrust derives from .action files (no .msg of their own)
            Err(TypeError::Unknown { .. })
                if ["Action", "Goal", "Result", "Feedback"]
                    .iter()
                    .any(|a| d.ros_type_name.contains(a)) =>
            {
                continue
            }
            Err(e) => panic!("{} does not resolve: {e}", d.ros_type_name),
        };
        assert_eq!(m.md5sum(), d.md5sum, "{}", d.ros_type_name);
        assert_eq!(
            sections(m.definition()),
            sections(d.definition),
            "{}",
            d.ros_type_name
        );
        checked += 1;
    }
    assert!(checked > 60, "only {checked} types checked");
}

#[test]
fn every_built_in_service_has_the_generated_md5sum() {
    let t = types();
    let mut checked = 0;
    for d in SERVICE_REGISTRY.descriptors() {
        let s = t.service(d.ros_service_name).unwrap();
        assert_eq!(s.md5sum(), d.md5sum, "{}", d.ros_service_name);
        assert_eq!(s.request.name(), d.request.ros_type_name);
        assert_eq!(s.response.md5sum(), d.response.md5sum);
        checked += 1;
    }
    assert!(checked >= 10, "only {checked} services checked");
    let set_bool = t.service("std_srvs/srv/SetBool").unwrap();
    // rosservice info's md5sum of std_srvs/SetBool
    assert_eq!(set_bool.md5sum(), "09fb03525b03e7ea1fd3992bafd87e16");
    assert_eq!(
        set_bool.descriptor().request_type,
        "std_srvs/SetBoolRequest"
    );
}

#[test]
fn definitions_list_each_dependency_once_depth_first_as_genmsg_does() {
    let m = types().message("nav_msgs/msg/Odometry").unwrap();
    let order: Vec<&str> = m
        .definition()
        .lines()
        .filter_map(|l| l.strip_prefix("MSG: "))
        .collect();
    assert_eq!(
        order,
        [
            "std_msgs/Header",
            "geometry_msgs/PoseWithCovariance",
            "geometry_msgs/Pose",
            "geometry_msgs/Point",
            "geometry_msgs/Quaternion",
            "geometry_msgs/TwistWithCovariance",
            "geometry_msgs/Twist",
            "geometry_msgs/Vector3"
        ]
    );
    assert_eq!(m.md5sum(), "cd5e73d190d741a2f92e81eda573aca7");
    let p = types().message("geometry_msgs/PointStamped").unwrap();
    assert_eq!(p.md5sum(), "c63aecb41bfdfd6b7e1fac37c7cbe7bf");
    assert!(p.definition().starts_with("# This represents a Point"));
    // genmsg removes the last newline added, not that of the last file
    assert!(p.definition().ends_with("float64 y\nfloat64 z\n"));
}

fn header(seq: u32) -> std_msgs::Header {
    std_msgs::Header {
        seq,
        stamp: Time {
            secs: 1_700_000_000,
            nsecs: 250_000_000,
        },
        frame_id: "odom".into(),
    }
}

/// roslibrust's serialisation of `msg` without its length prefix.
fn generated<T: roslibrust::codegen::Serialize>(msg: &T) -> Vec<u8> {
    let framed = roslibrust_serde_rosmsg::to_vec(msg).unwrap();
    assert_eq!(framed[..4], ((framed.len() - 4) as u32).to_le_bytes());
    framed[4..].to_vec()
}

#[test]
fn encoding_equals_roslibrusts_serialisation_and_decoding_gives_the_value_back() {
    let t = types();
    let stamp = json!({"sec": 1_700_000_000, "nanosec": 250_000_000});
    let point_stamped = json!({
        "header": {"stamp": stamp, "frame_id": "odom"},
        "point": {"x": 1.5, "y": -2.0, "z": 3.25}
    });
    let m = t.message("geometry_msgs/msg/PointStamped").unwrap();
    let typed = geometry_msgs::PointStamped {
        header: header(0),
        point: geometry_msgs::Point {
            x: 1.5,
            y: -2.0,
            z: 3.25,
        },
    };
    let bytes = m.encode(&point_stamped).unwrap();
    assert_eq!(bytes, generated(&typed));
    assert_eq!(m.decode(&bytes).unwrap(), point_stamped);

    let joints = json!({
        "header": {"stamp": stamp, "frame_id": "base"},
        "name": ["left", "right"],
        "position": [0.5, -0.25],
        "velocity": [1.0, 2.0],
        "effort": []
    });
    let typed = sensor_msgs::JointState {
        header: std_msgs::Header {
            frame_id: "base".into(),
            ..header(0)
        },
        name: vec!["left".into(), "right".into()],
        position: vec![0.5, -0.25],
        velocity: vec![1.0, 2.0],
        effort: vec![],
    };
    let m = t.message("sensor_msgs/JointState").unwrap();
    let bytes = m.encode(&joints).unwrap();
    assert_eq!(bytes, generated(&typed));
    assert_eq!(m.decode(&bytes).unwrap(), joints);

    let covariance: Vec<f64> = (0..36).map(|i| f64::from(i) / 4.0).collect();
    let odom = json!({
        "header": {"stamp": stamp, "frame_id": "odom"},
        "child_frame_id": "base_link",
        "pose": {"pose": {"position": {"x": 1.0, "y": 2.0, "z": 0.0},
                          "orientation": {"x": 0.0, "y": 0.0, "z": 0.5, "w": 0.75}},
                 "covariance": covariance},
        "twist": {"twist": {"linear": {"x": 0.1, "y": 0.0, "z": 0.0},
                            "angular": {"x": 0.0, "y": 0.0, "z": -0.2}},
                  "covariance": covariance}
    });
    let mut typed = nav_msgs::Odometry {
        header: header(0),
        child_frame_id: "base_link".into(),
        ..Default::default()
    };
    typed.pose.pose.position = geometry_msgs::Point {
        x: 1.0,
        y: 2.0,
        z: 0.0,
    };
    typed.pose.pose.orientation = geometry_msgs::Quaternion {
        x: 0.0,
        y: 0.0,
        z: 0.5,
        w: 0.75,
    };
    typed.twist.twist.linear.x = 0.1;
    typed.twist.twist.angular.z = -0.2;
    for (i, c) in covariance.iter().enumerate() {
        typed.pose.covariance[i] = *c;
        typed.twist.covariance[i] = *c;
    }
    let m = t.message("nav_msgs/Odometry").unwrap();
    let bytes = m.encode(&odom).unwrap();
    assert_eq!(bytes, generated(&typed));
    assert_eq!(m.decode(&bytes).unwrap(), odom);

    let s = t.service("std_srvs/SetBool").unwrap();
    let req = s.request.encode(&json!({"data": true})).unwrap();
    assert_eq!(req, generated(&std_srvs::SetBoolRequest { data: true }));
    let resp = json!({"success": true, "message": "done"});
    let bytes = s.response.encode(&resp).unwrap();
    assert_eq!(
        bytes,
        generated(&std_srvs::SetBoolResponse {
            success: true,
            message: "done".into()
        })
    );
    assert_eq!(s.response.decode(&bytes).unwrap(), resp);
}

#[test]
fn missing_fields_default_and_ros1_shapes_and_seq_are_accepted() {
    let t = types();
    let m = t.message("geometry_msgs/PointStamped").unwrap();
    let typed = geometry_msgs::PointStamped {
        header: std_msgs::Header {
            seq: 0,
            stamp: Time { secs: 0, nsecs: 0 },
            frame_id: String::new(),
        },
        point: geometry_msgs::Point {
            x: 0.0,
            y: 4.0,
            z: 0.0,
        },
    };
    assert_eq!(
        m.encode(&json!({"point": {"y": 4}})).unwrap(),
        generated(&typed)
    );
    // ROS 1's time shape and a header's seq
    let ros1 = json!({"header": {"seq": 9, "stamp": {"secs": 1_700_000_000, "nsecs": 250_000_000}, "frame_id": "odom"}});
    let typed = geometry_msgs::PointStamped {
        header: header(9),
        ..Default::default()
    };
    let bytes = m.encode(&ros1).unwrap();
    assert_eq!(bytes, generated(&typed));
    // decoding drops seq: the ROS 2 shape
    assert_eq!(
        m.decode(&bytes).unwrap()["header"],
        json!({"stamp": {"sec": 1_700_000_000, "nanosec": 250_000_000}, "frame_id": "odom"})
    );
    let odom = t.message("nav_msgs/Odometry").unwrap();
    assert_eq!(
        odom.encode(&json!({})).unwrap(),
        generated(&nav_msgs::Odometry::default())
    );
}

fn err(m: &MessageType, v: Value) -> String {
    m.encode(&v).unwrap_err().to_string()
}

#[test]
fn bad_values_are_errors_naming_the_field_path() {
    let t = types();
    let m = t.message("geometry_msgs/PointStamped").unwrap();
    assert!(
        err(&m, json!({"point": {"x": "one"}})).starts_with("point.x: expected a number"),
        "{}",
        err(&m, json!({"point": {"x": "one"}}))
    );
    assert!(err(&m, json!({"point": {"w": 1}}))
        .starts_with("point.w: no such field in geometry_msgs/Point"));
    assert!(err(&m, json!({"header": {"stamp": {"sec": -1}}}))
        .starts_with("header.stamp.sec: -1 is out of range for uint32"));
    assert!(
        err(&m, json!({"header": {"stamp": {"sec": 1, "nsecs": 2}}}))
            .starts_with("header.stamp.sec: no such field in a time")
    );
    assert!(err(&m, json!({"header": {"seq": 1.5}}))
        .starts_with("header.seq: expected an integer (uint32)"));
    assert!(err(&m, json!([1])).starts_with(".: expected an object"));
    let odom = t.message("nav_msgs/Odometry").unwrap();
    assert!(err(&odom, json!({"pose": {"covariance": [0.0, 1.0]}}))
        .starts_with("pose.covariance: expected 36 values, got 2"));
    let joints = t.message("sensor_msgs/JointState").unwrap();
    assert!(err(&joints, json!({"name": ["a", 3]}))
        .starts_with("name[1]: expected a string, got a number"));
    assert!(err(&joints, json!({"position": 1.0})).starts_with("position: expected an array"));
    let range = t.message("sensor_msgs/Range").unwrap();
    assert!(err(&range, json!({"radiation_type": 256}))
        .starts_with("radiation_type: 256 is out of range for uint8"));
    assert!(err(&range, json!({"range": 1e39})).starts_with(
        "range: 1000000000000000000000000000000000000000 is out of range for float32"
    ));
    // constants are not fields
    assert!(err(&range, json!({"ULTRASOUND": 0})).starts_with("ULTRASOUND: no such field"));
}

#[test]
fn truncated_and_trailing_bytes_are_errors() {
    let m = types().message("geometry_msgs/PointStamped").unwrap();
    let bytes = m.encode(&json!({"header": {"frame_id": "odom"}})).unwrap();
    let e = m.decode(&bytes[..bytes.len() - 3]).unwrap_err().to_string();
    assert!(
        e.starts_with("point.z: truncated: 8 bytes needed, 5 left"),
        "{e}"
    );
    let mut long = bytes.clone();
    long.push(0);
    assert_eq!(
        m.decode(&long).unwrap_err().to_string(),
        "1 bytes after the end of the geometry_msgs/PointStamped"
    );
    // a string length beyond the bytes
    let mut lying = bytes.clone();
    lying[12..16].copy_from_slice(&1000u32.to_le_bytes());
    assert!(m
        .decode(&lying)
        .unwrap_err()
        .to_string()
        .starts_with("header.frame_id: truncated"));
}

/// A package of the user's, under a root given at run time.
fn user_package(test: &str) -> std::path::PathBuf {
    let root =
        std::env::temp_dir().join(format!("thymio-rt-ros1dyn-{test}-{}", std::process::id()));
    let msg = root.join("my_pkg/msg");
    std::fs::create_dir_all(&msg).unwrap();
    std::fs::create_dir_all(root.join("my_pkg/srv")).unwrap();
    std::fs::write(
        msg.join("Blob.msg"),
        "# every kind of field\nuint8[] data\nuint8[4] quad\nint64 big\nuint64 ubig\nduration d\ntime t\n\
         byte b\nchar c\nint8 i\nint16 s\nbool ok\nfloat32 f\nHeader header\ngeometry_msgs/Point[] points\n\
         Inner inner\nstring NAME=x # not a comment\n",
    )
    .unwrap();
    std::fs::write(msg.join("Inner.msg"), "uint16[2] pair\n").unwrap();
    std::fs::write(
        root.join("my_pkg/srv/Do.srv"),
        "Blob blob\n---\nbool done\n",
    )
    .unwrap();
    root
}

#[test]
fn user_types_resolve_from_package_roots_and_round_trip() {
    let root = user_package("roundtrip");
    let t = Ros1Types::with_paths(vec![root.clone()]);
    let m = t.message("my_pkg/msg/Blob").unwrap();
    assert!(m.definition().contains("MSG: my_pkg/Inner\nuint16[2] pair"));
    let v = json!({
        "data": [1, 2, 255], "quad": [9, 8, 7, 6], "big": i64::MIN, "ubig": u64::MAX,
        "d": {"sec": -2, "nanosec": 500_000_000}, "t": {"sec": 4_000_000_000u32, "nanosec": 1},
        "b": 200, "c": 65, "i": -128, "s": -300, "ok": true, "f": 0.5,
        "header": {"stamp": {"sec": 1, "nanosec": 2}, "frame_id": "f"},
        "points": [{"x": 1.0, "y": 2.0, "z": 3.0}, {"x": -1.0, "y": 0.0, "z": 0.0}],
        "inner": {"pair": [1, 65535]}
    });
    let bytes = m.encode(&v).unwrap();
    assert_eq!(m.decode(&bytes).unwrap(), v);
    // uint8[] as base64 too
    let mut b64 = v.clone();
    b64["data"] = json!("AQL/");
    assert_eq!(m.encode(&b64).unwrap(), bytes);
    let s = t.service("my_pkg/srv/Do").unwrap();
    assert_eq!(s.request.fields()[0].name, "blob");
    // a ROS 1 duration with negative nanoseconds comes back normalised
    let d = Ros1Types::with_paths(vec![root.clone()])
        .message("my_pkg/Blob")
        .unwrap();
    let neg = d
        .encode(&json!({"d": {"secs": -1, "nsecs": -500_000_000}}))
        .unwrap();
    assert_eq!(
        d.decode(&neg).unwrap()["d"],
        json!({"sec": -2, "nanosec": 500_000_000})
    );
    std::fs::remove_dir_all(root).ok();
}

#[test]
fn unknown_types_and_bad_names_say_what_was_searched() {
    let root = user_package("unknown");
    let t = Ros1Types::with_paths(vec![root.clone()]);
    let e = t.message("my_pkg/msg/Nope").unwrap_err().to_string();
    assert!(e.contains("unknown ROS 1 type my_pkg/msg/Nope"), "{e}");
    assert!(e.contains(&root.display().to_string()), "{e}");
    std::fs::write(root.join("my_pkg/msg/Bad.msg"), "Missing m\n").unwrap();
    let e = t.message("my_pkg/Bad").unwrap_err().to_string();
    assert!(
        e.starts_with("my_pkg/Bad.m: unknown ROS 1 type my_pkg/msg/Missing"),
        "{e}"
    );
    std::fs::write(root.join("my_pkg/msg/Loop.msg"), "Loop again\n").unwrap();
    assert!(t
        .message("my_pkg/Loop")
        .unwrap_err()
        .to_string()
        .contains("cannot contain itself"));
    assert!(t
        .message("geometry_msgs/srv/Point")
        .unwrap_err()
        .to_string()
        .contains("not a ROS type name"));
    assert!(t.message("Point").is_err());
    assert!(types()
        .service("std_srvs/Nope")
        .unwrap_err()
        .to_string()
        .contains("std_srvs/srv/Nope"));
    std::fs::remove_dir_all(root).ok();
}

#[test]
fn package_roots_come_from_ros_package_path_then_the_extra_variable() {
    let paths =
        super::types::search_paths(Some("/opt/a::/opt/b".into()), Some("/home/u/msgs".into()));
    assert_eq!(
        paths,
        ["/opt/a", "/opt/b", "/home/u/msgs"].map(std::path::PathBuf::from)
    );
    assert!(super::types::search_paths(None, None).is_empty());
    // a package directory itself, or a workspace's src/ one level above the package
    let root = user_package("roots");
    let t = Ros1Types::with_paths(vec![root.join("my_pkg")]);
    assert!(t.message("my_pkg/Inner").is_ok());
    let ws = std::env::temp_dir().join(format!("thymio-rt-ros1dyn-ws-{}", std::process::id()));
    std::fs::create_dir_all(ws.join("src")).unwrap();
    let _ = std::fs::remove_dir_all(ws.join("src/repo"));
    std::fs::rename(&root, ws.join("src/repo")).unwrap();
    let t = Ros1Types::with_paths(vec![ws.join("src")]);
    assert_eq!(t.message("my_pkg/msg/Inner").unwrap().fields().len(), 1);
    std::fs::remove_dir_all(ws).ok();
}
