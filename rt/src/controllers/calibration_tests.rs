//! The controller against a kinematic robot pivoting over a line: wheels with a true speed gain
//! its speed reading does not see and a deadband, ground sensors sampled at 10 Hz (with a
//! little noise), odometry at 20 Hz, the RT cycle at 100 Hz.

use super::*;
use handoff::{
    calibration_port, NodeId, NrtCalibrationPort, OwnerId, Pose2, RobotCalibration, RobotId,
    Twist2, MAX_SWEEP,
};
use msgs::thymio::{GROUND_COUNT, GROUND_POSES, PROXIMITY_COUNT};

const MS: u64 = 1_000_000;

struct Bot {
    x: f64,
    y: f64,
    theta: f64,
    gain: [f64; 2],
    deadband: [i16; 2],
    targets: [i16; 2],
    t_ns: u64,
    ground: [i16; GROUND_COUNT],
    ground_t: Option<u64>,
    wheel_vel: [f64; 2],
    odom_t: Option<u64>,
    noise: u64,
}

impl Bot {
    fn new(gain: [f64; 2], deadband: [i16; 2]) -> Bot {
        Bot {
            x: 0.0,
            y: 0.0,
            theta: 0.0,
            gain,
            deadband,
            targets: [0; 2],
            t_ns: 1_000 * MS,
            ground: [0; GROUND_COUNT],
            ground_t: None,
            wheel_vel: [0.0; 2],
            odom_t: None,
            noise: 1,
        }
    }

    fn cal() -> RobotCalibration {
        RobotCalibration::default()
    }

    fn moving(&self, i: usize) -> f64 {
        let t = self.targets[i];
        if t.abs() <= self.deadband[i] {
            0.0
        } else {
            t as f64
        }
    }

    /// Advances 1 ms.
    fn step(&mut self) {
        let q0 = Self::cal().left.q0;
        let v = [0, 1].map(|i| self.moving(i) * q0 * self.gain[i]);
        let l = Self::cal().axis_length;
        let (lin, ang) = ((v[0] + v[1]) / 2.0, (v[1] - v[0]) / l);
        let dt = 0.001;
        self.x += lin * dt * self.theta.cos();
        self.y += lin * dt * self.theta.sin();
        self.theta += ang * dt;
        self.t_ns += MS;
        if self.t_ns.is_multiple_of(100 * MS) {
            let (c, s) = (self.theta.cos(), self.theta.sin());
            // the Thymio's ground sensors, in the body frame
            for (i, [gx, gy]) in GROUND_POSES.iter().enumerate() {
                let x = self.x + gx * c - gy * s;
                // a 3 cm dark line along y (under the axle at the start)
                let base = if x.abs() <= 0.015 { 80.0 } else { 950.0 };
                self.noise = self.noise.wrapping_mul(6364136223846793005).wrapping_add(1);
                let n = ((self.noise >> 33) % 11) as f64 - 5.0;
                self.ground[i] = (base + n) as i16;
            }
            self.ground_t = Some(self.t_ns);
        }
        if self.t_ns.is_multiple_of(50 * MS) {
            // the robot's own reading: the motor speed, gain unseen
            let r = Self::cal().wheel_radius;
            self.wheel_vel = [0, 1].map(|i| self.moving(i) * q0 / r);
            self.odom_t = Some(self.t_ns);
        }
    }

    fn view(&self) -> RobotView {
        RobotView {
            robot: RobotId(0),
            node: NodeId(1),
            now_ns: self.t_ns,
            pose: Pose2::default(),
            twist: Twist2::default(),
            odom_t_ns: self.odom_t,
            wheel_pos: [0.0; 2],
            wheel_vel: self.wheel_vel,
            proximity: [0; PROXIMITY_COUNT],
            proximity_t_ns: None,
            ground: self.ground,
            ground_t_ns: self.ground_t,
            acc: [0; 3],
            acc_t_ns: None,
            link_up: true,
            stale: false,
            set_point: Twist2::default(),
            owner: OwnerId::controller(0),
            calibration: Self::cal(),
            reflexes: Default::default(),
        }
    }
}

fn run(speeds: &[i16], wheel: Wheel, deadband: bool) -> WheelRun {
    let mut s = [0; MAX_SWEEP];
    s[..speeds.len()].copy_from_slice(speeds);
    WheelRun {
        wheel,
        deadband,
        deadband_max: 60,
        speeds: s,
        speeds_len: speeds.len() as u8,
        samples: 4,
        timeout_ns: 30_000 * MS,
    }
}

/// Runs the controller until it reports Done/Failed or `limit_s` passes; returns the reports.
fn drive(
    bot: &mut Bot,
    c: &mut CalibrateMotors,
    nrt: &mut NrtCalibrationPort,
    limit_s: u64,
) -> Vec<CalReport> {
    let mut reports = Vec::new();
    for ms in 0..limit_s * 1000 {
        bot.step();
        if ms % 10 == 0 {
            let view = bot.view();
            c.serve(&view, true);
            bot.targets = match c.update(&view) {
                WheelCommand::Targets(t) => t,
                WheelCommand::Stop => [0, 0],
                other => panic!("unexpected {other:?}"),
            };
        }
        while let Some(r) = nrt.nrt_next_report() {
            let end = matches!(r, CalReport::Done { .. } | CalReport::Failed { .. });
            reports.push(r);
            if end {
                return reports;
            }
        }
    }
    reports
}

fn speeds_of(reports: &[CalReport], target: i16) -> Vec<f64> {
    reports
        .iter()
        .filter_map(|r| match r {
            CalReport::Sample {
                target: t, speed, ..
            } if *t == target => Some(*speed),
            _ => None,
        })
        .collect()
}

#[test]
fn measures_true_speeds_and_the_deadband_and_comes_back() {
    let (rt, mut nrt) = calibration_port();
    let mut c = CalibrateMotors::new(rt);
    let mut bot = Bot::new([1.06, 0.96], [9, 0]);
    nrt.nrt_send(CalCommand::Run(run(&[200, 400], Wheel::Left, true)))
        .unwrap();
    let reports = drive(&mut bot, &mut c, &mut nrt, 120);
    assert_eq!(
        reports.first(),
        Some(&CalReport::Started { wheel: Wheel::Left })
    );
    assert!(
        reports.contains(&CalReport::Deadband {
            wheel: Wheel::Left,
            units: 9
        }),
        "{reports:?}"
    );
    assert_eq!(
        reports.last(),
        Some(&CalReport::Done { wheel: Wheel::Left })
    );
    let q0 = Bot::cal().left.q0;
    for target in [200, 400] {
        let got = speeds_of(&reports, target);
        assert_eq!(got.len(), 4, "{reports:?}");
        let mean = got.iter().sum::<f64>() / got.len() as f64;
        let truth = 1.06 * q0 * target as f64;
        assert!(
            (mean / truth - 1.0).abs() < 0.01,
            "{target}: {mean} vs {truth}"
        );
    }
    // the robot faces (nearly) as it did at the start of the sweep, stopped
    let turned =
        (bot.theta + std::f64::consts::PI).rem_euclid(std::f64::consts::TAU) - std::f64::consts::PI;
    assert!(turned.abs() < 0.15, "{turned}");
    assert_eq!(bot.targets, [0, 0]);
    assert!(!c.running());
    // then the other wheel, from there: the line is still under the new pivot
    nrt.nrt_send(CalCommand::Run(run(&[300], Wheel::Right, false)))
        .unwrap();
    let reports = drive(&mut bot, &mut c, &mut nrt, 120);
    assert_eq!(
        reports.last(),
        Some(&CalReport::Done {
            wheel: Wheel::Right
        })
    );
    let got = speeds_of(&reports, 300);
    let mean = got.iter().sum::<f64>() / got.len() as f64;
    assert!((mean / (0.96 * q0 * 300.0) - 1.0).abs() < 0.01, "{mean}");
}

#[test]
fn abort_stops_at_once_and_owner_loss_fails_the_run() {
    let (rt, mut nrt) = calibration_port();
    let mut c = CalibrateMotors::new(rt);
    let mut bot = Bot::new([1.0; 2], [0; 2]);
    nrt.nrt_send(CalCommand::Run(run(&[300], Wheel::Right, false)))
        .unwrap();
    drive(&mut bot, &mut c, &mut nrt, 1);
    assert_eq!(bot.targets, [0, 300]);
    nrt.nrt_send(CalCommand::Abort).unwrap();
    let view = bot.view();
    c.serve(&view, true);
    assert_eq!(c.update(&view), WheelCommand::Stop);
    assert_eq!(nrt.nrt_next_report(), Some(CalReport::Aborted));
    // owner lost mid-run
    nrt.nrt_send(CalCommand::Run(run(&[300], Wheel::Left, false)))
        .unwrap();
    drive(&mut bot, &mut c, &mut nrt, 1);
    while nrt.nrt_next_report().is_some() {}
    c.stop(&bot.view());
    assert_eq!(
        nrt.nrt_next_report(),
        Some(CalReport::Failed {
            wheel: Wheel::Left,
            reason: CalFailure::OwnerLost
        })
    );
    assert_eq!(c.update(&bot.view()), WheelCommand::Stop);
}

#[test]
fn no_line_and_a_wheel_that_never_moves_are_failures() {
    let (rt, mut nrt) = calibration_port();
    let mut c = CalibrateMotors::new(rt);
    let mut bot = Bot::new([1.0; 2], [100, 100]);
    nrt.nrt_send(CalCommand::Run(WheelRun {
        deadband_max: 5,
        ..run(&[300], Wheel::Left, true)
    }))
    .unwrap();
    let r = drive(&mut bot, &mut c, &mut nrt, 10);
    assert_eq!(
        r.last(),
        Some(&CalReport::Failed {
            wheel: Wheel::Left,
            reason: CalFailure::NeverMoved { max: 5 }
        })
    );
    // a bad run is refused
    nrt.nrt_send(CalCommand::Run(run(&[], Wheel::Left, false)))
        .unwrap();
    let r = drive(&mut bot, &mut c, &mut nrt, 1);
    assert!(matches!(
        r.last(),
        Some(CalReport::Failed {
            reason: CalFailure::BadRun,
            ..
        })
    ));
    // far from any line: the sensors see one floor, no contrast
    bot.x = 5.0;
    bot.deadband = [0, 0];
    nrt.nrt_send(CalCommand::Run(WheelRun {
        timeout_ns: 3_000 * MS,
        ..run(&[300], Wheel::Left, false)
    }))
    .unwrap();
    let r = drive(&mut bot, &mut c, &mut nrt, 10);
    assert!(
        matches!(
            r.last(),
            Some(CalReport::Failed {
                reason: CalFailure::NoLine,
                ..
            })
        ),
        "{r:?}"
    );
}
