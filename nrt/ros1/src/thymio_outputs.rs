//! The sensor and state topics of one robot on ROS 1 besides odometry (ros-aseba-interface.md §3.3): proximity
//! (Range ×7 and the laser scan), ground, IMU, tap, temperature, microphone, RC5 remote, buttons (Joy and one
//! Bool per button), proximity communication, and the latched `robot_description` and `obstacle_stop`.
//!
//! They are published from the NRT loop when the robot's script events arrive ([`Outputs::publish_event`]);
//! proximity comes decoded from the RT thread. Queues as ROS-Thymio's rospy publishers (1).

use super::conv;
use super::graph::Graph;
use super::net::Publisher;
use super::ros1_msgs::{sensor_msgs as sm, std_msgs, thymio_msgs};
use super::Ros1Error;
use nrt_engine::thymio::calibration::Calibration;
use nrt_engine::thymio::events::RobotEvent;
use nrt_engine::thymio::sensors as values;
use nrt_engine::thymio::{BUTTON_NAMES, GROUND_NAMES, PROXIMITY_NAMES};
use nrt_interface::frames::Frames;
use nrt_interface::geometry::Stamp;
use nrt_interface::sensors;
use roslibrust::RosMessageType;

/// Queue of every sensor topic (ROS-Thymio's rospy queue sizes are 1).
const DEPTH: usize = 1;

/// The leaves of [`Outputs`] besides `proximity/<name>`, `ground/<name>` and `buttons/<name>`.
pub const OUTPUT_NAMES: [&str; 10] = [
    "proximity/laser",
    "imu",
    "tap",
    "temperature",
    "sound",
    "remote",
    "buttons",
    "comm/rx",
    "obstacle_stop",
    "robot_description",
];

/// The publishers of one robot (dropping them unadvertises the topics).
pub struct Outputs {
    proximity: Vec<Publisher<sm::Range>>,
    laser: Publisher<sm::LaserScan>,
    ground: Vec<Publisher<sm::Range>>,
    imu: Publisher<sm::Imu>,
    tap: Publisher<std_msgs::Empty>,
    temperature: Publisher<sm::Temperature>,
    sound: Publisher<std_msgs::Float32>,
    remote: Publisher<std_msgs::Int8>,
    buttons: Publisher<sm::Joy>,
    button: Vec<Publisher<std_msgs::Bool>>,
    comm_rx: Publisher<thymio_msgs::Comm>,
    /// Latched: whether the RT obstacle-stop reflex holds the robot.
    obstacle_stop: Publisher<std_msgs::Bool>,
    /// Latched: the URDF, when the driver publishes the model.
    _description: Publisher<std_msgs::String>,
}

impl Outputs {
    /// Advertises the topics (`t` makes a leaf's global name) on the registrar thread, and publishes the latched
    /// ones: `robot_description` (`urdf`; none when `None`: the topic stays empty, as with ROS-Thymio's
    /// `launch_model` off) and `obstacle_stop` (false: the reflex holds nothing yet).
    pub fn advertise(
        g: &Graph,
        t: &dyn Fn(&str) -> String,
        urdf: Option<String>,
    ) -> Result<Outputs, Ros1Error> {
        fn many<T: RosMessageType>(
            g: &Graph,
            t: &dyn Fn(&str) -> String,
            group: &str,
            names: &[&str],
        ) -> Result<Vec<Publisher<T>>, Ros1Error> {
            names
                .iter()
                .map(|n| g.advertise(&t(&format!("{group}/{n}")), DEPTH, false))
                .collect()
        }
        let out = Outputs {
            proximity: many(g, t, "proximity", &PROXIMITY_NAMES)?,
            laser: g.advertise(&t("proximity/laser"), DEPTH, false)?,
            ground: many(g, t, "ground", &GROUND_NAMES)?,
            imu: g.advertise(&t("imu"), DEPTH, false)?,
            tap: g.advertise(&t("tap"), DEPTH, false)?,
            temperature: g.advertise(&t("temperature"), DEPTH, false)?,
            sound: g.advertise(&t("sound"), DEPTH, false)?,
            remote: g.advertise(&t("remote"), DEPTH, false)?,
            buttons: g.advertise(&t("buttons"), DEPTH, false)?,
            button: many(g, t, "buttons", &BUTTON_NAMES)?,
            comm_rx: g.advertise(&t("comm/rx"), DEPTH, false)?,
            obstacle_stop: g.advertise(&t("obstacle_stop"), 1, true)?,
            _description: g.advertise(&t("robot_description"), 1, true)?,
        };
        if let Some(urdf) = urdf {
            g.publish(&out._description, &std_msgs::String { data: urdf })?;
        }
        g.publish(&out.obstacle_stop, &std_msgs::Bool { data: false })?;
        Ok(out)
    }

    /// The global names of every topic of a robot whose leaves `t` names (to forget them).
    pub fn names(t: &dyn Fn(&str) -> String) -> Vec<String> {
        let group = |g: &str, names: &[&str]| -> Vec<String> {
            names.iter().map(|n| t(&format!("{g}/{n}"))).collect()
        };
        OUTPUT_NAMES
            .iter()
            .map(|l| t(l))
            .chain(group("proximity", &PROXIMITY_NAMES))
            .chain(group("ground", &GROUND_NAMES))
            .chain(group("buttons", &BUTTON_NAMES))
            .collect()
    }

    /// Publishes a proximity reading (the 7 raw values) as the 7 ranges and the laser scan.
    pub fn publish_proximity(
        &self,
        g: &Graph,
        raw: &[i16; 7],
        cal: &Calibration,
        stamp: Stamp,
        f: &Frames,
    ) -> Result<(), Ros1Error> {
        let mut result = Ok(());
        for (i, p) in self.proximity.iter().enumerate() {
            let frame = f.link(&sensors::proximity_frame(i));
            let m = conv::range(&sensors::proximity(raw[i], cal, i, stamp, frame));
            result = result.and(g.publish(p, &m));
        }
        let scan = conv::laser(&sensors::laser(raw, cal, stamp, f.link("laser_link")));
        result.and(g.publish(&self.laser, &scan))
    }

    /// Publishes what a script event of the robot says (decoded by [`sensors::robot_event`], which leaves out
    /// what the RT thread decodes); `threshold` is the ground sensors' (`ground.threshold`).
    pub fn publish_event(
        &self,
        g: &Graph,
        event: RobotEvent,
        stamp: Stamp,
        f: &Frames,
        threshold: i16,
    ) -> Result<(), Ros1Error> {
        match event {
            RobotEvent::Odometry { .. } | RobotEvent::Proximity(_) => Ok(()),
            RobotEvent::GroundReflected(_) | RobotEvent::GroundAmbient(_) => Ok(()),
            RobotEvent::Ground(delta) => {
                let mut result = Ok(());
                for (i, p) in self.ground.iter().enumerate() {
                    let frame = f.link(&sensors::ground_frame(i));
                    let m = conv::range(&sensors::ground(delta[i], threshold, stamp, frame));
                    result = result.and(g.publish(p, &m));
                }
                result
            }
            RobotEvent::Accelerometer(acc) => g.publish(
                &self.imu,
                &conv::imu(&sensors::imu(acc, stamp, f.base.clone())),
            ),
            RobotEvent::Tap => g.publish(&self.tap, &std_msgs::Empty {}),
            RobotEvent::Temperature(raw) => g.publish(
                &self.temperature,
                &conv::temperature(&sensors::temperature(raw, stamp, f.base.clone())),
            ),
            RobotEvent::Sound(intensity) => g.publish(
                &self.sound,
                &std_msgs::Float32 {
                    data: values::sound_level(intensity),
                },
            ),
            RobotEvent::Remote { command, .. } => g.publish(
                &self.remote,
                &std_msgs::Int8 {
                    data: command as i8,
                },
            ),
            RobotEvent::Buttons(v) => g.publish(&self.buttons, &conv::joy(&sensors::joy(v, stamp))),
            RobotEvent::Button { index, pressed } => match self.button.get(index) {
                Some(p) => g.publish(p, &std_msgs::Bool { data: pressed }),
                None => Ok(()),
            },
            RobotEvent::Comm {
                value,
                payloads,
                intensities,
            } => g.publish(
                &self.comm_rx,
                &thymio_msgs::Comm {
                    value,
                    payloads,
                    intensities,
                },
            ),
        }
    }

    /// Publishes (latched) whether the obstacle-stop reflex holds the robot.
    pub fn publish_obstacle_stop(&self, g: &Graph, engaged: bool) -> Result<(), Ros1Error> {
        g.publish(&self.obstacle_stop, &std_msgs::Bool { data: engaged })
    }
}
