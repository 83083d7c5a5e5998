//! The ROS endpoints of one Thymio robot (ROS-Thymio's names and types): its publishers, its subscriptions and
//! `is_ready` service, the `cmd_vel` task served on the spinner thread, and their QoS.

use super::report::Reporter;
use super::spinner::SpinTask;
use super::{drain, Srv, Sub};
use msgs::handoff::{NodeId, RobotId, Twist2};
use nrt_engine::thymio::actuators::{BodyLed, Preset};
use nrt_engine::thymio::{BUTTON_NAMES, GROUND_NAMES, PROXIMITY_NAMES};
use r2r::geometry_msgs::msg::Twist;
use r2r::std_msgs::msg::{Bool, ColorRGBA, Empty, Float32, Int16, Int8, String as RosString};
use r2r::thymio_msgs::msg::{Comm, Led, LedGesture, Sound, SystemSound};
use r2r::{Publisher, QosProfile};

pub(crate) fn latched() -> QosProfile {
    QosProfile::default()
        .keep_last(1)
        .reliable()
        .transient_local()
}

pub(crate) fn sensor_qos() -> QosProfile {
    QosProfile::sensor_data()
}

pub(crate) fn reliable(depth: usize) -> QosProfile {
    QosProfile::default().keep_last(depth).reliable()
}

/// Publishers of one robot.
pub(crate) struct Outputs {
    pub(crate) odom: Publisher<r2r::nav_msgs::msg::Odometry>,
    pub(crate) joints: Publisher<r2r::sensor_msgs::msg::JointState>,
    pub(crate) proximity: Vec<Publisher<r2r::sensor_msgs::msg::Range>>,
    pub(crate) laser: Publisher<r2r::sensor_msgs::msg::LaserScan>,
    pub(crate) ground: Vec<Publisher<r2r::sensor_msgs::msg::Range>>,
    pub(crate) imu: Publisher<r2r::sensor_msgs::msg::Imu>,
    pub(crate) tap: Publisher<Empty>,
    pub(crate) temperature: Publisher<r2r::sensor_msgs::msg::Temperature>,
    pub(crate) sound: Publisher<Float32>,
    pub(crate) remote: Publisher<Int8>,
    pub(crate) buttons: Publisher<r2r::sensor_msgs::msg::Joy>,
    pub(crate) button: Vec<Publisher<Bool>>,
    pub(crate) comm_rx: Publisher<Comm>,
    pub(crate) description: Publisher<RosString>,
    /// Whether the RT obstacle-stop reflex holds the robot (latched).
    pub(crate) obstacle_stop: Publisher<Bool>,
}

impl Outputs {
    /// Creates the publishers of a robot whose topics are named by `t` (leaf → full name).
    pub(crate) fn create(
        node: &mut r2r::Node,
        t: &dyn Fn(&str) -> String,
    ) -> Result<Outputs, r2r::Error> {
        Ok(Outputs {
            odom: node.create_publisher(&t("odom"), reliable(10))?,
            joints: node.create_publisher(&t("joint_states"), reliable(10))?,
            proximity: PROXIMITY_NAMES
                .iter()
                .map(|n| node.create_publisher(&t(&format!("proximity/{n}")), sensor_qos()))
                .collect::<Result<_, _>>()?,
            laser: node.create_publisher(&t("proximity/laser"), sensor_qos())?,
            ground: GROUND_NAMES
                .iter()
                .map(|n| node.create_publisher(&t(&format!("ground/{n}")), sensor_qos()))
                .collect::<Result<_, _>>()?,
            imu: node.create_publisher(&t("imu"), sensor_qos())?,
            tap: node.create_publisher(&t("tap"), reliable(10))?,
            temperature: node.create_publisher(&t("temperature"), sensor_qos())?,
            sound: node.create_publisher(&t("sound"), reliable(10))?,
            remote: node.create_publisher(&t("remote"), reliable(10))?,
            buttons: node.create_publisher(&t("buttons"), reliable(10))?,
            button: BUTTON_NAMES
                .iter()
                .map(|n| node.create_publisher(&t(&format!("buttons/{n}")), reliable(10)))
                .collect::<Result<_, _>>()?,
            comm_rx: node.create_publisher(&t("comm/rx"), reliable(10))?,
            obstacle_stop: node.create_publisher(&t("obstacle_stop"), latched())?,
            description: node.create_publisher(&t("robot_description"), latched())?,
        })
    }

    /// Destroys every publisher (they leave the ROS graph now).
    pub(crate) fn destroy(self, node: &mut r2r::Node) {
        let Outputs {
            odom,
            joints,
            proximity,
            laser,
            ground,
            imu,
            tap,
            temperature,
            sound,
            remote,
            buttons,
            button,
            comm_rx,
            description,
            obstacle_stop,
        } = self;
        node.destroy_publisher(odom);
        node.destroy_publisher(joints);
        proximity
            .into_iter()
            .chain(ground)
            .for_each(|p| node.destroy_publisher(p));
        node.destroy_publisher(laser);
        node.destroy_publisher(imu);
        node.destroy_publisher(tap);
        node.destroy_publisher(temperature);
        node.destroy_publisher(sound);
        node.destroy_publisher(remote);
        node.destroy_publisher(buttons);
        button.into_iter().for_each(|p| node.destroy_publisher(p));
        node.destroy_publisher(comm_rx);
        node.destroy_publisher(description);
        node.destroy_publisher(obstacle_stop);
    }
}

/// The `cmd_vel` subscription of RT robot `robot` (node `id`), served on the spinner thread: the
/// latest message goes straight to the RT thread's set-point (a lock-free seqlock), one thread
/// hop less than through the NRT loop. The RT thread applies it at its next cycle, and its
/// watchdog stops the robot when messages stop coming. A refused message (NaN, infinite)
/// leaves the last good set-point in force; a run of them is logged once.
pub(crate) fn cmd_vel_task(
    mut sub: Box<dyn futures::Stream<Item = Twist> + Unpin + Send>,
    params: msgs::handoff::NrtLiveParams,
    robot: RobotId,
    id: NodeId,
    reporter: Reporter,
) -> SpinTask {
    let mut refusing = false;
    Box::new(move || {
        for t in drain(&mut sub) {
            let twist = Twist2 {
                linear: t.linear.x,
                angular: t.angular.z,
            };
            match params.nrt_set_cmd_vel(robot, twist) {
                Ok(()) => refusing = false,
                Err(e) if !refusing => {
                    refusing = true;
                    reporter.error(&format!(
                        "node {id}: cmd_vel refused: {e} (further refusals not logged until a \
                         valid one)"
                    ));
                }
                Err(_) => {}
            }
        }
    })
}

/// Subscriptions of one robot (`cmd_vel` is served on the spinner thread: [`cmd_vel_task`]).
pub(crate) struct Inputs {
    pub(crate) led: Sub<Led>,
    pub(crate) led_off: Sub<Empty>,
    pub(crate) body: Vec<(BodyLed, Sub<ColorRGBA>)>,
    pub(crate) gesture: Sub<LedGesture>,
    pub(crate) gesture_off: Sub<Empty>,
    pub(crate) presets: Vec<(Preset, Sub<Float32>)>,
    pub(crate) alive: Sub<Empty>,
    pub(crate) sound_play: Sub<Sound>,
    pub(crate) sound_system: Sub<SystemSound>,
    pub(crate) alarm: Sub<Bool>,
    pub(crate) sound_threshold: Sub<Float32>,
    pub(crate) comm_enable: Sub<Bool>,
    pub(crate) comm_tx: Sub<Int16>,
    pub(crate) shutdown: Sub<Empty>,
    pub(crate) is_ready: Srv<r2r::std_srvs::srv::Empty::Service>,
}

impl Inputs {
    /// Creates the subscriptions and the service of a robot whose topics are named by `t`.
    pub(crate) fn create(
        node: &mut r2r::Node,
        t: &dyn Fn(&str) -> String,
    ) -> Result<Inputs, r2r::Error> {
        Ok(Inputs {
            led: Box::new(node.subscribe(&t("led"), reliable(6))?),
            led_off: subscribe(node, &t("led/off"))?,
            body: [
                (BodyLed::Top, "top"),
                (BodyLed::BottomLeft, "bottom_left"),
                (BodyLed::BottomRight, "bottom_right"),
            ]
            .into_iter()
            .map(|(b, n)| Ok((b, subscribe(node, &t(&format!("led/body/{n}")))?)))
            .collect::<Result<_, r2r::Error>>()?,
            gesture: subscribe(node, &t("led/gesture"))?,
            gesture_off: subscribe(node, &t("led/gesture/off"))?,
            presets: [
                (Preset::Circle, "circle"),
                (Preset::Blink, "blink"),
                (Preset::Kit, "kit"),
            ]
            .into_iter()
            .map(|(p, n)| Ok((p, subscribe(node, &t(&format!("led/gesture/{n}")))?)))
            .collect::<Result<_, r2r::Error>>()?,
            alive: subscribe(node, &t("led/gesture/alive"))?,
            sound_play: subscribe(node, &t("sound/play"))?,
            sound_system: subscribe(node, &t("sound/play/system"))?,
            alarm: subscribe(node, &t("alarm"))?,
            sound_threshold: subscribe(node, &t("sound_threshold"))?,
            comm_enable: subscribe(node, &t("comm/enable"))?,
            comm_tx: subscribe(node, &t("comm/tx"))?,
            shutdown: subscribe(node, &t("shutdown"))?,
            is_ready: Box::new(node.create_service::<r2r::std_srvs::srv::Empty::Service>(
                &t("is_ready"),
                QosProfile::default(),
            )?),
        })
    }
}

fn subscribe<T: r2r::WrappedTypesupport + 'static>(
    node: &mut r2r::Node,
    topic: &str,
) -> Result<Sub<T>, r2r::Error> {
    Ok(Box::new(node.subscribe::<T>(topic, reliable(10))?))
}

pub(crate) fn topic(ns: &str, leaf: &str) -> String {
    if ns.is_empty() {
        leaf.to_owned()
    } else {
        format!("{ns}/{leaf}")
    }
}
