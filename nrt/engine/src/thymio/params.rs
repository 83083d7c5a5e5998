//! Parameters of the Thymio driver, named as ROS-Thymio names them (ros-aseba-interface.md
//! §3.2), plus the safety ones ROS-Thymio lacks (`cmd_vel_timeout`).

use super::calibration::{
    Calibration, CalibrationError, CalibrationFile, MotorEntry, ProximityEntry, RobotEntry,
    AXIS_LENGTH,
};
use super::motion_limits::{self, AngularLimits, LinearLimits};
use super::odometry_params;
/// The motor and proximity model checks, here where they were first defined.
pub use crate::schema::ranges::{check_proximity, check_quadratic};
use crate::schema::{ranges, Invalid, Section};
use handoff::NodeId;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Every parameter of the Thymio driver layer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DriverParams {
    /// Enable the Thymio driver layer on Thymio nodes (the generic bridge runs regardless).
    pub enabled: bool,
    /// Wheel separation [m] (overridden by the calibration file entry of the robot).
    pub axis_length: f64,
    /// Odometry frame (prefixed with the robot's namespace or `tf_prefix`).
    pub odom_frame: String,
    /// Robot frame.
    pub robot_frame: String,
    /// Frame prefix; empty (the default): the robot's namespace (the ROS namespace of the driver,
    /// then the robot's own under it), so that two robots' TF trees never collide; set, it
    /// replaces the ROS namespace (robots under one node still get their own namespace after it).
    pub tf_prefix: String,
    /// Throttle odom/tf/joint_states to this rate [Hz]; ≤ 0 publishes every sample.
    pub odom_max_rate: f64,
    /// Rate [Hz] of the extended joint states (`~/joint_states` of the driver node) while
    /// someone subscribes; the RT thread builds at most one per RT period (`rt.period_us`), so
    /// rates above `1 / period` give one per period; 0: none.
    pub joint_state_rate: f64,
    /// Joint names.
    pub left_wheel_joint: String,
    /// Joint names.
    pub right_wheel_joint: String,
    /// Ground sensor settings.
    pub ground: GroundParams,
    /// YAML calibration file keyed by robot id.
    pub calibration_file: String,
    /// Simulated robot: use the simulation calibration defaults.
    pub simulation: bool,
    /// Stop a robot when no cmd_vel arrived for this long [s] (0 disables; not recommended).
    /// The generic interface's raw motor commands to a driven robot (`set_speed`,
    /// `motor.*.target`) are set-points too: the same watchdog and cap apply to them.
    pub cmd_vel_timeout: f64,
    /// `cmd_vel` is a `geometry_msgs/TwistStamped` (what ROS 2 Jazzy's navigation stack and
    /// `diff_drive_controller` publish) instead of a `Twist`; a stamped command older than
    /// `cmd_vel_timeout` is ignored and counted (a zero stamp counts as "now").
    pub cmd_vel_stamped: bool,
    /// Publish the sensor topics (`proximity/*`, `proximity/laser`, `ground/*`, `imu`,
    /// `temperature`) with ROS 2's sensor-data QoS profile (best effort, volatile, depth 5)
    /// instead of ROS-Thymio's (reliable, volatile, depth 1); a default-QoS (reliable)
    /// subscriber then receives nothing from them.
    pub sensor_data_qos: bool,
    /// How the proximity and ground `Range` topics say "nothing seen" and "too close" ([`Ranges`]): REP-117's
    /// ±inf (the default) or ROS-Thymio's −1 / `min_range` / 1.0 / 0.0, for code written against ROS-Thymio.
    /// Read at start.
    pub ranges: Ranges,
    /// Remove a robot whose node stayed lost this long [s]: its RT slot is freed and its ROS
    /// interface destroyed; it is added back when the node returns (≤ 0 never removes).
    pub lost_robot_timeout: f64,
    /// Motor calibration overrides (`motor.left.parameters`, `motor.right.deadband`, …), in
    /// the calibration file's shape.
    pub motor: BTreeMap<String, MotorEntry>,
    /// Proximity calibration overrides (`proximity.center.parameters`, …), in the calibration
    /// file's shape.
    pub proximity: BTreeMap<String, ProximityEntry>,
    /// Publish `robot_description` and the static transforms of the sensor frames.
    pub publish_model: bool,
    /// The RT thread's obstacle-stop reflex (`obstacle_stop.*`, applied live).
    pub obstacle_stop: ObstacleStopConfig,
    /// The RT thread's cliff reflex (`cliff_stop.*`, applied live).
    pub cliff_stop: CliffStopConfig,
    /// The RT thread's pick-up reflex (`pickup_stop.*`, applied live).
    pub pickup_stop: PickupStopConfig,
    /// Set a driven robot's Aseba VM running again (RUN) when it is found stopped or paused
    /// (by Studio's "stop" or any switch client): a stopped VM ignores `set_speed` and stops
    /// odometry. Reported once per halt either way.
    pub restart_stopped_vm: bool,
    /// Motion limits of the forward speed (`linear.x.*`, diff_drive_controller's names; NaN =
    /// off), applied live by the RT limiter to every owner's command (stops are never slowed).
    pub linear: LinearLimits,
    /// Motion limits of the yaw rate (`angular.z.*`), as `linear`.
    pub angular: AngularLimits,
    /// Publish the limited twist the RT loop commanded on the driver node's `~/cmd_vel_out`
    /// (`geometry_msgs/TwistStamped`), as diff_drive_controller's parameter of that name.
    pub publish_limited_velocity: bool,
    /// The variances on the diagonal of `odom`'s pose covariance (x, y, z, roll, pitch, yaw; diff_drive_controller's
    /// name); empty (the default): ROS-Thymio's (`covariance[0] = -1`, unknown).
    pub pose_covariance_diagonal: Vec<f64>,
    /// The variances on the diagonal of `odom`'s twist covariance; empty (the default): ROS-Thymio's, from the
    /// wheels' dead band.
    pub twist_covariance_diagonal: Vec<f64>,
    /// Publish `odom → base_link` on `/tf` (diff_drive_controller's name; off when another node, e.g. a
    /// robot_localization EKF, publishes it). The wheels' transforms are published either way.
    pub enable_odom_tf: bool,
    /// Each robot's driver node is a managed (lifecycle) node: the robot starts unconfigured with its wheels held
    /// at zero by the RT loop and drives only while its node is active (`nrt_interface::lifecycle`). Off (the
    /// default): no lifecycle endpoints, robots drive as soon as they are found. Read at start.
    pub managed: bool,
}

/// `obstacle_stop.*`: a reflex in the RT cycle that holds forward motion while a front proximity
/// sensor sees something close and backward motion while a rear one does (turning stays
/// allowed), however late ROS is. Each robot's `obstacle_stop` topic says when it holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ObstacleStopConfig {
    /// Off by default: ROS-Thymio has no such reflex.
    pub enabled: bool,
    /// Raw proximity reading at or above which a sensor blocks (1–4500; 2000 ≈ 10 cm).
    pub threshold: i16,
    /// Readings older than this [s] are ignored (the reflex then lets the command through).
    pub max_age: f64,
}

impl Default for ObstacleStopConfig {
    fn default() -> Self {
        Self {
            enabled: false,
            threshold: 2000,
            max_age: 0.5,
        }
    }
}

impl ObstacleStopConfig {
    /// Refuses a threshold outside 1–4500 and an age outside [`ranges::OBSTACLE_MAX_AGE`]; the
    /// error names the key (relative to `obstacle_stop`).
    pub fn validate(&self) -> Result<(), Invalid> {
        ranges::check_int(
            "threshold",
            self.threshold.into(),
            ranges::OBSTACLE_THRESHOLD,
            "raw proximity readings, 2000 ≈ 10 cm",
        )?;
        ranges::OBSTACLE_MAX_AGE.check("max_age", self.max_age)
    }
}

/// `cliff_stop.*`: a reflex in the RT cycle that holds forward motion while a front ground sensor
/// sees no floor (`prox.ground.delta` below the threshold: a table's edge); turning and backing
/// away stay allowed. Each robot's `cliff_stop` topic says when it holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CliffStopConfig {
    /// Off by default: ROS-Thymio has no such reflex, and a black line can read as low as a
    /// drop on some floors (docs/safety.md "Cliff reflex").
    pub enabled: bool,
    /// `prox.ground.delta` below which a sensor sees no floor (1–1023).
    pub threshold: i16,
    /// Readings older than this [s] are ignored (the reflex then lets the command through).
    pub max_age: f64,
}

impl Default for CliffStopConfig {
    fn default() -> Self {
        Self {
            enabled: false,
            threshold: 30,
            max_age: 0.5,
        }
    }
}

/// `pickup_stop.*`: a reflex in the RT cycle that holds every wheel while the accelerometer says the robot left
/// the floor (tilted beyond ~49°, or falling: `rt::controllers::PickupStop` has the rule). Each robot's latched
/// `picked_up` topic says when it holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
pub struct PickupStopConfig {
    /// Off by default, as `cliff_stop`: ROS-Thymio has no such reflex, and a robot on its back or on a stand with
    /// its wheels in the air (how wheels are checked on a bench) reads "off the floor": its wheels would not turn.
    pub enabled: bool,
}

impl CliffStopConfig {
    /// Refuses a threshold outside [`ranges::CLIFF_THRESHOLD`] and an age outside
    /// [`ranges::OBSTACLE_MAX_AGE`]; the error names the key (relative to `cliff_stop`).
    pub fn validate(&self) -> Result<(), Invalid> {
        ranges::check_int(
            "threshold",
            self.threshold.into(),
            ranges::CLIFF_THRESHOLD,
            "prox.ground.delta, 0 over a drop … ≈1000 on white paper",
        )?;
        ranges::OBSTACLE_MAX_AGE.check("max_age", self.max_age)
    }
}

/// The driver's parameters sit at the top level (ROS-Thymio names). The calibration
/// (`axis_length`, `motor.*`, `proximity.*`, `ground.*`) and the obstacle-stop reflex apply
/// live; the rest at start.
impl Section for DriverParams {
    const LIVE: &'static [&'static str] = &[
        "axis_length",
        "motor",
        "proximity",
        "ground",
        "obstacle_stop",
        "cliff_stop",
        "pickup_stop",
        "joint_state_rate",
        "linear",
        "angular",
        "publish_limited_velocity",
        "pose_covariance_diagonal",
        "twist_covariance_diagonal",
        "enable_odom_tf",
    ];

    /// Every numeric parameter in its physically meaningful range ([`ranges`]); the motor and
    /// proximity entries as the calibration checks them.
    fn validate(&self) -> Result<(), Invalid> {
        ranges::AXIS_LENGTH.check("axis_length", self.axis_length)?;
        ranges::ODOM_MAX_RATE.check("odom_max_rate", self.odom_max_rate)?;
        ranges::JOINT_STATE_RATE.check("joint_state_rate", self.joint_state_rate)?;
        ranges::CMD_VEL_TIMEOUT.check("cmd_vel_timeout", self.cmd_vel_timeout)?;
        ranges::LOST_ROBOT_TIMEOUT.check("lost_robot_timeout", self.lost_robot_timeout)?;
        ranges::check_int(
            "ground.threshold",
            self.ground.threshold.into(),
            ranges::GROUND_THRESHOLD,
            "prox.ground.delta is a 10-bit reading",
        )?;
        for (side, m) in &self.motor {
            check_motor(&format!("motor.{side}"), m)?;
        }
        for (name, p) in &self.proximity {
            if let Some(params) = p.parameters {
                check_proximity(&format!("proximity.{name}.parameters"), params)?;
            }
        }
        self.obstacle_stop
            .validate()
            .map_err(|e| e.under("obstacle_stop"))?;
        self.cliff_stop
            .validate()
            .map_err(|e| e.under("cliff_stop"))?;
        for (key, d) in [
            ("pose_covariance_diagonal", &self.pose_covariance_diagonal),
            ("twist_covariance_diagonal", &self.twist_covariance_diagonal),
        ] {
            odometry_params::check_diagonal(key, d)?;
        }
        motion_limits::validate(&self.linear, &self.angular)
    }
}

/// Checks the values a motor entry sets (`key`: `motor.<side>`).
pub fn check_motor(key: &str, m: &MotorEntry) -> Result<(), Invalid> {
    for (name, q) in [("parameters", m.parameters), ("q", m.q)] {
        if let Some(q) = q {
            check_quadratic(&format!("{key}.{name}"), q)?;
        }
    }
    if let Some(d) = m.deadband {
        ranges::MOTOR_DEADBAND.check(&format!("{key}.deadband"), d)?;
    }
    Ok(())
}

impl Default for DriverParams {
    fn default() -> Self {
        Self {
            enabled: true,
            axis_length: AXIS_LENGTH,
            odom_frame: "odom".into(),
            robot_frame: "base_link".into(),
            tf_prefix: String::new(),
            odom_max_rate: -1.0,
            joint_state_rate: 100.0,
            left_wheel_joint: "left_wheel_joint".into(),
            right_wheel_joint: "right_wheel_joint".into(),
            ground: GroundParams::default(),
            calibration_file: String::new(),
            simulation: false,
            cmd_vel_timeout: 0.5,
            cmd_vel_stamped: false,
            sensor_data_qos: false,
            ranges: Ranges::Rep117,
            lost_robot_timeout: 10.0,
            motor: BTreeMap::new(),
            proximity: BTreeMap::new(),
            publish_model: true,
            obstacle_stop: ObstacleStopConfig::default(),
            cliff_stop: CliffStopConfig::default(),
            pickup_stop: PickupStopConfig::default(),
            restart_stopped_vm: true,
            linear: LinearLimits::default(),
            angular: AngularLimits::default(),
            publish_limited_velocity: false,
            pose_covariance_diagonal: Vec::new(),
            twist_covariance_diagonal: Vec::new(),
            enable_odom_tf: true,
            managed: false,
        }
    }
}

/// `ranges`: the values of the proximity and ground `Range` topics where a reading is not a distance
/// (`nrt_interface::sensors` maps them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Ranges {
    /// REP-117: +inf when nothing is seen, −inf when closer than `min_range` (a ground sensor: −inf when the
    /// ground reflects, +inf over a void or black).
    #[default]
    Rep117,
    /// What ROS-Thymio's ROS 2 driver publishes (its "Galactic does not like ±inf" workaround): a proximity
    /// sensor gives −1.0 when nothing reflects and `min_range` when saturated; a ground sensor 0.0 when the ground
    /// reflects and 1.0 over a void or black. The laser scan stays REP-117 (ROS-Thymio's shows every empty
    /// sector as an obstacle).
    RosThymio,
}

/// `ground.*`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct GroundParams {
    /// Threshold on `prox.ground.delta` above which the ground is seen.
    pub threshold: i16,
}

impl Default for GroundParams {
    fn default() -> Self {
        Self { threshold: 200 }
    }
}

/// The driver parameters that are the process's, not one robot's: they stay on the bridge node
/// (the RT watchdog, the RT reflex and the robots' lifecycle are shared by every robot).
pub const PROCESS_WIDE: [&str; 8] = [
    "enabled",
    "cmd_vel_timeout",
    "lost_robot_timeout",
    "restart_stopped_vm",
    "obstacle_stop",
    "cliff_stop",
    "pickup_stop",
    "managed",
];

/// ROS-Thymio's `thymio_driver` parameters that thymio-rt has no use for: accepted on a
/// robot's driver node (so that a ROS-Thymio parameter file works unchanged) and ignored —
/// the bridge loads the script (`script.path`) and publishes the model itself (`publish_model`).
pub const ROS_THYMIO_UNUSED: [&str; 2] = ["script", "launch_model"];

impl DriverParams {
    /// Whether the dotted driver parameter `name` is one robot's (its `thymio_driver` node's):
    /// a key of these parameters that is not [`PROCESS_WIDE`].
    pub fn is_per_robot(name: &str) -> bool {
        // the keys of the default, made once: a table asks this for each of its rows, and the ROS 1 front end
        // compares its tables every 200 ms (rebuilding them here was most of its NRT loop's CPU)
        static KEYS: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
        let first = name.split('.').next().unwrap_or(name);
        !PROCESS_WIDE.contains(&first)
            && KEYS
                .get_or_init(crate::schema::keys::<DriverParams>)
                .iter()
                .any(|k| k == first)
    }

    /// The motion limits these parameters give the RT limiter.
    pub fn motion_limits(&self) -> handoff::MotionLimits {
        motion_limits::to_rt(&self.linear, &self.angular)
    }

    /// The calibration entry these parameters describe (applied after the defaults, before
    /// the file's entry).
    pub fn as_entry(&self) -> RobotEntry {
        RobotEntry {
            motor: self.motor.clone(),
            proximity: self.proximity.clone(),
            axis_length: Some(self.axis_length),
        }
    }

    /// The calibration of robot (node) `uid` under these parameters: defaults (real or simulated),
    /// the parameters (`axis_length`, `motor.*`, `proximity.*`), then the robot's file entry,
    /// which is the most specific.
    pub fn calibration(
        &self,
        file: &CalibrationFile,
        uid: NodeId,
    ) -> Result<Calibration, CalibrationError> {
        let mut c = if self.simulation {
            Calibration::simulation()
        } else {
            Calibration::real()
        };
        c.apply(&self.as_entry())?;
        if let Some(entry) = file.get(&uid.0) {
            c.apply(entry)?;
        }
        Ok(c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::thymio::calibration::{parse_file, read_file, MotorCalibration};

    #[test]
    fn per_robot_parameters_are_the_robot_ones() {
        for name in [
            "axis_length",
            "motor.left.parameters",
            "odom_frame",
            "ground.threshold",
        ] {
            assert!(DriverParams::is_per_robot(name), "{name}");
        }
        for name in [
            "cmd_vel_timeout",
            "obstacle_stop.enabled",
            "cliff_stop.threshold",
            "enabled",
            "port",
            "script",
        ] {
            assert!(!DriverParams::is_per_robot(name), "{name}");
        }
    }

    #[test]
    fn parameters_then_file_entry() {
        let mut p = DriverParams {
            simulation: true,
            axis_length: 0.09,
            ..Default::default()
        };
        p.motor.insert(
            "left".into(),
            MotorEntry {
                deadband: Some(3.0),
                ..Default::default()
            },
        );
        let f = parse_file("4: {motor: {left: {parameters: [0.0003, 0.0]}}}").unwrap();
        let c = p.calibration(&f, NodeId(4)).unwrap();
        assert_eq!(c.axis_length, 0.09);
        assert_eq!(
            c.left,
            MotorCalibration {
                parameters: [0.0003, 0.0],
                deadband: 3.0
            }
        );
        assert_eq!(c.right, Calibration::simulation().right);
        assert!(read_file("/nonexistent/cal.yaml").is_err());
        assert!(read_file("").unwrap().is_empty());
    }
}
