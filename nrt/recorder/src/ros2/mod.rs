//! The ROS 2 messages the driver publishes, from the interface layer's neutral types (`nrt_interface`) to CDR
//! (see [`crate::cdr`]), with their schemas ([`Ros2Type`]). One function per type appends one message to a buffer
//! the caller reuses (and clears). Stamps ([`nrt_interface::geometry::Stamp`], since the epoch) become
//! `builtin_interfaces/Time` (seconds past `i32::MAX` are written as `i32::MAX`).
//!
//! ```
//! use nrt_recorder::{ros2, Recording, RecordLimits};
//! use nrt_interface::sensors::Range;
//! let dir = tempfile::tempdir().unwrap();
//! let mut rec = Recording::create(&dir.path().join("r.mcap"), RecordLimits::NONE, &[]).unwrap();
//! let ch = rec.channel("/thymio/proximity/left", &ros2::RANGE.schema(), ros2::MESSAGE_ENCODING).unwrap();
//! let mut buf = Vec::new();
//! ros2::range(&Range { range: 0.05, ..Range::default() }, &mut buf);
//! rec.write(ch, 2_000, 1_000, &buf).unwrap();
//! rec.finish().unwrap();
//! ```

mod schemas;

pub use nrt_engine::diagnostics::{DiagnosticStatus, KeyValue};
pub use schemas::{
    Ros2Type, ALL, BOOL, COMM, DIAGNOSTIC_ARRAY, EMPTY, FLOAT32, IMU, INT8, JOINT_STATE, JOY,
    LASER_SCAN, ODOMETRY, RANGE, TEMPERATURE, TF_MESSAGE, TWIST_STAMPED,
};

use crate::cdr::CdrWriter;
use crate::SchemaDef;
use msgs::thymio::PROXIMITY_COUNT;
use nrt_interface::geometry::{Header, Quaternion, Stamp, Transform, Vector3};
use nrt_interface::odometry::{Odometry, TwistStamped, WheelJoints};
use nrt_interface::sensor_topics::{Kind, SensorMessage};
use nrt_interface::sensors::{Imu, Joy, LaserScan, Range, Temperature};

/// The message encoding of ROS 2 channels.
pub const MESSAGE_ENCODING: &str = "cdr";
/// The schema encoding of [`Ros2Type`]s.
pub const SCHEMA_ENCODING: &str = "ros2msg";

impl Ros2Type {
    /// The MCAP schema of this type.
    pub fn schema(&self) -> SchemaDef {
        SchemaDef {
            name: self.name.to_owned(),
            encoding: SCHEMA_ENCODING.to_owned(),
            data: self.definition.as_bytes().to_vec(),
        }
    }
}

/// `builtin_interfaces/Time`.
fn time(w: &mut CdrWriter, stamp: Stamp) {
    w.i32(i32::try_from(stamp.as_secs()).unwrap_or(i32::MAX));
    w.u32(stamp.subsec_nanos());
}

/// `std_msgs/Header`.
fn header(w: &mut CdrWriter, h: &Header) {
    time(w, h.stamp);
    w.string(&h.frame_id);
}

/// `geometry_msgs/Vector3` (or `Point`).
fn vector3(w: &mut CdrWriter, v: &Vector3) {
    w.f64_array(v);
}

/// `geometry_msgs/Quaternion` (x, y, z, w).
fn quaternion(w: &mut CdrWriter, q: &Quaternion) {
    w.f64_array(q);
}

/// `nav_msgs/msg/Odometry` ([`ODOMETRY`]).
pub fn odometry(m: &Odometry, out: &mut Vec<u8>) {
    let w = &mut CdrWriter::begin(out);
    header(w, &m.header);
    w.string(&m.child_frame_id);
    vector3(w, &m.position);
    quaternion(w, &m.orientation);
    w.f64_array(&m.pose_covariance);
    vector3(w, &m.linear);
    vector3(w, &m.angular);
    w.f64_array(&m.twist_covariance);
}

/// `tf2_msgs/msg/TFMessage` of `transforms` ([`TF_MESSAGE`]).
pub fn tf_message(transforms: &[Transform], out: &mut Vec<u8>) {
    let w = &mut CdrWriter::begin(out);
    let n = w.sequence_len(transforms.len());
    for t in &transforms[..n] {
        header(w, &t.header);
        w.string(&t.child_frame_id);
        vector3(w, &t.translation);
        quaternion(w, &t.rotation);
    }
}

/// `sensor_msgs/msg/JointState` of the wheels ([`JOINT_STATE`]; no effort).
pub fn joint_state(m: &WheelJoints, out: &mut Vec<u8>) {
    let w = &mut CdrWriter::begin(out);
    header(w, &m.header);
    w.string_sequence(&m.name);
    w.f64_sequence(&m.position);
    w.f64_sequence(&m.velocity);
    w.f64_sequence(&[]);
}

/// `geometry_msgs/msg/TwistStamped` ([`TWIST_STAMPED`]).
pub fn twist_stamped(m: &TwistStamped, out: &mut Vec<u8>) {
    let w = &mut CdrWriter::begin(out);
    header(w, &m.header);
    vector3(w, &m.linear);
    vector3(w, &m.angular);
}

/// `diagnostic_msgs/msg/DiagnosticArray` of `status` under `header` (the driver's: its stamp, frame "";
/// [`DIAGNOSTIC_ARRAY`]).
pub fn diagnostic_array(header_: &Header, status: &[DiagnosticStatus], out: &mut Vec<u8>) {
    let w = &mut CdrWriter::begin(out);
    header(w, header_);
    let n = w.sequence_len(status.len());
    for s in &status[..n] {
        w.u8(s.level);
        w.string(&s.name);
        w.string(&s.message);
        w.string(&s.hardware_id);
        let n = w.sequence_len(s.values.len());
        for kv in &s.values[..n] {
            w.string(&kv.key);
            w.string(&kv.value);
        }
    }
}

/// `sensor_msgs/msg/Range` ([`RANGE`]; `variance` 0: unknown, as the driver publishes it).
pub fn range(m: &Range, out: &mut Vec<u8>) {
    let w = &mut CdrWriter::begin(out);
    header(w, &m.header);
    w.u8(m.radiation_type);
    w.f32(m.field_of_view);
    w.f32(m.min_range);
    w.f32(m.max_range);
    w.f32(m.range);
    w.f32(0.0);
}

/// `sensor_msgs/msg/LaserScan` ([`LASER_SCAN`]).
pub fn laser_scan(m: &LaserScan, out: &mut Vec<u8>) {
    let w = &mut CdrWriter::begin(out);
    header(w, &m.header);
    for v in [
        m.angle_min,
        m.angle_max,
        m.angle_increment,
        m.time_increment,
        m.scan_time,
        m.range_min,
        m.range_max,
    ] {
        w.f32(v);
    }
    w.f32_sequence(&m.ranges);
    w.f32_sequence(&m.intensities);
}

/// `sensor_msgs/msg/Imu` ([`IMU`]): the accelerometer only, as the front ends publish it (identity orientation,
/// zero angular velocity, the covariances saying which are unknown).
pub fn imu(m: &Imu, out: &mut Vec<u8>) {
    let w = &mut CdrWriter::begin(out);
    header(w, &m.header);
    quaternion(w, &[0.0, 0.0, 0.0, 1.0]);
    w.f64_array(&m.orientation_covariance);
    vector3(w, &[0.0; 3]);
    w.f64_array(&m.angular_velocity_covariance);
    vector3(w, &m.linear_acceleration);
    w.f64_array(&m.linear_acceleration_covariance);
}

/// `sensor_msgs/msg/Temperature` ([`TEMPERATURE`]).
pub fn temperature(m: &Temperature, out: &mut Vec<u8>) {
    let w = &mut CdrWriter::begin(out);
    header(w, &m.header);
    w.f64(m.temperature);
    w.f64(m.variance);
}

/// `sensor_msgs/msg/Joy` ([`JOY`]; no axes).
pub fn joy(m: &Joy, out: &mut Vec<u8>) {
    let w = &mut CdrWriter::begin(out);
    header(w, &m.header);
    w.f32_sequence(&[]);
    w.i32_sequence(&m.buttons);
}

/// `std_msgs/msg/Empty` ([`EMPTY`]): ROS 2's type support gives a struct without fields one placeholder byte.
pub fn empty(out: &mut Vec<u8>) {
    CdrWriter::begin(out).u8(0);
}

/// `std_msgs/msg/Float32` ([`FLOAT32`]).
pub fn float32(v: f32, out: &mut Vec<u8>) {
    CdrWriter::begin(out).f32(v);
}

/// `std_msgs/msg/Int8` ([`INT8`]).
pub fn int8(v: i8, out: &mut Vec<u8>) {
    CdrWriter::begin(out).i8(v);
}

/// `std_msgs/msg/Bool` ([`BOOL`]).
pub fn boolean(v: bool, out: &mut Vec<u8>) {
    CdrWriter::begin(out).u8(u8::from(v));
}

/// `thymio_msgs/msg/Comm` ([`COMM`]: the value, a payload and an intensity per proximity
/// sensor).
pub fn comm(
    value: i16,
    payloads: &[i16; PROXIMITY_COUNT],
    intensities: &[i16; PROXIMITY_COUNT],
    out: &mut Vec<u8>,
) {
    let w = &mut CdrWriter::begin(out);
    w.i16(value);
    w.i16_array(payloads);
    w.i16_array(intensities);
}

/// The type of a sensor topic's messages ([`nrt_interface::sensor_topics`]).
pub fn sensor_type(kind: Kind) -> Ros2Type {
    match kind {
        Kind::Range => RANGE,
        Kind::LaserScan => LASER_SCAN,
        Kind::Imu => IMU,
        Kind::Empty => EMPTY,
        Kind::Temperature => TEMPERATURE,
        Kind::Float32 => FLOAT32,
        Kind::Int8 => INT8,
        Kind::Joy => JOY,
        Kind::Bool => BOOL,
        Kind::Comm => COMM,
    }
}

/// A sensor topic's message, of type [`sensor_type`] of its kind.
pub fn sensor(m: &SensorMessage, out: &mut Vec<u8>) {
    match m {
        SensorMessage::Range(r) => range(r, out),
        SensorMessage::LaserScan(l) => laser_scan(l, out),
        SensorMessage::Imu(i) => imu(i, out),
        SensorMessage::Empty => empty(out),
        SensorMessage::Temperature(t) => temperature(t, out),
        SensorMessage::Float32(v) => float32(*v, out),
        SensorMessage::Int8(v) => int8(*v, out),
        SensorMessage::Joy(j) => joy(j, out),
        SensorMessage::Bool(b) => boolean(*b, out),
        SensorMessage::Comm {
            value,
            payloads,
            intensities,
        } => comm(*value, payloads, intensities, out),
    }
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
