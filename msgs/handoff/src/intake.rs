//! NRT → RT live values through one typed intake: [`RtIntake`], the RT half of a [`latest`] cell whose reads
//! record each new value for the flight recorder, in one place for every kind of value.
//!
//! A kind ([`Intake`]) says what a cell carries and how a value taken from it is recorded: the live parameters'
//! cells (one kind each: cmd_vel, joint command, owner request, calibration, motion limits, held, joint-state
//! rate, watchdog), a controller's parameters and subscribers, the reflexes' parameters (crate `rt`). So adding an
//! RT input of this shape is a [`RecInput`] variant, its kind (one line of [`intake_kinds!`]) and the replay's
//! put-back (`rt::replay`).

use crate::ids::RobotId;
use crate::latest::{latest, NrtLatest, RtLatest};
use crate::record::{rt_record_controller, RecInput};
use std::marker::PhantomData;

/// A kind of NRT → RT live value: what its cell carries and how the flight recorder records a value taken from it.
pub trait Intake {
    /// The value the cell carries.
    type Value: Copy + Send;
    /// What else names the cell in its record: a robot slot, an endpoint's index, nothing (`()`).
    type Key: Copy + Send;
    /// The record of `value` taken from cell `key` while the RT thread ran controller `running.1` of robot
    /// `running.0` (see [`crate::rt_set_context`]; ignored by the kinds not a controller's).
    fn rec_input(key: Self::Key, value: Self::Value, running: (RobotId, u8)) -> RecInput;
}

/// The RT half of a live value of kind `K`: reads it wait-free and records each new value it takes.
pub struct RtIntake<K: Intake> {
    cell: RtLatest<K::Value>,
    key: K::Key,
    _kind: PhantomData<fn() -> K>,
}

impl<K: Intake> std::fmt::Debug for RtIntake<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "RtIntake<{}>", std::any::type_name::<K>())
    }
}

/// A live value of kind `K` named `key`, holding `initial` until the first store: `(rt, nrt)` halves.
///
/// # Example
///
/// ```
/// use handoff::{intake, Intake, RecInput, RobotId};
///
/// /// The cmd_vel watchdog (s).
/// enum Watchdog {}
/// impl Intake for Watchdog {
///     type Value = f64;
///     type Key = ();
///     fn rec_input((): (), seconds: f64, _: (RobotId, u8)) -> RecInput {
///         RecInput::Watchdog { seconds }
///     }
/// }
///
/// let (mut rt, mut nrt) = intake::<Watchdog>(0.5, ());
/// nrt.nrt_store(1.0);
/// assert_eq!(rt.rt_read(), (1.0, true)); // recorded as RecInput::Watchdog if this thread records
/// assert_eq!(rt.rt_read_new(), None);
/// ```
pub fn intake<K: Intake>(initial: K::Value, key: K::Key) -> (RtIntake<K>, NrtLatest<K::Value>) {
    let (rt, nrt) = latest(initial);
    (RtIntake::new(rt, key), nrt)
}

impl<K: Intake> RtIntake<K> {
    /// The intake reading `cell`, named `key` in its records.
    pub fn new(cell: RtLatest<K::Value>, key: K::Key) -> Self {
        RtIntake {
            cell,
            key,
            _kind: PhantomData,
        }
    }

    /// The latest value and whether it is new since the previous read (a new one is recorded).
    pub fn rt_read(&mut self) -> (K::Value, bool) {
        let (value, new) = self.cell.rt_read();
        if new {
            self.record(value);
        }
        (value, new)
    }

    /// The latest value, only if new since the previous read (then recorded).
    pub fn rt_read_new(&mut self) -> Option<K::Value> {
        let value = self.cell.rt_read_new()?;
        self.record(value);
        Some(value)
    }

    /// The one place a live value is recorded as the RT thread takes it.
    fn record(&self, value: K::Value) {
        let key = self.key;
        rt_record_controller(|robot, controller| K::rec_input(key, value, (robot, controller)));
    }
}

/// Declares kinds of [`Intake`], one a line: `Kind(key: Key, value: Value) => record;` where `record` builds the
/// [`RecInput`] from `key` and `value` (patterns), or `Kind(key: Key, value: Value, running) => record;` when it
/// also names the controller the RT thread runs (`running`: a pattern of `(RobotId, u8)`); a visibility before
/// `Kind` if other modules name it.
macro_rules! intake_kinds {
    ($($(#[$doc:meta])* $vis:vis $kind:ident($k:tt: $kt:ty, $v:tt: $vt:ty $(, $run:tt)?) => $rec:expr;)*) => {$(
        $(#[$doc])*
        #[derive(Debug)]
        $vis enum $kind {}
        impl $crate::intake::Intake for $kind {
            type Value = $vt;
            type Key = $kt;
            fn rec_input($k: $kt, $v: $vt, running: ($crate::RobotId, u8)) -> $crate::RecInput {
                let _ = running;
                $(let $run = running;)?
                $rec
            }
        }
    )*};
}
pub(crate) use intake_kinds;
