//! ROS-Thymio's actuator topics of one robot on ROS 1 (ros-aseba-interface.md §3.4): LEDs, gestures, sounds, the
//! alarm, the microphone threshold, proximity communication and `shutdown`, each subscribed in the robot's
//! namespace with ROS-Thymio's type and queue size.
//!
//! Each subscription runs as a task on the ROS 1 runtime: it turns a message into the layer's
//! [`Actuator`] and what it asks of the robot at once (validated, so a bad message is refused with its reason
//! before it reaches the loop) and hands it to the NRT loop ([`Call::Robot`]), which sends the script events
//! ([`super::thymio::ThymioInterface::serve_command`]). `cmd_vel` is not among them: it goes to the RT set-point
//! from its own task ([`super::thymio`]).

use super::aseba::{Call, Inbox};
use super::Ros1Error;
use handoff::NodeId;
use nrt_engine::thymio::actuators::{BodyLed, Gesture, Preset};
use nrt_interface::actuators::Actuator;
use nrt_ros1_client::graph::{Graph, Task};
use nrt_ros1_client::ros1_msgs::{std_msgs, thymio_msgs};
use roslibrust::RosMessageType;

/// The actuator topics (leaves under the robot's namespace), in the order [`subscribe`] makes them.
pub const INPUT_NAMES: [&str; 17] = [
    "led",
    "led/off",
    "led/body/top",
    "led/body/bottom_left",
    "led/body/bottom_right",
    "led/gesture",
    "led/gesture/off",
    "led/gesture/circle",
    "led/gesture/blink",
    "led/gesture/kit",
    "led/gesture/alive",
    "sound/play",
    "sound/play/system",
    "alarm",
    "sound_threshold",
    "comm/enable",
    "comm/tx",
];
/// `shutdown` (Empty), subscribed last.
pub const SHUTDOWN: &str = "shutdown";

/// Queue of `led` (ROS-Thymio: 6); every other actuator topic has 1.
const LED_QUEUE: usize = 6;

/// The subscription tasks of one robot's actuator topics (dropping it unsubscribes them).
pub struct Inputs {
    _tasks: Vec<Task>,
}

/// Subscribes robot `node`'s actuator topics (`t` makes a leaf's global name); commands go to `inbox` (on the
/// registrar thread).
pub fn subscribe(
    g: &Graph,
    t: &dyn Fn(&str) -> String,
    node: NodeId,
    inbox: &Inbox,
) -> Result<Inputs, Ros1Error> {
    use std_msgs::{Bool, ColorRGBA, Empty, Float32, Int16};
    use thymio_msgs::{Led, LedGesture, Sound, SystemSound};
    let f = Forward { g, t, node, inbox };
    let body = |which: BodyLed| move |c: ColorRGBA| Actuator::Body(which, [c.r, c.g, c.b]);
    let preset = |p: Preset| move |m: Float32| Actuator::Preset(p, m.data);
    let tasks = vec![
        f.to::<Led>("led", LED_QUEUE, |m| Actuator::Led {
            id: m.id,
            values: m.values,
        })?,
        f.to::<Empty>("led/off", 1, |_| Actuator::LedsOff)?,
        f.to::<ColorRGBA>("led/body/top", 1, body(BodyLed::Top))?,
        f.to::<ColorRGBA>("led/body/bottom_left", 1, body(BodyLed::BottomLeft))?,
        f.to::<ColorRGBA>("led/body/bottom_right", 1, body(BodyLed::BottomRight))?,
        f.to::<LedGesture>("led/gesture", 1, |g| {
            Actuator::Gesture(Gesture {
                gesture: g.gesture,
                wave: g.wave,
                leds: g.leds,
                period: g.period,
                length: g.length,
                mirror: g.mirror,
                mask: g.mask,
            })
        })?,
        f.to::<Empty>("led/gesture/off", 1, |_| Actuator::GestureOff)?,
        f.to::<Float32>("led/gesture/circle", 1, preset(Preset::Circle))?,
        f.to::<Float32>("led/gesture/blink", 1, preset(Preset::Blink))?,
        f.to::<Float32>("led/gesture/kit", 1, preset(Preset::Kit))?,
        f.to::<Empty>("led/gesture/alive", 1, |_| Actuator::Alive)?,
        f.to::<Sound>("sound/play", 1, |s| {
            let d = f64::from(s.duration.sec) + f64::from(s.duration.nsec) * 1e-9;
            Actuator::Tone(s.frequency, d)
        })?,
        f.to::<SystemSound>("sound/play/system", 1, |s| Actuator::SystemSound(s.sound))?,
        f.to::<Bool>("alarm", 1, |b| Actuator::Alarm(b.data))?,
        f.to::<Float32>("sound_threshold", 1, |m| Actuator::SoundThreshold(m.data))?,
        f.to::<Bool>("comm/enable", 1, |b| Actuator::CommEnable(b.data))?,
        f.to::<Int16>("comm/tx", 1, |m| Actuator::CommTx(m.data))?,
        f.to::<Empty>(SHUTDOWN, 1, |_| Actuator::Shutdown)?,
    ];
    Ok(Inputs { _tasks: tasks })
}

/// Makes the subscription tasks of one robot.
struct Forward<'a> {
    g: &'a Graph,
    t: &'a dyn Fn(&str) -> String,
    node: NodeId,
    inbox: &'a Inbox,
}

impl Forward<'_> {
    /// Subscribes `leaf` and hands what `convert(message)` asks of the robot (validated now) to the NRT loop for
    /// each message.
    fn to<T: RosMessageType>(
        &self,
        leaf: &'static str,
        queue: usize,
        convert: impl Fn(T) -> Actuator + Send + 'static,
    ) -> Result<Task, Ros1Error> {
        let node = self.node;
        Ok(self
            .g
            .forward(&(self.t)(leaf), queue, self.inbox.clone(), move |m: T| {
                Some(Call::Robot {
                    node,
                    topic: leaf,
                    command: convert(m).command(),
                })
            })?)
    }
}
