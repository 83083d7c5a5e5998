//! Lifting the simulated robot, for tests: a client writes the reading a lifted robot's accelerometer gives into
//! `acc` (asebaros' `set_variable`, the Aseba SET_VARIABLES: e.g. `[2, 18, 12]`, tilted in a hand) and the robot is
//! in the air — the firmware keeps giving that reading, the ground sensors read the void (ambient light only) and
//! the wheels turn without moving it — until a client writes a floor reading (`z ≥ 19`, `|x|, |y| ≤ 8`, e.g.
//! `[0, 0, 22]`): set back down where it was lifted, the accelerometer follows the physics again. A value the
//! simulator wrote itself, or 0s (a VM reset clears the memory), lifts nothing.

/// Whether a robot held up is being set down by `acc`.
fn floor_like(acc: [i16; 3]) -> bool {
    acc[2] >= 19 && acc[0].abs() <= 8 && acc[1].abs() <= 8
}

/// The lift state.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Lift {
    /// What the simulator last wrote into `acc`.
    written: Option<[i16; 3]>,
    /// The reading of a lifted robot (`None`: on the floor).
    held: Option<[i16; 3]>,
}

impl Lift {
    /// The reading to write into `acc` now, given what `acc` holds (`current`: a value the simulator did not
    /// write lifts or sets down the robot) and the physics' reading.
    pub fn sample(&mut self, current: [i16; 3], physics: [i16; 3]) -> [i16; 3] {
        if current != [0; 3] && self.written.is_some_and(|w| w != current) {
            self.held = (!floor_like(current)).then_some(current);
        }
        let out = self.held.unwrap_or(physics);
        self.written = Some(out);
        out
    }

    /// Whether the robot is in the air.
    pub fn lifted(&self) -> bool {
        self.held.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_written_reading_lifts_and_a_floor_reading_sets_down() {
        let mut l = Lift::default();
        let floor = [0, 1, 22];
        assert_eq!(l.sample([0; 3], floor), floor);
        assert_eq!(l.sample(floor, [1, 0, 22]), [1, 0, 22], "its own value");
        assert!(!l.lifted());
        assert_eq!(l.sample([2, 18, 12], floor), [2, 18, 12]);
        assert!(l.lifted());
        assert_eq!(l.sample([2, 18, 12], floor), [2, 18, 12], "held");
        assert_eq!(l.sample([0; 3], floor), [2, 18, 12], "a reset's 0s");
        assert_eq!(l.sample([0, 0, 22], floor), floor);
        assert!(!l.lifted());
    }
}
