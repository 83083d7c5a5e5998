//! One simulated Thymio-II: its Aseba node, its firmware, its body in the arena. Time advances
//! by milliseconds: sensors refresh and local events fire at the firmware rates (motor 100 Hz,
//! buttons 50 Hz, prox 10 Hz, acc 16 Hz, temperature 1 Hz, timers), the wheels follow their
//! targets with a first-order response (through their differences, `wheels`), and the firmware main loop runs the VM, takes one
//! incoming frame per iteration, applies outputs and dispatches the pending event of lowest
//! index (aseba.md §4.6).

use super::addrs::{self, Addrs};
use super::arena::{ray_circle, Arena};
use super::firmware::{ev, Firmware};
use super::ground::ground_reflected;
use super::wheels::Wheels;
use crate::node::{Node, NodeConfig, NodeRequest};
use crate::rng::Rng;
use crate::vm::Outbox;
use msgs::description::TargetDescription;
use msgs::thymio::{
    ACC_PER_G, BUTTON_COUNT, G, GROUND_COUNT, GROUND_POSES, MOTOR_TARGET_LIMIT, NOMINAL_Q0,
    PROXIMITY_COUNT, PROXIMITY_MODEL, PROXIMITY_POSES, PROXIMITY_REACH,
};
use msgs::wire::{read_header, Frame, Message, HEADER_LEN, MAX_FRAME};
use std::collections::VecDeque;

/// Speed of one motor unit in m/s (the driver's default calibration: 2.93 units per mm/s, the
/// robot profile's nominal `q0`).
pub const UNIT_SPEED: f64 = NOMINAL_Q0;
/// Wheel separation (m): the robot profile's.
pub use msgs::thymio::AXIS_LENGTH;
/// Radius of the robot body for collisions and for other robots' sensors (m).
pub const BODY_RADIUS: f64 = 0.075;
/// Time constant of the wheel speed response (s).
pub const WHEEL_TAU: f64 = 0.05;
/// Firmware clamp of motor targets.
pub const MAX_TARGET: i16 = MOTOR_TARGET_LIMIT;
/// Instructions per event before the firmware kills it.
pub const STEPS_LIMIT: u16 = 0xFFFF;
/// Instructions per event before Aseba Playground kills it.
pub const PLAYGROUND_STEPS_LIMIT: u16 = 1000;

/// Sampling periods (ms) of the buttons and the accelerometer, and the step limit: firmware 14
/// (buttons 50 Hz, acc 1 kHz / 62) or Aseba Playground (20 Hz, every 6th 100 Hz tick).
fn rates(playground: bool) -> (u64, u64, u16) {
    if playground {
        (50, 60, PLAYGROUND_STEPS_LIMIT)
    } else {
        (20, 62, STEPS_LIMIT)
    }
}
/// Bytes of incoming frames a robot holds before it drops new ones (its reception buffer).
pub const INBOX_BYTES: usize = 1 << 16;

// The sensors' poses in the body frame (horizontal: x, y, heading; ground: x, y) and the
// horizontal sensors' range are the robot profile's (`msgs::thymio`, ros-aseba-interface.md §5).

/// Horizontal sensor reading at distance `d` (inverse of the driver's distance model,
/// ros-aseba-interface.md §3.6).
pub fn prox_reading(d: f64) -> f64 {
    let [r_max, x0, c] = PROXIMITY_MODEL;
    r_max / (1.0 + (d - x0).powi(2) / (c - x0 * x0))
}

/// Planar pose.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Pose {
    /// m.
    pub x: f64,
    /// m.
    pub y: f64,
    /// rad.
    pub theta: f64,
}

/// Writes frames sent by the node into a byte buffer.
struct FrameOut<'a> {
    source: u16,
    buf: &'a mut Vec<u8>,
}

impl Outbox for FrameOut<'_> {
    fn send(&mut self, msg: &Message<'_>) {
        let mut frame = [0u8; MAX_FRAME];
        match msg.encode(self.source, &mut frame) {
            Ok(n) => self.buf.extend_from_slice(&frame[..n]),
            Err(e) => {
                tracing::warn!(source = self.source, %e, "simulated node cannot send a message")
            }
        }
    }
}

/// One robot.
#[derive(Debug)]
pub struct Robot {
    /// The Aseba node.
    pub node: Node,
    /// The firmware.
    pub fw: Firmware,
    /// Pose in the arena.
    pub pose: Pose,
    /// Actual wheel speeds (motor units).
    pub wheels: [f64; 2],
    /// Motor targets applied by the last main-loop iteration (clamped).
    pub targets: [i16; 2],
    /// Buttons held (backward, left, center, forward, right).
    pub buttons: [bool; BUTTON_COUNT],
    /// Whether the robot is powered (false after `_poweroff`).
    pub powered: bool,
    /// Milliseconds since start.
    pub clock_ms: u64,
    /// Collisions so far.
    pub collisions: u64,
    /// How its wheels differ from ideal ones (ideal unless the world draws them).
    pub wheel_model: Wheels,
    rng: Rng,
    last_buttons: [bool; BUTTON_COUNT],
    timers: [u32; 2],
    periods: [i16; 2],
    /// Whole frames waiting for the firmware, back to back (allocated once).
    inbox: VecDeque<u8>,
    inbox_frames: usize,
    /// Frames dropped because the inbox was full.
    pub inbox_dropped: u64,
    /// Frames sent by the node since the last [`Robot::take_output`].
    out: Vec<u8>,
    tap: bool,
    /// Body speed (m/s) at the last step, and the filtered body acceleration (lateral to the
    /// left, forward; m/s²) the accelerometer feels.
    body_speed: f64,
    accel: [f64; 2],
    /// Value received by IR communication, pending its event.
    pub comm_rx: Option<i16>,
    /// The battery (`_vbat`).
    pub battery: super::battery::Battery,
    /// Lifted by a client (`acc` written: see `lift`).
    pub lift: super::lift::Lift,
}

impl Robot {
    /// A robot with no program, at `pose`.
    pub fn new(description: TargetDescription, config: NodeConfig, pose: Pose, seed: u64) -> Robot {
        let mut rng = Rng::new(seed);
        let mut fw = Firmware::new(&description, config.id, rng.next_u32() as u16);
        let mut node = Node::new(description, config);
        // power-on: zeroed memory with the identity variables, no program (flags 0)
        crate::vm::Target::reset(&mut fw, &mut node.vm);
        let out = Vec::with_capacity(4096);
        Robot {
            node,
            fw,
            pose,
            wheels: [0.0; 2],
            targets: [0; 2],
            buttons: [false; BUTTON_COUNT],
            powered: true,
            clock_ms: 0,
            collisions: 0,
            wheel_model: Wheels::default(),
            rng,
            last_buttons: [false; BUTTON_COUNT],
            timers: [0; 2],
            periods: [0; 2],
            inbox: VecDeque::with_capacity(INBOX_BYTES),
            inbox_frames: 0,
            inbox_dropped: 0,
            out,
            tap: false,
            body_speed: 0.0,
            accel: [0.0; 2],
            comm_rx: None,
            battery: Default::default(),
            lift: Default::default(),
        }
    }

    /// Node id.
    pub fn id(&self) -> u16 {
        self.node.config.id
    }

    /// Queues a whole frame for the node (the firmware takes one per main-loop iteration);
    /// dropped when the reception buffer is full or the robot is off. Never allocates.
    pub fn deliver(&mut self, frame: &[u8]) {
        if !self.powered {
            return;
        }
        let whole = read_header(frame).is_some_and(|h| HEADER_LEN + h.len == frame.len());
        if !whole || frame.len() > MAX_FRAME || self.inbox.len() + frame.len() > INBOX_BYTES {
            self.inbox_dropped += 1;
            return;
        }
        self.inbox.extend(frame.iter().copied());
        self.inbox_frames += 1;
    }

    /// Takes the oldest waiting frame into `buf`; returns its length.
    fn next_frame(&mut self, buf: &mut [u8; MAX_FRAME]) -> Option<usize> {
        if self.inbox_frames == 0 {
            return None;
        }
        let len = HEADER_LEN + u16::from_le_bytes([self.inbox[0], self.inbox[1]]) as usize;
        for (slot, b) in buf.iter_mut().zip(self.inbox.drain(..len)) {
            *slot = b;
        }
        self.inbox_frames -= 1;
        Some(len)
    }

    /// Takes the bytes of the frames the node sent.
    pub fn take_output(&mut self, into: &mut Vec<u8>) {
        into.extend_from_slice(&self.out);
        self.out.clear();
    }

    /// Requests a tap (as a knock on the robot).
    pub fn tap(&mut self) {
        self.tap = true;
    }

    fn addrs(&self) -> &Addrs {
        &self.fw.addrs
    }

    /// Advances one millisecond. `others` are the other robots' positions and IR transmissions.
    pub fn tick(&mut self, arena: &Arena, others: &[(f64, f64, Option<i16>)]) {
        if !self.powered {
            return;
        }
        self.clock_ms += 1;
        let t = self.clock_ms;
        self.physics(arena, others, 0.001);
        self.battery.drain(self.wheels, 0.001);
        if t.is_multiple_of(10) {
            self.motor_sample();
        }
        let (buttons_ms, acc_ms, _) = rates(self.fw.playground);
        if t.is_multiple_of(buttons_ms) {
            self.buttons_sample();
        }
        if t.is_multiple_of(acc_ms) || self.tap {
            self.acc_sample();
        }
        if t.is_multiple_of(100) {
            self.prox_sample(arena, others);
        }
        if t.is_multiple_of(16) {
            self.mic_sample();
        }
        if t.is_multiple_of(1000) {
            let temp = 250 + self.rng.noise(2.0) as i16;
            let a = self.fw.addrs.temperature;
            addrs::write(self.node.vm.variables_mut(), a, 0, temp);
            // the battery (655 ≈ 3.3 V on the firmware's ADC scale; a value written by a client is its new level)
            let a = self.fw.addrs.vbat;
            let current = addrs::read(self.node.vm.variables(), a, 0);
            let vbat = self.battery.sample(current, self.rng.noise(1.0));
            addrs::write(self.node.vm.variables_mut(), a, 0, vbat);
            self.fw.trigger(ev::TEMPERATURE);
        }
        self.timers_tick();
        if let Some(ms) = self.fw.sound.remaining_ms {
            if ms <= 1 {
                self.fw.sound.remaining_ms = None;
                self.fw.trigger(ev::SOUND_FINISHED);
            } else {
                self.fw.sound.remaining_ms = Some(ms - 1);
            }
        }
        self.main_loop();
    }

    /// Wheels follow their targets; the body moves unless it would enter a wall, an obstacle
    /// or another robot (a move out of an overlap is always allowed, so robots placed
    /// overlapping can separate).
    fn physics(&mut self, arena: &Arena, others: &[(f64, f64, Option<i16>)], dt: f64) {
        let k = dt / WHEEL_TAU;
        // the true surface speeds: the speed reading (`wheels`) does not see the gains
        let [ul, ur] = self.wheel_model.follow(&mut self.wheels, self.targets, k);
        let (vl, vr) = (ul * UNIT_SPEED, ur * UNIT_SPEED);
        let v = (vl + vr) / 2.0;
        let w = (vr - vl) / AXIS_LENGTH;
        let p = self.pose;
        if !arena.has_floor(p.x, p.y) || self.lift.lifted() {
            return; // fell off the table, or in the air: the wheels turn, it does not move
        }
        let theta = p.theta + w * dt;
        let mid = p.theta + w * dt / 2.0;
        let (x, y) = (p.x + v * dt * mid.cos(), p.y + v * dt * mid.sin());
        self.pose.theta = (theta + std::f64::consts::PI).rem_euclid(2.0 * std::f64::consts::PI)
            - std::f64::consts::PI;
        let blocked = |x: f64, y: f64| {
            arena.collides(x, y, BODY_RADIUS)
                || others.iter().any(|(ox, oy, _)| {
                    let (dx, dy) = (x - ox, y - oy);
                    dx * dx + dy * dy < 4.0 * BODY_RADIUS * BODY_RADIUS
                })
        };
        if blocked(x, y) && !blocked(p.x, p.y) {
            if v.abs() > 0.05 {
                self.tap = true;
            }
            self.collisions += 1;
        } else {
            self.pose.x = x;
            self.pose.y = y;
        }
        // what the accelerometer feels: forward acceleration and centripetal acceleration,
        // filtered over ~20 ms (the sensor averages between its 16 Hz samples)
        let moved = self.pose.x != p.x || self.pose.y != p.y;
        let speed = if moved { v } else { 0.0 };
        let inst = [speed * w, (speed - self.body_speed) / dt];
        self.body_speed = speed;
        let k = (dt / 0.02).min(1.0);
        for (a, i) in self.accel.iter_mut().zip(inst) {
            *a += (i - *a) * k;
        }
    }

    fn motor_sample(&mut self) {
        let a = self.addrs().clone();
        let noise = [self.rng.noise(3.0), self.rng.noise(3.0)];
        let vars = self.node.vm.variables_mut();
        for (i, (speed, pwm)) in [
            (a.motor_left_speed, a.motor_left_pwm),
            (a.motor_right_speed, a.motor_right_pwm),
        ]
        .into_iter()
        .enumerate()
        {
            let measured = if self.wheels[i].abs() < 0.5 {
                0.0
            } else {
                self.wheels[i] + noise[i]
            };
            addrs::write(vars, speed, 0, measured.round() as i16);
            addrs::write(
                vars,
                pwm,
                0,
                (self.targets[i] as f64 * 0.8).clamp(-801.0, 801.0) as i16,
            );
        }
        self.fw.trigger(ev::MOTOR);
    }

    fn buttons_sample(&mut self) {
        let a = self.addrs().clone();
        let vars = self.node.vm.variables_mut();
        for i in 0..5 {
            addrs::write(vars, a.buttons[i], 0, self.buttons[i] as i16);
            addrs::write(
                vars,
                a.buttons_raw,
                i as u32,
                if self.buttons[i] { 2000 } else { 300 },
            );
            if self.buttons[i] != self.last_buttons[i] {
                self.fw.trigger(ev::BUTTON_BACKWARD + i as u32);
            }
        }
        self.last_buttons = self.buttons;
        self.fw.trigger(ev::BUTTONS);
    }

    fn acc_sample(&mut self) {
        let a = self.addrs().clone();
        // 1 g ≈ 23; axes: x right→left, y front→back, z top→bottom (gravity reads +z)
        let scale = ACC_PER_G / G;
        let physics = [
            (self.accel[0] * scale + self.rng.noise(0.6)).round() as i16,
            (-self.accel[1] * scale + self.rng.noise(0.6)).round() as i16,
            (22.0 + self.rng.noise(0.6)).round() as i16,
        ];
        let vars = self.node.vm.variables_mut();
        let current = [0, 1, 2].map(|i| addrs::read(vars, a.acc, i));
        let values = self.lift.sample(current, physics);
        for (i, v) in values.iter().enumerate() {
            addrs::write(vars, a.acc, i as u32, *v);
        }
        if self.tap {
            self.tap = false;
            addrs::write(vars, a.acc_tap, 0, 1);
            self.fw.trigger(ev::TAP);
        }
        self.fw.trigger(ev::ACC);
    }

    fn mic_sample(&mut self) {
        let a = self.addrs().clone();
        let intensity = (self.rng.noise(1.5).abs() + 2.0) as i16;
        let vars = self.node.vm.variables_mut();
        addrs::write(vars, a.mic_intensity, 0, intensity);
        let threshold = addrs::read(vars, a.mic_threshold, 0);
        if threshold > 0 && intensity > threshold {
            self.fw.trigger(ev::MIC);
        }
    }

    /// Distance seen by a sensor at (ox, oy) looking along `heading` (3 rays over its cone).
    fn sense(
        &self,
        arena: &Arena,
        others: &[(f64, f64, Option<i16>)],
        ox: f64,
        oy: f64,
        heading: f64,
    ) -> Option<f64> {
        let mut best: Option<f64> = None;
        for da in [-0.15, 0.0, 0.15] {
            let h = heading + da;
            let (dx, dy) = (h.cos(), h.sin());
            let mut hit = arena.ray(ox, oy, h, PROXIMITY_REACH);
            // only the robots that can be within range
            let reach = PROXIMITY_REACH + BODY_RADIUS;
            for (x, y, _) in others {
                let (ex, ey) = (x - ox, y - oy);
                if ex * ex + ey * ey > reach * reach {
                    continue;
                }
                if let Some(t) = ray_circle(ox, oy, dx, dy, *x, *y, BODY_RADIUS) {
                    if t <= PROXIMITY_REACH {
                        hit = Some(hit.map_or(t, |b: f64| b.min(t)));
                    }
                }
            }
            if let Some(t) = hit {
                best = Some(best.map_or(t, |b: f64| b.min(t)));
            }
        }
        best
    }

    fn prox_sample(&mut self, arena: &Arena, others: &[(f64, f64, Option<i16>)]) {
        let a = self.addrs().clone();
        let p = self.pose;
        let (c, s) = (p.theta.cos(), p.theta.sin());
        let mut readings = [0i16; PROXIMITY_COUNT];
        for (i, [sx, sy, sa]) in PROXIMITY_POSES.iter().enumerate() {
            let (ox, oy) = (p.x + sx * c - sy * s, p.y + sx * s + sy * c);
            if let Some(d) = self.sense(arena, others, ox, oy, p.theta + sa) {
                readings[i] = (prox_reading(d) + self.rng.noise(20.0)).clamp(0.0, 4600.0) as i16;
            }
        }
        let mut ground = [(0i16, 0i16); GROUND_COUNT];
        for (i, [gx, gy]) in GROUND_POSES.iter().enumerate() {
            let (x, y) = (p.x + gx * c - gy * s, p.y + gx * s + gy * c);
            let ambient = (20.0 + self.rng.noise(2.0)).clamp(0.0, 1023.0) as i16;
            // in the air: no floor under either sensor
            let floor = arena.ground_at(x, y).filter(|_| !self.lift.lifted());
            let reflected = ground_reflected(floor, ambient, &mut self.rng);
            ground[i] = (ambient, reflected);
        }
        let vars = self.node.vm.variables_mut();
        for (i, r) in readings.iter().enumerate() {
            addrs::write(vars, a.prox_horizontal, i as u32, *r);
        }
        for (i, (ambient, reflected)) in ground.iter().enumerate() {
            addrs::write(vars, a.ground_ambiant, i as u32, *ambient);
            addrs::write(vars, a.ground_reflected, i as u32, *reflected);
            addrs::write(vars, a.ground_delta, i as u32, reflected - ambient);
        }
        // IR communication: the strongest transmission of a robot close enough
        if self.fw.prox_comm {
            let near = others
                .iter()
                .filter_map(|(x, y, tx)| tx.map(|v| ((x - p.x).hypot(y - p.y), v)))
                .filter(|(d, _)| *d < 0.3)
                .min_by(|a, b| a.0.total_cmp(&b.0));
            if let Some((_, v)) = near {
                addrs::write(vars, a.prox_comm_rx, 0, v);
                self.fw.trigger(ev::PROX_COMM);
            }
        }
        self.fw.trigger(ev::PROX);
    }

    /// What this robot transmits by IR communication, if enabled.
    pub fn comm_tx(&self) -> Option<i16> {
        self.fw
            .prox_comm
            .then(|| addrs::read(self.node.vm.variables(), self.fw.addrs.prox_comm_tx, 0) & 0x7FF)
    }

    fn timers_tick(&mut self) {
        let a = self.fw.addrs.timer_period;
        for i in 0..2 {
            let period = addrs::read(self.node.vm.variables(), a, i as u32);
            if period != self.periods[i] {
                self.periods[i] = period;
                self.timers[i] = 0;
            }
            if period > 0 {
                self.timers[i] += 1;
                if self.timers[i] >= period as u32 {
                    self.timers[i] = 0;
                    self.fw.trigger(ev::TIMER0 + i as u32);
                }
            }
        }
    }

    /// Outputs the firmware applies once per main-loop iteration.
    fn apply_outputs(&mut self) {
        let a = &self.fw.addrs;
        let vars = self.node.vm.variables();
        self.targets = [
            addrs::read(vars, a.motor_left_target, 0).clamp(-MAX_TARGET, MAX_TARGET),
            addrs::read(vars, a.motor_right_target, 0).clamp(-MAX_TARGET, MAX_TARGET),
        ];
        self.fw.apply_led_variables(vars);
    }

    /// Firmware main loop iterations until there is nothing left to do (bounded).
    fn main_loop(&mut self) {
        for _ in 0..64 {
            let id = self.node.config.id;
            // the frame this iteration will process (the VM run does not touch the inbox)
            let mut bytes = [0u8; MAX_FRAME];
            let incoming = self.next_frame(&mut bytes);
            let mut out = FrameOut {
                source: id,
                buf: &mut self.out,
            };
            let (_, _, steps_limit) = rates(self.fw.playground);
            self.node.vm.run(steps_limit, &mut self.fw, &mut out);
            if let Some(n) = incoming {
                if let Ok((frame, _)) = Frame::parse(&bytes[..n]) {
                    if let Ok(msg) = frame.message() {
                        if self.node.handle(frame.source, &msg, &mut self.fw, &mut out)
                            == NodeRequest::Reboot
                        {
                            self.fw.reboot = true;
                        }
                    }
                }
            }
            self.apply_outputs();
            let vm = &mut self.node.vm;
            // firmware: the next local event when the VM is idle (or paused without an event)
            if !vm.event_active() {
                if let Some(i) = self.fw.take_event() {
                    let mut out = FrameOut {
                        source: id,
                        buf: &mut self.out,
                    };
                    if let Some(slot) = self.node.vm.variables_mut().get_mut(1) {
                        *slot = id as i16;
                    }
                    self.node.vm.setup_event(0xFFFE - i as u16, &mut out);
                }
            }
            if self.fw.reboot {
                self.reboot();
            }
            if self.fw.power_off {
                self.powered = false;
                self.targets = [0, 0];
                self.wheels = [0.0, 0.0];
                return;
            }
            let busy = self.node.vm.event_active() && !self.node.vm.step_by_step();
            if incoming.is_none() && !busy && self.fw.pending == 0 {
                break;
            }
        }
    }

    /// Reboot: memory cleared, the flashed program (if any) loaded and started.
    pub fn reboot(&mut self) {
        self.fw.reboot = false;
        let id = self.node.config.id;
        let mut out = FrameOut {
            source: id,
            buf: &mut self.out,
        };
        let vm = &mut self.node.vm;
        vm.clear_breakpoints();
        match self.node.flash.clone() {
            Some(code) => {
                let _ = vm.write_bytecode(0, code.into_iter());
                vm.boot(&mut self.fw, &mut out);
            }
            None => {
                // as a real Thymio with nothing in flash: a fresh VM, pc 0 and flags 0
                vm.init();
                crate::vm::Target::reset(&mut self.fw, vm);
            }
        }
        self.inbox.clear();
        self.inbox_frames = 0;
        self.targets = [0, 0];
    }

    /// A copy of the variables.
    pub fn variables(&self) -> &[i16] {
        self.node.vm.variables()
    }

    /// Variable by name (whole array), if described.
    pub fn variable(&self, name: &str) -> Option<&[i16]> {
        let v = self.node.description.variable(name)?;
        self.node
            .vm
            .variables()
            .get(v.address as usize..v.address as usize + v.size as usize)
    }

    /// Number of frames waiting for the firmware.
    pub fn inbox_len(&self) -> usize {
        self.inbox_frames
    }
}
