//! The events the robot script emits (config/aseba/thymio_ros.aesl.in; ros-aseba-interface.md
//! §3.7), decoded by name with their sizes checked.

use super::BUTTON_NAMES;
use msgs::thymio::{BUTTON_COUNT, GROUND_COUNT, PROXIMITY_COUNT};

/// A decoded robot event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RobotEvent {
    /// Integrated wheel speeds (unit·s, wrapping) and the on-robot motor tick count (100 Hz).
    Odometry {
        /// Left wheel.
        left: i16,
        /// Right wheel.
        right: i16,
        /// Motor events since start (wrapping).
        ticks: i16,
    },
    /// Max of the buttons over the last period, `[backward, left, center, forward, right]`.
    Buttons([i16; BUTTON_COUNT]),
    /// One button changed.
    Button {
        /// Index in [`BUTTON_NAMES`].
        index: usize,
        /// Pressed.
        pressed: bool,
    },
    /// `prox.horizontal`.
    Proximity([i16; PROXIMITY_COUNT]),
    /// `prox.ground.delta`.
    Ground([i16; GROUND_COUNT]),
    /// `prox.ground.reflected`.
    GroundReflected([i16; GROUND_COUNT]),
    /// `prox.ground.ambiant`.
    GroundAmbient([i16; GROUND_COUNT]),
    /// Mean of `acc` over the last period.
    Accelerometer([i16; 3]),
    /// A tap.
    Tap,
    /// Tenths of °C.
    Temperature(i16),
    /// `mic.intensity` over the threshold.
    Sound(i16),
    /// An RC5 code.
    Remote {
        /// Address.
        address: i16,
        /// Command.
        command: i16,
    },
    /// IR communication.
    Comm {
        /// Value received.
        value: i16,
        /// Per-sensor payloads.
        payloads: [i16; PROXIMITY_COUNT],
        /// Per-sensor intensities.
        intensities: [i16; PROXIMITY_COUNT],
    },
}

/// Why an event could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EventError {
    /// Not an event the driver handles.
    #[error("\"{0}\" is not a robot event of the driver script")]
    Unknown(String),
    /// Wrong number of arguments.
    #[error("event \"{name}\" has {got} arguments, expected {expected}")]
    Size {
        /// Event name.
        name: String,
        /// Expected size.
        expected: usize,
        /// Received size.
        got: usize,
    },
}

fn take<const N: usize>(name: &str, args: &[i16]) -> Result<[i16; N], EventError> {
    args.try_into().map_err(|_| EventError::Size {
        name: name.to_owned(),
        expected: N,
        got: args.len(),
    })
}

impl RobotEvent {
    /// Decodes event `name` with `args` (the arguments as emitted: outgoing events carry no id).
    pub fn decode(name: &str, args: &[i16]) -> Result<RobotEvent, EventError> {
        Ok(match name {
            "odometry" => {
                // the ROS-Thymio script emits 2 words (no on-robot time); accept both
                if args.len() == 2 {
                    let [left, right] = take::<2>(name, args)?;
                    RobotEvent::Odometry {
                        left,
                        right,
                        ticks: 0,
                    }
                } else {
                    let [left, right, ticks] = take::<3>(name, args)?;
                    RobotEvent::Odometry { left, right, ticks }
                }
            }
            "buttons" => RobotEvent::Buttons(take(name, args)?),
            "proximity" => RobotEvent::Proximity(take(name, args)?),
            "ground" => RobotEvent::Ground(take(name, args)?),
            "ground_reflected" => RobotEvent::GroundReflected(take(name, args)?),
            "ground_ambient" => RobotEvent::GroundAmbient(take(name, args)?),
            "accelerometer" => RobotEvent::Accelerometer(take(name, args)?),
            "tap" => {
                take::<0>(name, args)?;
                RobotEvent::Tap
            }
            "temperature" => RobotEvent::Temperature(take::<1>(name, args)?[0]),
            "sound" => RobotEvent::Sound(take::<1>(name, args)?[0]),
            "remote" => {
                let [address, command] = take(name, args)?;
                RobotEvent::Remote { address, command }
            }
            "comm" => {
                // value, then a payload and an intensity per proximity sensor
                const N: usize = PROXIMITY_COUNT;
                let a: [i16; 1 + 2 * N] = take(name, args)?;
                let mut payloads = [0; N];
                let mut intensities = [0; N];
                payloads.copy_from_slice(&a[1..1 + N]);
                intensities.copy_from_slice(&a[1 + N..]);
                RobotEvent::Comm {
                    value: a[0],
                    payloads,
                    intensities,
                }
            }
            other => {
                let index = other
                    .strip_prefix("button_")
                    .and_then(|b| BUTTON_NAMES.iter().position(|n| *n == b))
                    .ok_or_else(|| EventError::Unknown(other.to_owned()))?;
                RobotEvent::Button {
                    index,
                    pressed: take::<1>(name, args)?[0] != 0,
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_every_event() {
        assert_eq!(
            RobotEvent::decode("odometry", &[1, -2, 300]),
            Ok(RobotEvent::Odometry {
                left: 1,
                right: -2,
                ticks: 300
            })
        );
        assert_eq!(
            RobotEvent::decode("odometry", &[1, -2]),
            Ok(RobotEvent::Odometry {
                left: 1,
                right: -2,
                ticks: 0
            })
        );
        assert_eq!(
            RobotEvent::decode("button_center", &[1]),
            Ok(RobotEvent::Button {
                index: 2,
                pressed: true
            })
        );
        assert_eq!(RobotEvent::decode("tap", &[]), Ok(RobotEvent::Tap));
        assert_eq!(
            RobotEvent::decode("proximity", &[0, 1, 2, 3, 4, 5, 6]),
            Ok(RobotEvent::Proximity([0, 1, 2, 3, 4, 5, 6]))
        );
        let comm: Vec<i16> = (0..15).collect();
        assert!(matches!(
            RobotEvent::decode("comm", &comm),
            Ok(RobotEvent::Comm { value: 0, .. })
        ));
        assert_eq!(
            RobotEvent::decode("proximity", &[1, 2]),
            Err(EventError::Size {
                name: "proximity".into(),
                expected: 7,
                got: 2
            })
        );
        assert_eq!(
            RobotEvent::decode("button_up", &[1]),
            Err(EventError::Unknown("button_up".into()))
        );
        assert!(RobotEvent::decode("set_speed", &[1, 1]).is_err());
    }
}
