//! The sensor and state topics of one robot on ROS 1 besides odometry (ros-aseba-interface.md §3.3): proximity
//! (Range ×7 and the laser scan), ground, IMU, tap, temperature, microphone, RC5 remote, buttons (Joy and one
//! Bool per button), proximity communication, and the latched `robot_description` and `obstacle_stop`.
//!
//! The sensor topics are the layer's catalogue (`nrt_interface::sensor_topics`): one publisher per entry, typed by
//! its kind, and one conversion per kind here. They are published from the NRT loop when the robot's script events
//! arrive ([`Outputs::publish_event`]); proximity comes decoded from the RT thread. Queues as ROS-Thymio's rospy
//! publishers (1).

use super::conv;
use super::Ros1Error;
use msgs::thymio::PROXIMITY_COUNT;
use nrt_engine::thymio::calibration::Calibration;
use nrt_engine::thymio::events::RobotEvent;
use nrt_engine::thymio::params::Ranges;
use nrt_interface::frames::Frames;
use nrt_interface::geometry::Stamp;
use nrt_interface::sensor_topics::{self as catalogue, Kind, SensorMessage, SensorTopic};
use nrt_ros1_client::graph::{Graph, GraphError};
use nrt_ros1_client::net::Publisher;
use nrt_ros1_client::ros1_msgs::{sensor_msgs as sm, std_msgs, thymio_msgs};
use std::collections::BTreeMap;

/// Queue of every sensor topic (ROS-Thymio's rospy queue sizes are 1).
const DEPTH: usize = 1;

/// The leaves of [`Outputs`] besides the sensor topics of the catalogue.
pub const STATE_NAMES: [&str; 6] = [
    "obstacle_stop",
    "cliff_stop",
    "robot_description",
    "emergency_stop",
    "battery_state",
    "picked_up",
];

/// The publisher of one sensor topic, typed by the catalogue's kind.
enum SensorPublisher {
    Range(Publisher<sm::Range>),
    LaserScan(Publisher<sm::LaserScan>),
    Imu(Publisher<sm::Imu>),
    Empty(Publisher<std_msgs::Empty>),
    Temperature(Publisher<sm::Temperature>),
    Float32(Publisher<std_msgs::Float32>),
    Int8(Publisher<std_msgs::Int8>),
    Joy(Publisher<sm::Joy>),
    Bool(Publisher<std_msgs::Bool>),
    Comm(Publisher<thymio_msgs::Comm>),
}

impl SensorPublisher {
    /// Whether a subscriber is connected.
    fn subscribed(&self) -> bool {
        0 < match self {
            SensorPublisher::Range(p) => p.subscriber_count(),
            SensorPublisher::LaserScan(p) => p.subscriber_count(),
            SensorPublisher::Imu(p) => p.subscriber_count(),
            SensorPublisher::Empty(p) => p.subscriber_count(),
            SensorPublisher::Temperature(p) => p.subscriber_count(),
            SensorPublisher::Float32(p) => p.subscriber_count(),
            SensorPublisher::Int8(p) => p.subscriber_count(),
            SensorPublisher::Joy(p) => p.subscriber_count(),
            SensorPublisher::Bool(p) => p.subscriber_count(),
            SensorPublisher::Comm(p) => p.subscriber_count(),
        }
    }

    fn advertise(g: &Graph, topic: &str, kind: Kind) -> Result<SensorPublisher, Ros1Error> {
        Ok(match kind {
            Kind::Range => SensorPublisher::Range(g.advertise(topic, DEPTH, false)?),
            Kind::LaserScan => SensorPublisher::LaserScan(g.advertise(topic, DEPTH, false)?),
            Kind::Imu => SensorPublisher::Imu(g.advertise(topic, DEPTH, false)?),
            Kind::Empty => SensorPublisher::Empty(g.advertise(topic, DEPTH, false)?),
            Kind::Temperature => SensorPublisher::Temperature(g.advertise(topic, DEPTH, false)?),
            Kind::Float32 => SensorPublisher::Float32(g.advertise(topic, DEPTH, false)?),
            Kind::Int8 => SensorPublisher::Int8(g.advertise(topic, DEPTH, false)?),
            Kind::Joy => SensorPublisher::Joy(g.advertise(topic, DEPTH, false)?),
            Kind::Bool => SensorPublisher::Bool(g.advertise(topic, DEPTH, false)?),
            Kind::Comm => SensorPublisher::Comm(g.advertise(topic, DEPTH, false)?),
        })
    }

    /// Publishes `m`, converted once per kind (the catalogue gives each topic messages of its kind only).
    fn publish(&self, g: &Graph, m: SensorMessage) -> Result<(), GraphError> {
        match (self, m) {
            (SensorPublisher::Range(p), SensorMessage::Range(r)) => g.publish(p, &conv::range(&r)),
            (SensorPublisher::LaserScan(p), SensorMessage::LaserScan(l)) => {
                g.publish(p, &conv::laser(&l))
            }
            (SensorPublisher::Imu(p), SensorMessage::Imu(i)) => g.publish(p, &conv::imu(&i)),
            (SensorPublisher::Empty(p), SensorMessage::Empty) => g.publish(p, &std_msgs::Empty {}),
            (SensorPublisher::Temperature(p), SensorMessage::Temperature(t)) => {
                g.publish(p, &conv::temperature(&t))
            }
            (SensorPublisher::Float32(p), SensorMessage::Float32(data)) => {
                g.publish(p, &std_msgs::Float32 { data })
            }
            (SensorPublisher::Int8(p), SensorMessage::Int8(data)) => {
                g.publish(p, &std_msgs::Int8 { data })
            }
            (SensorPublisher::Joy(p), SensorMessage::Joy(j)) => g.publish(p, &conv::joy(&j)),
            (SensorPublisher::Bool(p), SensorMessage::Bool(data)) => {
                g.publish(p, &std_msgs::Bool { data })
            }
            (
                SensorPublisher::Comm(p),
                SensorMessage::Comm {
                    value,
                    payloads,
                    intensities,
                },
            ) => g.publish(
                p,
                &thymio_msgs::Comm {
                    value,
                    payloads,
                    intensities,
                },
            ),
            // the catalogue's unit tests pin every message to its topic's kind
            _ => Ok(()),
        }
    }
}

/// The publishers of one robot (dropping them unadvertises the topics).
pub struct Outputs {
    /// One per topic of the catalogue (`nrt_interface::sensor_topics`).
    sensors: BTreeMap<SensorTopic, SensorPublisher>,
    /// Latched: whether the RT obstacle-stop reflex holds the robot.
    obstacle_stop: Publisher<std_msgs::Bool>,
    /// Latched: whether the RT cliff reflex holds the robot.
    cliff_stop: Publisher<std_msgs::Bool>,
    /// Latched: whether the emergency stop holds the robot's wheels.
    emergency_stop: Publisher<std_msgs::Bool>,
    /// `battery_state` (`nrt_interface::battery`), every `BATTERY_PERIOD`.
    battery: Publisher<sm::BatteryState>,
    /// Latched: whether the RT pick-up reflex holds the robot.
    picked_up: Publisher<std_msgs::Bool>,
    /// Latched: the URDF, when the driver publishes the model.
    _description: Publisher<std_msgs::String>,
}

impl Outputs {
    /// Whether a subscriber is connected to one of its sensor or event topics.
    pub fn sensors_heard(&self) -> bool {
        self.sensors.values().any(SensorPublisher::subscribed)
    }

    /// Advertises the topics (`t` makes a leaf's global name) on the registrar thread, and publishes the latched
    /// ones: `robot_description` (`urdf`, also set as the parameter of that name, where ROS 1's tools read it;
    /// none when `None`: the topic stays empty, as with ROS-Thymio's `launch_model` off), `obstacle_stop`,
    /// `cliff_stop` and `emergency_stop` (false: nothing holds the robot yet).
    pub fn advertise(
        g: &Graph,
        t: &dyn Fn(&str) -> String,
        urdf: Option<String>,
    ) -> Result<Outputs, Ros1Error> {
        let sensors = SensorTopic::all()
            .map(|s| Ok((s, SensorPublisher::advertise(g, &t(&s.leaf()), s.kind())?)))
            .collect::<Result<_, Ros1Error>>()?;
        let out = Outputs {
            sensors,
            obstacle_stop: g.advertise(&t("obstacle_stop"), 1, true)?,
            cliff_stop: g.advertise(&t("cliff_stop"), 1, true)?,
            emergency_stop: g.advertise(&t("emergency_stop"), 1, true)?,
            battery: g.advertise(&t("battery_state"), 1, false)?,
            picked_up: g.advertise(&t("picked_up"), 1, true)?,
            _description: g.advertise(&t("robot_description"), 1, true)?,
        };
        if let Some(urdf) = urdf {
            // ROS 1's tools (robot_state_publisher, RViz's RobotModel) read the model from the parameter server,
            // in the robot's namespace: the same name as the topic
            let param = nrt_ros1_client::remap::apply(&t("robot_description")).into_owned();
            // (set again on a new master after a restart: Graph::set_param)
            g.set_param(&param, urdf.clone())
                .map_err(|e| Ros1Error::Params(param, e.into()))?;
            g.publish(&out._description, &std_msgs::String { data: urdf })?;
        }
        g.publish(&out.obstacle_stop, &std_msgs::Bool { data: false })?;
        g.publish(&out.cliff_stop, &std_msgs::Bool { data: false })?;
        g.publish(&out.emergency_stop, &std_msgs::Bool { data: false })?;
        g.publish(&out.picked_up, &std_msgs::Bool { data: false })?;
        Ok(out)
    }

    /// The global names of every topic of a robot whose leaves `t` names (to forget them).
    pub fn names(t: &dyn Fn(&str) -> String) -> Vec<String> {
        SensorTopic::all()
            .map(|s| t(&s.leaf()))
            .chain(STATE_NAMES.iter().map(|l| t(l)))
            .collect()
    }

    fn publish(
        &self,
        g: &Graph,
        topic: SensorTopic,
        m: SensorMessage,
        result: &mut Result<(), Ros1Error>,
    ) {
        if let Some(p) = self.sensors.get(&topic) {
            let r = p.publish(g, m);
            if result.is_ok() {
                *result = r.map_err(Into::into);
            }
        }
    }

    /// Publishes a proximity reading (its raw values) as the catalogue says (a range per sensor and the laser
    /// scan), with the robot's calibration and `ranges` parameter.
    pub fn publish_proximity(
        &self,
        g: &Graph,
        raw: &[i16; PROXIMITY_COUNT],
        cal: &Calibration,
        ranges: Ranges,
        stamp: Stamp,
        f: &Frames,
    ) -> Result<(), Ros1Error> {
        let mut result = Ok(());
        catalogue::proximity_messages(
            raw,
            cal,
            ranges,
            stamp,
            f,
            |_| true,
            |t, m| self.publish(g, t, m, &mut result),
        );
        result
    }

    /// Publishes what a script event of the robot says (decoded by `sensors::robot_event`, which leaves out what
    /// the RT thread decodes; the messages are the catalogue's); `threshold` is the ground sensors'
    /// (`ground.threshold`), `ranges` the robot's `ranges` parameter.
    pub fn publish_event(
        &self,
        g: &Graph,
        event: RobotEvent,
        stamp: Stamp,
        f: &Frames,
        threshold: i16,
        ranges: Ranges,
    ) -> Result<(), Ros1Error> {
        let mut result = Ok(());
        catalogue::event_messages(
            event,
            threshold,
            ranges,
            stamp,
            f,
            |_| true,
            |t, m| self.publish(g, t, m, &mut result),
        );
        result
    }

    /// Publishes (latched) whether the obstacle-stop reflex holds the robot.
    pub fn publish_obstacle_stop(&self, g: &Graph, engaged: bool) -> Result<(), GraphError> {
        g.publish(&self.obstacle_stop, &std_msgs::Bool { data: engaged })
    }

    /// Publishes (latched) whether the cliff reflex holds the robot.
    pub fn publish_cliff_stop(&self, g: &Graph, engaged: bool) -> Result<(), GraphError> {
        g.publish(&self.cliff_stop, &std_msgs::Bool { data: engaged })
    }

    /// Publishes (latched) whether the emergency stop holds the robot's wheels.
    pub fn publish_emergency_stop(&self, g: &Graph, engaged: bool) -> Result<(), GraphError> {
        g.publish(&self.emergency_stop, &std_msgs::Bool { data: engaged })
    }

    /// Publishes (latched) whether the pick-up reflex holds the robot.
    pub fn publish_picked_up(&self, g: &Graph, engaged: bool) -> Result<(), GraphError> {
        g.publish(&self.picked_up, &std_msgs::Bool { data: engaged })
    }

    /// Publishes a `battery_state` reading, stamped `stamp` in the robot's base frame `frame`.
    pub fn publish_battery(
        &self,
        g: &Graph,
        stamp: Stamp,
        frame: &str,
        s: &nrt_interface::battery::BatteryState,
    ) -> Result<(), GraphError> {
        let m = sm::BatteryState {
            header: conv::header(conv::time(stamp), frame.to_owned()),
            voltage: s.voltage,
            temperature: f32::NAN,
            current: f32::NAN,
            charge: f32::NAN,
            capacity: f32::NAN,
            design_capacity: f32::NAN,
            percentage: s.percentage,
            power_supply_status: s.power_supply_status,
            power_supply_health: 0,
            power_supply_technology: s.power_supply_technology,
            present: s.present,
            cell_voltage: Vec::new(),
            cell_temperature: Vec::new(),
            location: String::new(),
            serial_number: String::new(),
        };
        g.publish(&self.battery, &m)
    }
}
