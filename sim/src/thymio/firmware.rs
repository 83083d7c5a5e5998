//! The Thymio-II firmware as the VM's target: its native functions with simulated effects
//! (LEDs, sounds, IR communication, settings, SD card absent, power), its reset callback, and
//! the pending local events (aseba.md §4.3–4.6).

use super::addrs::{self, Addrs};
use crate::vm::std_natives::{self, StdState};
use crate::vm::{Fault, Outbox, Target, Vm};
use msgs::description::{push_standard_natives, TargetDescription};
use msgs::thymio::{
    BUTTON_LEDS, CIRCLE_LEDS, GROUND_LEDS, PROXIMITY_LEDS, RGB_CHANNELS, TEMPERATURE_LEDS,
};

/// Samples of the tone generator's wave (`sound.wave`).
pub const WAVE_SAMPLES: usize = 142;

/// Number of firmware settings (`_system.settings.*`).
pub const SETTINGS: usize = 32;

/// Local event indices (id = 0xFFFE − index).
#[allow(missing_docs)]
pub mod ev {
    pub const BUTTON_BACKWARD: u32 = 0;
    pub const BUTTONS: u32 = 5;
    pub const PROX: u32 = 6;
    pub const PROX_COMM: u32 = 7;
    pub const TAP: u32 = 8;
    pub const ACC: u32 = 9;
    pub const MIC: u32 = 10;
    pub const SOUND_FINISHED: u32 = 11;
    pub const TEMPERATURE: u32 = 12;
    pub const RC5: u32 = 13;
    pub const MOTOR: u32 = 14;
    pub const TIMER0: u32 = 15;
    pub const TIMER1: u32 = 16;
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Std(u16),
    Reboot,
    SettingsRead,
    SettingsWrite,
    SettingsFlash,
    LedsSet,
    Sound(SoundCall),
    Leds(LedGroup),
    SoundWave,
    ProxCommEnable,
    SdOpen,
    SdData,
    SdSeek,
    RfNodeId,
    RfSetup,
    SoundDuration,
    PowerOff,
    Unknown,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SoundCall {
    Record,
    Play,
    Replay,
    System,
    Freq,
}

/// LED groups of the `leds.*` natives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum LedGroup {
    Circle,
    Top,
    BottomLeft,
    BottomRight,
    Buttons,
    ProxH,
    ProxV,
    Rc,
    Sound,
    Temperature,
}

impl LedGroup {
    fn size(self) -> usize {
        match self {
            LedGroup::Circle | LedGroup::ProxH => 8,
            LedGroup::Top | LedGroup::BottomLeft | LedGroup::BottomRight => 3,
            LedGroup::Buttons => 4,
            LedGroup::ProxV | LedGroup::Temperature => 2,
            LedGroup::Rc | LedGroup::Sound => 1,
        }
    }
}

/// LED brightnesses (0–32) as the robot shows them.
#[derive(Debug, Clone, PartialEq, Eq)]
#[allow(missing_docs)]
pub struct Leds {
    pub circle: [i16; CIRCLE_LEDS],
    pub top: [i16; RGB_CHANNELS],
    pub bottom_left: [i16; RGB_CHANNELS],
    pub bottom_right: [i16; RGB_CHANNELS],
    pub buttons: [i16; BUTTON_LEDS],
    pub prox_h: [i16; PROXIMITY_LEDS],
    pub prox_v: [i16; GROUND_LEDS],
    pub rc: i16,
    pub sound: i16,
    pub temperature: [i16; TEMPERATURE_LEDS],
    /// Raw LEDs set by `_leds.set` (index 0–39).
    pub raw: [i16; 40],
}

impl Default for Leds {
    fn default() -> Self {
        Leds {
            circle: [0; CIRCLE_LEDS],
            top: [0; RGB_CHANNELS],
            bottom_left: [0; RGB_CHANNELS],
            bottom_right: [0; RGB_CHANNELS],
            buttons: [0; BUTTON_LEDS],
            prox_h: [0; PROXIMITY_LEDS],
            prox_v: [0; GROUND_LEDS],
            rc: 0,
            sound: 0,
            temperature: [0; TEMPERATURE_LEDS],
            raw: [0; 40],
        }
    }
}

/// What the loudspeaker does.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Sound {
    /// Last sound command, as `(native name, arguments)` (the only natives that allocate: a
    /// sound is rare).
    pub last: Option<(String, Vec<i16>)>,
    /// Milliseconds until the current user sound ends (fires `sound.finished`).
    pub remaining_ms: Option<u32>,
    /// Tone generator wave (`sound.wave`).
    pub wave: Option<[i16; WAVE_SAMPLES]>,
    /// Number of sound commands so far.
    pub count: u32,
}

/// The firmware state.
#[derive(Debug, Clone)]
pub struct Firmware {
    /// Variable addresses.
    pub addrs: Addrs,
    kinds: Vec<Kind>,
    /// `math.rand` state.
    pub std: StdState,
    /// Pending local events, bit i = local event i.
    pub pending: u32,
    /// LED states.
    pub leds: Leds,
    /// Loudspeaker.
    pub sound: Sound,
    /// IR communication enabled.
    pub prox_comm: bool,
    /// Settings.
    pub settings: [i16; SETTINGS],
    /// `_poweroff` was called.
    pub power_off: bool,
    /// `_system.reboot` was called.
    pub reboot: bool,
    /// RF node id and (channel, network) set by `_rf.*`.
    pub rf: (i16, i16, i16),
    /// `[version, variant]` of `_fwversion`.
    pub fw_version: [i16; 2],
    /// `_productId`.
    pub product_id: i16,
    /// Node id restored in `_id` at reset.
    pub node_id: u16,
    /// The Aseba Playground Thymio (its layout, rates and step limit) rather than firmware 14.
    pub playground: bool,
}

impl Firmware {
    /// The firmware for `description` (FW14 or Playground layout), node `node_id`.
    pub fn new(description: &TargetDescription, node_id: u16, seed: u16) -> Firmware {
        let mut std_desc = TargetDescription::new("", 0, 0, 0, 0);
        push_standard_natives(&mut std_desc);
        let kinds = description
            .natives
            .iter()
            .map(|f| {
                if let Some(i) = std_desc.natives.iter().position(|s| s.name == f.name) {
                    return Kind::Std(i as u16);
                }
                match f.name.as_str() {
                    "_system.reboot" => Kind::Reboot,
                    "_system.settings.read" => Kind::SettingsRead,
                    "_system.settings.write" => Kind::SettingsWrite,
                    "_system.settings.flash" => Kind::SettingsFlash,
                    "_leds.set" => Kind::LedsSet,
                    "sound.record" => Kind::Sound(SoundCall::Record),
                    "sound.play" => Kind::Sound(SoundCall::Play),
                    "sound.replay" => Kind::Sound(SoundCall::Replay),
                    "sound.system" => Kind::Sound(SoundCall::System),
                    "sound.freq" => Kind::Sound(SoundCall::Freq),
                    "leds.circle" => Kind::Leds(LedGroup::Circle),
                    "leds.top" => Kind::Leds(LedGroup::Top),
                    "leds.bottom.left" => Kind::Leds(LedGroup::BottomLeft),
                    "leds.bottom.right" => Kind::Leds(LedGroup::BottomRight),
                    "leds.buttons" => Kind::Leds(LedGroup::Buttons),
                    "leds.prox.h" => Kind::Leds(LedGroup::ProxH),
                    "leds.prox.v" => Kind::Leds(LedGroup::ProxV),
                    "leds.rc" => Kind::Leds(LedGroup::Rc),
                    "leds.sound" => Kind::Leds(LedGroup::Sound),
                    "leds.temperature" => Kind::Leds(LedGroup::Temperature),
                    "sound.wave" => Kind::SoundWave,
                    "prox.comm.enable" => Kind::ProxCommEnable,
                    "sd.open" => Kind::SdOpen,
                    "sd.write" | "sd.read" => Kind::SdData,
                    "sd.seek" => Kind::SdSeek,
                    "_rf.nodeid" => Kind::RfNodeId,
                    "_rf.setup" => Kind::RfSetup,
                    "sound.duration" => Kind::SoundDuration,
                    "_poweroff" => Kind::PowerOff,
                    _ => Kind::Unknown,
                }
            })
            .collect();
        let playground = description.variable("buttons._raw").is_none();
        Firmware {
            addrs: Addrs::resolve(description),
            kinds,
            std: StdState::new(seed),
            pending: 0,
            leds: Leds::default(),
            sound: Sound::default(),
            prox_comm: false,
            settings: [0; SETTINGS],
            power_off: false,
            reboot: false,
            rf: (node_id as i16, 0, 0),
            fw_version: if playground { [11, 0] } else { [14, 0] },
            product_id: 8,
            node_id,
            playground,
        }
    }

    /// Marks local event `index` pending (repeated triggers coalesce).
    pub fn trigger(&mut self, index: u32) {
        self.pending |= 1 << index;
    }

    /// Takes the pending local event with the lowest index.
    pub fn take_event(&mut self) -> Option<u32> {
        if self.pending == 0 {
            return None;
        }
        let i = self.pending.trailing_zeros();
        self.pending &= !(1 << i);
        Some(i)
    }

    fn set_leds(&mut self, group: LedGroup, values: &[i16], vars: &mut [i16]) {
        let l = &mut self.leds;
        let (slot, var): (&mut [i16], _) = match group {
            LedGroup::Circle => (&mut l.circle, self.addrs.leds_circle),
            LedGroup::Top => (&mut l.top, self.addrs.leds_top),
            LedGroup::BottomLeft => (&mut l.bottom_left, self.addrs.leds_bottom_left),
            LedGroup::BottomRight => (&mut l.bottom_right, self.addrs.leds_bottom_right),
            LedGroup::Buttons => (&mut l.buttons, None),
            LedGroup::ProxH => (&mut l.prox_h, None),
            LedGroup::ProxV => (&mut l.prox_v, None),
            LedGroup::Rc => (std::slice::from_mut(&mut l.rc), None),
            LedGroup::Sound => (std::slice::from_mut(&mut l.sound), None),
            LedGroup::Temperature => (&mut l.temperature, None),
        };
        for (i, (s, v)) in slot.iter_mut().zip(values).enumerate() {
            *s = (*v).clamp(0, 32);
            // firmware 14 mirrors the RGB and circle LEDs in their variables
            addrs::write(vars, var, i as u32, *v);
        }
    }

    /// Applies the LED variables (written by the program) to the LEDs, once per main loop.
    pub fn apply_led_variables(&mut self, vars: &[i16]) {
        let l = &mut self.leds;
        for (slot, var) in [
            (&mut l.top[..], self.addrs.leds_top),
            (&mut l.bottom_left[..], self.addrs.leds_bottom_left),
            (&mut l.bottom_right[..], self.addrs.leds_bottom_right),
            (&mut l.circle[..], self.addrs.leds_circle),
        ] {
            if var.is_some() {
                for (i, s) in slot.iter_mut().enumerate() {
                    *s = addrs::read(vars, var, i as u32).clamp(0, 32);
                }
            }
        }
    }

    fn sound(&mut self, call: SoundCall, args: [i16; 2]) {
        let name = match call {
            SoundCall::Record => "sound.record",
            SoundCall::Play => "sound.play",
            SoundCall::Replay => "sound.replay",
            SoundCall::System => "sound.system",
            SoundCall::Freq => "sound.freq",
        };
        let n = if call == SoundCall::Freq { 2 } else { 1 };
        self.sound.last = Some((name.to_owned(), args[..n].to_vec()));
        self.sound.count += 1;
        self.sound.remaining_ms = match call {
            // a tone of `duration` 1/60 s ends by itself; 0 plays on, −1 stops
            SoundCall::Freq if args[1] > 0 => Some(args[1] as u32 * 1000 / 60),
            SoundCall::Freq => None,
            // no SD card: the files of sound.play / sound.replay do not exist
            SoundCall::Play | SoundCall::Replay | SoundCall::Record => None,
            SoundCall::System => self.sound.remaining_ms,
        };
    }
}

/// Pops `n` scalar arguments (addresses) and reads their values.
fn scalars<const N: usize>(vm: &mut Vm) -> Result<[i16; N], Fault> {
    let mut addrs = [0u16; N];
    for a in addrs.iter_mut() {
        *a = vm.pop_arg()?;
    }
    let mut out = [0i16; N];
    for (o, a) in out.iter_mut().zip(addrs) {
        *o = vm.var(a as u32)?;
    }
    Ok(out)
}

impl Target for Firmware {
    fn native(&mut self, vm: &mut Vm, id: u16, out: &mut dyn Outbox) -> Result<(), Fault> {
        let kind = self
            .kinds
            .get(id as usize)
            .copied()
            .ok_or(Fault::Native(id))?;
        match kind {
            Kind::Std(i) => return std_natives::call(vm, i, &mut self.std, out),
            Kind::Reboot => self.reboot = true,
            Kind::SettingsRead | Kind::SettingsWrite => {
                let (a, v) = (vm.pop_arg()?, vm.pop_arg()?);
                let address = vm.var(a as u32)?;
                if address < 0 || address as usize >= SETTINGS {
                    vm.emit_node_specific_error("Address out of settings", out);
                    return Ok(());
                }
                if kind == Kind::SettingsRead {
                    vm.set_var(v as u32, self.settings[address as usize])?;
                } else {
                    self.settings[address as usize] = vm.var(v as u32)?;
                }
            }
            Kind::SettingsFlash => {}
            Kind::LedsSet => {
                let [led, value] = scalars::<2>(vm)?;
                if (0..40).contains(&led) && led != 15 {
                    self.leds.raw[led as usize] = value.clamp(0, 32);
                }
            }
            Kind::Sound(call) => {
                let args = if call == SoundCall::Freq {
                    scalars::<2>(vm)?
                } else {
                    let [n] = scalars::<1>(vm)?;
                    [n, 0]
                };
                self.sound(call, args);
            }
            Kind::Leds(group) => {
                let mut values = [0i16; 8];
                let n = group.size();
                let mut addrs = [0u16; 8];
                for a in addrs.iter_mut().take(n) {
                    *a = vm.pop_arg()?;
                }
                for i in 0..n {
                    values[i] = vm.var(addrs[i] as u32)?;
                }
                self.set_leds(group, &values[..n], vm.variables_mut());
            }
            Kind::SoundWave => {
                let a = vm.pop_arg()? as u32;
                vm.check_range(a, WAVE_SAMPLES as u32)?;
                let mut wave = [0i16; WAVE_SAMPLES];
                wave.copy_from_slice(&vm.variables()[a as usize..a as usize + WAVE_SAMPLES]);
                if wave.iter().any(|s| !(-128..=127).contains(s)) {
                    vm.emit_node_specific_error("Error: samples must be in [-128,127] range", out);
                    return Ok(());
                }
                self.sound.wave = Some(wave);
            }
            Kind::ProxCommEnable => {
                let [state] = scalars::<1>(vm)?;
                self.prox_comm = state != 0;
            }
            Kind::SdOpen | Kind::SdSeek => {
                let (_n, status) = (vm.pop_arg()?, vm.pop_arg()?);
                // no SD card in the simulated robot
                vm.set_var(status as u32, -1)?;
            }
            Kind::SdData => {
                let (_data, count) = (vm.pop_arg()?, vm.pop_arg()?);
                let _len = vm.pop_arg()?;
                vm.set_var(count as u32, 0)?;
            }
            Kind::RfNodeId => {
                let [id] = scalars::<1>(vm)?;
                self.rf.0 = id;
            }
            Kind::RfSetup => {
                let [channel, network] = scalars::<2>(vm)?;
                self.rf.1 = channel;
                self.rf.2 = network;
            }
            Kind::SoundDuration => {
                let (_n, d) = (vm.pop_arg()?, vm.pop_arg()?);
                vm.set_var(d as u32, 0)?;
            }
            Kind::PowerOff => self.power_off = true,
            Kind::Unknown => return Err(Fault::Native(id)),
        }
        Ok(())
    }

    fn reset(&mut self, vm: &mut Vm) {
        let vars = vm.variables_mut();
        vars.fill(0);
        let a = &self.addrs;
        addrs::write(vars, a.id, 0, self.node_id as i16);
        addrs::write(vars, a.product_id, 0, self.product_id);
        addrs::write(vars, a.fw_version, 0, self.fw_version[0]);
        addrs::write(vars, a.fw_version, 1, self.fw_version[1]);
        addrs::write(vars, a.sd_present, 0, 0);
        self.leds = Leds::default();
        self.sound.remaining_ms = None;
        self.prox_comm = false;
        self.pending = 0;
    }

    /// The firmware drops user events whose type and payload exceed `(32 + 2) * 2` bytes:
    /// 33 words pass (despite its message saying "(>32)"); Playground has no such limit.
    fn max_emit_words(&self) -> usize {
        if self.playground {
            crate::vm::MAX_EVENT_ARGS
        } else {
            33
        }
    }
}
