//! The ROS endpoints of one Thymio robot (ROS-Thymio's names and types): its publishers, its subscriptions and
//! `is_ready` service, the `cmd_vel` task served on the hot node's thread, and their QoS.
//!
//! QoS as ROS-Thymio (its rclpy publishers and subscriptions take a depth only): reliable, volatile, depth 1 on
//! every topic (`led`: depth 6), so that a subscriber with ROS 2's default QoS receives everything; transient-local
//! where the topic latches (`robot_description`, `obstacle_stop`, `cliff_stop`, `emergency_stop`). `sensor_data_qos` gives the sensor topics ROS 2's
//! sensor-data profile (best effort, depth 5) instead.

use super::report::Reporter;
use super::sensor_publishers::{self, SensorPublishers};
use super::spinner::SpinTask;
use super::{drain, Srv, Sub};
use handoff::{monotonic_ns, Twist2};
use nrt_engine::thymio::actuators::{BodyLed, Gesture, Preset};
use nrt_interface::actuators::Actuator;
use nrt_interface::cmd_vel::{CmdVelGate, Verdict};
use nrt_interface::geometry;
use nrt_interface::hop_times::HopHistogram;
use nrt_interface::odometry::CMD_VEL_OUT;
use r2r::builtin_interfaces::msg::Time;
use r2r::geometry_msgs::msg::{Twist, TwistStamped};
use r2r::std_msgs::msg::{Bool, ColorRGBA, Empty, Float32, Int16, String as RosString};
use r2r::thymio_msgs::msg::{Led, LedGesture, Sound, SystemSound};
use r2r::{Publisher, QosProfile};
use std::time::Duration;

pub(crate) fn latched() -> QosProfile {
    QosProfile::default()
        .keep_last(1)
        .reliable()
        .transient_local()
}

pub(crate) use crate::qos::{reliable, DEPTH};

/// The QoS of the plain `cmd_vel` subscription: best effort, volatile, the last command only. A `Twist` carries no
/// stamp, so its age is unknown to the driver: a reliable reader would make a publisher's reliable writer resend,
/// when a lost link comes back, the commands it kept during the outage, and the robot would obey them up to
/// `cmd_vel_timeout` after they were meant. A best-effort reader matches every writer (reliable or not) and is
/// never repaired: a command lost or late is gone, the next one of the stream (or the watchdog) takes over.
pub(crate) fn latest_command() -> QosProfile {
    QosProfile::default().keep_last(1).best_effort().volatile()
}

/// Publishers of one robot.
pub(crate) struct Outputs {
    pub(crate) odom: Publisher<r2r::nav_msgs::msg::Odometry>,
    pub(crate) joints: Publisher<r2r::sensor_msgs::msg::JointState>,
    /// The sensor topics: one per entry of the layer's catalogue.
    pub(crate) sensors: SensorPublishers,
    pub(crate) description: Publisher<RosString>,
    /// Whether the RT obstacle-stop reflex holds the robot (latched).
    pub(crate) obstacle_stop: Publisher<Bool>,
    /// Whether the RT cliff reflex holds the robot (latched).
    pub(crate) cliff_stop: Publisher<Bool>,
    /// Whether the emergency stop holds the robot's wheels (latched).
    pub(crate) emergency_stop: Publisher<Bool>,
    /// Whether the RT pick-up reflex holds the robot (latched).
    pub(crate) picked_up: Publisher<Bool>,
    /// `battery_state` (`nrt_interface::battery`), every `BATTERY_PERIOD`.
    pub(crate) battery: Publisher<r2r::sensor_msgs::msg::BatteryState>,
    /// The limited twist (`~/cmd_vel_out`), published by the odometry publisher thread while the robot's
    /// `publish_limited_velocity` is true.
    pub(crate) cmd_vel_out: Publisher<TwistStamped>,
}

impl Outputs {
    /// Creates the publishers of a robot whose topics are named by `t` (leaf → full name); `sensor_data`: the
    /// sensor topics get ROS 2's sensor-data profile.
    pub(crate) fn create(
        node: &mut r2r::Node,
        t: &dyn Fn(&str) -> String,
        sensor_data: bool,
    ) -> Result<Outputs, r2r::Error> {
        Ok(Outputs {
            odom: node.create_publisher(&t("odom"), reliable(DEPTH))?,
            joints: node.create_publisher(&t("joint_states"), reliable(DEPTH))?,
            sensors: sensor_publishers::create(node, t, sensor_data)?,
            obstacle_stop: node.create_publisher(&t("obstacle_stop"), latched())?,
            cliff_stop: node.create_publisher(&t("cliff_stop"), latched())?,
            emergency_stop: node.create_publisher(&t("emergency_stop"), latched())?,
            battery: node.create_publisher(&t("battery_state"), reliable(DEPTH))?,
            picked_up: node.create_publisher(&t("picked_up"), latched())?,
            description: node.create_publisher(&t("robot_description"), latched())?,
            cmd_vel_out: node.create_publisher(&t(CMD_VEL_OUT), reliable(DEPTH))?,
        })
    }

    /// Destroys every publisher (they leave the ROS graph now).
    pub(crate) fn destroy(self, node: &mut r2r::Node) {
        let Outputs {
            odom,
            joints,
            sensors,
            description,
            obstacle_stop,
            cliff_stop,
            emergency_stop,
            battery,
            picked_up,
            cmd_vel_out,
        } = self;
        node.destroy_publisher(odom);
        node.destroy_publisher(joints);
        sensor_publishers::destroy(sensors, node);
        node.destroy_publisher(description);
        node.destroy_publisher(obstacle_stop);
        node.destroy_publisher(cliff_stop);
        node.destroy_publisher(emergency_stop);
        node.destroy_publisher(battery);
        node.destroy_publisher(picked_up);
        node.destroy_publisher(cmd_vel_out);
    }
}

/// One velocity command as received: the twist, and the stamp of a `TwistStamped`.
pub(crate) type Command = (Twist2, Option<Time>);

/// A `Twist` command.
pub(crate) fn plain_command(t: &Twist) -> Command {
    (
        Twist2 {
            linear: t.linear.x,
            angular: t.angular.z,
        },
        None,
    )
}

/// A `TwistStamped` command.
pub(crate) fn stamped_command(t: &TwistStamped) -> Command {
    (plain_command(&t.twist).0, Some(t.header.stamp.clone()))
}

/// A ROS stamp as time since the epoch (`None` before 1970: the layer's [`geometry::since_epoch`]).
pub(crate) fn since_epoch(stamp: &Time) -> Option<Duration> {
    geometry::since_epoch(i64::from(stamp.sec), stamp.nanosec)
}

/// Where the `cmd_vel` task of one robot sends its commands (the layer's gate), and what it times.
pub(crate) struct CmdVelTarget {
    /// The robot's set-point, with the latches of its reports and its stale count.
    pub(crate) gate: CmdVelGate,
    /// `/rosout`.
    pub(crate) reporter: Reporter,
    /// Times the hop message taken → set-point stored.
    pub(crate) timer: HopHistogram,
}

/// The `cmd_vel` subscription (a `Twist` or, with `cmd_vel_stamped`, a `TwistStamped` one: `read` gives its
/// command) of one robot, served on the hot node's thread ([`super::hot`]) right after the wait that took the
/// messages: each goes through the layer's gate ([`CmdVelGate`]: stale stamped commands ignored and counted,
/// refused ones leaving the last good set-point in force, each run reported once) straight to the RT thread's
/// set-point (a latest-value cell), stamped with the time the wait returned (the start of the cmd_vel → wire hop
/// the RT thread times), which rings the RT thread. Its watchdog stops the robot when messages stop coming.
pub(crate) fn cmd_vel_task<T: 'static>(
    mut sub: Box<dyn futures::Stream<Item = T> + Unpin + Send>,
    read: fn(&T) -> Command,
    target: CmdVelTarget,
) -> SpinTask {
    let CmdVelTarget {
        mut gate,
        reporter,
        timer,
    } = target;
    Box::new(move || {
        // The messages pending now were taken from rcl by the wait that just returned.
        let taken = monotonic_ns();
        for m in drain(&mut sub) {
            let (twist, stamp) = read(&m);
            let stamp = stamp.map(|s| since_epoch(&s));
            match gate.nrt_take(twist, stamp, taken, geometry::now()) {
                Verdict::Stored => timer.record(monotonic_ns().saturating_sub(taken)),
                Verdict::Dropped(Some((severity, text))) => reporter.report(severity, &text),
                Verdict::Dropped(None) => {}
            }
        }
    })
}

/// Subscriptions of one robot (`cmd_vel` is served on the hot node's thread: [`cmd_vel_task`]).
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
    /// `emergency_stop` (std_srvs/SetBool): true holds every wheel, false releases.
    pub(crate) emergency_stop: Srv<r2r::std_srvs::srv::SetBool::Service>,
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
            emergency_stop: Box::new(node.create_service::<r2r::std_srvs::srv::SetBool::Service>(
                &t("emergency_stop"),
                QosProfile::default(),
            )?),
        })
    }
}

/// What a robot's actuator topics received since the last call, in the order of the topics
/// (ROS-Thymio's), each with its topic's leaf.
pub(crate) fn actuator_messages(i: &mut Inputs) -> Vec<(&'static str, Actuator)> {
    let mut out = Vec::new();
    for m in drain(&mut i.led) {
        out.push((
            "led",
            Actuator::Led {
                id: m.id,
                values: m.values,
            },
        ));
    }
    out.extend(drain(&mut i.led_off).map(|_| ("led/off", Actuator::LedsOff)));
    for (which, s) in i.body.iter_mut() {
        for c in drain(s) {
            out.push((body_topic(*which), Actuator::Body(*which, [c.r, c.g, c.b])));
        }
    }
    for g in drain(&mut i.gesture) {
        let gesture = Gesture {
            gesture: g.gesture,
            wave: g.wave,
            leds: g.leds,
            period: g.period,
            length: g.length,
            mirror: g.mirror,
            mask: g.mask,
        };
        out.push(("led/gesture", Actuator::Gesture(gesture)));
    }
    out.extend(drain(&mut i.gesture_off).map(|_| ("led/gesture/off", Actuator::GestureOff)));
    for (p, s) in i.presets.iter_mut() {
        for period in drain(s) {
            out.push((preset_topic(*p), Actuator::Preset(*p, period.data)));
        }
    }
    out.extend(drain(&mut i.alive).map(|_| ("led/gesture/alive", Actuator::Alive)));
    for s in drain(&mut i.sound_play) {
        let d = f64::from(s.duration.sec) + f64::from(s.duration.nanosec) * 1e-9;
        out.push(("sound/play", Actuator::Tone(s.frequency, d)));
    }
    for s in drain(&mut i.sound_system) {
        out.push(("sound/play/system", Actuator::SystemSound(s.sound)));
    }
    out.extend(drain(&mut i.alarm).map(|a| ("alarm", Actuator::Alarm(a.data))));
    for t in drain(&mut i.sound_threshold) {
        out.push(("sound_threshold", Actuator::SoundThreshold(t.data)));
    }
    out.extend(drain(&mut i.comm_enable).map(|c| ("comm/enable", Actuator::CommEnable(c.data))));
    out.extend(drain(&mut i.comm_tx).map(|c| ("comm/tx", Actuator::CommTx(c.data))));
    out.extend(drain(&mut i.shutdown).map(|_| ("shutdown", Actuator::Shutdown)));
    out
}

fn body_topic(which: BodyLed) -> &'static str {
    match which {
        BodyLed::Top => "led/body/top",
        BodyLed::BottomLeft => "led/body/bottom_left",
        BodyLed::BottomRight => "led/body/bottom_right",
    }
}

fn preset_topic(p: Preset) -> &'static str {
    match p {
        Preset::Circle => "led/gesture/circle",
        Preset::Blink => "led/gesture/blink",
        Preset::Kit => "led/gesture/kit",
        Preset::Alive => "led/gesture/alive",
    }
}

fn subscribe<T: r2r::WrappedTypesupport + 'static>(
    node: &mut r2r::Node,
    topic: &str,
) -> Result<Sub<T>, r2r::Error> {
    Ok(Box::new(node.subscribe::<T>(topic, reliable(DEPTH))?))
}

pub(crate) fn topic(ns: &str, leaf: &str) -> String {
    if ns.is_empty() {
        leaf.to_owned()
    } else {
        format!("{ns}/{leaf}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn time(sec: i32, nanosec: u32) -> Time {
        Time { sec, nanosec }
    }

    #[test]
    fn stamps_since_the_epoch() {
        assert_eq!(since_epoch(&time(7, 8)), Some(Duration::new(7, 8)));
        // before 1970: none (as old as can be for the gate)
        assert_eq!(since_epoch(&time(-1, 0)), None);
    }

    #[test]
    fn stamped_and_plain_commands_read_the_same_twist() {
        let mut t = Twist::default();
        t.linear.x = 0.1;
        t.angular.z = -0.5;
        let plain = plain_command(&t);
        assert_eq!(plain.0.linear, 0.1);
        assert_eq!(plain.0.angular, -0.5);
        assert!(plain.1.is_none());
        let mut s = TwistStamped {
            twist: t,
            ..Default::default()
        };
        s.header.stamp = time(7, 8);
        let stamped = stamped_command(&s);
        assert_eq!((stamped.0.linear, stamped.0.angular), (0.1, -0.5));
        assert_eq!(stamped.1, Some(time(7, 8)));
    }
}
