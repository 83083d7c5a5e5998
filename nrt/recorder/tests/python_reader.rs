//! An independent reader opens the recordings: a rotating recording of every ROS 2 type the driver publishes (with
//! known values) and a raw channel of the RT inputs is read back by the `mcap` and `mcap-ros2-support` Python
//! packages (`read_mcap.py`, run with the workspace's `.venv-ros/bin/python`), whose channels, schemas, metadata,
//! message counts and decoded field values must be those written.
//!
//! Without the venv or its modules the test fails naming `scripts/setup-ros2.sh` (tests/common/missing.rs: a
//! missing peer fails; `THYMIO_SKIP_MISSING_PEERS=1` skips it outside CI, recorded as a skip).

#[path = "../../../tests/common/missing.rs"]
mod missing;

use nrt_interface::geometry::{Header, Transform};
use nrt_interface::odometry::{Odometry, TwistStamped, WheelJoints};
use nrt_interface::sensors::{Imu, Joy, LaserScan, Range, Temperature};
use nrt_recorder::ros2::{self, DiagnosticStatus, KeyValue, Ros2Type};
use nrt_recorder::{RecordLimits, Recording, SchemaDef};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long the reader may take.
const READER_TIMEOUT: Duration = Duration::from_secs(60);
/// Steps of the recording, 100 ms apart: 2.5 s in files of 1 s.
const STEPS: u64 = 25;
const STEP_NS: u64 = 100_000_000;
/// The log time of the first step (wall clock ns).
const T0: u64 = 1_700_000_000_000_000_000;
const RAW_ENCODING: &str = "thymio-rt/rt-record-v1";

fn stamp(k: u64) -> Duration {
    Duration::new(1_600_000_000 + k, (k * 1000) as u32)
}

fn time_json(k: u64) -> Value {
    json!({"sec": 1_600_000_000 + k, "nanosec": k * 1000})
}

fn header(k: u64, frame: &str) -> Header {
    Header::new(stamp(k), frame)
}

fn header_json(k: u64, frame: &str) -> Value {
    json!({"stamp": time_json(k), "frame_id": frame})
}

fn xyz(v: [f64; 3]) -> Value {
    json!({"x": v[0], "y": v[1], "z": v[2]})
}

fn xyzw(q: [f64; 4]) -> Value {
    json!({"x": q[0], "y": q[1], "z": q[2], "w": q[3]})
}

/// What step `k` writes on one topic (CDR) and what the reader must decode from it.
fn odometry(k: u64, buf: &mut Vec<u8>) -> Value {
    let f = k as f64;
    let mut pose_cov = [0.0; 36];
    pose_cov[0] = 0.001;
    pose_cov[35] = f;
    let mut twist_cov = [0.0; 36];
    twist_cov[7] = 0.5 * f;
    let m = Odometry {
        header: header(k, "odom"),
        child_frame_id: "base_link".into(),
        position: [f * 0.25, -f, 0.0],
        orientation: [0.0, 0.0, 0.5, -0.75],
        pose_covariance: pose_cov,
        linear: [0.125 * f, 0.0, 0.0],
        angular: [0.0, 0.0, -2.5],
        twist_covariance: twist_cov,
    };
    ros2::odometry(&m, buf);
    json!({
        "header": header_json(k, "odom"),
        "child_frame_id": "base_link",
        "pose": {"pose": {"position": xyz(m.position), "orientation": xyzw(m.orientation)}, "covariance": pose_cov.to_vec()},
        "twist": {"twist": {"linear": xyz(m.linear), "angular": xyz(m.angular)}, "covariance": twist_cov.to_vec()},
    })
}

fn tf(k: u64, buf: &mut Vec<u8>) -> Value {
    let ts: Vec<Transform> = (0..=k % 3)
        .map(|i| Transform {
            header: header(k, "odom"),
            child_frame_id: format!("wheel_{i}"),
            translation: [i as f64, 0.5, k as f64],
            rotation: [0.0, 1.0, 0.0, 0.0],
        })
        .collect();
    ros2::tf_message(&ts, buf);
    let transforms: Vec<Value> = ts
        .iter()
        .map(|t| {
            json!({
                "header": header_json(k, "odom"),
                "child_frame_id": t.child_frame_id,
                "transform": {"translation": xyz(t.translation), "rotation": xyzw(t.rotation)},
            })
        })
        .collect();
    json!({ "transforms": transforms })
}

fn joints(k: u64, buf: &mut Vec<u8>) -> Value {
    let m = WheelJoints {
        header: header(k, "base_link"),
        name: vec!["left_wheel_joint".into(), "right_wheel_joint".into()],
        position: vec![k as f64, -(k as f64)],
        velocity: vec![0.75, -0.25],
    };
    ros2::joint_state(&m, buf);
    json!({
        "header": header_json(k, "base_link"), "name": m.name, "position": m.position,
        "velocity": m.velocity, "effort": [],
    })
}

fn twist(k: u64, buf: &mut Vec<u8>) -> Value {
    let m = TwistStamped {
        header: header(k, "base_link"),
        linear: [0.0625 * k as f64, 0.0, 0.0],
        angular: [0.0, 0.0, 1.5],
    };
    ros2::twist_stamped(&m, buf);
    json!({"header": header_json(k, "base_link"), "twist": {"linear": xyz(m.linear), "angular": xyz(m.angular)}})
}

fn diagnostics(k: u64, buf: &mut Vec<u8>) -> Value {
    let status = vec![
        DiagnosticStatus {
            level: (k % 3) as u8,
            name: "asebaros: Hops".into(),
            message: format!("step {k}"),
            hardware_id: "ser:device=/dev/ttyACM0".into(),
            values: vec![
                KeyValue {
                    key: "a".into(),
                    value: k.to_string(),
                },
                KeyValue {
                    key: "b".into(),
                    value: String::new(),
                },
            ],
        },
        DiagnosticStatus::default(),
    ];
    ros2::diagnostic_array(&header(k, ""), &status, buf);
    let status: Vec<Value> = status
        .iter()
        .map(|s| {
            let values: Vec<Value> = s.values.iter().map(|v| json!({"key": v.key, "value": v.value})).collect();
            json!({"level": s.level, "name": s.name, "message": s.message, "hardware_id": s.hardware_id, "values": values})
        })
        .collect();
    json!({"header": header_json(k, ""), "status": status})
}

fn range(k: u64, buf: &mut Vec<u8>) -> Value {
    let m = Range {
        header: header(k, "prox_left"),
        radiation_type: 1,
        field_of_view: 0.25,
        min_range: 0.0078125,
        max_range: 0.125,
        range: if k.is_multiple_of(5) {
            f32::INFINITY
        } else {
            0.0625
        },
    };
    ros2::range(&m, buf);
    let r = if k.is_multiple_of(5) {
        json!("inf")
    } else {
        json!(0.0625)
    };
    json!({
        "header": header_json(k, "prox_left"), "radiation_type": 1, "field_of_view": 0.25,
        "min_range": 0.0078125, "max_range": 0.125, "range": r, "variance": 0.0,
    })
}

fn laser(k: u64, buf: &mut Vec<u8>) -> Value {
    let m = LaserScan {
        header: header(k, "laser_link"),
        angle_min: -0.5,
        angle_max: 0.5,
        angle_increment: 0.25,
        time_increment: 0.0,
        scan_time: 0.125,
        range_min: 0.0078125,
        range_max: 0.125,
        ranges: vec![0.0625, f32::INFINITY, k as f32 * 0.5],
        intensities: vec![],
    };
    ros2::laser_scan(&m, buf);
    json!({
        "header": header_json(k, "laser_link"), "angle_min": -0.5, "angle_max": 0.5, "angle_increment": 0.25,
        "time_increment": 0.0, "scan_time": 0.125, "range_min": 0.0078125, "range_max": 0.125,
        "ranges": [json!(0.0625), json!("inf"), json!(k as f64 * 0.5)], "intensities": [],
    })
}

fn imu(k: u64, buf: &mut Vec<u8>) -> Value {
    let mut cov = [0.0; 9];
    cov[0] = -1.0;
    let m = Imu {
        header: header(k, "base_link"),
        orientation_covariance: cov,
        angular_velocity_covariance: cov,
        linear_acceleration: [0.5, -0.25, 9.75 + k as f64],
        linear_acceleration_covariance: [0.125; 9],
    };
    ros2::imu(&m, buf);
    json!({
        "header": header_json(k, "base_link"), "orientation": xyzw([0.0, 0.0, 0.0, 1.0]),
        "orientation_covariance": cov.to_vec(), "angular_velocity": xyz([0.0; 3]),
        "angular_velocity_covariance": cov.to_vec(), "linear_acceleration": xyz(m.linear_acceleration),
        "linear_acceleration_covariance": vec![0.125; 9],
    })
}

fn temperature(k: u64, buf: &mut Vec<u8>) -> Value {
    let m = Temperature {
        header: header(k, "base_link"),
        temperature: 20.5 + k as f64,
        variance: 0.0,
    };
    ros2::temperature(&m, buf);
    json!({"header": header_json(k, "base_link"), "temperature": m.temperature, "variance": 0.0})
}

fn joy(k: u64, buf: &mut Vec<u8>) -> Value {
    let buttons = vec![(k % 2) as i32, 0, 1, 0, -1];
    ros2::joy(
        &Joy {
            header: header(k, ""),
            buttons: buttons.clone(),
        },
        buf,
    );
    json!({"header": header_json(k, ""), "axes": [], "buttons": buttons})
}

fn empty(_: u64, buf: &mut Vec<u8>) -> Value {
    ros2::empty(buf);
    json!({})
}

fn float32(k: u64, buf: &mut Vec<u8>) -> Value {
    ros2::float32(0.25 * k as f32, buf);
    json!({"data": 0.25 * k as f64})
}

fn int8(k: u64, buf: &mut Vec<u8>) -> Value {
    ros2::int8(-(k as i8), buf);
    json!({"data": -(k as i64)})
}

fn boolean(k: u64, buf: &mut Vec<u8>) -> Value {
    ros2::boolean(k.is_multiple_of(2), buf);
    json!({"data": k.is_multiple_of(2)})
}

fn comm(k: u64, buf: &mut Vec<u8>) -> Value {
    let payloads = [k as i16, 0, 0, -1, 0, 0, 7];
    let intensities = [0, 1200, 0, 0, 0, 0, i16::MAX];
    ros2::comm(-(k as i16), &payloads, &intensities, buf);
    json!({"value": -(k as i64), "payloads": payloads.to_vec(), "intensities": intensities.to_vec()})
}

/// The raw RT input of step `k` (not decoded: compared as hex).
fn raw(k: u64, buf: &mut Vec<u8>) -> Value {
    buf.extend_from_slice(&k.to_le_bytes());
    buf.extend_from_slice(b"\x00\xffframe");
    json!(buf.iter().map(|b| format!("{b:02x}")).collect::<String>())
}

type Encode = fn(u64, &mut Vec<u8>) -> Value;

/// (topic, ROS 2 type or None for the raw channel, encoder)
fn topics() -> Vec<(&'static str, Option<Ros2Type>, Encode)> {
    vec![
        ("/thymio/odom", Some(ros2::ODOMETRY), odometry),
        ("/tf", Some(ros2::TF_MESSAGE), tf),
        ("/thymio/joint_states", Some(ros2::JOINT_STATE), joints),
        ("/thymio/cmd_vel_out", Some(ros2::TWIST_STAMPED), twist),
        ("/diagnostics", Some(ros2::DIAGNOSTIC_ARRAY), diagnostics),
        ("/thymio/proximity/left", Some(ros2::RANGE), range),
        ("/thymio/proximity/laser", Some(ros2::LASER_SCAN), laser),
        ("/thymio/imu", Some(ros2::IMU), imu),
        ("/thymio/temperature", Some(ros2::TEMPERATURE), temperature),
        ("/thymio/buttons", Some(ros2::JOY), joy),
        ("/thymio/tap", Some(ros2::EMPTY), empty),
        ("/thymio/sound", Some(ros2::FLOAT32), float32),
        ("/thymio/remote", Some(ros2::INT8), int8),
        ("/thymio/buttons/center", Some(ros2::BOOL), boolean),
        ("/thymio/comm/rx", Some(ros2::COMM), comm),
        ("/thymio_rt/rt_inputs", None, raw),
    ]
}

fn raw_schema() -> SchemaDef {
    SchemaDef {
        name: "thymio_rt/rt_record_v1".into(),
        encoding: String::new(),
        data: Vec::new(),
    }
}

/// The reader's Python, or why there is none.
fn python() -> Result<PathBuf, String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let py = root.join(".venv-ros/bin/python");
    if py.exists() {
        Ok(py)
    } else {
        Err(format!(
            "no {} (scripts/setup-ros2.sh makes it)",
            py.display()
        ))
    }
}

/// A missing reader fails the test (the rules of tests/common/missing.rs); opted out, the skip is recorded.
fn missing(why: &str) {
    missing::peer_missing(
        &format!("the MCAP Python reader ({why})"),
        missing::ROS2_SETUP,
    );
}

/// Runs the reader on `files`, bounded in time: its exit code, stdout and stderr.
fn run_reader(py: &Path, files: &[PathBuf]) -> (Option<i32>, String, String) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/read_mcap.py");
    let out_file = tempfile::NamedTempFile::new().unwrap();
    let err_file = tempfile::NamedTempFile::new().unwrap();
    let mut child = Command::new(py)
        .arg(&script)
        .args(files)
        .stdin(Stdio::null())
        .stdout(out_file.reopen().unwrap())
        .stderr(err_file.reopen().unwrap())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + READER_TIMEOUT;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            child.kill().ok();
            child.wait().ok();
            panic!("read_mcap.py took more than {READER_TIMEOUT:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let read = |f: &tempfile::NamedTempFile| std::fs::read_to_string(f.path()).unwrap();
    (status.code(), read(&out_file), read(&err_file))
}

#[test]
fn the_mcap_python_reader_reads_what_was_recorded() {
    let py = match python() {
        Ok(py) => py,
        Err(why) => return missing(&why),
    };
    let dir = tempfile::tempdir().unwrap();
    let limits = RecordLimits {
        max_duration: Duration::from_secs(1),
        ..RecordLimits::NONE
    };
    let meta = BTreeMap::from([
        ("robot".to_owned(), "thymio-0".to_owned()),
        ("rate".to_owned(), "10".to_owned()),
    ]);
    let mut rec = Recording::create(
        &dir.path().join("flight.mcap"),
        limits,
        &[("thymio-rt", meta.clone())],
    )
    .unwrap();
    let topics = topics();
    let keys: Vec<_> = topics
        .iter()
        .map(|(topic, ty, _)| match ty {
            Some(t) => rec
                .channel(topic, &t.schema(), ros2::MESSAGE_ENCODING)
                .unwrap(),
            None => rec.channel(topic, &raw_schema(), RAW_ENCODING).unwrap(),
        })
        .collect();
    // what the reader must see, in the order written: (topic, k, value)
    let mut expected: Vec<(&str, u64, Value)> = Vec::new();
    let mut buf = Vec::new();
    for k in 0..STEPS {
        for ((topic, _, encode), key) in topics.iter().zip(&keys) {
            buf.clear();
            let value = encode(k, &mut buf);
            let publish = stamp(k).as_nanos() as u64;
            rec.write(*key, T0 + k * STEP_NS, publish, &buf).unwrap();
            expected.push((topic, k, value));
        }
    }
    let summary = rec.finish().unwrap();
    assert_eq!(summary.files.len(), 3, "{:?}", summary.files);

    let (code, stdout, stderr) = run_reader(&py, &summary.files);
    if code == Some(2) {
        return missing(stderr.trim());
    }
    assert_eq!(code, Some(0), "read_mcap.py failed: {stderr}");
    let out: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    let files = out["files"].as_array().unwrap();
    assert_eq!(files.len(), 3);

    let mut want = expected.into_iter();
    let mut totals: BTreeMap<String, u64> = BTreeMap::new();
    for (i, file) in files.iter().enumerate() {
        // every file: every channel with its schema, and the metadata
        let channels = file["channels"].as_array().unwrap();
        assert_eq!(channels.len(), topics.len(), "file {i}");
        for ((topic, ty, _), ch) in topics.iter().zip(channels) {
            let schema = match ty {
                Some(t) => json!({"name": t.name, "encoding": "ros2msg", "data": t.definition}),
                None => json!({"name": "thymio_rt/rt_record_v1", "encoding": "", "data": ""}),
            };
            let enc = if ty.is_some() { "cdr" } else { RAW_ENCODING };
            assert_eq!(
                ch,
                &json!({"topic": topic, "message_encoding": enc, "schema": schema}),
                "file {i}"
            );
        }
        assert_eq!(
            file["metadata"],
            json!([{"name": "thymio-rt", "metadata": meta}]),
            "file {i}"
        );
        // 1 s of steps per file
        let first_k = i as u64 * 10;
        let steps = (STEPS - first_k).min(10);
        for (topic, n) in file["counts"].as_object().unwrap() {
            assert_eq!(n, &json!(steps), "file {i}, {topic}");
            *totals.entry(topic.clone()).or_default() += n.as_u64().unwrap();
        }
        for m in file["messages"].as_array().unwrap() {
            let (topic, k, value) = want.next().expect("more messages than written");
            assert_eq!(m["topic"], json!(topic));
            assert_eq!(m["sequence"], json!(k), "{topic}");
            assert_eq!(m["log_time"], json!(T0 + k * STEP_NS), "{topic}");
            assert_eq!(
                m["publish_time"],
                json!(stamp(k).as_nanos() as u64),
                "{topic}"
            );
            let got = if topic == "/thymio_rt/rt_inputs" {
                &m["raw_hex"]
            } else {
                &m["decoded"]
            };
            assert_eq!(got, &value, "file {i}, {topic}, step {k}");
        }
    }
    assert!(want.next().is_none(), "messages missing");
    let topics_written: BTreeMap<String, u64> =
        topics.iter().map(|t| (t.0.to_owned(), STEPS)).collect();
    assert_eq!(totals, topics_written);
    assert_eq!(summary.messages, topics_written);
}
