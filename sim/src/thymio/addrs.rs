//! Addresses of the Thymio variables the simulation reads and writes, resolved by name from
//! the description (firmware 14 and the Playground lay them out differently).

use msgs::description::TargetDescription;
use msgs::thymio::BUTTON_COUNT;

/// A variable: address and size; absent when the description lacks it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Var {
    /// First word.
    pub addr: u32,
    /// Words.
    pub size: u32,
}

/// The variables the firmware simulation touches.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[allow(missing_docs)]
pub struct Addrs {
    pub id: Option<Var>,
    pub product_id: Option<Var>,
    pub fw_version: Option<Var>,
    pub sd_present: Option<Var>,
    pub buttons_raw: Option<Var>,
    /// backward, left, center, forward, right
    pub buttons: [Option<Var>; BUTTON_COUNT],
    pub prox_horizontal: Option<Var>,
    pub prox_comm_rx: Option<Var>,
    pub prox_comm_tx: Option<Var>,
    pub ground_ambiant: Option<Var>,
    pub ground_reflected: Option<Var>,
    pub ground_delta: Option<Var>,
    pub motor_left_target: Option<Var>,
    pub motor_right_target: Option<Var>,
    pub motor_left_speed: Option<Var>,
    pub motor_right_speed: Option<Var>,
    pub motor_left_pwm: Option<Var>,
    pub motor_right_pwm: Option<Var>,
    pub vbat: Option<Var>,
    pub acc: Option<Var>,
    pub acc_tap: Option<Var>,
    pub leds_top: Option<Var>,
    pub leds_bottom_left: Option<Var>,
    pub leds_bottom_right: Option<Var>,
    pub leds_circle: Option<Var>,
    pub temperature: Option<Var>,
    pub rc5_address: Option<Var>,
    pub rc5_command: Option<Var>,
    pub mic_intensity: Option<Var>,
    pub mic_threshold: Option<Var>,
    pub timer_period: Option<Var>,
}

impl Addrs {
    /// Resolves the addresses in `d`.
    pub fn resolve(d: &TargetDescription) -> Addrs {
        let v = |name: &str| {
            d.variable(name).map(|v| Var {
                addr: v.address as u32,
                size: v.size as u32,
            })
        };
        Addrs {
            id: v("_id"),
            product_id: v("_productId"),
            fw_version: v("_fwversion"),
            sd_present: v("sd.present"),
            buttons_raw: v("buttons._raw"),
            buttons: [
                v("button.backward"),
                v("button.left"),
                v("button.center"),
                v("button.forward"),
                v("button.right"),
            ],
            prox_horizontal: v("prox.horizontal"),
            prox_comm_rx: v("prox.comm.rx"),
            prox_comm_tx: v("prox.comm.tx"),
            ground_ambiant: v("prox.ground.ambiant"),
            ground_reflected: v("prox.ground.reflected"),
            ground_delta: v("prox.ground.delta"),
            motor_left_target: v("motor.left.target"),
            motor_right_target: v("motor.right.target"),
            motor_left_speed: v("motor.left.speed"),
            motor_right_speed: v("motor.right.speed"),
            motor_left_pwm: v("motor.left.pwm"),
            motor_right_pwm: v("motor.right.pwm"),
            vbat: v("_vbat"),
            acc: v("acc"),
            acc_tap: v("acc._tap"),
            leds_top: v("leds.top"),
            leds_bottom_left: v("leds.bottom.left"),
            leds_bottom_right: v("leds.bottom.right"),
            leds_circle: v("leds.circle"),
            temperature: v("temperature"),
            rc5_address: v("rc5.address"),
            rc5_command: v("rc5.command"),
            mic_intensity: v("mic.intensity"),
            mic_threshold: v("mic.threshold"),
            timer_period: v("timer.period"),
        }
    }
}

/// Reads word `i` of `var` from memory (0 when absent).
pub fn read(vars: &[i16], var: Option<Var>, i: u32) -> i16 {
    var.filter(|v| i < v.size)
        .and_then(|v| vars.get((v.addr + i) as usize).copied())
        .unwrap_or(0)
}

/// Writes word `i` of `var` (ignored when absent).
pub fn write(vars: &mut [i16], var: Option<Var>, i: u32, value: i16) {
    if let Some(slot) = var
        .filter(|v| i < v.size)
        .and_then(|v| vars.get_mut((v.addr + i) as usize))
    {
        *slot = value;
    }
}
