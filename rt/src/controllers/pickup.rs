//! The pick-up reflex: every wheel stops while the accelerometer says the robot left the floor, in the RT cycle
//! like the cliff stop, whatever the owner commands (a twist, wheel speeds or raw targets become a `Stop`: a
//! robot in a hand neither drives nor turns).
//!
//! The rule, on the script's `accelerometer` event (the mean of `acc` over `ACC_PERIOD` samples, 8 Hz with the
//! default script; `acc` in the firmware's units, 1 g ≈ 23 — aseba.md; x right→left, y front→back, z
//! top→bottom, so a robot on a level floor reads z ≈ 22):
//! - a sample is **off the floor** when the robot is tilted beyond what a floor allows (`z < z_min`: 15 ≈ 49°
//!   of tilt, far steeper than any floor it can drive on) or weighs less than half a g (`|a|² < 12²`: falling,
//!   thrown, or the hand dropping it);
//! - a sample is **on the floor** when `z ≥ 19` (less than ~35° of tilt) with `|x|, |y| ≤ 8` (no more than a
//!   third of a g sideways: the robot's own driving stays under ~0.2 g);
//! - the reflex **engages** after `samples` consecutive off-the-floor samples (2: a quarter of a second, so that
//!   a bump while driving does not stop the robot) and **releases** after `2 × samples` consecutive on-the-floor
//!   samples (half a second set down). Samples in between (neither) keep the state. A reading older than
//!   `max_age_ns` releases the hold (no accelerometer: nothing to go by, as the cliff stop with no ground reading).
//!
//! Limitation: a robot lifted and held level, still, reads like the floor (the accelerometer feels only gravity):
//! the reflex catches the tilt and the jolt of picking it up, not a perfectly level lift.

use super::reflex::{ReflexEvent, ReflexState};
use super::{Filter, RobotView};
use handoff::{
    Intake, RecInput, RobotId, RtIntake, RtLatest, RtPublisher, WheelCommand, MAX_ROBOTS,
};

/// Tunables (changeable at run time through an [`RtLatest`] cell).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PickupStopParams {
    /// Off switch.
    pub enabled: bool,
    /// `acc` z below which the robot is tilted off the floor (1 g ≈ 23).
    pub z_min: i16,
    /// Consecutive off-the-floor samples that engage the reflex (twice as many on the floor release it).
    pub samples: u8,
    /// Readings older than this are ignored (ns).
    pub max_age_ns: u64,
}

/// Taken from its live cell, recorded as [`RecInput::ReflexParams`] of reflex 2 (the pick-up stop: `threshold` is
/// its `z_min`, `samples` its own): a replay puts them back.
impl Intake for PickupStopParams {
    type Value = Self;
    type Key = ();
    fn rec_input((): (), p: Self, _: (RobotId, u8)) -> RecInput {
        RecInput::ReflexParams {
            reflex: 2,
            enabled: p.enabled,
            threshold: p.z_min,
            samples: p.samples,
            max_age_ns: p.max_age_ns,
        }
    }
}

impl Default for PickupStopParams {
    fn default() -> Self {
        PickupStopParams {
            enabled: true,
            z_min: 15,
            samples: 2,
            max_age_ns: 1_000_000_000,
        }
    }
}

/// `|a|²` below this (half a g, squared) is free fall.
const FREE_FALL_SQ: i32 = 12 * 12;
/// On the floor: z at least this…
const FLOOR_Z: i16 = 19;
/// …and x, y within this.
const FLOOR_SIDE: i16 = 8;

/// What one accelerometer sample says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sample {
    /// Off the floor (tilted or falling).
    Off,
    /// On the floor.
    On,
    /// Neither: keeps the state.
    Unsure,
}

/// Classifies one `acc` sample with `z_min` (see the module documentation).
pub fn classify(acc: [i16; 3], z_min: i16) -> Sample {
    let [x, y, z] = acc.map(i32::from);
    if acc[2] < z_min || x * x + y * y + z * z < FREE_FALL_SQ {
        Sample::Off
    } else if acc[2] >= FLOOR_Z && acc[0].abs() <= FLOOR_SIDE && acc[1].abs() <= FLOOR_SIDE {
        Sample::On
    } else {
        Sample::Unsure
    }
}

/// Pick-up reflex (engage/release edges as [`ReflexEvent`]s).
#[derive(Debug)]
pub struct PickupStop {
    params: PickupStopParams,
    live: Option<RtIntake<PickupStopParams>>,
    state: ReflexState,
    /// Per robot: receive time of the last sample counted, and the run of like samples.
    last_t: [Option<u64>; MAX_ROBOTS],
    off_run: [u8; MAX_ROBOTS],
    on_run: [u8; MAX_ROBOTS],
}

impl PickupStop {
    /// With fixed parameters.
    pub fn new(params: PickupStopParams) -> Self {
        PickupStop {
            params,
            live: None,
            state: ReflexState::default(),
            last_t: [None; MAX_ROBOTS],
            off_run: [0; MAX_ROBOTS],
            on_run: [0; MAX_ROBOTS],
        }
    }

    /// Takes its parameters from an NRT-fed latest-value cell (a ROS parameter).
    pub fn with_live_params(mut self, live: RtLatest<PickupStopParams>) -> Self {
        self.live = Some(RtIntake::new(live, ()));
        self
    }

    /// Reports engage/release edges to NRT.
    pub fn with_events(mut self, events: RtPublisher<ReflexEvent>) -> Self {
        self.state.set_events(events);
        self
    }

    /// Whether the reflex currently holds `robot`.
    pub fn engaged(&self, robot: RobotId) -> bool {
        self.state.engaged(robot)
    }

    /// Counts a new sample of robot `i`; whether the robot is held after it.
    fn count(&mut self, i: usize, sample: Sample, held: bool) -> bool {
        let need = self.params.samples.max(1);
        let (off, on) = (&mut self.off_run[i], &mut self.on_run[i]);
        match sample {
            Sample::Off => {
                *off = off.saturating_add(1);
                *on = 0;
            }
            Sample::On => {
                *on = on.saturating_add(1);
                *off = 0;
            }
            Sample::Unsure => {}
        }
        if *off >= need {
            true
        } else if u16::from(*on) >= 2 * u16::from(need) {
            false
        } else {
            held
        }
    }
}

impl Filter for PickupStop {
    fn update(&mut self, robot: &RobotView, cmd: &mut WheelCommand) {
        if let Some(live) = &mut self.live {
            self.params = live.rt_read().0;
        }
        let i = robot.robot.index();
        if i >= MAX_ROBOTS {
            return;
        }
        let p = self.params;
        let fresh = robot
            .acc_t_ns
            .filter(|&t| robot.now_ns.saturating_sub(t) <= p.max_age_ns);
        let mut held = self.state.engaged(robot.robot);
        match fresh {
            Some(t) if p.enabled => {
                if self.last_t[i] != Some(t) {
                    self.last_t[i] = Some(t);
                    held = self.count(i, classify(robot.acc, p.z_min), held);
                }
            }
            _ => {
                held = false;
                self.off_run[i] = 0;
                self.on_run[i] = 0;
            }
        }
        if held {
            *cmd = WheelCommand::Stop;
        }
        self.state.record(robot, held);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use handoff::{latest, publisher, Twist2};

    const FLOOR: [i16; 3] = [0, 1, 22];
    const TILTED: [i16; 3] = [2, 18, 12];

    fn twist() -> WheelCommand {
        WheelCommand::Twist(Twist2 {
            linear: 0.1,
            angular: 0.5,
        })
    }

    fn view(acc: [i16; 3], t: u64) -> RobotView {
        RobotView {
            robot: RobotId(1),
            now_ns: t,
            acc,
            acc_t_ns: Some(t),
            link_up: true,
            ..RobotView::default()
        }
    }

    #[test]
    fn samples_are_told_apart() {
        assert_eq!(classify(FLOOR, 15), Sample::On);
        // driving: a fifth of a g forward and sideways stays on the floor
        assert_eq!(classify([4, -5, 22], 15), Sample::On);
        assert_eq!(classify(TILTED, 15), Sample::Off);
        assert_eq!(classify([0, 0, 3], 15), Sample::Off, "free fall");
        assert_eq!(classify([0, 0, -22], 15), Sample::Off, "upside down");
        assert_eq!(classify([12, 0, 17], 15), Sample::Unsure);
    }

    #[test]
    fn holds_every_wheel_after_two_samples_off_the_floor_and_releases_after_four_on_it() {
        let (pub_rt, mut pub_nrt) = publisher(8);
        let mut f = PickupStop::new(PickupStopParams::default()).with_events(pub_rt);
        let mut t = 1_000;
        let mut step = |f: &mut PickupStop, acc, cmd: WheelCommand| {
            t += 125_000_000;
            let mut c = cmd;
            f.update(&view(acc, t), &mut c);
            c
        };
        assert_eq!(step(&mut f, FLOOR, twist()), twist());
        assert_eq!(
            step(&mut f, TILTED, twist()),
            twist(),
            "one sample is a bump"
        );
        assert_eq!(step(&mut f, TILTED, twist()), WheelCommand::Stop);
        assert!(f.engaged(RobotId(1)));
        for cmd in [
            WheelCommand::WheelSpeeds([0.1, -0.1]),
            WheelCommand::Targets([-300, 300]),
        ] {
            assert_eq!(
                step(&mut f, [5, 12, 17], cmd),
                WheelCommand::Stop,
                "unsure keeps it"
            );
        }
        for _ in 0..3 {
            assert_eq!(step(&mut f, FLOOR, twist()), WheelCommand::Stop);
        }
        assert_eq!(
            step(&mut f, FLOOR, twist()),
            twist(),
            "half a second set down"
        );
        let edges: Vec<bool> = std::iter::from_fn(|| pub_nrt.nrt_pop())
            .map(|e| e.engaged)
            .collect();
        assert_eq!(edges, [true, false]);
    }

    #[test]
    fn the_same_sample_counts_once_and_stale_or_disabled_releases() {
        let (live_rt, mut live_nrt) = latest(PickupStopParams::default());
        let mut f = PickupStop::new(PickupStopParams::default()).with_live_params(live_rt);
        // one sample seen over many RT cycles is one sample
        let mut cmd = twist();
        for now in 0..10 {
            let mut v = view(TILTED, 5);
            v.now_ns = 5 + now;
            f.update(&v, &mut cmd);
        }
        assert_eq!(cmd, twist());
        f.update(&view(TILTED, 10), &mut cmd);
        assert_eq!(cmd, WheelCommand::Stop);
        // stale: released
        let mut v = view(TILTED, 10);
        v.now_ns = 10 + 2_000_000_000;
        let mut cmd = twist();
        f.update(&v, &mut cmd);
        assert_eq!(cmd, twist());
        // disabled live: never held
        live_nrt.nrt_store(PickupStopParams {
            enabled: false,
            ..Default::default()
        });
        for t in 20..30 {
            let mut cmd = twist();
            f.update(&view(TILTED, t), &mut cmd);
            assert_eq!(cmd, twist());
        }
    }
}
