//! ROS-Thymio's actuator topics of one robot on ROS 1 (ros-aseba-interface.md §3.4): LEDs, gestures, sounds, the
//! alarm, the microphone threshold, proximity communication and `shutdown`, each subscribed in the robot's
//! namespace with ROS-Thymio's type and queue size.
//!
//! Each subscription runs as a task on the ROS 1 runtime: it turns a message into a [`RobotCommand`] at once
//! (validated by `nrt_engine::thymio::actuators`, so a bad message is refused with its reason before it reaches
//! the loop) and hands it to the NRT loop ([`Call::Robot`]), which sends the script events
//! ([`super::thymio::ThymioInterface::serve_command`]). `cmd_vel` is not among them: it goes to the RT set-point
//! from its own task ([`super::thymio`]).

use super::aseba::Call;
use super::graph::{Graph, Inbox, Task};
use super::ros1_msgs::{std_msgs, thymio_msgs};
use super::Ros1Error;
use msgs::handoff::NodeId;
use nrt_engine::thymio::actuators::{self, BodyLed, CommandError, Gesture, Preset, ScriptEvent};
use roslibrust::RosMessageType;

/// What one actuator message asks of the robot.
#[derive(Debug, Clone, PartialEq)]
pub enum RobotCommand {
    /// Script events to send, in order (or why the message was refused).
    Events(Result<Vec<ScriptEvent>, CommandError>),
    /// `alarm`: start (`true`) or stop the repeated alarm sound.
    Alarm(bool),
}

impl RobotCommand {
    fn one(e: Result<ScriptEvent, CommandError>) -> RobotCommand {
        RobotCommand::Events(e.map(|e| vec![e]))
    }
}

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
    let body = |which: BodyLed| {
        move |c: ColorRGBA| RobotCommand::one(actuators::body_led(which, c.r, c.g, c.b))
    };
    let preset =
        |p: Preset| move |m: Float32| RobotCommand::one(actuators::gesture_preset(p, m.data));
    let tasks = vec![
        f.to::<Led>("led", LED_QUEUE, |m| {
            RobotCommand::one(actuators::led(m.id, &m.values))
        })?,
        f.to::<Empty>("led/off", 1, |_| {
            RobotCommand::Events(Ok(actuators::leds_off()))
        })?,
        f.to::<ColorRGBA>("led/body/top", 1, body(BodyLed::Top))?,
        f.to::<ColorRGBA>("led/body/bottom_left", 1, body(BodyLed::BottomLeft))?,
        f.to::<ColorRGBA>("led/body/bottom_right", 1, body(BodyLed::BottomRight))?,
        f.to::<LedGesture>("led/gesture", 1, |g| {
            RobotCommand::one(actuators::gesture(&Gesture {
                gesture: g.gesture,
                wave: g.wave,
                leds: g.leds,
                period: g.period,
                length: g.length,
                mirror: g.mirror,
                mask: g.mask,
            }))
        })?,
        f.to::<Empty>("led/gesture/off", 1, |_| {
            RobotCommand::one(Ok(actuators::gesture_off()))
        })?,
        f.to::<Float32>("led/gesture/circle", 1, preset(Preset::Circle))?,
        f.to::<Float32>("led/gesture/blink", 1, preset(Preset::Blink))?,
        f.to::<Float32>("led/gesture/kit", 1, preset(Preset::Kit))?,
        f.to::<Empty>("led/gesture/alive", 1, |_| {
            RobotCommand::one(actuators::gesture_preset(Preset::Alive, 3.0))
        })?,
        f.to::<Sound>("sound/play", 1, |s| {
            let d = f64::from(s.duration.sec) + f64::from(s.duration.nsec) * 1e-9;
            RobotCommand::one(actuators::play_tone(s.frequency, d))
        })?,
        f.to::<SystemSound>("sound/play/system", 1, |s| {
            RobotCommand::one(actuators::play_system_sound(s.sound))
        })?,
        f.to::<Bool>("alarm", 1, |b| RobotCommand::Alarm(b.data))?,
        f.to::<Float32>("sound_threshold", 1, |m| {
            RobotCommand::one(actuators::sound_threshold(m.data))
        })?,
        f.to::<Bool>("comm/enable", 1, |b| {
            RobotCommand::one(Ok(actuators::comm_enable(b.data)))
        })?,
        f.to::<Int16>("comm/tx", 1, |m| {
            RobotCommand::one(actuators::comm_tx(m.data))
        })?,
        f.to::<Empty>(SHUTDOWN, 1, |_| {
            RobotCommand::one(Ok(actuators::shutdown()))
        })?,
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
    /// Subscribes `leaf` and hands `convert(message)` to the NRT loop for each message.
    fn to<T: RosMessageType>(
        &self,
        leaf: &'static str,
        queue: usize,
        convert: impl Fn(T) -> RobotCommand + Send + 'static,
    ) -> Result<Task, Ros1Error> {
        let node = self.node;
        self.g
            .forward(&(self.t)(leaf), queue, self.inbox.clone(), move |m: T| {
                Some(Call::Robot {
                    node,
                    topic: leaf,
                    command: convert(m),
                })
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_carry_the_validation_of_the_actuators() {
        assert_eq!(
            RobotCommand::one(actuators::led(9, &[1.0])),
            RobotCommand::Events(Err(CommandError::LedGroup(9)))
        );
        let RobotCommand::Events(Ok(ev)) =
            RobotCommand::one(actuators::body_led(BodyLed::Top, 1.0, 0.0, 0.5))
        else {
            panic!("a valid colour");
        };
        assert_eq!(ev[0].name, "set_led_top");
        assert_eq!(ev[0].args, vec![32, 0, 16]);
    }
}
