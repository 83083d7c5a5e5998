//! The sensor topics of a driven robot besides odometry (ros-aseba-interface.md §3.3; REP-117 ranges): which
//! script events they come from ([`robot_event`]) and their content — `proximity/<name>` (Range ×7) and
//! `proximity/laser` (LaserScan) from the RT thread's proximity samples; `ground/<name>`, `imu`, `temperature`,
//! `buttons` (Joy) and `comm/rx` from the script's events. The `Range` topics follow REP-117 (±inf where a reading
//! is no distance) or, with `ranges: ros_thymio`, ROS-Thymio's values ([`range_value`]).

use crate::geometry::{Header, Stamp, Vector3};
use handoff::NodeId;
use msgs::thymio::PROXIMITY_COUNT;
use nrt_engine::engine::Engine;
use nrt_engine::thymio::calibration::Calibration;
use nrt_engine::thymio::events::RobotEvent;
use nrt_engine::thymio::params::Ranges;
use nrt_engine::thymio::sensors::{
    self, GROUND_RANGE_MAX, GROUND_RANGE_MIN, PROXIMITY_RANGE_MAX, PROXIMITY_RANGE_MIN, SENSOR_FOV,
};
use nrt_engine::thymio::{GROUND_NAMES, PROXIMITY_NAMES};

/// `sensor_msgs/Range.INFRARED`.
pub const INFRARED: u8 = 1;

/// The event `event` of the script of the robot of node `id` with `args`, decoded for the sensor topics: `None`
/// when the RT thread decodes it already (odometry, proximity: they reach ROS from the RT side, not a second time
/// by name), when the node runs no script or the event is not the robot's (set-point echoes, user events).
pub fn robot_event(engine: &Engine, id: NodeId, event: u16, args: &[i16]) -> Option<RobotEvent> {
    let slot = engine.robots().of_node(id)?;
    if slot.decoded_by_rt(event) {
        return None;
    }
    let script = engine.network().node(id)?.script.as_ref()?;
    let (name, _) = script.events.get(usize::from(event))?;
    match RobotEvent::decode(name, args).ok()? {
        // the RT thread decodes these for every robot it drives
        RobotEvent::Odometry { .. } | RobotEvent::Proximity(_) => None,
        ev => Some(ev),
    }
}

/// `sensor_msgs/Range`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Range {
    /// Stamp and the sensor's frame.
    pub header: Header,
    /// [`INFRARED`].
    pub radiation_type: u8,
    /// \[rad\].
    pub field_of_view: f32,
    /// \[m\].
    pub min_range: f32,
    /// \[m\].
    pub max_range: f32,
    /// \[m\]; REP-117: +inf nothing seen, −inf closer than `min_range` ([`range_value`] for ROS-Thymio's).
    pub range: f32,
}

/// `sensor_msgs/LaserScan`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LaserScan {
    /// Stamp and `laser_link`.
    pub header: Header,
    /// \[rad\].
    pub angle_min: f32,
    /// \[rad\].
    pub angle_max: f32,
    /// \[rad\].
    pub angle_increment: f32,
    /// \[s\].
    pub time_increment: f32,
    /// \[s\].
    pub scan_time: f32,
    /// \[m\].
    pub range_min: f32,
    /// \[m\].
    pub range_max: f32,
    /// \[m\], right to left.
    pub ranges: Vec<f32>,
    /// The raw readings.
    pub intensities: Vec<f32>,
}

/// `sensor_msgs/Imu` (orientation identity).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Imu {
    /// Stamp and `base_link`.
    pub header: Header,
    /// Covariance of the orientation (−1: unknown).
    pub orientation_covariance: [f64; 9],
    /// Covariance of the angular velocity (−1: unknown; the velocity is zero).
    pub angular_velocity_covariance: [f64; 9],
    /// [m/s²].
    pub linear_acceleration: Vector3,
    /// Covariance of the acceleration.
    pub linear_acceleration_covariance: [f64; 9],
}

/// `sensor_msgs/Temperature`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Temperature {
    /// Stamp and `base_link`.
    pub header: Header,
    /// [°C].
    pub temperature: f64,
    /// [°C²].
    pub variance: f64,
}

/// `sensor_msgs/Joy` of the buttons (no axes).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Joy {
    /// Stamp (no frame).
    pub header: Header,
    /// Backward, left, centre, forward, right.
    pub buttons: Vec<i32>,
}

/// The frame of proximity sensor `index` (of [`PROXIMITY_NAMES`]).
pub fn proximity_frame(index: usize) -> String {
    format!("proximity_{}_link", PROXIMITY_NAMES[index])
}

/// The frame of ground sensor `index` (of [`GROUND_NAMES`]).
pub fn ground_frame(index: usize) -> String {
    format!("ground_{}_link", GROUND_NAMES[index])
}

/// The `range` of a `Range` message from its REP-117 value `rep117`, as `ranges` asks; `min_range` is the message's.
///
/// - [`Ranges::Rep117`]: `rep117` itself.
/// - [`Ranges::RosThymio`], as ROS-Thymio's ROS 2 driver (`ProximityConversion.aseba_to_si`,
///   `on_aseba_ground_event`): a proximity sensor that sees nothing (+inf) gives −1.0, a saturated one (−inf)
///   `min_range`; a ground sensor (`ground: true`) gives 0.0 where the ground reflects (−inf) and 1.0 over a void
///   or black (+inf). Finite distances are the same in both.
pub fn range_value(rep117: f32, min_range: f32, ground: bool, ranges: Ranges) -> f32 {
    match (ranges, ground) {
        (Ranges::Rep117, _) => rep117,
        (Ranges::RosThymio, false) if rep117 == f32::INFINITY => -1.0,
        (Ranges::RosThymio, false) if rep117 == f32::NEG_INFINITY => min_range,
        (Ranges::RosThymio, false) => rep117,
        (Ranges::RosThymio, true) if rep117 == f32::NEG_INFINITY => 0.0,
        (Ranges::RosThymio, true) => 1.0,
    }
}

/// One horizontal proximity sensor (REP-117: +inf nothing seen, −inf saturated; `ranges`: [`range_value`]).
pub fn proximity(
    raw: i16,
    cal: &Calibration,
    index: usize,
    stamp: Stamp,
    frame: String,
    ranges: Ranges,
) -> Range {
    let rep117 = sensors::proximity_range(raw, &cal.proximity[index]);
    Range {
        header: Header::new(stamp, frame),
        radiation_type: INFRARED,
        field_of_view: SENSOR_FOV,
        min_range: PROXIMITY_RANGE_MIN,
        max_range: PROXIMITY_RANGE_MAX,
        range: range_value(rep117, PROXIMITY_RANGE_MIN, false, ranges),
    }
}

/// The 5 front sensors as a laser scan, right to left; empty sectors are +inf, not obstacles.
pub fn laser(
    raw: &[i16; PROXIMITY_COUNT],
    cal: &Calibration,
    stamp: Stamp,
    frame: String,
) -> LaserScan {
    let ranges: [f32; PROXIMITY_COUNT] =
        std::array::from_fn(|i| sensors::proximity_range(raw[i], &cal.proximity[i]));
    LaserScan {
        header: Header::new(stamp, frame),
        angle_min: sensors::LASER_ANGLE_MIN,
        angle_max: -sensors::LASER_ANGLE_MIN,
        angle_increment: sensors::LASER_ANGLE_INCREMENT,
        time_increment: 0.0,
        scan_time: 0.1,
        range_min: PROXIMITY_RANGE_MIN + sensors::LASER_SHIFT,
        range_max: PROXIMITY_RANGE_MAX + sensors::LASER_SHIFT,
        ranges: sensors::laser_ranges(&ranges).to_vec(),
        intensities: (0..5).map(|k| f32::from(raw[4 - k])).collect(),
    }
}

/// One ground sensor (REP-117: −inf when the ground reflects, +inf over a void or black; `ranges`: [`range_value`]).
pub fn ground(delta: i16, threshold: i16, stamp: Stamp, frame: String, ranges: Ranges) -> Range {
    let rep117 = sensors::ground_range(delta, threshold);
    Range {
        header: Header::new(stamp, frame),
        radiation_type: INFRARED,
        field_of_view: SENSOR_FOV,
        min_range: GROUND_RANGE_MIN,
        max_range: GROUND_RANGE_MAX,
        range: range_value(rep117, GROUND_RANGE_MIN, true, ranges),
    }
}

/// `imu`: linear acceleration only (orientation and angular velocity unknown: covariance −1).
pub fn imu(acc: [i16; 3], stamp: Stamp, frame: String) -> Imu {
    let mut unknown = [0.0; 9];
    unknown[0] = -1.0;
    let mut acc_cov = [0.0; 9];
    for i in [0, 4, 8] {
        acc_cov[i] = 0.07;
    }
    Imu {
        header: Header::new(stamp, frame),
        orientation_covariance: unknown,
        angular_velocity_covariance: unknown,
        linear_acceleration: sensors::imu_acceleration(acc),
        linear_acceleration_covariance: acc_cov,
    }
}

/// `temperature`.
pub fn temperature(raw: i16, stamp: Stamp, frame: String) -> Temperature {
    Temperature {
        header: Header::new(stamp, frame),
        temperature: sensors::temperature_celsius(raw),
        variance: 0.01,
    }
}

/// `buttons` (Joy).
pub fn joy(values: [i16; 5], stamp: Stamp) -> Joy {
    Joy {
        header: Header::new(stamp, ""),
        buttons: sensors::joy_buttons(values).to_vec(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nrt_engine::thymio::params::DriverParams;

    #[test]
    fn ranges_follow_rep_117_and_the_laser_runs_right_to_left() {
        let cal = Calibration::real();
        let far = proximity(0, &cal, 2, Stamp::ZERO, proximity_frame(2), Ranges::Rep117);
        assert_eq!(far.range, f32::INFINITY);
        assert_eq!(far.header.frame_id, "proximity_center_link");
        assert_eq!(
            (far.radiation_type, far.min_range, far.max_range),
            (INFRARED, PROXIMITY_RANGE_MIN, PROXIMITY_RANGE_MAX)
        );
        let raw = [0, 0, 0, 0, 4000, 0, 0];
        let scan = laser(&raw, &cal, Stamp::ZERO, "laser_link".into());
        assert_eq!(scan.ranges.len(), 5);
        assert_eq!(scan.intensities, [4000.0, 0.0, 0.0, 0.0, 0.0]);
        // sensor 4 (right) saw something, first of the scan; sensor 0 saw nothing, last
        assert!(scan.ranges[0] != f32::INFINITY && scan.ranges[4] == f32::INFINITY);
        assert_eq!(scan.angle_max, -scan.angle_min);
        assert_eq!(scan.range_min, PROXIMITY_RANGE_MIN + sensors::LASER_SHIFT);
        let g = ground(500, 100, Stamp::ZERO, ground_frame(1), Ranges::Rep117);
        assert_eq!(
            (g.range, g.header.frame_id.as_str()),
            (f32::NEG_INFINITY, "ground_right_link")
        );
    }

    /// `ranges: ros_thymio` gives ROS-Thymio's values where REP-117 gives ±inf (ros-aseba-interface.md §3.6 and
    /// §3.3: −1.0 when nothing reflects, `min_range` when saturated; ground 1.0 over a void, 0.0 on the floor);
    /// distances are the same in both, and the default stays REP-117.
    #[test]
    fn ranges_ros_thymio_publishes_what_ros_thymio_published() {
        assert_eq!(DriverParams::default().ranges, Ranges::Rep117);
        let cal = Calibration::real();
        let r_max = cal.proximity[2].parameters[0] as i16 + 10;
        let prox = |raw: i16, ranges| {
            proximity(raw, &cal, 2, Stamp::ZERO, proximity_frame(2), ranges).range
        };
        // nothing reflects
        assert_eq!(prox(0, Ranges::Rep117), f32::INFINITY);
        assert_eq!(prox(0, Ranges::RosThymio), -1.0);
        // saturated: touching
        assert_eq!(prox(r_max, Ranges::Rep117), f32::NEG_INFINITY);
        assert_eq!(prox(r_max, Ranges::RosThymio), PROXIMITY_RANGE_MIN);
        // a distance is a distance in both (r = 2000 ≈ 9.6 cm)
        let d = prox(2000, Ranges::RosThymio);
        assert_eq!(d, prox(2000, Ranges::Rep117));
        assert!((0.09..0.10).contains(&d), "{d}");
        // ground: threshold 100, the floor reflects 500, a void 20
        let g = |delta: i16, ranges| ground(delta, 100, Stamp::ZERO, ground_frame(0), ranges).range;
        assert_eq!(
            (g(500, Ranges::Rep117), g(20, Ranges::Rep117)),
            (f32::NEG_INFINITY, f32::INFINITY)
        );
        assert_eq!(
            (g(500, Ranges::RosThymio), g(20, Ranges::RosThymio)),
            (0.0, 1.0)
        );
        // ROS-Thymio compares `delta < threshold`: the threshold itself is ground
        assert_eq!(g(100, Ranges::RosThymio), 0.0);
    }

    #[test]
    fn imu_temperature_and_buttons() {
        let i = imu([0, 0, 23], Stamp::ZERO, "base_link".into());
        assert!(
            (i.linear_acceleration[2].abs() - 9.81).abs() < 1e-9,
            "{i:?}"
        );
        assert_eq!(i.orientation_covariance[0], -1.0);
        assert_eq!(i.angular_velocity_covariance[0], -1.0);
        assert_eq!(i.linear_acceleration_covariance[8], 0.07);
        let t = temperature(253, Stamp::ZERO, "base_link".into());
        assert!((t.temperature - 25.3).abs() < 1e-9 && t.variance == 0.01);
        assert_eq!(joy([1, 0, 0, 0, 1], Stamp::ZERO).buttons.len(), 5);
    }
}
