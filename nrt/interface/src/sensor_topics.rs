//! The catalogue of a driven robot's sensor topics (besides odometry), described once: every topic
//! ([`SensorTopic`]) with its leaf name, the kind of message it carries ([`Kind`]) and whether it is one of the
//! REP-117 sensors that take ROS 2's sensor-data QoS when `sensor_data_qos` is set; and what each input publishes
//! ([`proximity_messages`] for the RT thread's proximity samples, [`event_messages`] for the script's events) as
//! neutral messages ([`SensorMessage`]).
//!
//! A front end makes one publisher per catalogue entry, by its kind, and converts each kind once to its generated
//! type. Adding a sensor topic of an existing kind touches this file only; a new kind adds a [`Kind`], a
//! [`SensorMessage`] variant and, per front end, its conversion and publisher type.

use crate::frames::Frames;
use crate::geometry::Stamp;
use crate::sensors::{self, Imu, Joy, LaserScan, Range, Temperature};
use msgs::thymio::PROXIMITY_COUNT;
use nrt_engine::thymio::calibration::Calibration;
use nrt_engine::thymio::events::RobotEvent;
use nrt_engine::thymio::params::Ranges;
use nrt_engine::thymio::sensors as values;
use nrt_engine::thymio::{BUTTON_NAMES, GROUND_NAMES, PROXIMITY_NAMES};

/// One sensor topic of a robot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SensorTopic {
    /// `proximity/<name>` of proximity sensor `i` ([`PROXIMITY_NAMES`]).
    Proximity(usize),
    /// `proximity/laser`: the seven sensors as a scan.
    Laser,
    /// `ground/<name>` of ground sensor `i` ([`GROUND_NAMES`]).
    Ground(usize),
    /// `imu`: the accelerometer.
    Imu,
    /// `tap`.
    Tap,
    /// `temperature`.
    Temperature,
    /// `sound`: the microphone's level.
    Sound,
    /// `remote`: the RC5 command received.
    Remote,
    /// `buttons`: the five buttons as a joystick.
    Buttons,
    /// `buttons/<name>` of button `i` ([`BUTTON_NAMES`]).
    Button(usize),
    /// `comm/rx`: proximity communication received.
    CommRx,
}

/// The message type a topic carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `sensor_msgs/Range`.
    Range,
    /// `sensor_msgs/LaserScan`.
    LaserScan,
    /// `sensor_msgs/Imu`.
    Imu,
    /// `std_msgs/Empty`.
    Empty,
    /// `sensor_msgs/Temperature`.
    Temperature,
    /// `std_msgs/Float32`.
    Float32,
    /// `std_msgs/Int8`.
    Int8,
    /// `sensor_msgs/Joy`.
    Joy,
    /// `std_msgs/Bool`.
    Bool,
    /// `thymio_msgs/Comm`.
    Comm,
}

/// A message of a sensor topic, its content neutral.
#[derive(Debug, Clone, PartialEq)]
pub enum SensorMessage {
    /// [`Kind::Range`].
    Range(Range),
    /// [`Kind::LaserScan`].
    LaserScan(LaserScan),
    /// [`Kind::Imu`].
    Imu(Imu),
    /// [`Kind::Empty`].
    Empty,
    /// [`Kind::Temperature`].
    Temperature(Temperature),
    /// [`Kind::Float32`].
    Float32(f32),
    /// [`Kind::Int8`].
    Int8(i8),
    /// [`Kind::Joy`].
    Joy(Joy),
    /// [`Kind::Bool`].
    Bool(bool),
    /// [`Kind::Comm`]: the value received, per-sensor payloads and intensities.
    Comm {
        /// Value received.
        value: i16,
        /// Per-sensor payloads.
        payloads: [i16; PROXIMITY_COUNT],
        /// Per-sensor intensities.
        intensities: [i16; PROXIMITY_COUNT],
    },
}

impl SensorMessage {
    /// The kind of message this is.
    pub fn kind(&self) -> Kind {
        match self {
            SensorMessage::Range(_) => Kind::Range,
            SensorMessage::LaserScan(_) => Kind::LaserScan,
            SensorMessage::Imu(_) => Kind::Imu,
            SensorMessage::Empty => Kind::Empty,
            SensorMessage::Temperature(_) => Kind::Temperature,
            SensorMessage::Float32(_) => Kind::Float32,
            SensorMessage::Int8(_) => Kind::Int8,
            SensorMessage::Joy(_) => Kind::Joy,
            SensorMessage::Bool(_) => Kind::Bool,
            SensorMessage::Comm { .. } => Kind::Comm,
        }
    }
}

impl SensorTopic {
    /// Every sensor topic of a robot, in the catalogue's order.
    ///
    /// ```
    /// use nrt_interface::sensor_topics::{Kind, SensorTopic};
    ///
    /// let all: Vec<SensorTopic> = SensorTopic::all().collect();
    /// assert_eq!(all.len(), 7 + 1 + 2 + 6 + 5 + 1);
    /// assert_eq!(SensorTopic::Ground(1).leaf(), "ground/right");
    /// assert_eq!(SensorTopic::Laser.kind(), Kind::LaserScan);
    /// ```
    pub fn all() -> impl Iterator<Item = SensorTopic> {
        let n = |len: usize, f: fn(usize) -> SensorTopic| (0..len).map(f);
        n(PROXIMITY_NAMES.len(), SensorTopic::Proximity)
            .chain([SensorTopic::Laser])
            .chain(n(GROUND_NAMES.len(), SensorTopic::Ground))
            .chain([
                SensorTopic::Imu,
                SensorTopic::Tap,
                SensorTopic::Temperature,
                SensorTopic::Sound,
                SensorTopic::Remote,
                SensorTopic::Buttons,
            ])
            .chain(n(BUTTON_NAMES.len(), SensorTopic::Button))
            .chain([SensorTopic::CommRx])
    }

    /// Its name under the robot's namespace (ROS-Thymio's).
    pub fn leaf(self) -> String {
        match self {
            SensorTopic::Proximity(i) => format!("proximity/{}", PROXIMITY_NAMES[i]),
            SensorTopic::Laser => "proximity/laser".into(),
            SensorTopic::Ground(i) => format!("ground/{}", GROUND_NAMES[i]),
            SensorTopic::Imu => "imu".into(),
            SensorTopic::Tap => "tap".into(),
            SensorTopic::Temperature => "temperature".into(),
            SensorTopic::Sound => "sound".into(),
            SensorTopic::Remote => "remote".into(),
            SensorTopic::Buttons => "buttons".into(),
            SensorTopic::Button(i) => format!("buttons/{}", BUTTON_NAMES[i]),
            SensorTopic::CommRx => "comm/rx".into(),
        }
    }

    /// The kind of message it carries.
    pub fn kind(self) -> Kind {
        match self {
            SensorTopic::Proximity(_) | SensorTopic::Ground(_) => Kind::Range,
            SensorTopic::Laser => Kind::LaserScan,
            SensorTopic::Imu => Kind::Imu,
            SensorTopic::Tap => Kind::Empty,
            SensorTopic::Temperature => Kind::Temperature,
            SensorTopic::Sound => Kind::Float32,
            SensorTopic::Remote => Kind::Int8,
            SensorTopic::Buttons => Kind::Joy,
            SensorTopic::Button(_) => Kind::Bool,
            SensorTopic::CommRx => Kind::Comm,
        }
    }

    /// Whether it is one of the REP-117 sensors (proximity, laser, ground, IMU, temperature) that take ROS 2's
    /// sensor-data QoS profile when `sensor_data_qos` is set; the others keep ROS-Thymio's reliable profile.
    pub fn is_sensor_data(self) -> bool {
        matches!(
            self,
            SensorTopic::Proximity(_)
                | SensorTopic::Laser
                | SensorTopic::Ground(_)
                | SensorTopic::Imu
                | SensorTopic::Temperature
        )
    }
}

/// The messages of a proximity sample (the raw readings, `cal` the robot's calibration, `ranges` the
/// robot's `ranges` parameter: [`sensors::range_value`]) for the topics `wanted` keeps (a front end may skip the
/// topics nobody hears), handed to `out` in the catalogue's order.
pub fn proximity_messages(
    raw: &[i16; PROXIMITY_COUNT],
    cal: &Calibration,
    ranges: Ranges,
    stamp: Stamp,
    frames: &Frames,
    wanted: impl Fn(SensorTopic) -> bool,
    mut out: impl FnMut(SensorTopic, SensorMessage),
) {
    for (i, value) in raw.iter().enumerate() {
        let topic = SensorTopic::Proximity(i);
        if wanted(topic) {
            let frame = frames.link(&sensors::proximity_frame(i));
            let range = sensors::proximity(*value, cal, i, stamp, frame, ranges);
            out(topic, SensorMessage::Range(range));
        }
    }
    if wanted(SensorTopic::Laser) {
        let scan = sensors::laser(raw, cal, stamp, frames.link("laser_link"));
        out(SensorTopic::Laser, SensorMessage::LaserScan(scan));
    }
}

/// The messages of a decoded script event of the robot ([`sensors::robot_event`]; `threshold` is the ground
/// sensors' `ground.threshold`, `ranges` the robot's `ranges` parameter) for the topics `wanted` keeps, handed to
/// `out`. Odometry and proximity come from the RT thread and the ground's raw readings have no topic: they give
/// none.
pub fn event_messages(
    event: RobotEvent,
    threshold: i16,
    ranges: Ranges,
    stamp: Stamp,
    frames: &Frames,
    wanted: impl Fn(SensorTopic) -> bool,
    mut out: impl FnMut(SensorTopic, SensorMessage),
) {
    let mut one = |topic: SensorTopic, make: &dyn Fn() -> SensorMessage| {
        if wanted(topic) {
            out(topic, make());
        }
    };
    match event {
        RobotEvent::Odometry { .. } | RobotEvent::Proximity(_) => {}
        RobotEvent::GroundReflected(_) | RobotEvent::GroundAmbient(_) => {}
        RobotEvent::Ground(delta) => {
            for (i, d) in delta.iter().enumerate() {
                one(SensorTopic::Ground(i), &|| {
                    let frame = frames.link(&sensors::ground_frame(i));
                    SensorMessage::Range(sensors::ground(*d, threshold, stamp, frame, ranges))
                });
            }
        }
        RobotEvent::Accelerometer(acc) => one(SensorTopic::Imu, &|| {
            SensorMessage::Imu(sensors::imu(acc, stamp, frames.base.clone()))
        }),
        RobotEvent::Tap => one(SensorTopic::Tap, &|| SensorMessage::Empty),
        RobotEvent::Temperature(raw) => one(SensorTopic::Temperature, &|| {
            SensorMessage::Temperature(sensors::temperature(raw, stamp, frames.base.clone()))
        }),
        RobotEvent::Sound(intensity) => one(SensorTopic::Sound, &|| {
            SensorMessage::Float32(values::sound_level(intensity))
        }),
        RobotEvent::Remote { command, .. } => {
            one(SensorTopic::Remote, &|| SensorMessage::Int8(command as i8))
        }
        RobotEvent::Buttons(v) => one(SensorTopic::Buttons, &|| {
            SensorMessage::Joy(sensors::joy(v, stamp))
        }),
        RobotEvent::Button { index, pressed } if index < BUTTON_NAMES.len() => {
            one(SensorTopic::Button(index), &|| SensorMessage::Bool(pressed))
        }
        RobotEvent::Button { .. } => {}
        RobotEvent::Comm {
            value,
            payloads,
            intensities,
        } => one(SensorTopic::CommRx, &|| SensorMessage::Comm {
            value,
            payloads,
            intensities,
        }),
    }
}

#[cfg(test)]
mod tests;
