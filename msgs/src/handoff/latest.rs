//! NRT → RT latest values: the sequence lock and the live parameters built on it.

use super::ids::{RobotId, MAX_ROBOTS};
use super::values::{ParamError, RobotCalibration, Twist2};
use atomic_float::AtomicF64;
use std::sync::atomic::{fence, AtomicU64, Ordering};
/// A sequence lock over `N` f64 values built from atomics only: writers (any thread, they
/// serialise among themselves) never block the reader, and the reader is wait-free: it gets a
/// consistent snapshot or `None` while a write is in progress.
#[derive(Debug)]
pub struct SeqCell<const N: usize> {
    seq: AtomicU64,
    values: [AtomicF64; N],
}

impl<const N: usize> SeqCell<N> {
    /// A cell holding `v` at version 0.
    pub fn new(v: [f64; N]) -> Self {
        SeqCell {
            seq: AtomicU64::new(0),
            values: std::array::from_fn(|i| AtomicF64::new(v[i])),
        }
    }

    /// Stores `v`; the version grows by 2.
    pub fn store(&self, v: [f64; N]) {
        let mut s = self.seq.load(Ordering::Relaxed);
        loop {
            if s & 1 == 1 {
                std::hint::spin_loop();
                s = self.seq.load(Ordering::Relaxed);
                continue;
            }
            match self
                .seq
                .compare_exchange_weak(s, s + 1, Ordering::Acquire, Ordering::Relaxed)
            {
                Ok(_) => break,
                Err(now) => s = now,
            }
        }
        fence(Ordering::Release);
        for (slot, x) in self.values.iter().zip(v) {
            slot.store(x, Ordering::Relaxed);
        }
        self.seq.store(s + 2, Ordering::Release);
    }

    /// A consistent snapshot and its version, or `None` while a write is in progress.
    pub fn load_versioned(&self) -> Option<(u64, [f64; N])> {
        let s1 = self.seq.load(Ordering::Acquire);
        if s1 & 1 == 1 {
            return None;
        }
        let v = std::array::from_fn(|i| self.values[i].load(Ordering::Relaxed));
        fence(Ordering::Acquire);
        let s2 = self.seq.load(Ordering::Relaxed);
        (s1 == s2).then_some((s1, v))
    }

    /// A consistent snapshot, or `None` while a write is in progress.
    pub fn load(&self) -> Option<[f64; N]> {
        self.load_versioned().map(|(_, v)| v)
    }

    /// Version of the last completed store (0 before the first, +2 per store).
    pub fn version(&self) -> u64 {
        self.seq.load(Ordering::Acquire) & !1
    }
}

/// Live parameters of one robot.
#[derive(Debug)]
struct RobotLive {
    calibration: SeqCell<7>,
    cmd_vel: SeqCell<2>,
}

/// Parameters the NRT side changes at run time and the RT thread reads every cycle.
/// Writers take `&self` (share it with `Arc`); readers never wait.
#[derive(Debug)]
pub struct LiveParams {
    watchdog_s: AtomicF64,
    robots: Box<[RobotLive]>,
}

/// Default cmd_vel watchdog (s).
pub const DEFAULT_WATCHDOG_S: f64 = 0.5;

impl LiveParams {
    /// Parameters for `robots` robot slots (at most [`MAX_ROBOTS`]), with default calibration,
    /// zero set-points and the default watchdog.
    pub fn new(robots: usize) -> Self {
        let cal = RobotCalibration::default().to_array();
        LiveParams {
            watchdog_s: AtomicF64::new(DEFAULT_WATCHDOG_S),
            robots: (0..robots.min(MAX_ROBOTS))
                .map(|_| RobotLive {
                    calibration: SeqCell::new(cal),
                    cmd_vel: SeqCell::new([0.0; 2]),
                })
                .collect(),
        }
    }

    /// Number of robot slots.
    pub fn robots(&self) -> usize {
        self.robots.len()
    }

    fn robot(&self, robot: RobotId) -> Result<&RobotLive, ParamError> {
        self.robots
            .get(robot as usize)
            .ok_or(ParamError::NoSuchRobot(robot))
    }

    /// Sets the cmd_vel watchdog (s); 0 disables it.
    pub fn set_watchdog(&self, seconds: f64) -> Result<(), ParamError> {
        if !seconds.is_finite() {
            return Err(ParamError::NotFinite("watchdog"));
        }
        if seconds < 0.0 {
            return Err(ParamError::OutOfRange {
                name: "watchdog",
                value: seconds,
            });
        }
        self.watchdog_s.store(seconds, Ordering::Relaxed);
        Ok(())
    }

    /// The cmd_vel watchdog (s); 0 = disabled.
    pub fn watchdog(&self) -> f64 {
        self.watchdog_s.load(Ordering::Relaxed)
    }

    /// Sets a robot's calibration and limits (validated).
    pub fn set_calibration(&self, robot: RobotId, c: RobotCalibration) -> Result<(), ParamError> {
        c.validate()?;
        self.robot(robot)?.calibration.store(c.to_array());
        Ok(())
    }

    /// A robot's calibration; `None` if no such robot or while it is being written.
    pub fn calibration(&self, robot: RobotId) -> Option<RobotCalibration> {
        let r = self.robots.get(robot as usize)?;
        r.calibration.load().map(RobotCalibration::from_array)
    }

    /// Sets a robot's velocity set-point (latest value wins; each call re-arms the watchdog).
    pub fn set_cmd_vel(&self, robot: RobotId, twist: Twist2) -> Result<(), ParamError> {
        if !twist.linear.is_finite() {
            return Err(ParamError::NotFinite("linear"));
        }
        if !twist.angular.is_finite() {
            return Err(ParamError::NotFinite("angular"));
        }
        self.robot(robot)?
            .cmd_vel
            .store([twist.linear, twist.angular]);
        Ok(())
    }

    /// A robot's last set-point and its version (grows with every set), or `None` if no such
    /// robot or while it is being written.
    pub fn cmd_vel(&self, robot: RobotId) -> Option<(u64, Twist2)> {
        let r = self.robots.get(robot as usize)?;
        r.cmd_vel
            .load_versioned()
            .map(|(v, [linear, angular])| (v, Twist2 { linear, angular }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn live_params_validate_and_version() {
        let p = LiveParams::new(2);
        assert_eq!(p.robots(), 2);
        assert_eq!(p.cmd_vel(0).unwrap().0, 0);
        p.set_cmd_vel(
            1,
            Twist2 {
                linear: 0.1,
                angular: -0.5,
            },
        )
        .unwrap();
        let (v, t) = p.cmd_vel(1).unwrap();
        assert_eq!((v, t.linear, t.angular), (2, 0.1, -0.5));
        assert_eq!(
            p.set_cmd_vel(2, Twist2::default()),
            Err(ParamError::NoSuchRobot(2))
        );
        assert_eq!(
            p.set_cmd_vel(
                0,
                Twist2 {
                    linear: f64::NAN,
                    angular: 0.0
                }
            ),
            Err(ParamError::NotFinite("linear"))
        );
        let mut c = RobotCalibration {
            max_units: 2000.0,
            ..Default::default()
        };
        assert!(matches!(
            p.set_calibration(0, c),
            Err(ParamError::OutOfRange { .. })
        ));
        c.max_units = 300.0;
        p.set_calibration(0, c).unwrap();
        assert_eq!(p.calibration(0), Some(c));
        assert_eq!(p.calibration(1), Some(RobotCalibration::default()));
        assert!(p.set_watchdog(-1.0).is_err());
        p.set_watchdog(0.25).unwrap();
        assert_eq!(p.watchdog(), 0.25);
    }

    #[test]
    fn seq_cell_never_tears_under_a_concurrent_writer() {
        let cell = Arc::new(SeqCell::<4>::new([0.0; 4]));
        let w = cell.clone();
        let writer = std::thread::spawn(move || {
            for i in 1..=200_000u32 {
                let x = i as f64;
                w.store([x, x, x, x]);
            }
        });
        let mut seen = 0u64;
        let mut last = 0.0;
        while !writer.is_finished() || seen == 0 {
            if let Some(v) = cell.load() {
                assert!(v.iter().all(|&x| x == v[0]), "torn snapshot {v:?}");
                assert!(v[0] >= last, "went backwards");
                last = v[0];
                seen += 1;
            }
        }
        writer.join().unwrap();
        assert_eq!(cell.load(), Some([200_000.0; 4]));
        assert_eq!(cell.version(), 400_000);
    }
}
