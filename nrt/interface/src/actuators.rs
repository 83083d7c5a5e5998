//! ROS-Thymio's actuator topics of one robot (ros-aseba-interface.md §3.4) as neutral messages, and what each asks
//! of the robot: script events (validated by `nrt_engine::thymio::actuators`, so a bad message is refused with its
//! reason) or the alarm, which sounds again every [`actuators::ALARM_PERIOD_S`] while it is on.

use handoff::NodeId;
use nrt_engine::thymio::actuators::{self, BodyLed, CommandError, Gesture, Preset, ScriptEvent};
use std::time::{Duration, Instant};

/// One message on an actuator topic (its content, whatever the transport).
#[derive(Debug, Clone, PartialEq)]
pub enum Actuator {
    /// `led` (thymio_msgs/Led).
    Led {
        /// LED group.
        id: u8,
        /// Levels.
        values: Vec<f32>,
    },
    /// `led/off`.
    LedsOff,
    /// `led/body/<which>` (ColorRGBA).
    Body(BodyLed, [f32; 3]),
    /// `led/gesture` (thymio_msgs/LedGesture).
    Gesture(Gesture),
    /// `led/gesture/off`.
    GestureOff,
    /// `led/gesture/<circle|blink|kit>` with its period \[s\].
    Preset(Preset, f32),
    /// `led/gesture/alive`.
    Alive,
    /// `sound/play`: frequency \[Hz\], duration \[s\].
    Tone(f32, f64),
    /// `sound/play/system`.
    SystemSound(i8),
    /// `alarm`: on or off.
    Alarm(bool),
    /// `sound_threshold`.
    SoundThreshold(f32),
    /// `comm/enable`.
    CommEnable(bool),
    /// `comm/tx`.
    CommTx(i16),
    /// `shutdown`.
    Shutdown,
}

/// What one actuator message asks of the robot.
#[derive(Debug, Clone, PartialEq)]
pub enum RobotCommand {
    /// Script events to send, in order (or why the message was refused).
    Events(Result<Vec<ScriptEvent>, CommandError>),
    /// `alarm`: start (`true`) or stop the repeated alarm sound.
    Alarm(bool),
    /// `emergency_stop` (a service, std_srvs/SetBool): hold every wheel (`true`) or release them
    /// (`nrt_engine::engine::Engine::set_emergency_stop`).
    EmergencyStop(bool),
}

/// The answer of a successful `emergency_stop` call (std_srvs/SetBool's `message`), the same on every front end.
pub fn emergency_stop_text(on: bool) -> &'static str {
    if on {
        "emergency stop: every wheel held until emergency_stop is called with false"
    } else {
        "emergency stop released"
    }
}

impl RobotCommand {
    fn one(e: Result<ScriptEvent, CommandError>) -> RobotCommand {
        RobotCommand::Events(e.map(|e| vec![e]))
    }
}

impl Actuator {
    /// What it asks of the robot.
    pub fn command(&self) -> RobotCommand {
        use RobotCommand as C;
        match self {
            Actuator::Led { id, values } => C::one(actuators::led(*id, values)),
            Actuator::LedsOff => C::Events(Ok(actuators::leds_off())),
            Actuator::Body(which, [r, g, b]) => C::one(actuators::body_led(*which, *r, *g, *b)),
            Actuator::Gesture(g) => C::one(actuators::gesture(g)),
            Actuator::GestureOff => C::one(Ok(actuators::gesture_off())),
            Actuator::Preset(p, period) => C::one(actuators::gesture_preset(*p, *period)),
            Actuator::Alive => C::one(actuators::gesture_preset(Preset::Alive, 3.0)),
            Actuator::Tone(frequency, duration) => {
                C::one(actuators::play_tone(*frequency, *duration))
            }
            Actuator::SystemSound(s) => C::one(actuators::play_system_sound(*s)),
            Actuator::Alarm(on) => C::Alarm(*on),
            Actuator::SoundThreshold(level) => C::one(actuators::sound_threshold(*level)),
            Actuator::CommEnable(on) => C::one(Ok(actuators::comm_enable(*on))),
            Actuator::CommTx(v) => C::one(actuators::comm_tx(*v)),
            Actuator::Shutdown => C::one(Ok(actuators::shutdown())),
        }
    }
}

/// The line reported when a message on `topic` of robot `node` is refused.
pub fn refused(node: NodeId, topic: &str, e: &CommandError) -> String {
    format!("node {node}: {topic}: command refused: {e}")
}

/// The line reported when the engine refuses a script event `event` of a message on `topic` of robot `node`.
pub fn not_sent(node: NodeId, topic: &str, event: &str, e: impl std::fmt::Display) -> String {
    format!("node {node}: {topic}: {event}: {e}")
}

/// The alarm of one robot: off, or when it sounds next.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Alarm(Option<Instant>);

impl Alarm {
    /// Turns it on (sounding at once, unless it is on already) or off.
    pub fn set(&mut self, on: bool, now: Instant) {
        match on {
            true => {
                self.0.get_or_insert(now);
            }
            false => self.0 = None,
        }
    }

    /// The alarm sound when it is due at `now` (it is then due again a period later).
    pub fn due(&mut self, now: Instant) -> Option<Result<ScriptEvent, CommandError>> {
        let due = self.0.filter(|t| *t <= now)?;
        self.0 = Some(due + Duration::from_secs_f64(actuators::ALARM_PERIOD_S));
        Some(actuators::play_system_sound(actuators::ALARM_SOUND))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_carry_the_validation_of_the_actuators() {
        assert_eq!(
            Actuator::Led {
                id: 9,
                values: vec![1.0]
            }
            .command(),
            RobotCommand::Events(Err(CommandError::LedGroup(9)))
        );
        let RobotCommand::Events(Ok(ev)) = Actuator::Body(BodyLed::Top, [1.0, 0.0, 0.5]).command()
        else {
            panic!("a valid colour");
        };
        assert_eq!(ev[0].name, "set_led_top");
        assert_eq!(ev[0].args, vec![32, 0, 16]);
        assert_eq!(Actuator::Alarm(true).command(), RobotCommand::Alarm(true));
        assert!(matches!(Actuator::LedsOff.command(), RobotCommand::Events(Ok(e)) if e.len() > 1));
        assert_eq!(
            refused(NodeId(1), "led", &CommandError::LedGroup(9)),
            format!(
                "node 1: led: command refused: {}",
                CommandError::LedGroup(9)
            )
        );
    }

    #[test]
    fn the_alarm_sounds_at_once_then_every_period_until_off() {
        let t0 = Instant::now();
        let period = Duration::from_secs_f64(actuators::ALARM_PERIOD_S);
        let mut a = Alarm::default();
        assert!(a.due(t0).is_none());
        a.set(true, t0);
        assert!(a.due(t0).is_some_and(|s| s.is_ok()));
        assert!(a.due(t0).is_none());
        // on again while on: the period stands
        a.set(true, t0 + period / 2);
        assert!(a.due(t0 + period / 2).is_none());
        assert!(a.due(t0 + period).is_some());
        a.set(false, t0 + period);
        assert!(a.due(t0 + 10 * period).is_none());
    }
}
