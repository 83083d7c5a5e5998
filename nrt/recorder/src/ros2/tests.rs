//! The encoders against bytes computed by hand from the CDR rules (`crate::cdr`) and the field lists.

use super::*;
use std::time::Duration;

fn hdr(frame: &str) -> Header {
    Header::new(Duration::new(1, 2), frame)
}

/// header stamped 1 s 2 ns in frame "ab": 4 (encapsulation) + 4 + 4 + 4 + 3 = 19 bytes.
#[rustfmt::skip]
const HEADER_AB: [u8; 19] = [
    0, 1, 0, 0,
    1, 0, 0, 0, // sec
    2, 0, 0, 0, // nanosec
    3, 0, 0, 0, b'a', b'b', 0, // frame_id (body offset 15 after it)
];

fn le64(v: f64) -> [u8; 8] {
    v.to_le_bytes()
}

#[test]
fn range_by_hand() {
    let mut out = vec![];
    let r = Range {
        header: hdr("ab"),
        radiation_type: 1,
        field_of_view: 0.5,
        min_range: 0.25,
        max_range: 2.0,
        range: f32::INFINITY,
    };
    range(&r, &mut out);
    let mut want = HEADER_AB.to_vec();
    want.push(1); // radiation_type at body offset 15
    for f in [0.5f32, 0.25, 2.0, f32::INFINITY, 0.0] {
        // aligned at 16 already: no pad after the u8
        want.extend_from_slice(&f.to_le_bytes());
    }
    assert_eq!(out, want);
}

#[test]
fn twist_stamped_by_hand() {
    let mut out = vec![9]; // appended after what the buffer holds
    let t = TwistStamped {
        header: hdr("ab"),
        linear: [1.0, 2.0, 3.0],
        angular: [4.0, 5.0, 6.0],
    };
    twist_stamped(&t, &mut out);
    let mut want = vec![9];
    want.extend_from_slice(&HEADER_AB);
    want.push(0); // body offset 15 → 16, aligned to 8
    for v in 1..=6 {
        want.extend_from_slice(&le64(v as f64));
    }
    assert_eq!(out, want);
}

#[test]
fn odometry_layout() {
    let mut out = vec![];
    let mut m = Odometry {
        header: hdr("ab"),
        child_frame_id: "c".into(),
        position: [1.0, 2.0, 3.0],
        orientation: [0.0, 0.0, 0.5, 0.75],
        linear: [7.0, 0.0, 0.0],
        angular: [0.0, 0.0, 8.0],
        pose_covariance: [0.0; 36],
        twist_covariance: [0.0; 36],
    };
    m.pose_covariance[35] = 9.0;
    m.twist_covariance[0] = 10.0;
    odometry(&m, &mut out);
    let mut want = HEADER_AB.to_vec();
    want.push(0); // pad to 16
    want.extend_from_slice(&[2, 0, 0, 0, b'c', 0]); // child_frame_id at 16..22
    want.extend_from_slice(&[0, 0]); // pad to 24
    let doubles: Vec<f64> = [1.0, 2.0, 3.0, 0.0, 0.0, 0.5, 0.75]
        .into_iter()
        .chain(m.pose_covariance)
        .chain([7.0, 0.0, 0.0, 0.0, 0.0, 8.0])
        .chain(m.twist_covariance)
        .collect();
    for d in &doubles {
        want.extend_from_slice(&le64(*d));
    }
    assert_eq!(doubles.len(), 7 + 36 + 6 + 36);
    assert_eq!(out, want);
}

#[test]
fn tf_message_by_hand() {
    let mut out = vec![];
    let t = Transform {
        header: hdr("ab"),
        child_frame_id: "c".into(),
        translation: [1.0, 2.0, 3.0],
        rotation: [0.0, 0.0, 0.0, 1.0],
    };
    tf_message(&[t.clone(), t], &mut out);
    let mut want = vec![0, 1, 0, 0, 2, 0, 0, 0]; // two transforms
    for first in [true, false] {
        want.extend_from_slice(&HEADER_AB[4..]); // body offset 4..19 / 84..99
        want.push(0); // pad to 20 / 100
        want.extend_from_slice(&[2, 0, 0, 0, b'c', 0]); // to 26 / 106
        want.extend_from_slice(&[0; 6][..if first { 6 } else { 2 }]); // to 32 / 108: 8-aligned
        for d in [1.0, 2.0, 3.0, 0.0, 0.0, 0.0, 1.0] {
            want.extend_from_slice(&le64(d));
        }
    }
    assert_eq!(out, want);
}

#[test]
fn joint_state_by_hand() {
    let mut out = vec![];
    let j = WheelJoints {
        header: hdr("ab"),
        name: vec!["l".into(), "r".into()],
        position: vec![1.0, 2.0],
        velocity: vec![3.0, 4.0],
    };
    joint_state(&j, &mut out);
    let mut want = HEADER_AB.to_vec();
    want.push(0); // pad to 16
    want.extend_from_slice(&[2, 0, 0, 0]); // two names (16..20)
    want.extend_from_slice(&[2, 0, 0, 0, b'l', 0, 0, 0]); // "l" + pad (20..28)
    want.extend_from_slice(&[2, 0, 0, 0, b'r', 0, 0, 0]); // "r" + pad (28..36)
    want.extend_from_slice(&[2, 0, 0, 0]); // two positions (36..40), doubles at 40
    want.extend_from_slice(&le64(1.0));
    want.extend_from_slice(&le64(2.0));
    want.extend_from_slice(&[2, 0, 0, 0, 0, 0, 0, 0]); // two velocities (56..60), pad to 64
    want.extend_from_slice(&le64(3.0));
    want.extend_from_slice(&le64(4.0));
    want.extend_from_slice(&[0, 0, 0, 0]); // no effort
    assert_eq!(out, want);
}

#[test]
fn diagnostic_array_by_hand() {
    let mut out = vec![];
    let s = DiagnosticStatus {
        level: 2,
        name: "n".into(),
        message: "".into(),
        hardware_id: "h".into(),
        values: vec![KeyValue {
            key: "k".into(),
            value: "v".into(),
        }],
    };
    diagnostic_array(&hdr("ab"), &[s], &mut out);
    let mut want = HEADER_AB.to_vec();
    want.push(0); // pad to 16
    want.extend_from_slice(&[1, 0, 0, 0]); // one status (16..20)
    want.push(2); // level (20)
    want.extend_from_slice(&[0, 0, 0]); // pad to 24
    want.extend_from_slice(&[2, 0, 0, 0, b'n', 0, 0, 0]); // name + pad (24..32)
    want.extend_from_slice(&[1, 0, 0, 0, 0, 0, 0, 0]); // "" + pad (32..40)
    want.extend_from_slice(&[2, 0, 0, 0, b'h', 0, 0, 0]); // hardware_id + pad (40..48)
    want.extend_from_slice(&[1, 0, 0, 0]); // one value (48..52)
    want.extend_from_slice(&[2, 0, 0, 0, b'k', 0, 0, 0]); // key + pad (52..60)
    want.extend_from_slice(&[2, 0, 0, 0, b'v', 0]); // value
    assert_eq!(out, want);
}

#[test]
fn stamps_past_2038_saturate() {
    let mut out = vec![];
    let t = TwistStamped {
        header: Header::new(Duration::new(u64::MAX, 5), ""),
        linear: [0.0; 3],
        angular: [0.0; 3],
    };
    twist_stamped(&t, &mut out);
    assert_eq!(out[4..12], [0xff, 0xff, 0xff, 0x7f, 5, 0, 0, 0]);
}

#[test]
fn schemas_are_ros2msg() {
    let s = ODOMETRY.schema();
    assert_eq!(
        (s.name.as_str(), s.encoding.as_str()),
        ("nav_msgs/msg/Odometry", "ros2msg")
    );
    assert_eq!(s.data, ODOMETRY.definition.as_bytes());
}
