//! Actuator commands of the Thymio driver (ros-aseba-interface.md §3.4), validated and turned
//! into events of the robot script. Invalid input is an error (the bridge logs it once per
//! topic), never a silently wrong command.

/// An event of the robot script to send: its name and arguments (without the target id that
/// the multi-robot script prepends; the bridge adds it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptEvent {
    /// Event name in the script.
    pub name: &'static str,
    /// Arguments.
    pub args: Vec<i16>,
}

impl ScriptEvent {
    fn new(name: &'static str, args: Vec<i16>) -> Self {
        ScriptEvent { name, args }
    }
}

/// Why a command was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CommandError {
    /// Unknown LED group.
    #[error("unknown LED group {0} (0 circle, 1 proximity, 2 buttons, 3 ground, 4 temperature, 5 microphone, 6 remote)")]
    LedGroup(u8),
    /// Too few values for the LED group.
    #[error("LED group {group} has {needed} LEDs, got {got} values")]
    LedCount {
        /// Group id.
        group: u8,
        /// LEDs in the group.
        needed: usize,
        /// Values given.
        got: usize,
    },
    /// A value that is not a finite number.
    #[error("{field} is not a finite number ({value})")]
    NotFinite {
        /// Which input.
        field: &'static str,
        /// Its value.
        value: f64,
    },
    /// A value outside its documented range.
    #[error("{field} = {value} is outside [{min}, {max}]")]
    OutOfRange {
        /// Which input.
        field: &'static str,
        /// Its value.
        value: f64,
        /// Lowest accepted.
        min: f64,
        /// Highest accepted.
        max: f64,
    },
    /// Unknown gesture parameters.
    #[error("invalid gesture: {0}")]
    Gesture(&'static str),
}

/// Brightness levels of the Thymio LEDs (the robot profile's).
pub use msgs::thymio::LED_MAX;
use msgs::thymio::{BUTTON_LEDS, CIRCLE_LEDS, GROUND_LEDS, PROXIMITY_LEDS, TEMPERATURE_LEDS};

/// LEDs per group of `thymio_msgs/Led` (CIRCLE, PROXIMITY, BUTTONS, GROUND, TEMPERATURE,
/// MICROPHONE, REMOTE).
pub const LED_GROUP_SIZES: [usize; 7] = [
    CIRCLE_LEDS,
    PROXIMITY_LEDS,
    BUTTON_LEDS,
    GROUND_LEDS,
    TEMPERATURE_LEDS,
    1,
    1,
];

fn finite(field: &'static str, v: f64) -> Result<f64, CommandError> {
    if v.is_finite() {
        Ok(v)
    } else {
        Err(CommandError::NotFinite { field, value: v })
    }
}

fn in_range(field: &'static str, v: f64, min: f64, max: f64) -> Result<f64, CommandError> {
    let v = finite(field, v)?;
    if v < min || v > max {
        return Err(CommandError::OutOfRange {
            field,
            value: v,
            min,
            max,
        });
    }
    Ok(v)
}

/// An intensity in [0, 1] → 0..32.
pub fn led_level(field: &'static str, v: f64) -> Result<i16, CommandError> {
    Ok((in_range(field, v, 0.0, 1.0)? * f64::from(LED_MAX)).round() as i16)
}

/// `thymio_msgs/Led`: `set_led [group, v0..v7]` (unused slots 0).
pub fn led(group: u8, values: &[f32]) -> Result<ScriptEvent, CommandError> {
    let needed = *LED_GROUP_SIZES
        .get(usize::from(group))
        .ok_or(CommandError::LedGroup(group))?;
    if values.len() < needed {
        return Err(CommandError::LedCount {
            group,
            needed,
            got: values.len(),
        });
    }
    let mut args = vec![0i16; 9];
    args[0] = i16::from(group);
    for (i, v) in values.iter().take(needed).enumerate() {
        args[1 + i] = led_level("led value", f64::from(*v))?;
    }
    Ok(ScriptEvent::new("set_led", args))
}

/// `led/off`: every group off, one event per group.
pub fn leds_off() -> Vec<ScriptEvent> {
    (0..LED_GROUP_SIZES.len() as i16)
        .map(|g| ScriptEvent::new("set_led", [g].into_iter().chain([0; 8]).collect()))
        .collect()
}

/// The body RGB LEDs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyLed {
    /// `led/body/top`.
    Top,
    /// `led/body/bottom_left`.
    BottomLeft,
    /// `led/body/bottom_right`.
    BottomRight,
}

/// `std_msgs/ColorRGBA` on `led/body/*` (alpha ignored).
pub fn body_led(which: BodyLed, r: f32, g: f32, b: f32) -> Result<ScriptEvent, CommandError> {
    let name = match which {
        BodyLed::Top => "set_led_top",
        BodyLed::BottomLeft => "set_led_bottom_left",
        BodyLed::BottomRight => "set_led_bottom_right",
    };
    let args = vec![
        led_level("r", f64::from(r))?,
        led_level("g", f64::from(g))?,
        led_level("b", f64::from(b))?,
    ];
    Ok(ScriptEvent::new(name, args))
}

/// `thymio_msgs/LedGesture`.
#[derive(Debug, Clone, PartialEq)]
pub struct Gesture {
    /// 0 OFF, 1 WAVE.
    pub gesture: u8,
    /// 0 RECT, 1 HARMONIC.
    pub wave: u8,
    /// 0 CIRCLE, 1 PROXIMITY, 2 BUTTONS.
    pub leds: u8,
    /// Period [s] (sign ignored).
    pub period: f32,
    /// Wave length in LEDs.
    pub length: u16,
    /// Mirror (standing wave) index, 0 = none.
    pub mirror: u8,
    /// LEDs taking part (missing = all).
    pub mask: Vec<bool>,
}

/// `led/gesture`: `set_led_gesture [gesture, leds, wave, period_ms, length, mirror, mask0..7]`.
pub fn gesture(g: &Gesture) -> Result<ScriptEvent, CommandError> {
    if g.gesture > 1 {
        return Err(CommandError::Gesture("gesture must be OFF (0) or WAVE (1)"));
    }
    if g.wave > 1 {
        return Err(CommandError::Gesture(
            "wave must be RECT (0) or HARMONIC (1)",
        ));
    }
    if g.leds > 2 {
        return Err(CommandError::Gesture(
            "leds must be CIRCLE (0), PROXIMITY (1) or BUTTONS (2)",
        ));
    }
    let period = finite("period", f64::from(g.period))?;
    let period_ms = (period * 1000.0).clamp(-32767.0, 32767.0) as i16;
    let mut args = vec![
        i16::from(g.gesture),
        i16::from(g.leds),
        i16::from(g.wave),
        period_ms,
        g.length.min(i16::MAX as u16) as i16,
        i16::from(g.mirror),
    ];
    args.extend((0..8).map(|i| i16::from(*g.mask.get(i).unwrap_or(&true))));
    Ok(ScriptEvent::new("set_led_gesture", args))
}

/// `led/gesture/off`.
pub fn gesture_off() -> ScriptEvent {
    gesture(&Gesture {
        gesture: 0,
        wave: 0,
        leds: 0,
        period: 1.0,
        length: 8,
        mirror: 0,
        mask: vec![],
    })
    .expect("valid gesture")
}

/// The preset gestures of `led/gesture/{circle,blink,kit,alive}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Preset {
    /// Rotating harmonic wave on the circle.
    Circle,
    /// The whole circle blinking.
    Blink,
    /// "Knight rider" on the front proximity LEDs.
    Kit,
    /// Slow rectangular wave on the circle.
    Alive,
}

/// A preset gesture with the given period [s] (`Alive` uses 3 s).
pub fn gesture_preset(p: Preset, period: f32) -> Result<ScriptEvent, CommandError> {
    let g = match p {
        Preset::Circle => Gesture {
            gesture: 1,
            wave: 1,
            leds: 0,
            period,
            length: 8,
            mirror: 0,
            mask: vec![],
        },
        Preset::Blink => Gesture {
            gesture: 1,
            wave: 1,
            leds: 0,
            period,
            length: 1,
            mirror: 0,
            mask: vec![],
        },
        Preset::Kit => Gesture {
            gesture: 1,
            wave: 1,
            leds: 1,
            period,
            length: 12,
            mirror: 11,
            mask: vec![true, true, true, true, true, true, false, false],
        },
        Preset::Alive => Gesture {
            gesture: 1,
            wave: 0,
            leds: 0,
            period: 3.0,
            length: 24,
            mirror: 0,
            mask: vec![],
        },
    };
    gesture(&g)
}

/// `sound/play`: a tone of `frequency` Hz for `duration` s → `play_sound [Hz, 1/60 s]`
/// (duration 0 = until stopped, as the firmware's `sound.freq`).
pub fn play_tone(frequency: f32, duration: f64) -> Result<ScriptEvent, CommandError> {
    let f = in_range("frequency", f64::from(frequency), 1.0, 20000.0)?;
    let d = in_range("duration", duration, 0.0, 32767.0 / 60.0)?;
    let ticks = if d == 0.0 {
        0
    } else {
        ((d * 60.0).round() as i16).max(1)
    };
    Ok(ScriptEvent::new(
        "play_sound",
        vec![f.round() as i16, ticks],
    ))
}

/// `sound/play/system`: −1 stop, 0..7 the firmware's system sounds.
pub fn play_system_sound(sound: i8) -> Result<ScriptEvent, CommandError> {
    in_range("sound", f64::from(sound), -1.0, 7.0)?;
    Ok(ScriptEvent::new(
        "play_system_sound",
        vec![i16::from(sound)],
    ))
}

/// `sound_threshold`: a level in [0, 1] → `mic.threshold` 0..255 (0 disables the event).
pub fn sound_threshold(level: f32) -> Result<ScriptEvent, CommandError> {
    let v = in_range("sound threshold", f64::from(level), 0.0, 1.0)?;
    Ok(ScriptEvent::new(
        "set_sound_threshold",
        vec![(v * 255.0).round() as i16],
    ))
}

/// `comm/enable`.
pub fn comm_enable(on: bool) -> ScriptEvent {
    ScriptEvent::new("enable_comm", vec![i16::from(on)])
}

/// `comm/tx`: the 11-bit payload (the firmware sends 11 bits; keep to 0..1023 to be safe).
pub fn comm_tx(value: i16) -> Result<ScriptEvent, CommandError> {
    in_range("comm payload", f64::from(value), 0.0, 1023.0)?;
    Ok(ScriptEvent::new("set_comm_payload", vec![value]))
}

/// `shutdown`: stop and power off (the script's handler stops motors and timers first).
pub fn shutdown() -> ScriptEvent {
    ScriptEvent::new("shutdown", vec![])
}

/// The system sound the `alarm` plays (ARROW_BUTTON), every [`ALARM_PERIOD_S`] s while on.
pub const ALARM_SOUND: i8 = 2;
/// Repetition period of the alarm [s].
pub const ALARM_PERIOD_S: f64 = 3.0;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn led_groups_are_validated() {
        let e = led(0, &[1.0, 0.5, 0.0, 0.0, 0.0, 0.0, 0.0, 0.25]).unwrap();
        assert_eq!(e.args, vec![0, 32, 16, 0, 0, 0, 0, 0, 8]);
        assert_eq!(
            led(5, &[1.0]).unwrap().args,
            vec![5, 32, 0, 0, 0, 0, 0, 0, 0]
        );
        assert_eq!(led(7, &[1.0]), Err(CommandError::LedGroup(7)));
        assert_eq!(
            led(2, &[1.0, 1.0]),
            Err(CommandError::LedCount {
                group: 2,
                needed: 4,
                got: 2
            })
        );
        assert!(matches!(
            led(3, &[f32::NAN, 0.0]),
            Err(CommandError::NotFinite { .. })
        ));
        assert!(matches!(
            led(3, &[1.5, 0.0]),
            Err(CommandError::OutOfRange { .. })
        ));
        assert_eq!(leds_off().len(), 7);
        // the 8th proximity LED is its own value (defect §6.2 #7 was in the script)
        let e = led(1, &[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0]).unwrap();
        assert_eq!(e.args[8], 32);
    }

    #[test]
    fn body_leds_and_sounds() {
        let e = body_led(BodyLed::BottomRight, 1.0, 0.0, 0.5).unwrap();
        assert_eq!((e.name, e.args), ("set_led_bottom_right", vec![32, 0, 16]));
        assert!(body_led(BodyLed::Top, f32::INFINITY, 0.0, 0.0).is_err());
        assert_eq!(play_tone(440.0, 0.5).unwrap().args, vec![440, 30]);
        assert_eq!(play_tone(440.0, 0.001).unwrap().args, vec![440, 1]);
        assert!(play_tone(-5.0, 1.0).is_err());
        assert_eq!(play_system_sound(-1).unwrap().args, vec![-1]);
        assert!(play_system_sound(9).is_err());
        assert_eq!(sound_threshold(0.5).unwrap().args, vec![128]);
        assert!(sound_threshold(2.0).is_err());
        assert!(comm_tx(2000).is_err());
        assert_eq!(comm_tx(42).unwrap().args, vec![42]);
    }

    #[test]
    fn gestures() {
        let e = gesture_preset(Preset::Kit, 1.5).unwrap();
        assert_eq!(e.args, vec![1, 1, 1, 1500, 12, 11, 1, 1, 1, 1, 1, 1, 0, 0]);
        assert_eq!(gesture_off().args[0], 0);
        assert_eq!(gesture_preset(Preset::Alive, 0.0).unwrap().args[3], 3000);
        let bad = Gesture {
            gesture: 3,
            wave: 0,
            leds: 0,
            period: 1.0,
            length: 1,
            mirror: 0,
            mask: vec![],
        };
        assert!(gesture(&bad).is_err());
        let huge = Gesture {
            gesture: 1,
            wave: 0,
            leds: 0,
            period: 1e9,
            length: 1,
            mirror: 0,
            mask: vec![],
        };
        assert_eq!(gesture(&huge).unwrap().args[3], 32767);
    }
}
