//! The same-work floors of the end-to-end benchmark (issue 45): floor.rs's zero-work program, but publishing from the
//! robot's frames what thymio-rt at its defaults publishes from them — `odom`, `/tf` (odom → base_link and the two
//! wheel links), `joint_states` of the two wheels, the sensor topics of the script's events (proximity Range ×7
//! and the laser scan, ground Range ×2, imu, temperature, sound, tap, remote, buttons, comm/rx) and every event
//! again on `/aseba/events/<name>` (asebaros_msgs/Event) — with the same
//! message types and frames and a comparable content. The zero-work floors (floor.rs, floor_ros1.rs) mark what the
//! transport costs for the two hops; these mark what publishing everything the driver publishes costs, so that
//! thymio-rt's CPU compares with a program that does the same work and nothing more.
//!
//! This module is the part both front ends share: the script's event ids ([`Ids`], read from the script once), the
//! simple decoding of an event frame into what the messages need ([`Event`]: a few multiplies, no calibration, no
//! checks) and the topics ([`topics`]). floor_same_ros2.rs (r2r) and floor_same_ros1.rs (nrt-ros1's `net`) fill
//! one message per topic, made once, with it and publish it.

use msgs::thymio::{
    ACC_PER_G, BUTTON_NAMES, G, GROUND_NAMES, GROUND_RANGE_MAX, GROUND_RANGE_MIN, PROXIMITY_NAMES,
    PROXIMITY_RANGE_MAX, PROXIMITY_RANGE_MIN,
};

/// The wheel radius (m) of the wheel angles in `joint_states` and `/tf`.
pub const WHEEL_RADIUS: f64 = 0.022;
/// The distance between the wheels (m) of the yaw.
pub const AXIS: f64 = 0.0935;
/// Distance from the laser frame to the front sensors' arc (m), as the driver's scan.
pub const LASER_SHIFT: f32 = 0.08;
/// The first angle and the step of the 5-ray laser scan (rad), as the driver's.
pub const LASER_ANGLES: (f32, f32) = (-0.64, 0.32);
/// The ground delta above which the ground is seen (the driver's default `ground.threshold`).
const GROUND_THRESHOLD: i16 = 100;

/// The event ids of the script the bench loads (config/aseba/thymio_ros_playground.aesl): their order in its
/// list of events.
#[derive(Debug, Clone)]
pub struct Ids {
    /// Every event's name, by id (the driver republishes each on `/aseba/events/<name>`).
    pub names: Vec<String>,
    odometry: u16,
    proximity: u16,
    ground: u16,
    accelerometer: u16,
    tap: u16,
    temperature: u16,
    sound: u16,
    remote: u16,
    comm: u16,
    buttons: u16,
    button: [u16; 5],
}

impl Ids {
    /// Read from the script the bench loads.
    pub fn of_script() -> Result<Ids, String> {
        let script = crate::playground::SCRIPT.trim_start_matches("builtin:");
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("config")
            .join(script);
        let text =
            std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let names: Vec<&str> = text
            .lines()
            .filter(|l| l.trim_start().starts_with("<event "))
            .filter_map(|l| l.split("name=\"").nth(1)?.split('"').next())
            .collect();
        let id = |name: &str| {
            names
                .iter()
                .position(|n| *n == name)
                .map(|i| i as u16)
                .ok_or(format!("{}: no event {name}", path.display()))
        };
        let mut button = [0; 5];
        for (b, name) in button.iter_mut().zip(BUTTON_NAMES) {
            *b = id(&format!("button_{name}"))?;
        }
        Ok(Ids {
            names: names.iter().map(|n| n.to_string()).collect(),
            odometry: id("odometry")?,
            proximity: id("proximity")?,
            ground: id("ground")?,
            accelerometer: id("accelerometer")?,
            tap: id("tap")?,
            temperature: id("temperature")?,
            sound: id("sound")?,
            remote: id("remote")?,
            comm: id("comm")?,
            buttons: id("buttons")?,
            button,
        })
    }
}

/// What one event frame gives the messages, decoded the simple way.
#[derive(Debug, Clone, Copy)]
pub enum Event {
    /// `odom`, `/tf`, `joint_states`.
    Odometry {
        /// Position (m) and yaw (rad).
        x: f64,
        yaw: f64,
        /// Linear (m/s) and angular (rad/s) speed.
        v: f64,
        w: f64,
        /// Wheel angles (rad) and angular speeds (rad/s), left and right.
        wheel_pos: [f64; 2],
        wheel_vel: [f64; 2],
    },
    /// The seven proximity ranges (m, +inf: nothing seen) and readings.
    Proximity {
        ranges: [f32; 7],
        raw: [i16; 7],
    },
    /// The two ground ranges (m).
    Ground([f32; 2]),
    /// Linear acceleration (m/s², base_link).
    Imu([f64; 3]),
    Tap,
    /// °C.
    Temperature(f64),
    /// In [0, 1].
    Sound(f32),
    /// The RC5 command.
    Remote(i8),
    /// Value, payloads, intensities.
    Comm {
        value: i16,
        payloads: [i16; 7],
        intensities: [i16; 7],
    },
    /// The five buttons (0/1) as a joystick.
    Buttons([i32; 5]),
    /// Button `index` pressed or not.
    Button(usize, bool),
}

/// Turns event frames into [`Event`]s (it keeps the last odometry for the speeds).
pub struct Decoder {
    ids: Ids,
    /// The last odometry's wheel distances (m) and tick count.
    last: Option<([f64; 2], i16)>,
}

impl Decoder {
    /// For the script's `ids`.
    pub fn new(ids: Ids) -> Decoder {
        Decoder { ids, last: None }
    }

    /// What event `id` with `args` gives, if it has a topic.
    pub fn decode(&mut self, id: u16, args: &[i16]) -> Option<Event> {
        let a = |i: usize| args.get(i).copied().unwrap_or(0);
        let ids = &self.ids;
        Some(if id == ids.odometry {
            let d = [a(0), a(1)].map(|o| crate::floor::Q0 * f64::from(o));
            let wheel_vel = match self.last {
                Some((prev, ticks)) => {
                    let dt = f64::from(a(2).wrapping_sub(ticks)) / 100.0;
                    std::array::from_fn(|i| if dt > 0.0 { (d[i] - prev[i]) / dt } else { 0.0 })
                }
                None => [0.0; 2],
            };
            self.last = Some((d, a(2)));
            Event::Odometry {
                x: (d[0] + d[1]) / 2.0,
                yaw: (d[1] - d[0]) / AXIS,
                v: (wheel_vel[0] + wheel_vel[1]) / 2.0,
                w: (wheel_vel[1] - wheel_vel[0]) / AXIS,
                wheel_pos: d.map(|d| d / WHEEL_RADIUS),
                wheel_vel: wheel_vel.map(|v| v / WHEEL_RADIUS),
            }
        } else if id == ids.proximity {
            let raw: [i16; 7] = std::array::from_fn(a);
            let span = PROXIMITY_RANGE_MAX - PROXIMITY_RANGE_MIN;
            Event::Proximity {
                ranges: raw.map(|r| {
                    if r <= 0 {
                        f32::INFINITY
                    } else {
                        PROXIMITY_RANGE_MAX - span * (f32::from(r) / 4500.0).min(1.0)
                    }
                }),
                raw,
            }
        } else if id == ids.ground {
            Event::Ground([a(0), a(1)].map(|d| {
                if d >= GROUND_THRESHOLD {
                    GROUND_RANGE_MIN
                } else {
                    GROUND_RANGE_MAX
                }
            }))
        } else if id == ids.accelerometer {
            let s = G / ACC_PER_G;
            Event::Imu([
                f64::from(a(1)) * s,
                -f64::from(a(0)) * s,
                f64::from(a(2)) * s,
            ])
        } else if id == ids.tap {
            Event::Tap
        } else if id == ids.temperature {
            Event::Temperature(f64::from(a(0)) / 10.0)
        } else if id == ids.sound {
            Event::Sound(f32::from(a(0)) / 255.0)
        } else if id == ids.remote {
            Event::Remote(a(1) as i8)
        } else if id == ids.comm {
            Event::Comm {
                value: a(0),
                payloads: std::array::from_fn(|i| a(1 + i)),
                intensities: std::array::from_fn(|i| a(8 + i)),
            }
        } else if id == ids.buttons {
            Event::Buttons(std::array::from_fn(|i| i32::from(a(i) != 0)))
        } else if let Some(i) = ids.button.iter().position(|b| *b == id) {
            Event::Button(i, a(0) != 0)
        } else {
            return None;
        })
    }
}

/// The five laser rays (right to left: sensors 4 … 0), shifted to the laser frame, and their intensities.
pub fn laser(ranges: &[f32; 7], raw: &[i16; 7]) -> ([f32; 5], [f32; 5]) {
    (
        std::array::from_fn(|k| ranges[4 - k] + LASER_SHIFT),
        std::array::from_fn(|k| f32::from(raw[4 - k])),
    )
}

/// Reads the robot's frames from `reader` until it ends, handing every user event to `on_event`: its id, its
/// arguments, what it gives the topics of its own ([`Event`], if any) and the time it was read (since the epoch).
pub fn read_events(
    mut reader: impl std::io::Read,
    ids: Ids,
    mut on_event: impl FnMut(u16, &[i16], Option<Event>, std::time::Duration),
) {
    let mut decoder = Decoder::new(ids);
    let mut r = msgs::reassembler::Reassembler::new();
    let mut buf = [0u8; 4096];
    loop {
        let n = match reader.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        let mut input = &buf[..n];
        while let Some(f) = r.push(&mut input) {
            let Ok(f) = f else { continue };
            if let Ok(msgs::wire::Message::UserEvent { id, args }) = f.message() {
                let mut words = [0i16; 16];
                let n = args.copy_to(&mut words);
                let args = &words[..n];
                on_event(id, args, decoder.decode(id, args), now);
            }
        }
    }
}

/// The frame names: odom, base_link, the wheel links and joints (left, right), the laser's.
pub const ODOM_FRAME: &str = "odom";
pub const BASE_FRAME: &str = "base_link";
pub const WHEEL_LINKS: [&str; 2] = ["left_wheel_link", "right_wheel_link"];
pub const WHEEL_JOINTS: [&str; 2] = ["left_wheel_joint", "right_wheel_joint"];
pub const LASER_FRAME: &str = "laser_link";

/// The frame of proximity sensor `i`.
pub fn proximity_frame(i: usize) -> String {
    format!("proximity_{}_link", PROXIMITY_NAMES[i])
}

/// The frame of ground sensor `i`.
pub fn ground_frame(i: usize) -> String {
    format!("ground_{}_link", GROUND_NAMES[i])
}

/// Every topic a same-work floor publishes (absolute names) with the script's event `names`.
pub fn topics(names: &[String]) -> Vec<String> {
    let mut t: Vec<String> = ["/odom", "/tf", "/joint_states"].map(String::from).into();
    t.extend(PROXIMITY_NAMES.iter().map(|n| format!("/proximity/{n}")));
    t.push("/proximity/laser".into());
    t.extend(GROUND_NAMES.iter().map(|n| format!("/ground/{n}")));
    t.extend(
        [
            "/imu",
            "/tap",
            "/temperature",
            "/sound",
            "/remote",
            "/buttons",
        ]
        .map(String::from),
    );
    t.extend(BUTTON_NAMES.iter().map(|n| format!("/buttons/{n}")));
    t.push("/comm/rx".into());
    t.extend(names.iter().map(|n| format!("/aseba/events/{n}")));
    t
}
