//! The publishers of one robot's sensor topics on ROS 2: one per entry of the layer's catalogue
//! (`nrt_interface::sensor_topics`), typed by its kind, with one conversion per kind to r2r's generated types.

use super::qos::{reliable, sensor_qos, DEPTH};
use super::thymio_conv as conv;
use nrt_interface::sensor_topics::{Kind, SensorMessage, SensorTopic};
use r2r::sensor_msgs::msg as sm;
use r2r::std_msgs::msg::{Bool, Empty, Float32, Int8};
use r2r::thymio_msgs::msg::Comm;
use r2r::Publisher;
use std::collections::BTreeMap;

/// The publisher of one sensor topic.
pub(crate) enum SensorPublisher {
    Range(Publisher<sm::Range>),
    LaserScan(Publisher<sm::LaserScan>),
    Imu(Publisher<sm::Imu>),
    Empty(Publisher<Empty>),
    Temperature(Publisher<sm::Temperature>),
    Float32(Publisher<Float32>),
    Int8(Publisher<Int8>),
    Joy(Publisher<sm::Joy>),
    Bool(Publisher<Bool>),
    Comm(Publisher<Comm>),
}

/// Whether anyone subscribes to `p` (publishes if the count cannot be read).
fn has_subscribers<T: r2r::WrappedTypesupport + 'static>(p: &Publisher<T>) -> bool {
    p.get_inter_process_subscription_count()
        .map_or(true, |n| n > 0)
}

impl SensorPublisher {
    /// Whether a message on it would be heard: the periodic REP-117 sensor topics (volatile: a subscriber not
    /// matched yet would not receive the sample either) are neither built nor published without a subscriber,
    /// since the robot streams them whether or not anyone listens; the event topics always are.
    pub(crate) fn heard(&self, topic: SensorTopic) -> bool {
        !topic.is_sensor_data() || self.subscribed()
    }

    /// Whether anyone subscribes to it (true if the count cannot be read).
    pub(crate) fn subscribed(&self) -> bool {
        match self {
            SensorPublisher::Range(p) => has_subscribers(p),
            SensorPublisher::LaserScan(p) => has_subscribers(p),
            SensorPublisher::Imu(p) => has_subscribers(p),
            SensorPublisher::Empty(p) => has_subscribers(p),
            SensorPublisher::Temperature(p) => has_subscribers(p),
            SensorPublisher::Float32(p) => has_subscribers(p),
            SensorPublisher::Int8(p) => has_subscribers(p),
            SensorPublisher::Joy(p) => has_subscribers(p),
            SensorPublisher::Bool(p) => has_subscribers(p),
            SensorPublisher::Comm(p) => has_subscribers(p),
        }
    }

    /// Publishes `m`, converted once per kind (the catalogue gives each topic messages of its kind only).
    pub(crate) fn publish(&self, m: SensorMessage) -> Result<(), r2r::Error> {
        match (self, m) {
            (SensorPublisher::Range(p), SensorMessage::Range(r)) => p.publish(&conv::range(&r)),
            (SensorPublisher::LaserScan(p), SensorMessage::LaserScan(l)) => {
                p.publish(&conv::laser(&l))
            }
            (SensorPublisher::Imu(p), SensorMessage::Imu(i)) => p.publish(&conv::imu(&i)),
            (SensorPublisher::Empty(p), SensorMessage::Empty) => p.publish(&Empty::default()),
            (SensorPublisher::Temperature(p), SensorMessage::Temperature(t)) => {
                p.publish(&conv::temperature(&t))
            }
            (SensorPublisher::Float32(p), SensorMessage::Float32(data)) => {
                p.publish(&Float32 { data })
            }
            (SensorPublisher::Int8(p), SensorMessage::Int8(data)) => p.publish(&Int8 { data }),
            (SensorPublisher::Joy(p), SensorMessage::Joy(j)) => p.publish(&conv::joy(&j)),
            (SensorPublisher::Bool(p), SensorMessage::Bool(data)) => p.publish(&Bool { data }),
            (
                SensorPublisher::Comm(p),
                SensorMessage::Comm {
                    value,
                    payloads,
                    intensities,
                },
            ) => p.publish(&Comm {
                value,
                payloads: payloads.to_vec(),
                intensities: intensities.to_vec(),
            }),
            // the catalogue's unit tests pin every message to its topic's kind
            _ => Ok(()),
        }
    }

    fn destroy(self, node: &mut r2r::Node) {
        match self {
            SensorPublisher::Range(p) => node.destroy_publisher(p),
            SensorPublisher::LaserScan(p) => node.destroy_publisher(p),
            SensorPublisher::Imu(p) => node.destroy_publisher(p),
            SensorPublisher::Empty(p) => node.destroy_publisher(p),
            SensorPublisher::Temperature(p) => node.destroy_publisher(p),
            SensorPublisher::Float32(p) => node.destroy_publisher(p),
            SensorPublisher::Int8(p) => node.destroy_publisher(p),
            SensorPublisher::Joy(p) => node.destroy_publisher(p),
            SensorPublisher::Bool(p) => node.destroy_publisher(p),
            SensorPublisher::Comm(p) => node.destroy_publisher(p),
        }
    }
}

/// The sensor publishers of one robot.
pub(crate) type SensorPublishers = BTreeMap<SensorTopic, SensorPublisher>;

/// Creates a publisher per catalogue entry (`t`: leaf → full name); `sensor_data`: the REP-117 sensor topics get
/// ROS 2's sensor-data profile, the others ROS-Thymio's reliable one.
pub(crate) fn create(
    node: &mut r2r::Node,
    t: &dyn Fn(&str) -> String,
    sensor_data: bool,
) -> Result<SensorPublishers, r2r::Error> {
    SensorTopic::all()
        .map(|s| {
            let name = t(&s.leaf());
            let qos = if s.is_sensor_data() {
                sensor_qos(sensor_data)
            } else {
                reliable(DEPTH)
            };
            let p = match s.kind() {
                Kind::Range => SensorPublisher::Range(node.create_publisher(&name, qos)?),
                Kind::LaserScan => SensorPublisher::LaserScan(node.create_publisher(&name, qos)?),
                Kind::Imu => SensorPublisher::Imu(node.create_publisher(&name, qos)?),
                Kind::Empty => SensorPublisher::Empty(node.create_publisher(&name, qos)?),
                Kind::Temperature => {
                    SensorPublisher::Temperature(node.create_publisher(&name, qos)?)
                }
                Kind::Float32 => SensorPublisher::Float32(node.create_publisher(&name, qos)?),
                Kind::Int8 => SensorPublisher::Int8(node.create_publisher(&name, qos)?),
                Kind::Joy => SensorPublisher::Joy(node.create_publisher(&name, qos)?),
                Kind::Bool => SensorPublisher::Bool(node.create_publisher(&name, qos)?),
                Kind::Comm => SensorPublisher::Comm(node.create_publisher(&name, qos)?),
            };
            Ok((s, p))
        })
        .collect()
}

/// Destroys every sensor publisher (they leave the ROS graph now).
pub(crate) fn destroy(publishers: SensorPublishers, node: &mut r2r::Node) {
    publishers.into_values().for_each(|p| p.destroy(node));
}
