//! The Thymio-II robot profile: its sensor and actuator counts, its geometry and the nominal
//! values of its motors and sensors, written once for every crate (the RT side's arrays and
//! defaults, the handoff's samples, the engine's conversions and robot model, the interface
//! layer, the recorder and the simulator).
//!
//! These are facts of the robot and ROS-Thymio's defaults (ros-aseba-interface.md §3, §5). A
//! value a user can configure (`axis_length`, the motors' and sensors' calibration) only takes
//! its default from here: the configuration still overrides it.

/// Number of horizontal proximity sensors (`prox.horizontal`: 5 in front, left to right, then
/// rear left and rear right).
pub const PROXIMITY_COUNT: usize = 7;
/// Number of ground sensors (`prox.ground.*`: left, right).
pub const GROUND_COUNT: usize = 2;
/// Number of capacitive buttons.
pub const BUTTON_COUNT: usize = 5;

/// Names of the horizontal proximity sensors, in `prox.horizontal` order (ROS-Thymio's topic
/// and frame names).
pub const PROXIMITY_NAMES: [&str; PROXIMITY_COUNT] = [
    "left",
    "center_left",
    "center",
    "center_right",
    "right",
    "rear_left",
    "rear_right",
];
/// Names of the ground sensors, in `prox.ground.*` order.
pub const GROUND_NAMES: [&str; GROUND_COUNT] = ["left", "right"];
/// Names of the buttons, in the order of the `buttons` event.
pub const BUTTON_NAMES: [&str; BUTTON_COUNT] = ["backward", "left", "center", "forward", "right"];

/// Distance between the wheels' contact points [m] (ROS-Thymio's `axis_length` default and the
/// URDF's). Configurable per robot: this is the default.
pub const AXIS_LENGTH: f64 = 0.0935;
/// Wheel radius [m].
pub const WHEEL_RADIUS: f64 = 0.022;
/// Wheel width [m] (the robot model's wheel cylinders).
pub const WHEEL_WIDTH: f64 = 0.015;

/// Motor units per mm/s of wheel speed at the nominal calibration (ROS-Thymio's default).
pub const MOTOR_UNITS_PER_MM_S: f64 = 2.93;
/// Nominal linear motor coefficient `q0` of a real Thymio [m/s per motor unit]
/// (`0.001 / 2.93`, ROS-Thymio's default calibration of a real robot).
pub const NOMINAL_Q0: f64 = 0.001 / MOTOR_UNITS_PER_MM_S;
/// Linear motor coefficient `q0` of a simulated Thymio [m/s per motor unit] (ROS-Thymio's
/// default calibration of a simulated robot).
pub const SIMULATION_Q0: f64 = 0.000332;
/// Nominal largest motor target [motor units]: the firmware's nominal top speed, the RT side's
/// default cap on wheel targets and the calibration's top speed.
pub const NOMINAL_MAX_SPEED: i16 = 500;
/// The firmware's clamp of motor targets [motor units]: no target beyond ± this takes effect.
pub const MOTOR_TARGET_LIMIT: i16 = 1000;

/// Nearest distance a horizontal proximity sensor reports [m].
pub const PROXIMITY_RANGE_MIN: f32 = 0.0215;
/// Reach of a horizontal proximity sensor [m] (the simulator's ray length, and the farthest
/// distance the driver reports, [`PROXIMITY_RANGE_MAX`]).
pub const PROXIMITY_REACH: f64 = 0.14;
/// Farthest distance a horizontal proximity sensor reports [m] ([`PROXIMITY_REACH`]).
pub const PROXIMITY_RANGE_MAX: f32 = PROXIMITY_REACH as f32;
/// Nominal power model `[r_max, x0, c]` of a horizontal proximity sensor (reading
/// `r = r_max / (1 + (d − x0)² / (c − x0²))` at distance `d`; ROS-Thymio's default calibration).
pub const PROXIMITY_MODEL: [f64; 3] = [4505.0, 0.0003, 0.0073];
/// Field of view of the proximity and ground sensors [rad].
pub const SENSOR_FOV: f32 = 0.3;
/// Nearest distance a ground sensor reports [m].
pub const GROUND_RANGE_MIN: f32 = 0.009;
/// Farthest distance a ground sensor reports [m].
pub const GROUND_RANGE_MAX: f32 = 0.030;

/// Horizontal proximity sensors in the body frame (`base_link`), in `prox.horizontal` order:
/// `[x, y, yaw]` [m, m, rad] (ros-aseba-interface.md §5).
pub const PROXIMITY_POSES: [[f64; 3]; PROXIMITY_COUNT] = [
    [0.063, 0.0493, 0.66323],
    [0.0756, 0.0261, 0.33161],
    [0.08, 0.0, 0.0],
    [0.0756, -0.0261, -0.33161],
    [0.063, -0.0493, -0.66323],
    [-0.03, 0.0305, std::f64::consts::PI],
    [-0.03, -0.0305, std::f64::consts::PI],
];
/// Height of the horizontal proximity sensors (and the laser frame) above `base_link` [m].
pub const PROXIMITY_HEIGHT: f64 = 0.035;
/// Ground sensors in the body frame, left then right: `[x, y]` [m].
pub const GROUND_POSES: [[f64; 2]; GROUND_COUNT] = [[0.07157, 0.01155], [0.07157, -0.01155]];
/// Height of the ground sensors above `base_link` [m].
pub const GROUND_HEIGHT: f64 = 0.009;
/// Yaw of the ground sensors' frames, left then right [rad] (they look down, pitched by π/2).
pub const GROUND_YAWS: [f64; GROUND_COUNT] = [0.24311, -0.24311];

/// Accelerometer units per g (`acc`: 1 g ≈ 23).
pub const ACC_PER_G: f64 = 23.0;
/// Standard gravity [m/s²] the accelerometer is scaled with.
pub const G: f64 = 9.81;

/// Highest LED brightness (LEDs take 0 to 32).
pub const LED_MAX: i16 = 32;
/// LEDs of the top circle (`leds.circle`).
pub const CIRCLE_LEDS: usize = 8;
/// LEDs of the horizontal proximity sensors (`leds.prox.h`).
pub const PROXIMITY_LEDS: usize = 8;
/// LEDs of the buttons (`leds.buttons`).
pub const BUTTON_LEDS: usize = 4;
/// LEDs of the ground sensors (`leds.prox.v`).
pub const GROUND_LEDS: usize = 2;
/// LEDs of the temperature (`leds.temperature`: red, blue).
pub const TEMPERATURE_LEDS: usize = 2;
/// Channels of an RGB LED (`leds.top`, `leds.bottom.left`, `leds.bottom.right`).
pub const RGB_CHANNELS: usize = 3;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reach_in_single_precision_is_the_literal() {
        // PROXIMITY_RANGE_MAX is derived from the f64 reach; the ROS messages carried 0.14f32.
        assert_eq!(PROXIMITY_RANGE_MAX, 0.14f32);
    }
}
